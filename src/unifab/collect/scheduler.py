"""``scheduler/`` of a bundle → the jobs running on the fabric.

Reads ``squeue.json`` (or any Slurm jobs format: ``scontrol-show-job.txt``, ``squeue.txt``) and
``pods.json`` (Kubernetes), plus ``env/<job id>.env``: one rank's environment as ``K=V`` lines (what
``sacct --env-vars`` or the host agent reading ``/proc/<pid>/environ`` gives) for Slurm jobs, whose
queue listing carries none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from unifab import layout
from unifab.model import Job
from unifab.parse.sched import k8s_pods, slurm_jobs
from unifab.parse.sched.nccl_env import nccl_settings, parse_env
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems

__all__ = ["JOB_FILES", "load_jobs"]

JOB_FILES = layout.JOB_FILES


def load_jobs(sched_dir: SourcePath, problems: Problems) -> dict[str, Job]:
    jobs: dict[str, Job] = {}
    for name in JOB_FILES:
        path = sched_dir / name
        if not path.is_file():
            continue
        parser = k8s_pods.parse if name == "pods.json" else slurm_jobs.parse
        for raw in problems.parse_file(path, parser) or ():
            if raw.state != "RUNNING" or not raw.nodes:
                continue
            env = raw.env
            env_file = sched_dir / "env" / f"{raw.id.rsplit(':', 1)[-1]}.env"
            if env_file.is_file():
                env = {**(problems.parse_file(env_file, parse_env) or {}), **env}
            nccl = nccl_settings(env) if env else None
            jobs[raw.entity_id] = Job(
                id=raw.entity_id,
                name=raw.name or None,
                hosts=raw.nodes,
                nccl_ib_tc=nccl.ib_tc if nccl else None,
                nccl_ib_sl=nccl.ib_sl if nccl else None,
                nccl_ib_hca=nccl.ib_hca.raw if nccl and nccl.ib_hca else None,
                nccl_ib_gid_index=nccl.ib_gid_index if nccl else None,
                env_known=bool(env),
                tc_conflict="NCCL_IB_TC" in raw.env_conflicts,
                sl_conflict="NCCL_IB_SL" in raw.env_conflicts,
            )
    return jobs
