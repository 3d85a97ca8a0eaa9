"""A twin host's artifacts, each written by its parser's ``dump``/``dump_tree`` so readers see real formats.

Per host: ``cmd/ibdev2netdev.txt``, ``cmd/lldpcli.json`` (json0), ``cmd/show_gids.txt``, ``cmd/ibv_devinfo.txt``,
``cmd/nvidia-smi-topo-m.txt`` and ``cmd/nccl-topo.xml``. Per NIC: ``cmd/mlnx_qos/<netdev>.txt``,
``cmd/ethtool-S/<netdev>.txt``, ``sys/class/net/<netdev>/{mtu,ecn/...}``,
``sys/class/infiniband/<dev>/tc/1/traffic_class``, ``sys/class/infiniband/<dev>/ports/1/{state,rate,link_layer}``
with three ``hw_counters``, and ``sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_{tos,mode}``.

The host is a DGX-like 8-GPU server: GPU *i* and NIC *i* (rail *i*) sit behind the same PCIe switch (``PIX``),
GPUs 0-3 and NICs 0-3 on NUMA node 0, the rest on node 1, GPUs joined by 18 NVLinks each. Text that is the same
for many NICs or hosts (the topology, counters, port files) is rendered once and reused: the twin must stay
quick at 100,000 GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from unifab import layout
from unifab.intent_presets import MLX5_DCQCN
from unifab.parse.host import (
    ethtool_pause,
    ethtool_stats,
    hw_counters,
    ibdev2netdev,
    ibv_devinfo,
    lldpcli,
    mlnx_qos,
    nccl_topo,
    nvidia_smi_topo,
    roce_tos,
    show_gids,
    traffic_class,
)
from unifab.qos.headroom import MLX5_CONNECTX_MAX_MTU
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinNic, TwinSwitch
from unifab.twin.files import write_text
from unifab.twin.hardware import (
    GPU_NVLINKS,
    GPU_PCI_CLASS,
    HW_COUNTERS,
    LANE_SPEEDS,
    NIC_PCI_CLASS,
    NUMA_CPUS,
    RP_DEFAULTS,
    RX_BUFFERS,
    SWITCH_BUSES,
    SYSTEM_DESCR,
    ets_bw,
    eui64,
    nic_ibv_device,
)
from unifab.twin.host_extra_files import write_host_extras
from unifab.twin.host_pci_files import own_switch_bus

__all__ = ["MAX_MTU", "gpu_topology", "ip_d_link", "nic_gids", "nic_ipv4", "nic_mlnx_qos", "write_host"]


def nic_mlnx_qos(nic: TwinNic) -> mlnx_qos.MlnxQos:
    tcs = tuple(
        mlnx_qos.TcConfig(
            tc=tc,
            tsa="strict" if tc == c.CNP_PRIO else "ets",
            bw=None if tc == c.CNP_PRIO else ets_bw(nic.roce_tc_bw, c.ROCE_PRIO)[tc],
            ratelimit_gbps=None,
            priorities=(tc,),
        )
        for tc in range(8)
    )
    return mlnx_qos.MlnxQos(
        dcbx=nic.dcbx,
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
        root / layout.IBDEV2NETDEV,
        ibdev2netdev.dump(
            tuple(ibdev2netdev.IbDevNetdev(n.rdma_dev, 1, n.netdev, "Down" if _dark(n) else "Up") for n in nics)
        ),
    )
    write_text(root / layout.SHOW_GIDS, show_gids.dump(tuple(g for n in nics for g in nic_gids(n))))
    write_text(root / layout.IBV_DEVINFO, ibv_devinfo.dump(tuple(nic_ibv_device(n) for n in nics)))
    off_switch = tuple(sorted(cluster.gpus_off_nic_switch.get(nics[0].host, ()))) if nics else ()
    smi_topo, nccl_xml = gpu_topology(tuple((n.rdma_dev, n.speed_mbps) for n in nics), off_switch)
    write_text(root / layout.NVIDIA_SMI_TOPO, smi_topo)
    write_text(root / layout.NCCL_TOPO, nccl_xml)
    neighbors = []
    for nic in nics:
        if nic.vendor == "mlx5":  # Broadcom NICs: niccli getqos and bnxt_en counters, by host_nic_vendor_files
            write_text(root / layout.MLNX_QOS_DIR / f"{nic.netdev}.txt", mlnx_qos.dump(nic_mlnx_qos(nic)))
            write_text(root / layout.ETHTOOL_S_DIR / f"{nic.netdev}.txt", _ethtool_stats(frozenset(nic.pfc)))
        net = root / layout.SYS_NET / nic.netdev
        write_text(net / "mtu", f"{nic.mtu}\n")
        ib = root / layout.SYS_IB / nic.rdma_dev
        if nic.ofed_sysfs:  # MLNX_OFED-only sysfs; upstream mlx5 and bnxt_re have neither
            _write_ecn(net / "ecn", nic)
            tclass = traffic_class.TrafficClass(nic.tclass, ())
            write_text(ib / "tc" / "1" / "traffic_class", traffic_class.dump(tclass))
        _write_files(ib, _ib_port_files(nic.port_state, nic.speed_mbps))
        _write_files(root / layout.RDMA_CM / nic.rdma_dev, _rdma_cm(nic.roce_tos, nic.roce_mode))
        planned_leaf, planned_port = _leaf_port(cluster, nic)
        peer = cluster.actual_peer(nic.host, nic.netdev, (planned_leaf.name, planned_port))
        if peer is None or (nic.host, nic.netdev) in cluster.lldp_silent or _dark(nic):
            continue  # no cable, no link, or no LLDP frame reaches lldpd: no neighbor on this port
        leaf, port = cluster.switches[peer[0]], peer[1]
        neighbors.append(
            lldpcli.LldpNeighbor(
                local_port=nic.netdev,
                via="LLDP",
                age="0 day, 01:12:09",
                chassis_id=leaf.mac,
                chassis_id_type="mac",
                system_name=leaf.name,
                system_descr=SYSTEM_DESCR.get(leaf.os, SYSTEM_DESCR["sonic"]),
                mgmt_ips=(f"10.255.{leaf.index >> 8}.{leaf.index & 0xFF}",),
                capabilities_enabled=("Bridge", "Router"),
                port_id=port,
                port_id_type="ifname",
                port_descr=port,
                ttl=120,
                mfs=None,
            )
        )
    write_text(root / layout.LLDPCLI, lldpcli.dump_json0(neighbors))
    for nic in nics:
        pause = ethtool_pause.PauseParams(nic.netdev, autoneg=False, rx=nic.global_pause, tx=nic.global_pause)
        write_text(root / layout.ETHTOOL_A_DIR / f"{nic.netdev}.txt", ethtool_pause.dump(pause))
    write_text(root / layout.IP_LINK, ip_d_link(nics))
    write_host_extras(cluster, root, nics)


# the netdev's max_mtu as `ip -d link` prints it: mlx5 ConnectX 9978 (MLX5E_HW2SW_MTU of the port's max), bnxt_en
# BNXT_MAX_MTU 9500
MAX_MTU = {"mlx5": MLX5_CONNECTX_MAX_MTU, "bnxt": 9500}


_LINK_UP = "BROADCAST,MULTICAST,UP,LOWER_UP"


def ip_d_link(nics: list[TwinNic]) -> str:
    """``ip -d link show`` of the host's RDMA netdevs (loopback first), with each one's ``maxmtu``."""
    lines = [
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000",
        "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0  allmulti 0 minmtu 0 maxmtu 0 "
        "addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535",
    ]
    for i, nic in enumerate(nics, start=2):
        flags, state = ("NO-CARRIER,BROADCAST,MULTICAST,UP", "DOWN") if _dark(nic) else (_LINK_UP, "UP")
        lines += [
            f"{i}: {nic.netdev}: <{flags}> mtu {nic.mtu} qdisc mq state {state} mode DEFAULT group default qlen 1000",
            f"    link/ether {nic.mac} brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 "
            f"maxmtu {MAX_MTU.get(nic.vendor, MLX5_CONNECTX_MAX_MTU)} addrgenmode eui64 numtxqueues 512 "
            "numrxqueues 256 gso_max_size 65536 gso_max_segs 65535",
        ]
    return "\n".join(lines) + "\n"


def _dark(nic: TwinNic) -> bool:
    """The NIC's port has no link (RDMA port DOWN): no carrier in ``ip link``, ``Down`` in ibdev2netdev, no LLDP."""
    return nic.port_state == "DOWN"


