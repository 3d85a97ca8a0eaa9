"""Change waves: which devices may be upgraded or reconfigured together without hurting a running job.

``unifab plan-change`` gives a person a plan to review; unifab never executes it. The rules, from the
topology (every cable planned or seen on the wire) and the scheduler's running jobs:

- **Tiers** come from the cables: a switch cabled to a host is a leaf (tier 1), a switch cabled to a leaf and
  not to a host is a spine (tier 2), the next tier up a super-spine (tier 3), and so on. A cable between two
  tiers is an *uplink* of the lower switch. A cable is *working* when LLDP saw it, or when neither of its
  devices shows up in any LLDP data (nothing was collected there, so the plan is taken as it stands). A
  planned cable whose devices report LLDP but not this cable is down.
- **A running job keeps its hosts and its paths.** A wave may not take down a host a running job uses, nor a
  switch one of its hosts is cabled to (its leaf on any rail), nor so many switches above its leaves that a
  pair of its leaves loses every working up-down path between them (for a job across leaves, the spines
  connecting them; across pods, the super-spines too). A spine whose peers keep the job's leaves connected
  may go down without the job noticing. When a wave would cut a job and the job is in ``allow_drain``, its
  hosts are drained before the wave and resumed after it; otherwise the device waits for another wave, and
  a device that no wave can take without cutting the job is blocked, with the job named.
- **Redundancy is never all down at once**, at every tier: the switches one switch uplinks to (a leaf's
  spines, a spine's super-spines), and the leaves of one host's rail when the host is dual-homed on it (two
  ToRs). At least one *working* member of each group stays up in every wave: a leaf whose other uplinks are
  already down keeps its one working uplink, and that switch is blocked (the reason names the leaf).
- **At most ``max_parallel`` devices per wave.**

Waves are filled first-fit in a stable order (the highest tier first, then down to the leaves, then hosts;
by name), so the plan is the same for the same input. The rules are checked again by an independent oracle
in the tests.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from unifab.checks.topology_common import leaf_rail, nic_rail
from unifab.errors import UsageError
from unifab.model import Fabric, Job, Link
from unifab.render.host_script import host_name

__all__ = [
    "PLAN_FORMAT",
    "Blocked",
    "ChangePlan",
    "Group",
    "Topology",
    "Wave",
    "plan_change",
    "select",
    "topology",
]

PLAN_FORMAT = "unifab-change-plan/2"


@dataclass(frozen=True, slots=True)
class Group:
    """Redundant devices that are never all down at once: at least one of ``working`` stays up."""

    why: str  # "the uplinks of leaf-su1-r0", "rail 0 of gpu001 (dual-homed)"
    members: frozenset[str]  # every member, planned or seen
    working: frozenset[str]  # the members whose cable works (a subset of members)


@dataclass(frozen=True, slots=True)
class Topology:
    """What the planner needs of the fabric: who hangs below whom, and the redundancy groups."""

    host_switches: dict[str, frozenset[str]]  # host -> the switches its NICs are cabled to (its leaves)
    redundancy: tuple[Group, ...]
    switches: frozenset[str]
    tier: dict[str, int]  # switch -> 1 (leaf), 2 (spine), 3 (super-spine), ...; unreached switches are absent
    up: dict[str, frozenset[str]]  # switch -> the switches one tier above it, over working cables


@dataclass(frozen=True, slots=True)
class Wave:
    index: int
    devices: tuple[str, ...]
    drain_hosts: tuple[str, ...]  # hosts drained before the wave and resumed after it
    drained_jobs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Blocked:
    device: str
    reason: str


@dataclass(slots=True)
class ChangePlan:
    waves: list[Wave] = field(default_factory=list)
    blocked: list[Blocked] = field(default_factory=list)


def _working(links: Sequence[Link]) -> list[bool]:
    """Per cable: seen by LLDP, or planned between devices no LLDP data mentions (nothing to contradict it)."""
    observed = {end.node for lk in links if "lldp" in lk.sources for end in (lk.a, lk.b)}
    return ["lldp" in lk.sources or not ({lk.a.node, lk.b.node} & observed) for lk in links]


def _tiers(fabric: Fabric, neighbours: dict[str, set[str]]) -> dict[str, int]:
    """Switch -> its distance from the nearest host over the cables (1: leaf)."""
    tier: dict[str, int] = {}
    frontier = sorted({n for h in fabric.hosts for n in neighbours.get(h, ()) if n not in fabric.hosts})
    level = 1
    while frontier:
        for node in frontier:
            tier[node] = level
        nxt = {n for node in frontier for n in neighbours[node] if n not in fabric.hosts and n not in tier}
        frontier = sorted(nxt)
        level += 1
    return tier


def topology(fabric: Fabric) -> Topology:
    """Tiers, host attachments and redundancy groups from every cable, planned or seen."""
    links = list(fabric.links)
    works = _working(links)
    neighbours: dict[str, set[str]] = defaultdict(set)
    for lk in links:
        if lk.a.node != lk.b.node:
            neighbours[lk.a.node].add(lk.b.node)
            neighbours[lk.b.node].add(lk.a.node)
    tier = _tiers(fabric, neighbours)
    host_switches: dict[str, set[str]] = defaultdict(set)
    up_all: dict[str, set[str]] = defaultdict(set)  # switch -> the switches one tier above, planned or seen
    up_ok: dict[str, set[str]] = defaultdict(set)  # the same over working cables
    rail_leaves: dict[tuple[str, int], set[str]] = defaultdict(set)
    rail_ok: dict[tuple[str, int], set[str]] = defaultdict(set)
    for lk, ok in zip(links, works, strict=True):
        a_host, b_host = lk.a.node in fabric.hosts, lk.b.node in fabric.hosts
        if a_host == b_host:
            if a_host:
                continue
            ta, tb = tier.get(lk.a.node), tier.get(lk.b.node)
            if ta is None or tb is None or abs(ta - tb) != 1:
                continue  # a peer link within a tier, or a switch no host reaches
            low, high = (lk.a.node, lk.b.node) if ta < tb else (lk.b.node, lk.a.node)
            up_all[low].add(high)
            if ok:
                up_ok[low].add(high)
            continue
        host_end, leaf_end = (lk.a, lk.b) if a_host else (lk.b, lk.a)
        host_switches[host_end.node].add(leaf_end.node)
        rail = leaf_rail(leaf_end.node)
        if rail is None:
            rail = nic_rail(fabric, host_end)
        if rail is not None:
            rail_leaves[(host_end.node, rail)].add(leaf_end.node)
            if ok:
                rail_ok[(host_end.node, rail)].add(leaf_end.node)
    groups: dict[tuple[frozenset[str], frozenset[str]], str] = {}
    for low in sorted(up_all, key=lambda s: (tier[s], s)):
        if len(up_all[low]) > 1:
            groups.setdefault((frozenset(up_all[low]), frozenset(up_ok[low])), f"the uplinks of {low}")
    for (host, rail), leaves in sorted(rail_leaves.items()):
        if len(leaves) > 1:
            working = frozenset(rail_ok[(host, rail)])
            groups.setdefault((frozenset(leaves), working), f"rail {rail} of {host} (dual-homed)")
    switches = frozenset(n for n in neighbours if n not in fabric.hosts) | frozenset(fabric.switches)
    return Topology(
        {h: frozenset(s) for h, s in host_switches.items()},
        tuple(sorted((Group(why, m, w) for (m, w), why in groups.items()), key=lambda g: (g.why, sorted(g.members)))),
        switches,
        tier,
        {s: frozenset(above) for s, above in up_ok.items()},
    )


def select(fabric: Fabric, selectors: Sequence[str]) -> list[str]:
    """Device names matching any selector: a glob over host and switch names, optionally ``host:`` or ``switch:``."""
    names: list[str] = []
    for raw in selectors:
        for pattern in (p.strip() for p in raw.split(",")):
            if not pattern:
                continue
            kind, _, glob = pattern.rpartition(":")
            pools: dict[str, list[str]] = {
                "host": list(fabric.hosts),
                "switch": list(fabric.switches),
                "": [*fabric.switches, *fabric.hosts],
            }
            if kind not in pools:
                raise UsageError(f"--devices {pattern!r}: expected [host:|switch:]GLOB")
            matched = fnmatch.filter(pools[kind], glob)
            if not matched:
                raise UsageError(f"--devices {pattern!r}: matches no device of the bundle")
            names.extend(matched)
    return sorted(set(names))


def _order(name: str, fabric: Fabric, topo: Topology) -> tuple[int, str]:
    """The highest tier first, down to the leaves, then hosts; a switch no host reaches before the leaves."""
    if name in fabric.hosts:
        return (1, name)
    return (-topo.tier[name] if name in topo.tier else 0, name)


@dataclass(frozen=True, slots=True)
class _JobPaths:
    """A running job, its leaves, and the pairs of its leaves that a working up-down path connects today.

    Two leaves with the same uplinks lose and keep the same paths, so ``pairs`` holds one pair per pair of
    uplink sets (the first by name): a job across 64 leaves of one plane is one pair, not 2,016.
    """

    job: Job
    leaves: tuple[str, ...]  # the leaves of ``pairs``
    pairs: tuple[tuple[str, str], ...]


def _above(topo: Topology, switch: str, down: set[str] | frozenset[str]) -> set[str]:
    """Every switch reached from ``switch`` going only up, over working cables, through none of ``down``."""
    seen: set[str] = set()
    stack = [switch]
    while stack:
        for nxt in topo.up.get(stack.pop(), ()):
            if nxt not in down and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _job_paths(job: Job, topo: Topology) -> _JobPaths:
    leaves = sorted({s for h in job.hosts for s in topo.host_switches.get(h, frozenset())})
    above = {leaf: _above(topo, leaf, frozenset()) for leaf in leaves}
    pairs: dict[frozenset[frozenset[str]], tuple[str, str]] = {}
    for i, a in enumerate(leaves):
        for b in leaves[i + 1 :]:
            if above[a] & above[b]:
                pairs.setdefault(frozenset({topo.up.get(a, frozenset()), topo.up.get(b, frozenset())}), (a, b))
    return _JobPaths(job, tuple(sorted({leaf for pair in pairs.values() for leaf in pair})), tuple(pairs.values()))


def _cut(jp: _JobPaths, down: set[str], topo: Topology) -> str | None:
    """How taking ``down`` hurts the job (the first way found), or None when it keeps its hosts and paths."""
    job = jp.job
    for h in job.hosts:
        if h in down:
            return f"job {job.id} runs on it"
    on_path = [h for h in job.hosts if topo.host_switches.get(h, frozenset()) & down]
    if on_path:
        more = f" +{len(on_path) - 2} more" if len(on_path) > 2 else ""
        return f"job {job.id} uses it on the path of {', '.join(on_path[:2])}{more}"
    if not jp.pairs or not down & topo.switches:
        return None
    above = {leaf: _above(topo, leaf, down) for leaf in jp.leaves}
    for a, b in jp.pairs:
        if not above[a] & above[b]:
            return f"job {job.id} loses every path between {a} and {b}"
    return None


def plan_change(
    fabric: Fabric, devices: Iterable[str], *, max_parallel: int = 1, allow_drain: Iterable[str] = ()
) -> ChangePlan:
    """Ordered waves for ``devices`` (see the module docstring); devices no wave can take are ``blocked``."""
    if max_parallel < 1:
        raise UsageError(f"--max-parallel {max_parallel}: expected at least 1")
    topo = topology(fabric)
    drainable = _jobs(fabric, allow_drain)
    running = [_job_paths(job, topo) for job in fabric.jobs.values() if job.hosts]
    kept = [jp for jp in running if jp.job.id not in drainable]
    plan = ChangePlan()
    todo = sorted(set(devices), key=lambda d: _order(d, fabric, topo))
    waves: list[list[str]] = []
    for device in todo:
        host_name(device)  # the name enters scheduler commands
        reason = _blocking_jobs(device, kept, topo) or _lone_member(device, topo)
        if reason is not None:
            plan.blocked.append(Blocked(device, reason))
            continue
        for wave in waves:
            down = {*wave, device}
            if (
                len(wave) < max_parallel
                and _keeps_redundancy(topo, down)
                and not any(_cut(jp, down, topo) for jp in kept)
            ):
                wave.append(device)
                break
        else:
            waves.append([device])
    for i, members in enumerate(waves, start=1):
        down = set(members)
        hit = [jp.job for jp in running if _cut(jp, down, topo)]
        hosts = sorted({h for job in hit for h in job.hosts} | (down & set(fabric.hosts)))
        for h in hosts:
            host_name(h)  # a job's host enters the drain and resume commands too
        plan.waves.append(Wave(i, tuple(sorted(members)), tuple(hosts), tuple(sorted(job.id for job in hit))))
    return plan


def _jobs(fabric: Fabric, wanted: Iterable[str]) -> set[str]:
    """Job ids named by ``--allow-drain`` (``1001``, ``job:slurm:1001``, or ``all``)."""
    out: set[str] = set()
    for raw in wanted:
        for name in (n.strip() for n in raw.split(",")):
            if not name:
                continue
            if name == "all":
                out.update(fabric.jobs)
                continue
            matches = [jid for jid in fabric.jobs if jid == name or jid.rsplit(":", 1)[-1] == name]
            if not matches:
                raise UsageError(f"--allow-drain {name!r}: no running job with that id in the bundle")
            out.update(matches)
    return out


def _blocking_jobs(device: str, kept: list[_JobPaths], topo: Topology) -> str | None:
    """Why no wave can take ``device``: every running job it alone would hurt that may not be drained, or None."""
    cuts = [(jp.job, why) for jp in kept if (why := _cut(jp, {device}, topo)) is not None]
    if not cuts:
        return None
    parts = [why for _job, why in cuts[:3]]
    if len(cuts) > 3:
        parts.append(f"{len(cuts) - 3} more jobs")
    ids = ",".join(job.id.rsplit(":", 1)[-1] for job, _why in cuts)
    return f"{'; '.join(parts)}: wait for them to end or pass --allow-drain {ids}"


def _lone_member(device: str, topo: Topology) -> str | None:
    """Why ``device`` may never go down: it is the last working member of a redundancy group, or None."""
    for group in topo.redundancy:
        if group.working == {device}:
            dead = ", ".join(sorted(group.members - group.working))
            return (
                f"it is the only working member of {group.why} ({dead} not seen on the wire): "
                "restore the others before taking it down"
            )
    return None


def _keeps_redundancy(topo: Topology, down: set[str]) -> bool:
    return all(not group.working <= down for group in topo.redundancy if group.working)
