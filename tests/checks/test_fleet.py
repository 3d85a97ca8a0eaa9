"""FLEET-*: stragglers on a generated twin, the intent's fleet baseline, the version grammar."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from unifab.checks.fleet_versions import allowed, pattern_problem, version_key
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import IntentError
from unifab.intent import parse_intent
from unifab.model import Severity
from unifab.twin.generate import generate
from unifab.twin.version_files import write_version_files
from unifab.twin.version_skew import apply_version_skew

FLEET = {"FLEET-FIRMWARE", "FLEET-DRIVER", "FLEET-OS"}


@pytest.fixture(scope="module")
def clean_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleet") / "b"
    generate(out, gpus=64, seed=4, switch_os="mixed", nic_vendor="mixed", nic_driver="mixed")
    write_version_files(out)
    return out


def _fleet(bundle: Path) -> list:  # type: ignore[type-arg]
    return [f for f in run_checks(load_bundle(bundle)) if f.check in FLEET]


def test_a_clean_twin_is_uniform(clean_twin: Path) -> None:
    assert _fleet(clean_twin) == []
    fabric = load_bundle(clean_twin)
    assert {sw.os for sw in fabric.switches.values() if sw.version} == {"sonic", "eos", "nvue"}


@pytest.mark.parametrize("seed", [1, 2])
def test_the_skewed_devices_and_only_they(clean_twin: Path, tmp_path: Path, seed: int) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(clean_twin, bundle)
    truth = apply_version_skew(bundle, seed=seed, count=5)
    assert len(truth) == 5
    findings = _fleet(bundle)
    assert {(f.check, f.subject["device"], f.subject["field"]) for f in findings} == {
        (t["check"], t["subject"]["device"], t["subject"]["field"]) for t in truth
    }
    assert {(f.check, e) for f in findings for e in f.entities} == {
        (t["check"], e) for t in truth for e in t["entities"]
    }
    assert {f.severity for f in findings} == {Severity.WARNING}
    for f in findings:
        dist = f.evidence["distribution"]
        assert f.evidence["expected"] in dist and list(dist)[-1] == f.evidence["expected"]  # outliers first


def test_one_straggler_among_many_names_the_distribution(clean_twin: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(clean_twin, bundle)
    ibv = bundle / "hosts" / "gpu001" / "cmd" / "ibv_devinfo.txt"
    ibv.write_text(ibv.read_text().replace("28.39.1002", "28.36.1010"))
    (f,) = _fleet(bundle)
    assert f.check == "FLEET-FIRMWARE" and f.subject["device"] == "gpu001"
    assert f.evidence["distribution"] == {"28.36.1010": "1 host (8 NICs)", "28.39.1002": "3 hosts (24 NICs)"}
    assert "3 of 4 hosts" in f.message and "28.39.1002" in f.message
    commands = f.fix[0].commands
    assert any(c.startswith("mlxfwmanager -d 0000:") and '-i "$FW_IMAGE"' in c for c in commands)
    assert any("MT_0000000838" in c for c in commands)


def _with_fleet(src: Path, dst: Path, fleet: str) -> Path:
    shutil.copytree(src, dst)
    (dst / "fabric.yaml").write_text((src / "fabric.yaml").read_text() + fleet)
    return dst


def test_off_baseline_is_an_error_and_the_baseline_replaces_the_majority(clean_twin: Path, tmp_path: Path) -> None:
    fleet = """fleet:
  groups:
    - match: {nic_model: ConnectX-7}
      nic_firmware: ">=28.40"
    - match: {kind: switch, os: eos}
      switch_os: ["4.32.*"]
    - match: {kind: switch, os: "re:sonic|nvue"}
      switch_os: "re:.*"
"""
    bundle = _with_fleet(clean_twin, tmp_path / "b", fleet)
    findings = _fleet(bundle)
    assert findings and {f.check for f in findings} == {"FLEET-FIRMWARE"}
    assert {f.subject["device"] for f in findings} == {"gpu001", "gpu003", "gpu005", "gpu007"}  # ConnectX-7 hosts
    assert all(f.severity is Severity.ERROR and "fleet.groups[0]" in f.evidence["baseline"] for f in findings)
    # a skewed switch the baseline allows is not reported; one it does not allow is an error
    eos = bundle / "switches" / "leaf-su1-r1" / "eos" / "show-version.json"
    doc = json.loads(eos.read_text())
    doc["version"] = "4.31.1F"
    eos.write_text(json.dumps(doc))
    sonic = bundle / "switches" / "leaf-su1-r0" / "sonic" / "show-version.txt"
    sonic.write_text(sonic.read_text().replace("1033627", "1033600"))
    os_findings = [f for f in _fleet(bundle) if f.check == "FLEET-OS"]
    assert [(f.subject["device"], f.severity) for f in os_findings] == [("leaf-su1-r1", Severity.ERROR)]
    assert "boot system flash:EOS-4.32.2F.swi" in os_findings[0].fix[0].commands


def test_a_fleet_only_intent_sets_no_qos_baseline(clean_twin: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(clean_twin, bundle)
    (bundle / "fabric.yaml").write_text(
        "version: 1\nfleet:\n  groups:\n    - match: {kind: host}\n      cuda: '12.1'\n"
    )
    fabric = load_bundle(bundle)
    assert fabric.qos_intent is None and len(fabric.fleet_baseline) == 1
    assert not [f for f in fabric.input_findings if f.check.startswith("INPUT-")]
    findings = _fleet(bundle)
    assert {f.subject["field"] for f in findings} == {"cuda"} and len(findings) == 8


def test_a_bad_fleet_section_names_the_key(clean_twin: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(clean_twin, bundle)
    (bundle / "fabric.yaml").write_text(
        "version: 1\nfleet:\n  groups:\n    - match: {os: eos}\n      switch_os: '>=x'\n"
    )
    fabric = load_bundle(bundle)
    (problem,) = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert "fleet.groups[0].switch_os" in problem.message and fabric.fleet_baseline == ()
    with pytest.raises(IntentError) as err:
        parse_intent("version: 1\nfleet:\n  groups:\n    - match: {nic_model: 're:('}\n      nic_firmware: '1'\n")
    assert err.value.problems[0].startswith("fabric.yaml:4: fleet.groups[0].match.nic_model:")


@pytest.mark.parametrize(
    ("version", "patterns", "ok"),
    [
        ("22.39.1002", ["22.39.*"], True),
        ("22.36.1010", ["22.39.*"], False),
        ("22.39.1002", [">=22.39.1002"], True),
        ("22.39.999", [">=22.39.1002"], False),
        ("28.40.1000", [">=28.39,<28.41"], True),
        ("28.41.0", [">=28.39,<28.41"], False),
        ("Cumulus Linux 5.16.0", [">=5.12"], True),
        ("SONiC.202405.1033627-fecd4ec81", ["re:SONiC\\.2024\\d\\d\\..*"], True),
        ("4.32.2F", ["4.31.1F", "4.32.2F"], True),
        ("535.54.03", ["!=535.54.03"], False),
    ],
)
def test_version_patterns(version: str, patterns: list[str], ok: bool) -> None:
    assert all(pattern_problem(p) is None for p in patterns)
    assert allowed(version, patterns) is ok


def test_version_order_and_bad_patterns() -> None:
    assert version_key("28.39.1002") > version_key("28.9.9999")
    assert version_key("4.32.2F") > version_key("4.32.2")
    assert pattern_problem(">=") is not None and pattern_problem("re:(") is not None and pattern_problem("") is not None
