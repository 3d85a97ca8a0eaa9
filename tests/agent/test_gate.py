"""``unifab agent gate``: fake host roots (a twin host's /sys, its recorded command outputs replayed by stand-in
tools) for a ready host and for each problem the gate detects, the exit contract of every format, the deadline
with a hanging tool, and job-env files whose errors name the line. The real collector, reader and checks run."""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from unifab.agent.gate import GRACE_S, NPD_MAX_OUTPUT, GateOptions, drain_argv, run_gate, sanitize_reason
from unifab.agent.job_env import parse_job_env
from unifab.cli import app
from unifab.errors import UsageError
from unifab.twin.generate import generate

HOST = "gpu001"
NIC_BUSES = (0x17, 0x28, 0x39, 0x4A, 0x97, 0xA8, 0xB9, 0xCA)
TOOLS = {
    "ibdev2netdev": 'exec /bin/cat "$CMD/ibdev2netdev.txt"',
    "show_gids": 'exec /bin/cat "$CMD/show_gids.txt"',
    "ibv_devinfo": 'exec /bin/cat "$CMD/ibv_devinfo.txt"',
    "rdma": 'exec /bin/cat "$CMD/rdma-statistic.txt"',
    "lspci": 'exec /bin/cat "$CMD/lspci-vvv.txt"',
    "nvidia-smi": 'if [ "$1" = "-q" ]; then exec /bin/cat "$CMD/nvidia-smi-q.xml"; fi\n'
    'exec /bin/cat "$CMD/nvidia-smi-topo-m.txt"',
    "dmesg": 'exec /bin/cat "$CMD/dmesg.txt"',
    "uname": 'exec /bin/cat "$CMD/uname-r.txt"',
    "lldpcli": 'exec /bin/cat "$CMD/lldpcli.json"',
    "ip": 'exec /bin/cat "$CMD/ip-d-link.txt"',
    "lsmod": 'exec /bin/cat "$CMD/lsmod.txt"',
    "mlnx_qos": 'exec /bin/cat "$CMD/mlnx_qos/$2.txt"',
    "ethtool": 'exec /bin/cat "$CMD/ethtool$1/$2.txt"',
}


@pytest.fixture(scope="module")
def twin_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("twin") / "bundle"
    generate(out, gpus=8, seed=0)
    return out / "hosts" / HOST


