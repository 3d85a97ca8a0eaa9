"""``unifab agent apply`` in a real network namespace: a veth pair whose MTU the plan really changes, and a
plan whose later step fails (the kernel refuses a sysfs write) really rolls the MTU back.

Needs root and ``ip netns``; skipped without them, a failure when ``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from unifab.render import nic_plan as np

PYTHON = str(Path(sys.executable))


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def netns() -> Iterator[str]:
    """A private namespace ``unifab-t-<random>`` holding the veth pair ``ua0``/``ua1``; deleted afterwards."""
    name = f"unifab-t-{uuid.uuid4().hex[:10]}"
    if shutil.which("ip") is None or os.geteuid() != 0 or _ip("netns", "add", name).returncode != 0:
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail("ip netns is required (UNIFAB_REQUIRE_SERVICES=1): run as root with iproute2")
        pytest.skip("ip netns is not usable here (needs root and iproute2)")
    try:
        made = _ip("-n", name, "link", "add", "ua0", "type", "veth", "peer", "name", "ua1")
        assert made.returncode == 0, made.stderr
        yield name
    finally:
        _ip("netns", "del", name)


def _mtu(ns: str, dev: str) -> int:
    links = json.loads(_ip("-n", ns, "-j", "link", "show", "dev", dev).stdout)
    return int(links[0]["mtu"])


def _plan(path: Path, steps: list[dict[str, Any]]) -> Path:
    nic = {"netdev": "ua0", "rdma_dev": None, "driver": "mlx5", "dialect": np.OFED, "pci_address": None}
    doc = {"format": np.FORMAT, "host": "nshost", "profile": "T", "nics": [nic], "notes": [], "steps": steps}
    path.write_text(json.dumps(doc))
    return path


MTU_STEP = {
    "id": "ua0.mtu", "nic": "ua0", "what": "MTU", "setting": "ip.mtu",
    "read": [["ip", "-j", "link", "show", "dev", "ua0"]], "apply": [["ip", "link", "set", "dev", "ua0", "mtu", "4000"]],
    "expect": "4000", "flaps_link": True,
}  # fmt: skip
# the veth has no MLNX_OFED ecn/ tree: the kernel refuses to create it, so this step fails after the MTU changed
ECN_STEP = {
    "id": "ua0.ecn.roce_np.cnp_dscp", "nic": "ua0", "what": "cnp_dscp", "setting": "file",
    "path": "/sys/class/net/ua0/ecn/roce_np/cnp_dscp", "expect": "48", "compare": "text", "flaps_link": False,
}  # fmt: skip


def _apply(ns: str, plan: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = ["ip", "netns", "exec", ns, PYTHON, "-m", "unifab", "agent", "apply", str(plan), "--hostname", "nshost"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([*argv, *extra], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_apply_changes_the_mtu_for_real_and_rolls_it_back_when_a_later_step_fails(netns: str, tmp_path: Path) -> None:
    assert _mtu(netns, "ua0") == 1500
    refused = _apply(netns, _plan(tmp_path / "p0.json", [MTU_STEP]))
    assert refused.returncode == 4 and "refused: step ua0.mtu" in refused.stderr
    assert _mtu(netns, "ua0") == 1500

    done = _apply(netns, _plan(tmp_path / "p1.json", [MTU_STEP]), "--drained")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unifab-apply: ua0.mtu: MTU: '1500' -> '4000' ok" in done.stdout
    assert _mtu(netns, "ua0") == 4000 and _mtu(netns, "ua1") == 1500

    _ip("-n", netns, "link", "set", "dev", "ua0", "mtu", "1500")
    failed = _apply(netns, _plan(tmp_path / "p2.json", [MTU_STEP, ECN_STEP]), "--drained")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "step ua0.ecn.roce_np.cnp_dscp failed" in failed.stderr and "the host is as it was" in failed.stderr
    assert _mtu(netns, "ua0") == 1500
    logs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("nic-apply-*.json"))]
    assert [entry["result"] for entry in logs] == ["refused", "applied", "rolled-back"]
    assert {r["id"]: r["action"] for r in logs[-1]["rollback"]}["ua0.mtu"] == "rolled-back"
