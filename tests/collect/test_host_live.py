"""Live host collection: a fake root built from a twin host's /sys, real commands where this machine has them,
recorded real outputs replayed by stand-in tools, then the bundle read back by the real reader."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from unifab.cli.agent import agent_app
from unifab.collect.bundle import load_bundle
from unifab.collect.host_live import CommandResult, SubprocessRunner, collect_host
from unifab.errors import UsageError
from unifab.twin.generate import generate

HOST = "gpu001"
NIC_BUSES = (0x17, 0x28, 0x39, 0x4A, 0x97, 0xA8, 0xB9, 0xCA)
GETQOS = b"""IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:2 7:0
         TC Bandwidth: 50% 50% 0%
         TSA_MAP: 0:ets 1:ets 2:strict
IEEE 8021QAZ PFC TLV:
         PFC enabled: 3
"""


@pytest.fixture(scope="module")
def twin_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("twin") / "bundle"
    generate(out, gpus=8, seed=0)
    return out / "hosts" / HOST


@pytest.fixture
def fake_root(twin_host: Path, tmp_path: Path, samples: Path) -> Path:
    """A / whose /sys is a twin host's, completed with what real sysfs has beside it."""
    root = tmp_path / "root"
    shutil.copytree(twin_host / "sys", root / "sys")
    for rail, bus in enumerate(NIC_BUSES):
        dev = root / "sys/class/infiniband" / f"mlx5_{rail}"
        (dev / "device/net" / f"eth{rail}").mkdir(parents=True)
        (dev / "device/net" / f"eth{rail}" / "ifindex").write_text(f"{rail + 2}\n")
        (dev / "device/uevent").write_text(f"DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_SLOT_NAME=0000:{bus:02x}:00.0\n")
        (dev / "device/numa_node").write_text(f"{rail // 4}\n")
        (dev / "ports/1/gid_attrs/ndevs").mkdir(parents=True)
        (dev / "ports/1/gid_attrs/ndevs/0").write_text(f"eth{rail}\n")
    (root / "sys/class/net/lo").mkdir()  # not an RDMA netdev: never collected
    (root / "sys/class/net/lo/mtu").write_text("65536\n")
    (root / "etc").mkdir()
    (root / "etc/nccl.conf").write_text("NCCL_DEBUG=WARN\nNCCL_TOPO_FILE=/opt/topo/ndv5.xml\n")
    (root / "opt/topo").mkdir(parents=True)
    shutil.copy(samples / "host/nccl_topo_file_azure_ndv5_h100.xml", root / "opt/topo/ndv5.xml")
    return root


