"""An InfiniBand fabric as ``ibnetdiscover`` sees it, in the model's records.

Channel adapters become host NICs named by their RDMA device (``dgx-001`` / ``mlx5_3``: NodeDescription
``"dgx-001 mlx5_3"``; an IB port has no netdev, so the RDMA device is the key), switches become
``Switch`` records of OS ``ib`` whose ports are the port numbers as text, and each cable becomes a
discovered link (source ``lldp``: the checks' word for "seen on the wire", whatever protocol saw it).
Speeds are the link's trained rate (``4xHDR`` = 200,000 Mb/s; ``1xHDR`` = 50,000), set on both ends.
Routers are treated as switches. A CA without a NodeDescription keeps its GUID id as host name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from unifab.model import Endpoint, Host, Link, Nic, Port, Switch
from unifab.parse.ib import ibnetdiscover
from unifab.parse.ib.ibnetdiscover import IbTopology

__all__ = ["DISCOVERED", "IB_FILE", "IbView", "ib_view", "merge_hosts"]

IB_FILE = "ib/ibnetdiscover.txt"
DISCOVERED = frozenset({"lldp"})


@dataclass(slots=True)
class IbView:
    hosts: dict[str, Host] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)


def ib_view(topology: IbTopology, source: str = IB_FILE) -> IbView:
    """Hosts, switches and cables of one ``ibnetdiscover`` run (linear in ports)."""
    named = ibnetdiscover.named_links(topology)
    switch_names = {node.name for node in topology.nodes if node.kind != "ca"}
    nics: dict[str, dict[str, Nic]] = {}
    ports: dict[str, dict[str, Port]] = {node.name: {} for node in topology.nodes if node.kind != "ca"}
    view = IbView()
    for lk in named:
        for node, port in ((lk.a_node, lk.a_port), (lk.b_node, lk.b_port)):
            if node in switch_names:
                ports.setdefault(node, {})[port] = Port(node, port, None, lk.rate_mbps, "up", None)
            else:
                nics.setdefault(node, {})[port] = Nic(
                    node, port, port, None, None, speed_mbps=lk.rate_mbps, link_layer="InfiniBand", port_state="ACTIVE"
                )
        view.links.append(Link(Endpoint(lk.a_node, lk.a_port), Endpoint(lk.b_node, lk.b_port), DISCOVERED))
    view.hosts = {name: Host(name, by_dev) for name, by_dev in sorted(nics.items())}
    view.switches = {name: Switch(name, "ib", source, p) for name, p in sorted(ports.items())}
    return view


def merge_hosts(hosts: dict[str, Host], ib_hosts: dict[str, Host]) -> None:
    """Add IB-only hosts, and IB NICs to hosts collected from ``hosts/`` that lack that RDMA device."""
    for name, ib_host in ib_hosts.items():
        known = hosts.get(name)
        if known is None:
            hosts[name] = ib_host
            continue
        devices = {nic.rdma_dev for nic in known.nics.values()}
        extra = {k: nic for k, nic in ib_host.nics.items() if nic.rdma_dev not in devices and k not in known.nics}
        if extra:
            hosts[name] = replace(known, nics={**known.nics, **extra})
