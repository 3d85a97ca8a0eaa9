"""NVUE's defaults as data: what a silent setting takes.

In order: the value configured, NVUE's RoCE default for the configured ``qos roce mode`` when RoCE is
on (:data:`ROCE_DEFAULTS`, reference host-nic-roce §4.1: trust pcp,dscp; DSCP -> SP = dscp >> 3 so
26 -> SP3 and 48 -> SP6; SP3 -> TC3, SP6 -> TC6, other SPs -> TC0; TC6 strict, TC3 and TC0 DWRR 50 %;
ECN on TC0 and TC3, 150000 / 1500000 B, probability 100; PFC rx+tx on SP3 with cable-length 100 in the
lossless modes), and NVUE's plain default otherwise (trust l2, identity SP -> TC, ECN on TC0 only,
DWRR 12/13 %, no PFC, MTU 9216).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from unifab.parse.switch.nvue.records import NvueEcn, NvueScheduler

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
    "N_DSCP",
    "N_PRIORITIES",
    "N_TRAFFIC_CLASSES",
    "ROCE_DEFAULTS",
    "ROCE_MODES",
    "SCHEDULER_MODES",
    "TRUSTS",
    "TRUST_SHOW_NAMES",
    "RoceDefaults",
]

DEFAULT_PROFILE = "default-global"
DEFAULT_MTU = 9216  # CL 5.x swp default (NVUE applied config shows link mtu 9216)
DEFAULT_TRUST = "l2"
DEFAULT_PORT_DEFAULT_SP = 0
DEFAULT_DSCP_TO_SP = {d: d >> 3 for d in range(64)}
DEFAULT_PCP_TO_SP = {p: p for p in range(8)}
DEFAULT_SP_TO_TC = {sp: sp for sp in range(8)}
DEFAULT_ECN_FIELDS = NvueEcn(enabled=True, min_bytes=150000, max_bytes=1500000, probability=100, red_enabled=False)
DEFAULT_ECN = {0: DEFAULT_ECN_FIELDS}  # default-global: ECN on egress queue 0
DEFAULT_SCHEDULERS = {tc: NvueScheduler("dwrr", 12 if tc % 2 == 0 else 13) for tc in range(8)}
DEFAULT_PFC_RX = True
DEFAULT_PFC_TX = True
DEFAULT_CABLE_LENGTH_M = 10
DEFAULT_PFCWD_POLLING_INTERVAL_MS = 100
DEFAULT_PFCWD_ROBUSTNESS = 3
DEFAULT_ROCE_MODE = "lossless"
TRUSTS = ("l2", "l3", "both", "port")
# ``nv show`` trust-mode -> config trust
TRUST_SHOW_NAMES = {"pcp,dscp": "both", "dscp,pcp": "both", "dscp": "l3", "pcp": "l2", "port": "port"}
SCHEDULER_MODES = ("dwrr", "strict")

N_PRIORITIES = 8
N_DSCP = 64
N_TRAFFIC_CLASSES = 8


@dataclass(frozen=True, slots=True)
class _Pfc:
    priorities: frozenset[int]
    rx: bool
    tx: bool
    cable_m: int | None


_PFC_NONE = _Pfc(frozenset(), False, False, None)  # no PFC configured
_PFC_SILENT = _Pfc(frozenset(), DEFAULT_PFC_RX, DEFAULT_PFC_TX, DEFAULT_CABLE_LENGTH_M)  # a profile with no fields


@dataclass(frozen=True, slots=True)
class RoceDefaults:
    """What ``nv set qos roce mode <mode>`` configures where the user says nothing."""

    trust: str
    dscp_to_tc: dict[int, int]
    pcp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc: _Pfc
    ecn: dict[int, NvueEcn]
    schedulers: dict[int, NvueScheduler]


_ROCE_SP_TO_TC = {sp: sp if sp in (3, 6) else 0 for sp in range(N_PRIORITIES)}
_ROCE_ECN = {0: DEFAULT_ECN_FIELDS, 3: DEFAULT_ECN_FIELDS}  # "enabled-tc 0,3"
_ROCE_SCHEDULERS = {0: NvueScheduler("dwrr", 50), 3: NvueScheduler("dwrr", 50), 6: NvueScheduler("strict", None)}
_ROCE_LOSSLESS = RoceDefaults(
    trust="both",
    dscp_to_tc=DEFAULT_DSCP_TO_SP,
    pcp_to_tc=DEFAULT_PCP_TO_SP,
    tc_to_queue=_ROCE_SP_TO_TC,
    pfc=_Pfc(frozenset({3}), True, True, 100),
    ecn=_ROCE_ECN,
    schedulers=_ROCE_SCHEDULERS,
)
# lossy-multi-tc: from the CL 5.16 RoCE page's `nv show qos roce` example for that mode (whose header
# still says lossless-single-ipool): its own DSCP map, identity SP -> TC, DWRR 4/8/18/22/22/22/4/0 %.
_LOSSY_MULTI_TC_DSCP = {
    0: (0, 7, 8, 9, 10, *range(51, 64)),
    1: (1, 2),
    2: (3, 4),
    3: (5, 6),
    4: tuple(range(11, 41)),
    5: tuple(range(41, 51)),
}
ROCE_DEFAULTS: dict[str, RoceDefaults] = {
    "lossless": _ROCE_LOSSLESS,
    "lossless-single-ipool": _ROCE_LOSSLESS,  # differs only in the ingress buffer pools
    "lossy": replace(_ROCE_LOSSLESS, pfc=_PFC_NONE),
    "lossy-multi-tc": replace(
        _ROCE_LOSSLESS,
        dscp_to_tc={d: sp for sp, dscps in _LOSSY_MULTI_TC_DSCP.items() for d in dscps},
        tc_to_queue=dict(DEFAULT_SP_TO_TC),
        pfc=_PFC_NONE,
        schedulers={tc: NvueScheduler("dwrr", bw) for tc, bw in enumerate((4, 8, 18, 22, 22, 22, 4, 0))},
    ),
}
ROCE_MODES = tuple(ROCE_DEFAULTS)
_PLAIN = RoceDefaults(
    trust=DEFAULT_TRUST,
    dscp_to_tc=DEFAULT_DSCP_TO_SP,
    pcp_to_tc=DEFAULT_PCP_TO_SP,
    tc_to_queue=DEFAULT_SP_TO_TC,
    pfc=_PFC_NONE,
    ecn=DEFAULT_ECN,
    schedulers=DEFAULT_SCHEDULERS,
)

_ON = frozenset({"on", "enable", "enabled", "yes", "true"})
_OFF = frozenset({"off", "disable", "disabled", "no", "false"})
