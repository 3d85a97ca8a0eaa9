"""A twin switch's SONiC artifacts: ``config_db.json`` and the APPL_DB LLDP neighbors (``appl_db.json``)."""

from __future__ import annotations

import functools
import os
from typing import Any

import orjson

from unifab.checks.headroom import SPECTRUM_ASICS, HeadroomCalc, sonic_mellanox_xoff
from unifab.parse.switch import sonic_lldp
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinSwitch


@functools.cache
def _headroom(speed_mbps: int, cable_m: int) -> HeadroomCalc:
    """What buildimage's static table holds for an SN5600 (Spectrum-4): small packets 100 %, shared pool."""
    return sonic_mellanox_xoff(
        speed_mbps,
        cable_m,
        c.SWITCH_MTU,
        SPECTRUM_ASICS["Spectrum-4"],
        small_packet_percentage=100,
        shared_headroom_pool=True,
        lanes=8,
    )


def config_db(switch: TwinSwitch) -> str:
    """The switch's CONFIG_DB as ``config_db.json`` (nested shape, 4-space indent as SONiC saves it)."""
    m = c.QOS_MAP
    identity = {str(i): str(i) for i in range(8)}
    tables: dict[str, dict[str, Any]] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": switch.name,
                "hwsku": "ACS-SN5600",
                "platform": "x86_64-nvidia_sn5600-r0",
                "type": "LeafRouter" if switch.role == "leaf" else "SpineRouter",
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable",
                "mac": switch.mac,
            }
        },
        "DSCP_TO_TC_MAP": {m: {str(d): str(tc) for d, tc in sorted(switch.dscp_to_tc.items())}},
        "TC_TO_PRIORITY_GROUP_MAP": {m: {str(i): str(i if i in (3, 4) else 0) for i in range(8)}},
        "TC_TO_QUEUE_MAP": {m: identity},
        "MAP_PFC_PRIORITY_TO_QUEUE": {m: identity},
        "SCHEDULER": {
            "scheduler.0": {"type": "DWRR", "weight": "50"},
            "scheduler.1": {"type": "STRICT"},
        },
        "WRED_PROFILE": {
            c.WRED_PROFILE: {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "wred_yellow_enable": "true",
                "wred_red_enable": "true",
                **{
                    f"{colour}_{field}": value
                    for colour in ("green", "yellow", "red")
                    for field, value in (
                        ("min_threshold", str(switch.ecn_min_bytes)),
                        ("max_threshold", str(switch.ecn_max_bytes)),
                        ("drop_probability", "100"),
                    )
                },
            }
        },
        "BUFFER_POOL": {
            "ingress_lossless_pool": {
                "mode": "dynamic",
                "size": "60817392",
                "type": "ingress",
                "xoff": "8250000",
            },
            "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
            "egress_lossy_pool": {"mode": "dynamic", "size": "50270208", "type": "egress"},
        },
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"dynamic_th": "3", "pool": "ingress_lossless_pool", "size": "0"},
            "egress_lossless_profile": {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"},
            "egress_lossy_profile": {"dynamic_th": "7", "pool": "egress_lossy_pool", "size": "9216"},
        },
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "100"}},
        "CABLE_LENGTH": {"AZURE": {}},
        "PORT": {},
        "PORT_QOS_MAP": {},
        "QUEUE": {},
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
        "DEVICE_NEIGHBOR": {},
    }
    for lane, (name, port) in enumerate(sorted(switch.ports.items(), key=lambda kv: int(kv[0][8:]))):
        cable = f"{port.configured_cable_m if port.configured_cable_m is not None else int(port.cable_m)}m"
        tables["CABLE_LENGTH"]["AZURE"][name] = cable
        tables["PORT"][name] = {
            "admin_status": "up",
            "alias": f"etp{lane + 1}",
            "description": f"{port.peer_node}:{port.peer_port}",
            "fec": port.fec,
            "index": str(lane + 1),
            "lanes": ",".join(str(lane * 8 + i) for i in range(8)),
            "mtu": str(port.mtu),
            "speed": str(port.speed_mbps),
        }
        pfc = ",".join(str(p) for p in sorted(port.pfc))
        qos_map = {"tc_to_queue_map": m, "tc_to_pg_map": m, "pfc_to_queue_map": m, "pfc_enable": pfc}
        if port.trusts_dscp:
            qos_map["dscp_to_tc_map"] = m
        if port.pfcwd:
            qos_map["pfcwd_sw_enable"] = pfc
        tables["PORT_QOS_MAP"][name] = qos_map
        for q in range(8):
            strict = q == c.CNP_PRIO and port.cnp_queue_strict
            entry = {"scheduler": "scheduler.1" if strict else "scheduler.0"}
            if q == c.ROCE_PRIO and port.roce_queue_ecn:
                entry["wred_profile"] = c.WRED_PROFILE
            tables["QUEUE"][f"{name}|{q}"] = entry
        profile = f"pg_lossless_{port.speed_mbps}_{cable}{'_short' if port.headroom_short else ''}_profile"
        if profile not in tables["BUFFER_PROFILE"]:
            headroom = _headroom(port.speed_mbps, int(cable.removesuffix("m")))
            xoff = headroom.xoff // 4 if port.headroom_short else headroom.xoff
            tables["BUFFER_PROFILE"][profile] = {
                "dynamic_th": "0",
                "pool": "ingress_lossless_pool",
                "size": str(headroom.size),
                "xoff": str(xoff),
                "xon": str(headroom.xon),
            }
        tables["BUFFER_PG"][f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        # the traditional buffer model derives lossless PGs from pfc_enable (buffermgrd)
        for prio in sorted(port.pfc):
            tables["BUFFER_PG"][f"{name}|{prio}"] = {"profile": profile}
        tables["BUFFER_QUEUE"][f"{name}|0-2"] = {"profile": "egress_lossy_profile"}
        tables["BUFFER_QUEUE"][f"{name}|3"] = {"profile": "egress_lossless_profile"}
        tables["BUFFER_QUEUE"][f"{name}|4-7"] = {"profile": "egress_lossy_profile"}
        if port.pfcwd:
            tables["PFC_WD"][name] = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
        tables["DEVICE_NEIGHBOR"][name] = {"name": port.peer_node, "port": port.peer_port}
    return orjson.dumps(tables, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + os.linesep


def appl_db_lldp(switch: TwinSwitch, cluster: Cluster) -> str:
    """The switch's APPL_DB ``LLDP_ENTRY_TABLE`` as lldp_syncd writes it: what each port's neighbor sent.

    Neighbors follow the real cabling (:meth:`Cluster.actual_peer`), not the plan the ports describe.
    """
    neighbors = []
    for name, port in sorted(switch.ports.items(), key=lambda kv: int(kv[0][8:])):
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
    return sonic_lldp.render(neighbors)


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
