"""PCIe facts of a host that cap or break RDMA: a NIC or GPU trained below its link capability (HOST-PCIE-DOWNGRADED)
and ACS redirect on a PCIe bridge between a GPU and its NIC (HOST-ACS).

A device is judged by its own link (lspci ``LnkSta`` against its ``LnkCap``, else nvidia-smi's current against its
max): a switch downstream port that trained at Gen4 because the device behind it is a Gen4 card is not a downgrade
of that device. GPUs lower their PCIe speed when idle (nvidia-smi: "these may be reduced when the GPU is not in
use"), so a GPU that is only slower than its capability is a warning to confirm under load; lost lanes never come
back by themselves and are an error, as any downgrade of an RDMA NIC is.

Bus addresses come from the device's own output: each one is re-validated (:func:`unifab.parse.host.lspci.
normalize_bdf` must give it back unchanged) and shell-quoted before it enters a command.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from unifab.checks.context import CheckContext
from unifab.checks.registry import CheckSpec
from unifab.model import Finding, Fix, Gpu, Host, Nic, PcieLink, Severity
from unifab.parse.host.lspci import normalize_bdf
from unifab.render.host_script import q

__all__ = ["CHECKS", "P2P_RELATIONS", "check_acs", "check_pcie_downgraded", "pci_path", "safe_bdf"]

P2P_RELATIONS = ("PIX", "PXB")  # nvidia-smi relations whose GPU<->NIC traffic stays below the CPU's root ports
_MAX_DEPTH = 32  # PCIe allows far fewer nested bridges; bounds a cyclic parent map from hostile input


def safe_bdf(bdf: str | None) -> str | None:
    """``bdf`` when it is a canonical PCI address (``0000:1a:00.0``), else None (never put in a command)."""
    return bdf if bdf is not None and normalize_bdf(bdf) == bdf else None


def _below_cap(link: PcieLink) -> tuple[bool, bool]:
    """(slower, narrower) than the link's capability."""
    slower = link.speed_gts is not None and link.max_speed_gts is not None and link.speed_gts < link.max_speed_gts
    narrower = link.width is not None and link.max_width is not None and link.width < link.max_width
    if link.downgraded and not (slower or narrower):
        slower = True  # lspci printed "(downgraded)" where the numbers do not say which
    return slower, narrower


def _link_text(link: PcieLink) -> str:
    def one(speed: float | None, width: int | None) -> str:
        return f"{'?' if speed is None else f'{speed:g}'} GT/s x{'?' if width is None else width}"

    return f"{one(link.speed_gts, link.width)} of {one(link.max_speed_gts, link.max_width)}"


def _evidence(host: Host, kind: str, ident: str, bdf: str | None, link: PcieLink) -> dict[str, Any]:
    return {
        "a": {
            "device": host.name,
            kind: ident,
            "pci_address": bdf,
            "speed_gts": link.speed_gts,
            "width": link.width,
            "max_speed_gts": link.max_speed_gts,
            "max_width": link.max_width,
            "downgraded": link.downgraded,
        }
    }


def _reseat(host: str, bdf: str | None, verify: str) -> Fix:
    note = (
        "# no setting retrains a link below its capability: reseat the card (and its riser or cable), check the "
        "slot's PCIe link speed in the BIOS (Auto / the card's generation), then verify"
    )
    if bdf is None:
        return Fix(host, (note, "# the device's PCI address is unknown or malformed: find it with lspci -D"))
    return Fix(host, (note, verify))


