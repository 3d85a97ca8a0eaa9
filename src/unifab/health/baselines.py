"""Two baselines the health benchmark runs on the same data as unifab: per-port alert rules and 007 link voting.

Each returns :class:`Prediction` s (a root cause entity id and the time it would have been raised), scored like
unifab's incidents by :mod:`unifab.health.score`.

**Per-port threshold alerting** (:func:`per_port_alerts`): what a plain Prometheus rule set does, one rule per
counter and port, each alert naming the port (or NIC, GPU, device) it fires on. The rules follow the usual
node-exporter / DCGM / switch mixins: an uncorrected-error, CRC or RoCE-loss counter that increased at all in
5 minutes (``increase(x[5m]) > 0``); a link that flapped more than once in 5 minutes; a port sending pause more
than half of an interval; a link-state gauge at 0 for a minute (``node_network_up == 0 for 1m``); a device whose
scrapes stop for 5 minutes (``up == 0 for 5m``); any Xid (``DCGM_FI_DEV_XID_ERRORS > 0``); any NCCL error line
(a log alert on the reporting NIC); a transceiver whose DOM alarms.

**007** (Arzani et al., NSDI'18, "007: Democratically Finding the Cause of Packet Drops") (:func:`vote_007`):
every failing flow votes for the links on its path, each link getting ``1/h`` of a vote (``h`` the path's hop
count), and the most-voted link is blamed; its flows are removed and the voting repeats while a link still
gets at least :data:`VOTE_THRESHOLD` votes. 007 sees only what hosts see (retransmissions): a flow fails when
one of its NICs counts loss (uncorrected symbol or CRC errors, a carrier change, RoCE out-of-sequence, sequence
or ACK-timeout errors, its link state falling) or an NCCL completion error names the pair. The flows are the
rail-aligned NIC pairs of each job (NCCL's rings and trees run rail to rail), or the NCCL pair itself; a path is
the two NICs' links to their leaves and, between two leaves, their uplinks (ECMP: each of ``k`` uplinks gets
``1/k`` of that hop's vote, as 007 without per-flow traceroutes would expect). A blamed link is raised one
epoch (:data:`EPOCH_S`) after the first loss among the flows it explains.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from unifab.health.detect_events import _module_findings, _Nics
from unifab.health.events import EventStore
from unifab.health.series import Series, SeriesStore, intervals
from unifab.model import Endpoint, Fabric, Link, Nic, host_id, switch_id
from unifab.parse.host.xid import normalize_pci

__all__ = ["EPOCH_S", "VOTE_THRESHOLD", "Prediction", "per_port_alerts", "vote_007"]

EPOCH_S = 30.0  # 007 runs its vote every epoch
VOTE_THRESHOLD = 1.0  # a link needs this many votes (e.g. two 2-hop flows) to be blamed
MAX_PEERS = 64  # flows per NIC with loss: its rail peers in its jobs, at most this many

ERROR_RULE: tuple[str, ...] = (
    "fec_uncorrectable",
    "symbol_errors",
    "crc_errors",
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
)
RULE_WINDOW_S = 300.0
GAUGE_FOR_S = 60.0
ABSENT_FOR_S = 300.0
LOSS_COUNTERS = frozenset({"symbol_errors", "crc_errors", "carrier_changes", "link_down", *ERROR_RULE})


@dataclass(frozen=True, slots=True)
class Prediction:
    """A root cause a method names, when it would have named it, and the rule or vote behind it."""

    root: str
    time: float
    why: str


def _first(found: dict[str, Prediction], root: str, time: float, why: str) -> None:
    if root not in found or time < found[root].time:
        found[root] = Prediction(root, time, why)


def _counter_alert(s: Series) -> tuple[float, str] | None:
    spans = intervals(s)
    if s.counter in ERROR_RULE:
        hit = next((i for i in spans if i.delta), None)
        return None if hit is None else (hit.end, f"increase({s.metric}[5m]) > 0")
    if s.counter in ("carrier_changes", "link_down"):
        per = 2.0 if s.counter == "carrier_changes" else 1.0
        window: list[tuple[float, float]] = []
        for i in spans:
            if i.delta:
                window.append((i.end, i.delta / per))
                window = [(t, n) for t, n in window if i.end - t < RULE_WINDOW_S]
                if sum(n for _, n in window) > 1:
                    return i.end, f"more than one flap in 5m ({s.metric})"
        return None
    if s.counter == "pause_tx_us":
        hit = next((i for i in spans if (i.rate or 0.0) > 0.5e6), None)
        return None if hit is None else (hit.end, f"rate({s.metric}) > 0.5 s/s")
    return None


def _gauge_alert(s: Series) -> float | None:
    down: float | None = None
    for t, v in zip(s.times, s.values, strict=True):
        if v == 0 and down is None:
            down = t
        elif v != 0:
            down = None
        if down is not None and t - down >= GAUGE_FOR_S:
            return t
    return None


def per_port_alerts(fabric: Fabric, store: SeriesStore, events: EventStore | None = None) -> list[Prediction]:
    """The first alert of every entity under the per-port rule set (see the module), ordered by time."""
    found: dict[str, Prediction] = {}
    last_seen: dict[str, tuple[str, float, float]] = {}  # device -> (entity kind, last sample, step)
    everyone = 0.0
    for s in store.series.values():
        if not s.times:
            continue
        kind = "switch" if s.entity.startswith("port:") else "host"
        seen = last_seen.get(s.endpoint.node)
        last_seen[s.endpoint.node] = (kind, max(s.times[-1], seen[1] if seen else 0.0), s.step())
        everyone = max(everyone, s.times[-1])
        if s.spec.gauge:
            if s.counter == "oper_up" and (t := _gauge_alert(s)) is not None:
                _first(found, s.entity, t, f"{s.metric} == 0 for 1m")
            continue
        alert = _counter_alert(s)
        if alert is not None:
            _first(found, s.entity, *alert)
    for node, (kind, last, step) in last_seen.items():
        if everyone - last >= ABSENT_FOR_S:
            root = switch_id(node) if kind == "switch" else host_id(node)
            _first(found, root, last + step + ABSENT_FOR_S, "up == 0 for 5m")
    if events is not None:
        for x in events.xids:
            host = fabric.hosts.get(x.host)
            gpu = (
                next(
                    (
                        g
                        for g in host.gpus.values()
                        if g.pci_bus_id and normalize_pci(f"PCI:{g.pci_bus_id}") == x.event.pci_bus_id
                    ),
                    None,
                )
                if host
                else None
            )
            root = gpu.id if gpu is not None else f"gpu:{x.host}:{x.event.pci_bus_id}"
            _first(found, root, x.time or everyone, f"DCGM_FI_DEV_XID_ERRORS > 0 (Xid {x.event.xid})")
        nics = _Nics(fabric)
        for r in events.nccl:
            local = nics.local(r)
            if local is not None:
                _first(found, local.id, r.time or everyone, "NCCL error in the job's log")
        for m in events.modules:
            if any(level == 2 for level, _ in _module_findings(m)):
                _first(found, f"optic:{m.host}:{m.netdev}", everyone, "transceiver DOM alarm")
    return sorted(found.values(), key=lambda p: (p.time, p.root))


# ----------------------------------------------------------------------------------------------------- 007


class _Paths:
    """Each NIC's link to its leaf, and each leaf's uplinks: the hops of a flow between two NICs."""

    def __init__(self, fabric: Fabric) -> None:
        self.link_of: dict[Endpoint, Link] = {}
        self.uplinks: dict[str, list[str]] = defaultdict(list)
        for link in fabric.links:
            self.link_of.setdefault(link.a, link)
            self.link_of.setdefault(link.b, link)
            if link.a.node in fabric.switches and link.b.node in fabric.switches:
                self.uplinks[link.a.node].append(link.id)
                self.uplinks[link.b.node].append(link.id)

    def leaf(self, nic: Nic) -> tuple[Link, str] | None:
        link = self.link_of.get(nic.endpoint)
        if link is None:
            return None
        far = link.b if link.a == nic.endpoint else link.a
        return link, far.node

    def hops(self, a: Nic, b: Nic) -> list[tuple[str, float]]:
        """(link id, share of the vote) for every link the flow may cross; the shares add up to 1."""
        la, lb = self.leaf(a), self.leaf(b)
        if la is None or lb is None:
            return []
        groups: list[list[str]] = [[la[0].id]]
        if la[1] != lb[1]:
            groups += [g for g in (self.uplinks.get(la[1], []), self.uplinks.get(lb[1], [])) if g]
        groups.append([lb[0].id])
        h = len(groups)
        return [(link, 1.0 / h / len(g)) for g in groups for link in g]


def _loss_times(fabric: Fabric, store: SeriesStore) -> dict[str, float]:
    """NIC id -> the first time a host-side loss counter rose (or its link state fell)."""
    nic_ids = {n.id for h in fabric.hosts.values() for n in h.nics.values()}
    first: dict[str, float] = {}
    for s in store.series.values():
        if s.entity not in nic_ids:
            continue
        when: float | None = None
        if s.counter in LOSS_COUNTERS:
            when = next((i.end for i in intervals(s) if i.delta), None)
        elif s.counter == "oper_up":
            when = next((t for t, v in zip(s.times, s.values, strict=True) if v == 0), None)
        if when is not None and (s.entity not in first or when < first[s.entity]):
            first[s.entity] = when
    return first


def _peers(fabric: Fabric) -> dict[str, list[Nic]]:
    """NIC id -> the NICs it exchanges traffic with: the same rail (netdev) on the other hosts of its jobs."""
    by_host_rail = {(n.host, n.netdev): n for h in fabric.hosts.values() for n in h.nics.values()}
    out: dict[str, list[Nic]] = defaultdict(list)
    for job in sorted(fabric.jobs.values(), key=lambda j: j.id):
        hosts = [h for h in job.hosts if h in fabric.hosts]
        for h in hosts:
            for nic in fabric.hosts[h].nics.values():
                mine = out[nic.id]
                for other in hosts:
                    peer = by_host_rail.get((other, nic.netdev))
                    if other != h and peer is not None and len(mine) < MAX_PEERS and peer not in mine:
                        mine.append(peer)
    return out


def vote_007(fabric: Fabric, store: SeriesStore, events: EventStore | None = None) -> list[Prediction]:
    """The links 007 blames (see the module), ordered by time."""
    paths = _Paths(fabric)
    nics = {n.id: n for h in fabric.hosts.values() for n in h.nics.values()}
    flows: dict[tuple[str, str], float] = {}  # failing flow (sorted NIC pair) -> first loss time

    def fail(a: Nic, b: Nic, when: float) -> None:
        key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
        flows[key] = min(when, flows.get(key, when))

    peers = _peers(fabric)
    for nic_id, when in _loss_times(fabric, store).items():
        nic = nics[nic_id]
        for peer in peers.get(nic_id, []):
            fail(nic, peer, when)
    if events is not None:
        lookup = _Nics(fabric)
        span = store.span()
        for r in events.nccl:
            local, remote = lookup.local(r), lookup.remote(r)
            if local is not None and remote is not None and local.id != remote.id:
                fail(local, remote, r.time if r.time is not None else (span[0] if span else 0.0))
    hops = {f: paths.hops(nics[f[0]], nics[f[1]]) for f in flows}
    return _greedy(flows, hops)


def _greedy(
    flows: dict[tuple[str, str], float], hops: Mapping[tuple[str, str], Sequence[tuple[str, float]]]
) -> list[Prediction]:
    remaining = {f for f in flows if hops[f]}
    out: list[Prediction] = []
    while remaining:
        votes: dict[str, float] = defaultdict(float)
        for f in remaining:
            for link, share in hops[f]:
                votes[link] += share
        link, best = max(votes.items(), key=lambda kv: (kv[1], kv[0]))
        if best < VOTE_THRESHOLD:
            break
        explained = {f for f in remaining if any(lk == link for lk, _ in hops[f])}
        first = min(flows[f] for f in explained)
        out.append(Prediction(link, first + EPOCH_S, f"007: {best:.1f} votes from {len(explained)} failing flows"))
        remaining -= explained
    return sorted(out, key=lambda p: (p.time, p.root))
