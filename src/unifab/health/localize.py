"""From symptoms to incidents: one root cause each, joined through the Fabric's links.

The rules, most encompassing first (each symptom is explained by one incident):

0. a device that is down (its series stop, or every one of its links went down at once) → that **host**,
   **switch** or **NIC**, with the link-down symptoms its far ends see; a lone end whose link went down and stayed
   down → the **link**;
1. every NIC of a host shows a symptom → the **host** (power, PCIe, a firmware hang: not eight cables at once);
2. every linked port of a switch shows a link symptom (at the switch or at its peer) → the **switch**;
3. a link symptom (flap, uncorrected errors) on both ends of one link → the **link** (the cable or its optics);
4. on one end only → that end: uncorrected errors → its **optic** (``optic:<node>:<port>``), flaps → its port or NIC;
5. drops in a switch port's lossless queue or priority group → that **port**, the hop that dropped, with the
   lossless drops (out-of-sequence) of the NIC it feeds; other lossless drops on a NIC → the **NIC** (each with the
   configuration findings on its link, which can explain them);
6. a PFC storm → the end that sends the pauses (its receive path is stuck); switch ports that send pause because
   the storm below them fills their switch's buffers (pauses spreading upstream) join that end's incident; a switch
   queue's PFC watchdog storms are the storm of the port's peer (the end pausing it) and count as that end's;
7. PFC pause without ECN marks or CNPs → the **NIC** (with the configuration findings on its path);
8. a GPU Xid the catalog treats as a fault → the **GPU**, with the vendor's action;
9. NCCL completion errors blamed on one NIC's link → the incident already on that link or its ends, else the
   **link**; errors between pairs across leaves whose only common element is one leaf (one of its ECMP uplinks) →
   the incident already on one of that leaf's uplinks (its counters say which), else that leaf (**switch**); several
   such leaves at once, with no leaf in common → the **spine** every failing pair's paths share (ECMP candidate
   sets, :mod:`unifab.health.localize_paths`), or the incident already on one of those spines; when the leaves share
   more than one spine, nothing tells which: one incident per leaf, each saying so;
10. a job process NCCL RAS keeps naming (missing, or dead) → the incident on its GPU, its host or a NIC of its
   host; with none, its **GPU**, at low confidence: the process itself is the first suspect, not the network.

A DOM alarm or warning (HEALTH-OPTICS) counts as an error symptom of its end in rules 3 and 4: with uncorrected
errors at the same end it makes the optic the root cause with more confidence.

Then impact (the jobs whose hosts the root cause touches, or for a switch-side NCCL cause the jobs with a rank pair
whose paths may cross it, and their GPU-hours at risk per hour: a stalled job
wastes every GPU it holds) and the actions an operator runs: drain the hosts, shut a flapping link in the switch's
own CLI, replace an optic.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial

from unifab.errors import UsageError
from unifab.health.detect import (
    ECN_ABSENT,
    FEC,
    GPU_XID,
    LINK_FLAP,
    LOSSLESS_DROPS,
    NCCL_ERROR,
    NODE_DOWN,
    OPTICS,
    PFC_STORM,
    SWITCH_DOWN,
    Symptom,
)
from unifab.health.localize_paths import Paths
from unifab.model import Endpoint, Fabric, Finding, Link, host_id, nic_id, port_id, switch_id
from unifab.platforms import platform, safe_name
from unifab.render.host_script import host_name
from unifab.render.scheduler import drain_argvs
from unifab.render.switch_cli import finish

__all__ = ["K8S_JOB", "Action", "Incident", "iso", "localize"]

K8S_JOB = "job:k8s:"  # model.Job ids: job:slurm:<id> | job:k8s:<namespace>/<name>

LINK_DETECTORS = frozenset({LINK_FLAP, FEC, OPTICS})
DOWN = frozenset({NODE_DOWN, SWITCH_DOWN})
_NAMES = {
    LINK_FLAP: "flaps",
    FEC: "uncorrected errors",
    OPTICS: "DOM beyond its levels",
    LOSSLESS_DROPS: "lossless drops",
    PFC_STORM: "PFC storm",
    ECN_ABSENT: "pause without ECN",
    GPU_XID: "GPU Xid",
    NODE_DOWN: "down",
    SWITCH_DOWN: "down",
    NCCL_ERROR: "NCCL completion errors",
}
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Action:
    kind: str  # "drain" | "shutdown" | "replace"
    device: str
    commands: tuple[str, ...]
    why: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "device": self.device, "commands": list(self.commands), "why": self.why}


@dataclass(frozen=True, slots=True)
class Incident:
    """One root cause, what it explains, whom it hurts and what to do."""

    kind: str  # host | switch | link | optic | port | nic
    root: str  # the root cause's entity id
    confidence: float
    symptoms: tuple[Symptom, ...]
    summary: str
    not_explained: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    hosts: tuple[str, ...] = ()
    jobs: tuple[str, ...] = ()
    gpus_at_risk: int = 0  # GPU-hours at risk per hour
    actions: tuple[Action, ...] = ()

    @property
    def start(self) -> float:
        return min(s.start for s in self.symptoms)

    def as_dict(self) -> dict[str, object]:
        return {
            "root_cause": {"kind": self.kind, "id": self.root},
            "confidence": self.confidence,
            "start": iso(self.start),
            "summary": self.summary,
            "symptoms": [{**s.as_dict(), "start": iso(s.start), "end": iso(s.end)} for s in self.symptoms],
            "not_explained": list(self.not_explained),
            "findings": [
                {"check": f.check, "severity": f.severity.value, "message": f.message, "entities": list(f.entities)}
                for f in self.findings
            ],
            "hosts": list(self.hosts),
            "jobs": list(self.jobs),
            "gpu_hours_at_risk_per_hour": self.gpus_at_risk,
            "actions": [a.as_dict() for a in self.actions],
        }


@dataclass(slots=True)
class _Draft:
    kind: str
    root: str
    confidence: float
    symptoms: list[Symptom]
    summary: str
    hosts: set[str]
    not_explained: tuple[str, ...] = ()
    shut: Endpoint | None = None  # the switch end of a link to shut
    replace: Endpoint | None = None  # the end whose optic to replace
    advice: tuple[str, ...] = ()  # what to check or do, written as comments (printable text only)
    jobs: set[str] = field(default_factory=set)  # jobs hurt beyond those on ``hosts`` (paths that may cross it)


class _Topology:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.link_of: dict[Endpoint, Link] = {}
        for link in fabric.links:
            self.link_of.setdefault(link.a, link)
            self.link_of.setdefault(link.b, link)

    def peer(self, end: Endpoint) -> Endpoint | None:
        link = self.link_of.get(end)
        if link is None:
            return None
        return link.b if link.a == end else link.a

    def host_of(self, end: Endpoint) -> str | None:
        return end.node if end.node in self.fabric.hosts else None

    def link_hosts(self, ends: Iterable[Endpoint]) -> set[str]:
        out: set[str] = set()
        for end in ends:
            for e in (end, self.peer(end)):
                if e is not None and (h := self.host_of(e)) is not None:
                    out.add(h)
        return out


def _what(symptoms: Sequence[Symptom]) -> str:
    return ", ".join(sorted({_BER_NAME if _warns(s) else _NAMES[s.detector] for s in symptoms}))


_BER_NAME = "a pre-FEC BER at the warning level"


def _warns(s: Symptom) -> bool:
    """A pre-FEC BER warning (HEALTH-FEC before any uncorrected error), not an error."""
    return s.detector == FEC and s.counter == "pre_fec_ber"


def localize(fabric: Fabric, symptoms: Iterable[Symptom], findings: Iterable[Finding] = ()) -> list[Incident]:
    """The incidents that explain ``symptoms`` (rules in the module docstring), ordered by start, then root cause."""
    topo = _Topology(fabric)
    by_end: dict[Endpoint, list[Symptom]] = {}
    ras: list[Symptom] = []  # processes NCCL RAS names: joined to the incidents of their hosts at the end (rule 10)
    for s in map(partial(_to_sender, topo), symptoms):
        if s.detector == NCCL_ERROR and s.counter.startswith("ras_"):
            ras.append(s)
        else:
            by_end.setdefault(s.endpoint, []).append(s)
    drafts: list[_Draft] = []

    def take(ends: Iterable[Endpoint], detectors: frozenset[str] | None = None) -> list[Symptom]:
        out: list[Symptom] = []
        for end in ends:
            keep: list[Symptom] = []
            for s in by_end.get(end, []):
                (out if detectors is None or s.detector in detectors else keep).append(s)
            if keep:
                by_end[end] = keep
            else:
                by_end.pop(end, None)
        return out

    drafts.extend(_down(fabric, topo, by_end, take))

    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        ends = [n.endpoint for n in host.nics.values()]
        if len(ends) >= 2 and all(e in by_end for e in ends):
            peers = [p for e in ends if (p := topo.peer(e)) is not None]
            got = take(ends) + take(peers, LINK_DETECTORS)
            summary = f"every NIC of {host.name} shows {_what(got)}: the host, not its {len(ends)} cables"
            drafts.append(_Draft("host", host_id(host.name), 0.9, got, summary, {host.name}))

    def linked(end: Endpoint) -> bool:
        peer = topo.peer(end)
        return any(s.detector in LINK_DETECTORS for e in (end, peer) if e is not None for s in by_end.get(e, []))

    for switch in sorted(fabric.switches.values(), key=lambda s: s.name):
        ends = [p.endpoint for p in switch.ports.values() if p.endpoint in topo.link_of]
        if len(ends) >= 2 and all(linked(e) for e in ends):
            peers = [p for e in ends if (p := topo.peer(e)) is not None]
            got = take(ends, LINK_DETECTORS) + take(peers, LINK_DETECTORS)
            summary = f"all {len(ends)} linked ports of {switch.name} show {_what(got)}: the switch"
            drafts.append(_Draft("switch", switch_id(switch.name), 0.9, got, summary, topo.link_hosts(ends)))

    for end in sorted(by_end):
        if end not in by_end:
            continue
        here = [s for s in by_end[end] if s.detector in LINK_DETECTORS]
        if not here:
            continue
        link, peer = topo.link_of.get(end), topo.peer(end)
        there = [s for s in by_end.get(peer, []) if s.detector in LINK_DETECTORS] if peer is not None else []
        hosts = topo.link_hosts([end])
        switch_end = next((e for e in (end, peer) if e is not None and e.node in fabric.switches), None)
        flapping = any(s.detector == LINK_FLAP for s in here + there)
        if link is not None and peer is not None and there:
            got = take([end, peer], LINK_DETECTORS)
            summary = f"both ends of {link.id.removeprefix('link:')} show {_what(got)}: the cable or its optics"
            drafts.append(_Draft("link", link.id, 0.9, got, summary, hosts, shut=switch_end if flapping else None))
            continue
        got = take([end], LINK_DETECTORS)
        entity = got[0].entity
        far = f"the far end {peer} shows nothing" if peer is not None else "the far end is not known (no link)"
        if any(s.detector in (FEC, OPTICS) for s in got):
            root = f"optic:{end.node}:{end.port}"
            dom = [s for s in got if s.detector == OPTICS]
            errors = any(s.detector == FEC and not _warns(s) for s in got)
            ber = [s for s in got if _warns(s)]
            confidence = (
                0.9 if dom and errors else 0.75 if errors else (0.8 if dom[0].peak >= 2 else 0.6) if dom else 0.5
            )
            if ber and not errors and not dom:
                summary = (
                    f"{end} receives {_BER_NAME} ({ber[0].notes[0]}), no uncorrected error yet: its optic (or a "
                    "dirty connector at this end) is degrading; replace it in the next window"
                )
            elif dom:
                summary = f"{end}'s module reports {dom[0].notes[0]}" + (
                    ", and the end receives uncorrected errors: its optic" if errors else ": its optic"
                )
            else:
                summary = f"{end} alone receives uncorrected errors: its optic (or a dirty connector at this end)"
            drafts.append(
                _Draft(
                    "optic",
                    root,
                    confidence,
                    got,
                    summary,
                    hosts,
                    (f"{far}; the far end's transmitter can also be the cause",),
                    replace=end,
                )
            )
        else:
            kind = entity.split(":", 1)[0]
            summary = f"{end} alone flaps: that {kind} (or its transceiver)"
            shut = switch_end if switch_end is not None else None
            drafts.append(_Draft(kind, entity, 0.6, got, summary, hosts, (far,), shut=shut))

    # the hops that dropped first (their buffers overflowed under PFC): the NIC a dropping port feeds counts the
    # gaps as out-of-sequence packets, a consequence and not a second fault
    for end in sorted(by_end, key=lambda e: e.node not in fabric.switches):
        got = take([end], frozenset({LOSSLESS_DROPS}))
        if got and end.node in fabric.switches:
            counters = ", ".join(s.counter for s in got)
            summary = (
                f"{end} drops packets of a lossless class ({counters}): buffer discards where PFC should have"
                " paused the sender (PFC off at the sending end of this hop, or headroom too small for the cable)"
            )
            peer = topo.peer(end)
            fed = take([peer], frozenset({LOSSLESS_DROPS})) if peer is not None and fabric.nic_at(peer) else []
            if fed:
                got += fed
                summary += f"; {fed[0].entity}, which it feeds, sees the gaps ({', '.join(s.counter for s in fed)})"
            drafts.append(_Draft("port", got[0].entity, 0.6, got, summary, topo.link_hosts([end])))
        elif got:
            owner = topo.host_of(end)
            summary = f"{got[0].entity} loses RoCE packets on the lossless class ({', '.join(s.counter for s in got)})"
            drafts.append(_Draft("nic", got[0].entity, 0.6, got, summary, {owner} if owner else set()))
    victims = _pause_victims(topo, by_end)
    for end in sorted(by_end):
        if end in victims:
            continue
        got = take([end], frozenset({PFC_STORM}))
        if got:
            entity = got[0].entity
            behind = sorted(v for v, root in victims.items() if root == end)
            if got[0].counter == "xmit_wait":  # InfiniBand: credit starvation, no PFC
                why = got[0].notes[0] if got[0].notes else "its feeder waited for credits"
                summary = f"{end} drains too slowly: its InfiniBand feeder waits for credits ({why})"
            else:
                summary = f"{end} sends PFC pause most of the time: its receive path is stuck and stalls its peer"
                if behind:
                    got += take(behind, frozenset({PFC_STORM}))
                    summary += f"; the pause spread upstream to {', '.join(map(str, behind))}"
            drafts.append(_Draft(entity.split(":", 1)[0], entity, 0.7, got, summary, topo.link_hosts([end])))

    for end in sorted(by_end):
        got = take([end], frozenset({ECN_ABSENT}))
        if got:
            owner = topo.host_of(end)
            summary = (
                f"{got[0].entity} is paused by PFC again and again with no ECN mark or CNP: congestion control is "
                "not working (ECN off on the switch queue, or DCQCN off on the NICs)"
            )
            drafts.append(_Draft("nic", got[0].entity, 0.6, got, summary, {owner} if owner else set()))
    for end in sorted(by_end):
        for s in take([end], frozenset({GPU_XID})):
            summary = f"{s.entity} logged {s.counter.replace('xid', 'Xid')}: {s.notes[0]}"
            drafts.append(_Draft("gpu", s.entity, 0.9, [s], summary, {end.node}, advice=s.notes))
    paths = Paths(fabric)
    shared: list[Symptom] = []  # leaf-shared NCCL symptoms no incident explains yet
    for end in sorted(by_end):
        for s in take([end], frozenset({NCCL_ERROR})):
            if not _nccl(s, topo, drafts, paths):
                shared.append(s)
    drafts.extend(_ecmp(shared, paths, drafts))
    drafts.extend(_ras(ras, drafts))

    known = list(findings)
    incidents = [_finish(d, topo, known) for d in drafts]
    return sorted(incidents, key=lambda i: (i.start, i.root))


def _to_sender(topo: _Topology, s: Symptom) -> Symptom:
    """A switch queue's PFC watchdog storms (``pfcwd_storms``) are the storm of the port's peer, the end that
    kept pausing it: the symptom moves there (with its note naming the watchdog's port and queue), so rule 6
    judges that end as it judges one seen sending pause itself. Without a known peer it stays on the port."""
    if s.detector != PFC_STORM or not s.counter.startswith("pfcwd_storms"):
        return s
    peer = topo.peer(s.endpoint)
    if peer is None:
        return s
    nic = topo.fabric.nic_at(peer)
    if nic is not None:
        entity = nic_id(peer.node, nic.rdma_dev or nic.netdev)
    elif peer.node in topo.fabric.switches:
        entity = port_id(peer.node, peer.port)
    else:
        return s
    return replace(s, entity=entity, endpoint=peer)


def _pause_victims(topo: _Topology, by_end: dict[Endpoint, list[Symptom]]) -> dict[Endpoint, Endpoint]:
    """Rule 6's upstream spread (Ethernet): each switch port sending pause because its switch cannot drain ->
    the end at the bottom of the spread, the stuck receiver.

    A switch port sends pause when its ingress buffer fills, which it does when one of the switch's egress ports
    is paused: by its far end, which then sends pause too. So a switch port's storm is explained by a storm, at the
    same time, at the far end of another port of its switch (a NIC's first: it forwards nothing, its storm is its
    own); followed down from there to an end no such storm explains. InfiniBand's symptoms are already on the
    receiver (:mod:`unifab.health.detect_ib`) and stay out of it.
    """
    fabric = topo.fabric
    storms = {
        end: [s for s in got if s.detector == PFC_STORM and s.counter != "xmit_wait"] for end, got in by_end.items()
    }
    storms = {end: got for end, got in storms.items() if got}
    facing: dict[str, list[Endpoint]] = {}  # switch -> ends sending pause into one of its ports
    for end in storms:
        peer = topo.peer(end)
        if peer is not None and peer.node in fabric.switches:
            facing.setdefault(peer.node, []).append(end)

    def overlap(a: Endpoint, b: Endpoint) -> bool:
        return any(x.start <= y.end and y.start <= x.end for x in storms[a] for y in storms[b])

    def below(end: Endpoint) -> Endpoint | None:
        if end.node not in fabric.switches:
            return None
        back = topo.peer(end)
        found = [f for f in facing.get(end.node, []) if f != back and overlap(end, f)]
        return min(found, key=lambda f: (f.node in fabric.switches, f)) if found else None

    out: dict[Endpoint, Endpoint] = {}
    for end in sorted(storms):
        seen, here = {end}, end
        while (nxt := below(here)) is not None and nxt not in seen:
            seen.add(nxt)
            here = nxt
        if here != end and below(here) is None:  # a ring of switches pausing each other has no bottom: no victim
            out[end] = here
    return out


_Take = Callable[[Iterable[Endpoint], frozenset[str] | None], list[Symptom]]


def _down(fabric: Fabric, topo: _Topology, by_end: dict[Endpoint, list[Symptom]], take: _Take) -> list[_Draft]:
    """Rule 0: dead devices (silent, or every link down at once), then dead NICs, then links down at one end."""
    drafts: list[_Draft] = []

    def down_at(end: Endpoint) -> bool:
        return any(s.detector in DOWN for s in by_end.get(end, []))

    def far_ends(ends: Iterable[Endpoint]) -> list[Endpoint]:
        return [p for e in ends if (p := topo.peer(e)) is not None]

    def end_down(end: Endpoint) -> bool:
        return down_at(end) or any(down_at(p) for p in far_ends([end]))

    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        ends = [n.endpoint for n in host.nics.values()]
        silent = down_at(Endpoint(host.name, ""))
        if not silent and not (len(ends) >= 2 and all(map(end_down, ends))):
            continue
        got = take([Endpoint(host.name, ""), *ends], None) + take(far_ends(ends), DOWN | LINK_DETECTORS)
        why = "its series stop while the rest reports" if silent else f"all {len(ends)} of its links went down"
        advice = ("check the host through its BMC (power, kernel panic, hung PCIe) and power-cycle it",)
        summary = f"{host.name} is down: {why}"
        drafts.append(_Draft("host", host_id(host.name), 0.9, got, summary, {host.name}, advice=advice))
    for switch in sorted(fabric.switches.values(), key=lambda s: s.name):
        ends = [p.endpoint for p in switch.ports.values() if p.endpoint in topo.link_of]
        silent = down_at(Endpoint(switch.name, ""))
        if not silent and not (len(ends) >= 2 and all(map(end_down, ends))):
            continue
        got = take([Endpoint(switch.name, ""), *ends], DOWN | LINK_DETECTORS) + take(far_ends(ends), DOWN)
        why = "its series stop while the rest reports" if silent else f"all {len(ends)} linked ports went down"
        summary = f"{switch.name} is down: {why}; {len(ends)} links lost"
        advice = ("check the switch's power supplies and console; its hosts' links through it are lost until then",)
        hosts = topo.link_hosts(ends)
        drafts.append(_Draft("switch", switch_id(switch.name), 0.9, got, summary, hosts, advice=advice))
    for end in sorted(by_end):
        if end not in by_end or not down_at(end) or fabric.nic_at(end) is None:
            continue
        got = take([end], DOWN | LINK_DETECTORS) + take(far_ends([end]), DOWN | LINK_DETECTORS)
        nic = fabric.nic_at(end)
        assert nic is not None
        summary = f"{nic.id} is down (its link, and its series or link state) while {end.node} still reports"
        drafts.append(_Draft("nic", nic.id, 0.8, got, summary, {end.node}))
    for end in sorted(by_end):
        if end not in by_end or not down_at(end):
            continue
        link = topo.link_of.get(end)
        got = take([end], DOWN)
        if link is None:
            drafts.append(_Draft(got[0].entity.split(":", 1)[0], got[0].entity, 0.5, got, f"{end} is down", set()))
            continue
        summary = f"{link.id.removeprefix('link:')} went down and stayed down: the cable, or the far end's module"
        drafts.append(
            _Draft("link", link.id, 0.6, got, summary, topo.link_hosts([end]), ("the far end reports nothing",))
        )
    return drafts


def _ras(symptoms: list[Symptom], drafts: list[_Draft]) -> list[_Draft]:
    """Rule 10: a process NCCL RAS names joins the incident on its GPU, else on its host or a NIC of its host (a
    dead host, a GPU off the bus, a dead NIC stop the process); with none, its GPU is the incident, the process
    first suspect: nothing the fabric or the device reported explains it."""
    new: dict[str, _Draft] = {}
    for s in sorted(symptoms, key=lambda x: (x.entity, x.start)):
        host = s.endpoint.node
        target = next((d for d in drafts if d.root == s.entity), None) or next(
            (
                d
                for d in drafts
                if d.root == host_id(host) or (d.kind in ("nic", "gpu") and d.root.startswith(f"{d.kind}:{host}:"))
            ),
            None,
        )
        if target is not None:
            target.symptoms.append(s)
        elif s.entity in new:
            new[s.entity].symptoms.append(s)
        else:
            pid = s.notes[0].split()[1] if s.notes else "?"
            summary = (
                f"{s.notes[0] if s.notes else s.entity}: no fabric or device symptom on {host} explains it, so the"
                " process itself is the first suspect (a hang in the application, its data loader or a CUDA call)"
            )
            advice = (
                f"on {host}: py-spy dump --pid {pid} (a Python rank), or gdb -p {pid} -batch -ex 'thread apply all"
                " bt'; then nvidia-smi -q for the GPU and the kernel log for an Xid",
            )
            new[s.entity] = _Draft("gpu", s.entity, 0.4, [s], summary, {host}, advice=advice)
    return list(new.values())


def _nccl(symptom: Symptom, topo: _Topology, drafts: list[_Draft], paths: Paths) -> bool:
    """Rule 9: NCCL's errors join the incident already on the blamed link or its ends, else make one on the link.

    A leaf-shared symptom (``switch:<leaf>``) joins an incident on one of the leaf's uplinks (or on a spine it
    reaches) when exactly one explains it; False leaves it for :func:`_ecmp`.
    """
    link = topo.link_of.get(symptom.endpoint)
    ends = {link.a, link.b} if link is not None else {symptom.endpoint}
    roots = {symptom.entity} | {f"optic:{e.node}:{e.port}" for e in ends}
    for draft in drafts:
        if draft.root in roots or any(s.endpoint in ends for s in draft.symptoms):
            _join(draft, [symptom])
            return True
    if symptom.entity.startswith("switch:"):  # pairs across leaves sharing only this leaf's uplinks (ECMP)
        leaf = symptom.entity.removeprefix("switch:")
        uplinks = paths.uplink_ends(leaf)
        spines = {f"switch:{s}" for s in paths.spines(leaf)}
        near = [d for d in drafts if d.root in spines or any(s.endpoint in uplinks for s in d.symptoms)]
        if len(near) != 1:
            return False
        [draft] = near
        _join(draft, [symptom])
        crossed = {lk.id: lk for e in uplinks if (lk := topo.link_of.get(e)) is not None}
        for s in draft.symptoms:
            if (lk := topo.link_of.get(s.endpoint)) is not None and lk.id in crossed:
                draft.jobs |= paths.jobs_crossing_link(lk)
        if draft.root in spines:
            draft.jobs |= paths.jobs_crossing_spine(draft.root.removeprefix("switch:"))
        return True
    summary = (
        f"NCCL completion errors ({symptom.counter}) with {symptom.intervals} peers all cross "
        f"{symptom.entity.removeprefix('link:')}, reported from both of its sides: the link or its NIC"
    )
    not_explained = ("no counter of the link shows errors: check its FEC/CRC counters and reseat the cable",)
    hosts = topo.link_hosts([symptom.endpoint])
    drafts.append(_Draft("link", symptom.entity, 0.7, [symptom], summary, hosts, not_explained))
    return True


def _join(draft: _Draft, symptoms: Sequence[Symptom]) -> None:
    draft.symptoms.extend(symptoms)
    draft.confidence = min(0.95, draft.confidence + 0.05)


def _ecmp(shared: Sequence[Symptom], paths: Paths, drafts: Sequence[_Draft]) -> list[_Draft]:
    """Leaf-shared NCCL symptoms at the same time: one spine when several leaves share exactly one, else per leaf.

    Each leaf symptom's failing pairs may cross any spine the leaf reaches (its ECMP candidates); errors on leaves
    that have no leaf in common, at once, are one fault where their candidates meet: the spines all of them reach.
    One spine → that spine (less sure than a leaf: its links to those leaves are as likely); a spine that already
    has an incident (down, or every port erroring) among them → that incident; more than one → no way to tell,
    one incident per leaf that names the spines.
    """
    out: list[_Draft] = []
    groups: list[list[Symptom]] = []
    for s in sorted(shared, key=lambda x: (x.start, x.entity)):
        if groups and s.start <= max(g.end for g in groups[-1]):
            groups[-1].append(s)
        else:
            groups.append([s])
    for group in groups:
        leaves = sorted({s.entity.removeprefix("switch:") for s in group})
        spines = sorted(paths.common_spines(leaves)) if len(leaves) >= 2 else []
        known = [d for d in drafts if d.root in {f"switch:{x}" for x in spines}]
        if len(leaves) >= 2 and len(known) == 1:
            _join(known[0], group)
            known[0].jobs |= paths.jobs_crossing_spine(known[0].root.removeprefix("switch:"))
            continue
        if len(spines) == 1:
            [spine] = spines
            pairs = sum(s.intervals for s in group)
            summary = (
                f"NCCL completion errors on {pairs} NIC pairs under {len(leaves)} leaves ({', '.join(leaves)}) "
                f"with no leaf in common: every failing pair's equal-cost paths cross {spine}, the one spine "
                "those leaves all reach"
            )
            not_explained = (
                f"ECMP hides each flow's path: a link between {spine} and one of these leaves explains part of the "
                "errors as well, and no counter of the spine shows errors",
            )
            advice = (f"compare {spine}'s port error and drop counters; shut it from ECMP if they confirm",)
            draft = _Draft("switch", f"switch:{spine}", 0.5, list(group), summary, set(), not_explained, advice=advice)
            draft.jobs = paths.jobs_crossing_spine(spine)
            out.append(draft)
            continue
        also = (
            (
                f"leaves {', '.join(leaves)} show such errors at the same time with no leaf in common: one of the "
                f"spines they all reach ({', '.join(spines)}) explains them as one fault, ECMP hides which",
            )
            if len(spines) > 1
            else ()
        )
        for leaf in leaves:
            mine = [s for s in group if s.entity == f"switch:{leaf}"]
            summary = f"NCCL completion errors ({mine[0].counter}): {mine[0].notes[0]}"
            why = (
                "NCCL cannot tell which uplink ECMP chose: compare the uplinks' FEC/CRC counters and shut the bad one",
            )
            advice = (
                f"compare the error and drop counters of {leaf}'s uplinks (both ends) and shut the one that differs "
                "so ECMP takes the others; if none differs, suspect the leaf's own forwarding",
            )
            draft = _Draft("switch", mine[0].entity, 0.6, mine, summary, set(), (*why, *also), advice=advice)
            draft.jobs = paths.jobs_crossing_leaf(leaf)
            out.append(draft)
    return out


def _touched(draft: _Draft, topo: _Topology) -> set[str]:
    """Entity ids a configuration finding must name to count as on the same entities."""
    out = {draft.root}
    for s in draft.symptoms:
        out.add(s.entity)
        link = topo.link_of.get(s.endpoint)
        if link is not None:
            out.add(link.id)
            peer = topo.peer(s.endpoint)
            if peer is not None and (port := topo.fabric.port_at(peer)) is not None:
                out.add(port.id)
    return out


def _finish(draft: _Draft, topo: _Topology, findings: Sequence[Finding]) -> Incident:
    fabric = topo.fabric
    touched = _touched(draft, topo)
    related = tuple(f for f in findings if touched.intersection(f.entities))
    confidence, not_explained = draft.confidence, draft.not_explained
    if draft.kind in ("nic", "port") and any(s.detector in (LOSSLESS_DROPS, ECN_ABSENT) for s in draft.symptoms):
        if related:
            confidence = 0.8
        else:
            not_explained = (
                *not_explained,
                f"no configuration finding on this {'NIC' if draft.kind == 'nic' else 'port'}'s link explains it:"
                " look further along its paths",
            )
    hosts = tuple(sorted(draft.hosts))
    jobs = tuple(sorted({j.id for j in fabric.jobs.values() if draft.hosts.intersection(j.hosts)} | draft.jobs))
    gpus = sum(len(fabric.hosts[h].gpus) for j in jobs for h in fabric.jobs[j].hosts if h in fabric.hosts)
    symptoms = tuple(sorted(draft.symptoms, key=lambda s: (s.start, s.entity, s.detector, s.counter)))
    detectors = ", ".join(sorted({s.detector for s in symptoms}))
    reason = f"unifab: {detectors}, root cause {draft.root}"
    actions: list[Action] = []
    if hosts and not all(map(_warns, draft.symptoms)):  # a warning alone: replace the optic, drain nothing
        actions.append(_drain(hosts, reason, jobs, fabric))
    if draft.shut is not None:
        actions.append(_shutdown(fabric, draft.shut))
    if draft.replace is not None:
        actions.append(_replace(fabric, draft.replace))
    if draft.advice:
        text = tuple(f"# {_UNPRINTABLE.sub('?', a)}" for a in draft.advice)
        actions.append(Action("advice", draft.root, text, "what to check or do on the device itself"))
    return Incident(
        draft.kind,
        draft.root,
        confidence,
        symptoms,
        draft.summary,
        not_explained,
        related,
        hosts,
        jobs,
        gpus,
        tuple(actions),
    )


def _schedulers(fabric: Fabric, hosts: Sequence[str]) -> tuple[list[str], list[str]]:
    """(Slurm hosts, Kubernetes hosts) of ``hosts``: the scheduler of the jobs each runs (both for a host running
    jobs of both); a host running none goes to the fabric's only scheduler when all its jobs are Kubernetes ones,
    else to Slurm."""
    kinds: dict[str, set[str]] = {}
    for job in fabric.jobs.values():
        kind = "k8s" if job.id.startswith(K8S_JOB) else "slurm"
        for h in job.hosts:
            kinds.setdefault(h, set()).add(kind)
    every = set().union(*kinds.values())
    default = {"k8s"} if every == {"k8s"} else {"slurm"}
    slurm = [h for h in hosts if "slurm" in kinds.get(h, default)]
    k8s = [h for h in hosts if "k8s" in kinds.get(h, default)]
    return slurm, k8s


def _drain(hosts: Sequence[str], reason: str, jobs: Sequence[str], fabric: Fabric) -> Action:
    """Keep new jobs off the hosts, in their scheduler's own commands: ``scontrol update ... state=drain`` for
    Slurm hosts (running jobs finish, or are requeued by the operator), ``kubectl cordon`` and ``kubectl drain``
    for Kubernetes nodes (cordon keeps new pods off, drain evicts the running ones so their controllers
    reschedule them elsewhere)."""
    slurm, k8s = _schedulers(fabric, hosts)
    valid: dict[str, list[str]] = {"slurm": [], "kubernetes": []}
    invalid = []
    for scheduler, names in (("slurm", slurm), ("kubernetes", sorted(k8s))):
        for h in names:
            try:
                valid[scheduler].append(host_name(h))
            except UsageError:
                invalid.append(h)
    commands = [
        shlex.join(argv) for scheduler, names in valid.items() for argv in drain_argvs(scheduler, names, reason)
    ]
    bad = dict.fromkeys(invalid)
    commands.extend(f"# {_UNPRINTABLE.sub('?', h)!r} is not a valid node name: drain it by hand" for h in bad)
    why = "keep new jobs off the hosts the root cause touches"
    if jobs:
        why += f"; running jobs on them ({', '.join(jobs)}) are stalled or degraded and should be requeued"
    if k8s:
        why += "; kubectl drain evicts the pods on the Kubernetes nodes, their controllers reschedule them"
    return Action("drain", ",".join(hosts), tuple(commands), why)


_SHUTDOWN: dict[str, Callable[[str], tuple[str, ...]]] = {
    "sonic": lambda p: (f"sudo config interface shutdown {p}",),
    "eos": lambda p: (f"interface {p}", "shutdown"),
    "nvue": lambda p: (f"nv set interface {p} link state down", "nv config apply -y"),
}


def _shutdown(fabric: Fabric, end: Endpoint) -> Action:
    """Shut the switch end of a flapping link: a link that is down is routed around, a flapping one is not."""
    switch = fabric.switches[end.node]
    plat = platform(switch.os, switch.name)
    name = safe_name(plat, end.port)
    make = _SHUTDOWN.get(plat.name)
    if name is None:
        commands: tuple[str, ...] = (f"# {_UNPRINTABLE.sub('?', end.port)!r} is not a {plat.name} port name",)
    elif make is None:
        commands = (f"# shut {name} down in {plat.name}'s own tools",)
    else:
        commands = finish(switch.os, make(name))
    why = "a flapping link stalls every flow hashed onto it; shut it so traffic takes the other paths, then re-seat"
    return Action("shutdown", switch.name, commands, why + " or replace the cable")


def _replace(fabric: Fabric, end: Endpoint) -> Action:
    """Ticket text naming the module: part number and serial from ``ethtool -m`` when the host read it."""
    nic = fabric.nic_at(end)
    optic = nic.transceiver if nic is not None else None
    if optic is not None and (optic.part_number or optic.serial_number):
        ident = f"{optic.vendor or 'unknown vendor'} {optic.part_number or '?'} serial {optic.serial_number or '?'}"
    else:
        ident = "part number and serial unknown (read them with the device's transceiver command)"
    text = _UNPRINTABLE.sub(
        "?", f"Replace the transceiver in {end.node} port {end.port}: {ident}; clean both connectors"
    )
    return Action("replace", end.node, (f"# ticket: {text}",), "an optic with uncorrected errors corrupts every packet")
