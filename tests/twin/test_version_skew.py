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
from unifab.twin.generate import generate
from unifab.twin.scenarios import SCENARIOS
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


def test_nccl_skew_is_in_the_job_log_and_found_exactly(generated: Path, tmp_path: Path) -> None:
    seen_nccl = 0
    for seed in range(4):
        bundle = tmp_path / f"s{seed}"
        shutil.copytree(generated, bundle)
        truth = apply_version_skew(bundle, seed=seed, count=50)
        log = bundle / "telemetry" / "nccl" / "1001.log"  # the twin's one job, written for the scenario
        skewed = {t["subject"]["device"] for t in truth if t["subject"]["field"] == "nccl"}
        seen_nccl += len(skewed)
        assert all(t["check"] == "FLEET-DRIVER" for t in truth if t["subject"]["field"] == "nccl")
        fabric = load_bundle(bundle)
        releases = {h: dict(fabric.hosts[h].nccl_versions)["1001.log"] for h in fabric.hosts}
        assert {h for h, r in releases.items() if r != "2.21.5"} == skewed
        assert log.read_text().count("NCCL version 2.21.5+cuda12.2") == len(fabric.hosts) - len(skewed)
        findings = [f for f in run_checks(fabric) if f.subject.get("field") == "nccl"]
        assert {(f.check, f.subject["device"]) for f in findings} == {("FLEET-DRIVER", h) for h in skewed}
    assert seen_nccl > 0  # the seeds above do skew NCCL


@pytest.mark.parametrize(("switch_os", "nic_vendor", "fabric"), [("mixed", "mixed", "roce"), ("sonic", "mlx5", "ib")])
def test_with_every_scenario_fleet_finds_exactly_the_skew(
    tmp_path: Path, switch_os: str, nic_vendor: str, fabric: str
) -> None:
    scenarios = tuple(SCENARIOS) if fabric == "roce" else ()
    result = generate(
        tmp_path / "b", 128, 3, scenarios, switch_os=switch_os, nic_vendor=nic_vendor, fabric=fabric, version_skew=8
    )
    truth = {
        (m["check"], m["subject"]["device"], m["subject"]["field"])
        for m in result.truth["misconfigurations"]
        if m["scenario"] == SCENARIO
    }
    assert len(truth) == 8
    found = {
        (f.check, f.subject["device"], f.subject["field"])
        for f in run_checks(load_bundle(tmp_path / "b"))
        if f.check.startswith("FLEET-")
    }
    assert found == truth
