"""The host script hands DCBX from a ConnectX NIC's firmware to the OS where ``qos.dcbx`` is ``os``.

The step is the QOS-DCBX check's fix (``mlnx_qos -i IF -d os``, with the same note on why it does not last), run
before any DCB setting and only when ``mlnx_qos`` reports ``DCBX mode: Firmware controlled``. The library
function runs for real with bash against a fake ``mlnx_qos`` that keeps a real capture's state
(tests/data/samples/host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt, its DCBX line set to firmware control).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.checks.host_qos import _dcbx_fix
from unifab.intent import Device, parse_intent, resolve
from unifab.model import Nic, NicQos
from unifab.parse.host import mlnx_qos
from unifab.profile import QosProfile
from unifab.render import host_script, nic_mlx5
from unifab.render.host_qos import render_host_script
from unifab.render.host_script import NicTarget

SAMPLE = "host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"
INTENT = """
preset: nvidia-spectrum-x
qos:
  dcbx: {dcbx}
"""

FAKE = r"""
import os, sys
from dataclasses import replace
from pathlib import Path
from unifab.parse.host import mlnx_qos as m

args = sys.argv[1:]
state = Path(os.environ["STATE"])
q = m.parse(state.read_text())
if "-d" in args:
    with open(os.environ["LOG"], "a") as log:
        log.write("mlnx_qos " + " ".join(args) + "\n")
    state.write_text(m.dump(replace(q, dcbx=args[args.index("-d") + 1])))
else:
    sys.stdout.write(m.dump(q))
"""


def _profile(dcbx: str) -> QosProfile:
    intent = parse_intent(INTENT.format(dcbx=dcbx))
    return resolve(intent, Device("gpu001", "host", os="mlx5"))


def _script(dcbx: str) -> str:
    profile = _profile(dcbx)
    return render_host_script("gpu001", [NicTarget("eth0", "mlx5_0", "mlx5", 3)], profile)


def test_os_intent_hands_dcbx_over_before_any_dcb_setting() -> None:
    script = _script("os")
    lines = script.splitlines()
    step = lines.index("  mlx5_dcbx_os eth0")
    branch = lines.index("if command -v mlnx_qos >/dev/null 2>&1; then")
    qos = next(i for i, line in enumerate(lines) if line.startswith("  mlx5_qos eth0 "))
    assert branch < step < qos
    assert lines[step - 1] == f"  {nic_mlx5.DCBX_NOT_PERSISTENT}"


def test_firmware_intent_leaves_dcbx_alone() -> None:
    lines = _script("fw").splitlines()
    assert "  mlx5_dcbx_os eth0" not in lines and f"  {nic_mlx5.DCBX_NOT_PERSISTENT}" not in lines


def test_the_step_is_the_check_fix() -> None:
    nic = Nic(
        "gpu001",
        "eth0",
        "mlx5_0",
        9000,
        NicQos("dscp", {}, frozenset(), {}, None, None, None, None, None, None, dcbx="fw"),
    )
    fix = _dcbx_fix(nic, "os")
    assert fix.commands == (nic_mlx5.dcbx_os("eth0"), nic_mlx5.DCBX_NOT_PERSISTENT)
    assert 'mlnx_qos -i "$1" -d os' in nic_mlx5.LIBRARY


def _run(tmp: Path, state: Path, log: Path) -> str:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "mlnx_qos"
    fake.write_text(f"#!{sys.executable}\n{FAKE}")
    fake.chmod(0o755)
    for tool in ("awk", "sed", "cat"):
        found = shutil.which(tool)
        assert found, tool
        if not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    body = host_script.PREAMBLE + nic_mlx5.LIBRARY + 'mlx5_dcbx_os eth0\necho "changes=$CHANGES"\n'
    (tmp / "s.sh").write_text(body)
    bash = shutil.which("bash")
    assert bash is not None
    env = {"PATH": str(bin_dir), "STATE": str(state), "LOG": str(log), "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([bash, str(tmp / "s.sh")], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("mode", "calls"), [("fw", ["mlnx_qos -i eth0 -d os"]), ("os", [])])
def test_handover_runs_only_under_firmware_control(samples: Path, tmp_path: Path, mode: str, calls: list[str]) -> None:
    real = mlnx_qos.parse((samples / SAMPLE).read_text())
    state = tmp_path / "eth0.txt"
    state.write_text(mlnx_qos.dump(replace(real, dcbx=mode)))
    log = tmp_path / "log"
    out = _run(tmp_path, state, log)
    assert (log.read_text().splitlines() if log.exists() else []) == calls
    assert mlnx_qos.parse(state.read_text()).dcbx == "os"
    assert f"changes={len(calls)}" in out
    # run again: nothing to do
    log.unlink(missing_ok=True)
    assert "changes=0" in _run(tmp_path, state, log) and not log.exists()


def test_applied_state_is_os_controlled_under_os_intent(samples: Path) -> None:
    current = replace(mlnx_qos.parse((samples / SAMPLE).read_text()), dcbx="fw")
    assert nic_mlx5.applied(current, _profile("os"), 3).dcbx == "os"
    assert nic_mlx5.applied(current, _profile("fw"), 3).dcbx == "fw"
