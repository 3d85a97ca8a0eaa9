"""A bundle host directory: every NIC, GPU and PCIe artifact through the real parsers; damaged files as findings."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, PcieLink
from unifab.twin.cluster import ROCE_PRIO, build
from unifab.twin.host_nic_vendor_files import OFED_MLX5_VERSION
from unifab.twin.host_pci_files import GPU_PRODUCT, gpu_uuid
from unifab.twin.topology_scenarios import DEGRADED_SPEED_MBPS
from unifab.twin.writer import write_bundle

HOST = "gpu001"


def _put(root: Path, rel: str, text: str) -> Path:
    path = root / "hosts" / HOST / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _only_input_findings(fabric: Fabric) -> list[tuple[str, str, int | None]]:
    return [(f.check, f.subject["path"], f.evidence.get("line")) for f in fabric.input_findings]


# --- the twin ------------------------------------------------------------------------------------------


def test_twin_fills_nic_gpu_and_host_fields(twin_bundle: Path) -> None:
    fabric = load_bundle(twin_bundle)
    assert fabric.input_findings == []
    truth = orjson.loads((twin_bundle / "truth.json").read_bytes())
    moved = {e for m in truth["misconfigurations"] if m["check"] == "TOPO-PCIE-AFFINITY" for e in m["entities"]}
    # the roce-mtu and gid-index scenarios give a few NICs a stuck RoCE MTU or no IPv4 GIDs
    odd = {m["scenario"]: set(m["entities"]) for m in truth["misconfigurations"] if m["check"].startswith("HOST-")}
    # the missing-cable and host-port-down scenarios leave a few host ports dark (RDMA port DOWN)
    cabling = ("missing-cable", "host-port-down")
    dark = {m["subject"]["a"] for m in truth["misconfigurations"] if m["scenario"] in cabling and "a" in m["subject"]}
    for host in fabric.hosts.values():
        assert sorted(host.gpus) == list(range(8))
        for i, gpu in host.gpus.items():
            assert gpu.id == f"gpu:{host.name}:{i}"
            if gpu.id not in moved:  # the pcie-affinity scenario seats a few GPUs away from their NIC
                assert (gpu.nic, gpu.nic_relation, gpu.numa_node) == (f"mlx5_{i}", "PIX", i // 4)
            assert gpu.pci_bus_id is not None
        for nic in host.nics.values():
            assert nic.pci_address is not None and nic.numa_node == host.gpus[int(nic.netdev[3:])].numa_node
            assert (nic.fw_ver, nic.vendor_part_id, nic.board_id) == ("28.39.1002", 4129, "MT_0000000838")
            assert (nic.link_layer, nic.port_state) == ("Ethernet", "DOWN" if str(nic.endpoint) in dark else "ACTIVE")
            assert nic.speed_mbps in (400_000, DEGRADED_SPEED_MBPS)  # the degraded-link scenario halves a few
            if nic.id in odd.get("roce-mtu", set()):
                assert nic.active_mtu == 1024 and nic.mtu == 9000
            else:
                assert nic.active_mtu == (4096 if nic.mtu == 9000 else 1024)
            if nic.id in odd.get("gid-index", set()):
                assert [(g.index, g.ipv4) for g in nic.gids] == [(0, None), (1, None)]
            else:
                assert [g.index for g in nic.gids] == [0, 1, 2, 3]
                assert {g.version for g in nic.gids} == {"v1", "v2"} and all(g.netdev == nic.netdev for g in nic.gids)
                assert nic.gids[3].ipv4 is not None and nic.gids[3].gid.endswith(
                    "{:02x}{:02x}:{:02x}{:02x}".format(*map(int, nic.gids[3].ipv4.split(".")))
                )
            assert nic.counters["rdma:np_cnp_sent"] == 0 and nic.counters["ethtool:rx_discards_phy"] == 0
            assert nic.qos is not None
            assert ("ethtool:rx_prio3_pause" in nic.counters) == (ROCE_PRIO in nic.qos.pfc_enabled)
            assert (nic.qos.roce_tos, nic.qos.roce_mode) == (106, "RoCE v2")
    nic = fabric.hosts[HOST].nics["eth5"]
    gpu5 = fabric.hosts[HOST].gpus[5]
    assert nic.rdma_dev == "mlx5_5" and nic.numa_node == gpu5.numa_node == 1
    assert nic.pci_address == "0000:a8:00.0" and gpu5.pci_bus_id == "0000:a9:00.0"
    gen5_x16 = PcieLink(speed_gts=32.0, width=16, max_speed_gts=32.0, max_width=16, downgraded=False)
    assert nic.pcie == gpu5.pcie == gen5_x16  # from cmd/lspci-vvv.txt
    assert (nic.driver, nic.driver_version) == ("mlx5_core", OFED_MLX5_VERSION)
    assert (gpu5.name, gpu5.uuid) == (GPU_PRODUCT, gpu_uuid(0, 5))  # from cmd/nvidia-smi-q.xml
    assert fabric.hosts[HOST].acs_enabled_bridges == ()
    assert nic.transceiver is not None and nic.transceiver.module_state == "ModuleReady"


def test_nic_mtu_change_shows_in_active_mtu(tmp_path: Path) -> None:
    cluster = build(8)
    cluster.hosts[HOST][2].mtu = 1500
    cluster.hosts[HOST][3].speed_mbps = 200_000
    cluster.hosts[HOST][4].port_state = "DOWN"
    write_bundle(cluster, tmp_path)
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    nics = fabric.hosts[HOST].nics
    assert (nics["eth2"].mtu, nics["eth2"].active_mtu) == (1500, 1024)
    assert nics["eth3"].speed_mbps == 200_000
    assert nics["eth4"].port_state == "DOWN"
    assert nics["eth0"].active_mtu == 4096


# --- real samples added to a twin host -----------------------------------------------------------------


def test_real_host_samples_fill_transceiver_pcie_and_gpu(bundle: Path, samples: Path) -> None:
    s = samples / "host"
    _put(bundle, "cmd/ethtool-m/eth0.txt", (s / "ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt").read_text())
    lspci_text = (s / "lspci_vvv_excerpt_h100_cx7_pcieswitch.txt").read_text().split("\n")
    assert lspci_text[72].strip().startswith("ACSCtl:")
    lspci_text[72] = lspci_text[72].replace("SrcValid-", "SrcValid+")  # ACS left on by the OS on switch 17:00.0
    _put(bundle, "cmd/lspci-vvv.txt", "\n".join(lspci_text))
    _put(bundle, "cmd/nvidia-smi-q.xml", (s / "nvidia_smi_q_x_a100_sxm4_80gb_drv535.xml").read_text())
    _put(bundle, "cmd/rdma-statistic.txt", (s / "rdma_statistic_optional_counters_rocep8s0f0.txt").read_text())
    _put(bundle, "cmd/uname-r.txt", "5.15.0-1042-nvidia\n")
    _put(bundle, "sys/class/infiniband/mlx5_0/device/uevent", "DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:1a:00.0\n")
    _put(bundle, "sys/class/infiniband/mlx5_0/device/numa_node", "0\n")
    _put(bundle, "sys/module/mlx5_core/version", "23.10-1.1.9\n")
    fabric = load_bundle(bundle)
    assert fabric.input_findings == []
    host = fabric.hosts[HOST]
    nic = host.nics["eth0"]
    assert nic.transceiver is not None
    assert (nic.transceiver.identifier, nic.transceiver.vendor) == ("QSFP28", "Mellanox")
    assert (nic.transceiver.part_number, nic.transceiver.serial_number) == ("MMA1B00-C100D", "MT1708FT01255")
    assert len(nic.transceiver.lanes) == 4 and nic.transceiver.lanes[0].rx_power_dbm == -0.12
    assert (nic.pci_address, nic.driver, nic.driver_version) == ("0000:1a:00.0", "mlx5_core", "23.10-1.1.9")
    assert nic.pcie is not None and (nic.pcie.speed_gts, nic.pcie.width, nic.pcie.downgraded) == (32.0, 16, False)
    assert host.acs_enabled_bridges == ("0000:17:00.0",)
    assert (host.kernel, host.gpu_driver, host.cuda_version) == ("5.15.0-1042-nvidia", "535.54.03", "12.2")
    # nvidia-smi -q's only GPU is index 0; the matrix still names its NIC
    gpu = host.gpus[0]
    assert (gpu.pci_bus_id, gpu.name) == ("0000:01:00.0", "NVIDIA A100-SXM4-80GB")
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298" and (gpu.nic, gpu.nic_relation) == ("mlx5_0", "PIX")
    assert gpu.pcie is not None and (gpu.pcie.speed_gts, gpu.pcie.width) == (16.0, 16)


def test_xid_events_attach_to_their_gpu(bundle: Path, samples: Path) -> None:
    log = (samples / "host" / "dmesg_xid119_gsp_rpc_timeout_xe9680_h100.log").read_text()
    _put(bundle, "cmd/dmesg.txt", log.replace("PCI:0000:9b:00", "PCI:0000:18:00"))  # the twin's GPU 0
    fabric = load_bundle(bundle)
    assert fabric.input_findings == []
    gpus = fabric.hosts[HOST].gpus
    assert gpus[0].xids and set(gpus[0].xids) == {119}
    assert gpus[0].uuid == gpu_uuid(0, 0)  # nvidia-smi -q names the GPU; the kernel log only when it is absent
    assert all(not g.xids for i, g in gpus.items() if i)
    (bundle / "hosts" / HOST / "cmd" / "nvidia-smi-q.xml").unlink()
    assert load_bundle(bundle).hosts[HOST].gpus[0].uuid == "GPU-509665ad-b600-ac93-3616-d754b23d636d"


def test_closest_nic_from_the_nccl_topology_alone(bundle: Path) -> None:
    (bundle / "hosts" / HOST / "cmd" / "nvidia-smi-topo-m.txt").unlink()
    gpus = load_bundle(bundle).hosts[HOST].gpus
    assert [(g.nic, g.nic_relation, g.numa_node) for g in gpus.values()] == [
        (f"mlx5_{i}", "PIX", i // 4) for i in range(8)
    ]


def test_infiniband_hca_from_real_sysfs(tmp_path: Path, samples: Path) -> None:
    host = tmp_path / "hosts" / "h100"
    shutil.copytree(samples / "host" / "sysfs_class_infiniband_h100" / "mlx5_4", host / "sys/class/infiniband/mlx5_4")
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []  # no RoCE QoS is expected on an InfiniBand port
    nic = fabric.hosts["h100"].nics["mlx5_4"]
    assert (nic.rdma_dev, nic.link_layer, nic.port_state, nic.speed_mbps) == ("mlx5_4", "InfiniBand", "ACTIVE", 400_000)
    assert nic.fw_ver is not None and nic.fw_ver.startswith("28.")
    assert "ib:port_xmit_wait" in nic.counters and "rdma:out_of_sequence" in nic.counters
    assert nic.qos is None


# --- other NIC flavours --------------------------------------------------------------------------------

GETQOS = """IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:2 7:0
         TC Bandwidth: 50% 50% 0%
         TSA_MAP: 0:ets 1:ets 2:strict
