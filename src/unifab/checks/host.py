"""Host facts that break RDMA even when the fabric is right: the GID NCCL uses (HOST-GID), the RoCE path MTU
(HOST-ROCE-MTU) and GPU peer memory (HOST-PEERMEM). PCIe training and ACS are in :mod:`unifab.checks.host_pcie`,
DCBX ownership and ETS in :mod:`unifab.checks.host_qos`.

**GID.** A job that sets ``NCCL_IB_GID_INDEX`` uses that index on every NIC of every rank; NCCL reads the GID's
type from ``gid_attrs/types/<i>`` and connects with whatever it finds there. A job that leaves it unset gets NCCL's
automatic selection (``ncclIbGetGidIndex`` / ``ncclUpdateGidIndex`` of recent NCCL, reference host-nic-roce §3.1): the
lowest valid (not link-local) GID of family ``NCCL_IB_ADDR_FAMILY`` (default IPv4) with RoCE version
``NCCL_IB_ROCE_VERSION_NUM`` (default 2); with no GID of that family NCCL stays on index 0, the link-local GID,
which in a routed (leaf-spine) fabric connects to nothing. A NIC on no running job's host is judged by the
automatic selection too. A NIC whose GID table was not collected (no ``show_gids``) is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from unifab.checks.context import CheckContext
from unifab.checks.job_nics import job_uses_nic
from unifab.checks.link import IB_MTUS, roce_active_mtu
from unifab.checks.registry import CheckSpec
from unifab.errors import UsageError
from unifab.model import Finding, Fix, Gid, Host, Job, Nic, Severity
from unifab.render import host_script as hs

__all__ = [
    "CHECKS",
    "PEERMEM_MODULES",
    "auto_gid",
    "check_gid",
    "check_peermem",
    "check_roce_mtu",
    "gid_problem",
]

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")  # the driver's module; MLNX_OFED's older nv_peer_mem
DMABUF_KERNEL = (5, 12)  # ib_umem_dmabuf: GPUDirect RDMA over DMA-BUF needs kernel >= 5.12 (and open GPU modules)


def _roce(nic: Nic) -> bool:
    return nic.link_layer != "InfiniBand" and nic.rdma_dev is not None


def _link_local(gid: Gid) -> bool:
    return gid.gid.lower().startswith("fe80:")


def auto_gid(gids: tuple[Gid, ...]) -> Gid | None:
    """The GID NCCL's automatic selection picks on port 1 (IPv4, RoCE v2 wanted), None when the table is empty."""
    table = sorted((g for g in gids if g.port == 1), key=lambda g: g.index)
    if not table:
        return None
    v4 = [g for g in table if g.ipv4 is not None and not _link_local(g)]
    best = next((g for g in v4 if g.version == "v2"), v4[0] if v4 else None)
    if best is not None:
        return best
    return next((g for g in table if g.index == 0), table[0])


def gid_problem(gid: Gid | None, index: int) -> str | None:
    """What is wrong with using ``gid`` (at ``index``) for RoCE across a routed fabric, None when nothing is."""
    if gid is None:
        return f"no GID at index {index}"
    if gid.version == "v1":
        return f"GID {index} is RoCE v1 (not routable over IP)"
    if _link_local(gid):
        return f"GID {index} is the IPv6 link-local fe80:: address (not routable)"
    return None


@dataclass(frozen=True, slots=True)
class _Use:
    """One way a NIC's GID is chosen: by a job's NCCL_IB_GID_INDEX, or by NCCL's automatic selection."""

    index: int | None  # None: automatic
    jobs: tuple[str, ...]


def _selects(job: Job, nic: Nic) -> bool:
    return nic.rdma_dev is None or job_uses_nic(job, nic)


def _uses(jobs: list[Job], nic: Nic) -> list[_Use]:
    by_index: dict[int | None, list[str]] = {}
    for job in jobs:
        if _selects(job, nic):
            by_index.setdefault(job.nccl_ib_gid_index if job.env_known else None, []).append(job.id)
    if not by_index:
        by_index[None] = []
    return [
        _Use(i, tuple(sorted(ids)))
        for i, ids in sorted(by_index.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0))
    ]


def _gid_text(g: Gid) -> dict[str, Any]:
    return {"index": g.index, "gid": g.gid, "version": g.version, "ipv4": g.ipv4}