def _nic_finding(host: Host, nic: Nic, link: PcieLink) -> Finding | None:
    slower, narrower = _below_cap(link)
    if not (slower or narrower):
        return None
    bdf = safe_bdf(nic.pci_address)
    rdma = nic.rdma_dev is not None
    verify = f"lspci -vvv -s {q(bdf)} | grep -E 'LnkCap:|LnkSta:'" if bdf else ""
    return Finding(
        check="HOST-PCIE-DOWNGRADED",
        severity=Severity.ERROR if rdma else Severity.WARNING,
        subject={"kind": "nic", "id": nic.id},
        message=f"{nic.id} ({nic.netdev}) PCIe link runs at {_link_text(link)}"
        + (" (fewer lanes)" if narrower else " (slower)"),
        evidence=_evidence(host, "nic", nic.id, nic.pci_address, link),
        fix=(_reseat(host.name, bdf, verify),),
        impact={
            "summary": "the NIC cannot move line rate over PCIe: RDMA throughput and every collective through "
            "this rail are capped below the network's speed"
        },
        entities=(nic.id,),
    )


def _gpu_finding(host: Host, gpu: Gpu, link: PcieLink) -> Finding | None:
    slower, narrower = _below_cap(link)
    if not (slower or narrower):
        return None
    bdf = safe_bdf(gpu.pci_bus_id)
    fields = "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"
    verify = f"nvidia-smi -i {q(bdf)} --query-gpu={fields} --format=csv" if bdf else ""
    idle = "" if narrower else "; GPUs lower their PCIe speed when idle, so confirm it while the GPU is busy"
    return Finding(
        check="HOST-PCIE-DOWNGRADED",
        severity=Severity.ERROR if narrower else Severity.WARNING,
        subject={"kind": "gpu", "id": gpu.id},
        message=f"{gpu.id} PCIe link runs at {_link_text(link)}" + (" (fewer lanes)" if narrower else "") + idle,
        evidence=_evidence(host, "gpu", gpu.id, gpu.pci_bus_id, link),
        fix=(_reseat(host.name, bdf, verify),),
        impact={
            "summary": "GPUDirect RDMA between this GPU and its NIC, and host-device copies, run below the link's "
            "capacity: the GPU's rail is slower than its peers' and stalls the collectives"
        },
        entities=(gpu.id,),
    )


def check_pcie_downgraded(ctx: CheckContext) -> Iterator[Finding]:
    """Every NIC and GPU must run its PCIe link at the speed and width it is capable of."""
    for name in sorted(ctx.fabric.hosts):
        host = ctx.fabric.hosts[name]
        for netdev in sorted(host.nics):
            nic = host.nics[netdev]
            if nic.pcie is not None and (found := _nic_finding(host, nic, nic.pcie)) is not None:
                yield found
        for index in sorted(host.gpus):
            gpu = host.gpus[index]
            if gpu.pcie is not None and (found := _gpu_finding(host, gpu, gpu.pcie)) is not None:
                yield found


def pci_path(parents: dict[str, str], a: str, b: str) -> tuple[str, ...]:
    """The bridges between PCI functions ``a`` and ``b``: each one's upstream bridges up to (not including) the
    first they share. Where the two chains do not meet in the capture, every known bridge above each."""
    chains = []
    for start in (a, b):
        chain: list[str] = []
        node = parents.get(start)
        while node is not None and node not in chain and len(chain) < _MAX_DEPTH:
            chain.append(node)
            node = parents.get(node)
        chains.append(chain)
    shared = set(chains[0]) & set(chains[1])
    return tuple(x for chain in chains for x in chain if x not in shared)


def _acs_pairs(host: Host) -> list[tuple[Gpu, Nic, list[str]]]:
    """(GPU, its NIC, ACS-redirecting bridges between them) for GPUs whose NIC is below the same PCIe switches."""
    redirect = host.acs_redirect or {}
    by_rdma = {n.rdma_dev: n for n in host.nics.values() if n.rdma_dev is not None}
    out = []
    for index in sorted(host.gpus):
        gpu = host.gpus[index]
        nic = by_rdma.get(gpu.nic) if gpu.nic is not None else None
        if nic is None or gpu.pci_bus_id is None or nic.pci_address is None:
            continue
        if gpu.nic_relation is not None and gpu.nic_relation not in P2P_RELATIONS:
            continue  # the path crosses the CPU's host bridge: ACS on switch ports is not what decides it
        bridges = [b for b in pci_path(host.pci_parents, gpu.pci_bus_id, nic.pci_address) if b in redirect]
        if bridges:
            out.append((gpu, nic, bridges))
    return out


