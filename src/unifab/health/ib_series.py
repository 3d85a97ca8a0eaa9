"""InfiniBand PMA counters over time: successive ``perfquery`` snapshots of a bundle as health series.

A bundle holds one snapshot per file, ``ib/perfquery/<unix time>.txt`` (``1764547200.txt``, or with a fraction,
``1764547200.5.txt``): the ``perfquery <lid> <port>`` runs of one collection round, concatenated, each optionally
followed by ``perfquery -x <lid> <port>`` (the 64-bit PortCountersExtended). The file name is the time the round
started; a round takes seconds, the interval between rounds should be minutes. The same layout serves a fabric
without node_exporter on every host (switch ports have no exporter) and a collector that runs perfquery from one
management host (``for lid port in ...; do perfquery $lid $port; perfquery -x $lid $port; done >
ib/perfquery/$(date +%s).txt``). An HCA's own counters can come instead from node_exporter's infiniband collector
in ``telemetry/*.om`` (:data:`unifab.health.series.METRICS`); both land on the same entity ids.

Each (LID, port) is put on its entity through the Fabric (:func:`unifab.collect.ib.lid_index`): an HCA port is
``nic:<host>:<dev>``, a switch port ``port:<switch>:<n>``. The counters become :class:`~unifab.health.series.Series`
whose :class:`~unifab.health.series.MetricSpec` carries the counter's width and whether it saturates, so
:func:`unifab.health.series.intervals` judges every step: the PortCounters (IBTA vol. 1, 16.1.3.5) *saturate*
(SymbolErrorCounter at 65535, LinkDownedCounter at 255: while a counter stays at its top the increment is unknown,
the step onto it a lower bound), ``perfquery -R`` *resets* them (the value drops: the increment is the new value),
and the extended 64-bit counters neither saturate nor, in practice, wrap. Counter names follow health's:
``symbol_errors`` (read by HEALTH-FEC), ``link_down`` (HEALTH-LINK-FLAP), and ``link_error_recovery``,
``rcv_errors``, ``xmit_discards``, ``rcv_remote_phys_errors``, ``xmit_wait``, ``xmit_data`` (:data:`IB_COUNTERS`).

**XmitWait share** (:func:`wait_shares`): PortXmitWait counts ticks in which the port had data to send and sent
none (no credits from its peer: congestion downstream, or a stalled peer); PortXmitData counts 4-byte words sent.
The share of one interval is ``ΔXmitWait / (ΔXmitWait + ΔXmitData)``: 0 for a port that never waited, towards 1
for a port that mostly waited. The tick length is the switch's and not reported by the PMA, so the share is an
index for comparing ports and intervals, not a measured fraction of time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from unifab.collect.ib import SNAPSHOT_DIR, lid_index, snapshot_time
from unifab.errors import ParseError, ParseProblems
from unifab.health.series import INTERFACE, RDMA, Interval, MetricSpec, Series, SeriesStore, intervals
from unifab.model import Endpoint, Fabric, port_id
from unifab.parse.ib import perfquery
from unifab.parse.ib.perfquery import EXTENDED_COUNTER_BITS, PerfQuery
from unifab.sources import SourcePath

__all__ = [
    "IB_COUNTERS",
    "SNAPSHOT_DIR",
    "IbSeries",
    "Snapshot",
    "WaitShare",
    "ib_store",
    "read_ib_snapshots",
    "read_snapshots",
    "snapshot_time",
    "wait_shares",
]

# perfquery's name -> health's counter name
IB_COUNTERS: dict[str, str] = {
    "SymbolErrorCounter": "symbol_errors",
    "LinkDownedCounter": "link_down",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "PortRcvErrors": "rcv_errors",
    "PortXmitDiscards": "xmit_discards",
    "PortRcvRemotePhysicalErrors": "rcv_remote_phys_errors",
    "PortXmitWait": "xmit_wait",
    "PortXmitData": "xmit_data",
}


@dataclass(frozen=True, slots=True)
class Snapshot:
    time: float  # seconds since the epoch, from the file name
    path: str  # bundle-relative
    capture: PerfQuery


@dataclass(slots=True)
class IbSeries(Series):
    """A perfquery series that knows its port's far end (from the Fabric's links when it was read): the
    congestion detector (:mod:`unifab.health.detect_ib`) walks credit starvation downstream with it, without a
    Fabric of its own. ``peer`` is the far end's entity id, ``""`` when the port has no known link."""

    peer: str = ""
    peer_end: Endpoint | None = None


@dataclass(frozen=True, slots=True)
class WaitShare:
    """One interval of one port: the wait ticks, the words sent and the share (``None`` when either increment is
    unknown or both are 0)."""

    entity: str
    start: float
    end: float
    wait: float | None
    data: float | None
    share: float | None