def _gid_fix(nic: Nic, good: Gid | None, jobs: tuple[str, ...], explicit: bool) -> tuple[Fix, ...]:
    if good is not None and explicit:
        # the NIC has a routable RoCE v2 IPv4 GID, just not at the job's index: let NCCL find it on every NIC
        return tuple(Fix(job, ("unset NCCL_IB_GID_INDEX",)) for job in jobs)
    try:
        netdev, rdma = hs.q(hs.netdev(nic.netdev)), hs.q(hs.rdma_dev(nic.rdma_dev or ""))
    except UsageError as e:
        return (Fix(nic.host, (f"# not rendered for {nic.netdev!r}: {' '.join(str(e).split())}",)),)
    return (
        Fix(
            nic.host,
            (
                f"# {nic.netdev} has no RoCE v2 IPv4 GID: give the netdev its RoCE IPv4 address (the kernel then "
                "adds the v1 and v2 GIDs for it), e.g. in its netplan/ifcfg file, and check the RoCE mode is v2",
                f"ip -4 addr show dev {netdev}",
                f"show_gids {rdma}",
            ),
        ),
    )


def check_gid(ctx: CheckContext) -> Iterator[Finding]:
    """The GID NCCL uses on each RoCE NIC (the job's NCCL_IB_GID_INDEX, else NCCL's own pick) must be RoCE v2 and
    routable."""
    jobs_on: dict[str, list[Job]] = {}
    for job_id in sorted(ctx.fabric.jobs):
        job = ctx.fabric.jobs[job_id]
        for on in job.hosts:
            jobs_on.setdefault(on, []).append(job)
    for name in sorted(ctx.fabric.hosts):
        host = ctx.fabric.hosts[name]
        for netdev in sorted(host.nics):
            nic = host.nics[netdev]
            if not _roce(nic) or not nic.gids:
                continue
            problems = []
            jobs: set[str] = set()
            explicit = False
            for use in _uses(jobs_on.get(name, []), nic):
                if use.index is None:
                    picked = auto_gid(nic.gids)
                    index = picked.index if picked is not None else 0
                    problem = gid_problem(picked, index)
                    where = "NCCL's automatic GID selection" + (f" ({', '.join(use.jobs)})" if use.jobs else "")
                else:
                    picked = next((g for g in nic.gids if g.index == use.index and g.port == 1), None)
                    problem = gid_problem(picked, use.index)
                    where = f"NCCL_IB_GID_INDEX={use.index} ({', '.join(use.jobs)})"
                    explicit = True
                if problem is not None:
                    problems.append(f"{where}: {problem}")
                    jobs.update(use.jobs)
            if not problems:
                continue
            good = next(
                (g for g in sorted(nic.gids, key=lambda g: g.index) if gid_problem(g, g.index) is None and g.ipv4),
                None,
            )
            yield Finding(
                check="HOST-GID",
                severity=Severity.ERROR,
                subject={"kind": "nic", "id": nic.id},
                message=f"{nic.id} ({nic.netdev}): " + "; ".join(problems),
                evidence={
                    "a": {
                        "device": nic.host,
                        "nic": nic.id,
                        "netdev": nic.netdev,
                        "gids": [_gid_text(g) for g in sorted(nic.gids, key=lambda g: g.index)],
                        "routable_v2_ipv4_gid": None if good is None else good.index,
                        "jobs": sorted(jobs),
                    }
                },
                fix=_gid_fix(nic, good, tuple(sorted(jobs)), explicit),
                impact={
                    "summary": "NCCL's queue pairs on this NIC address peers with a GID the routed fabric cannot "
                    "carry (or that does not exist): connections fail or the job falls back to sockets",
                    "jobs": sorted(jobs),
                },
                entities=(nic.id,),
            )


def check_roce_mtu(ctx: CheckContext) -> Iterator[Finding]:
    """The RoCE active MTU (ibv_devinfo) must be the largest IB MTU the netdev's Ethernet MTU carries."""
    for name in sorted(ctx.fabric.hosts):
        host = ctx.fabric.hosts[name]
        for netdev in sorted(host.nics):
            nic = host.nics[netdev]
            if not _roce(nic) or nic.active_mtu is None or nic.mtu is None:
                continue
            allowed = roce_active_mtu(nic.mtu)
            if allowed is None or nic.active_mtu >= min(allowed, IB_MTUS[0]):
                continue
            try:
                dev, name_q = hs.q(hs.rdma_dev(nic.rdma_dev or "")), hs.q(hs.netdev(nic.netdev))
                commands: tuple[str, ...] = (
                    "# the RoCE MTU follows the netdev MTU on every MTU change; setting it again re-derives it",
                    f"ip link set dev {name_q} mtu {int(nic.mtu)}",
                    f"ibv_devinfo -d {dev} | grep -E 'max_mtu|active_mtu'",
                )
            except UsageError as e:
                commands = (f"# not rendered for {nic.netdev!r}: {' '.join(str(e).split())}",)
            yield Finding(
                check="HOST-ROCE-MTU",
                severity=Severity.WARNING,
                subject={"kind": "nic", "id": nic.id},
                message=f"{nic.id} ({nic.netdev}) RoCE active MTU {nic.active_mtu} is below the {allowed} its "
                f"Ethernet MTU {nic.mtu} carries",
                evidence={
                    "a": {
                        "device": nic.host,
                        "nic": nic.id,
                        "netdev": nic.netdev,
                        "mtu": nic.mtu,
                        "active_mtu": nic.active_mtu,
                        "expected_active_mtu": allowed,
                    }
                },
                fix=(Fix(nic.host, commands),),
                impact={
                    "summary": f"RDMA messages are cut into {nic.active_mtu}-byte packets instead of {allowed}: more "
                    "headers and packets per byte for this NIC and every peer it talks to (the path MTU is the "
                    "smaller end's)"
                },
                entities=(nic.id,),
            )


