"""NVIDIA Cumulus Linux NVUE (CL 5.x) QoS: ``nv config show -o yaml`` resolved per interface, and the
``nv show`` text outputs of RoCE, PFC, PFC watchdog and ECN.

**Configuration** (:func:`parse`, :func:`dump`). ``nv config show -o yaml`` (and ``/etc/nvue.d/startup.yaml``)
prints a list ``[{header: {model, nvue-api-version, rev-id, version}}, {set: {...}}]``; the NVUE REST
API (``GET /nvue_v1/?rev=applied``) returns the ``set`` object alone; both are read
(:mod:`~unifab.parse.switch.nvue.document`) and every swp port is resolved
(:mod:`~unifab.parse.switch.nvue.config`) over NVUE's defaults (:mod:`~unifab.parse.switch.nvue.defaults`).
NVUE's vocabulary is kept: a *switch priority* (SP) is the internal class, a *traffic class* is the
egress queue, so ``dscp_to_tc`` maps DSCP -> SP and ``tc_to_queue`` SP -> TC. Trust is ``l2`` (PCP),
``l3`` (DSCP), ``both`` or ``port``. :func:`dump` (:mod:`~unifab.parse.switch.nvue.writer`) writes
records back as YAML that :func:`parse` reads to the same records.

No real ``nv config show -o yaml`` capture is in the corpus: the shape is reconstructed from the NVUE
command reference and documentation examples (see the tests' ``nvue_*_reconstructed.yaml``).

**Show outputs** (``parse_show_*``, :mod:`~unifab.parse.switch.nvue.show`), read by the generic table
reader of :mod:`~unifab.parse.switch.nvue.show_reader` (sizes in binary units: compare with its tolerance).

Every reader raises only :class:`~unifab.errors.ParseError` on bad input: a YAML key path (``key=``)
for the configuration, a line number for show outputs.
"""

from __future__ import annotations

from unifab.parse.switch.nvue.config import expand_interfaces, parse
from unifab.parse.switch.nvue.defaults import (
    DEFAULT_CABLE_LENGTH_M,
    DEFAULT_DSCP_TO_SP,
    DEFAULT_ECN,
    DEFAULT_ECN_FIELDS,
    DEFAULT_MTU,
    DEFAULT_PCP_TO_SP,
    DEFAULT_PFC_RX,
    DEFAULT_PFC_TX,
    DEFAULT_PFCWD_POLLING_INTERVAL_MS,
    DEFAULT_PFCWD_ROBUSTNESS,
    DEFAULT_PORT_DEFAULT_SP,
    DEFAULT_PROFILE,
    DEFAULT_ROCE_MODE,
    DEFAULT_SCHEDULERS,
    DEFAULT_SP_TO_TC,
    DEFAULT_TRUST,
    N_DSCP,
    N_PRIORITIES,
    N_TRAFFIC_CLASSES,
    ROCE_DEFAULTS,
    ROCE_MODES,
    SCHEDULER_MODES,
    TRUST_SHOW_NAMES,
    TRUSTS,
    RoceDefaults,
)
from unifab.parse.switch.nvue.records import (
    NvueConfig,
    NvueCongestionControlShow,
    NvueEcn,
    NvueInterfaceQos,
    NvuePfcProfileShow,
    NvuePfcWatchdogShow,
    NvuePfcWdClass,
    NvueRoceClass,
    NvueRoceCounters,
    NvueRocePool,
    NvueRoceStatus,
    NvueScheduler,
)
from unifab.parse.switch.nvue.show import (
    parse_show_congestion_control,
    parse_show_pfc,
    parse_show_pfc_watchdog,
    parse_show_roce,
    parse_show_roce_counters,
)
from unifab.parse.switch.nvue.show_reader import size_bytes
from unifab.parse.switch.nvue.writer import DUMP_HEADER, dump

__all__ = [
    "DEFAULT_CABLE_LENGTH_M",
    "DEFAULT_DSCP_TO_SP",
    "DEFAULT_ECN",
    "DEFAULT_ECN_FIELDS",
    "DEFAULT_MTU",
    "DEFAULT_PCP_TO_SP",
    "DEFAULT_PFCWD_POLLING_INTERVAL_MS",
    "DEFAULT_PFCWD_ROBUSTNESS",
    "DEFAULT_PFC_RX",
    "DEFAULT_PFC_TX",
    "DEFAULT_PORT_DEFAULT_SP",
    "DEFAULT_PROFILE",
    "DEFAULT_ROCE_MODE",
    "DEFAULT_SCHEDULERS",
    "DEFAULT_SP_TO_TC",
    "DEFAULT_TRUST",
    "DUMP_HEADER",
    "N_DSCP",
    "N_PRIORITIES",
    "N_TRAFFIC_CLASSES",
    "ROCE_DEFAULTS",
    "ROCE_MODES",
    "SCHEDULER_MODES",
    "TRUSTS",
    "TRUST_SHOW_NAMES",
    "NvueConfig",
    "NvueCongestionControlShow",
    "NvueEcn",
    "NvueInterfaceQos",
    "NvuePfcProfileShow",
    "NvuePfcWatchdogShow",
    "NvuePfcWdClass",
    "NvueRoceClass",
    "NvueRoceCounters",
    "NvueRocePool",
    "NvueRoceStatus",
    "NvueScheduler",
    "RoceDefaults",
    "dump",
    "expand_interfaces",
    "parse",
    "parse_show_congestion_control",
    "parse_show_pfc",
    "parse_show_pfc_watchdog",
    "parse_show_roce",
    "parse_show_roce_counters",
    "size_bytes",
]
