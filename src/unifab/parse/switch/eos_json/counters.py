"""PFC, ECN and egress queue counters: :func:`pfc_counters_from`, :func:`ecn_counters_from`,
:func:`queue_counters_from`.

With a :class:`~unifab.errors.ParseProblems` collector an interface entry that cannot be read (a value of the
wrong type, a priority, queue, TC or drop-precedence key that is not a number) costs that interface's
counters, named by its key path; the other interfaces read as in an unharmed reply. A half-read interface is
never kept: a missing priority or queue would read as one that counted nothing. A reply without its body
key, or whose every interface is bad, raises.
"""

from __future__ import annotations

from typing import TypeVar

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child
from unifab.parse.switch.eos_json.access import as_int, as_object, member, numbered, opt_int
from unifab.parse.switch.eos_json.commands import (
    SHOW_ECN_COUNTERS,
    SHOW_PFC_COUNTERS,
    SHOW_PFC_COUNTERS_DETAIL,
    SHOW_QUEUE_DETAIL,
)
from unifab.parse.switch.eos_json.records import (
    EosEcnCounters,
    EosEcnQueueCounters,
    EosInterfaceQueueCounters,
    EosPfcCounters,
    EosPfcInterfaceCounters,
    EosQueueCounters,
    EosQueueDropCounter,
)

__all__ = ["QUEUE_TYPES", "ecn_counters_from", "pfc_counters_from", "queue_counters_from"]

T = TypeVar("T")

QUEUE_TYPES = {"ucastQueues": "unicast", "mcastQueues": "multicast"}


def _pfc_detail(name: str, e: dict[str, object], path: str, source: str) -> EosPfcInterfaceCounters:
    rx: dict[int, int] = {}
    tx: dict[int, int] = {}
    pp = child(path, "priorities")
    for key, value in as_object(e.get("priorities"), pp, source).items():
        prio = numbered(key, "", pp, source)
        p = as_object(value, child(pp, key), source)
        r = opt_int(p, "rxFrames", child(pp, key), source)
        t = opt_int(p, "txFrames", child(pp, key), source)
        if r is not None:
            rx[prio] = r
        if t is not None:
            tx[prio] = t
    return EosPfcInterfaceCounters(
        interface=name,
        rx_frames=opt_int(e, "rxFrames", path, source),
        tx_frames=opt_int(e, "txFrames", path, source),
        rx_frames_by_priority=dict(sorted(rx.items())),
        tx_frames_by_priority=dict(sorted(tx.items())),
    )


def _checked(body: dict[str, object], out: dict[str, T], log: ParseProblems) -> dict[str, T]:
    """``out``, unless every interface of a non-empty ``body`` was bad: then the first problem is raised."""
    if body and not out:
        raise log.problems[0].error()
    return out


