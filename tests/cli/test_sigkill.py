"""SIGKILL in the middle of writing output: ``unifab render --out D`` leaves D as it was or complete with the new
output, never a mix and never missing; ``unifab twin generate --out T`` leaves no T (or the empty T it was given)
or a complete bundle. Killed at random moments through the real command, and at each step of the write by a
process that kills itself there."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

UNIFAB = [sys.executable, "-m", "unifab.cli"]


def _tree(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _intent(tmp_path: Path, mtu: int) -> Path:
    from unifab.twin.intent_file import intent_yaml

    text = intent_yaml().replace("mtu: {host: 9000, switch: 9100}", f"mtu: {{host: {mtu}, switch: 9100}}")
    assert f"host: {mtu}" in text
    path = tmp_path / f"intent-{mtu}.yaml"
    path.write_text(text)
    return path


def _render(intent: Path, out: Path) -> list[str]:
    return [*UNIFAB, "render", str(intent), "--gpus", "8", "--out", str(out), "-q", "--format", "json"]


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, bytes], dict[str, bytes]]:
    """Two intents and the complete output of each."""
    tmp = tmp_path_factory.mktemp("renders")
    old, new = _intent(tmp, 9000), _intent(tmp, 4200)
    trees = []
    for intent in (old, new):
        out = tmp / f"ref-{intent.stem}"
        subprocess.run(_render(intent, out), check=True, capture_output=True, timeout=300)
        trees.append(_tree(out))
    assert trees[0] != trees[1]
    return old, new, trees[0], trees[1]


def _kill_after(cmd: list[str], delay: float) -> int:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=60)


def _duration(cmd: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return time.monotonic() - started


def test_render_killed_at_random_moments_leaves_old_or_new(
    renders: tuple[Path, Path, dict[str, bytes], dict[str, bytes]], tmp_path: Path
) -> None:
    old, new, old_tree, new_tree = renders
    out = tmp_path / "out"
    subprocess.run(_render(old, out), check=True, capture_output=True, timeout=300)
    took = _duration(_render(old, tmp_path / "timing"))
    seen = set()
    for fraction in (0.4, 0.7, 0.85, 0.95, 1.05):
        _kill_after(_render(new, out), took * fraction)
        tree = _tree(out)
        assert tree in (old_tree, new_tree), f"killed at {fraction:.0%}: a mix of the two outputs"
        seen.add("new" if tree == new_tree else "old")
        if tree == new_tree:  # start over from the old output for the next kill
            subprocess.run(_render(old, out), check=True, capture_output=True, timeout=300)
    assert "old" in seen


KILLER = """
import os, signal, sys
from pathlib import Path
import unifab.fabric_plan as fp

point, count = sys.argv[1], int(sys.argv[2])
writes = [0]
real_write, real_swap = Path.write_text, fp._swap_in

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def write_text(self, *args, **kwargs):
    writes[0] += 1
    if point == "write" and writes[0] == count:
        die()
    return real_write(self, *args, **kwargs)

def swap_in(*args):
    if point == "before-swap":
        die()
    real_swap(*args)
    if point == "after-swap":
        die()

Path.write_text = write_text
fp._swap_in = swap_in
sys.argv = ["unifab", *sys.argv[3:]]
from unifab.cli import main
main()
"""


@pytest.mark.parametrize(("point", "count"), [("write", 1), ("write", 10), ("before-swap", 0), ("after-swap", 0)])
def test_render_killed_at_each_step_of_the_write(
    renders: tuple[Path, Path, dict[str, bytes], dict[str, bytes]], tmp_path: Path, point: str, count: int
) -> None:
    old, new, old_tree, new_tree = renders
    out = tmp_path / "out"
    subprocess.run(_render(old, out), check=True, capture_output=True, timeout=300)
    args = _render(new, out)[3:]
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, point, str(count), *args], capture_output=True, timeout=300, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _tree(out) == (new_tree if point == "after-swap" else old_tree)


def test_twin_generate_killed_at_random_moments_leaves_nothing_or_a_complete_bundle(tmp_path: Path) -> None:
    cmd = [*UNIFAB, "twin", "generate", "--gpus", "64", "--seed", "5", "-q", "--scenario", "pfc-mismatch"]
    reference = tmp_path / "reference"
    subprocess.run([*cmd, "--out", str(reference)], check=True, capture_output=True, timeout=300)
    ref_tree = _tree(reference)
    took = _duration([*cmd, "--out", str(tmp_path / "timing")])
    for i, fraction in enumerate((0.3, 0.7, 0.9, 1.0, 1.2)):
        out = tmp_path / f"t{i}"
        if i % 2:
            out.mkdir()  # an empty directory given as the target
        _kill_after([*cmd, "--out", str(out)], took * fraction)
        tree = _tree(out)
        assert tree in ({}, ref_tree), f"killed at {fraction:.0%}: a partial bundle"
        if tree:
            assert (out / "truth.json").is_file()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    # a killed run may leave its hidden staging directory beside the target, never a visible partial bundle
    assert all(name.startswith(".t") for name in leftovers), leftovers
    assert any(reference.iterdir())
