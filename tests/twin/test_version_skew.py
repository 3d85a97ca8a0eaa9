"""The version-skew twin scenario: real files edited, truth recorded, and it is exactly what FLEET-* find."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.checks.runner import run_checks
from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.twin.version_files import write_version_files
from unifab.twin.version_skew import SCENARIO, apply_version_skew, older


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small twin written by `unifab twin generate` (which writes the SONiC / NVUE version files)."""
    out = tmp_path_factory.mktemp("skew") / "b"
    result = CliRunner().invoke(
        app, ["twin", "generate", "--gpus", "64", "--out", str(out), "--seed", "9", "--switch-os", "mixed", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.glob("switches/*/*/*")}
    assert {"show-version.txt", "nv-show-system.txt"} <= names  # generate writes them
    assert write_version_files(out) == []  # never overwrites
    return out


def test_skew_is_found_exactly_and_recorded(generated: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(generated, bundle)
    truth = apply_version_skew(bundle, seed=3, count=4)
    assert len(truth) == 4 and {t["scenario"] for t in truth} == {SCENARIO}
    recorded = json.loads((bundle / "truth.json").read_text())["misconfigurations"]
    assert [m for m in recorded if m["scenario"] == SCENARIO] == truth
    findings = run_checks(load_bundle(bundle))
    expected = {(m["check"], e) for m in recorded for e in m["entities"]}
    assert {(f.check, e) for f in findings for e in f.entities} == expected


def test_same_seed_same_skew_and_no_majority_flip(generated: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(generated, a)
    shutil.copytree(generated, b)
    assert apply_version_skew(a, seed=5, count=50) == apply_version_skew(b, seed=5, count=50)
    # asked for more than can stay minorities: fewer, and each group keeps its majority
    fleet = [f for f in run_checks(load_bundle(a)) if f.check.startswith("FLEET-")]
    per_group: dict[tuple[str, str], int] = {}
    for f in fleet:
        key = (f.subject["field"], f.subject["group"])
        per_group[key] = per_group.get(key, 0) + 1
    for f in fleet:
        total = f.impact["devices_in_group"]
        assert per_group[(f.subject["field"], f.subject["group"])] * 2 < total


def test_older_lowers_one_release_number() -> None:
    rng = random.Random(1)
    for version in ("28.39.1002", "4.32.2F", "Cumulus Linux 5.16.0", "SONiC.202405.1033627-fecd4ec81", "24.10-1.1.4"):
        lowered = older(version, rng)
        assert lowered != version and len(lowered.split(".")) == len(version.split("."))
    with pytest.raises(ValueError):
        older("abc", rng)
