"""The deployable examples in deploy/: the NPD plugin config in NPD's own schema (and its message length the one
``--format npd`` cuts to), the systemd unit (``systemd-analyze verify`` where it exists, else its keys), the Slurm
scripts (valid bash, calling the gate) and the agent config example (exactly the loader's keys)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
import yaml

from unifab.agent.config import KEYS, build_config, read_config_file
from unifab.agent.gate import NPD_MAX_OUTPUT

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
AGENT_KEYS = set(KEYS)  # the loader's keys: the example lists every one
GO_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$")


def _seconds(duration: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * units[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ns|us|ms|s|m|h)", duration))


def test_npd_config_has_what_npd_requires() -> None:
    """pkg/custompluginmonitor/types: plugin "custom", durations Go can parse, a rule's timeout within the global
    one, every permanent rule's condition among the default conditions, and max_output_length = our cut."""
    doc = orjson.loads((DEPLOY / "npd" / "unifab-gate.json").read_bytes())
    assert doc["plugin"] == "custom" and doc["source"]
    cfg = doc["pluginConfig"]
    assert {"invoke_interval", "timeout", "max_output_length", "concurrency"} <= set(cfg)
    assert cfg["max_output_length"] == NPD_MAX_OUTPUT
    assert GO_DURATION.match(cfg["invoke_interval"]) and GO_DURATION.match(cfg["timeout"])
    assert isinstance(cfg["concurrency"], int) and cfg["concurrency"] >= 1
    conditions = {c["type"] for c in doc["conditions"]}
    assert all({"type", "reason", "message"} <= set(c) for c in doc["conditions"])
    assert doc["rules"]
    for rule in doc["rules"]:
        assert {"type", "condition", "reason", "path", "args", "timeout"} <= set(rule)
        assert rule["type"] in ("temporary", "permanent")
        if rule["type"] == "permanent":
            assert rule["condition"] in conditions
        assert GO_DURATION.match(rule["timeout"]) and _seconds(rule["timeout"]) <= _seconds(cfg["timeout"])
        args = rule["args"]
        assert args[:2] == ["agent", "gate"] and args[args.index("--format") + 1] == "npd"
        deadline = float(args[args.index("--deadline") + 1])
        assert deadline + 5 < _seconds(rule["timeout"]), "the gate's deadline must leave room inside NPD's timeout"


def _unit() -> Path:
    return DEPLOY / "systemd" / "unifab-agent.service"


def test_systemd_unit_keys() -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(_unit())
    svc = parser["Service"]
    assert svc["ExecStart"].split()[1:] == ["agent", "run", "--config", "/etc/unifab/agent.yaml"]
    assert svc["User"] == "unifab" and svc["ProtectSystem"] == "strict"
    # privilege only through the sudoers allow-list: no capabilities, and sudo (setuid) must be able to run
    assert svc["NoNewPrivileges"] == "no" and "AmbientCapabilities" not in svc
    assert svc["PrivateTmp"] == "yes" and svc["Restart"] == "on-failure" and svc["RestartSec"]
    assert "RestartSteps" in svc and "RestartMaxDelaySec" in svc, "restarts back off"
    spool = yaml.safe_load((DEPLOY / "agent.yaml").read_text())["spool_dir"]
    assert spool in svc["ReadWritePaths"].split()
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    """``systemd-analyze verify`` on the unit, its ExecStart pointed at a stand-in (verify checks the binary
    exists). systemd older than 254 does not know the backoff keys: those two warnings are expected there."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed; test_systemd_unit_keys checks the keys")
    stub = tmp_path / "unifab"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    unit = tmp_path / "unifab-agent.service"
    unit.write_text(_unit().read_text().replace("/usr/local/bin/unifab", str(stub)))
    proc = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False)
    version = subprocess.run([analyze, "--version"], capture_output=True, text=True, timeout=30, check=False)
    major = int(re.search(r"systemd (\d+)", version.stdout)[1])  # type: ignore[index]
    messages = [m for m in (proc.stdout + proc.stderr).splitlines() if m.strip()]
    if major < 254:
        messages = [m for m in messages if not re.search(r"Unknown key '(RestartSteps|RestartMaxDelaySec)'", m)]
    assert proc.returncode == 0 and messages == [], messages


@pytest.mark.parametrize("script", ["unifab-healthcheck.sh", "prolog.sh"])
def test_slurm_scripts_are_bash_and_call_the_gate(script: str) -> None:
    path = DEPLOY / "slurm" / script
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    assert text.startswith("#!/bin/bash") and path.stat().st_mode & 0o111
    assert re.search(r'"\$UNIFAB" (agent gate|"\$\{args\[@\]\}")', text)
    assert "agent gate --format slurm" in text.replace("args=(", "")


def test_healthcheck_wrapper_drains_through_the_gate(tmp_path: Path) -> None:
    """Run the wrapper with a stand-in unifab: it passes --format slurm --drain and returns the gate's status."""
    calls = tmp_path / "calls"
    fake = tmp_path / "unifab"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\necho "unifab: mlx5_3 port is DOWN (GATE-NIC-DOWN)"\nexit 1\n')
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "UNIFAB": str(fake), "SLURMD_NODENAME": "gpu001"}
    proc = subprocess.run(
        ["bash", str(DEPLOY / "slurm" / "unifab-healthcheck.sh")], env=env, capture_output=True, timeout=30, check=False
    )
    assert proc.returncode == 1
    assert calls.read_text().split()[:6] == ["agent", "gate", "--format", "slurm", "--drain", "--deadline"]
    assert "--hostname gpu001" in calls.read_text()


def test_slurm_conf_snippet() -> None:
    keys = dict(
        line.split("=", 1)
        for line in (DEPLOY / "slurm" / "slurm.conf.snippet").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert keys["HealthCheckProgram"].endswith("unifab-healthcheck.sh")
    assert int(keys["HealthCheckInterval"]) > 0
    assert set(keys["HealthCheckNodeState"].split(",")) <= {"ALLOC", "ANY", "CYCLE", "IDLE", "MIXED", "NONDRAINED_IDLE"}


def test_agent_config_example_has_exactly_the_keys() -> None:
    text = (DEPLOY / "agent.yaml").read_text()
    doc = yaml.safe_load(text)
    assert set(doc) == AGENT_KEYS
    for key in AGENT_KEYS:  # each key is explained by a comment right above it
        above = text.split(f"\n{key}:")[0].rstrip().splitlines()[-1]
        assert above.startswith("#"), key
    config = build_config(read_config_file(DEPLOY / "agent.yaml"), {})  # the agent itself takes it
    assert config.sudo is True and str(config.spool_dir) == doc["spool_dir"]


def test_readme_names_every_example() -> None:
    text = (DEPLOY / "README.md").read_text()
    for path in sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.name != "README.md"):
        rel = path.relative_to(DEPLOY).as_posix()
        assert rel in text, rel