def _tool(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def replay_path(tmp_path: Path, samples: Path) -> str:
    """PATH with stand-ins that print real recorded outputs (a RoCE NIC cannot exist on this machine)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "mlnx_qos", f'cat "{samples}/host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"')
    _tool(bin_dir, "show_gids", f'cat "{samples}/host/show_gids_husky.txt"')
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def test_collect_fake_root_reads_back_as_nics(fake_root: Path, replay_path: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    report = collect_host(out, root=fake_root, run=SubprocessRunner(replay_path), hostname=HOST)
    assert report.host_dir == out / "hosts" / HOST
    assert report.nics == tuple(f"eth{i}" for i in range(8))
    written = set(report.files)
    assert {"cmd/mlnx_qos/eth0.txt", "cmd/show_gids.txt", "cmd/nccl-topo.xml", "collect.json"} <= written
    assert "sys/class/net/eth3/ecn/roce_np/enable/3" in written and "sys/class/net/lo/mtu" not in written
    assert "sys/kernel/config/rdma_cm/mlx5_2/ports/1/default_roce_tos" in written
    assert "sys/class/infiniband/mlx5_2/ports/1/hw_counters/np_cnp_sent" in written
    missing = {m.path: m.reason for m in report.missing}
    if shutil.which("ethtool", path=replay_path) is None:
        assert missing["cmd/ethtool-S/eth0.txt"] == "ethtool not installed"
    if shutil.which("nvidia-smi", path=replay_path) is None:
        assert missing["cmd/nvidia-smi-q.xml"] == "nvidia-smi not installed"
    journal = orjson.loads((report.host_dir / "collect.json").read_bytes())
    assert journal["missing"] == [{"path": m.path, "reason": m.reason} for m in report.missing]
    assert journal["nics"] == {f"eth{i}": f"mlx5_{i}" for i in range(8)}

    fabric = load_bundle(out)
    assert {f.check for f in fabric.input_findings} <= {"INPUT-MISSING"}
    assert {f.subject["path"] for f in fabric.input_findings} == {f"hosts/{HOST}/{p}" for p in missing}
    host = fabric.hosts[HOST]
    assert sorted(host.nics) == [f"eth{i}" for i in range(8)]
    nic = host.nics["eth0"]
    assert (nic.rdma_dev, nic.mtu, nic.pci_address, nic.numa_node) == ("mlx5_0", 9000, "0000:17:00.0", 0)
    assert (nic.link_layer, nic.port_state, nic.speed_mbps, nic.driver) == ("Ethernet", "ACTIVE", 400_000, "mlx5_core")
    assert nic.counters["rdma:np_cnp_sent"] == 0
    assert nic.qos is not None
    # the recorded ConnectX-4 mlnx_qos output, with the twin's ecn tree, traffic_class and rdma_cm files
    assert (nic.qos.trust, nic.qos.pfc_enabled, nic.qos.cable_len_m) == ("dscp", frozenset({3}), 7)
    assert (nic.qos.cnp_dscp, nic.qos.traffic_class, nic.qos.roce_tos, nic.qos.roce_mode) == (48, 106, 106, "RoCE v2")
    # the recorded show_gids output is for mlx5_0 (netdev rdma0 on the machine it came from)
    assert [(g.index, g.version, g.ipv4) for g in nic.gids] == [
        (0, "v1", None),
        (1, "v2", None),
        (2, "v1", "192.168.211.242"),
        (3, "v2", "192.168.211.242"),
    ]
    assert host.nics["eth5"].gids == () and host.nics["eth5"].numa_node == 1
    assert host.gpus and all(g.pci_bus_id for g in host.gpus.values())  # from the copied NCCL topology file


def test_collect_this_machine(tmp_path: Path) -> None:
    """The real / of the test machine (no RDMA NIC here): it completes and says what it could not read."""
    report = collect_host(tmp_path / "b", hostname="this-host", timeout=60)
    assert "collect.json" in report.files
    fabric = load_bundle(tmp_path / "b")
    assert "this-host" in fabric.hosts
    checks = {f.check for f in fabric.input_findings}
    assert checks == {"INPUT-MISSING"}
    paths = {f.subject["path"].removeprefix("hosts/this-host/") for f in fabric.input_findings}
    assert paths == {m.path for m in report.missing} and report.missing
    if not report.nics:
        assert fabric.hosts["this-host"].nics == {}


def fake_nic_root(root: Path, nics: dict[str, str], driver: str = "mlx5_core") -> Path:
    """A / with RDMA devices ``{rdma_dev: netdev}`` in its sysfs (PCI bus 0x41 + n, an Ethernet port 1 ACTIVE):
    what the collector needs to find each NIC and its netdev."""
    for n, (dev, netdev) in enumerate(sorted(nics.items())):
        base = root / "sys/class/infiniband" / dev
        (base / "device/net" / netdev).mkdir(parents=True)
        (base / "device/net" / netdev / "ifindex").write_text(f"{n + 4}\n")
        (base / "device/uevent").write_text(f"DRIVER={driver}\nPCI_SLOT_NAME=0000:{0x41 + n:02x}:00.0\n")
        (base / "ports/1").mkdir(parents=True)
        for name, value in (("state", "4: ACTIVE"), ("link_layer", "Ethernet"), ("rate", "400 Gb/sec (4X NDR)")):
            (base / "ports/1" / name).write_text(value + "\n")
        (root / "sys/class/net" / netdev).mkdir(parents=True)
        (root / "sys/class/net" / netdev / "mtu").write_text("9000\n")
    return root


class StubRunner:
    """A scripted runner: ``{argv[0]: result}``; records every call."""

    def __init__(self, results: dict[str, CommandResult]) -> None:
        self.results = results
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        self.calls.append(tuple(argv))
        return self.results.get(argv[0], CommandResult(None, not_found=True))


def test_failures_are_recorded_never_raised(tmp_path: Path, samples: Path) -> None:
    root = tmp_path / "root"
    dev = root / "sys/class/infiniband/bnxt_re0"
    (dev / "device/net/ens1f0np0").mkdir(parents=True)
    (dev / "device/net/ens1f0np0/ifindex").write_text("4\n")
    (dev / "device/uevent").write_text("DRIVER=bnxt_en\nPCI_SLOT_NAME=0000:41:00.0\n")
    (root / "sys/class/net/ens1f0np0").mkdir(parents=True)
    (root / "sys/class/net/ens1f0np0/mtu").write_text("9000\n")
    runner = StubRunner(
        {
            "bnxtqos": CommandResult(0, GETQOS),
            "ethtool": CommandResult(None, b"NIC statistics:\n", timed_out=True),
            "show_gids": CommandResult(0, b"\n"),
            "lspci": CommandResult(None, error="Permission denied"),
            "ibv_devinfo": CommandResult(255, b"", b"Failed to get IB devices list: Function not implemented\n"),
            "uname": CommandResult(0, b"6.8.0-1015-nvidia\n"),
            "dmesg": CommandResult(0, b""),
        }
    )
    report = collect_host(tmp_path / "b", root=root, run=runner, hostname="thor01", timeout=5)
    assert ("niccli", "-dev", "ens1f0np0", "getqos") in runner.calls  # tried first, then its fallback
    missing = {m.path: m.reason for m in report.missing}
    assert missing["cmd/ethtool-S/ens1f0np0.txt"] == "'ethtool -S ens1f0np0' timed out after 5 s"
    assert missing["cmd/show_gids.txt"] == "'show_gids' printed nothing"
    assert missing["cmd/lspci-vvv.txt"] == "'lspci -D -nn -vvv' could not start: Permission denied"
    assert missing["cmd/ibv_devinfo.txt"] == (
        "'ibv_devinfo' exited 255: Failed to get IB devices list: Function not implemented"
    )
    assert missing["cmd/ibdev2netdev.txt"] == "ibdev2netdev not installed"
    assert "cmd/mlnx_qos/ens1f0np0.txt" not in missing
    assert "bnxt_re" in missing["sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"]
    assert "rdma_cm" in missing["sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_tos"]
    assert "cmd/dmesg.txt" in report.files  # an empty kernel log is a valid reading
    fabric = load_bundle(tmp_path / "b")
    assert {f.check for f in fabric.input_findings} == {"INPUT-MISSING"}
    nic = fabric.hosts["thor01"].nics["ens1f0np0"]
    assert nic.rdma_dev == "bnxt_re0" and nic.driver == "bnxt_en" and nic.pci_address == "0000:41:00.0"
    assert nic.qos is not None and nic.qos.pfc_enabled == frozenset({3})
    assert fabric.hosts["thor01"].kernel == "6.8.0-1015-nvidia"


def test_real_timeout_kills_the_command(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "show_gids", "exec sleep 30")
    (tmp_path / "root/sys").mkdir(parents=True)
    runner = SubprocessRunner(f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    report = collect_host(tmp_path / "b", root=tmp_path / "root", run=runner, hostname="h", timeout=1)
    assert {m.path: m.reason for m in report.missing}["cmd/show_gids.txt"] == "'show_gids' timed out after 1 s"


def test_recollecting_replaces_the_host_directory(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sys").mkdir(parents=True)
    runner = StubRunner({"uname": CommandResult(0, b"6.1.0\n")})
    collect_host(tmp_path / "b", root=root, run=runner, hostname="h")
    (tmp_path / "b/hosts/h/stale.txt").write_text("from before")
    runner.results["uname"] = CommandResult(0, b"6.2.0\n")
    collect_host(tmp_path / "b", root=root, run=runner, hostname="h")
    assert not (tmp_path / "b/hosts/h/stale.txt").exists()
    assert (tmp_path / "b/hosts/h/cmd/uname-r.txt").read_text() == "6.2.0\n"
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["hosts"]


def test_a_failed_recollect_keeps_the_old_data_marked_stale(tmp_path: Path) -> None:
    """The agent's collect dies midway (here the runner's pipe hits a full disk): the host's previous files stay,
    its collect.json records the failed attempt, and the reader reports INPUT-STALE for that host until a
    collect succeeds again. A disk error is exit 2 with its reason, not a traceback."""
    import errno

    root = tmp_path / "root"
    (root / "sys").mkdir(parents=True)
    runner = StubRunner({"uname": CommandResult(0, b"6.1.0\n")})
    collect_host(tmp_path / "b", root=root, run=runner, hostname="h")

    def full_disk(argv: Sequence[str], timeout: float) -> CommandResult:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(UsageError, match=r"cannot collect h into .*No space left on device"):
        collect_host(tmp_path / "b", root=root, run=full_disk, hostname="h")
    assert (tmp_path / "b/hosts/h/cmd/uname-r.txt").read_text() == "6.1.0\n"
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["hosts"], "no staging directory left"
    [stale] = [f for f in load_bundle(tmp_path / "b").input_findings if f.check == "INPUT-STALE"]
    assert stale.subject["kind"] == "host" and stale.subject["device"] == "h"
    assert "No space left on device" in stale.message and list(stale.entities) == ["host:h"]
    collect_host(tmp_path / "b", root=root, run=runner, hostname="h")
    assert not [f for f in load_bundle(tmp_path / "b").input_findings if f.check == "INPUT-STALE"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hostname": "a/b"}, "--hostname must be a plain host name"),
        ({"hostname": ".."}, "--hostname must be a plain host name"),
        ({"root": Path("/nonexistent/root")}, "is not a directory"),
    ],
)
def test_unusable_arguments_raise_usage_error(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"hostname": "h", "run": StubRunner({})} | kwargs
    with pytest.raises(UsageError, match=message):
        collect_host(tmp_path / "b", **args)  # type: ignore[arg-type]
    assert not (tmp_path / "b").exists()


def test_cli_collect(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sys").mkdir(parents=True)
    runner = CliRunner()
    result = runner.invoke(
        agent_app, ["collect", "--out", str(tmp_path / "b"), "--root", str(root), "--hostname", "h", "--timeout", "20"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("collected h: ") and "RDMA NICs: none" in lines[0]
    assert all(line.startswith("  missing cmd/") for line in lines[1:]) and len(lines) > 1
    assert (tmp_path / "b/hosts/h/collect.json").is_file()


def test_cli_collect_bad_arguments_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(agent_app, ["collect", "--out", str(tmp_path / "b"), "--root", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"unifab: error: --root {tmp_path / 'none'} is not a directory"]
    help_text = runner.invoke(agent_app, ["collect", "--help"]).output
    assert "Example: unifab agent collect" in help_text


CUMULUS_IP = "switch/nvue/cumulus-4.3.0_leaf01_vtysh_show_int_vrf_all__ip_-d_address_show.txt"


def real_ip_d(samples: Path) -> str:
    """The ``ip -d address show`` part of a real Cumulus capture (eth0: a virtio NIC, maxmtu 65535)."""
    text = (samples / CUMULUS_IP).read_text()
    return text[text.index("1: lo:") :]


def test_ip_d_link_gives_each_nic_its_max_mtu(fake_root: Path, tmp_path: Path, samples: Path) -> None:
    bin_dir = tmp_path / "ipbin"
    bin_dir.mkdir()
    (tmp_path / "ip-d.txt").write_text(real_ip_d(samples))
    _tool(bin_dir, "mlnx_qos", f'cat "{samples}/host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"')
    _tool(bin_dir, "ip", f'[ "$*" = "-d link show" ] || exit 2\ncat "{tmp_path}/ip-d.txt"')
    out = tmp_path / "bundle"
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"  # the stand-in ip shadows this machine's
    report = collect_host(out, root=fake_root, run=SubprocessRunner(path), hostname=HOST)
    assert "cmd/ip-d-link.txt" in report.files
    assert "cmd/ip-d-link.txt" not in {m.path for m in report.missing}
    fabric = load_bundle(out)
    assert fabric.input_findings == [] or {f.check for f in fabric.input_findings} == {"INPUT-MISSING"}
    nics = fabric.hosts[HOST].nics
    assert nics["eth0"].max_mtu == 65535  # the capture's eth0
    assert nics["eth3"].max_mtu is None  # not in the capture: not collected


def test_lldp_socket_is_asked_with_u(tmp_path: Path) -> None:
    import socket

    (tmp_path / "root/sys").mkdir(parents=True)
    path = tmp_path / "ctl"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        runner = StubRunner({"lldpcli": CommandResult(0, b'{"lldp": [{}]}\n')})
        report = collect_host(tmp_path / "b", root=tmp_path / "root", run=runner, hostname="h", lldp_socket=path)
    assert ("lldpcli", "-u", str(path), "-f", "json0", "show", "neighbors", "details") in runner.calls
    assert not any(c[0] == "lldpcli" and "-u" not in c for c in runner.calls)
    assert "cmd/lldpcli.json" in report.files


@pytest.mark.parametrize("kind", ["absent", "file", "directory"])
def test_lldp_socket_must_be_a_socket(tmp_path: Path, kind: str) -> None:
    (tmp_path / "root/sys").mkdir(parents=True)
    path = tmp_path / "ctl"
    if kind == "file":
        path.write_text("not a socket")
    elif kind == "directory":
        path.mkdir()
    args = ["collect", "--out", str(tmp_path / "b"), "--root", str(tmp_path / "root"), "--lldp-socket", str(path)]
    result = CliRunner().invoke(agent_app, args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"unifab: error: --lldp-socket {path}") and "lldpd's control socket" in line, line
    assert not (tmp_path / "b").exists()


def _recorder(bin_dir: Path, record: Path) -> None:
    """A stand-in ``sudo`` that records its arguments and runs the command (refusing lldpcli, as a sudoers without
    it would)."""
    _tool(
        bin_dir,
        "sudo",
        f'printf "%s\\n" "$*" >> "{record}"\n'
        '[ "$1" = -n ] && [ "$2" = -- ] || { echo "sudo: unexpected usage" >&2; exit 2; }\nshift 2\n'
        'case "$1" in */lldpcli) echo "sudo: a password is required" >&2; exit 1;; esac\nexec "$@"',
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="as root, --sudo must not use sudo")
def test_sudo_as_root_runs_nothing_through_sudo(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _recorder(bin_dir, tmp_path / "record")
    _tool(bin_dir, "dmesg", "echo '[    0.000000] Linux version 6.1.0'")
    root = fake_nic_root(tmp_path / "root", {"mlx5_0": "ens1f0np0"})
    runner = SubprocessRunner(f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    report = collect_host(tmp_path / "b", root=root, run=runner, hostname="h", sudo=True)
    assert not (tmp_path / "record").exists()
    assert "cmd/dmesg.txt" in report.files