class FakeHost:
    """A host root and the stand-in tools that print its command outputs (``cmd``, editable per test)."""

    def __init__(self, twin: Path, base: Path) -> None:
        self.root = base / "root"
        self.cmd = base / "cmd"
        self.bin = base / "bin"
        shutil.copytree(twin / "sys", self.root / "sys")
        shutil.copytree(twin / "cmd", self.cmd)
        if not (self.cmd / "uname-r.txt").exists():
            (self.cmd / "uname-r.txt").write_text("6.8.0-1015-nvidia\n")
        for rail, bus in enumerate(NIC_BUSES):
            dev = self.root / "sys/class/infiniband" / f"mlx5_{rail}"
            (dev / "device/net" / f"eth{rail}").mkdir(parents=True)
            (dev / "device/net" / f"eth{rail}" / "ifindex").write_text(f"{rail + 2}\n")
            (dev / "device/uevent").write_text(f"DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:{bus:02x}:00.0\n")
            (dev / "ports/1/gid_attrs/ndevs").mkdir(parents=True)
            (dev / "ports/1/gid_attrs/ndevs/0").write_text(f"eth{rail}\n")
            (self.root / "sys/class/net" / f"eth{rail}" / "operstate").write_text("up\n")
        for name, state in (("lo", "unknown"), ("eno1", "up"), ("ens9", "down")):
            (self.root / "sys/class/net" / name).mkdir()
            (self.root / "sys/class/net" / name / "operstate").write_text(f"{state}\n")
        self.bin.mkdir()
        for name, body in TOOLS.items():
            self.tool(name, body)

    def tool(self, name: str, body: str) -> None:
        path = self.bin / name
        path.write_text(f'#!/bin/sh\nCMD="{self.cmd}"\n{body}\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    @property
    def path(self) -> str:
        return f"{self.bin}{os.pathsep}/usr/bin{os.pathsep}/bin"

    def edit(self, rel: str, old: str, new: str, count: int = 1) -> None:
        """Replace ``old`` in a command output (``cmd/...``) or a /sys file (``sys/...``); it must be there."""
        path = (self.root if rel.startswith("sys/") else self.cmd) / rel.removeprefix("cmd/")
        text = path.read_text()
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, count))

    def options(self, **kwargs: object) -> GateOptions:
        base: dict[str, object] = {"root": self.root, "hostname": HOST, "deadline_s": 20.0, "path": self.path}
        return GateOptions(**(base | kwargs))  # type: ignore[arg-type]

    def cli(self, *args: str, env_path: bool = True) -> tuple[int, str, str]:
        runner = CliRunner()
        env = {"PATH": self.path} if env_path else {}
        argv = ["agent", "gate", "--root", str(self.root), "--hostname", HOST, "--deadline", "20", *args]
        result = runner.invoke(app, argv, env=env, catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def host(twin_host: Path, tmp_path: Path) -> FakeHost:
    return FakeHost(twin_host, tmp_path)


def test_a_ready_host_passes_every_format(host: FakeHost) -> None:
    result = run_gate(host.options())
    assert result.status == "ready", [p.short for p in result.blocking]
    assert result.exit_code == 0 and len(result.nics) == 8
    assert {"HOST-GID", "HOST-ROCE-MTU", "HOST-PEERMEM", "GATE-NIC-QOS", "GATE-NIC-DOWN"} <= set(result.checked)
    code, out, _ = host.cli()
    assert code == 0 and "READY: unifab: gpu001 ready" in out and re.search(r"HOST-ROCE-MTU\s+ok", out)
    code, out, _ = host.cli("--format", "slurm")
    assert code == 0 and out.startswith("unifab: gpu001 ready")
    code, out, _ = host.cli("--format", "npd")
    assert code == 0 and len(out.strip().encode()) <= NPD_MAX_OUTPUT
    code, out, _ = host.cli("--format", "json")
    doc = orjson.loads(out)
    assert code == 0 and doc["ready"] is True and doc["status"] == "ready" and doc["host"] == HOST


def _gids_v1_only(host: FakeHost) -> None:
    text = (host.cmd / "show_gids.txt").read_text()
    host.cmd.joinpath("show_gids.txt").write_text(text.replace("v2", "v1"))


def _lspci_downgrade(host: FakeHost) -> None:
    """mlx5_0 (17:00.0) trained at Gen1 speed."""
    text = (host.cmd / "lspci-vvv.txt").read_text()
    head, sep, nic = text.partition("17:00.0 Ethernet controller")
    assert sep and "LnkSta:\tSpeed 32GT/s (ok)" in nic, "twin lspci has no mlx5_0 LnkSta line"
    nic = nic.replace("LnkSta:\tSpeed 32GT/s (ok)", "LnkSta:\tSpeed 2.5GT/s (downgraded)", 1)
    (host.cmd / "lspci-vvv.txt").write_text(head + sep + nic)


PROBLEMS: dict[str, tuple[Callable[[FakeHost], None], str]] = {
    "roce-mtu": (
        lambda h: h.edit("cmd/ibv_devinfo.txt", "active_mtu:\t\t4096 (5)", "active_mtu:\t\t1024 (3)"),
        "HOST-ROCE-MTU",
    ),
    "gid-v1": (_gids_v1_only, "HOST-GID"),
    "no-peermem": (lambda h: h.edit("cmd/lsmod.txt", "nvidia_peermem", "nvidia_other", 9), "HOST-PEERMEM"),
    "pcie": (_lspci_downgrade, "HOST-PCIE-DOWNGRADED"),
    "dcbx-fw": (
        lambda h: h.edit("cmd/mlnx_qos/eth2.txt", "DCBX mode: OS controlled", "DCBX mode: Firmware controlled"),
        "QOS-DCBX",
    ),
    "nic-down": (
        lambda h: h.edit("sys/class/infiniband/mlx5_3/ports/1/state", "4: ACTIVE", "1: DOWN"),
        "GATE-NIC-DOWN",
    ),
    "pfc": (
        lambda h: h.edit("cmd/mlnx_qos/eth5.txt", "enabled     0   0   0   1", "enabled     0   0   0   0"),
        "GATE-NIC-QOS",
    ),
    "ecn-off": (lambda h: h.edit("sys/class/net/eth6/ecn/roce_np/enable/3", "1", "0"), "GATE-NIC-QOS"),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_each_problem_blocks_with_one_line(host: FakeHost, name: str) -> None:
    breaks, check = PROBLEMS[name]
    breaks(host)
    result = run_gate(host.options(strict=True))
    assert result.status == "not-ready" and result.exit_code == 1
    assert check in {p.finding.check for p in result.blocking}
    code, out, _ = host.cli("--format", "slurm", "--strict")
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("unifab: ") and len(lines[0]) <= 100
    assert lines[0].endswith(f"({check})"), "the reason names the check, however long the message"
    code, out, _ = host.cli("--format", "npd", "--strict")
    assert code == 1 and len(out.strip().encode()) <= NPD_MAX_OUTPUT and out.startswith("unifab: ")
    assert out.strip().endswith(f"({check})")


def test_roce_mtu_reason_names_the_nic(host: FakeHost) -> None:
    host.edit("cmd/ibv_devinfo.txt", "active_mtu:\t\t4096 (5)", "active_mtu:\t\t1024 (3)")
    code, out, _ = host.cli("--format", "slurm", "--strict")
    assert code == 1 and out.strip() == "unifab: mlx5_0 RoCE MTU 1024 < 4096 (HOST-ROCE-MTU)"
    # a warning (the RoCE MTU) does not block without --strict
    code, out, _ = host.cli("--format", "slurm")
    assert code == 0, out


def test_fewer_nics_than_expected(host: FakeHost) -> None:
    assert run_gate(host.options(expect_nics=8)).status == "ready"
    result = run_gate(host.options(expect_nics=9))
    assert [p.finding.check for p in result.blocking] == ["GATE-NO-RDMA"]
    assert "8 RDMA NIC(s) of the 9 expected" in result.blocking[0].short


def test_no_rdma_device_at_all(host: FakeHost) -> None:
    shutil.rmtree(host.root / "sys/class/infiniband")
    for name in ("ibdev2netdev.txt", "show_gids.txt", "ibv_devinfo.txt"):
        (host.cmd / name).write_text("")
    result = run_gate(host.options())
    assert result.status == "not-ready" and result.blocking[0].finding.check == "GATE-NO-RDMA"


def test_intent_file_is_the_reference(host: FakeHost, tmp_path: Path) -> None:
    """The twin's NICs run PFC on priority 3; an intent with lossless priorities [3, 4] makes them all wrong."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text("version: 1\npreset: nvidia-spectrum-x\nqos:\n  lossless_priorities: [3, 4]\n")
    code, out, _ = host.cli("--format", "json", "--intent", str(intent))
    doc = orjson.loads(out)
    assert code == 1 and doc["status"] == "not-ready"
    qos = [p for p in doc["problems"] if p["finding"]["check"] == "GATE-NIC-QOS"]
    assert len(qos) == 8 and all("PFC on [3] not [3, 4]" in p["short"] for p in qos)
    intent.write_text("version: 1\nqos:\n  roce: {dscp: 99}\n")
    code, _, err = host.cli("--intent", str(intent))
    assert code == 2 and "unifab: error:" in err and "fabric.yaml" in err


# --- the job's environment ---------------------------------------------------------------------------------


def _job(tmp_path: Path, text: str) -> str:
    path = tmp_path / "job.env"
    path.write_text(text)
    return str(path)


def test_a_fitting_job_env_is_ready(host: FakeHost, tmp_path: Path) -> None:
    env = _job(
        tmp_path,
        "# the job's NCCL settings\nexport NCCL_IB_HCA='mlx5'\nNCCL_IB_TC=106\nNCCL_SOCKET_IFNAME=eno\n",
    )
    code, out, _ = host.cli("--job-env", env)
    assert code == 0, out
    assert re.search(r"GATE-JOB-HCA\s+ok", out)


@pytest.mark.parametrize(
    ("text", "check", "words"),
    [
        ("NCCL_IB_HCA==mlx5_0,mlx5_9\n", "GATE-JOB-HCA", "names mlx5_9, which this host does not have"),
        ("NCCL_IB_HCA=^mlx5\n", "GATE-JOB-HCA", "selects no RDMA device"),
        ("NCCL_SOCKET_IFNAME=ib\n", "GATE-JOB-IFNAME", "selects no interface"),
        ("NCCL_SOCKET_IFNAME==ens9\n", "GATE-JOB-IFNAME", "not up (ens9 down)"),
        ("NCCL_IB_TC=0\n", "QOS-JOB-TC", "DSCP 0"),
        ("NCCL_IB_TC=abc\n", "GATE-JOB-ENV", "NCCL_IB_TC"),
        ("NCCL_IB_GID_INDEX=0\n", "HOST-GID", "GID 0"),
        ("NCCL_IB_GID_INDEX=3\nNCCL_IB_ADDR_FAMILY=AF_INET6\n", "GATE-JOB-GID", "not an IPv6 GID"),
    ],
)
def test_job_env_problems(host: FakeHost, tmp_path: Path, text: str, check: str, words: str) -> None:
    for rail in range(8):  # the NICs' own TOS override would decide the class instead of NCCL_IB_TC
        (host.root / f"sys/class/infiniband/mlx5_{rail}/tc/1/traffic_class").unlink()
    code, out, _ = host.cli("--format", "json", "--job-env", _job(tmp_path, text))
    doc = orjson.loads(out)
    found = [p for p in doc["problems"] if p["finding"]["check"] == check]
    assert code == 1 and found, [p["short"] for p in doc["problems"]]
    assert words in found[0]["finding"]["message"]
    assert found[0]["node"] is False, "a job's settings are the job's problem, not the node's"


def test_job_problems_do_not_drain_the_node(host: FakeHost, tmp_path: Path) -> None:
    result = run_gate(host.options(job_env=parse_job_env("NCCL_IB_HCA==mlx5_9\n", "job.env")))
    assert result.status == "not-ready" and result.drain_reason() is None
    assert result.blocking[0].finding.message.endswith("(job.env:1)")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("NCCL_IB_TC=106\nthis is not an assignment\n", 2, "expected KEY=VALUE"),
        ("\n\n1NCCL=3\n", 3, "expected KEY=VALUE"),
        ("NCCL_IB_HCA='mlx5_0\n", 1, "closed by its ' quote"),
        ("A=1\n# c\nA=2\n", 3, "A is set again (first on line 1)"),
        ("NCCL_IB_HCA=$HCAS\n", 1, "plain value"),
    ],
)
def test_job_env_errors_name_the_line(host: FakeHost, tmp_path: Path, text: str, line: int, words: str) -> None:
    env = _job(tmp_path, text)
    with pytest.raises(UsageError, match=rf"job\.env:{line}: .*{re.escape(words)}"):
        parse_job_env(text, "job.env")
    code, out, err = host.cli("--job-env", env)
    assert code == 2 and out == "" and f"{env}:{line}:" in err and err.startswith("unifab: error:")
    code, out, _ = host.cli("--job-env", env, "--format", "npd")
    assert code == 2 and out.startswith("unifab: error:") and len(out.strip().encode()) <= NPD_MAX_OUTPUT


def test_job_env_file_missing(host: FakeHost, tmp_path: Path) -> None:
    code, _, err = host.cli("--job-env", str(tmp_path / "nope.env"))
    assert code == 2 and "cannot read" in err


# --- bounded time ------------------------------------------------------------------------------------------


def test_a_hanging_tool_is_killed_at_the_deadline(host: FakeHost) -> None:
    """show_gids hangs (and forks a child that hangs too): the run ends at its deadline, the tool's whole
    process group is killed, the answer is Unknown (nothing blocking was found in what was collected)."""
    marker = host.root.parent / "child.pid"
    host.tool("show_gids", f'/bin/sleep 60 & echo $! > "{marker}"\nexec /bin/sleep 60')
    started = time.monotonic()
    result = run_gate(host.options(deadline_s=2.0))
    elapsed = time.monotonic() - started
    assert elapsed < 2.0 + GRACE_S + 2.0, elapsed  # deadline, the grace for file copies, reading and checks
    assert result.status == "unknown" and result.exit_code == 2
    assert "show_gids" in (result.unknown_reason or "") and any("show_gids" in n for n in result.not_judged)
    child = int(marker.read_text())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists() or "State:\tZ" in Path(f"/proc/{child}/status").read_text():
            break
        time.sleep(0.05)
    else:
        pytest.fail("the hanging tool's child survived the kill")
    code, out, _ = host.cli("--format", "npd", "--deadline", "1")
    assert code == 2 and "cannot judge" in out and len(out.strip().encode()) <= NPD_MAX_OUTPUT


def test_a_problem_found_before_the_deadline_still_blocks(host: FakeHost) -> None:
    host.edit("sys/class/infiniband/mlx5_3/ports/1/state", "4: ACTIVE", "1: DOWN")
    host.tool("lldpcli", "exec /bin/sleep 60")
    result = run_gate(host.options(deadline_s=2.0))
    assert result.status == "not-ready" and result.blocking[0].finding.check == "GATE-NIC-DOWN"
    assert result.unknown_reason is not None and "lldpcli" in result.unknown_reason


def test_nothing_is_left_behind(host: FakeHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    before = sorted(p.name for p in host.root.rglob("*"))
    run_gate(host.options())
    assert list(tmp.iterdir()) == []
    assert sorted(p.name for p in host.root.rglob("*")) == before


# --- arguments and the drain command -----------------------------------------------------------------------


def test_drain_argv_is_validated_and_sanitised() -> None:
    argv = drain_argv("gpu001", "unifab: mlx5_3\x1b[31m down\nnow " + "x" * 200)
    assert argv[:4] == ["scontrol", "update", "NodeName=gpu001", "State=DRAIN"]
    assert argv[4].startswith("Reason=unifab: mlx5_3?[31m down now") and len(argv[4]) <= len("Reason=") + 100
    with pytest.raises(UsageError):
        drain_argv("gpu001;reboot", "x")
    assert sanitize_reason("é\tok") == "? ok"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--deadline", "0"], "--deadline must be a positive"),
        (["--hostname", "a/b"], "--hostname must be a plain host name"),
        (["--drain"], "--drain works with --format slurm only"),
    ],
)
def test_unusable_arguments(host: FakeHost, args: list[str], words: str) -> None:
    code, _, err = host.cli(*args)
    assert code == 2 and words in err


def test_help_has_an_example() -> None:
    result = CliRunner().invoke(app, ["agent", "gate", "--help"])
    assert result.exit_code == 0 and "Example: unifab agent gate" in result.stdout


# --- a real slurmctld ---------------------------------------------------------------------------------------


def test_slurm_drain_reaches_a_real_slurmctld(host: FakeHost, tmp_path: Path) -> None:
    """--format slurm --drain on a failing host: scontrol (the real one, on PATH after the stand-ins) drains the
    node on a private slurmctld, which then shows DRAIN with the gate's reason; a ready host is not drained."""
    from slurm_service import private_slurmctld

    with private_slurmctld(tmp_path / "slurm") as ctld:
        host.edit("cmd/ibv_devinfo.txt", "active_mtu:\t\t4096 (5)", "active_mtu:\t\t1024 (3)")
        path = f"{host.path}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {"PATH": path, "SLURM_CONF": str(ctld.conf)}
        argv = ["agent", "gate", "--root", str(host.root), "--hostname", "gpu001", "--format", "slurm", "--drain"]
        result = CliRunner().invoke(app, [*argv, "--strict"], env=env, catch_exceptions=False)
        assert result.exit_code == 1 and result.stderr == "", result.stderr
        reason = result.stdout.strip()
        assert reason == "unifab: mlx5_0 RoCE MTU 1024 < 4096 (HOST-ROCE-MTU)"
        shown = ctld.scontrol("show", "node", "gpu001")
        assert re.search(r"State=\S*DRAIN", shown), shown
        assert f"Reason={reason} [" in shown, shown
        # gpu002: ready (no --strict: the RoCE MTU is a warning), so not drained
        ok = CliRunner().invoke(app, [*argv[:4], "--hostname", "gpu002", *argv[6:]], env=env, catch_exceptions=False)
        assert ok.exit_code == 0, ok.stdout
        assert "DRAIN" not in ctld.scontrol("show", "node", "gpu002")
