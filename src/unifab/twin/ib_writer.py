"""Write a twin's InfiniBand network into its bundle (the writer's IB part; the formats are :mod:`twin.ib_files`).

Besides the ``ib/`` files and the hosts' ``ibstat``, an IB-backend twin's ``fabric.yaml`` names the SL its jobs
must use (``qos.nccl.sl``), and the plan (``plan/cabling.csv``) holds the IB cables with the RoCE ones.
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
from unifab.twin.ib_cluster import IbNet
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
    if net.sl is not None:
        write_text(root / layout.INTENT, ib_intent_yaml(net.sl))