def _acs_fix(host: Host, bridges: list[str]) -> Fix:
    lines = [
        "# clear ACSCtl on each bridge between a GPU and its NIC (NCCL's troubleshooting guide); it does not "
        "survive a reboot: disable ACS (PCIe ACS / IOMMU ACS) in the BIOS, or boot with "
        "pci=disable_acs_redir=<bdf>;<bdf>, or run this at every boot"
    ]
    for bdf in bridges:
        safe = safe_bdf(bdf)
        if safe is None:
            lines.append(f"# not printed: {bdf!r} is not a PCI address")
            continue
        lines.append(f"setpci -v -s {q(safe)} ECAP_ACS+0x6.w=0000")
        lines.append(f"lspci -vvv -s {q(safe)} | grep ACSCtl")
    return Fix(host.name, tuple(lines))


def check_acs(ctx: CheckContext) -> Iterator[Finding]:
    """No PCIe bridge between a GPU and its NIC may redirect peer-to-peer traffic (ACS ReqRedir/CmpltRedir/...)."""
    for name in sorted(ctx.fabric.hosts):
        host = ctx.fabric.hosts[name]
        if not host.acs_redirect:
            continue  # not collected, or no bridge redirects
        pairs = _acs_pairs(host)
        if not pairs:
            continue
        redirect = host.acs_redirect
        bridges = sorted({b for _, _, bs in pairs for b in bs})
        yield Finding(
            check="HOST-ACS",
            severity=Severity.ERROR,
            subject={"kind": "host", "id": host.id},
            message=f"{host.name}: ACS redirects peer-to-peer traffic on {len(bridges)} PCIe bridge(s) between "
            f"{len(pairs)} GPU(s) and their NICs ("
            + ", ".join(f"GPU{g.index}↔{n.rdma_dev} via {' '.join(bs)}" for g, n, bs in pairs[:4])
            + (", ..." if len(pairs) > 4 else "")
            + ")",
            evidence={
                "a": {
                    "device": host.name,
                    "bridges": {b: list(redirect[b]) for b in bridges},
                    "pairs": [
                        {"gpu": g.id, "nic": n.id, "relation": g.nic_relation, "bridges": bs} for g, n, bs in pairs
                    ],
                }
            },
            fix=(_acs_fix(host, bridges),),
            impact={
                "summary": "GPUDirect RDMA reads and writes detour through the CPU's root complex (or fail): NCCL "
                "bandwidth drops, or the job hangs on the first peer-to-peer transfer",
                "gpus": [g.id for g, _, _ in pairs],
            },
            entities=(host.id,),
        )


CHECKS = (
    CheckSpec(
        "HOST-PCIE-DOWNGRADED",
        "A NIC or GPU trained its PCIe link below its capability (speed or width)",
        "A NIC below its PCIe capacity cannot feed its port at line rate, and a GPU below it slows its rail: the "
        "slowest rank sets the pace of every collective.",
        "Reseat the card, riser or cable and check the slot's PCIe setting in the BIOS; verify with lspci -vvv -s "
        "<bdf> (LnkSta against LnkCap) or nvidia-smi --query-gpu=pcie.link.* under load (idle GPUs lower the speed).",
        check_pcie_downgraded,
    ),
    CheckSpec(
        "HOST-ACS",
        "ACS redirect is on for a PCIe bridge between a GPU and its NIC",
        "Peer-to-peer requests are sent up to the root complex: GPUDirect RDMA loses most of its bandwidth or hangs.",
        "Clear ACSCtl on those bridges (setpci -s <bdf> ECAP_ACS+0x6.w=0000, as NCCL's troubleshooting guide "
        "does), and for good in the BIOS or with pci=disable_acs_redir=<bdf>.",
        check_acs,
    ),
)
