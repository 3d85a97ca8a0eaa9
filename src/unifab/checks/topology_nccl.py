"""What NCCL assumes of a host: each GPU next to its own rail NIC, and every rail NIC in the job's NCCL_IB_HCA.

* **TOPO-PCIE-AFFINITY** — per host, from the GPU↔NIC relations ``nvidia-smi topo -m`` (or the NCCL topology
  XML) reports (``Gpu.nic``, ``Gpu.nic_relation``): a GPU whose closest NIC is farther than ``PXB`` (``PHB``,
  ``NODE``, ``SYS``), or two GPUs whose closest NIC is the same one while a rail NIC is nobody's closest. NCCL
  uses GPUDirect RDMA only up to ``NCCL_NET_GDR_LEVEL`` (``PXB`` by default): beyond it the GPU's traffic is
  staged through host memory, and a NIC two GPUs share gives each half its bandwidth. One finding per host
  naming every GPU and NIC involved; a rail NIC is one cabled (planned or seen) to a rail leaf, so the idle
  half of the check needs cabling data.
* **TOPO-NCCL-HCA** — per job, ``NCCL_IB_HCA`` as NCCL reads it (comma list of ``name[:port]``; a name is a
  prefix unless the list starts with ``=``; ``^`` excludes the listed devices; see
  :func:`unifab.parse.sched.nccl_env.device_list`) against the job's hosts: a rail NIC it leaves out, or a
  non-rail NIC (frontend, storage) it lets in. NICs are single-port RoCE/IB functions, read as port 1. Jobs
  without a known environment or without ``NCCL_IB_HCA`` (NCCL then uses every device) are skipped.
  Rail membership comes from the cables, planned or seen (:func:`unifab.checks.topology_common.rail_nics`), so a
  leaf that was not collected does not turn its NICs into non-rail ones; a NIC is non-rail only when a cable
  takes it somewhere else than a rail leaf. A NIC no cable names is not judged, and the fix keeps it where the
  job's list selects it.

Both are linear: one pass over the links builds the rail NIC index, then each host or job host is visited once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from unifab.checks.context import CheckContext
from unifab.checks.registry import CheckSpec
from unifab.checks.topology_common import cabled_nics, rail_nics
from unifab.model import Finding, Fix, Gpu, Host, Job, Severity
from unifab.parse.sched.nccl_env import NcclDeviceList, device_list
from unifab.render.host_script import q

RDMA_DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

__all__ = ["CHECKS", "NEAR", "NIC_PORT", "RELATION_TEXT", "check_nccl_hca", "check_pcie_affinity"]

NEAR = ("PIX", "PXB")  # within NCCL's default GPUDirect RDMA level
NIC_PORT = 1
RELATION_TEXT = {
    "PHB": "crosses the CPU's PCIe host bridge (PHB)",
    "NODE": "crosses PCIe host bridges inside its NUMA node (NODE)",
    "SYS": "crosses the CPU root complex and the socket interconnect (SYS)",
}


def _far(gpu: Gpu) -> bool:
    """The GPU's closest NIC is beyond PXB (an unknown relation is not judged)."""
    return gpu.nic is not None and gpu.nic_relation is not None and gpu.nic_relation not in NEAR


