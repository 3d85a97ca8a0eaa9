"""NCCL RAS client reports of a faulty twin's jobs (``telemetry/nccl-ras/<job>/<unix time>.txt``).

What an operator's RAS poller would have saved, a query a minute, in NCCL 2.26's text format
(:mod:`unifab.parse.host.nccl_ras`), for the jobs RAS has something to say about:

* a ``host-down`` fault: every process of the host stops answering at the fault's start; the next report names
  them INCOMPLETE (the job processes and their ranks in communicator ``#0-0``), and 60 s on RAS declares them DEAD;
* a ``gpu-xid-79`` fault (the GPU fell off the bus): the process managing that GPU dies, the same way;
* noise: one job whose process misses one query (busy in a checkpoint) and answers the next, and one job whose
  ranks are at different AllGather counts for two queries (a MISMATCH warning: a straggler, not a fault).

Each process's RAS address is the first IPv4 of its host's RDMA GID tables (the twin has no separate bootstrap
network), its pid ``10000 + 100 * <host's place in the job> + <GPU>``, and one process manages one GPU (rank
``8 * <host's place> + <GPU>``). Every other report of these jobs says RUNNING, OK.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

from unifab import layout
from unifab.health.score import epoch
from unifab.model import Fabric, Job
from unifab.twin.files import write_text

__all__ = ["STEP_S", "write_reports"]

STEP_S = 60.0  # one RAS query a minute
DEAD_AFTER_S = 60.0  # RAS declares a process dead after 60 s without contact
_VERSION = "NCCL version 2.26.2 compiled with CUDA 12.6\nCUDA runtime version 12060, driver version 12060\n"


class _JobView:
    def __init__(self, fabric: Fabric, job: Job) -> None:
        self.hosts = [h for h in job.hosts if h in fabric.hosts]
        self.gpus = {h: sorted(fabric.hosts[h].gpus) or [0] for h in self.hosts}
        self.address = {h: _address(fabric, h) for h in self.hosts}
        self.hash = f"{zlib.crc32(job.id.encode()):08x}{zlib.crc32(job.id[::-1].encode()):08x}"  # the comm's

    def process(self, host: str, gpu: int) -> tuple[int, int, str]:
        """(rank, pid, address) of the process on ``host`` managing ``gpu``."""
        place = self.hosts.index(host)
        return 8 * place + gpu, 10000 + 100 * place + gpu, self.address[host]

    def report(self, missing: list[tuple[str, int]], dead: list[tuple[str, int]], mismatch: bool) -> str:
        ranks = sum(len(g) for g in self.gpus.values())
        per_node = max((len(g) for g in self.gpus.values()), default=0)
        gone = len(missing) + len(dead)
        errors = "INCOMPLETE" if gone else ("MISMATCH" if mismatch else "OK")
        lines = [
            _VERSION,
            "Job summary\n===========\n",
            "  Nodes  Processes         GPUs  Processes     GPUs",
            "(total)   per node  per process    (total)  (total)",
            f"{len(self.hosts):7d}  {per_node:9d}  {1:11d}  {ranks:9d}  {ranks:7d}\n",
            f"Communicators... ({2.05 if missing else 0.0:.2f}s)\n=============\n",
            "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
            "    #  in group  per comm  per node  per comm  in group",
            f"{0:5d}  {1:8d}  {len(self.hosts):8d}  {per_node:8d}  {ranks:8d}  {ranks - gone:8d}  {'RUNNING':>8s}  "
            f"{errors:>6s}\n",
            "Errors\n======\n",
        ]
        for title, group in (("INCOMPLETE", missing), ("DEAD", dead)):
            if not group:
                continue
            n = len(group)
            head = (
                f"  Missing communicator data from {n} job process{'es' if n > 1 else ''}"
                if title == "INCOMPLETE"
                else f"  {n} job process{'es are' if n > 1 else ' is'} considered dead (unreachable via the RAS"
                " network)"
            )
            lines += [title, head]
            for host, gpu in group:
                _, pid, address = self.process(host, gpu)
                lines.append(f"  Process {pid} on node {address} managing GPU {gpu}")
            lines.append("")
        if gone:
            lines += [
                f"#0-0 ({self.hash}) INCOMPLETE",
                f"  Missing communicator data from {gone} rank{'s' * (gone > 1)}",
            ]
            for host, gpu in sorted(missing + dead):
                rank, pid, address = self.process(host, gpu)
                lines.append(f"  Rank {rank} -- GPU {gpu} managed by process {pid} on node {address}")
            lines.append("")
        lines.append("Warnings\n========\n")
        if mismatch and not gone:
            host = self.hosts[-1]
            ahead = [self.process(host, g) for g in self.gpus[host][:2]]
            lines += [
                f"#0-0 ({self.hash}) MISMATCH",
                "  Communicator ranks have different AllGather operation counts",
                f"  {ranks - len(ahead)} ranks have launched up to operation 640",
                f"  {len(ahead)} ranks have launched up to operation 641",
                *(f"  Rank {r} -- GPU {r % 8} managed by process {p} on node {a}" for r, p, a in ahead),
                "",
            ]
        return "\n".join(lines)


def _address(fabric: Fabric, host: str) -> str:
    for nic in sorted(fabric.hosts[host].nics.values(), key=lambda n: n.netdev):
        for gid in nic.gids:
            if gid.ipv4:
                return gid.ipv4
    return host


def write_reports(
    bundle: Path, fabric: Fabric, faults: list[dict[str, Any]], start: float, end: float, seed: int
) -> list[Path]:
    """Write the RAS reports (see the module) between ``start`` and ``end``; returns the files written."""
    rng = random.Random(seed * 7919 + 11)  # its own draw: the faults' and the noise's places stay as they were
    gone: dict[str, dict[tuple[str, int], float]] = {}  # job -> (host, gpu) -> when its process stopped
    for fault in faults:
        root = fault["root_cause"]["id"]
        when = epoch(fault["start"])
        if fault["kind"] == "host-down":
            host = root.split(":", 1)[1]
            targets = [(host, g) for g in sorted(fabric.hosts[host].gpus) or [0]]
        elif fault["kind"] == "gpu-xid-79":
            _, host, gpu = root.split(":")
            targets = [(host, int(gpu))]
        else:
            continue
        for job in fault["jobs"]:
            for target in targets:
                gone.setdefault(job, {})[target] = when
    quiet = sorted(j for j in fabric.jobs if j not in gone and len(fabric.jobs[j].hosts) > 1)
    noise = rng.sample(quiet, min(2, len(quiet)))
    times = [start + i * STEP_S for i in range(int((end - start) // STEP_S) + 1)]
    written: list[Path] = []
    for job_id in sorted(gone) + noise:
        view = _JobView(fabric, fabric.jobs[job_id])
        blip = times[rng.randrange(2, len(times) - 2)] if job_id in noise else None
        for t in times:
            stopped = gone.get(job_id, {})
            missing = sorted(k for k, w in stopped.items() if w < t < w + DEAD_AFTER_S)
            dead = sorted(k for k, w in stopped.items() if t >= w + DEAD_AFTER_S)
            if blip is not None and t == blip and job_id == noise[0]:
                missing = [(view.hosts[0], view.gpus[view.hosts[0]][0])]
            mismatch = blip is not None and job_id != noise[0] and blip <= t < blip + 2 * STEP_S
            path = bundle / layout.NCCL_RAS_DIR / job_id.replace(":", "-") / f"{int(t)}.txt"
            write_text(path, view.report(missing, dead, mismatch))
            written.append(path)
    return written
