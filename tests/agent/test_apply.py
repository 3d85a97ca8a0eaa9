"""``unifab agent apply`` against a copy of a twin host's tree, with the NIC tools as recorders on PATH.

The tools keep the NIC's state in the tree's own files (``cmd/mlnx_qos/<if>.txt``, ``sys/class/net/<if>/mtu``,
...), read and written by unifab's parsers, so a step's read-back and the rollback's re-read see what the
previous command really did. A fault is injected into each step in turn (the step's own write fails); the host
must then read exactly as it did before the run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.agent.fake_nic_tools import InProcessTools, install, tool_env

from unifab.agent import apply as ap
from unifab.agent.plan_exec import CommandResult, HostIo
from unifab.intent import Device, parse_intent, resolve
from unifab.render import nic_plan as np
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle

INTENT = """
preset: nvidia-spectrum-x
qos:
  roce: {dscp: 24, priority: 4}
  cnp: {dscp: 46, priority: 5}
  lossless_priorities: [4]
  priority_to_tc: {4: 4, 5: 5}
  ets:
    - {tc: 0, tsa: ets, bw_percent: 40}
    - {tc: 4, tsa: ets, bw_percent: 60}
    - {tc: 5, tsa: strict}
  ecn: [{queue: 4, min_bytes: 100000, max_bytes: 1000000, probability: 50}]
  dcqcn: {rpg_ai_rate: 10, min_time_between_cnps: 8}
  mtu: {host: 4200, switch: 9100}
  nccl: {traffic_class: 98}
"""
UNIFAB = [sys.executable, "-m", "unifab"]


@pytest.fixture(scope="module")
def twin_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("twin") / "b"
    write_bundle(build(8), out)
    return out / "hosts" / "gpu001"


@dataclass
class Host:
    root: Path
    plan: Path
    env: dict[str, str]
    log: Path

    def tools(self) -> InProcessTools:
        """The host's I/O with the fake tools run in this process (the fault loops make hundreds of calls)."""
        return InProcessTools(self.root, Path(self.env["PATH"].split(":")[0]))

    def tree(self) -> dict[str, bytes]:
        """Every file's bytes (the fake dcb's empty table files read as no table: they are left out)."""
        files = {p.relative_to(self.root).as_posix(): p.read_bytes() for p in self.root.rglob("*") if p.is_file()}
        return {k: v for k, v in files.items() if v or not k.startswith("dcb/")}

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def _profile() -> Any:
    return resolve(parse_intent(INTENT), Device("gpu001", "host"))


def _write_plan(path: Path, nics: Sequence[np.PlanNic]) -> Path:
    path.write_text(np.dumps(np.render_nic_plan("gpu001", nics, _profile())))
    return path


def _mlx5_host(tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch, dialect: str = np.OFED) -> Host:
    root = tmp_path / "root"
    shutil.copytree(twin_host, root)
    state = root / "cmd" / "mlnx_qos" / "eth0.txt"
    state.with_suffix(".all").write_text(state.read_text())  # `mlnx_qos -a`: every TC
    tc = root / "sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    tc.parent.mkdir(parents=True, exist_ok=True)
    tc.write_text("Global tclass=106\n")
    pause = "Pause parameters for eth0:\nAutonegotiate:\ton\nRX:\t\ton\nTX:\t\ton\n"  # 802.3x on: to be turned off
    (root / "cmd/ethtool-a/eth0.txt").write_text(pause)
    pci = None
    names: tuple[str, ...] = ("mlnx_qos", "ip", "ethtool")
    if dialect == np.UPSTREAM:
        shutil.rmtree(root / "sys/class/net/eth0/ecn")
        pci = "0000:17:00.0"
        cc = root / "sys/kernel/debug/mlx5" / pci / "cc_params"
        cc.mkdir(parents=True)
        for name in ("np_cnp_dscp", "np_cnp_prio", "rp_ai_rate"):
            (cc / name).write_text("7\n")
        names = ("dcb", "ip", "ethtool")
        tables = {  # what a ConnectX shows out of the box: PCP trust (no DSCP APP entries), no PFC, one TC
            "pfc/prio-pfc": " ".join(f"{p}:off" for p in range(8)),
            "ets/prio-tc": " ".join(f"{p}:0" for p in range(8)),
            "ets/tc-tsa": " ".join(f"{p}:ets" for p in range(8)),
            "ets/tc-bw": " ".join(f"{p}:{100 if p == 0 else 0}" for p in range(8)),
            "buffer/prio-buffer": " ".join(f"{p}:0" for p in range(8)),
        }
        for rel, text in tables.items():
            (root / "dcb/eth0" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "dcb/eth0" / rel).write_text(text)
    nic = np.PlanNic("eth0", "mlx5_0", "mlx5", dialect, 5, pci_address=pci, traffic_class=dialect == np.OFED)
    plan = _write_plan(tmp_path / "nic-plan.json", [nic])
    log = tmp_path / "calls.log"
    env = tool_env(install(tmp_path, names), root, log)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return Host(root, plan, env, log)


