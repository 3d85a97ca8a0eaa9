"""Run the registered checks over a fabric and return findings in a stable order."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from unifab.checks.context import CheckContext
from unifab.checks.memo import run_scope
from unifab.checks.registry import registry
from unifab.errors import UsageError
from unifab.model import Fabric, Finding, Job

__all__ = ["find_job", "run_checks", "scope_to_job"]


def run_checks(fabric: Fabric, only: Collection[str] | None = None, job: str | None = None) -> list[Finding]:
    """Input findings from collection plus every registered check (or those in ``only``).

    With ``job`` the checks still run on the whole fabric (its majority is the baseline), and the
    findings are cut to the job's network: its hosts' NIC links and the uplinks of the leaves they
    hang off, which carry every path between the job's ranks.
    """
    ctx = CheckContext.build(fabric)
    findings = list(fabric.input_findings)
    with run_scope():
        for spec in registry().values():
            if spec.run is None or (only is not None and spec.id not in only):
                continue
            findings.extend(spec.run(ctx))
    if only is not None:
        findings = [f for f in findings if f.check in only]
    if job is not None:
        findings = scope_to_job(ctx, find_job(fabric, job), findings)
    return sorted(findings, key=Finding.sort_key)


def find_job(fabric: Fabric, wanted: str) -> Job:
    """A job by canonical id (``job:slurm:123``), scheduler id (``slurm:123``) or bare id (``123``)."""
    for job in fabric.jobs.values():
        if wanted in (job.id, job.id.removeprefix("job:"), job.id.rsplit(":", 1)[-1], job.name):
            return job
    known = ", ".join(sorted(fabric.jobs)) or "none (the bundle has no scheduler/ data)"
    raise UsageError(f"job {wanted!r} not found; jobs in the bundle: {known}")


def scope_to_job(ctx: CheckContext, job: Job, findings: list[Finding]) -> list[Finding]:
    hosts = set(job.hosts)
    links = {lk.link.id for lk in ctx.nic_links if lk.nic.host in hosts}
    leaves = {lk.port.switch for lk in ctx.nic_links if lk.nic.host in hosts}
    links |= {pl.link.id for pl in ctx.port_links if pl.a.switch in leaves or pl.b.switch in leaves}
    devices = hosts | leaves
    scoped = []
    for f in findings:
        if f.subject.get("kind") == "job":
            if f.subject.get("id") == job.id:
                scoped.append(f)
            continue
        kept = tuple(e for e in f.entities if e in links)
        if kept:
            scoped.append(f if kept == f.entities else _narrowed(f, kept))
        elif f.check.startswith("INPUT-") and f.subject.get("device") in devices:
            scoped.append(f)
    return scoped


def _narrowed(f: Finding, entities: tuple[str, ...]) -> Finding:
    return replace(f, entities=entities, impact={**f.impact, "links_in_job": len(entities)})
