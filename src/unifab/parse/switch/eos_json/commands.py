"""The EOS commands whose ``| json`` replies are read, named as :func:`~unifab.parse.switch.eos_json.parse`
reports them."""

from __future__ import annotations

__all__ = [
    "COMMANDS",
    "SHOW_ECN_COUNTERS",
    "SHOW_INTERFACES",
    "SHOW_LLDP_DETAIL",
    "SHOW_PFC_COUNTERS",
    "SHOW_PFC_COUNTERS_DETAIL",
    "SHOW_QUEUE_DETAIL",
    "SHOW_VERSION",
    "SUZIEQ_GATHER",
]

SHOW_INTERFACES = "show interfaces"
SHOW_LLDP_DETAIL = "show lldp neighbors detail"
SHOW_PFC_COUNTERS = "show priority-flow-control counters"
SHOW_PFC_COUNTERS_DETAIL = "show priority-flow-control counters detail"
SHOW_ECN_COUNTERS = "show qos interfaces ecn counters queue"
SHOW_QUEUE_DETAIL = "show interfaces counters queue detail"
SHOW_VERSION = "show version"
SUZIEQ_GATHER = "suzieq gather"
COMMANDS = (
    SHOW_INTERFACES,
    SHOW_LLDP_DETAIL,
    SHOW_PFC_COUNTERS,
    SHOW_PFC_COUNTERS_DETAIL,
    SHOW_ECN_COUNTERS,
    SHOW_QUEUE_DETAIL,
    SHOW_VERSION,
)