def _bnxt_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Host:
    root = tmp_path / "root"
    (root / "niccli").mkdir(parents=True)
    (root / "cmd" / "bnxt-qos").mkdir(parents=True)
    (root / "cmd" / "ethtool-a").mkdir(parents=True)
    (root / "cmd" / "ethtool-a" / "ens1f0np0.txt").write_text(
        "Pause parameters for ens1f0np0:\nAutonegotiate:\ton\nRX:\t\ton\nTX:\t\ton\n"
    )
    (root / "sys/class/net/ens1f0np0").mkdir(parents=True)
    (root / "sys/class/net/ens1f0np0/mtu").write_text("1500\n")
    initial = {"tsa": ["ets"], "up2tc": [0] * 8, "tcbw": [100], "pfc": [], "apps": []}
    (root / "niccli" / "ens1f0np0.json").write_text(json.dumps(initial))
    profile = resolve(parse_intent("preset: broadcom-thor"), Device("gpu001", "host"))
    nic = np.PlanNic("ens1f0np0", "bnxt_re0", "bnxt", np.BNXT, 7)
    plan = tmp_path / "nic-plan.json"
    plan.write_text(np.dumps(np.render_nic_plan("gpu001", [nic], profile)))
    log = tmp_path / "calls.log"
    env = tool_env(install(tmp_path, ("niccli", "ip", "ethtool")), root, log)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return Host(root, plan, env, log)


@dataclass
class FaultyIo:
    """The host's own I/O, except that the write of one step fails (once), as a tool or the kernel would."""

    inner: HostIo
    step: ap.Step
    hit: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        if not self.hit and self.step.apply and tuple(argv) == self.step.apply[0]:
            self.hit.append(self.step.id)
            return CommandResult(1, "", "injected fault")
        return self.inner.run(argv, timeout)

    def read_file(self, path: str) -> str | None:
        return self.inner.read_file(path)

    def write_file(self, path: str, text: str) -> list[str]:
        if not self.hit and path == self.step.path and text.strip() == self.step.expect:
            self.hit.append(self.step.id)
            raise OSError(5, "Input/output error")
        return self.inner.write_file(path, text)

    def remove_file(self, path: str, created_dirs: Sequence[str]) -> None:
        self.inner.remove_file(path, created_dirs)


def _values(plan: ap.Plan, host: Host) -> dict[str, str | None]:
    """Every step's current value, read by the agent's own readers (a dry run's record)."""
    out = ap.apply_plan(plan, io=host.tools(), dry_run=True)
    assert out.code == ap.EXIT_APPLIED, out.message
    return {s["id"]: s["before"] for s in out.log["steps"]}


