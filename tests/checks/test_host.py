"""HOST-GID (the real husky ``show_gids``), HOST-ROCE-MTU (ibv_devinfo) and HOST-PEERMEM (lsmod), read through the
bundle reader."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from host_bundle import write_host

from unifab import layout
from unifab.checks.context import CheckContext
from unifab.checks.host import auto_gid, check_gid, check_peermem, check_roce_mtu
from unifab.model import Fabric, Gid, Gpu, Job, Severity
from unifab.parse.host import ibv_devinfo, lsmod
from unifab.twin.host_extra_files import host_lsmod

GIDS = "host/show_gids_husky.txt"  # mlx5_0 / rdma0: 0,1 link-local v1/v2, 2,3 IPv4 192.168.211.242 v1/v2
NIC = {"mlx5_0": ("rdma0", "0000:1a:00.0")}


def _gid_fabric(tmp_path: Path, samples: Path, text: str | None = None) -> Fabric:
    gids = text if text is not None else (samples / GIDS).read_text()
    return write_host(tmp_path / "b", {layout.SHOW_GIDS: gids, "sys/class/net/rdma0/mtu": "9000\n"}, NIC)


def _job(index: int | None, hca: str | None = None, env: bool = True) -> Job:
    return Job("job:slurm:7", "train", ("h1",), nccl_ib_gid_index=index, nccl_ib_hca=hca, env_known=env)


def _gid(fabric: Fabric, *jobs: Job) -> list:  # type: ignore[type-arg]
    fabric.jobs = {j.id: j for j in jobs}
    return list(check_gid(CheckContext.build(fabric)))


@pytest.mark.parametrize("jobs", [(), (_job(3),), (_job(None),), (_job(1, env=False),)])
def test_gid_index_3_and_ncclS_own_pick_are_right_on_the_real_table(tmp_path: Path, samples: Path, jobs: tuple) -> None:  # type: ignore[type-arg]
    fabric = _gid_fabric(tmp_path, samples)
    assert [g.index for g in fabric.hosts["h1"].nics["rdma0"].gids] == [0, 1, 2, 3]
    assert _gid(fabric, *jobs) == []


@pytest.mark.parametrize(
    ("index", "says"),
    [(1, "IPv6 link-local"), (2, "RoCE v1"), (0, "RoCE v1"), (7, "no GID at index 7")],
)
def test_a_job_index_on_a_wrong_gid(tmp_path: Path, samples: Path, index: int, says: str) -> None:
    [f] = _gid(_gid_fabric(tmp_path, samples), _job(index))
    assert (f.check, f.severity, f.entities) == ("HOST-GID", Severity.ERROR, ("nic:h1:mlx5_0",))
    assert says in f.message and f"NCCL_IB_GID_INDEX={index}" in f.message
    assert f.evidence["a"]["routable_v2_ipv4_gid"] == 3
    # the NIC has a RoCE v2 IPv4 GID: NCCL's own selection finds it, on this NIC and every other
    assert [(x.device, x.commands) for x in f.fix] == [("job:slurm:7", ("unset NCCL_IB_GID_INDEX",))]


def test_a_port_without_ipv4_leaves_ncclS_pick_on_the_link_local_gid(tmp_path: Path, samples: Path) -> None:
    lines = (samples / GIDS).read_text().splitlines(True)
    text = "".join(line for line in lines if "192.168" not in line).replace("n_gids_found=4", "n_gids_found=2")
    fabric = _gid_fabric(tmp_path, samples, text)
    [f] = _gid(fabric)
    assert "automatic GID selection: GID 0 is RoCE v1" in f.message
    assert f.fix[0].device == "h1" and "ip -4 addr show dev rdma0" in f.fix[0].commands
    [f3] = _gid(fabric, _job(3))
    assert "no GID at index 3" in f3.message and f3.fix[0].device == "h1"


def test_a_job_that_does_not_use_the_nic_does_not_judge_it(tmp_path: Path, samples: Path) -> None:
    assert _gid(_gid_fabric(tmp_path, samples), _job(1, hca="=mlx5_1")) == []
    assert len(_gid(_gid_fabric(tmp_path / "x", samples), _job(1, hca="mlx5"))) == 1  # a prefix: selects mlx5_0


def test_no_gid_table_is_not_judged(tmp_path: Path) -> None:
    fabric = write_host(tmp_path / "b", {"sys/class/net/rdma0/mtu": "9000\n"}, NIC)
    assert _gid(fabric, _job(1)) == []


def test_auto_gid_prefers_v2_ipv4_then_any_ipv4_then_index_0() -> None:
    ll = "fe80:0000:0000:0000:0ac0:ebff:fe21:03da"
    v4 = "0000:0000:0000:0000:0000:ffff:c0a8:d3f2"
    table = (Gid(0, ll, "v1", None, "e"), Gid(1, ll, "v2", None, "e"), Gid(2, v4, "v1", "192.168.211.242", "e"))
    assert auto_gid(table) == table[2]  # no v2 IPv4: NCCL takes the IPv4 one (family wins)
    assert auto_gid((*table, Gid(5, v4, "v2", "192.168.211.242", "e"))).index == 5
    assert auto_gid(table[:2]) == table[0]
    assert auto_gid(()) is None


def _mtu_fabric(tmp_path: Path, mtu: int, active: int) -> Fabric:
    port = ibv_devinfo.IbvPort(1, "PORT_ACTIVE", 4096, active, 0, 0, 0, "Ethernet")
    guid = "0ac0:eb03:0021:03da"
    dev = ibv_devinfo.IbvDevice(
        "mlx5_0", "InfiniBand", "28.39.1002", guid, guid, "0x02c9", 4129, "0x0", None, 1, (port,)
    )
    files = {layout.IBV_DEVINFO: ibv_devinfo.dump((dev,)), "sys/class/net/rdma0/mtu": f"{mtu}\n"}
    return write_host(tmp_path / "b", files, NIC)


@pytest.mark.parametrize(
    ("mtu", "active", "found"), [(9000, 4096, False), (1500, 1024, False), (9000, 1024, True), (4200, 2048, True)]
)
def test_roce_active_mtu_against_the_netdev_mtu(tmp_path: Path, mtu: int, active: int, found: bool) -> None:
    findings = list(check_roce_mtu(CheckContext.build(_mtu_fabric(tmp_path, mtu, active))))
    assert bool(findings) == found
    if found:
        [f] = findings
        assert f.entities == ("nic:h1:mlx5_0",) and f.evidence["a"]["expected_active_mtu"] == (
            4096 if mtu > 4192 else 2048
        )
        assert f"ip link set dev rdma0 mtu {mtu}" in f.fix[0].commands


AZURE_IBV_DEVINFO = (
    Path(__file__).resolve().parents[1] / "data" / "wild" / "host" / "perfstudy_azure_hbv3_ibv_devinfo.txt"
)


@pytest.mark.parametrize(("mtu", "found"), [(1500, False), (9000, True)])
def test_roce_mtu_on_a_real_capture(tmp_path: Path, mtu: int, found: bool) -> None:
    """A real ``ibv_devinfo`` (Azure HBv3: an InfiniBand ConnectX-6 VF at active_mtu 4096, an Ethernet ConnectX-4
    Lx VF at 1024, the prompt line kept): 1024 is all a 1500-byte netdev carries, and short of the 4096 a
    9000-byte one would. The InfiniBand HCA is never judged here. (The capture shows no netdev names or MTUs:
    ``eth1``/``ib0`` and the MTUs are the test's; the PCI addresses are the capture's own lspci.)"""
    files = {
        layout.IBV_DEVINFO: AZURE_IBV_DEVINFO.read_text(),
        "sys/class/net/eth1/mtu": f"{mtu}\n",
        "sys/class/net/ib0/mtu": "4092\n",
    }
    nics = {"mlx5_0": ("ib0", "0101:00:00.0"), "mlx5_1": ("eth1", "56d0:00:02.0")}
    fabric = write_host(tmp_path / "b", files, nics)
    assert {f.check for f in fabric.input_findings} <= {"INPUT-MISSING"}  # read whole (no mlnx_qos: not collected)
    assert fabric.hosts["h1"].nics["eth1"].active_mtu == 1024
    findings = list(check_roce_mtu(CheckContext.build(fabric)))
    assert [f.entities for f in findings] == ([("nic:h1:mlx5_1",)] if found else [])
    if found:
        assert findings[0].evidence["a"]["expected_active_mtu"] == 4096


def _peermem_fabric(tmp_path: Path, modules: str | None, kernel: str | None = None) -> Fabric:
    files = {layout.SHOW_GIDS: "", "sys/class/net/rdma0/mtu": "9000\n"}
    files.pop(layout.SHOW_GIDS)
    if modules is not None:
        files[layout.LSMOD] = modules
    if kernel is not None:
        files[layout.UNAME] = kernel + "\n"
    fabric = write_host(tmp_path / "b", files, NIC)
    host = fabric.hosts["h1"]
    fabric.hosts["h1"] = replace(host, gpus={0: Gpu("h1", 0, "0000:19:00.0")})
    return fabric


def test_peermem_loaded_or_not(tmp_path: Path) -> None:
    assert list(check_peermem(CheckContext.build(_peermem_fabric(tmp_path / "a", host_lsmod("mlx5"))))) == []
    [f] = check_peermem(CheckContext.build(_peermem_fabric(tmp_path / "b", host_lsmod("mlx5", peermem=False))))
    assert (f.check, f.severity, f.entities) == ("HOST-PEERMEM", Severity.ERROR, ("host:h1",))
    assert f.fix[0].commands[0] == "modprobe nvidia-peermem"


def test_peermem_on_a_real_capture(tmp_path: Path, samples: Path) -> None:
    """A real ``lsmod | grep nvid`` (driver 550, nvidia_peermem held by ib_uverbs): GPUDirect RDMA is available."""
    text = (samples / "host/lsmod_grep_nvid_dell_driver550.txt").read_text()
    fabric = _peermem_fabric(tmp_path, text, "6.8.0-52-generic")
    assert fabric.hosts["h1"].kernel_modules is not None and "nvidia_peermem" in fabric.hosts["h1"].kernel_modules
    assert list(check_peermem(CheckContext.build(fabric))) == []
    unloaded = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("nvidia_peermem"))
    [f] = check_peermem(CheckContext.build(_peermem_fabric(tmp_path / "x", unloaded, "6.8.0-52-generic")))
    assert f.check == "HOST-PEERMEM"  # the same host after `rmmod nvidia_peermem`


def test_peermem_from_proc_modules_and_dmabuf_kernels(tmp_path: Path) -> None:
    proc = "nvidia 56692736 3 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\nmlx5_ib 466944 0 - Live 0x0 \n"
    [f] = check_peermem(CheckContext.build(_peermem_fabric(tmp_path / "a", proc, "6.8.0-45-generic")))
    assert f.severity is Severity.WARNING and "DMA-BUF" in f.message
    legacy = proc + "nv_peer_mem 16384 0 - Live 0x0\n"
    assert list(check_peermem(CheckContext.build(_peermem_fabric(tmp_path / "b", legacy)))) == []


def test_peermem_unknown_when_modules_were_not_collected(tmp_path: Path) -> None:
    fabric = _peermem_fabric(tmp_path, None)
    assert fabric.hosts["h1"].kernel_modules is None
    assert list(check_peermem(CheckContext.build(fabric))) == []


def test_the_twin_lsmod_parses_back() -> None:
    record = lsmod.parse(host_lsmod("bnxt", peermem=False))
    assert record.loaded("bnxt_re") and not record.loaded("nvidia-peermem")