def _leaf_port(cluster: Cluster, nic: TwinNic) -> tuple[TwinSwitch, str]:
    su, slot = divmod(nic.host_index, cluster.su_hosts)
    leaf = cluster.switches[f"leaf-su{su + 1}-r{nic.rail}"]
    return leaf, c.port_name(slot, leaf.os)


def _write_ecn(root: Path, nic: TwinNic) -> None:
    files: dict[str, str] = {}
    for point, enabled in (("roce_np", nic.np_enabled), ("roce_rp", nic.rp_enabled)):
        for prio in range(8):
            files[f"{point}/enable/{prio}"] = "1\n" if prio in enabled else "0\n"
    files.update(_ecn_params())
    _write_files(root, files)


@cache
def _ecn_params() -> dict[str, str]:
    np_params = {
        "cnp_802p_prio": c.CNP_PRIO,
        "cnp_dscp": c.CNP_DSCP,
        "min_time_between_cnps": MLX5_DCQCN["min_time_between_cnps"],
    }
    files = {f"roce_np/{name}": f"{value}\n" for name, value in np_params.items()}
    files.update((f"roce_rp/{name}", f"{value}\n") for name, value in RP_DEFAULTS.items())
    return files


def _write_files(base: Path, files: Mapping[str, str]) -> None:
    """Write ``{relative path: text}`` under ``base``, creating each directory once."""
    made: set[Path] = set()
    for rel, text in files.items():
        path = base / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_text(text)


