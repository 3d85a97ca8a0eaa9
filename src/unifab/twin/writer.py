"""Write a cluster's state as a bundle of the artifacts real devices produce.

Per host: ``cmd/mlnx_qos/<netdev>.txt``, ``cmd/ibdev2netdev.txt``, ``cmd/lldpcli.json`` (json0),
``sys/class/net/<netdev>/{mtu,ecn/...}`` and ``sys/class/infiniband/<dev>/tc/1/traffic_class``.
Per switch: ``sonic/config_db.json``. Plus ``plan/cabling.csv``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from unifab.parse.host import ibdev2netdev, lldpcli, mlnx_qos, traffic_class
from unifab.parse.plan import cabling
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinNic, TwinSwitch

RP_DEFAULTS = {  # MLNX_OFED / firmware defaults, reference host-nic-roce §2.3
    "clamp_tgt_rate": 0,
    "clamp_tgt_rate_after_time_inc": 1,
    "dce_tcp_g": 1019,
    "dce_tcp_rtt": 1,
    "initial_alpha_value": 1023,
    "rate_reduce_monitor_period": 4,
    "rate_to_set_on_first_cnp": 0,
    "rpg_ai_rate": 5,
    "rpg_byte_reset": 32767,
    "rpg_gd": 11,
    "rpg_hai_rate": 50,
    "rpg_max_rate": 0,
    "rpg_min_dec_fac": 50,
    "rpg_min_rate": 1,
    "rpg_threshold": 1,
    "rpg_time_reset": 300,
}
ETS_BW = (45, 1, 1, 50, 1, 1, 0, 1)  # per TC; TC 6 (CNP) is strict
RX_BUFFERS = (130944, 261888, 0, 0, 0, 0, 0, 0)  # lossy buffer 0, lossless buffer 1 (priority 3)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_bundle(cluster: Cluster, root: Path) -> None:
    for host, nics in cluster.hosts.items():
        write_host(cluster, root / "hosts" / host, nics)
    for switch in cluster.switches.values():
        _write(root / "switches" / switch.name / "sonic" / "config_db.json", config_db(switch))
    _write(root / "plan" / "cabling.csv", cabling.render(planned_cables(cluster)))


def nic_mlnx_qos(nic: TwinNic) -> mlnx_qos.MlnxQos:
    tcs = tuple(
        mlnx_qos.TcConfig(
            tc=tc,
            tsa="strict" if tc == c.CNP_PRIO else "ets",
            bw=None if tc == c.CNP_PRIO else ETS_BW[tc],
            ratelimit_gbps=None,
            priorities=(tc,),
        )
        for tc in range(8)
    )
    return mlnx_qos.MlnxQos(
        dcbx="os",
        trust=nic.trust,
        dscp2prio=dict(nic.dscp2prio) if nic.trust == "dscp" else {},
        pfc_enabled=tuple(sorted(nic.pfc)),
        prio_tc={p: p for p in range(8)},
        tcs=tcs,
        buffers=mlnx_qos.Buffers(
            sizes=RX_BUFFERS,
            max_buffer_size=sum(RX_BUFFERS) + 131072,
            prio2buffer=tuple(1 if p in nic.pfc else 0 for p in range(8)),
        ),
        cable_len=nic.cable_len_m,
        notices=(),
    )


def write_host(cluster: Cluster, root: Path, nics: list[TwinNic]) -> None:
    _write(
        root / "cmd" / "ibdev2netdev.txt",
        ibdev2netdev.render(tuple(ibdev2netdev.IbDevNetdev(n.rdma_dev, 1, n.netdev, "Up") for n in nics)),
    )
    neighbors = []
    for nic in nics:
        _write(root / "cmd" / "mlnx_qos" / f"{nic.netdev}.txt", mlnx_qos.render(nic_mlnx_qos(nic)))
        net = root / "sys" / "class" / "net" / nic.netdev
        _write(net / "mtu", f"{nic.mtu}\n")
        _write_ecn(net / "ecn", nic)
        tclass = traffic_class.TrafficClass(nic.tclass, ())
        _write(
            root / "sys" / "class" / "infiniband" / nic.rdma_dev / "tc" / "1" / "traffic_class",
            traffic_class.render(tclass),
        )
        leaf, port = _leaf_port(cluster, nic)
        neighbors.append(
            lldpcli.LldpNeighbor(
                local_port=nic.netdev,
                via="LLDP",
                age="0 day, 01:12:09",
                chassis_id=leaf.mac,
                chassis_id_type="mac",
                system_name=leaf.name,
                system_descr="SONiC Software Version: SONiC.202405 - HwSku: ACS-SN5600 - Distribution: Debian 12",
                mgmt_ips=(f"10.255.{leaf.index >> 8}.{leaf.index & 0xFF}",),
                capabilities_enabled=("Bridge", "Router"),
                port_id=port,
                port_id_type="ifname",
                port_descr=port,
                ttl=120,
                mfs=None,
            )
        )
    _write(root / "cmd" / "lldpcli.json", lldpcli.render_json0(neighbors))


def _leaf_port(cluster: Cluster, nic: TwinNic) -> tuple[TwinSwitch, str]:
    su, slot = divmod(nic.host_index, cluster.su_hosts)
    return cluster.switches[f"leaf-su{su + 1}-r{nic.rail}"], c.port_name(slot)


def _write_ecn(root: Path, nic: TwinNic) -> None:
    for point, enabled in (("roce_np", nic.np_enabled), ("roce_rp", nic.rp_enabled)):
        for prio in range(8):
            _write(root / point / "enable" / str(prio), f"{int(prio in enabled)}\n")
    np_params = {"cnp_802p_prio": c.CNP_PRIO, "cnp_dscp": c.CNP_DSCP, "min_time_between_cnps": 4}
    for name, value in np_params.items():
        _write(root / "roce_np" / name, f"{value}\n")
    for name, value in RP_DEFAULTS.items():
        _write(root / "roce_rp" / name, f"{value}\n")


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
            "fec": "rs",
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
        profile = f"pg_lossless_{port.speed_mbps}_{cable}_profile"
        tables["BUFFER_PROFILE"][profile] = {
            "dynamic_th": "0",
            "pool": "ingress_lossless_pool",
            "size": "19456",
            "xoff": "231424",
            "xon": "19456",
        }
        tables["BUFFER_PG"][f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        tables["BUFFER_PG"][f"{name}|3"] = {"profile": profile}
        tables["BUFFER_QUEUE"][f"{name}|0-2"] = {"profile": "egress_lossy_profile"}
        tables["BUFFER_QUEUE"][f"{name}|3"] = {"profile": "egress_lossless_profile"}
        tables["BUFFER_QUEUE"][f"{name}|4-7"] = {"profile": "egress_lossy_profile"}
        if port.pfcwd:
            tables["PFC_WD"][name] = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
        tables["DEVICE_NEIGHBOR"][name] = {"name": port.peer_node, "port": port.peer_port}
    return orjson.dumps(tables, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + os.linesep


def planned_cables(cluster: Cluster) -> tuple[cabling.PlannedCable, ...]:
    cables = []
    for leaf in cluster.leaves():
        for port in leaf.ports.values():
            cables.append(
                cabling.PlannedCable(port.peer_node, port.peer_port, leaf.name, port.name, port.cable_m)
                if port.peer_node in cluster.hosts
                else cabling.PlannedCable(leaf.name, port.name, port.peer_node, port.peer_port, port.cable_m)
            )
    return tuple(sorted(cables, key=lambda cb: (cb.a_node, cb.a_port)))
