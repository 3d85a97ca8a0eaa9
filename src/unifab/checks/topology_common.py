"""Names the topology checks share: rails of leaves and host NICs, and the switch commands that verify a cable.

A leaf's rail is the ``-r<i>`` suffix of its name (``leaf-su1-r3``, ``ib-leaf-r3``). A host NIC's rail is the
index of the GPU whose closest NIC it is (``Gpu.nic``), else the number in its name (``mlx5_<i>``, ``eth<i>``).
"""

from __future__ import annotations

import re

from unifab.model import Endpoint, Fabric
from unifab.render.switch_cli import for_os

__all__ = ["leaf_rail", "lldp_verify", "nic_rail", "rail_nics"]

_LEAF_RAIL = re.compile(r"-r(\d+)$")
_NIC_INDEX = (re.compile(r"^mlx5_(\d+)$"), re.compile(r"^eth(\d+)$"))


def leaf_rail(switch: str) -> int | None:
    """The rail of a leaf named ``...-r<i>``; ``None`` for any other name."""
    m = _LEAF_RAIL.search(switch)
    return int(m.group(1)) if m else None


def nic_rail(fabric: Fabric, end: Endpoint) -> int | None:
    """The rail a host NIC belongs to: its GPU's index (``Gpu.nic``), else the number in its name."""
    nic = fabric.nic_at(end)
    host = fabric.hosts.get(end.node)
    names = [end.port]
    if nic is not None and nic.rdma_dev is not None:
        names.insert(0, nic.rdma_dev)
        if host is not None:
            for gpu in host.gpus.values():
                if gpu.nic == nic.rdma_dev:
                    return gpu.index
    for name in names:
        for pattern in _NIC_INDEX:
            if (m := pattern.match(name)) is not None:
                return int(m.group(1))
    return None


def lldp_verify(fabric: Fabric, switch: str, port: str) -> tuple[str, ...]:
    """The commands that show what is cabled to ``switch``'s ``port`` after recabling, in its platform's dialect.

    A switch that was not collected has no known OS: the answer says so instead of guessing one.
    """
    found = fabric.switches.get(switch)
    return for_os(found.os if found is not None else None, switch).lldp_neighbors(switch, port)


def rail_nics(fabric: Fabric) -> dict[str, dict[str, int]]:
    """host -> {RDMA device: rail} of every NIC planned or seen cabled to a rail leaf (one pass over links).

    A NIC on a rail-named leaf is a rail NIC whatever its own name; the rail is the leaf's (the plan's
    when the plan and LLDP disagree, as on a swapped cable).
    """
    out: dict[str, dict[str, int]] = {}
    for lk in sorted(fabric.links, key=lambda k: ("plan" not in k.sources, k.id)):
        for nic_end, leaf_end in ((lk.a, lk.b), (lk.b, lk.a)):
            nic = fabric.nic_at(nic_end)
            rail = leaf_rail(leaf_end.node)
            if nic is None or rail is None or leaf_end.node not in fabric.switches:
                continue
            out.setdefault(nic.host, {}).setdefault(nic.rdma_dev or nic.netdev, rail)
    return out
