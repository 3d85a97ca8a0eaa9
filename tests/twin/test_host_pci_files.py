"""The twin's PCIe/GPU views (lspci, nvidia-smi -q -x, rdma statistic) and its NIC kinds and driver stacks:
every file parses with the real parser and the bundle reader fills the model from it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.model import Fabric, PcieLink
from unifab.parse.host import bnxt_qos, cc_params, ethtool_stats, lspci, nccl_topo, nvidia_smi_q, rdma_statistic
from unifab.twin import host_nic_vendor_files as vendor_files
from unifab.twin.cluster import CNP_DSCP, CNP_PRIO, ROCE_DSCP, ROCE_PRIO, build
from unifab.twin.generate import generate
from unifab.twin.host_pci_files import (
    CUDA_VERSION,
    GPU_DRIVER,
    GPU_PRODUCT,
    GPU_VBIOS,
    gpu_bdf,
    gpu_serial,
    gpu_uuid,
    host_lspci,
    nic_bdf,
)
from unifab.twin.nic_variants import apply_nic_variants, host_variant
from unifab.twin.writer import write_bundle

GEN5_X16 = PcieLink(speed_gts=32.0, width=16, max_speed_gts=32.0, max_width=16, downgraded=False)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric]:
    """4 hosts: gpu001 mlx5/OFED, gpu002 Broadcom, gpu003 mlx5/upstream, gpu004 Broadcom; gpu003 has DCQCN off."""
    root = tmp_path_factory.mktemp("pci") / "bundle"
    cluster = build(32)
    apply_nic_variants(cluster, "mixed", "mixed")
    cluster.hosts["gpu004"][ROCE_PRIO].rp_enabled.discard(ROCE_PRIO)  # Broadcom: ecn_enable 0 on bnxt_re3
    write_bundle(cluster, root)
    return root, load_bundle(root)


def test_variant_assignment() -> None:
    assert [host_variant(h, "mixed", "mixed") for h in range(5)] == [
        ("mlx5", "ofed"),
        ("bnxt", "bnxt"),
        ("mlx5", "upstream"),
        ("bnxt", "bnxt"),
        ("mlx5", "ofed"),
    ]
    assert host_variant(3, "mlx5", "upstream") == ("mlx5", "upstream")
    with pytest.raises(ValueError, match="vendor must be one of"):
        apply_nic_variants(build(8), "intel", "ofed")


def test_no_input_findings(mixed: tuple[Path, Fabric]) -> None:
    assert mixed[1].input_findings == []


def test_files_parse_with_the_real_parsers(mixed: tuple[Path, Fabric]) -> None:
    root, _ = mixed
    cmd = root / "hosts" / "gpu002" / "cmd"
    pci = lspci.parse((cmd / "lspci-vvv.txt").read_text(), "lspci").by_bdf()
    assert len(pci) == 32  # 8 GPUs, 8 NICs and the 16 switch downstream ports above them
    nic = pci[nic_bdf(5)]
    assert (nic.vendor, nic.kernel_driver, nic.serial_number, nic.parent) == (
        "Broadcom Inc. and subsidiaries",
        "bnxt_en",
        "P1400G24000013",  # host index 1, rail 5
        "0000:a7:00.0",
    )
    assert pci["0000:a7:00.0"].bus == lspci.BusNumbers(0xA7, 0xA8, 0xA8)
    smi = nvidia_smi_q.parse((cmd / "nvidia-smi-q.xml").read_text(), "smi")
    assert [g.pci_bus_id for g in smi.gpus] == [gpu_bdf(i) for i in range(8)]
    stat = rdma_statistic.parse((cmd / "rdma-statistic.txt").read_text(), "stat")
    assert [link.dev for link in stat.links] == [f"bnxt_re{r}" for r in range(8)]
    qos = bnxt_qos.parse((cmd / "bnxt-qos" / "eth0.txt").read_text(), "getqos")
    assert (qos.trust, qos.dscp2prio, qos.pfc_enabled) == ("dscp", {ROCE_DSCP: ROCE_PRIO, CNP_DSCP: CNP_PRIO}, (3,))
    assert not (cmd / "mlnx_qos").exists()
    up = root / "hosts" / "gpu003" / "sys" / "kernel" / "debug" / "mlx5" / nic_bdf(0) / "cc_params"
    files = {p.name: p.read_text() for p in up.iterdir()}
    assert cc_params.parse_tree(files, "cc") == vendor_files.upstream_cc_params()
    assert not (root / "hosts" / "gpu003" / "sys" / "class" / "net" / "eth0" / "ecn").exists()


def test_gpus_in_the_model(mixed: tuple[Path, Fabric]) -> None:
    _, fabric = mixed
    for host_index, host in enumerate(fabric.hosts.values()):
        assert (host.gpu_driver, host.cuda_version, host.acs_enabled_bridges) == (GPU_DRIVER, CUDA_VERSION, ())
        assert sorted(host.gpus) == list(range(8))
        for i, gpu in host.gpus.items():
            assert (gpu.name, gpu.uuid, gpu.serial, gpu.vbios_version, gpu.pci_bus_id, gpu.pcie) == (
                GPU_PRODUCT,
                gpu_uuid(host_index, i),
                gpu_serial(host_index, i),
                GPU_VBIOS,
                gpu_bdf(i),
                GEN5_X16,
            )


def test_nics_in_the_model(mixed: tuple[Path, Fabric]) -> None:
    _, fabric = mixed
    ofed, bnxt, upstream = (fabric.hosts[h].nics for h in ("gpu001", "gpu002", "gpu003"))
    for nics in (ofed, bnxt, upstream):
        assert {n.pcie for n in nics.values()} == {GEN5_X16}
        assert [n.pci_address for n in nics.values()] == [nic_bdf(r) for r in range(8)]
    assert {(n.driver, n.driver_version, n.rdma_dev) for n in ofed.values()} >= {
        ("mlx5_core", vendor_files.OFED_MLX5_VERSION, "mlx5_0")
    }
    assert {(n.driver, n.driver_version) for n in upstream.values()} == {("mlx5_core", None)}
    assert {(n.driver, n.driver_version, n.fw_ver) for n in bnxt.values()} == {
        ("bnxt_en", vendor_files.BNXT_EN_VERSION, vendor_files.BNXT_FW_VER)
    }
    assert bnxt["eth0"].rdma_dev == "bnxt_re0" and bnxt["eth0"].counters["rdma:active_qps"] == 0
    assert ofed["eth0"].counters["rdma:rx_write_requests"] == 0  # from rdma statistic only
    o, u, b = ofed["eth0"].qos, upstream["eth0"].qos, bnxt["eth0"].qos
    assert o is not None and u is not None and b is not None
    assert (o.ecn_np_enabled, o.traffic_class, o.cnp_dscp) == (frozenset(range(8)), 106, CNP_DSCP)
    # upstream: DCQCN parameters from debugfs cc_params, no per-priority enables, no traffic_class override
    assert (u.ecn_np_enabled, u.traffic_class, u.cnp_dscp, u.cnp_prio, u.trust) == (None, None, 48, 6, "dscp")
    assert (b.trust, b.dscp2prio, b.pfc_enabled, b.cable_len_m) == (
        "dscp",
        {ROCE_DSCP: ROCE_PRIO, CNP_DSCP: CNP_PRIO},
        frozenset({3}),
        None,
    )
    assert (b.ecn_np_enabled, b.cnp_dscp, b.cnp_prio, b.traffic_class) == (frozenset(range(8)), 48, 6, None)


def test_dcqcn_off_on_a_broadcom_nic_is_found(mixed: tuple[Path, Fabric]) -> None:
    _, fabric = mixed
    found = run_checks(fabric)
    assert [(f.check, f.subject.get("a")) for f in found] == [("QOS-DCQCN-OFF", "gpu004:eth3")]


def test_acs_turned_on_reaches_the_model(tmp_path: Path) -> None:
    cluster = build(8)
    write_bundle(cluster, tmp_path / "b")
    path = tmp_path / "b" / "hosts" / "gpu001" / "cmd" / "lspci-vvv.txt"
    record = lspci.parse(path.read_text(), "lspci")
    on = lspci.AcsBits(True, False, True, True, True, False, False)
    bridge = host_lspci("mlx5").devices[4]  # the downstream port above NIC 1
    devices = tuple(d if d.bdf != bridge.bdf else replace(d, acs=on) for d in record.devices)
    path.write_text(lspci.dump(lspci.Lspci(devices)))
    assert load_bundle(tmp_path / "b").hosts["gpu001"].acs_enabled_bridges == (bridge.bdf,)


@pytest.mark.parametrize(("vendor", "driver"), [("mlx5", "upstream"), ("bnxt", "ofed"), ("mixed", "mixed")])
def test_clean_twin_per_variant_has_no_findings(tmp_path: Path, vendor: str, driver: str) -> None:
    result = generate(tmp_path / "b", gpus=64, seed=1, nic_vendor=vendor, nic_driver=driver)
    assert (result.truth["generator"]["nic_vendor"], result.truth["generator"]["nic_driver"]) == (vendor, driver)
    fabric = load_bundle(tmp_path / "b")
    assert fabric.input_findings == []
    assert run_checks(fabric) == []


def test_unknown_variant_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown NIC driver 'mofed'"):
        generate(tmp_path / "b", gpus=8, nic_driver="mofed")


def test_cli_option_and_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from unifab.cli import app

    runner = CliRunner()
    ok = runner.invoke(app, ["twin", "generate", "--out", str(tmp_path / "a"), "--gpus", "16", "--nic-vendor", "bnxt"])
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "a" / "hosts" / "gpu001" / "cmd" / "bnxt-qos" / "eth0.txt").is_file()
    bad = runner.invoke(app, ["twin", "generate", "--out", str(tmp_path / "b"), "--nic-driver", "mofed"])
    assert bad.exit_code == 2 and "unknown NIC driver 'mofed'" in bad.output
    assert "--nic-vendor" in runner.invoke(app, ["twin", "generate", "--help"]).output


def test_lspci_shows_a_moved_gpu_under_its_own_switch(twin_bundle: Path) -> None:
    """affinity: lspci puts the moved GPU below a downstream port of another PCIe switch than its NIC's, the one
    the NCCL topology names; every other GPU shares its NIC's switch (downstream ports on one internal bus)."""
    truth = json.loads((twin_bundle / "truth.json").read_text())["misconfigurations"]
    moved = {tuple(m["entities"][0].removeprefix("gpu:").split(":")) for m in truth if m["scenario"] == "affinity"}
    assert moved
    for host, gpu in sorted(moved):
        cmd = twin_bundle / "hosts" / host / "cmd"
        record = lspci.parse((cmd / "lspci-vvv.txt").read_text(), "lspci-vvv.txt")
        pci = record.by_bdf()
        nccl = nccl_topo.parse((cmd / "nccl-topo.xml").read_text(), "nccl-topo.xml")
        nccl_switch = {g.dev: g.pci_switch for g in nccl.gpus}
        for i in range(8):
            gpu_port, nic_port = pci[gpu_bdf(i)].parent, pci[nic_bdf(i)].parent
            assert gpu_port is not None and nic_port is not None
            same_switch = gpu_port[:8] == nic_port[:8]  # 0000:BB: the switch's internal bus
            assert same_switch == (i != int(gpu)), (host, i)
            switch_bus = int(str(nccl_switch[i])[5:7], 16)
            assert int(gpu_port[5:7], 16) == switch_bus + 1  # the port sits on the internal bus of NCCL's switch
            assert pci[gpu_port].bus is not None and pci[gpu_port].bus.secondary == int(gpu_bdf(i)[5:7], 16)


