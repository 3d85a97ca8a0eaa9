"""SONiC COUNTERS_DB (Redis DB 2) resolved to per-port PFC, queue, PG, watermark and PFC-watchdog records.

Input: a COUNTERS_DB dump, either the flat ``{"COUNTERS:oid:0x...": {field: value}}`` shape of the
sonic-utilities mock (``tests/mock_tables/counters_db.json``) and of the files
:mod:`unifab.collect.sonic_redis` writes, or ``sonic-db-dump -n COUNTERS_DB`` (``{key: {"type": "hash",
"value": {...}}}``); see :func:`unifab.parse.switch.sonic_state_db.read_dump`. Keys use the ``:``
separator. Counters are read as orchagent's flex counters write them (sonic-swss @ e6b0c5b5).

Resolution (what ``show pfc counters``, ``show queue counters``, ``pfcwd show stats`` do):

* ``COUNTERS_PORT_NAME_MAP`` names each port oid; the port hash is ``COUNTERS:<port oid>``, its rates
  ``RATES:<port oid>``.
* Queues: ``COUNTERS_QUEUE_NAME_MAP`` (``"Ethernet0:3" -> oid``) together with
  ``COUNTERS_QUEUE_INDEX_MAP`` / ``_PORT_MAP`` / ``_TYPE_MAP`` (oid -> index / port oid /
  ``SAI_QUEUE_TYPE_*``). A queue named in either is kept when its port resolves; when both name it they
  must agree. Queues whose port oid is in no name map (the mock's ``SAI_QUEUE_TYPE_UNICAST_VOQ`` queues
  of system ports ``oid:0x1000000000042..44``) are left out. The index is unique per port (it is part
  of the name-map key), so queues are keyed by index; ``type`` keeps the SAI suffix in lower case
  (``unicast``, ``multicast``, ``all``, ``unicast_voq``), the CLI's ``UC``/``MC``/``ALL``.
* Priority groups: ``COUNTERS_PG_NAME_MAP`` / ``_INDEX_MAP`` / ``_PORT_MAP`` the same way.
* Watermarks: ``USER_WATERMARKS:<oid>`` (what ``show ... watermark`` prints) and
  ``PERSISTENT_WATERMARKS:<oid>`` (``show ... persistent-watermark``); for PGs the
  ``XOFF_ROOM`` watermark is the headroom in use. ``PERIODIC_WATERMARKS`` is not read.
* Buffer pools: ``COUNTERS_BUFFER_POOL_NAME_MAP`` plus their watermarks.
* PFC watchdog: the ``PFC_WD_*`` fields orchagent writes into the queue hash. Detection and
  restoration times are in **microseconds** (config ms x 1000).
* PFC pause history: the native ``SAI_PORT_STAT_PFC_<p>_ON2OFF_RX_PKTS`` /
  ``SAI_PORT_STAT_PFC_<p>_RX_PAUSE_DURATION_US`` win over the ``EST_PORT_STAT_PFC_<p>_*`` estimates.
  ``EST_..._RECENT_PAUSE_TIMESTAMP`` is an integer of **microseconds** since the epoch in the mock
  and in ``pfc_detect_broadcom.lua`` (the CLI prints 1200000000000000 as 01/10/2008 21:20:00); the
  HLD describes float seconds, so a value with a fraction or exponent is read as seconds.

Every integer field of a resolved hash is also kept in the record's flat ``counters`` map (fields that
are not integers, such as ``PFC_WD_STATUS``, and the pause timestamps are not). Hashes no map points
at are ignored.

A typed field whose value is not a number, a name-map entry that is not ``<port>:<index>`` or that the
index/port maps contradict, and a second port for one oid are problems naming the Redis key. With a
:class:`~unifab.errors.ParseProblems` collector each costs only its object: that queue, PG, port record or
pool is left out and the rest is read. Without one the first raises :class:`~unifab.errors.ParseError`.

:func:`dump` writes records back in the flat shape (the twin's COUNTERS_DB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import orjson

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, pasted
from unifab.parse.switch.sonic_state_db import read_dump

__all__ = [
    "KEY_PREFIXES",
    "PFC_PRIORITIES",
    "SonicBufferPoolCounters",
    "SonicCounters",
    "SonicPfcWdQueue",
    "SonicPgCounters",
    "SonicPortCounters",
    "SonicQueueCounters",
    "dump",
    "parse",
    "resolve",
]

PFC_PRIORITIES = range(8)

PORT_NAME_MAP = "COUNTERS_PORT_NAME_MAP"
QUEUE_NAME_MAP = "COUNTERS_QUEUE_NAME_MAP"
QUEUE_INDEX_MAP = "COUNTERS_QUEUE_INDEX_MAP"
QUEUE_PORT_MAP = "COUNTERS_QUEUE_PORT_MAP"
QUEUE_TYPE_MAP = "COUNTERS_QUEUE_TYPE_MAP"
PG_NAME_MAP = "COUNTERS_PG_NAME_MAP"
PG_INDEX_MAP = "COUNTERS_PG_INDEX_MAP"
PG_PORT_MAP = "COUNTERS_PG_PORT_MAP"
POOL_NAME_MAP = "COUNTERS_BUFFER_POOL_NAME_MAP"
QUEUE_TYPE_PREFIX = "SAI_QUEUE_TYPE_"

# Key prefixes a COUNTERS_DB reader needs (the live collector filters on these).
KEY_PREFIXES = ("COUNTERS_", "COUNTERS:", "USER_WATERMARKS:", "PERSISTENT_WATERMARKS:", "RATES:")

_Q = "SAI_QUEUE_STAT_"
_PG = "SAI_INGRESS_PRIORITY_GROUP_STAT_"
_POOL = "SAI_BUFFER_POOL_STAT_"
_WD = "PFC_WD_"
_TIMESTAMP = "_RECENT_PAUSE_TIMESTAMP"  # a time, not a counter: kept out of ``counters


@dataclass(frozen=True, slots=True)
class SonicPfcWdQueue:
    """PFC watchdog state of one queue (``pfcwd show stats`` row)."""

    status: str | None  # "operational" | "stormed"
    action: str | None  # "drop" | "forward" | "alert"
    detection_time_us: int | None
    restoration_time_us: int | None
    detection_time_left_us: int | None
    restoration_time_left_us: int | None
    deadlock_detected: int | None
    deadlock_restored: int | None
    tx_packets: int | None
    tx_dropped_packets: int | None
    rx_packets: int | None
    rx_dropped_packets: int | None
    tx_packets_last: int | None
    tx_dropped_packets_last: int | None
    rx_packets_last: int | None
    rx_dropped_packets_last: int | None


@dataclass(frozen=True, slots=True)
class SonicQueueCounters:
    index: int
    type: str | None  # "unicast" | "multicast" | "all" | "unicast_voq" ...; None without a type map entry
    oid: str
    packets: int | None
    bytes: int | None
    dropped_packets: int | None
    dropped_bytes: int | None
    wred_dropped_packets: int | None
    wred_dropped_bytes: int | None
    ecn_marked_packets: int | None
    ecn_marked_bytes: int | None
    shared_watermark_bytes: int | None  # USER_WATERMARKS
    persistent_shared_watermark_bytes: int | None
    pfcwd: SonicPfcWdQueue | None  # None when the queue hash has no PFC_WD_* field
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class SonicPgCounters:
    index: int
    oid: str
    dropped_packets: int | None
    shared_watermark_bytes: int | None  # USER_WATERMARKS
    headroom_watermark_bytes: int | None  # USER_WATERMARKS XOFF_ROOM: headroom in use
    persistent_shared_watermark_bytes: int | None
    persistent_headroom_watermark_bytes: int | None
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class SonicPortCounters:
    port: str
    oid: str | None  # None when the port is only known from a queue/PG name
    pfc_rx_pkts: dict[int, int]  # priority -> PFC frames received (``show pfc counters`` Rx)
    pfc_tx_pkts: dict[int, int]
    pfc_rx_pause_transitions: dict[int, int]  # SAI ON2OFF, else EST_ estimate
    pfc_rx_pause_duration_us: dict[int, int]
    pfc_recent_pause_timestamp_us: dict[int, int]
    pfc_recent_pause_time_us: dict[int, int]
    in_errors: int | None
    in_discards: int | None
    out_errors: int | None
    out_discards: int | None
    fec_correctable_frames: int | None
    fec_uncorrectable_frames: int | None
    fec_symbol_errors: int | None
    wred_green_dropped_packets: int | None
    wred_yellow_dropped_packets: int | None
    wred_red_dropped_packets: int | None
    wred_dropped_packets: int | None
    ecn_marked_packets: int | None
    rx_bps: float | None  # RATES
    rx_pps: float | None
    tx_bps: float | None
    tx_pps: float | None
    queues: dict[int, SonicQueueCounters]
    priority_groups: dict[int, SonicPgCounters]
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class SonicBufferPoolCounters:
    name: str
    oid: str
    watermark_bytes: int | None  # USER_WATERMARKS
    headroom_watermark_bytes: int | None  # shared headroom pool (XOFF_ROOM) in use
    persistent_watermark_bytes: int | None
    persistent_headroom_watermark_bytes: int | None


@dataclass(frozen=True, slots=True)
class SonicCounters:
    shape: str  # "flat" | "db-dump"
    ports: dict[str, SonicPortCounters]
    buffer_pools: dict[str, SonicBufferPoolCounters]


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicCounters:
    """Read a COUNTERS_DB dump and resolve it (see the module docstring)."""
    dump = read_dump(text, source, problems)
    return resolve(dump.hashes, source, shape=dump.shape, problems=problems)


def resolve(
    hashes: dict[str, dict[str, str]],
    source: str = "<input>",
    shape: str = "flat",
    problems: ParseProblems | None = None,
) -> SonicCounters:
    """Resolve ``redis key -> fields`` (as read from a dump or from Redis) to per-port records."""
    return _Resolver(hashes, source, problems).run(shape)


# --------------------------------------------------------------------------------------------------


def _int(value: str) -> int | None:
    text = value.strip()
    body = text[1:] if text[:1] == "-" else text
    if body.isdigit() and body.isascii():
        return int(text)
    return None


class _Resolver:
    def __init__(self, hashes: dict[str, dict[str, str]], source: str, problems: ParseProblems | None) -> None:
        self.h = hashes
        self.source = source
        self.log = problems if problems is not None else ParseProblems.strict(source)

    # -- field access -------------------------------------------------------------------------------

    def _num(self, fields: dict[str, str], field: str, key: str) -> int | None:
        raw = fields.get(field)
        if raw is None:
            return None
        value = _int(raw)
        if value is None:
            raise ParseError(self.source, f"{field} as an integer, got {raw!r}", key=key)
        return value

    def _float(self, fields: dict[str, str], field: str, key: str) -> float | None:
        raw = fields.get(field)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ParseError(self.source, f"{field} as a number such as '2.e9', got {raw!r}", key=key)
        return value

    def _timestamp_us(self, fields: dict[str, str], field: str, key: str) -> int | None:
        raw = fields.get(field)
        if raw is None:
            return None
        value = _int(raw)
        if value is not None:
            return value
        seconds = self._float(fields, field, key)
        return None if seconds is None else round(seconds * 1_000_000)

    def _ints(self, fields: dict[str, str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, raw in fields.items():
            value = _int(raw)
            if value is not None:
                out[name] = value
        return dict(sorted(out.items()))

    def _map(self, name: str) -> dict[str, str]:
        return self.h.get(name, {})

    # -- name maps -----------------------------------------------------------------------------------

    def _members(
        self, name_map: str, index_map: str, port_map: str, ports_by_oid: dict[str, str]
    ) -> dict[str, dict[int, str]]:
        """port -> index -> oid, from the name map and the index/port maps together."""
        names = self._map(name_map)
        indices = self._map(index_map)
        owners = self._map(port_map)
        out: dict[str, dict[int, str]] = {}

        what = "queue" if name_map == QUEUE_NAME_MAP else "PG"
        refused: set[str] = set()  # oids whose name-map entry was skipped: the index map must not bring them back

        def place(port: str, index: int, oid: str, key: str) -> None:
            slot = out.setdefault(port, {})
            other = slot.get(index)
            if other is not None and other != oid:
                raise ParseError(self.source, f"one oid for {port}:{index}, got {other} and {oid}", key=key)
            slot[index] = oid

        for qname, oid in names.items():
            with self.log.skipping(f"{what} {qname!r} ({oid})") as entry:
                port, sep, idx = qname.rpartition(":")
                if not sep or not port or _int(idx) is None or idx.startswith("-"):
                    raise ParseError(self.source, f"names '<port>:<index>', got {qname!r}", key=name_map)
                index = int(idx)
                mapped = indices.get(oid)
                if mapped is not None and _int(mapped) != index:
                    raise ParseError(
                        self.source, f"index {index} for {oid} (named {qname!r}), got {mapped!r}", key=index_map
                    )
                owner = owners.get(oid)
                if owner is not None and owner in ports_by_oid and ports_by_oid[owner] != port:
                    raise ParseError(
                        self.source,
                        f"{oid} (named {qname!r}) to belong to {port}, got {ports_by_oid[owner]}",
                        key=port_map,
                    )
                place(port, index, oid, name_map)
            if entry.failed:
                refused.add(oid)
        for oid, idx in indices.items():
            owner = owners.get(oid)
            owner_port = None if owner is None else ports_by_oid.get(owner)
            if owner_port is None or oid in refused:
                continue  # a system-port / VOQ queue, one the maps cannot place, or one already reported
            with self.log.skipping(f"{what} {oid} of {owner_port}"):
                number = _int(idx)
                if number is None or number < 0:
                    raise ParseError(self.source, f"a non-negative index for {oid}, got {idx!r}", key=index_map)
                place(owner_port, number, oid, index_map)
        return out

    # -- records -------------------------------------------------------------------------------------

    def _pfcwd(self, fields: dict[str, str], key: str) -> SonicPfcWdQueue | None:
        if not any(name.startswith(_WD) for name in fields):
            return None

        def n(name: str) -> int | None:
            return self._num(fields, _WD + name, key)

        return SonicPfcWdQueue(
            status=fields.get("PFC_WD_STATUS"),
            action=fields.get("PFC_WD_ACTION"),
            detection_time_us=n("DETECTION_TIME"),
            restoration_time_us=n("RESTORATION_TIME"),
            detection_time_left_us=n("DETECTION_TIME_LEFT"),
            restoration_time_left_us=n("RESTORATION_TIME_LEFT"),
            deadlock_detected=n("QUEUE_STATS_DEADLOCK_DETECTED"),
            deadlock_restored=n("QUEUE_STATS_DEADLOCK_RESTORED"),
            tx_packets=n("QUEUE_STATS_TX_PACKETS"),
            tx_dropped_packets=n("QUEUE_STATS_TX_DROPPED_PACKETS"),
            rx_packets=n("QUEUE_STATS_RX_PACKETS"),
            rx_dropped_packets=n("QUEUE_STATS_RX_DROPPED_PACKETS"),
            tx_packets_last=n("QUEUE_STATS_TX_PACKETS_LAST"),
            tx_dropped_packets_last=n("QUEUE_STATS_TX_DROPPED_PACKETS_LAST"),
            rx_packets_last=n("QUEUE_STATS_RX_PACKETS_LAST"),
            rx_dropped_packets_last=n("QUEUE_STATS_RX_DROPPED_PACKETS_LAST"),
        )

    def _queue(self, index: int, oid: str) -> SonicQueueCounters:
        key = f"COUNTERS:{oid}"
        f = self.h.get(key, {})
        raw_type = self._map(QUEUE_TYPE_MAP).get(oid)
        if raw_type is None:
            qtype = None
        elif raw_type.startswith(QUEUE_TYPE_PREFIX) and len(raw_type) > len(QUEUE_TYPE_PREFIX):
            qtype = raw_type[len(QUEUE_TYPE_PREFIX) :].lower()
        else:
            raise ParseError(
                self.source, f"a {QUEUE_TYPE_PREFIX}* type for {oid}, got {raw_type!r}", key=QUEUE_TYPE_MAP
            )
        user_key, pers_key = f"USER_WATERMARKS:{oid}", f"PERSISTENT_WATERMARKS:{oid}"
        wm = _Q + "SHARED_WATERMARK_BYTES"
        return SonicQueueCounters(
            index=index,
            type=qtype,
            oid=oid,
            packets=self._num(f, _Q + "PACKETS", key),
            bytes=self._num(f, _Q + "BYTES", key),
            dropped_packets=self._num(f, _Q + "DROPPED_PACKETS", key),
            dropped_bytes=self._num(f, _Q + "DROPPED_BYTES", key),
            wred_dropped_packets=self._num(f, _Q + "WRED_DROPPED_PACKETS", key),
            wred_dropped_bytes=self._num(f, _Q + "WRED_DROPPED_BYTES", key),
            ecn_marked_packets=self._num(f, _Q + "WRED_ECN_MARKED_PACKETS", key),
            ecn_marked_bytes=self._num(f, _Q + "WRED_ECN_MARKED_BYTES", key),
            shared_watermark_bytes=self._num(self.h.get(user_key, {}), wm, user_key),
            persistent_shared_watermark_bytes=self._num(self.h.get(pers_key, {}), wm, pers_key),
            pfcwd=self._pfcwd(f, key),
            counters=self._ints(f),
        )

    def _pg(self, index: int, oid: str) -> SonicPgCounters:
        key = f"COUNTERS:{oid}"
        f = self.h.get(key, {})
        user_key, pers_key = f"USER_WATERMARKS:{oid}", f"PERSISTENT_WATERMARKS:{oid}"
        user, pers = self.h.get(user_key, {}), self.h.get(pers_key, {})
        shared, xoff = _PG + "SHARED_WATERMARK_BYTES", _PG + "XOFF_ROOM_WATERMARK_BYTES"
        return SonicPgCounters(
            index=index,
            oid=oid,
            dropped_packets=self._num(f, _PG + "DROPPED_PACKETS", key),
            shared_watermark_bytes=self._num(user, shared, user_key),
            headroom_watermark_bytes=self._num(user, xoff, user_key),
            persistent_shared_watermark_bytes=self._num(pers, shared, pers_key),
            persistent_headroom_watermark_bytes=self._num(pers, xoff, pers_key),
            counters=self._ints(f),
        )

    def _per_priority(self, f: dict[str, str], key: str, sai: str, est: str | None = None) -> dict[int, int]:
        out: dict[int, int] = {}
        for p in PFC_PRIORITIES:
            value = self._num(f, sai.format(p=p), key)
            if value is None and est is not None:
                value = self._num(f, est.format(p=p), key)
            if value is not None:
                out[p] = value
        return out

    def _port(
        self, name: str, oid: str | None, queues: dict[int, SonicQueueCounters], pgs: dict[int, SonicPgCounters]
    ) -> SonicPortCounters:
        key = f"COUNTERS:{oid}"
        f = self.h.get(key, {}) if oid is not None else {}
        rkey = f"RATES:{oid}"
        rates = self.h.get(rkey, {}) if oid is not None else {}
        stamps: dict[int, int] = {}
        for p in PFC_PRIORITIES:
            stamp = self._timestamp_us(f, f"EST_PORT_STAT_PFC_{p}_RECENT_PAUSE_TIMESTAMP", key)
            if stamp is not None:
                stamps[p] = stamp

        def n(field: str) -> int | None:
            return self._num(f, "SAI_PORT_STAT_" + field, key)

        return SonicPortCounters(
            port=name,
            oid=oid,
            pfc_rx_pkts=self._per_priority(f, key, "SAI_PORT_STAT_PFC_{p}_RX_PKTS"),
            pfc_tx_pkts=self._per_priority(f, key, "SAI_PORT_STAT_PFC_{p}_TX_PKTS"),
            pfc_rx_pause_transitions=self._per_priority(
                f, key, "SAI_PORT_STAT_PFC_{p}_ON2OFF_RX_PKTS", "EST_PORT_STAT_PFC_{p}_ON2OFF_RX_PKTS"
            ),
            pfc_rx_pause_duration_us=self._per_priority(
                f, key, "SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US", "EST_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US"
            ),
            pfc_recent_pause_timestamp_us=stamps,
            pfc_recent_pause_time_us=self._per_priority(f, key, "EST_PORT_STAT_PFC_{p}_RECENT_PAUSE_TIME_US"),
            in_errors=n("IF_IN_ERRORS"),
            in_discards=n("IF_IN_DISCARDS"),
            out_errors=n("IF_OUT_ERRORS"),
            out_discards=n("IF_OUT_DISCARDS"),
            fec_correctable_frames=n("IF_IN_FEC_CORRECTABLE_FRAMES"),
            fec_uncorrectable_frames=n("IF_IN_FEC_NOT_CORRECTABLE_FRAMES"),
            fec_symbol_errors=n("IF_IN_FEC_SYMBOL_ERRORS"),
            wred_green_dropped_packets=n("GREEN_WRED_DROPPED_PACKETS"),
            wred_yellow_dropped_packets=n("YELLOW_WRED_DROPPED_PACKETS"),
            wred_red_dropped_packets=n("RED_WRED_DROPPED_PACKETS"),
            wred_dropped_packets=n("WRED_DROPPED_PACKETS"),
            ecn_marked_packets=n("ECN_MARKED_PACKETS"),
            rx_bps=self._float(rates, "RX_BPS", rkey),
            rx_pps=self._float(rates, "RX_PPS", rkey),
            tx_bps=self._float(rates, "TX_BPS", rkey),
            tx_pps=self._float(rates, "TX_PPS", rkey),
            queues=queues,
            priority_groups=pgs,
            counters={k: v for k, v in self._ints(f).items() if not k.endswith(_TIMESTAMP)},
        )

    def _pool(self, name: str, oid: str) -> SonicBufferPoolCounters:
        user_key, pers_key = f"USER_WATERMARKS:{oid}", f"PERSISTENT_WATERMARKS:{oid}"
        user, pers = self.h.get(user_key, {}), self.h.get(pers_key, {})
        wm, xoff = _POOL + "WATERMARK_BYTES", _POOL + "XOFF_ROOM_WATERMARK_BYTES"
        return SonicBufferPoolCounters(
            name=name,
            oid=oid,
            watermark_bytes=self._num(user, wm, user_key),
            headroom_watermark_bytes=self._num(user, xoff, user_key),
            persistent_watermark_bytes=self._num(pers, wm, pers_key),
            persistent_headroom_watermark_bytes=self._num(pers, xoff, pers_key),
        )

    # -- assembly ------------------------------------------------------------------------------------

    def run(self, shape: str) -> SonicCounters:
        port_oids = dict(self._map(PORT_NAME_MAP))
        ports_by_oid: dict[str, str] = {}
        for port, oid in list(port_oids.items()):
            if oid in ports_by_oid:
                self.log.add(
                    f"one port per oid, {oid} names {ports_by_oid[oid]} and {port}",
                    f"the counters of port {port}",
                    key=PORT_NAME_MAP,
                )
                del port_oids[port]
                continue
            ports_by_oid[oid] = port
        queues = self._members(QUEUE_NAME_MAP, QUEUE_INDEX_MAP, QUEUE_PORT_MAP, ports_by_oid)
        pgs = self._members(PG_NAME_MAP, PG_INDEX_MAP, PG_PORT_MAP, ports_by_oid)

        ports: dict[str, SonicPortCounters] = {}
        for name in sorted(set(port_oids) | set(queues) | set(pgs), key=natural_key):
            port_queues: dict[int, SonicQueueCounters] = {}
            for i, oid in sorted(queues.get(name, {}).items()):
                with self.log.skipping(f"the counters of queue {name}:{i}"):
                    port_queues[i] = self._queue(i, oid)
            port_pgs: dict[int, SonicPgCounters] = {}
            for i, oid in sorted(pgs.get(name, {}).items()):
                with self.log.skipping(f"the counters of PG {name}:{i}"):
                    port_pgs[i] = self._pg(i, oid)
            with self.log.skipping(f"the counters of port {name} (its queues and PGs are kept)") as row:
                ports[name] = self._port(name, port_oids.get(name), port_queues, port_pgs)
            if row.failed:  # keep what was read of its queues and PGs, without the port's own counters
                ports[name] = self._port(name, None, port_queues, port_pgs)
        pools: dict[str, SonicBufferPoolCounters] = {}
        for name, oid in sorted(self._map(POOL_NAME_MAP).items()):
            with self.log.skipping(f"the watermarks of buffer pool {name}"):
                pools[name] = self._pool(name, oid)
        return SonicCounters(shape=shape, ports=ports, buffer_pools=pools)


# --- dump ---------------------------------------------------------------------------------------


def dump(counters: SonicCounters) -> str:
    """The flat COUNTERS_DB shape of :func:`parse`'s input; ``parse(dump(c))`` equals ``c`` for any
    ``c`` that :func:`parse` produced (typed fields are written from ``counters`` where they came from
    there). Ports without an oid get none, so their own counters cannot be written back.
    """
    out: dict[str, dict[str, str]] = {}

    def put(key: str, fields: dict[str, str]) -> None:
        if fields:
            out.setdefault(key, {}).update(fields)

    port_map: dict[str, str] = {}
    qname: dict[str, str] = {}
    qindex: dict[str, str] = {}
    qport: dict[str, str] = {}
    qtype: dict[str, str] = {}
    pgname: dict[str, str] = {}
    pgindex: dict[str, str] = {}
    pgport: dict[str, str] = {}
    for port in counters.ports.values():
        if port.oid is not None:
            port_map[port.port] = port.oid
            fields = _strs(port.counters)
            for p, stamp in port.pfc_recent_pause_timestamp_us.items():
                fields[f"EST_PORT_STAT_PFC_{p}_RECENT_PAUSE_TIMESTAMP"] = str(stamp)
            put(f"COUNTERS:{port.oid}", fields)
            put(
                f"RATES:{port.oid}",
                {
                    name: repr(value)
                    for name, value in (
                        ("RX_BPS", port.rx_bps),
                        ("RX_PPS", port.rx_pps),
                        ("TX_BPS", port.tx_bps),
                        ("TX_PPS", port.tx_pps),
                    )
                    if value is not None
                },
            )
        for q in port.queues.values():
            qname[f"{port.port}:{q.index}"] = q.oid
            qindex[q.oid] = str(q.index)
            if port.oid is not None:
                qport[q.oid] = port.oid
            if q.type is not None:
                qtype[q.oid] = QUEUE_TYPE_PREFIX + q.type.upper()
            fields = _strs(q.counters)
            if q.pfcwd is not None:
                if q.pfcwd.status is not None:
                    fields["PFC_WD_STATUS"] = q.pfcwd.status
                if q.pfcwd.action is not None:
                    fields["PFC_WD_ACTION"] = q.pfcwd.action
            put(f"COUNTERS:{q.oid}", fields)
            wm = _Q + "SHARED_WATERMARK_BYTES"
            put(f"USER_WATERMARKS:{q.oid}", _opt({wm: q.shared_watermark_bytes}))
            put(f"PERSISTENT_WATERMARKS:{q.oid}", _opt({wm: q.persistent_shared_watermark_bytes}))
        for pg in port.priority_groups.values():
            pgname[f"{port.port}:{pg.index}"] = pg.oid
            pgindex[pg.oid] = str(pg.index)
            if port.oid is not None:
                pgport[pg.oid] = port.oid
            put(f"COUNTERS:{pg.oid}", _strs(pg.counters))
            shared, xoff = _PG + "SHARED_WATERMARK_BYTES", _PG + "XOFF_ROOM_WATERMARK_BYTES"
            put(
                f"USER_WATERMARKS:{pg.oid}",
                _opt({shared: pg.shared_watermark_bytes, xoff: pg.headroom_watermark_bytes}),
            )
            put(
                f"PERSISTENT_WATERMARKS:{pg.oid}",
                _opt({shared: pg.persistent_shared_watermark_bytes, xoff: pg.persistent_headroom_watermark_bytes}),
            )
    pool_map: dict[str, str] = {}
    for pool in counters.buffer_pools.values():
        pool_map[pool.name] = pool.oid
        wm, xoff = _POOL + "WATERMARK_BYTES", _POOL + "XOFF_ROOM_WATERMARK_BYTES"
        put(f"USER_WATERMARKS:{pool.oid}", _opt({wm: pool.watermark_bytes, xoff: pool.headroom_watermark_bytes}))
        put(
            f"PERSISTENT_WATERMARKS:{pool.oid}",
            _opt({wm: pool.persistent_watermark_bytes, xoff: pool.persistent_headroom_watermark_bytes}),
        )
    maps = (
        (PORT_NAME_MAP, port_map),
        (QUEUE_NAME_MAP, qname),
        (QUEUE_INDEX_MAP, qindex),
        (QUEUE_PORT_MAP, qport),
        (QUEUE_TYPE_MAP, qtype),
        (PG_NAME_MAP, pgname),
        (PG_INDEX_MAP, pgindex),
        (PG_PORT_MAP, pgport),
        (POOL_NAME_MAP, pool_map),
    )
    doc: dict[str, dict[str, str]] = {name: m for name, m in maps if m}
    doc.update(out)
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def _strs(values: dict[str, int]) -> dict[str, str]:
    return {name: str(value) for name, value in values.items()}


def _opt(values: dict[str, int | None]) -> dict[str, str]:
    return {name: str(value) for name, value in values.items() if value is not None}
