"""Reading bundles: the twin's files through the real parsers, and damaged bundles that still report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.errors import BundleError


def test_twin_bundle_reads_without_input_findings(twin_bundle: Path) -> None:
    fabric = load_bundle(twin_bundle)
    assert fabric.input_findings == []
    assert len(fabric.hosts) == 16
    assert all(len(h.nics) == 8 for h in fabric.hosts.values())
    nic = fabric.hosts["gpu001"].nics["eth0"]
    assert nic.rdma_dev == "mlx5_0" and nic.qos is not None
    assert nic.qos.roce_tos == 106 and nic.qos.cnp_dscp == 48
    # the job-tc scenario took the TOS override off one job's hosts; everyone else keeps tclass 106
    overrides = {n.qos.traffic_class for h in fabric.hosts.values() for n in h.nics.values() if n.qos}
    assert overrides <= {None, 96, 106} and 106 in overrides
    assert set(fabric.jobs) == {"job:slurm:1001", "job:slurm:1002"}
    # 8 leaves (one per rail) + 8 spines, less the leaf the leaf-uncollected scenario leaves out; host links seen
    # by LLDP and in the plan merge into one
    assert len(fabric.switches) == 15
    host_links = [lk for lk in fabric.links if lk.a.node in fabric.hosts]
    assert sum("plan" in lk.sources for lk in host_links) == 128
    # the cabling scenarios (miswire, rail-swap, missing-cable) leave a few cables seen by one view only
    assert sum(lk.sources == {"lldp", "plan"} for lk in host_links) >= 120


def test_missing_bundle_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="bundle not found"):
        load_bundle(tmp_path / "nope")
    with pytest.raises(BundleError, match="not a bundle"):
        load_bundle(tmp_path)


@pytest.fixture
def damaged(twin_bundle: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(twin_bundle, copy)
    return copy


def test_garbled_mlnx_qos_becomes_a_finding_with_line(damaged: Path) -> None:
    target = damaged / "hosts/gpu002/cmd/mlnx_qos/eth3.txt"
    lines = target.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if "enabled" in line)
    lines[index] = "\tenabled     0   0   x"
    target.write_text("\n".join(lines) + "\n")
    fabric = load_bundle(damaged)
    [finding] = fabric.input_findings
    assert finding.check == "INPUT-UNREADABLE"
    assert finding.subject["path"] == "hosts/gpu002/cmd/mlnx_qos/eth3.txt"
    assert finding.evidence["line"] == index + 1
    # everything else is still there
    assert fabric.hosts["gpu002"].nics["eth3"].qos is None
    assert fabric.hosts["gpu002"].nics["eth2"].qos is not None
    assert len(fabric.switches) == 15  # 16 less the leaf-uncollected scenario's leaf


def test_binary_and_broken_json_files(damaged: Path) -> None:
    (damaged / "hosts/gpu003/cmd/lldpcli.json").write_bytes(b"\xff\xfe\x00garbage")
    (damaged / "switches/leaf-su1-r2/sonic/config_db.json").write_text('{"PORT": {"Ethernet0": {"mtu": "9100"}')
    fabric = load_bundle(damaged)
    by_path = {f.subject["path"]: f for f in fabric.input_findings}
    assert set(by_path) == {"hosts/gpu003/cmd/lldpcli.json", "switches/leaf-su1-r2/sonic/config_db.json"}
    assert "UTF-8" in by_path["hosts/gpu003/cmd/lldpcli.json"].message
    assert "leaf-su1-r2" not in fabric.switches
    assert len(fabric.switches) == 14  # and the leaf-uncollected scenario's leaf


def test_missing_switch_config_and_nic_output(damaged: Path) -> None:
    (damaged / "switches/spine01/sonic/config_db.json").unlink()
    (damaged / "hosts/gpu004/cmd/mlnx_qos/eth5.txt").unlink()
    fabric = load_bundle(damaged)
    assert sorted((f.check, f.subject["path"]) for f in fabric.input_findings) == [
        ("INPUT-MISSING", "hosts/gpu004/cmd/mlnx_qos/eth5.txt"),
        ("INPUT-MISSING", "switches/spine01/sonic/config_db.json"),
    ]
    assert fabric.hosts["gpu004"].nics["eth5"].qos is None


def test_the_library_reports_what_the_directory_source_refused(samples: Path, tmp_path: Path) -> None:
    """load_bundle itself (not only the CLI) names a directory it may not enter: a switch directory that is a
    link out of the bundle is an INPUT-UNREADABLE naming it, and nothing of /etc is read."""
    junos = tmp_path / "b" / "switches" / "dcedge01" / "junos"
    junos.mkdir(parents=True)
    shutil.copy(
        samples / "switch/junos/junos-qfx-19.4R1.10_dcedge01_show_interface.json", junos / "show-interfaces.json"
    )
    (tmp_path / "b" / "switches" / "evil").symlink_to("/etc")
    fabric = load_bundle(tmp_path / "b")
    assert sorted(fabric.switches) == ["dcedge01"]
    refused = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert [(f.evidence["file"], "leaves the bundle" in f.message) for f in refused] == [("switches/evil", True)]