# --- RDMA: GIDs, ibv_devinfo, port files, counters, rdma_cm --------------------------------------------


def nic_ipv4(nic: TwinNic) -> str:
    """The RoCE address of the NIC: one /16 per rail, hosts numbered from 1."""
    n = nic.host_index + 1
    return f"10.{100 + nic.rail}.{(n >> 8) & 0xFF}.{n & 0xFF}"


def nic_gids(nic: TwinNic) -> tuple[show_gids.Gid, ...]:
    """GIDs 0-3 of a RoCE port: link-local and IPv4-mapped, each as RoCE v1 and v2."""
    link_local = f"fe80:0000:0000:0000:{eui64(nic)}"
    a, b, c_, d = (int(x) for x in nic_ipv4(nic).split("."))
    mapped = f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c_:02x}{d:02x}"
    ip = nic_ipv4(nic)
    if not nic.ipv4:  # no IPv4 address on the netdev: only its link-local GIDs
        return (
            show_gids.Gid(nic.rdma_dev, 1, 0, link_local, None, "v1", nic.netdev),
            show_gids.Gid(nic.rdma_dev, 1, 1, link_local, None, "v2", nic.netdev),
        )
    return (
        show_gids.Gid(nic.rdma_dev, 1, 0, link_local, None, "v1", nic.netdev),
        show_gids.Gid(nic.rdma_dev, 1, 1, link_local, None, "v2", nic.netdev),
        show_gids.Gid(nic.rdma_dev, 1, 2, mapped, ip, "v1", nic.netdev),
        show_gids.Gid(nic.rdma_dev, 1, 3, mapped, ip, "v2", nic.netdev),
    )


def _rate(speed_mbps: int) -> tuple[float, str | None, str | None]:
    for lane, name in LANE_SPEEDS:
        lanes, rest = divmod(speed_mbps, lane)
        if rest == 0 and lanes in (1, 2, 4, 8):
            return speed_mbps / 1000, f"{lanes}X", name
    return speed_mbps / 1000, None, None


@cache
def _ib_port_files(state: str, speed_mbps: int) -> dict[str, str]:
    """``ports/1/{state,rate,link_layer}`` and a few ``hw_counters`` of a RoCE device."""
    rate, width, speed = _rate(speed_mbps)
    port = hw_counters.IbPort(
        port=1,
        state=state if state in hw_counters.PORT_STATES.values() else "DOWN",
        phys_state=None,
        rate_gbps=rate,
        width=width,
        speed=speed,
        link_layer="Ethernet",
        lifespan_ms=None,
        hw_counters=dict.fromkeys(HW_COUNTERS, 0),
        counters={},
        cm_counters={},
    )
    return hw_counters.dump_tree(hw_counters.HwCounters((hw_counters.IbDevice(None, None, None, None, (port,)),)))


@cache
def _rdma_cm(tos: int, mode: str) -> dict[str, str]:
    return roce_tos.dump_tree(roce_tos.RoceTos((roce_tos.RoceDefaults(1, tos, mode),)))


