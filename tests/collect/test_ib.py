"""ib/ibnetdiscover.txt in a bundle: CAs as host NICs, IB switches with numbered ports, cables as discovered."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.collect.bundle import load_bundle
from unifab.collect.ib import ib_view, merge_hosts
from unifab.model import Host, Nic
from unifab.parse.ib import ibnetdiscover


def _faulty(samples: Path) -> ibnetdiscover.IbTopology:
    return ibnetdiscover.parse((samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt").read_text())


def test_view_of_the_faulty_sample(samples: Path) -> None:
    view = ib_view(_faulty(samples))
    assert sorted(view.switches) == [f"ib-leaf-r{r}" for r in range(8)] + [f"ib-spine-{s}" for s in range(1, 5)]
    assert all(sw.os == "ib" and sw.config_file == "ib/ibnetdiscover.txt" for sw in view.switches.values())
    assert sorted(view.hosts) == ["dgx-001", "dgx-002", "dgx-003", "dgx-004"]
    assert sorted(view.hosts["dgx-004"].nics) == [f"mlx5_{r}" for r in range(8) if r != 2]  # its missing cable
    nic = view.hosts["dgx-002"].nics["mlx5_1"]
    assert (nic.rdma_dev, nic.speed_mbps, nic.link_layer) == ("mlx5_1", 50_000, "InfiniBand")  # trained 1X
    assert view.switches["ib-leaf-r1"].ports["2"].speed_mbps == 50_000
    assert view.switches["ib-leaf-r0"].ports["1"].speed_mbps == 200_000
    assert all(lk.sources == frozenset({"lldp"}) for lk in view.links)
    assert len(view.links) == len(ibnetdiscover.links(_faulty(samples)))


def test_merge_keeps_collected_nics() -> None:
    hosts = {"dgx-001": Host("dgx-001", {"eth0": Nic("dgx-001", "eth0", "mlx5_0", 9000, None)})}
    ib = {
        "dgx-001": Host(
            "dgx-001",
            {
                "mlx5_0": Nic("dgx-001", "mlx5_0", "mlx5_0", None, None),
                "mlx5_1": Nic("dgx-001", "mlx5_1", "mlx5_1", None, None),
            },
        ),
        "dgx-009": Host("dgx-009", {}),
    }
    merge_hosts(hosts, ib)
    assert sorted(hosts["dgx-001"].nics) == ["eth0", "mlx5_1"]  # mlx5_0 is already eth0's RDMA device
    assert "dgx-009" in hosts


def test_bundle_with_only_ib(samples: Path, tmp_path: Path) -> None:
    (tmp_path / "b" / "ib").mkdir(parents=True)
    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_clean.txt", tmp_path / "b" / "ib" / "ibnetdiscover.txt")
    fabric = load_bundle(tmp_path / "b")
    assert len(fabric.hosts) == 4 and len(fabric.switches) == 12
    assert fabric.input_findings == []


def test_broken_ib_file_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "b" / "ib").mkdir(parents=True)
    (tmp_path / "b" / "ib" / "ibnetdiscover.txt").write_text("vendid=0x2c9\n[1] garbage\n")
    fabric = load_bundle(tmp_path / "b")
    [f] = fabric.input_findings
    assert (f.check, f.evidence["file"], f.evidence["line"]) == ("INPUT-UNREADABLE", "ib/ibnetdiscover.txt", 2)
