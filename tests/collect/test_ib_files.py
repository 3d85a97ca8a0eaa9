"""The other ib/ files of a bundle (iblinkinfo, perfquery, ibqueryerrors, sminfo) and the hosts' ibstat, read from
the real samples into the IB port records, the subnet's SMs and the checks."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle

SAMPLES = ("ibnetdiscover_sim_rail_faulty.txt", "iblinkinfo_sim_rail_faulty.txt", "ibqueryerrors_sim_rail_faulty.txt")


def _bundle(samples: Path, root: Path, perfquery: bool = True) -> Path:
    ib = root / "ib"
    ib.mkdir(parents=True)
    for name, target in zip(SAMPLES, ("ibnetdiscover.txt", "iblinkinfo.txt", "ibqueryerrors.txt"), strict=True):
        shutil.copy(samples / "ib" / name, ib / target)
    shutil.copy(samples / "ib" / "sminfo_sim.txt", ib / "sminfo.txt")
    if perfquery:
        text = "".join(
            (samples / "ib" / n).read_text()
            for n in ("perfquery_sim_hca_errors.txt", "perfquery_sim_switchport_errors.txt")
        )
        (ib / "perfquery.txt").write_text(text)
    return root


def test_ports_get_guids_lids_states_and_counters(samples: Path, tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(samples, tmp_path / "b"))
    assert fabric.input_findings == []
    hca = fabric.hosts["dgx-002"].nics["mlx5_1"].ib
    assert hca is not None
    assert (hca.node_guid, hca.port_guid, hca.lid, hca.width, hca.speed) == (
        "0xa088c20300b10012",
        "0xa088c20300b10013",
        22,
        "1X",
        "HDR",
    )
    assert hca.counters["SymbolErrorCounter"] == 4312 and hca.saturated == frozenset()
    leaf = fabric.switches["ib-leaf-r1"]
    assert (leaf.guid, leaf.lid, leaf.fabric) == ("0xb83fd20300a10001", 3, "ib")
    port = leaf.ports["2"].ib
    assert port is not None and {"SymbolErrorCounter", "LinkErrorRecoveryCounter"} <= port.saturated
    dark = fabric.switches["ib-leaf-r2"].ports["4"]  # the missing cable: iblinkinfo shows it Down/Polling
    assert dark.ib is not None and (dark.ib.state, dark.ib.phys_state) == ("Down", "Polling")
    assert fabric.ib is not None and [(sm.guid, sm.state) for sm in fabric.ib.sms] == [("0xa088c20300b10001", "master")]
    found = {(f.check, f.subject["id"]) for f in run_checks(fabric) if f.check.startswith("IB-")}
    assert found == {
        ("IB-COUNTERS", "nic:dgx-002:mlx5_1"),
        ("IB-COUNTERS", "port:ib-leaf-r1:2"),
        ("IB-COUNTERS", "port:ib-spine-2:4"),
        ("IB-COUNTERS", "port:ib-leaf-r0:33"),
    }


def test_ibqueryerrors_alone_gives_the_counters(samples: Path, tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(samples, tmp_path / "b", perfquery=False))
    port = fabric.switches["ib-spine-2"].ports["4"].ib
    assert port is not None and port.counters == {"PortRcvRemotePhysicalErrors": 5, "PortXmitDiscards": 17}
    assert "ib/ibqueryerrors.txt" in port.sources


def test_several_sminfo_files_and_a_perfquery_lid_nobody_has(samples: Path, tmp_path: Path) -> None:
    root = _bundle(samples, tmp_path / "b")
    (root / "ib" / "sminfo").mkdir()
    (root / "ib" / "sminfo" / "spine-1.txt").write_text(
        "sminfo: sm lid 13 sm guid 0xb83fd20300a10008, activity count 20 priority 0 state 2 SMINFO_STANDBY\n"
    )
    block = (samples / "ib" / "perfquery_sim_hca_errors.txt").read_text().replace("Lid 22 ", "Lid 999 ")
    with (root / "ib" / "perfquery.txt").open("a") as out:
        out.write(block)
    fabric = load_bundle(root)
    assert fabric.ib is not None and len(fabric.ib.sms) == 2
    [f] = fabric.input_findings
    assert f.check == "INPUT-UNREADABLE" and "lid 999 port 1" in f.message
    tie = [x for x in run_checks(fabric) if x.check == "IB-SM"]
    assert len(tie) == 1 and "share priority 0" in tie[0].message  # both at 0: the lower GUID is master


def test_broken_sminfo_is_a_finding(samples: Path, tmp_path: Path) -> None:
    root = _bundle(samples, tmp_path / "b")
    (root / "ib" / "sminfo.txt").write_text("sminfo: garbage\n")
    fabric = load_bundle(root)
    [f] = fabric.input_findings
    assert (f.check, f.evidence["file"], f.evidence["line"]) == ("INPUT-UNREADABLE", "ib/sminfo.txt", 1)
    assert fabric.ib is not None and fabric.ib.sms == ()


def test_ibstat_names_a_ca_without_a_conventional_description(samples: Path, tmp_path: Path) -> None:
    """rdma-ndd not running: the CA's NodeDescription is the adapter's default; the host whose ibstat reports its
    node GUID names it."""
    root = tmp_path / "b"
    (root / "ib").mkdir(parents=True)
    text = (samples / "ib" / "ibnetdiscover_sim_rail_clean.txt").read_text()
    (root / "ib" / "ibnetdiscover.txt").write_text(
        text.replace('"dgx-001 mlx5_0"', '"MT4123 ConnectX6 Mellanox Technologies"')
    )
    cmd = root / "hosts" / "node-a" / "cmd"
    cmd.mkdir(parents=True)
    stat = (samples / "ib" / "ibstat_sim_ARTIFACTS.txt").read_text().replace("ibsim0", "mlx5_0")
    (cmd / "ibstat.txt").write_text(stat)  # node GUID 0xa088c20300b10000: dgx-001's mlx5_0 in the sample
    fabric = load_bundle(root)
    nic = fabric.hosts["node-a"].nics["mlx5_0"]
    assert nic.ib is not None and nic.ib.lid == 1 and nic.ib.sm_lid == 1
    assert any(lk.a.node == "node-a" or lk.b.node == "node-a" for lk in fabric.links)
    assert "MT4123" not in fabric.hosts