@cache
def _ethtool_stats(pfc: frozenset[int]) -> str:
    """``ethtool -S`` of an idle mlx5 port; per-priority pause counters exist for PFC priorities only."""
    names = [
        "rx_packets",
        "rx_bytes",
        "tx_packets",
        "tx_bytes",
        "rx_out_of_buffer",
        "rx_packets_phy",
        "rx_bytes_phy",
        "tx_packets_phy",
        "tx_bytes_phy",
        "rx_crc_errors_phy",
        "rx_symbol_err_phy",
        "rx_discards_phy",
        "tx_discards_phy",
        "rx_pause_ctrl_phy",
        "tx_pause_ctrl_phy",
        "rx_pcs_symbol_err_phy",
        "rx_corrected_bits_phy",
        "link_down_events_phy",
    ]
    for p in range(8):
        names += [f"rx_prio{p}_bytes", f"rx_prio{p}_packets", f"tx_prio{p}_bytes", f"tx_prio{p}_packets"]
    for p in sorted(pfc):
        names += [
            f"rx_prio{p}_pause",
            f"rx_prio{p}_pause_duration",
            f"tx_prio{p}_pause",
            f"tx_prio{p}_pause_duration",
            f"rx_prio{p}_pause_transition",
        ]
    names += ["tx_pause_storm_warning_events", "tx_pause_storm_error_events", "module_unplug", "module_bus_stuck"]
    return ethtool_stats.dump(dict.fromkeys(names, 0))


# --- GPUs: nvidia-smi topo -m and the NCCL topology ----------------------------------------------------


def _bdf(bus: int) -> str:
    return f"0000:{bus:02x}:00.0"


@cache
def gpu_topology(nics: tuple[tuple[str, int], ...], off_switch: tuple[int, ...] = ()) -> tuple[str, str]:
    """``nvidia-smi topo -m`` and the NCCL topology XML of a host whose NIC ``i`` is ``nics[i]`` (name, speed).

    GPUs in ``off_switch`` sit on a PCIe switch of their own (``host_pci_files.own_switch_bus``, same NUMA node,
    same GPU address) with no NIC under it, so both views show their closest NIC across host bridges (``NODE``).
    """
    count = c.GPUS_PER_HOST
    per_node = count // len(NUMA_CPUS)
    gpu_labels = tuple(f"GPU{i}" for i in range(count))
    nic_labels = tuple(f"NIC{i}" for i in range(len(nics)))

    def relation(a: int, b: int, same_switch: bool) -> str:
        if same_switch and a not in off_switch:
            return "PIX"
        return "NODE" if a // per_node == b // per_node else "SYS"

    matrix: dict[str, dict[str, str]] = {}
    for i, label in enumerate(gpu_labels):
        row = {g: ("X" if j == i else GPU_NVLINKS) for j, g in enumerate(gpu_labels)}
        row |= {n: relation(i, j, i == j) for j, n in enumerate(nic_labels)}
        matrix[label] = row
    for i, label in enumerate(nic_labels):
        row = {g: relation(i, j, i == j) for j, g in enumerate(gpu_labels)}
        row |= {n: ("X" if j == i else relation(i, j, False)) for j, n in enumerate(nic_labels)}
        matrix[label] = row
    smi = nvidia_smi_topo.NvidiaSmiTopo(
        gpus=gpu_labels,
        nics=nic_labels,
        matrix=matrix,
        nic_legend={label: name for label, (name, _) in zip(nic_labels, nics, strict=True)},
        cpu_affinity={g: NUMA_CPUS[i // per_node] for i, g in enumerate(gpu_labels)},
        numa_affinity={g: str(i // per_node) for i, g in enumerate(gpu_labels)},
        gpu_numa_id=dict.fromkeys(gpu_labels),
    )
    switches = [_bdf(bus) for bus in SWITCH_BUSES]
    gpu_switch = [_bdf(own_switch_bus(i)) if i in off_switch else switches[i] for i in range(len(SWITCH_BUSES))]
    gpus = tuple(
        nccl_topo.TopoGpu(
            busid=_bdf(SWITCH_BUSES[i] + 3),
            dev=i,
            rank=i,
            sm=90,
            gdr=True,
            pci_class=GPU_PCI_CLASS,
            numa=i // per_node,
            pci_switch=gpu_switch[i],
            pci_path=(gpu_switch[i],),
        )
        for i in range(count)
    )
    topo_nics = tuple(
        nccl_topo.TopoNic(
            name=name,
            dev=i,
            busid=_bdf(SWITCH_BUSES[i] + 2),
            speed_mbps=speed,
            port=1,
            guid=None,
            gdr=True,
            coll=None,
            pci_class=NIC_PCI_CLASS,
            numa=i // per_node,
            pci_switch=switches[i],
            pci_path=(switches[i],),
        )
        for i, (name, speed) in enumerate(nics)
    )
    cpus = tuple(nccl_topo.TopoCpu(node, None, "x86_64", "GenuineIntel") for node in range(len(NUMA_CPUS)))
    xml = nccl_topo.dump(nccl_topo.NcclTopo(1, cpus, gpus, topo_nics))
    return nvidia_smi_topo.dump(smi), xml
