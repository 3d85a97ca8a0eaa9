"""A twin switch's SONiC artifacts: ``config_db.json`` and the APPL_DB LLDP neighbors (``appl_db.json``).

The QoS tables are what ``unifab render`` writes for the switch: :func:`render_config_db` with the
profile the twin's intent resolves to (:func:`unifab.twin.intent_file.switch_profile`), one port spec
per port at its speed and cable length. On top of that the writer adds what the renderer leaves to the
platform (DEVICE_METADATA, the port's speed, lanes and FEC, buffer pools, lossy buffer profiles and
queues, DEVICE_NEIGHBOR) and then applies what scenarios changed on the switch, field by field, so a
clean switch is exactly its intent and a broken one differs only where it was broken:

* ``TwinSwitch.dscp_to_tc`` entries that differ from a clean switch's (dscp-lossy) → ``DSCP_TO_TC_MAP``;
* a priority some port runs PFC on beyond the intent's (pfc-mismatch) → its class's PG in
  ``TC_TO_PRIORITY_GROUP_MAP`` (the PG of the same number, SONiC's default);
* ``ecn_min_bytes``/``ecn_max_bytes`` (ecn-thresh) → the RoCE queue's ``WRED_PROFILE`` thresholds;
  the switch's ECN mark mode (ecn-colour, ``TwinSwitch.ecn_mark_mode``) → that profile's ``ecn``;
* per port: ``mtu``, ``speed_mbps``, ``fec`` → ``PORT``; ``pfc`` → ``pfc_enable``/``pfcwd_sw_enable``
  and the lossless ``BUFFER_PG`` keys; ``trusts_dscp`` → ``dscp_to_tc_map``; ``pfcwd`` → ``PFC_WD``;
  ``roce_queue_ecn`` → the RoCE queue's ``wred_profile``; ``cnp_queue_strict`` → the CNP queue's
  scheduler (a DWRR one); ``roce_queue_weight`` → the RoCE queue's scheduler, a DWRR one of that weight
  (``<profile>_DWRR_<weight>``, added when the intent renders none); ``configured_cable_m`` → the port is
  rendered for that length (``CABLE_LENGTH`` and the PG profile the device derives from it); ``headroom_short`` → a
  ``..._short_profile`` with a quarter of the xoff.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from unifab.parse.switch import sonic_lldp
from unifab.profile import QosProfile
from unifab.render.sonic_config import pg_ranges, render_config_db
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinPort, TwinSwitch
from unifab.twin.intent_file import port_spec, switch_profile

__all__ = ["HWSKU", "PLATFORM", "appl_db_lldp", "config_db"]

HWSKU = "ACS-SN5600"
PLATFORM = "x86_64-nvidia_sn5600-r0"
_CLEAN_PORT = TwinPort("", "", "")
_CLEAN_DSCP = TwinSwitch("", "leaf", 0).dscp_to_tc


def _ordered(switch: TwinSwitch) -> list[tuple[str, TwinPort]]:
    return sorted(switch.ports.items(), key=lambda kv: int(kv[0][8:]))


def config_db(switch: TwinSwitch) -> str:
    """The switch's CONFIG_DB as ``config_db.json`` (nested shape as SONiC saves it)."""
    profile = switch_profile(switch)
    ports = _ordered(switch)
    tables: dict[str, dict[str, Any]] = dict(
        render_config_db([port_spec(p) for _, p in ports], profile, hwsku=HWSKU, platform=PLATFORM)
    )
    tables["DEVICE_METADATA"] = {
        "localhost": {
            "hostname": switch.name,
            "hwsku": HWSKU,
            "platform": PLATFORM,
            "type": "LeafRouter" if switch.role == "leaf" else "SpineRouter",
            "buffer_model": "traditional",
            "default_pfcwd_status": "enable",
            "mac": switch.mac,
        }
    }
    tables["BUFFER_POOL"] = {
        "ingress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "ingress", "xoff": "8250000"},
        "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
        "egress_lossy_pool": {"mode": "dynamic", "size": "50270208", "type": "egress"},
    }
    tables.setdefault("BUFFER_PROFILE", {}).update(
        {
            "ingress_lossy_profile": {"dynamic_th": "3", "pool": "ingress_lossless_pool", "size": "0"},
            "egress_lossless_profile": {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"},
            "egress_lossy_profile": {"dynamic_th": "7", "pool": "egress_lossy_pool", "size": "9216"},
        }
    )
    for table in ("BUFFER_PG", "BUFFER_QUEUE", "DEVICE_NEIGHBOR", "PORT", "PORT_QOS_MAP", "QUEUE"):
        tables.setdefault(table, {})
    _switch_deviations(switch, profile, tables)
    lossless_queues = {profile.priority_to_tc[p] for p in profile.lossless_priorities}
    buffer_queues = sorted(
        [(q, "egress_lossless_profile") for q in _queue_runs(lossless_queues)]
        + [(q, "egress_lossy_profile") for q in _queue_runs(set(range(8)) - lossless_queues)]
    )
    for lane, (name, port) in enumerate(ports):
        tables["PORT"][name] = {
            "admin_status": "up",
            "alias": f"etp{lane + 1}",
            "description": f"{port.peer_node}:{port.peer_port}",
            "fec": port.fec,
            "index": str(lane + 1),
            "lanes": ",".join(str(lane * 8 + i) for i in range(8)),
            "speed": str(port.speed_mbps),
            **tables["PORT"].get(name, {}),
        }
        tables["BUFFER_PG"][f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        for queues, buffer_profile in buffer_queues:
            tables["BUFFER_QUEUE"][f"{name}|{queues}"] = {"profile": buffer_profile}
        tables["DEVICE_NEIGHBOR"][name] = {"name": port.peer_node, "port": port.peer_port}
        _port_deviations(name, port, profile, tables)
    return orjson.dumps(tables, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + os.linesep


def _queue_runs(queues: set[int]) -> list[str]:
    """``{0, 1, 2, 4}`` -> ``["0-2", "4"]``: BUFFER_QUEUE keys, consecutive queues as a range."""
    return pg_ranges(sorted(queues))


def _switch_deviations(switch: TwinSwitch, profile: QosProfile, tables: dict[str, dict[str, Any]]) -> None:
    """Switch-wide scenario changes: DSCP map entries (dscp-lossy), the RoCE WRED profile's ECN mark mode
    (ecn-colour) and thresholds (ecn-thresh)."""
    dscp_map = tables["DSCP_TO_TC_MAP"][profile.name]
    for d, tc in switch.dscp_to_tc.items():
        if _CLEAN_DSCP.get(d) != tc:
            dscp_map[str(d)] = str(tc)
    # a port with PFC on more priorities (pfc-mismatch) gets their PGs: SONiC's default TC -> PG identity
    tc_to_pg = tables["TC_TO_PRIORITY_GROUP_MAP"][profile.name]
    for prio in {p for port in switch.ports.values() for p in port.pfc} - profile.lossless_priorities:
        tc_to_pg[str(profile.priority_to_tc[prio])] = str(prio)
    wred_name = f"{profile.name}_Q{profile.roce_queue}"
    if switch.ecn_mark_mode != "ecn_all":
        tables["WRED_PROFILE"][wred_name]["ecn"] = switch.ecn_mark_mode
    if (switch.ecn_min_bytes, switch.ecn_max_bytes) != (c.ECN_MIN_BYTES, c.ECN_MAX_BYTES):
        wred = tables["WRED_PROFILE"][wred_name]
        for colour in ("green", "yellow", "red"):
            wred[f"{colour}_min_threshold"] = str(switch.ecn_min_bytes)
            wred[f"{colour}_max_threshold"] = str(switch.ecn_max_bytes)


def _port_deviations(name: str, port: TwinPort, profile: QosProfile, tables: dict[str, dict[str, Any]]) -> None:
    """The port's scenario changes over its rendered rows (see the module docstring)."""
    clean = _CLEAN_PORT
    if port.mtu != clean.mtu:
        tables["PORT"][name]["mtu"] = str(port.mtu)
    if port.configured_cable_m is not None:  # set by hand: render would round it up to a table bucket
        tables["CABLE_LENGTH"]["AZURE"][name] = f"{port.configured_cable_m}m"
    qos_map = tables["PORT_QOS_MAP"][name]
    if not port.trusts_dscp:
        qos_map.pop("dscp_to_tc_map", None)
    if not port.pfcwd:
        qos_map.pop("pfcwd_sw_enable", None)
        tables["PFC_WD"].pop(name, None)
    if port.pfc != clean.pfc:
        pfc = ",".join(str(p) for p in sorted(port.pfc))
        qos_map["pfc_enable"] = pfc
        if port.pfcwd:
            qos_map["pfcwd_sw_enable"] = pfc
        rendered = [f"{name}|{pgs}" for pgs in pg_ranges(sorted(profile.lossless_priorities))]
        pg_profile = tables["BUFFER_PG"][rendered[0]]["profile"]
        for key in rendered:
            del tables["BUFFER_PG"][key]
        for pgs in pg_ranges(sorted(port.pfc)):
            tables["BUFFER_PG"][f"{name}|{pgs}"] = {"profile": pg_profile}
    if not port.roce_queue_ecn:
        tables["QUEUE"].get(f"{name}|{profile.roce_queue}", {}).pop("wred_profile", None)
    if not port.cnp_queue_strict:
        dwrr = min(s for s, row in tables["SCHEDULER"].items() if row.get("type") == "DWRR")
        tables["QUEUE"].setdefault(f"{name}|{profile.cnp_queue}", {})["scheduler"] = dwrr
    if port.roce_queue_weight is not None:
        scheduler = f"{profile.name}_DWRR_{port.roce_queue_weight}"
        tables["SCHEDULER"].setdefault(scheduler, {"type": "DWRR", "weight": str(port.roce_queue_weight)})
        tables["QUEUE"].setdefault(f"{name}|{profile.roce_queue}", {})["scheduler"] = scheduler
    if port.headroom_short:
        for key in [k for k in tables["BUFFER_PG"] if k.startswith(f"{name}|") and k != f"{name}|0"]:
            pg_profile = tables["BUFFER_PG"][key]["profile"]
            short = pg_profile.removesuffix("_profile") + "_short_profile"
            if short not in tables["BUFFER_PROFILE"]:
                row = dict(tables["BUFFER_PROFILE"][pg_profile])
                xoff = int(row["xoff"])
                row["xoff"] = str(xoff // 4)
                row["size"] = str(int(row["size"]) - xoff + xoff // 4)
                tables["BUFFER_PROFILE"][short] = row
            tables["BUFFER_PG"][key] = {"profile": short}


def appl_db_lldp(switch: TwinSwitch, cluster: Cluster) -> str:
    """The switch's APPL_DB ``LLDP_ENTRY_TABLE`` as lldp_syncd writes it: what each port's neighbor sent.

    Neighbors follow the real cabling (:meth:`Cluster.actual_peer`), not the plan the ports describe.
    """
    neighbors = []
    for name, port in _ordered(switch):
        actual = cluster.actual_peer(switch.name, name, (port.peer_node, port.peer_port))
        if actual is None:  # no cable on this port
            continue
        peer_node, peer_port = actual
        peer = cluster.switches.get(peer_node)
        if peer is not None:
            neighbors.append(_neighbor(name, peer.name, peer.mac, "mac", peer_port, "ifname", peer_port))
            continue
        nic = cluster.nic(peer_node, peer_port)
        if nic is not None:  # lldpd on a host: MAC as port id, interface name as description
            neighbors.append(_neighbor(name, nic.host, nic.mac, "mac", nic.mac, "mac", nic.netdev))
    return sonic_lldp.dump(neighbors)


def _neighbor(
    local: str, system: str, chassis: str, chassis_type: str, port_id: str, port_type: str, descr: str
) -> sonic_lldp.SonicLldpNeighbor:
    return sonic_lldp.SonicLldpNeighbor(
        local_port=local,
        system_name=system,
        chassis_id=chassis,
        chassis_id_subtype=chassis_type,
        port_id=port_id,
        port_id_subtype=port_type,
        port_descr=descr,
        system_descr=None,
        mgmt_address=None,
        mgmt_addresses=(),
        capabilities_supported=("Bridge", "Router"),
        capabilities_enabled=("Router",),
    )
