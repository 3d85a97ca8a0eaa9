"""A twin host's artifacts: mlnx_qos, the ecn sysfs tree, traffic_class, ibdev2netdev, lldpcli json0."""

from __future__ import annotations

from pathlib import Path

from unifab.parse.host import ibdev2netdev, lldpcli, mlnx_qos, traffic_class
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinNic, TwinSwitch
from unifab.twin.files import write_text

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
    write_text(
        root / "cmd" / "ibdev2netdev.txt",
        ibdev2netdev.render(tuple(ibdev2netdev.IbDevNetdev(n.rdma_dev, 1, n.netdev, "Up") for n in nics)),
    )
    neighbors = []
    for nic in nics:
        write_text(root / "cmd" / "mlnx_qos" / f"{nic.netdev}.txt", mlnx_qos.render(nic_mlnx_qos(nic)))
        net = root / "sys" / "class" / "net" / nic.netdev
        write_text(net / "mtu", f"{nic.mtu}\n")
        _write_ecn(net / "ecn", nic)
        tclass = traffic_class.TrafficClass(nic.tclass, ())
        write_text(
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
    write_text(root / "cmd" / "lldpcli.json", lldpcli.render_json0(neighbors))


def _leaf_port(cluster: Cluster, nic: TwinNic) -> tuple[TwinSwitch, str]:
    su, slot = divmod(nic.host_index, cluster.su_hosts)
    return cluster.switches[f"leaf-su{su + 1}-r{nic.rail}"], c.port_name(slot)


def _write_ecn(root: Path, nic: TwinNic) -> None:
    for point, enabled in (("roce_np", nic.np_enabled), ("roce_rp", nic.rp_enabled)):
        for prio in range(8):
            write_text(root / point / "enable" / str(prio), f"{int(prio in enabled)}\n")
    np_params = {"cnp_802p_prio": c.CNP_PRIO, "cnp_dscp": c.CNP_DSCP, "min_time_between_cnps": 4}
    for name, value in np_params.items():
        write_text(root / "roce_np" / name, f"{value}\n")
    for name, value in RP_DEFAULTS.items():
        write_text(root / "roce_rp" / name, f"{value}\n")
