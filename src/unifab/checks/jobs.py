"""The traffic class jobs really use: NCCL_IB_TC from the job's environment against the fabric's RoCE class.

A NIC's global traffic_class override beats whatever NCCL asks for, so a job whose NICs all carry the
override is judged by QOS-TC-OVERRIDE instead; only NICs without it send the job's own TOS.
"""

from __future__ import annotations

from collections.abc import Iterator

from unifab.checks.context import CheckContext
from unifab.checks.registry import CheckSpec
from unifab.model import Finding, Fix, Job, Severity

__all__ = ["CHECKS", "check_job_tc"]


def _switch_tc(ctx: CheckContext, job: Job, dscp: int) -> int | None:
    """The TC the job's leaf ports give ``dscp`` (the first port that classifies by DSCP)."""
    hosts = set(job.hosts)
    for lk in ctx.nic_links:
        if lk.nic.host in hosts and lk.port.qos is not None and lk.port.qos.trust == "dscp":
            return lk.port.qos.dscp_to_tc.get(dscp, 0)
    return None


def check_job_tc(ctx: CheckContext) -> Iterator[Finding]:
    """Every rank of a job must ask NCCL for the fabric's lossless RoCE class, and all ranks the same one."""
    base = ctx.baseline
    fabric_tos = base.roce_dscp << 2 | 2
    for job in ctx.fabric.jobs.values():
        if not job.env_known:
            continue
        nics = [nic for host in job.hosts if (h := ctx.fabric.hosts.get(host)) for nic in h.nics.values()]
        bare = [nic for nic in nics if nic.qos is not None and nic.qos.traffic_class is None]
        if not bare:
            continue
        tos = job.nccl_ib_tc if job.nccl_ib_tc is not None else 0  # NCCL's default TC is 0
        dscp = tos >> 2
        problems = []
        if job.tc_conflict:
            problems.append("ranks run with different NCCL_IB_TC values")
        if job.nccl_ib_tc is None:
            problems.append("NCCL_IB_TC is unset, so NCCL sends RoCE with TOS 0 (DSCP 0)")
        elif dscp != base.roce_dscp:
            problems.append(f"NCCL_IB_TC={job.nccl_ib_tc} is DSCP {dscp}, not the fabric's RoCE DSCP {base.roce_dscp}")
        if not problems:
            continue
        tc = _switch_tc(ctx, job, dscp)
        lossless = tc is not None and base.switch_pfc is not None and tc in base.switch_pfc
        yield Finding(
            check="QOS-JOB-TC",
            severity=Severity.ERROR if lossless else Severity.CRITICAL,
            subject={"kind": "job", "id": job.id},
            message=f"{job.id} ({job.name or 'unnamed'}): {'; '.join(problems)}",
            evidence={
                "a": {
                    "job": job.id,
                    "hosts": len(job.hosts),
                    "nccl_ib_tc": job.nccl_ib_tc,
                    "dscp": dscp,
                    "nics_without_tos_override": len(bare),
                },
                "b": {"fabric_roce_dscp": base.roce_dscp, "switch_tc_for_dscp": tc, "lossless": lossless},
            },
            fix=(Fix(job.id, (f"export NCCL_IB_TC={fabric_tos}",)),),
            impact={
                "summary": f"the job's RoCE traffic enters TC {tc} on its leaves"
                + ("" if lossless else ", a lossy class: congestion drops it and collectives stall on retransmits"),
                "hosts": list(job.hosts),
            },
            entities=(job.id,),
        )


CHECKS = (
    CheckSpec(
        "QOS-JOB-TC",
        "A job's NCCL_IB_TC is unset, differs between its ranks, or is not the fabric's lossless class",
        "NCCL marks RoCE with the job's TOS; the wrong one lands the job's collectives in a lossy class.",
        "Set NCCL_IB_TC to the fabric's RoCE TOS (e.g. 106 = DSCP 26 + ECT) for every rank, or override it on the NIC.",
        check_job_tc,
    ),
)