def _kernel(release: str | None) -> tuple[int, int] | None:
    parts = (release or "").split(".")
    try:
        return int(parts[0]), int(parts[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _peermem(host: Host) -> Finding | None:
    modules = host.kernel_modules
    if (
        modules is None
        or not host.gpus
        or not any(_roce(n) or n.link_layer == "InfiniBand" for n in host.nics.values())
    ):
        return None
    if any(m.replace("-", "_") in PEERMEM_MODULES for m in modules):
        return None
    kernel = _kernel(host.kernel)
    dmabuf = kernel is not None and kernel >= DMABUF_KERNEL
    note = (
        f"; kernel {host.kernel} can carry GPUDirect RDMA over DMA-BUF instead, but only with NVIDIA's open GPU "
        "kernel modules: check NCCL's log shows GDRDMA"
        if dmabuf
        else ""
    )
    return Finding(
        check="HOST-PEERMEM",
        severity=Severity.WARNING if dmabuf else Severity.ERROR,
        subject={"kind": "host", "id": host.id},
        message=f"{host.name}: nvidia_peermem is not loaded, so the NICs cannot read or write GPU memory directly"
        + note,
        evidence={
            "a": {
                "device": host.name,
                "gpus": len(host.gpus),
                "kernel": host.kernel,
                "gpu_driver": host.gpu_driver,
                "nvidia_modules": sorted(m for m in modules if m.startswith(("nvidia", "nv_"))),
            }
        },
        fix=(
            Fix(
                host.name,
                (
                    "modprobe nvidia-peermem",
                    "echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf",
                    "lsmod | grep -E '^nvidia_peermem'",
                ),
            ),
        ),
        impact={
            "summary": "NCCL stages every network transfer through host memory (no GDRDMA): lower bandwidth, more "
            "latency and CPU load on this host, which slows every job that runs on it"
        },
        entities=(host.id,),
    )


def check_peermem(ctx: CheckContext) -> Iterator[Finding]:
    """A GPU host with RDMA NICs must have nvidia_peermem loaded (where its modules were collected)."""
    for name in sorted(ctx.fabric.hosts):
        found = _peermem(ctx.fabric.hosts[name])
        if found is not None:
            yield found


CHECKS = (
    CheckSpec(
        "HOST-GID",
        "The GID NCCL uses on a RoCE NIC is missing, RoCE v1 or link-local",
        "NCCL connects queue pairs with that GID: a v1 or fe80:: GID is not routed across a leaf-spine fabric and a "
        "missing one fails the connection, so the job errors out or falls back to sockets.",
        "Leave NCCL_IB_GID_INDEX unset (recent NCCL picks the RoCE v2 IPv4 GID on each NIC) or set it to the "
        "index show_gids lists as v2 with the NIC's IPv4 address; a NIC without one needs its RoCE IPv4 address.",
        check_gid,
    ),
    CheckSpec(
        "HOST-ROCE-MTU",
        "A NIC's RoCE active MTU is below what its Ethernet MTU allows",
        "RDMA traffic of the NIC and of every peer it talks to uses the smaller path MTU: more packets per byte.",
        "Set the netdev MTU again (ip link set dev <if> mtu <mtu>) so the RoCE MTU is re-derived; verify "
        "active_mtu with ibv_devinfo.",
        check_roce_mtu,
    ),
    CheckSpec(
        "HOST-PEERMEM",
        "nvidia_peermem is not loaded on a GPU host with RDMA NICs",
        "Without it (or DMA-BUF with the open GPU modules) the NIC cannot reach GPU memory: no GPUDirect RDMA.",
        "modprobe nvidia-peermem and load it at boot (/etc/modules-load.d); judged only where lsmod was collected.",
        check_peermem,
    ),
)