IEEE 8021QAZ PFC TLV:
         PFC enabled: 3
IEEE 8021QAZ APP TLV:
         APP#0:
          Priority: 3
          Sel: 5
          DSCP: 26

         APP#1:
          Priority: 6
          Sel: 5
          DSCP: 48

TC Rate Limit: 100% 100% 100% 0% 0% 0% 0% 0%
"""


def _thor_bundle(root: Path, getqos: str = GETQOS, **cc_files: str) -> str:
    """A Broadcom Thor host ``thor01`` with getqos and bnxt_re configfs files (``cc_files`` override)."""
    host = "thor01"
    base = root / "hosts" / host
    files = {
        "cmd/ibdev2netdev.txt": "bnxt_re0 port 1 ==> ens1f0np0 (Up)\nbnxt_re1 port 1 ==> ens1f1np1 (Up)\n",
        "cmd/bnxt-qos/ens1f0np0.txt": getqos,
        "sys/class/net/ens1f0np0/mtu": "9000\n",
        "sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_tos": "104\n",
        "sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_mode": "RoCE v2\n",
    }
    cc = {"cc_mode": "0x1", "cnp_dscp": "0x30", "cnp_prio": "0x6", "ecn_enable": "0x1", "roce_dscp": "0x1a"}
    cc["ecn_marking"] = "0x1"  # DCQCN runs only with ECN-capable RoCE too (dcqcn_on)
    files |= {f"sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/{k}": v + "\n" for k, v in (cc | cc_files).items()}
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return host


def test_broadcom_nic_qos_from_getqos_and_bnxt_re_configfs(tmp_path: Path) -> None:
    host = _thor_bundle(tmp_path)
    fabric = load_bundle(tmp_path)
    # the second Thor NIC has no getqos output: asked for by its own tool's name
    assert _only_input_findings(fabric) == [("INPUT-MISSING", f"hosts/{host}/cmd/bnxt-qos/ens1f1np1.txt", None)]
    qos = fabric.hosts[host].nics["ens1f0np0"].qos
    assert qos is not None
    assert (qos.trust, qos.dscp2prio, qos.pfc_enabled) == ("dscp", {26: 3, 48: 6}, frozenset({3}))
    assert qos.prio_tc == {0: 0, 1: 0, 2: 0, 3: 1, 4: 0, 5: 0, 6: 2, 7: 0}
    assert [(e.tc, e.tsa, e.bw_percent) for e in qos.ets] == [(0, "ets", 50), (1, "ets", 50), (2, "strict", 0)]
    assert (qos.cnp_dscp, qos.cnp_prio, qos.ecn_np_enabled) == (48, 6, frozenset(range(8)))
    assert (qos.roce_tos, qos.roce_mode, qos.cable_len_m) == (104, "RoCE v2", None)
    assert fabric.hosts[host].nics["ens1f1np1"].qos is None


def test_broadcom_bad_configfs_file_costs_that_value(tmp_path: Path) -> None:
    host = _thor_bundle(tmp_path, cnp_dscp="forty-eight")
    fabric = load_bundle(tmp_path)
    cc = f"hosts/{host}/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cnp_dscp"
    assert sorted(_only_input_findings(fabric)) == [
        ("INPUT-MISSING", f"hosts/{host}/cmd/bnxt-qos/ens1f1np1.txt", None),
        ("INPUT-PARTIAL", cc, 1),
    ]
    qos = fabric.hosts[host].nics["ens1f0np0"].qos
    assert qos is not None  # the CNP DSCP is unknown; everything else reads as from the whole tree
    assert (qos.cnp_dscp, qos.cnp_prio, qos.ecn_np_enabled, qos.dscp2prio) == (
        None,
        6,
        frozenset(range(8)),
        {26: 3, 48: 6},
    )


def test_broadcom_bad_getqos_line_costs_the_nic_qos(tmp_path: Path) -> None:
    """getqos stays all-or-nothing: a dropped APP entry would read as a DSCP left unmapped."""
    host = _thor_bundle(tmp_path, getqos=GETQOS.replace("DSCP: 48", "DSCP: 99"))
    fabric = load_bundle(tmp_path)
    checks = [(check, path) for check, path, _line in _only_input_findings(fabric)]
    assert ("INPUT-UNREADABLE", f"hosts/{host}/cmd/bnxt-qos/ens1f0np0.txt") in checks
    assert fabric.hosts[host].nics["ens1f0np0"].qos is None


def test_upstream_mlx5_cnp_from_debugfs_cc_params(bundle: Path) -> None:
    shutil.rmtree(bundle / "hosts" / HOST / "sys/class/net/eth0/ecn")
    cc = {"np_cnp_dscp": 46, "np_cnp_prio": 5, "np_cnp_prio_mode": 0, "rp_gd": 11}
    for name, value in cc.items():  # the twin's NCCL topology places mlx5_0 at 0000:17:00.0
        _put(bundle, f"sys/kernel/debug/mlx5/0000:17:00.0/cc_params/{name}", f"{value}\n")
    fabric = load_bundle(bundle)
    assert fabric.input_findings == []
    qos = fabric.hosts[HOST].nics["eth0"].qos
    assert qos is not None
    assert (qos.cnp_dscp, qos.cnp_prio, qos.ecn_np_enabled, qos.ecn_rp_enabled) == (46, 5, None, None)


def test_collect_json_entries_become_input_missing_once(bundle: Path) -> None:
    (bundle / "hosts" / HOST / "cmd/mlnx_qos/eth1.txt").unlink()
    _put(
        bundle,
        "collect.json",
        '{"version": 1, "missing": [{"path": "cmd/mlnx_qos/eth1.txt", "reason": "mlnx_qos not installed"},\n'
        ' {"path": "cmd/ethtool-m/eth0.txt", "reason": "\'ethtool -m eth0\' exited 1"}]}\n',
    )
    fabric = load_bundle(bundle)
    by_path = {f.subject["path"]: f for f in fabric.input_findings}
    assert [f.check for f in fabric.input_findings] == ["INPUT-MISSING", "INPUT-MISSING"]
    assert by_path[f"hosts/{HOST}/cmd/mlnx_qos/eth1.txt"].message.endswith("mlnx_qos not installed")
    assert f"hosts/{HOST}/cmd/ethtool-m/eth0.txt" in by_path
    assert by_path[f"hosts/{HOST}/cmd/ethtool-m/eth0.txt"].subject["device"] == HOST


# --- damaged files ---------------------------------------------------------------------------------------

Mutation = Callable[[Path, Path], int | None]  # (host dir, samples dir) -> the line the finding must name


def _set_line(rel: str, number: int, edit: Callable[[str], str]) -> Mutation:
    def mutate(host: Path, samples: Path) -> int | None:
        path = host / rel
        lines = path.read_text().split("\n")
        lines[number - 1] = edit(lines[number - 1])
        path.write_text("\n".join(lines))
        return number

    return mutate


def _write(rel: str, text: str, line: int | None = 1, sample: str | None = None) -> Mutation:
    def mutate(host: Path, samples: Path) -> int | None:
        path = host / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((samples / "host" / sample).read_text() if sample else text)
        if sample:
            lines = path.read_text().split("\n")
            lines[line - 1 if line else 0] = text
            path.write_text("\n".join(lines))
        return line

    return mutate


def _cc_params_without_ecn(host: Path, samples: Path) -> int | None:
    shutil.rmtree(host / "sys/class/net/eth0/ecn")
    path = host / "sys/kernel/debug/mlx5/0000:17:00.0/cc_params/np_cnp_dscp"
    path.parent.mkdir(parents=True)
    path.write_text("99\n")
    return 1


GARBLED: dict[str, Mutation] = {
    "cmd/show_gids.txt": _set_line("cmd/show_gids.txt", 3, lambda s: s.replace("fe80:", "fz80:")),
    "cmd/ibv_devinfo.txt": _set_line("cmd/ibv_devinfo.txt", 5, lambda s: "garbage"),
    "cmd/ethtool-S/eth2.txt": _set_line("cmd/ethtool-S/eth2.txt", 3, lambda s: "     rx_bytes: many"),
    "cmd/nvidia-smi-topo-m.txt": _set_line("cmd/nvidia-smi-topo-m.txt", 2, lambda s: s.replace("NV18", "nv18", 1)),
    "cmd/nccl-topo.xml": _set_line("cmd/nccl-topo.xml", 3, lambda s: s.replace('busid="0000:15:00.0"', 'busid="z"')),
    "sys/class/infiniband/mlx5_1/ports/1/rate": _write("sys/class/infiniband/mlx5_1/ports/1/rate", "fast\n"),
    "sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent": _write(
        "sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent", "x\n"
    ),
    "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_mode": _write(
        "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_mode", "RoCE v3\n"
    ),
    "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos": _write(
        "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos", "300\n"
    ),
    "cmd/ethtool-m/eth0.txt": _write(
        "cmd/ethtool-m/eth0.txt", "\tno colon here", 2, "ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt"
    ),
    "cmd/lspci-vvv.txt": _write("cmd/lspci-vvv.txt", "\tNUMA node: x", 6, "lspci_vvv_excerpt_h100_cx7_pcieswitch.txt"),
    "cmd/nvidia-smi-q.xml": _write(
        "cmd/nvidia-smi-q.xml",
        "    <driver_version>535.54.03</driver_versio>",
        5,
        "nvidia_smi_q_x_a100_sxm4_80gb_drv535.xml",
    ),
    "cmd/dmesg.txt": _write(
        "cmd/dmesg.txt",
        "[ 5.1] NVRM: Xid (PCI:zz): 79, GPU has fallen off",
        3,
        "dmesg_xid119_gsp_rpc_timeout_xe9680_h100.log",
    ),
    "cmd/rdma-statistic.txt": _write("cmd/rdma-statistic.txt", "link mlx5_0/1 rx_write_requests x\n"),
    "cmd/uname-r.txt": _write("cmd/uname-r.txt", "two words\n"),
    "sys/class/infiniband/mlx5_0/device/uevent": _write("sys/class/infiniband/mlx5_0/device/uevent", "DRIVER mlx5\n"),
    "sys/class/infiniband/mlx5_0/device/numa_node": _write("sys/class/infiniband/mlx5_0/device/numa_node", "x\n"),
    "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0": _write(
        "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "\n"
    ),
    "sys/kernel/debug/mlx5/0000:17:00.0/cc_params/np_cnp_dscp": _cc_params_without_ecn,
    "collect.json": _write("collect.json", '{"missing": [\n {"path": "/etc/passwd", "reason": "r"}]}\n', None),
}


# Row-based files lose the bad row only (INPUT-PARTIAL); the others are unusable as a whole (INPUT-UNREADABLE).
READ_IN_PART = frozenset(
    {
        "cmd/dmesg.txt",  # a bad Xid line costs that event
        "cmd/ethtool-S/eth2.txt",
        "cmd/ethtool-m/eth0.txt",  # a bad line costs that line's value
        "cmd/ibv_devinfo.txt",
        "cmd/lspci-vvv.txt",  # a bad device block costs that device
        "cmd/nvidia-smi-topo-m.txt",
        "cmd/rdma-statistic.txt",
        "cmd/show_gids.txt",
        "sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent",  # one counter file costs that counter
        "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_mode",
        "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos",
    }
)


@pytest.mark.parametrize("rel", sorted(GARBLED))
def test_garbled_file_is_reported_with_file_and_line(bundle: Path, samples: Path, rel: str) -> None:
    line = GARBLED[rel](bundle / "hosts" / HOST, samples)
    fabric = load_bundle(bundle)
    check = "INPUT-PARTIAL" if rel in READ_IN_PART else "INPUT-UNREADABLE"
    assert _only_input_findings(fabric) == [(check, f"hosts/{HOST}/{rel}", line)]
    assert fabric.input_findings[0].subject["device"] == HOST
    # the rest of the host is still read
    assert len(fabric.hosts[HOST].nics) == 8 and fabric.hosts[HOST].nics["eth7"].qos is not None


def test_binary_sysfs_file_is_unreadable_not_a_crash(bundle: Path) -> None:
    _put(bundle, "sys/class/infiniband/mlx5_2/ports/1/state", "")
    (bundle / "hosts" / HOST / "sys/class/infiniband/mlx5_2/ports/1/state").write_bytes(b"\xff\xfe4: ACTIVE")
    fabric = load_bundle(bundle)
    [finding] = fabric.input_findings
    assert finding.subject["path"] == f"hosts/{HOST}/sys/class/infiniband/mlx5_2/ports/1/state"
    assert "UTF-8" in finding.message
    assert fabric.hosts[HOST].nics["eth2"].speed_mbps == 400_000


def test_garbled_broadcom_files_name_file_and_line(tmp_path: Path) -> None:
    base = tmp_path / "hosts" / "thor01"
    files = {
        "cmd/ibdev2netdev.txt": "bnxt_re0 port 1 ==> ens1f0np0 (Up)\n",
        "cmd/bnxt-qos/ens1f0np0.txt": GETQOS.replace("PFC enabled: 3", "PFC enabled: 9"),
        "sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cnp_dscp": "0xzz\n",
        "sys/class/infiniband/bnxt_re0/device/uevent": "DRIVER=bnxt_en\n",
        "sys/module/bnxt_en/version": "1.10 beta\n",
    }
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    fabric = load_bundle(tmp_path)
    assert sorted(_only_input_findings(fabric)) == [
        ("INPUT-UNREADABLE", "hosts/thor01/cmd/bnxt-qos/ens1f0np0.txt", 6),
        ("INPUT-UNREADABLE", "hosts/thor01/sys/module/bnxt_en/version", 1),
    ]
    # once getqos reads, the cc configfs is read and its bad file named
    (base / "cmd/bnxt-qos/ens1f0np0.txt").write_text(GETQOS)
    (base / "sys/module/bnxt_en/version").write_text("1.10.2-230.0.28.0\n")
    fabric = load_bundle(tmp_path)
    assert _only_input_findings(fabric) == [
        ("INPUT-UNREADABLE", "hosts/thor01/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cnp_dscp", 1)
    ]
    nic = fabric.hosts["thor01"].nics["ens1f0np0"]
    assert nic.qos is not None and nic.qos.cnp_dscp is None and nic.driver_version == "1.10.2-230.0.28.0"
