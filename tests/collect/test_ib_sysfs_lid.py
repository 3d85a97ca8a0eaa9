"""An IB HCA port's LID and SM LID from the host's sysfs (``ports/1/{lid,sm_lid}``), without ``ibstat``: the
bundle reader's ``Nic.ib``, the checks and the perfquery LID index that use it, sysfs over ibstat when both
exist, a bad LID file costing that value only, the live collector's copies and the IB twin's files."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.host_live import CommandResult, collect_host
from unifab.parse.ib import ibstat
from unifab.twin.generate import generate

H100 = "host/sysfs_class_infiniband_h100/mlx5_0"  # a real ConnectX-7 NDR IB port: state, rate, counters
PORT = "sys/class/infiniband/mlx5_0/ports/1"


def _host(root: Path, samples: Path, host: str, **lids: str) -> Path:
    """``hosts/<host>/`` with only the real mlx5_0 sysfs copy, plus the LID files given (``lid="0x16"``)."""
    dev = root / "hosts" / host / "sys/class/infiniband/mlx5_0"
    shutil.copytree(samples / H100, dev)
    for name, value in lids.items():
        (dev / "ports/1" / name).write_text(value + "\n")
    return root / "hosts" / host


def test_sysfs_gives_an_ib_port_its_lid_and_sm_lid(samples: Path, tmp_path: Path) -> None:
    _host(tmp_path, samples, "dgx-001", lid="0x1a", sm_lid="0x1", lid_mask_count="0", sm_sl="0")
    _host(tmp_path, samples, "dgx-002", lid="0x0", sm_lid="0x0")  # no SM reached it yet: nothing assigned
    _host(tmp_path, samples, "dgx-003")  # the real capture: no LID files at all
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    nic = fabric.hosts["dgx-001"].nics["mlx5_0"]
    assert (nic.link_layer, nic.port_state, nic.speed_mbps) == ("InfiniBand", "ACTIVE", 400_000)
    assert nic.ib is not None and (nic.ib.lid, nic.ib.sm_lid, nic.ib.port_num) == (26, 1, 1)
    assert nic.ib.sources == {f"hosts/dgx-001/{PORT}/lid", f"hosts/dgx-001/{PORT}/sm_lid"}
    assert nic.fabric == "ib"
    for host in ("dgx-002", "dgx-003"):
        assert fabric.hosts[host].nics["mlx5_0"].ib is None


def test_ib_duplicate_finds_a_lid_only_sysfs_gave(samples: Path, tmp_path: Path) -> None:
    """No ibstat, no ib/ files: two hosts' sysfs say LID 0x5."""
    for host in ("dgx-001", "dgx-002"):
        _host(tmp_path, samples, host, lid="0x5", sm_lid="0x1")
    _host(tmp_path, samples, "dgx-003", lid="0x6", sm_lid="0x1")
    fabric = load_bundle(tmp_path)
    [f] = [f for f in run_checks(fabric) if f.check == "IB-DUPLICATE"]
    assert f.subject == {"kind": "lid", "id": "5"}
    assert f.entities == ("nic:dgx-001:mlx5_0", "nic:dgx-002:mlx5_0")
    assert [h["lid"] for h in f.evidence["holders"]] == [5, 5]


def test_perfquery_counters_reach_the_hca_by_its_sysfs_lid(samples: Path, tmp_path: Path) -> None:
    """``perfquery 22 1`` and no ibnetdiscover or ibstat: only the host's sysfs LID places the block."""
    _host(tmp_path, samples, "dgx-002", lid="0x16", sm_lid="0x1")
    (tmp_path / "ib").mkdir()
    shutil.copy(samples / "ib" / "perfquery_sim_hca_errors.txt", tmp_path / "ib" / "perfquery.txt")  # Lid 22 port 1
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []  # no "lid 22 port 1" nobody has
    ib = fabric.hosts["dgx-002"].nics["mlx5_0"].ib
    assert ib is not None and ib.lid == 22
    assert ib.counters["SymbolErrorCounter"] == 4312 and ib.counters["PortRcvErrors"] == 347
    assert {"ib/perfquery.txt", f"hosts/dgx-002/{PORT}/lid"} <= ib.sources
    found = {(f.check, f.subject["id"]) for f in run_checks(fabric) if f.check == "IB-COUNTERS"}
    assert found == {("IB-COUNTERS", "nic:dgx-002:mlx5_0")}