def test_broadcom_ethtool_stats_use_bnxt_en_names(mixed: tuple[Path, Fabric]) -> None:
    """A Broadcom host's ``ethtool -S`` is bnxt_en's (ring and port counters), read onto the mlx5 names."""
    root, fabric = mixed
    bnxt = ethtool_stats.parse((root / "hosts" / "gpu002" / "cmd" / "ethtool-S" / "eth3.txt").read_text(), "eth3")
    assert {"[0]: rx_discards", "[7]: tx_discards", "rx_pfc_ena_frames_pri3", "tx_pfc_ena_frames_pri7"} <= set(bnxt)
    assert {"rx_pause_frames", "pfc_pri3_rx_duration_us", "rx_bytes_pri3", "link_down_events"} <= set(bnxt)
    assert not any(name.endswith("_phy") or "_prio" in name for name in bnxt)
    mlx5 = ethtool_stats.parse((root / "hosts" / "gpu001" / "cmd" / "ethtool-S" / "eth3.txt").read_text(), "eth3")
    assert "rx_prio3_pause" in mlx5 and not any(name.startswith("[") for name in mlx5)
    assert set(ethtool_stats.per_priority(bnxt, "rx_prio{p}_pause")) == set(range(8))  # bnxt_en prints every one
    counters = fabric.hosts["gpu002"].nics["eth3"].counters
    for name in ("rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_prio3_pause", "rx_discards_phy", "link_down_events_phy"):
        assert counters[f"ethtool:{name}"] == 0, name
    assert counters["ethtool:[0]: rx_discards"] == 0 and counters["ethtool:rx_bytes"] == 0
