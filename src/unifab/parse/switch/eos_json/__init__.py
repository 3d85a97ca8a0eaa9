"""Arista EOS eAPI JSON outputs (``| json`` or ``runCmds`` with ``"format": "json"``), EOS 4.2x.

Commands read (a module of this package each), recognised by the shape of the reply
(:mod:`~unifab.parse.switch.eos_json.reply`):

====================================================  ===============================================
command                                               shape
====================================================  ===============================================
``show interfaces``                                   ``interfaces.<if>.{mtu, bandwidth, ...}``
``show lldp neighbors detail``                        ``lldpNeighbors.<if>.lldpNeighborInfo[]``
``show priority-flow-control counters`` (rev 3)       ``interfaceCounters.<if>.{rxFrames, txFrames}``
``show priority-flow-control counters detail``        ``interfaces.<if>.priorities.<n>.{rxFrames, txFrames}``
``show qos interfaces ecn counters queue``            ``intfQueueCounters.<if>.queueCounters.<q>``
``show interfaces counters queue detail``             ``egressQueueCounters.interfaces.<if>...``
``show version``                                      ``{modelName, version, internalVersion, ...}``
====================================================  ===============================================

The ``counters detail`` shape is inferred from code that reads it (no captured sample exists; reference
§2.3). Each reader accepts a bare eAPI ``result[i]`` object or a whole JSON-RPC response
(``{"jsonrpc": "2.0", "result": [...]}``; the first result is read). Empty strings (EOS prints ``""``
for an unset description or serial number) are read as ``None``. LLDP ``interfaceId`` values of type
``interfaceName``/``local`` come quoted (``"\\"Ethernet1\\""``); the quotes are removed.

:func:`parse_suzieq_gather` reads a SuzieQ ``sq-poller --run-once gather`` file (concatenated JSON
lists of ``{hostname, devtype, cmd, status, data, ...}`` records) and feeds each EOS host's
``show interfaces``, ``show lldp neighbors detail`` and ``show version`` replies to the readers here.

Bad input raises :class:`~unifab.errors.ParseError` whose ``key`` is the JSON path of the bad value.
"""

from __future__ import annotations

from unifab.parse.switch.eos_json.commands import (
    COMMANDS,
    SHOW_ECN_COUNTERS,
    SHOW_INTERFACES,
    SHOW_LLDP_DETAIL,
    SHOW_PFC_COUNTERS,
    SHOW_PFC_COUNTERS_DETAIL,
    SHOW_QUEUE_DETAIL,
    SHOW_VERSION,
    SUZIEQ_GATHER,
)
from unifab.parse.switch.eos_json.counters import (
    QUEUE_TYPES,
    ecn_counters_from,
    pfc_counters_from,
    queue_counters_from,
)
from unifab.parse.switch.eos_json.interfaces import (
    interfaces_from,
)
from unifab.parse.switch.eos_json.lldp import (
    lldp_neighbors_from,
)
from unifab.parse.switch.eos_json.records import (
    EosEcnCounters,
    EosEcnQueueCounters,
    EosInterfaceQueueCounters,
    EosInterfaces,
    EosInterfaceStatus,
    EosJson,
    EosJsonData,
    EosLldpNeighbor,
    EosLldpNeighbors,
    EosPfcCounters,
    EosPfcInterfaceCounters,
    EosQueueCounters,
    EosQueueDropCounter,
    EosVersion,
    SuzieqEosHost,
    SuzieqGather,
)
from unifab.parse.switch.eos_json.reply import (
    detect,
    parse,
    parse_ecn_counters,
    parse_lldp_neighbors_detail,
    parse_pfc_counters,
    parse_queue_counters_detail,
    parse_show_interfaces,
    parse_show_version,
)
from unifab.parse.switch.eos_json.suzieq import (
    merge_gathers,
    parse_suzieq_gather,
)
from unifab.parse.switch.eos_json.version import (
    version_from,
)

__all__ = [
    "COMMANDS",
    "QUEUE_TYPES",
    "SHOW_ECN_COUNTERS",
    "SHOW_INTERFACES",
    "SHOW_LLDP_DETAIL",
    "SHOW_PFC_COUNTERS",
    "SHOW_PFC_COUNTERS_DETAIL",
    "SHOW_QUEUE_DETAIL",
    "SHOW_VERSION",
    "SUZIEQ_GATHER",
    "EosEcnCounters",
    "EosEcnQueueCounters",
    "EosInterfaceQueueCounters",
    "EosInterfaceStatus",
    "EosInterfaces",
    "EosJson",
    "EosJsonData",
    "EosLldpNeighbor",
    "EosLldpNeighbors",
    "EosPfcCounters",
    "EosPfcInterfaceCounters",
    "EosQueueCounters",
    "EosQueueDropCounter",
    "EosVersion",
    "SuzieqEosHost",
    "SuzieqGather",
    "detect",
    "ecn_counters_from",
    "interfaces_from",
    "lldp_neighbors_from",
    "merge_gathers",
    "parse",
    "parse_ecn_counters",
    "parse_lldp_neighbors_detail",
    "parse_pfc_counters",
    "parse_queue_counters_detail",
    "parse_show_interfaces",
    "parse_show_version",
    "parse_suzieq_gather",
    "pfc_counters_from",
    "queue_counters_from",
    "version_from",
]
