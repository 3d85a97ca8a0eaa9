"""Write a twin's InfiniBand network into its bundle (the writer's IB part; the formats are :mod:`twin.ib_files`).

Besides the ``ib/`` files and the hosts' ``ibstat``, an IB-backend twin's ``fabric.yaml`` names the SL its jobs
must use (``qos.nccl.sl``), and the plan (``plan/cabling.csv``) holds the IB cables with the RoCE ones. An
IB-backend host also gets the GPU side of its topology, ``nvidia-smi topo -m`` and NCCL's topology XML, with its
rail HCAs as the NICs: which GPU sits under which HCA's PCIe switch (the ``ib-affinity`` scenario moves one off).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from unifab import layout
from unifab.errors import load_yaml
from unifab.parse.plan import cabling
from unifab.twin.cluster import Cluster
from unifab.twin.files import write_text
from unifab.twin.hardware import eui64
from unifab.twin.host_files import gpu_topology
from unifab.twin.ib_cluster import IB_SPEED, IB_WIDTH, IbNet
from unifab.twin.ib_files import ib_planned_cables, write_ib
from unifab.twin.intent_file import intent_yaml

__all__ = ["ib_cables", "ib_intent_yaml", "write_ib_network"]


def ib_cables(net: IbNet) -> tuple[cabling.PlannedCable, ...]:
    return tuple(cabling.PlannedCable(a, ap, z, zp, m) for a, ap, z, zp, m in ib_planned_cables(net))


def ib_intent_yaml(sl: int) -> str:
    """The twin's intent with ``qos.nccl.sl`` set: the SL an IB backend's jobs must use."""
    doc = load_yaml(intent_yaml(), "the twin's intent")
    doc.setdefault("qos", {}).setdefault("nccl", {})["sl"] = sl
    return str(yaml.safe_dump(doc, sort_keys=False))


def write_ib_network(cluster: Cluster, root: Path) -> None:
    net = cluster.ib
    if net is None:
        return
    others = {
        host: tuple((nic.rdma_dev, eui64(nic).replace(":", "")) for nic in nics)
        for host, nics in cluster.hosts.items()
        if cluster.fabric == "mixed"
    }
    write_ib(net, root, others, host_files=cluster.fabric == "ib")
    if cluster.fabric == "ib":
        _write_gpu_topology(cluster, net, root)
    if net.sl is not None:
        write_text(root / layout.INTENT, ib_intent_yaml(net.sl))


# a port's data rate in Mb/s by width and speed, as ibstat's "Rate" (4X HDR: 200 Gb/s)
_LANES = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}
_LANE_MBPS = {"SDR": 2500, "DDR": 5000, "QDR": 10000, "FDR": 14062, "EDR": 25000, "HDR": 50000, "NDR": 100000}


def _write_gpu_topology(cluster: Cluster, net: IbNet, root: Path) -> None:
    """Each host's ``nvidia-smi topo -m`` and NCCL XML: rail HCA ``i`` under GPU ``i``'s PCIe switch."""
    rate = _LANES[IB_WIDTH] * _LANE_MBPS[IB_SPEED]  # the planned rate: a degraded link does not move a GPU
    rails: dict[str, list[tuple[int, str]]] = {}
    for hca in net.hcas.values():
        if hca.rail is not None:
            rails.setdefault(hca.host, []).append((hca.rail, hca.dev))
    for host, devs in rails.items():
        if host in cluster.uncollected:
            continue
        off_switch = tuple(sorted(cluster.gpus_off_nic_switch.get(host, ())))
        smi_topo, nccl_xml = gpu_topology(tuple((dev, rate) for _, dev in sorted(devs)), off_switch)
        write_text(root / layout.HOSTS / host / layout.NVIDIA_SMI_TOPO, smi_topo)
        write_text(root / layout.HOSTS / host / layout.NCCL_TOPO, nccl_xml)
