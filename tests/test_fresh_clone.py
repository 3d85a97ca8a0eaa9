"""A clone with nothing beside it runs its own tests: no path outside the repository is needed.

The clone is made from the committed tree (what a newcomer gets), into a temp directory with no sample
corpus or workspace next to it; a quick subset of the suite then runs there against the clone's own code.
``.ci/run`` does the same for the whole suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_clone_runs_its_own_tests(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")  # an installed copy of the tests has nothing to clone
    clone = tmp_path / "alone" / "unifab"
    subprocess.run([git, "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    assert not (clone.parent / "shared").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UNIFAB_SAMPLES", "PYTEST_"))}
    env["PYTHONPATH"] = str(clone / "src")
    quick = ["tests/parse/host/test_mlnx_qos.py", "tests/parse/switch/test_sonic_qos.py", "tests/test_layers.py"]
    present = [t for t in quick if (clone / t).is_file()]
    assert present, "the quick subset moved: update this test"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'bt'}", *present],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    where = subprocess.run(
        [sys.executable, "-c", "import unifab; print(unifab.__file__)"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(clone))  # the clone's code was tested, not this checkout's
