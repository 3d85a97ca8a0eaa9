"""Every file the twin writes for a host parses with the real parser, and the files agree with each other."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from unifab.parse.host import (
    ethtool_module,
    ethtool_pause,
    ethtool_stats,
    hw_counters,
    ibdev2netdev,
    ibv_devinfo,
    ip_link,
    lldpcli,
    mlnx_qos,
    nccl_topo,
    nvidia_smi_topo,
    roce_tos,
    show_gids,
    sysfs_ecn,
    traffic_class,
    xid,
)
from unifab.twin import hardware, host_files
from unifab.twin.cluster import build

HOST_FILE = re.compile(r"^hosts/(?P<host>[^/]+)/(?P<rel>.+)$")


def _kind(rel: str) -> str:
    """Which parser reads a host file of the twin (the first pattern that matches)."""
    patterns = (
        (r"cmd/mlnx_qos/[^/]+\.txt", "mlnx_qos"),
        (r"cmd/ethtool-S/[^/]+\.txt", "ethtool-S"),
        (r"cmd/ethtool-a/[^/]+\.txt", "ethtool-a"),
        (r"cmd/ip-d-link\.txt", "ip-link"),
        (r"cmd/ethtool-m/[^/]+\.txt", "ethtool-m"),
        (r"cmd/dmesg\.txt", "xid"),
        (r"cmd/lldpcli\.json", "lldpcli"),
        (r"cmd/ibdev2netdev\.txt", "ibdev2netdev"),
        (r"cmd/show_gids\.txt", "show_gids"),
        (r"cmd/ibv_devinfo\.txt", "ibv_devinfo"),
        (r"cmd/nvidia-smi-topo-m\.txt", "nvidia-smi-topo"),
        (r"cmd/nccl-topo\.xml", "nccl-topo"),
        (r"sys/class/net/[^/]+/mtu", "mtu"),
        (r"sys/class/net/[^/]+/ecn/.+", "sysfs-ecn"),
        (r"sys/class/infiniband/[^/]+/tc/1/traffic_class", "traffic-class"),
        (r"sys/class/infiniband/[^/]+/ports/1/.+", "hw-counters"),
        (r"sys/kernel/config/rdma_cm/[^/]+/ports/1/default_roce_(tos|mode)", "roce-tos"),
        # written by host_pci_files and host_nic_vendor_files (tests/twin/test_host_pci_files.py)
        (r"cmd/lspci-vvv\.txt", "lspci"),
        (r"cmd/lsmod\.txt", "lsmod"),
        (r"cmd/nvidia-smi-q\.xml", "nvidia-smi-q"),
        (r"cmd/rdma-statistic\.txt", "rdma-statistic"),
        (r"cmd/bnxt-qos/[^/]+\.txt", "bnxt-qos"),
        (r"sys/module/[^/]+/version", "module-version"),
        (r"sys/kernel/config/bnxt_re/[^/]+/ports/1/cc/[^/]+", "bnxt-cc"),
        (r"sys/kernel/debug/mlx5/[^/]+/cc_params/[^/]+", "cc-params"),
    )
    return next((kind for pattern, kind in patterns if re.fullmatch(pattern, rel)), "unknown")


def test_every_host_file_parses_and_agrees(twin_bundle: Path) -> None:
    hosts: dict[str, dict[str, dict[str, str]]] = {}  # host -> kind -> {rel: text}
    for path in sorted((twin_bundle / "hosts").rglob("*")):
        if path.is_file():
            m = HOST_FILE.match(path.relative_to(twin_bundle).as_posix())
            assert m is not None
            kind = _kind(m["rel"])
            assert kind != "unknown", f"twin wrote a host file no parser reads: {m['rel']}"
            hosts.setdefault(m["host"], {}).setdefault(kind, {})[m["rel"]] = path.read_text()
    assert len(hosts) == 16
    off_switch, slow = _placed_and_slowed(twin_bundle)
    changed = _nic_changes(twin_bundle)
    for host, files in hosts.items():
        _check_host(host, files, off_switch.get(host, set()), slow.get(host, set()), changed.get(host, {}))


def _nic_changes(bundle: Path) -> dict[str, dict[str, set[str]]]:
    """From the truth: host -> host scenario (gid-index, roce-mtu) -> the RDMA devices it changed; and host ->
    "dark" / "silent" -> the netdevs a cabling scenario left without link (missing-cable, host-port-down) or
    without LLDP (host-no-lldp)."""
    out: dict[str, dict[str, set[str]]] = {}
    for m in json.loads((bundle / "truth.json").read_text())["misconfigurations"]:
        if m["scenario"] in ("gid-index", "roce-mtu"):
            host, dev = m["entities"][0].removeprefix("nic:").split(":")
            out.setdefault(host, {}).setdefault(m["scenario"], set()).add(dev)
        elif m["scenario"] in ("missing-cable", "host-port-down", "host-no-lldp") and m["check"] != "COVERAGE":
            host, netdev = m["subject"]["a"].split(":")
            kind = "silent" if m["scenario"] == "host-no-lldp" else "dark"
            out.setdefault(host, {}).setdefault(kind, set()).add(netdev)
    return out


def _placed_and_slowed(bundle: Path) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """From the truth: host -> GPUs the affinity scenario moved, host -> rails degraded-link slowed to 200G."""
    truth = json.loads((bundle / "truth.json").read_text())["misconfigurations"]
    off_switch: dict[str, set[int]] = {}
    slow: dict[str, set[int]] = {}
    for m in truth:
        if m["scenario"] == "affinity":
            host, gpu = m["entities"][0].removeprefix("gpu:").split(":")
            off_switch.setdefault(host, set()).add(int(gpu))
        elif m["scenario"] == "degraded-link":
            host, netdev = m["subject"]["a"].split(":")
            slow.setdefault(host, set()).add(int(netdev.removeprefix("eth")))
    assert off_switch and slow
    return off_switch, slow


def _one(files: dict[str, dict[str, str]], kind: str) -> tuple[str, str]:
    [(rel, text)] = files[kind].items()
    return rel, text


def _check_host(
    host: str,
    files: dict[str, dict[str, str]],
    off_switch: set[int],
    slow: set[int],
    changed: dict[str, set[str]],
) -> None:
    src = f"hosts/{host}"
    rows = ibdev2netdev.parse(_one(files, "ibdev2netdev")[1], src)
    netdev_of = {r.rdma_dev: r.netdev for r in rows}
    assert len(netdev_of) == 8
    mtu = {rel.split("/")[3]: int(text) for rel, text in files["mtu"].items()}
    (ip_text,) = files["ip-link"].values()
    assert {i.name: i.mtu for i in ip_link.parse(ip_text, host) if i.name != "lo"} == mtu
    assert set(ip_link.max_mtus(ip_text, host)) == set(mtu)  # every RDMA netdev has its maxmtu
    pfc = {
        rel.split("/")[2].removesuffix(".txt"): set(mlnx_qos.parse(text, rel).pfc_enabled)
        for rel, text in files["mlnx_qos"].items()
    }
    dark = changed.get("dark", set())
    short = dark | changed.get("silent", set())  # ports without link or without LLDP have no neighbour
    assert len(lldpcli.parse_json0(_one(files, "lldpcli")[1], src)) == 8 - len(short)
    # show_gids: four GIDs per device, RoCE v2 at index 3 with the IPv4 address, the right netdev; a device the
    # gid-index scenario took the IPv4 address from has only its two link-local GIDs
    gids = show_gids.parse(_one(files, "show_gids")[1], src)
    no_ipv4 = changed.get("gid-index", set())
    assert len(gids) == 32 - 2 * len(no_ipv4) and all(g.netdev == netdev_of[g.dev] for g in gids)
    assert {(g.index, g.version) for g in gids if g.ipv4} == {(2, "v1"), (3, "v2")}
    assert {g.dev for g in gids if g.ipv4} == set(netdev_of) - no_ipv4
    # ibv_devinfo: RoCE on Ethernet, the path MTU follows each netdev MTU
    devices = ibv_devinfo.parse(_one(files, "ibv_devinfo")[1], src)
    assert [d.hca_id for d in devices] == sorted(netdev_of, key=lambda d: int(d.split("_")[1]))
    for d in devices:
        [port] = d.ports
        state = "PORT_DOWN" if netdev_of[d.hca_id] in dark else "PORT_ACTIVE"
        assert (port.link_layer, port.state) == ("Ethernet", state)
        if d.hca_id in changed.get("roce-mtu", set()):  # the roce-mtu scenario's stuck RoCE MTU
            assert port.active_mtu == 1024 < hardware.active_mtu(mtu[netdev_of[d.hca_id]])
            continue
        assert port.active_mtu == hardware.active_mtu(mtu[netdev_of[d.hca_id]])
        assert port.active_mtu == (4096 if mtu[netdev_of[d.hca_id]] == 9000 else 1024)
    # ethtool -S: pause counters exactly on the PFC priorities
    for rel, text in files["ethtool-S"].items():
        stats = ethtool_stats.parse(text, rel)
        netdev = rel.split("/")[2].removesuffix(".txt")
        assert set(ethtool_stats.per_priority(stats, "rx_prio{p}_pause")) == pfc[netdev]
    for rel, text in files["sysfs-ecn"].items():
        sysfs_ecn.parse_tree({rel.split("/ecn/")[1]: text}, rel)
    for rel, text in files["traffic-class"].items():
        assert traffic_class.parse(text, rel).global_tclass in (None, 96, 106)
    # sysfs port files and counters, per device
    by_dev: dict[str, dict[str, str]] = {}
    for rel, text in files["hw-counters"].items():
        dev, _, inner = rel.removeprefix("sys/class/infiniband/").partition("/")
        by_dev.setdefault(dev, {})[inner] = text
    assert set(by_dev) == set(netdev_of)
    for dev, tree in by_dev.items():
        [device] = hw_counters.parse_tree(tree, f"{src}/sys/class/infiniband/{dev}").devices
        [port] = device.ports
        want = (200.0, "2X") if int(netdev_of[dev].removeprefix("eth")) in slow else (400.0, "4X")
        state = "DOWN" if netdev_of[dev] in dark else "ACTIVE"
        assert (port.state, port.rate_gbps, port.width, port.speed) == (state, *want, "NDR")
        assert port.link_layer == "Ethernet" and set(port.hw_counters) == set(hardware.HW_COUNTERS)
    # rdma_cm: RoCE v2, TOS 106 (DSCP 26)
    cm: dict[str, dict[str, str]] = {}
    for rel, text in files["roce-tos"].items():
        dev, _, inner = rel.removeprefix("sys/kernel/config/rdma_cm/").partition("/")
        cm.setdefault(dev, {})[inner] = text
    assert set(cm) == set(netdev_of)
    for dev, tree in cm.items():
        [defaults] = roce_tos.parse_tree(tree, dev).ports
        assert (defaults.port, defaults.tos, defaults.dscp, defaults.mode) == (1, 106, 26, "RoCE v2")
    for rel, text in files["ethtool-a"].items():
        assert ethtool_pause.parse(text, rel).rx in (False, True)
    for rel, text in files["ethtool-m"].items():
        assert ethtool_module.parse(text, rel).module_state == "ModuleReady"
    assert not xid.parse(_one(files, "xid")[1], src).events
    _check_gpu_topology(files, src, off_switch, slow)


def _check_gpu_topology(files: dict[str, dict[str, str]], src: str, off_switch: set[int], slow: set[int]) -> None:
    """GPU i is PIX to NIC i (one PCIe switch) unless the affinity scenario seated it on a switch of its own."""
    topo = nvidia_smi_topo.parse(_one(files, "nvidia-smi-topo")[1], src)
    assert topo.gpus == tuple(f"GPU{i}" for i in range(8)) and topo.nic_legend["NIC3"] == "mlx5_3"
    for i in range(8):
        row = topo.matrix[f"GPU{i}"]
        assert row[f"NIC{i}"] == ("NODE" if i in off_switch else "PIX")
        assert {row[f"NIC{j}"] for j in range(8) if j != i} <= {"NODE", "SYS"}
        assert topo.numa_affinity[f"GPU{i}"] == str(i // 4)
    nccl = nccl_topo.parse(_one(files, "nccl-topo")[1], src)
    assert [c.numa for c in nccl.cpus] == [0, 1]
    nics = {n.name: n for n in nccl.nics}
    for g in nccl.gpus:
        nic = nics[f"mlx5_{g.dev}"]
        assert g.pci_switch is not None and (g.pci_switch == nic.pci_switch) == (g.dev not in off_switch)
        assert g.numa == nic.numa and g.busid != nic.busid
        assert nic.speed_mbps == (200_000 if g.dev in slow else 400_000)


@pytest.mark.parametrize(
    ("netdev_mtu", "expected"),
    [(9000, 4096), (4192, 4096), (4191, 2048), (2144, 2048), (2143, 1024), (1500, 1024), (1119, 512), (300, 256)],
)
def test_active_mtu_follows_the_kernel(netdev_mtu: int, expected: int) -> None:
    """96 bytes of RoCE headers come off the netdev MTU (iboe_get_mtu), then the largest IB MTU that fits."""
    assert hardware.active_mtu(netdev_mtu) == expected


def test_gids_and_guid_come_from_the_mac() -> None:
    nic = build(8 * 300).hosts["gpu257"][5]  # host 257: MAC 0c:42:a1:01:01:05, address 10.105.1.1
    gids = host_files.nic_gids(nic)
    assert gids[0].gid == "fe80:0000:0000:0000:0e42:a1ff:fe01:0105"
    assert (gids[3].gid, gids[3].ipv4) == ("0000:0000:0000:0000:0000:ffff:0a69:0101", "10.105.1.1")
    assert hardware.nic_ibv_device(nic).node_guid == "0e42:a1ff:fe01:0105"
    assert show_gids.parse(show_gids.dump(gids)) == gids


def test_identical_texts_are_rendered_once() -> None:
    nics = build(16).hosts
    a, b = nics["gpu001"], nics["gpu002"]
    key = tuple((n.rdma_dev, n.speed_mbps) for n in a)
    assert host_files.gpu_topology(key) is host_files.gpu_topology(tuple((n.rdma_dev, n.speed_mbps) for n in b))
    assert host_files._ib_port_files("ACTIVE", 400_000) is host_files._ib_port_files("ACTIVE", 400_000)