def read_snapshots(root: SourcePath, problems: list[str]) -> list[Snapshot]:
    """The snapshots of ``ib/perfquery/`` in time order; a file that is misnamed or unreadable is one problem (a
    bad block costs that block: the rest of the file is kept)."""
    directory = root / SNAPSHOT_DIR
    if not directory.is_dir():
        return []
    out: list[Snapshot] = []
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        where = f"{SNAPSHOT_DIR}/{path.name}"
        when = snapshot_time(path.name)
        if when is None:
            problems.append(f"{where}: expected a snapshot named <unix time>.txt (e.g. 1764547200.txt); not read")
            continue
        lenient = ParseProblems(where)
        try:
            capture = perfquery.parse(path.read_text(encoding="utf-8"), where, lenient)
        except (ParseError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        problems.extend(f"{p.error()} ({p.skipped} skipped)" for p in lenient.problems)
        out.append(Snapshot(when, where, capture))
    out.sort(key=lambda s: s.time)
    return out


def _spec(counter: str, kind: str, switch: bool) -> MetricSpec:
    bits = EXTENDED_COUNTER_BITS if kind == "extended" else perfquery.COUNTER_BITS.get(counter, 32)
    # PortCounters saturate (IBTA: they stop at all ones); the 64-bit extended ones count on
    return MetricSpec(IB_COUNTERS[counter], INTERFACE if switch else RDMA, bits, saturates=kind == "basic")


def ib_store(snapshots: Iterable[Snapshot], fabric: Fabric, store: SeriesStore | None = None) -> SeriesStore:
    """Series from the snapshots, one per (entity, counter); the extended block's value where a port has one in
    every snapshot it appears in, else the PortCounters'. Blocks naming a LID the Fabric lacks are one problem
    per file; ``perfquery -a`` aggregates (port 255) name no port and are left out. A series ``store`` already
    holds (an HCA's counter from node_exporter in ``telemetry/``) is kept, not replaced."""
    store = store if store is not None else SeriesStore()
    index = lid_index(fabric.hosts, fabric.switches)
    peers = _peers(fabric)
    points: dict[tuple[str, str, str], list[tuple[float, int]]] = {}
    where: dict[str, tuple[Endpoint, bool]] = {}
    appearances: dict[str, int] = {}
    for snap in snapshots:
        store.files += 1
        unknown: list[str] = []
        seen: set[str] = set()
        for block in snap.capture.blocks:
            if block.all_ports:
                continue
            placed = _entity(fabric, index.by_lid.get(block.lid), block.port)
            if placed is None:
                unknown.append(f"lid {block.lid} port {block.port}")
                continue
            entity, endpoint, switch = placed
            where[entity] = (endpoint, switch)
            seen.add(entity)
            for name, value in block.counters.items():
                if name in IB_COUNTERS:
                    points.setdefault((entity, name, block.kind), []).append((snap.time, value))
        for entity in seen:
            appearances[entity] = appearances.get(entity, 0) + 1
        if unknown:
            store.problems.append(
                f"{snap.path}: {len(unknown)} counter block(s) name a LID the fabric does not have: "
                + ", ".join(unknown[:5])
                + (" ..." if len(unknown) > 5 else "")
            )
    doubled = 0
    for (entity, name, kind), values in sorted(points.items()):
        if kind == "basic" and len(points.get((entity, name, "extended"), ())) >= appearances[entity]:
            continue  # the 64-bit copy covers every snapshot
        if kind == "extended" and len(values) < appearances[entity]:
            continue  # not in every snapshot: the PortCounters' series is the complete one
        endpoint, switch = where[entity]
        spec = _spec(name, kind, switch)
        if (entity, spec.counter, "") in store.series:
            doubled += 1  # telemetry/ has it already (node_exporter's infiniband collector): the denser one stays
            continue
        peer_entity, peer_end = peers.get(endpoint, ("", None))
        series = IbSeries(
            entity, endpoint, spec.counter, "", spec, f"perfquery:{name}", peer=peer_entity, peer_end=peer_end
        )
        latest = dict(values)  # a pasted duplicate run of one port: the later one wins
        series.times = sorted(latest)
        series.values = [float(latest[t]) for t in series.times]
        store.series[series.key] = series
    if doubled:
        store.problems.append(
            f"{SNAPSHOT_DIR}: {doubled} counter series also read from telemetry/; the telemetry's were kept"
        )
    return store


def _peers(fabric: Fabric) -> dict[Endpoint, tuple[str, Endpoint]]:
    """Every linked end's far end: its entity id (``nic:...`` or ``port:...``) and its endpoint."""
    out: dict[Endpoint, tuple[str, Endpoint]] = {}
    for link in fabric.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            nic = fabric.nic_at(far)
            out.setdefault(near, (nic.id if nic is not None else port_id(far.node, far.port), far))
    return out


def _entity(fabric: Fabric, found: tuple[str, str] | None, port: int) -> tuple[str, Endpoint, bool] | None:
    if found is None:
        return None
    kind, ref = found
    if kind == "switch":
        return port_id(ref, str(port)), Endpoint(ref, str(port)), True
    host_name, _, key = ref.partition("\x00")
    nic = fabric.hosts[host_name].nics[key]
    return nic.id, nic.endpoint, False


def read_ib_snapshots(root: SourcePath, fabric: Fabric, store: SeriesStore | None = None) -> SeriesStore:
    """``ib/perfquery/*.txt`` of a bundle into ``store`` (the one :func:`unifab.health.series.read_bundle` built):
    the entry point health's bundle reader calls."""
    store = store if store is not None else SeriesStore()
    return ib_store(read_snapshots(root, store.problems), fabric, store)


def wait_shares(store: SeriesStore) -> dict[str, list[WaitShare]]:
    """Per port with both an ``xmit_wait`` and an ``xmit_data`` series: the XmitWait share of every interval the
    two have in common (same start and end)."""
    out: dict[str, list[WaitShare]] = {}
    data = {s.entity: s for s in store.of("xmit_data")}
    for wait in store.of("xmit_wait"):
        words = data.get(wait.entity)
        if words is None:
            continue
        by_span: dict[tuple[float, float], Interval] = {(i.start, i.end): i for i in intervals(words)}
        rows: list[WaitShare] = []
        for w in intervals(wait):
            d = by_span.get((w.start, w.end))
            if d is None:
                continue
            share = None
            if w.delta is not None and d.delta is not None and w.delta + d.delta > 0:
                share = w.delta / (w.delta + d.delta)
            rows.append(WaitShare(wait.entity, w.start, w.end, w.delta, d.delta, share))
        out[wait.entity] = rows
    return out
