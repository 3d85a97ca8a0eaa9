"""Juniper Junos (``switches/<switch>/junos/``) → vendor-neutral switch model: ports and cabling.

Files read (both the CLI's JSON, ``| display json``):

* ``show-interfaces.json`` (required): ``show interfaces | display json``, read by
  :func:`unifab.parse.switch.junos.parse_interfaces_json`. Its presence says the switch runs Junos.
* ``show-lldp-neighbors-detail.json`` (optional): ``show lldp neighbors detail | display json`` (or the
  summary form), read by :func:`unifab.parse.switch.junos.parse_lldp_json`.

Mapping decisions:

* Ports are the physical Ethernet interfaces whose names are front-panel names on Junos (``et-``, ``xe-``,
  ``ge-``, ``mge-``, see :mod:`unifab.platforms.junos`); logical units (``et-0/0/1.0``), management (``em0``,
  ``bme0``), tunnels and internal interfaces are left out.
* ``mtu`` is the IP MTU: Junos reports the media MTU (the frame with its 14-byte Ethernet header), so 14 is
  taken off (``mtu 9216`` → 9202), and the fix dialect adds it back.
* ``admin_status`` ``"up"``/``"down"`` from the admin state; speed in Mb/s as the parser reads it.
* ``qos`` is ``None``: class-of-service is not read yet, so no QoS check judges a Junos port (unknown, not
  wrong); LLDP cabling, speed and MTU are judged.
* Links: local port → (the neighbour's system name without its domain, the port id when its subtype names an
  interface, else the port description).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from unifab.model import Endpoint, Link, Port, Switch
from unifab.parse.netdev import Interface
from unifab.parse.switch import junos
from unifab.platforms.junos import MEDIA_MTU_OVERHEAD, PLATFORM
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems

__all__ = ["INTERFACES_FILE", "LLDP_FILE", "junos_lldp_links", "switch_from_junos"]

INTERFACES_FILE = "show-interfaces.json"
LLDP_FILE = "show-lldp-neighbors-detail.json"
LLDP_PORT_ID_TYPES = frozenset({"ifname", "local"})


def switch_from_junos(name: str, junos_dir: SourcePath, problems: Problems) -> Switch | None:
    """Read ``junos_dir`` (``switches/<name>/junos``); ``None`` (and an input finding) without readable interfaces."""
    path = junos_dir / INTERFACES_FILE
    if not path.is_file():
        problems.missing(path, "a Junos switch needs show interfaces | display json", device=name)
        return None
    interfaces = problems.parse_file(
        path, junos.parse_interfaces_json, device=name, not_checked="the MTU checks do not see the interface not read"
    )
    if interfaces is None:
        return None
    ports = {i.name: _port(name, i) for i in interfaces if _front_panel(i)}
    return Switch(name=name, os=PLATFORM.name, config_file=problems.rel(path), ports=ports)


def _front_panel(interface: Interface) -> bool:
    return (
        interface.kind == "ethernet"
        and "." not in interface.name
        and "-" in interface.name
        and PLATFORM.port_pattern.fullmatch(interface.name) is not None
    )


def _port(switch: str, interface: Interface) -> Port:
    admin = None if interface.admin_up is None else ("up" if interface.admin_up else "down")
    mtu = interface.mtu - MEDIA_MTU_OVERHEAD if interface.mtu is not None else None
    return Port(
        switch=switch,
        name=interface.name,
        mtu=mtu,
        speed_mbps=interface.speed_mbps,
        admin_status=admin,
        qos=None,
        description=interface.description,
    )


def junos_lldp_links(name: str, junos_dir: SourcePath, problems: Problems) -> list[Link]:
    """Links from ``show-lldp-neighbors-detail.json``; ``[]`` when the file is absent or unreadable."""
    path = junos_dir / LLDP_FILE
    if not path.is_file():
        return []
    neighbors = problems.parse_file(
        path,
        junos.parse_lldp_json,
        device=name,
        not_checked="the cabling and topology checks do not see that neighbour",
    )
    if neighbors is None:
        return []
    links: list[Link] = []
    for nb in neighbors:
        remote_port = nb.port_id if nb.port_id_type in LLDP_PORT_ID_TYPES else nb.port_descr
        if remote_port and remote_port.isdigit() and nb.port_descr:
            remote_port = nb.port_descr  # an SNMP ifIndex sent as a "local" id; the name is in the description
        system = nb.system_name.split(".")[0] if nb.system_name else None
        if system and remote_port:
            links.append(Link(Endpoint(name, nb.local_port), Endpoint(system, remote_port), frozenset({"lldp"})))
    return links
