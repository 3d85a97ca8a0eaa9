"""Job impact: "is it the network?" for one job — the incidents and configuration findings on what it uses.

A job's network (:func:`job_scope`) is its hosts, their GPUs and NICs, each NIC's link to its leaf (the leaf port
and both optics), the leaves, and those leaves' uplinks: ECMP spreads the job's cross-leaf traffic over all of
them, so any one of them can slow every collective. On hosts with NICs on two fabrics (a RoCE backend beside an
InfiniBand storage network, say) the scope names the fabrics the job's collectives run over (``fabrics``: the kinds
of the NICs its ``NCCL_IB_HCA`` selects) and keeps all of its NICs: storage traffic stalls a job too.

:func:`judge_jobs` puts each incident and finding on the jobs whose network names one of its entities: an incident
*on its hosts* (the job runs where the root cause is) or *on its path* (a link or switch its traffic crosses), a
finding at or above the severity asked for, and the rest listed as notes. A job with none of the first two gets a
clean bill that says what was looked at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from unifab.checks.job_nics import job_fabrics
from unifab.health.localize import Incident
from unifab.model import Fabric, Finding, Job, Link, Severity, host_id, port_id, switch_id

__all__ = ["JobScope", "JobVerdict", "job_scope", "judge_jobs"]


@dataclass(frozen=True, slots=True)
class JobScope:
    job: Job
    hosts: tuple[str, ...]  # the job's hosts the bundle knows
    missing: tuple[str, ...]  # the job's hosts the bundle has no data for
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    links: tuple[str, ...]  # the NICs' links to their leaves
    leaves: tuple[str, ...]
    uplinks: tuple[str, ...]  # the leaves' links to other switches (ECMP)
    entities: frozenset[str]
    # the fabrics its collectives run over: the kinds (roce, ib) of the NICs NCCL uses (checks.job_nics)
    fabrics: tuple[str, ...] = ()

    def checked(self) -> dict[str, object]:
        return {
            "hosts": len(self.hosts),
            "hosts_without_data": list(self.missing),
            "fabrics": list(self.fabrics),
            "gpus": len(self.gpus),
            "nics": len(self.nics),
            "links": len(self.links),
            "leaves": list(self.leaves),
            "ecmp_uplinks": len(self.uplinks),
        }


@dataclass(frozen=True, slots=True)
class JobVerdict:
    scope: JobScope
    incidents: tuple[tuple[Incident, str], ...]  # (incident, "hosts" | "path")
    findings: tuple[Finding, ...]  # at or above the severity asked for
    notes: tuple[Finding, ...]  # below it
    telemetry: bool  # health evidence was read (series or logs)

    @property
    def verdict(self) -> str:
        return "incidents" if self.incidents else "findings" if self.findings else "clean"

    def as_dict(self) -> dict[str, object]:
        def finding(f: Finding) -> dict[str, object]:
            return {"check": f.check, "severity": f.severity.value, "message": f.message, "entities": list(f.entities)}

        return {
            "job": self.scope.job.id,
            "name": self.scope.job.name,
            "verdict": self.verdict,
            "hosts": list(self.scope.hosts),
            "checked": {**self.scope.checked(), "telemetry": self.telemetry},
            "incidents": [{**i.as_dict(), "on": on} for i, on in self.incidents],
            "findings": [finding(f) for f in self.findings],
            "notes": [finding(f) for f in self.notes],
        }


def job_scope(fabric: Fabric, job: Job, link_of: dict[str, list[Link]] | None = None) -> JobScope:
    """The entities of ``job``'s network (see the module); ``link_of``: links by node, to share across jobs."""
    by_node = link_of if link_of is not None else links_by_node(fabric)
    hosts = tuple(h for h in job.hosts if h in fabric.hosts)
    entities: set[str] = {job.id}
    gpus, nics, links, leaves, uplinks = [], [], [], set(), set()
    for name in hosts:
        host = fabric.hosts[name]
        entities.add(host_id(name))
        gpus += [f"gpu:{name}:{i}" for i in sorted(host.gpus)]
        nics += [n.id for n in sorted(host.nics.values(), key=lambda n: n.netdev)]
        for link in by_node.get(name, []):
            links.append(link.id)
            for end in (link.a, link.b):
                entities.add(f"optic:{end.node}:{end.port}")
                if end.node in fabric.switches:
                    leaves.add(end.node)
                    entities.add(port_id(end.node, end.port))
    for leaf in sorted(leaves):
        entities.add(switch_id(leaf))
        for link in by_node.get(leaf, []):
            if link.a.node in fabric.switches and link.b.node in fabric.switches:
                uplinks.add(link.id)
                entities.update(port_id(e.node, e.port) for e in (link.a, link.b))
    entities.update(gpus, nics, links, uplinks)
    missing = tuple(h for h in job.hosts if h not in fabric.hosts)
    return JobScope(
        job,
        hosts,
        missing,
        tuple(gpus),
        tuple(nics),
        tuple(links),
        tuple(sorted(leaves)),
        tuple(sorted(uplinks)),
        frozenset(entities),
        job_fabrics(fabric, job),
    )


def links_by_node(fabric: Fabric) -> dict[str, list[Link]]:
    out: dict[str, list[Link]] = {}
    for link in fabric.links:
        out.setdefault(link.a.node, []).append(link)
        if link.b.node != link.a.node:
            out.setdefault(link.b.node, []).append(link)
    return out


def _incident_entities(incident: Incident) -> set[str]:
    return {incident.root} | {s.entity for s in incident.symptoms}


def judge_jobs(
    fabric: Fabric,
    jobs: Sequence[Job],
    findings: Iterable[Finding],
    incidents: Iterable[Incident],
    fail_on: Severity = Severity.ERROR,
    telemetry: bool = False,
) -> list[JobVerdict]:
    """One verdict per job of ``jobs``, in their order (see the module)."""
    by_node = links_by_node(fabric)
    known, happened = list(findings), list(incidents)
    # indexed by entity, so that each job looks up its own entities: no jobs x findings scan
    findings_of: dict[str, list[int]] = {}
    for n, f in enumerate(known):
        for entity in f.entities:
            findings_of.setdefault(entity, []).append(n)
        if f.subject.get("kind") == "job" and f.subject.get("id"):
            findings_of.setdefault(f.subject["id"], []).append(n)
        if f.check.startswith("INPUT-") and f.subject.get("device"):
            findings_of.setdefault(f"device:{f.subject['device']}", []).append(n)
    incidents_of: dict[str, list[int]] = {}
    for n, incident in enumerate(happened):
        for entity in _incident_entities(incident) | set(incident.jobs):
            incidents_of.setdefault(entity, []).append(n)
    out = []
    for job in jobs:
        scope = job_scope(fabric, job, by_node)
        keys = scope.entities | {f"device:{d}" for d in (*scope.hosts, *scope.leaves)}
        hit = [
            (happened[n], "hosts" if job.id in happened[n].jobs else "path")
            for n in sorted({n for k in keys for n in incidents_of.get(k, ())})
        ]
        mine = [known[n] for n in sorted({n for k in keys for n in findings_of.get(k, ())})]
        severe = tuple(f for f in mine if f.severity.rank >= fail_on.rank)
        notes = tuple(f for f in mine if f.severity.rank < fail_on.rank)
        out.append(JobVerdict(scope, tuple(hit), severe, notes, telemetry))
    return out
