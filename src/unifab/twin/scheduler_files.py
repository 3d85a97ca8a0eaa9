"""The twin's scheduler view: ``scheduler/squeue.json`` (Slurm ``squeue --json``, data_parser v0.0.38) and
``scheduler/env/<job id>.env``, one rank's NCCL environment as the host agent reads it."""

from __future__ import annotations

from pathlib import Path

import orjson

from unifab import layout
from unifab.parse.sched import hostlist
from unifab.twin.cluster import GPUS_PER_HOST, Cluster
from unifab.twin.files import write_text

__all__ = ["START_EPOCH", "squeue_json", "write_scheduler"]

START_EPOCH = 1_796_000_000  # 2026-11-30, inside the twin's day


def squeue_json(cluster: Cluster) -> str:
    jobs = [
        {
            "job_id": job.job_id,
            "name": job.name,
            "user_name": "train",
            "job_state": "RUNNING",
            "partition": "gpu",
            "nodes": hostlist.compress(job.hosts),
            "node_count": len(job.hosts),
            "start_time": START_EPOCH,
            "tres_per_node": f"gres:gpu:h100:{GPUS_PER_HOST}",
        }
        for job in cluster.jobs
    ]
    meta = {
        "plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"},
        "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"},
    }
    return orjson.dumps({"meta": meta, "errors": [], "jobs": jobs}, option=orjson.OPT_INDENT_2).decode() + "\n"


def write_scheduler(cluster: Cluster, root: Path) -> None:
    write_text(root / layout.SCHEDULER / "squeue.json", squeue_json(cluster))
    for job in cluster.jobs:
        write_text(root / layout.JOB_ENV_DIR / f"{job.job_id}.env", "".join(f"{k}={v}\n" for k, v in job.env.items()))