def test_sysfs_wins_over_ibstat_which_fills_the_rest(samples: Path, tmp_path: Path) -> None:
    """The host reader's convention (sysfs, then command output): where the two disagree the sysfs LIDs stay;
    ibstat adds the GUIDs and the states. An ibstat LID fills a port whose sysfs has none."""
    host = _host(tmp_path, samples, "node-a", lid="0x7", sm_lid="0x2")
    _host(tmp_path, samples, "node-b", lid="0x0", sm_lid="0x0")
    stat = (samples / "ib" / "ibstat_sim_ARTIFACTS.txt").read_text().replace("ibsim0", "mlx5_0")  # Base lid 1
    for h in (host, tmp_path / "hosts" / "node-b"):
        (h / "cmd").mkdir()
        (h / "cmd" / "ibstat.txt").write_text(stat)
    (tmp_path / "ib").mkdir()
    shutil.copy(samples / "ib" / "sminfo_sim.txt", tmp_path / "ib" / "sminfo.txt")
    fabric = load_bundle(tmp_path)
    (ca,) = ibstat.parse(stat).cas
    assert (ca.ports[0].base_lid, ca.ports[0].sm_lid) == (1, 1)
    a = fabric.hosts["node-a"].nics["mlx5_0"].ib
    assert a is not None and (a.lid, a.sm_lid) == (7, 2)
    assert (a.node_guid, a.port_guid, a.state) == ("0xa088c20300b10000", "0xa088c20300b10001", "Active")
    assert {"hosts/node-a/cmd/ibstat.txt", f"hosts/node-a/{PORT}/lid"} <= a.sources
    b = fabric.hosts["node-b"].nics["mlx5_0"].ib
    assert b is not None and (b.lid, b.sm_lid) == (1, 1) and b.sources == {"hosts/node-b/cmd/ibstat.txt"}


def test_a_bad_lid_file_is_located_and_costs_that_value(samples: Path, tmp_path: Path) -> None:
    _host(tmp_path, samples, "dgx-001", lid="26", sm_lid="0x1")  # decimal: not what the kernel prints
    fabric = load_bundle(tmp_path)
    [f] = fabric.input_findings
    assert f.check == "INPUT-PARTIAL" and f.evidence["file"] == f"hosts/dgx-001/{PORT}/lid"
    assert "0x<hex>" in f.message
    nic = fabric.hosts["dgx-001"].nics["mlx5_0"]
    assert nic.ib is not None and (nic.ib.lid, nic.ib.sm_lid) == (None, 1)
    assert nic.port_state == "ACTIVE" and nic.counters["ib:port_rcv_errors"] == 14  # the rest of the tree


def test_live_collection_copies_the_lid_files(samples: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    _host(root, samples, "x", lid="0x1a", sm_lid="0x1", lid_mask_count="0", sm_sl="0")
    shutil.move(root / "hosts" / "x" / "sys", root / "sys")
    report = collect_host(tmp_path / "b", root=root, run=lambda argv, timeout: CommandResult(None, not_found=True))
    for name in ("lid", "sm_lid", "lid_mask_count", "sm_sl"):
        assert f"{PORT}/{name}" in report.files
    nic = load_bundle(tmp_path / "b").hosts[report.host].nics["mlx5_0"]
    assert nic.ib is not None and (nic.ib.lid, nic.ib.sm_lid) == (26, 1)


def test_the_ib_twin_writes_the_lids_its_ibstat_prints(tmp_path: Path) -> None:
    """Without the twin's ibstat and ib/ files, the sysfs LIDs alone still show the injected duplicate LID."""
    result = generate(tmp_path / "b", gpus=16, seed=3, scenarios=("ib-duplicate-lid",), fabric="ib")
    hosts = tmp_path / "b" / "hosts"
    compared = 0
    for stat in sorted(hosts.glob("*/cmd/ibstat.txt")):
        for ca in ibstat.parse(stat.read_text()).cas:
            port = stat.parent.parent / "sys/class/infiniband" / ca.name / "ports/1"
            assert (port / "lid").read_text() == f"{ca.ports[0].base_lid:#x}\n"
            assert (port / "sm_lid").read_text() == f"{ca.ports[0].sm_lid:#x}\n"
            assert (port / "lid_mask_count").read_text() == "0\n"
            compared += 1
    assert compared > 0
    for stat in hosts.glob("*/cmd/ibstat.txt"):
        stat.unlink()
    shutil.rmtree(tmp_path / "b" / "ib")
    [truth] = [t for t in result.truth["misconfigurations"] if t["check"] == "IB-DUPLICATE"]
    found = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "IB-DUPLICATE"]
    assert [(f.subject, list(f.entities)) for f in found] == [(truth["subject"], truth["entities"])]