def _affinity_finding(host: Host, rails: dict[str, int]) -> Finding | None:
    gpus = [g for _, g in sorted(host.gpus.items()) if g.nic is not None]
    if not gpus:
        return None
    users: dict[str, list[int]] = {}
    for g in gpus:
        users.setdefault(g.nic or "", []).append(g.index)
    shared = {nic: idx for nic, idx in users.items() if len(idx) > 1}
    idle = sorted((nic for nic in rails if nic not in users), key=lambda n: (rails[n], n))
    far = [g for g in gpus if _far(g)]
    if not far and not (shared and idle):
        return None
    problems = [f"GPU {g.index}'s closest NIC {g.nic} is {g.nic_relation}, not PIX/PXB" for g in far]
    if shared and idle:
        problems += [f"GPUs {', '.join(map(str, idx))} share {nic}" for nic, idx in sorted(shared.items())]
        problems.append(f"rail NIC{'s' if len(idle) > 1 else ''} {', '.join(idle)} idle{'s' if len(idle) == 1 else ''}")
    consequences = [
        f"GPU {g.index}'s traffic {RELATION_TEXT.get(g.nic_relation or '', 'leaves its PCIe switch')}: NCCL drops "
        "GPUDirect RDMA for it (beyond NCCL_NET_GDR_LEVEL=PXB) and halves its bandwidth or uses another rail"
        for g in far
    ]
    if shared and idle:
        consequences.append(
            f"GPUs sharing one NIC get half its bandwidth each while {', '.join(idle)} carries nothing: the host's "
            "collectives run at the shared NIC's pace"
        )
    involved_nics = sorted({g.nic for g in far if g.nic} | set(shared) | set(idle))
    return Finding(
        check="TOPO-PCIE-AFFINITY",
        severity=Severity.ERROR,
        subject={"kind": "host", "id": host.id},
        message=f"{host.name}: {'; '.join(problems)}",
        evidence={
            "a": {
                "device": host.name,
                "gpus": [
                    {"gpu": g.id, "pci_bus_id": g.pci_bus_id, "nic": g.nic, "relation": g.nic_relation}
                    for g in gpus
                    if g in far or (g.nic in shared and idle)
                ],
            },
            "b": {
                "device": host.name,
                "shared_nics": dict(sorted(shared.items())) if idle else {},
                "idle_rail_nics": idle if shared else [],
                "rail_nics": sorted(rails, key=lambda n: (rails[n], n)),
            },
            "plan": ["each GPU's closest NIC is its own rail NIC, PIX or PXB"],
            "discovered": [f"GPU {g.index} -> {g.nic} ({g.nic_relation})" for g in gpus if g in far or g.nic in shared],
        },
        fix=(Fix(host.name, ("nvidia-smi topo -m", "lspci -tv")),),
        impact={
            "summary": "; ".join(consequences),
            "action": "seat each GPU and its rail NIC under one PCIe switch (check riser/slot and BIOS PCIe "
            "bifurcation), or give NCCL a corrected NCCL_TOPO_FILE",
        },
        entities=(*(g.id for g in far), *(f"nic:{host.name}:{n}" for n in involved_nics)),
    )


def check_pcie_affinity(ctx: CheckContext) -> Iterator[Finding]:
    """GPUs whose closest NIC is beyond PXB, or GPUs sharing a NIC while a rail NIC idles."""
    rails = rail_nics(ctx.fabric)
    for name in sorted(ctx.fabric.hosts):
        finding = _affinity_finding(ctx.fabric.hosts[name], rails.get(name, {}))
        if finding is not None:
            yield finding


def _reads_as(hca: NcclDeviceList) -> dict[str, Any]:
    return {
        "exclude": hca.exclude,
        "exact": hca.exact,
        "devices": [d.name + (f":{d.port}" if d.port is not None else "") for d in hca.devices],
    }


