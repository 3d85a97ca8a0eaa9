"""FLEET-DRIVER on NCCL: the release each host's ranks printed in the bundle's job logs, per run and baseline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import IntentError
from unifab.intent import parse_intent
from unifab.model import Severity
from unifab.twin.generate import generate
from unifab.twin.version_files import nccl_log

HOSTS = [f"gpu{i:03d}" for i in range(1, 9)]


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleet-nccl") / "b"
    generate(out, gpus=64, seed=4)
    return out


@pytest.fixture
def bundle(twin: Path, tmp_path: Path) -> Path:
    out = tmp_path / "b"
    shutil.copytree(twin, out)
    (out / "telemetry" / "nccl").mkdir(parents=True)
    return out


def _log(bundle: Path, name: str, text: str) -> None:
    (bundle / "telemetry" / "nccl" / name).write_text(text)


def _nccl(bundle: Path) -> list:  # type: ignore[type-arg]
    return [f for f in run_checks(load_bundle(bundle)) if f.subject.get("field") == "nccl"]


def test_one_rank_on_another_release_is_the_straggler_of_its_run(bundle: Path) -> None:
    text = nccl_log(HOSTS).replace(
        "gpu006:41085:41085 [0] NCCL INFO NCCL version 2.21.5", "gpu006:41085:41085 [0] NCCL INFO NCCL version 2.19.3"
    )
    _log(bundle, "1001.log", text)
    (f,) = _nccl(bundle)
    assert (f.check, f.severity, f.subject["device"]) == ("FLEET-DRIVER", Severity.WARNING, "gpu006")
    assert f.subject["group"] == "telemetry/nccl/1001.log" and f.entities == ("host:gpu006",)
    assert f.evidence["distribution"] == {"2.19.3": "1 host", "2.21.5": "7 hosts"}
    assert "NCCL version 2.19.3" in f.message and "7 of 8 hosts" in f.message
    assert any("NCCL 2.21.5" in c for c in f.fix[0].commands)


def test_two_jobs_on_two_releases_are_not_stragglers(bundle: Path) -> None:
    _log(bundle, "1001.log", nccl_log(HOSTS[:4]))
    _log(bundle, "1002.log", nccl_log(HOSTS[4:], release="2.23.4"))
    assert _nccl(bundle) == []
    fabric = load_bundle(bundle)
    assert fabric.hosts["gpu001"].nccl_versions == (("1001.log", "2.21.5"),)
    assert fabric.hosts["gpu008"].nccl_versions == (("1002.log", "2.23.4"),)


def test_the_baseline_judges_every_run(bundle: Path) -> None:
    _log(bundle, "1001.log", nccl_log(HOSTS[:4]))
    _log(bundle, "1002.log", nccl_log(HOSTS[4:], release="2.18.1"))
    intent = bundle / "fabric.yaml"
    intent.write_text(intent.read_text() + "fleet:\n  groups:\n    - match: {kind: host}\n      nccl: '>=2.19'\n")
    findings = _nccl(bundle)
    assert sorted(f.subject["device"] for f in findings) == HOSTS[4:]
    assert {(f.check, f.severity) for f in findings} == {("FLEET-DRIVER", Severity.ERROR)}
    assert all(f.evidence["allowed"] == [">=2.19"] and "fleet.groups[0]" in f.evidence["baseline"] for f in findings)


def test_real_lines_fqdn_hosts_and_unknown_hosts(bundle: Path) -> None:
    # launcher prefixes and a fully qualified name as real logs print them; a host the bundle lacks is ignored
    _log(
        bundle,
        "run.log",
        "1: gpu001.cluster.local:62571:62571 [1] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
        "gpu002:62574:62574 [4] NCCL INFO cudaDriverVersion 12040\n"
        "gpu002:62574:62574 [4] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
        "p5-dy-gpu-2:62571:62571 [1] NCCL INFO NCCL version 2.26.2+cuda12.2\n",
    )
    fabric = load_bundle(bundle)
    assert fabric.hosts["gpu001"].nccl_versions == (("run.log", "2.26.2"),)
    assert fabric.hosts["gpu002"].nccl_versions == (("run.log", "2.26.2"),)
    assert not [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]


def test_a_version_line_without_a_release_is_one_unreadable_finding(bundle: Path) -> None:
    _log(
        bundle,
        "bad.log",
        "gpu001:1:1 [0] NCCL INFO Bootstrap : Using bond0:10.0.0.1<0>\ngpu001:1:1 [0] NCCL INFO NCCL version x\n",
    )
    _log(bundle, "good.log", nccl_log(HOSTS[:2]))
    fabric = load_bundle(bundle)
    (problem,) = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert "telemetry/nccl/bad.log:2" in problem.message and "NCCL version <major>" in problem.message
    assert fabric.hosts["gpu001"].nccl_versions == (("good.log", "2.21.5"),)


def test_a_bad_nccl_pattern_names_its_key() -> None:
    with pytest.raises(IntentError) as err:
        parse_intent("version: 1\nfleet:\n  groups:\n    - match: {kind: host}\n      nccl: '>=x'\n")
    assert err.value.problems[0].startswith("fabric.yaml:5: fleet.groups[0].nccl:")