def pfc_counters_from(
    obj: object, source: str = "<input>", path: str = "", problems: ParseProblems | None = None
) -> EosPfcCounters:
    """Read ``show priority-flow-control counters`` (totals) or ``... counters detail`` (per priority)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    root = as_object(obj, path, source)
    detail = "interfaceCounters" not in root
    key = "interfaces" if detail else "interfaceCounters"
    command = SHOW_PFC_COUNTERS_DETAIL if detail else SHOW_PFC_COUNTERS
    body = member(root, key, path, source, command)
    bp = child(path, key)
    out: dict[str, EosPfcInterfaceCounters] = {}
    for name, value in body.items():
        with log.skipping(f"the PFC counters of {name}"):
            p = child(bp, name)
            e = as_object(value, p, source)
            if detail:
                out[name] = _pfc_detail(name, e, p, source)
            else:
                out[name] = EosPfcInterfaceCounters(
                    interface=name,
                    rx_frames=opt_int(e, "rxFrames", p, source),
                    tx_frames=opt_int(e, "txFrames", p, source),
                    rx_frames_by_priority={},
                    tx_frames_by_priority={},
                )
    return EosPfcCounters(detail=detail, interfaces=_checked(body, out, log))


def _ecn_count(value: object, path: str, source: str) -> int | None:
    if value == "-":
        return None
    if isinstance(value, str):
        if value.isdigit() and value.isascii() and len(value) <= 20:
            return int(value)
        raise ParseError(source, f"a count or '-', got {value!r}", key=path)
    return as_int(value, path, source)


def ecn_counters_from(
    obj: object, source: str = "<input>", path: str = "", problems: ParseProblems | None = None
) -> EosEcnCounters:
    """Read a decoded ``show qos interfaces ecn counters queue`` reply."""
    log = problems if problems is not None else ParseProblems.strict(source)
    root = as_object(obj, path, source)
    body = member(root, "intfQueueCounters", path, source, SHOW_ECN_COUNTERS)
    bp = child(path, "intfQueueCounters")
    out: dict[str, EosEcnQueueCounters] = {}
    for name, value in body.items():
        with log.skipping(f"the ECN counters of {name}"):
            p = child(bp, name)
            qp = child(p, "queueCounters")
            queues = as_object(as_object(value, p, source).get("queueCounters", {}), qp, source)
            counts = {numbered(q, "", qp, source): _ecn_count(v, child(qp, q), source) for q, v in queues.items()}
            out[name] = EosEcnQueueCounters(name, dict(sorted(counts.items())))
    return EosEcnCounters(_checked(body, out, log))


def _queue_interface(name: str, value: object, path: str, source: str) -> EosInterfaceQueueCounters:
    e = as_object(value, path, source)
    entries: list[EosQueueDropCounter] = []
    dropped: dict[str, dict[int, int]] = {"unicast": {}, "multicast": {}}
    for raw_type, queue_type in QUEUE_TYPES.items():
        if raw_type not in e:
            continue
        qp = child(path, raw_type)
        tcs_path = child(qp, "trafficClasses")
        tcs = as_object(as_object(e[raw_type], qp, source).get("trafficClasses", {}), tcs_path, source)
        for tc_key, tc_value in tcs.items():
            tc = numbered(tc_key, "TC", tcs_path, source)
            tp = child(tcs_path, tc_key)
            dps_path = child(tp, "dropPrecedences")
            dps = as_object(as_object(tc_value, tp, source).get("dropPrecedences", {}), dps_path, source)
            for dp_key, dp_value in dps.items():
                dp = numbered(dp_key, "DP", dps_path, source)
                dpp = child(dps_path, dp_key)
                d = as_object(dp_value, dpp, source)
                counters = {k: v for k, v in d.items() if isinstance(v, int) and not isinstance(v, bool)}
                packets = opt_int(d, "droppedPackets", dpp, source)
                entries.append(EosQueueDropCounter(queue_type, tc, dp, packets, counters))
                if packets is not None:
                    bucket = dropped[queue_type]
                    bucket[tc] = bucket.get(tc, 0) + packets
    entries.sort(key=lambda x: (x.queue_type != "unicast", x.traffic_class, x.drop_precedence))
    return EosInterfaceQueueCounters(
        interface=name,
        entries=tuple(entries),
        unicast_dropped=dict(sorted(dropped["unicast"].items())),
        multicast_dropped=dict(sorted(dropped["multicast"].items())),
    )


def queue_counters_from(
    obj: object, source: str = "<input>", path: str = "", problems: ParseProblems | None = None
) -> EosQueueCounters:
    """Read a decoded ``show interfaces counters queue detail`` reply."""
    log = problems if problems is not None else ParseProblems.strict(source)
    root = as_object(obj, path, source)
    egress = member(root, "egressQueueCounters", path, source, SHOW_QUEUE_DETAIL)
    ep = child(path, "egressQueueCounters")
    body = member(egress, "interfaces", ep, source, SHOW_QUEUE_DETAIL)
    bp = child(ep, "interfaces")
    out: dict[str, EosInterfaceQueueCounters] = {}
    for name, value in body.items():
        with log.skipping(f"the queue counters of {name}"):
            out[name] = _queue_interface(name, value, child(bp, name), source)
    return EosQueueCounters(_checked(body, out, log))
