"""Vendor-neutral records for LLDP neighbors and interface state, shared by the switch and host parsers.

:class:`Neighbor` is one LLDP neighbor seen on one local port (from Junos, NX-OS, Cumulus/lldpd,
Linux lldpd); :class:`Interface` is one interface's admin/oper state, MTU, speed and MAC (from Junos,
NX-OS, FRR/zebra and iproute2). Links are built by matching a :class:`Neighbor` on each end and then
comparing the two ends' :class:`Interface` records.

Normalisation rules, applied by every parser that produces these records:

* MAC addresses (``Interface.mac``; ``Neighbor.chassis_id``/``port_id`` when their subtype is MAC) are
  lower-case colon form ``aa:bb:cc:dd:ee:ff``, whatever notation the device printed (NX-OS prints
  ``aabb.ccdd.eeff``). A chassis id whose subtype the output does not say (NX-OS detail text) is
  normalised only when it reads as a MAC address.
* ``port_id_type`` uses lldpd's subtype names (``ifname``, ``mac``, ``local``, ``ifalias``, ``ip``, ...);
  vendor spellings ("Interface name", "Mac address", "Locally assigned") are mapped by
  :data:`PORT_ID_SUBTYPES`; an unknown spelling is kept, lower-cased.
* ``speed_mbps`` and ``mtu`` are ``None`` when the device says unknown/unlimited/auto, never 0 or -1.
* ``mtu`` is what the device prints for the interface: L2 on Junos physical ports (1514) and L3 on
  Junos logical units (the ``inet`` family MTU, 1500); the link validator decides how to compare them.

The small JSON helpers at the end raise :class:`~unifab.errors.ParseError` naming the key path; the
vendor modules use them so no ``KeyError``/``TypeError`` escapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.parse._json import child, json_list, json_object
from unifab.parse.host.lldpcli import LldpNeighbor

__all__ = [
    "PORT_ID_SUBTYPES",
    "Interface",
    "Neighbor",
    "mac_if",
    "neighbor_from_lldpd",
    "normalize_mac",
    "port_id_subtype",
    "rows",
]


@dataclass(frozen=True, slots=True)
class Neighbor:
    """One LLDP neighbor seen on a local port."""

    local_port: str
    system_name: str | None
    chassis_id: str | None
    port_id: str | None
    port_id_type: str | None  # "ifname" | "mac" | "local" | ...
    port_descr: str | None
    mgmt_ip: str | None
    mfs: int | None  # max frame size TLV when present


@dataclass(frozen=True, slots=True)
class Interface:
    """One interface's state."""

    name: str
    admin_up: bool | None
    oper_up: bool | None
    mtu: int | None
    speed_mbps: int | None
    mac: str | None
    description: str | None
    kind: str | None  # "ethernet" | "bond" | "bridge" | "vlan" | "loopback" | ...


# Vendor spellings of the LLDP port-id subtype (IEEE 802.1AB table 8-3) -> lldpd's names. Keys are
# lower-cased. Junos: "Interface name", "Mac address", "Locally assigned"; NX-OS JSON: "Interface Name",
# "Mac Address", "Locally Assigned"; EOS eAPI: "interfaceName", "macAddress", "local".
PORT_ID_SUBTYPES: dict[str, str] = {
    "interface alias": "ifalias",
    "interfacealias": "ifalias",
    "port component": "unhandled",
    "mac address": "mac",
    "macaddress": "mac",
    "network address": "ip",
    "networkaddress": "ip",
    "interface name": "ifname",
    "interfacename": "ifname",
    "agent circuit id": "unhandled",
    "locally assigned": "local",
    "local": "local",
    # lldpd's own names map to themselves
    "ifalias": "ifalias",
    "mac": "mac",
    "ip": "ip",
    "ifname": "ifname",
    "unhandled": "unhandled",
    "unknown": "unknown",
}

_MAC_COLON = re.compile(r"[0-9a-f]{1,2}(?::[0-9a-f]{1,2}){5}")
_MAC_DASH = re.compile(r"[0-9a-f]{2}(?:-[0-9a-f]{2}){5}")
_MAC_DOTTED = re.compile(r"[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}")


def normalize_mac(text: str | None) -> str | None:
    """``aa:bb:cc:dd:ee:ff`` for a MAC address in colon, dash or Cisco dotted notation, else ``None``."""
    if text is None:
        return None
    value = text.strip().lower()
    if _MAC_COLON.fullmatch(value):
        return ":".join(part.zfill(2) for part in value.split(":"))
    if _MAC_DASH.fullmatch(value):
        return value.replace("-", ":")
    if _MAC_DOTTED.fullmatch(value):
        digits = value.replace(".", "")
        return ":".join(digits[i : i + 2] for i in range(0, 12, 2))
    return None


def port_id_subtype(text: str | None) -> str | None:
    """lldpd's name for a vendor's port-id subtype spelling (unknown spellings kept, lower-cased)."""
    if text is None:
        return None
    key = text.strip().lower()
    if not key:
        return None
    return PORT_ID_SUBTYPES.get(key, key)


def mac_if(subtype: str | None, value: str | None, *, guess: bool = False) -> str | None:
    """``value`` normalised when ``subtype`` says MAC, or (``guess``) is unknown and the value reads as one.

    A value that does not read as a MAC address is kept as printed.
    """
    if value is None:
        return None
    if subtype == "mac" or (guess and subtype is None):
        return normalize_mac(value) or value
    return value


def neighbor_from_lldpd(nb: LldpNeighbor) -> Neighbor:
    """The normalized record for an lldpd neighbor (any lldpcli/lldpctl output format)."""
    port_type = port_id_subtype(nb.port_id_type)
    return Neighbor(
        local_port=nb.local_port,
        system_name=nb.system_name,
        chassis_id=mac_if(nb.chassis_id_type, nb.chassis_id, guess=True),
        port_id=mac_if(port_type, nb.port_id),
        port_id_type=port_type,
        port_descr=nb.port_descr,
        mgmt_ip=nb.mgmt_ips[0] if nb.mgmt_ips else None,
        mfs=nb.mfs,
    )


# --- JSON rows -----------------------------------------------------------------------------------


def rows(value: object, path: str, source: str) -> list[tuple[str, dict[str, object]]]:
    """Objects of a list that may be collapsed to its only member (NX-OS ``ROW_*``): ``[(path, obj)]``."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [(path, value)]
    items = json_list(value, path, source)
    return [(child(path, i), json_object(item, child(path, i), source)) for i, item in enumerate(items)]