def test_applies_verifies_and_a_second_run_changes_nothing(
    tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = _mlx5_host(tmp_path, twin_host, monkeypatch)
    plan = ap.load_plan(host.plan)
    out = ap.apply_plan(plan, io=HostIo(host.root), drained=True)
    assert out.code == ap.EXIT_APPLIED, "\n".join(out.lines)
    assert _values(plan, host) == {s.id: s.expect for s in plan.steps}
    calls = host.calls()
    assert "ip link set dev eth0 mtu 4200" in calls and "mlnx_qos -i eth0 --pfc 0,0,0,0,1,0,0,0" in calls
    assert (host.root / "sys/class/net/eth0/ecn/roce_rp/rpg_ai_rate").read_text() == "10\n"
    assert all(line.endswith(" ok") or " ok (" in line for line in out.lines), out.lines
    again = ap.apply_plan(plan, io=HostIo(host.root))  # nothing differs: no drain needed, no write
    assert again.code == ap.EXIT_APPLIED and host.calls() == calls
    assert {s["action"] for s in again.log["steps"]} == {"unchanged"}


@pytest.mark.parametrize("dialect", [np.OFED, np.UPSTREAM])
def test_a_fault_at_every_step_leaves_the_host_as_it_was(
    tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    host = _mlx5_host(tmp_path, twin_host, monkeypatch, dialect)
    plan = ap.load_plan(host.plan)
    original_tree, original = host.tree(), _values(plan, host)
    changing = [s for s in plan.steps if not ap.same(s, original[s.id], s.expect)]  # absent files are created
    assert len(changing) > 10 and {s.setting for s in changing} >= {"ip.mtu", "ethtool.pause", np.FILE}
    for step in changing:
        io = FaultyIo(host.tools(), step)
        out = ap.apply_plan(plan, io=io, drained=True)
        assert io.hit == [step.id]
        assert out.code == ap.EXIT_ROLLED_BACK, f"{step.id}: {out.message}"
        assert f"step {step.id} failed" in out.message and "the host is as it was" in out.message
        assert host.tree() == original_tree, step.id  # every byte as before; re-read through the readers too:
        assert [r["action"] for r in out.log["rollback"]] == ["rolled-back"] * len(out.log["rollback"])
    assert _values(plan, host) == original


def test_bnxt_fault_at_every_step_restores_all_but_what_niccli_cannot_take_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = _bnxt_host(tmp_path, monkeypatch)
    plan = ap.load_plan(host.plan)
    original = _values(plan, host)
    for k, step in enumerate(plan.steps):
        io = FaultyIo(host.tools(), step)
        out = ap.apply_plan(plan, io=io, drained=True)
        assert out.code == ap.EXIT_ROLLED_BACK, step.id
        now = _values(plan, host)
        # the APP TLVs and PFC come last: niccli has no delete / PFC-off in the reference, so the ones before
        # the fault stay, and the log says so
        kept = {s.id for s in plan.steps[:k] if s.setting in ("niccli.app", "niccli.pfc")}
        assert {i for i in now if now[i] != original[i]} == kept, step.id
        if kept:
            assert "NOT restored: " in out.message and all(i in out.message for i in kept)
        host = _bnxt_host(tmp_path / f"r{k}", monkeypatch)  # the next fault starts from the original host again
        plan = ap.load_plan(host.plan)


def test_verification_failure_rolls_back(tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that says yes and does nothing: the read-back differs, so everything done is rolled back."""
    host = _mlx5_host(tmp_path, twin_host, monkeypatch)
    lazy = Path(host.env["PATH"].split(":")[0]) / "mlnx_qos"
    lazy.write_text(lazy.read_text().replace('if "--cable_len" in opts:', "if False:"))
    before = host.tree()
    out = ap.apply_plan(ap.load_plan(host.plan), io=HostIo(host.root), drained=True)
    assert out.code == ap.EXIT_ROLLED_BACK
    assert "step eth0.cable_len: read back '3', expected '5'" in out.message or "eth0.cable_len" in out.message
    assert host.tree() == before


def test_dry_run_changes_nothing_and_shows_what_would(
    tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = _mlx5_host(tmp_path, twin_host, monkeypatch)
    before = host.tree()
    done = subprocess.run(
        [*UNIFAB, "agent", "apply", str(host.plan), "--dry-run", "--root", str(host.root), "--hostname", "gpu001"],
        capture_output=True, text=True, env=host.env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "unifab-apply: eth0.pfc: PFC: '0,0,0,1,0,0,0,0' -> '0,0,0,0,1,0,0,0' would change" in done.stdout
    assert host.tree() == before and host.calls() == []
    assert not list(tmp_path.glob("nic-apply-*.json"))


def test_link_flap_is_refused_unless_drained(tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = _mlx5_host(tmp_path, twin_host, monkeypatch)
    before = host.tree()
    base = [*UNIFAB, "agent", "apply", str(host.plan), "--root", str(host.root), "--hostname", "gpu001"]
    done = subprocess.run(base, capture_output=True, text=True, env=host.env, timeout=120, check=False)
    assert done.returncode == 4, done.stderr
    assert (
        done.stderr.strip().splitlines()[-1].startswith("unifab-apply: refused: step eth0.mtu (MTU '9000' -> '4200')")
    )
    assert host.tree() == before and host.calls() == []
    # Slurm says the node is drained (a recorder scontrol): the same run goes ahead and logs beside the plan
    scontrol = Path(host.env["PATH"].split(":")[0]) / "scontrol"
    scontrol.write_text("#!/bin/sh\necho 'NodeName=gpu001 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=2'\n")
    scontrol.chmod(0o755)
    done = subprocess.run(base, capture_output=True, text=True, env=host.env, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("nic-apply-*.json"))]
    assert [log["result"] for log in logs] == ["refused", "applied"]


@pytest.mark.parametrize(
    ("state", "drained"),
    [("IDLE+DRAIN", True), ("DOWN+DRAIN", True), ("MIXED+DRAIN", False), ("IDLE", False), ("ALLOCATED", False)],
)
def test_slurm_drained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str, drained: bool) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text(f'#!/bin/sh\necho "NodeName=$4 State={state} Partitions=gpu"\n')
    (bin_dir / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert ap.slurm_drained("gpu001") is drained
    (bin_dir / "scontrol").write_text("#!/bin/sh\nsleep 5\n")
    assert ap.slurm_drained("gpu001", timeout=0.2) is False
    (bin_dir / "scontrol").unlink()
    assert ap.slurm_drained("gpu001") is False


def _bad(
    tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch, edit: Any
) -> subprocess.CompletedProcess[str]:
    host = _mlx5_host(tmp_path, twin_host, monkeypatch)
    doc = json.loads(host.plan.read_text())
    edit(doc)
    host.plan.write_text(json.dumps(doc))
    before = host.tree()
    argv = [*UNIFAB, "agent", "apply", str(host.plan), "--root", str(host.root), "--hostname", "gpu001", "--drained"]
    done = subprocess.run(argv, capture_output=True, text=True, env=host.env, timeout=120, check=False)
    assert host.tree() == before and host.calls() == []
    return done


def _step(doc: dict[str, Any], sid: str) -> dict[str, Any]:
    return next(s for s in doc["steps"] if s["id"] == sid)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="unifab-nic-plan/2"), "format 'unifab-nic-plan/2'; this unifab reads"),
        (lambda d: d["nics"][0].update(netdev="eth0;reboot"), "netdev name 'eth0;reboot'"),
        (lambda d: _step(d, "eth0.pfc")["apply"][0].__setitem__(0, "bash"),
         "step eth0.pfc: 'bash' is not an allowed tool"),
        (lambda d: _step(d, "eth0.pfc")["apply"].append(["mlnx_qos", "-i", "eth0", "-d", "fw"]),
         "step eth0.pfc: the read/apply commands are not those of setting mlnx_qos.pfc"),
        (lambda d: _step(d, "eth0.pfc").update(flaps_link=False), "step eth0.pfc: flaps_link must be true"),
        (lambda d: _step(d, "eth0.roce_tos").update(path="/etc/shadow"), "step eth0.roce_tos: path '/etc/shadow'"),
        (lambda d: _step(d, "eth0.roce_tos").update(path="/sys/kernel/config/rdma_cm/mlx5_0/ports/1/../../x"),
         "is not a sysfs/configfs file"),
        (lambda d: _step(d, "eth0.roce_mode").update(expect="v2\nx"), "step eth0.roce_mode: value"),
        (lambda d: _step(d, "eth0.mtu").update(setting="sh"), "setting 'sh' is not one unifab applies"),
        (lambda d: d.update(host="other01"), "renders host 'other01', this is 'gpu001'"),
    ],
)  # fmt: skip
def test_bad_plans_are_refused_before_anything_runs(
    tmp_path: Path, twin_host: Path, monkeypatch: pytest.MonkeyPatch, edit: Any, message: str
) -> None:
    done = _bad(tmp_path, twin_host, monkeypatch, edit)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("unifab: error: ") and message in lines[0], lines


def test_a_plan_that_is_not_json_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "nic-plan.json"
    plan.write_text("{not json")
    done = subprocess.run(
        [*UNIFAB, "agent", "apply", str(plan)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and f"plan {plan}: not JSON" in done.stderr and "Traceback" not in done.stderr
