"""Change waves: which devices may be upgraded or reconfigured together without hurting a running job.

``unifab plan-change`` gives a person a plan to review; unifab never executes it. The rules, from the
discovered topology (cables seen on the wire, else planned) and the scheduler's running jobs:

- **A running job keeps its hosts and its rail paths.** A wave may not take down a host a running job uses,
  nor a switch on that host's path (its leaf on any rail), unless the job is in ``allow_drain``: then the
  job's hosts are drained before the wave and resumed after it. A job whose path no wave can avoid blocks
  the device, and the plan says which job blocks which device.
- **Redundancy is never all down at once**: the spines one leaf reaches (its uplinks, so the spines of its
  plane), and the leaves of one host's rail when the host is dual-homed on it (two ToRs). A group whose
  every member is selected is spread over waves so at least one member stays up.
- **At most ``max_parallel`` devices per wave.**

Waves are filled first-fit in a stable order (spines, then leaves, then hosts; by name), so the plan is the
same for the same input. The rules are checked again by an independent oracle in the tests.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from unifab.checks.topology_common import leaf_rail, nic_rail
from unifab.errors import UsageError
from unifab.model import Fabric, Job
from unifab.render.host_script import host_name

__all__ = ["PLAN_FORMAT", "Blocked", "ChangePlan", "Topology", "Wave", "plan_change", "select", "topology"]

PLAN_FORMAT = "unifab-change-plan/1"


@dataclass(frozen=True, slots=True)
class Topology:
    """What the planner needs of the fabric: who hangs below whom, and the redundancy groups."""

    host_switches: dict[str, frozenset[str]]  # host -> the switches its NICs are cabled to
    redundancy: tuple[tuple[str, frozenset[str]], ...]  # (why, members): never all down at once
    switches: frozenset[str]


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


def topology(fabric: Fabric) -> Topology:
    """Host attachments and redundancy groups from the links (discovered where seen, else planned)."""
    seen = [lk for lk in fabric.links if "lldp" in lk.sources]
    links = seen or fabric.links
    host_switches: dict[str, set[str]] = defaultdict(set)
    uplinks: dict[str, set[str]] = defaultdict(set)  # leaf -> the switches above it
    rail_leaves: dict[tuple[str, int], set[str]] = defaultdict(set)
    for lk in links:
        a_host, b_host = lk.a.node in fabric.hosts, lk.b.node in fabric.hosts
        if a_host == b_host:
            if not a_host:
                uplinks[lk.a.node].add(lk.b.node)
                uplinks[lk.b.node].add(lk.a.node)
            continue
        host_end, leaf_end = (lk.a, lk.b) if a_host else (lk.b, lk.a)
        host_switches[host_end.node].add(leaf_end.node)
        rail = leaf_rail(leaf_end.node)
        if rail is None:
            rail = nic_rail(fabric, host_end)
        if rail is not None:
            rail_leaves[(host_end.node, rail)].add(leaf_end.node)
    leaves = {s for switches in host_switches.values() for s in switches}
    groups: dict[frozenset[str], str] = {}
    for leaf in sorted(leaves):
        above = frozenset(uplinks[leaf] - leaves)
        if len(above) > 1:
            groups.setdefault(above, f"the uplinks of {leaf}")
    for (host, rail), members in sorted(rail_leaves.items()):
        if len(members) > 1:
            groups.setdefault(frozenset(members), f"rail {rail} of {host} (dual-homed)")
    switches = frozenset(leaves | set(uplinks))
    return Topology(
        {h: frozenset(s) for h, s in host_switches.items()},
        tuple(sorted(((why, m) for m, why in groups.items()), key=lambda g: (g[0], sorted(g[1])))),
        switches,
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
    if name in fabric.hosts:
        return (2, name)
    above_hosts = any(name in s for s in topo.host_switches.values())
    return (1 if above_hosts else 0, name)


def plan_change(
    fabric: Fabric, devices: Iterable[str], *, max_parallel: int = 1, allow_drain: Iterable[str] = ()
) -> ChangePlan:
    """Ordered waves for ``devices`` (see the module docstring); devices no wave can take are ``blocked``."""
    if max_parallel < 1:
        raise UsageError(f"--max-parallel {max_parallel}: expected at least 1")
    topo = topology(fabric)
    drainable = _jobs(fabric, allow_drain)
    running = [job for job in fabric.jobs.values() if job.hosts]
    plan = ChangePlan()
    todo = sorted(set(devices), key=lambda d: _order(d, fabric, topo))
    waves: list[list[str]] = []
    for device in todo:
        host_name(device)  # the name enters scheduler commands
        blocker = _blocking_job(device, running, drainable, topo)
        if blocker is not None:
            plan.blocked.append(Blocked(device, blocker))
            continue
        for wave in waves:
            if len(wave) < max_parallel and _keeps_redundancy(topo, set(wave) | {device}):
                wave.append(device)
                break
        else:
            if not _keeps_redundancy(topo, {device}):  # cannot happen: a group has two or more members
                plan.blocked.append(Blocked(device, "it is a group's only member"))
                continue
            waves.append([device])
    for i, members in enumerate(waves, start=1):
        down = set(members)
        hit = [job for job in running if _touches(job, down, topo)]
        hosts = sorted({h for job in hit for h in job.hosts} | (down & set(fabric.hosts)))
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


def _touches(job: Job, down: set[str], topo: Topology) -> bool:
    return any(h in down or topo.host_switches.get(h, frozenset()) & down for h in job.hosts)


def _blocking_job(device: str, running: list[Job], drainable: set[str], topo: Topology) -> str | None:
    """Why no wave can take ``device``: every running job it would hurt that may not be drained, or None."""
    blockers = [job for job in running if job.id not in drainable and _touches(job, {device}, topo)]
    if not blockers:
        return None
    parts = []
    for job in blockers[:3]:
        if device in job.hosts:
            parts.append(f"job {job.id} runs on it")
            continue
        hosts = [h for h in job.hosts if device in topo.host_switches.get(h, frozenset())]
        more = f" +{len(hosts) - 2} more" if len(hosts) > 2 else ""
        parts.append(f"job {job.id} uses it on the path of {', '.join(hosts[:2])}{more}")
    if len(blockers) > 3:
        parts.append(f"{len(blockers) - 3} more jobs")
    ids = ",".join(job.id.rsplit(":", 1)[-1] for job in blockers)
    return f"{'; '.join(parts)}: wait for them to end or pass --allow-drain {ids}"


def _keeps_redundancy(topo: Topology, down: set[str]) -> bool:
    return all(not members <= down for _why, members in topo.redundancy)
