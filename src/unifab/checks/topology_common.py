"""Names the topology checks share: rails of leaves and host NICs, and the switch commands that verify a cable.

A leaf's rail is the ``-r<i>`` suffix of its name (``leaf-su1-r3``, ``ib-leaf-r3``). A host NIC's rail is the
index of the GPU whose closest NIC it is (``Gpu.nic``), else the number in its name (``mlx5_<i>``, ``eth<i>``).

Rail membership is read from the cables, planned (``plan/cabling.csv``) or seen by LLDP, whichever end saw
them: a NIC planned to a rail leaf is a rail NIC even when that leaf was not collected. A NIC the cables say
nothing about is neither a rail NIC nor a non-rail one (:func:`cabled_nics` tells the two apart).
"""

from __future__ import annotations

import re

from unifab.model import Endpoint, Fabric, Nic
from unifab.render.switch_cli import for_os

__all__ = [
    "DARK_OPERSTATES",
    "DARK_PORT_STATES",
    "cabled_nics",
    "dark_reason",
    "host_port_dark",
    "leaf_rail",
    "lldp_verify",
    "nic_rail",
    "rail_nics",
]

_LEAF_RAIL = re.compile(r"-r(\d+)$")
_NIC_INDEX = (re.compile(r"^mlx5_(\d+)$"), re.compile(r"^eth(\d+)$"))
# RDMA port states (sysfs ``ports/1/state``, ibv_devinfo ``PORT_*``) of a port without link: no carrier on RoCE,
# no physical link on InfiniBand. INIT and ARMED are an IB port with light that waits for the subnet manager.
DARK_PORT_STATES = frozenset({"DOWN"})
# netdev operstates (`ip link` ``state``) of a link that carries nothing
DARK_OPERSTATES = frozenset({"DOWN", "LOWERLAYERDOWN", "NOTPRESENT"})


def host_port_dark(nic: Nic) -> bool:
    """The NIC's port has no link; ``False`` when up or when nothing collected says (see :func:`dark_reason`)."""
    return dark_reason(nic) is not None


def dark_reason(nic: Nic) -> str | None:
    """Why the NIC's port is dark, or ``None`` when it is not (or nothing collected says).

    Dark is: the RDMA port DOWN (sysfs / ibv_devinfo); else, on an Ethernet (RoCE) port or one whose link layer
    is unknown, the netdev without carrier in ``ip -d link`` (``NO-CARRIER``, no ``LOWER_UP``), or, when neither
    the carrier nor the RDMA port state was read, an operstate of DOWN / LOWERLAYERDOWN / NOTPRESENT. The
    netdev never overrules an InfiniBand port: IPoIB has no carrier while the port waits for the subnet manager
    (INIT, ARMED), which has light.
    """
    if nic.port_state is not None and nic.port_state.upper() in DARK_PORT_STATES:
        return f"RDMA port {nic.port_state}"
    if nic.link_layer == "InfiniBand":
        return None
    state = f"ip link state {nic.operstate}" if nic.operstate else "ip link"
    if nic.carrier is False:
        return f"no carrier: {state}, RDMA port {nic.port_state or 'state not collected'}"
    if nic.carrier is None and nic.port_state is None and (nic.operstate or "").upper() in DARK_OPERSTATES:
        return f"{state}, RDMA port state not collected"
    return None


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
    when the plan and LLDP disagree, as on a swapped cable). The leaf need not have been collected: the
    plan, or the host's own LLDP, names it.
    """
    out: dict[str, dict[str, int]] = {}
    for lk in sorted(fabric.links, key=lambda k: ("plan" not in k.sources, k.id)):
        for nic_end, leaf_end in ((lk.a, lk.b), (lk.b, lk.a)):
            nic = fabric.nic_at(nic_end)
            rail = leaf_rail(leaf_end.node)
            if nic is None or rail is None or leaf_end.node in fabric.hosts:
                continue
            out.setdefault(nic.host, {}).setdefault(nic.rdma_dev or nic.netdev, rail)
    return out


def cabled_nics(fabric: Fabric) -> dict[str, set[str]]:
    """host -> RDMA devices (or netdevs) of its NICs that some cable, planned or seen, names (one pass).

    A NIC no cable names is unknown to the topology checks: they neither count it as a rail NIC nor
    accuse it of being a non-rail one.
    """
    out: dict[str, set[str]] = {}
    for lk in fabric.links:
        for end in (lk.a, lk.b):
            nic = fabric.nic_at(end)
            if nic is not None:
                out.setdefault(nic.host, set()).add(nic.rdma_dev or nic.netdev)
    return out
