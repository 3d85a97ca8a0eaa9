"""Recognising which command printed a reply, and the per-command entry points (``parse_*``)."""

from __future__ import annotations

from collections.abc import Callable

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch.eos_json.access import first_result, load_reply
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
from unifab.parse.switch.eos_json.counters import ecn_counters_from, pfc_counters_from, queue_counters_from
from unifab.parse.switch.eos_json.interfaces import interfaces_from
from unifab.parse.switch.eos_json.lldp import lldp_neighbors_from
from unifab.parse.switch.eos_json.records import (
    EosEcnCounters,
    EosInterfaces,
    EosJson,
    EosJsonData,
    EosLldpNeighbors,
    EosPfcCounters,
    EosQueueCounters,
    EosVersion,
)
from unifab.parse.switch.eos_json.suzieq import parse_suzieq_gather
from unifab.parse.switch.eos_json.version import version_from

__all__ = [
    "detect",
    "parse",
    "parse_ecn_counters",
    "parse_lldp_neighbors_detail",
    "parse_pfc_counters",
    "parse_queue_counters_detail",
    "parse_show_interfaces",
    "parse_show_version",
]


def _is_pfc_detail(obj: dict[str, object]) -> bool:
    body = obj.get("interfaces")
    if not isinstance(body, dict) or not body:
        return False
    return all(isinstance(v, dict) and "priorities" in v for v in body.values())


def detect(obj: dict[str, object]) -> str | None:
    """The command whose reply ``obj`` looks like (one of :data:`COMMANDS`), or ``None``."""
    if "egressQueueCounters" in obj:
        return SHOW_QUEUE_DETAIL
    if "lldpNeighbors" in obj:
        return SHOW_LLDP_DETAIL
    if "intfQueueCounters" in obj:
        return SHOW_ECN_COUNTERS
    if "interfaceCounters" in obj:
        return SHOW_PFC_COUNTERS
    if _is_pfc_detail(obj):
        return SHOW_PFC_COUNTERS_DETAIL
    if "interfaces" in obj:
        return SHOW_INTERFACES
    if "modelName" in obj or ("version" in obj and "internalVersion" in obj):
        return SHOW_VERSION
    return None


_READERS: dict[str, Callable[[object, str, str], EosJsonData]] = {
    SHOW_INTERFACES: interfaces_from,
    SHOW_LLDP_DETAIL: lldp_neighbors_from,
    SHOW_PFC_COUNTERS: pfc_counters_from,
    SHOW_PFC_COUNTERS_DETAIL: pfc_counters_from,
    SHOW_ECN_COUNTERS: ecn_counters_from,
    SHOW_QUEUE_DETAIL: queue_counters_from,
    SHOW_VERSION: version_from,
}


def _read(text: str | bytes, source: str) -> tuple[dict[str, object], str]:
    return first_result(load_reply(text, source), source)


def parse_show_interfaces(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> EosInterfaces:
    """``show interfaces``; with a collector a bad interface entry costs that interface (see interfaces.py)."""
    obj, path = _read(text, source)
    return interfaces_from(obj, source, path, problems)


def parse_lldp_neighbors_detail(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> EosLldpNeighbors:
    """``show lldp neighbors detail``; with a collector a bad neighbour entry costs that neighbour."""
    obj, path = _read(text, source)
    return lldp_neighbors_from(obj, source, path, problems)


def parse_pfc_counters(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> EosPfcCounters:
    """With a collector a bad interface entry costs that interface's PFC counters (see counters.py)."""
    obj, path = _read(text, source)
    return pfc_counters_from(obj, source, path, problems)


def parse_ecn_counters(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> EosEcnCounters:
    """With a collector a bad interface entry costs that interface's ECN counters (see counters.py)."""
    obj, path = _read(text, source)
    return ecn_counters_from(obj, source, path, problems)


def parse_queue_counters_detail(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> EosQueueCounters:
    """With a collector a bad interface entry costs that interface's queue counters (see counters.py)."""
    obj, path = _read(text, source)
    return queue_counters_from(obj, source, path, problems)


def parse_show_version(text: str | bytes, source: str = "<input>") -> EosVersion:
    obj, path = _read(text, source)
    return version_from(obj, source, path)


def parse(text: str | bytes, source: str = "<input>") -> EosJson:
    """Recognise which command printed ``text`` (see :data:`COMMANDS`) and read it.

    A JSON list (or several concatenated lists) is read as a SuzieQ gather file (command
    ``"suzieq gather"``, data :class:`SuzieqGather`).
    """
    head = text.lstrip()[:1]
    if head in ("[", b"["):
        return EosJson(SUZIEQ_GATHER, parse_suzieq_gather(text, source))
    obj, path = _read(text, source)
    command = detect(obj)
    if command is None:
        keys = ", ".join(sorted(obj)[:5]) or "none"
        raise ParseError(
            source,
            f"the reply of one of {', '.join(repr(c) for c in COMMANDS)} (top-level keys: {keys})",
            key=path or "<root>",
        )
    return EosJson(command, _READERS[command](obj, source, path))
