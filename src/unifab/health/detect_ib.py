"""InfiniBand credit starvation: where congestion from a slow receiver starts, from the perfquery rounds.

InfiniBand is lossless by credits: a port sends only while its peer's receive buffer has room. A receiver that
drains slowly (an HCA whose host does not post receives fast enough, a stalled PCIe path) stops returning
credits; the switch port feeding it waits (PortXmitWait rises, the data it sends falls), its own buffers fill,
and the ports feeding *that* switch wait too. Congestion spreads **upstream** as a tree whose victims all wait;
the cause sits below the tree's furthest-downstream waiting port, at its far end, which does not wait itself.

A port **starves** in an interval when its XmitWait share (:func:`unifab.health.ib_series.wait_shares`) is at
least ``ib_wait_share``, or when it discarded packets (PortXmitDiscards: packets dropped after waiting past the
switch's lifetime limit, the same starvation gone further); it is **congested** from the first of
``ib_wait_intervals`` consecutive starved intervals (a burst that waits once is not congestion). Among the
congested ports, one whose far end's node has no congested port of its own (other than the one back towards it)
is the tree's bottom; its far end, the slow receiver (``nic:<host>:<dev>``, or ``port:<switch>:<n>`` when a
switch's ingress is what does not drain), is the root cause: one HEALTH-PFC-STORM symptom on that entity (the id
Ethernet uses for a stuck receiver that pauses its peer; the localisation is the same, the receiver), whose
notes name the port that waited on it and the upstream victims, so the victims are not incidents of their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from unifab.health.ib_series import IbSeries, WaitShare, wait_shares
from unifab.health.series import Series, SeriesStore, intervals
from unifab.health.symptom import Symptom, Thresholds
from unifab.model import Endpoint

__all__ = ["IB_CONGESTION", "Congested", "congested_ports", "ib_congestion"]

IB_CONGESTION = "HEALTH-PFC-STORM"  # detect.PFC_STORM (detect imports this module, not the other way round)


@dataclass(frozen=True, slots=True)
class Congested:
    """One port that waited for credits ``intervals`` consecutive intervals from ``start``."""

    entity: str
    endpoint: Endpoint
    peer: str
    peer_end: Endpoint | None
    start: float
    end: float
    wait: float  # wait ticks in the run (the known increments)
    intervals: int
    peak: float  # the largest share in the run
    discards: float  # packets discarded in the run


def _run(rows: list[WaitShare], discards: dict[tuple[float, float], float], t: Thresholds) -> list[WaitShare]:
    """The first run of ``ib_wait_intervals`` consecutive starved intervals, grown to its end ([] if none)."""
    best: list[WaitShare] = []
    run: list[WaitShare] = []
    for row in rows:
        starved = (row.share is not None and row.share >= t.ib_wait_share) or discards.get((row.start, row.end), 0) > 0
        if starved:
            run.append(row)
            continue
        if len(run) >= t.ib_wait_intervals:
            best = run
            break
        run = []
    if not best and len(run) >= t.ib_wait_intervals:
        best = run
    return best


def congested_ports(series: Iterable[Series], t: Thresholds) -> list[Congested]:
    """Every port of the perfquery series that starved ``ib_wait_intervals`` intervals in a row."""
    ib = [s for s in series if isinstance(s, IbSeries)]
    store = SeriesStore({s.key: s for s in ib if s.counter in ("xmit_wait", "xmit_data")})
    dropped: dict[str, dict[tuple[float, float], float]] = {
        s.entity: {(i.start, i.end): i.delta for i in intervals(s) if i.delta}
        for s in ib
        if s.counter == "xmit_discards"
    }
    waits = {s.entity: s for s in ib if s.counter == "xmit_wait"}
    out: list[Congested] = []
    for entity, rows in sorted(wait_shares(store).items()):
        drops = dropped.get(entity, {})
        run = _run(rows, drops, t)
        if not run:
            continue
        s = waits[entity]
        out.append(
            Congested(
                entity,
                s.endpoint,
                s.peer,
                s.peer_end,
                run[0].start,
                run[-1].end,
                sum(r.wait or 0.0 for r in run),
                len(run),
                max((r.share for r in run if r.share is not None), default=0.0),
                sum(drops.get((r.start, r.end), 0.0) for r in run),
            )
        )
    return out


def ib_congestion(series: Iterable[Series], t: Thresholds) -> list[Symptom]:
    """One symptom per slow receiver at the bottom of a congestion tree (module docstring)."""
    congested = congested_ports(series, t)
    by_node: dict[str, list[Congested]] = {}
    for c in congested:
        by_node.setdefault(c.endpoint.node, []).append(c)
    roots: dict[str, list[Congested]] = {}
    for c in congested:
        if c.peer_end is None:
            continue  # a port without a known far end: nothing says where its credits went
        # an HCA forwards nothing: a port facing one is a bottom whatever the host's other HCAs do
        below = [] if c.peer.startswith("nic:") else [d for d in by_node.get(c.peer_end.node, []) if d.entity != c.peer]
        if not below:
            roots.setdefault(c.peer, []).append(c)
    out: list[Symptom] = []
    for root, bottoms in sorted(roots.items()):
        end = bottoms[0].peer_end
        assert end is not None
        victims = _upstream(bottoms, by_node)
        first = min(bottoms, key=lambda c: c.start)
        notes = [
            f"{c.entity} waited for its credits in {c.intervals} consecutive intervals (share up to {c.peak:.2f}"
            + (f", {c.discards:.0f} packets discarded)" if c.discards else ")")
            for c in sorted(bottoms, key=lambda c: c.entity)
        ]
        if victims:
            notes.append(f"upstream victims (waiting behind it): {', '.join(victims)}")
        out.append(
            Symptom(
                IB_CONGESTION,
                root,
                end,
                "xmit_wait",
                first.start,
                max(c.end for c in bottoms),
                sum(c.wait for c in bottoms),
                max(c.intervals for c in bottoms),
                max(c.peak for c in bottoms),
                0,
                tuple(notes),
            )
        )
    return out


def _upstream(bottoms: list[Congested], by_node: dict[str, list[Congested]]) -> list[str]:
    """The congested ports that send towards the bottoms' nodes, and those behind them (breadth first)."""
    seen = {c.entity for c in bottoms}
    frontier = list(bottoms)
    victims: list[str] = []
    feeders: dict[str, list[Congested]] = {}
    for group in by_node.values():
        for c in group:
            if c.peer_end is not None and c.peer.startswith("port:"):  # into a switch, which forwards
                feeders.setdefault(c.peer_end.node, []).append(c)
    while frontier:
        nxt: list[Congested] = []
        for c in frontier:
            if not c.entity.startswith("port:"):
                continue  # an HCA's own port: nothing feeds it through its node
            for f in feeders.get(c.endpoint.node, []):
                if f.entity not in seen and f.entity != c.peer:
                    seen.add(f.entity)
                    victims.append(f.entity)
                    nxt.append(f)
        frontier = nxt
    return sorted(victims)