def _job_finding(
    ctx: CheckContext, job: Job, raw: str, rails: dict[str, dict[str, int]], cabled: dict[str, set[str]]
) -> Finding | None:
    problems: list[str] = []
    hca = device_list("NCCL_IB_HCA", raw, problems)
    dropped: dict[str, list[str]] = {}  # rail NIC -> hosts where the list leaves it out
    extra: dict[str, list[str]] = {}  # non-rail NIC -> hosts where the list lets it in
    unjudged: dict[str, list[str]] = {}  # selected NIC no cable names -> hosts
    rail_of: dict[str, int] = {}
    checked = 0
    for name in job.hosts:
        host = ctx.fabric.hosts.get(name)
        host_rails = rails.get(name)
        if host is None or not host_rails:
            continue
        checked += 1
        rail_of.update(host_rails)
        known = cabled.get(name, set())
        for nic in host.nics.values():
            dev = nic.rdma_dev or nic.netdev
            used = hca.selects(dev, NIC_PORT)
            if dev in host_rails and not used:
                dropped.setdefault(dev, []).append(name)
            elif dev not in host_rails and used and nic.rdma_dev is not None:
                (extra if dev in known else unjudged).setdefault(dev, []).append(name)
    if not dropped and not extra:
        return None
    ordered = sorted(rail_of, key=lambda n: (rail_of[n], n))
    kept = sorted(d for d in unjudged if d not in rail_of)  # no cable says what they are: the fix keeps them
    parts = [
        f"leaves out rail NIC {dev} (rail {rail_of[dev]}) on {len(hosts)} of {checked} hosts"
        for dev, hosts in sorted(dropped.items(), key=lambda kv: (rail_of[kv[0]], kv[0]))
    ]
    parts += [f"includes non-rail NIC {dev} on {len(hosts)} of {checked} hosts" for dev, hosts in sorted(extra.items())]
    consequences = []
    if dropped:
        consequences.append(
            f"NCCL runs on {len(ordered) - len(dropped)} of {len(ordered)} rails: the GPU paired with "
            f"{' and '.join(sorted(dropped))} on each host sends through another GPU's NIC (halving both GPUs' "
            "bandwidth), and the left-out rail carries nothing from the job"
        )
    if extra:
        consequences.append(
            f"NCCL may put collective traffic on {', '.join(sorted(extra))}, off the rail fabric: a network without "
            "the lossless RoCE class, shared with storage and management traffic"
        )
    wanted = "=" + ",".join(f"{dev}:{NIC_PORT}" for dev in (*ordered, *kept))
    return Finding(
        check="TOPO-NCCL-HCA",
        severity=Severity.ERROR,
        subject={"kind": "job", "id": job.id},
        message=f"{job.id} ({job.name or 'unnamed'}): NCCL_IB_HCA={raw!r} {'; '.join(parts)}",
        evidence={
            "a": {"job": job.id, "nccl_ib_hca": raw, "reads_as": _reads_as(hca), "problems": problems},
            "b": {
                "rail_nics": ordered,
                "left_out": dict(sorted(dropped.items())),
                "non_rail_included": dict(sorted(extra.items())),
                "not_judged": dict(sorted(unjudged.items())),
                "hosts_checked": checked,
            },
            "plan": [f"rail NICs {', '.join(ordered)}"],
            "discovered": [
                f"NCCL_IB_HCA={raw} selects " + ", ".join(sorted({d for d in ordered if d not in dropped} | set(extra)))
            ],
        },
        fix=(Fix(job.id, (_export_hca(wanted, [*ordered, *kept]),)),),
        impact={"summary": "; ".join(consequences), "hosts": list(job.hosts)},
        entities=(job.id,),
    )


def _export_hca(wanted: str, devices: list[str]) -> str:
    """The ``export NCCL_IB_HCA=...`` line, shell-quoted; RDMA device names come from hosts, so one that is
    not a kernel-style device name (letters, digits, ``_.-``) turns the line into a comment naming it."""
    bad = [d for d in devices if RDMA_DEVICE_NAME.fullmatch(d) is None]
    if bad:
        return f"# NCCL_IB_HCA not written: {', '.join(map(repr, bad))} is not an RDMA device name"
    return f"export NCCL_IB_HCA={q(wanted)}"


def check_nccl_hca(ctx: CheckContext) -> Iterator[Finding]:
    """A job's NCCL_IB_HCA must select every rail NIC of its hosts and nothing else."""
    rails, cabled = rail_nics(ctx.fabric), cabled_nics(ctx.fabric)
    for job_id in sorted(ctx.fabric.jobs):
        job = ctx.fabric.jobs[job_id]
        if not job.env_known or not job.nccl_ib_hca:
            continue
        finding = _job_finding(ctx, job, job.nccl_ib_hca, rails, cabled)
        if finding is not None:
            yield finding


CHECKS = (
    CheckSpec(
        "TOPO-PCIE-AFFINITY",
        "A GPU's closest NIC is beyond PXB (PHB, NODE, SYS), or two GPUs share one NIC while a rail NIC idles",
        "NCCL drops GPUDirect RDMA beyond PXB and pairs the GPU with a far or shared NIC: its bandwidth halves "
        "or its traffic leaves its rail.",
        "Seat each GPU and its rail NIC under one PCIe switch (slot, riser, BIOS bifurcation); confirm with "
        "nvidia-smi topo -m.",
        check_pcie_affinity,
    ),
    CheckSpec(
        "TOPO-NCCL-HCA",
        "A job's NCCL_IB_HCA leaves out a rail NIC or lets in a non-rail (frontend) NIC",
        "NCCL runs on fewer rails than the hosts have, or sends collectives over a network without the lossless "
        "RoCE class. Rails come from the plan or LLDP, so a leaf that was not collected still counts its NICs as "
        "rail NICs; a NIC no cable names is not judged.",
        "List every rail NIC exactly: NCCL_IB_HCA==mlx5_0:1,...; mind that names without '=' are prefixes "
        "(mlx5_1 also selects mlx5_10).",
        check_nccl_hca,
    ),
)
