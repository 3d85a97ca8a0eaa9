"""Ground truth: on twin scenarios, ``check`` finds every injected misconfiguration and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.twin.twin_skips import expected_skips

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.twin.cluster import build
from unifab.twin.generate import generate
from unifab.twin.nic_variants import apply_nic_variants
from unifab.twin.scenario_needs import Kinds
from unifab.twin.scenarios import NEEDS, SCENARIOS


def _expected(truth: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(m["check"], entity) for m in truth["misconfigurations"] for entity in m["entities"]}


@pytest.mark.parametrize(
    ("gpus", "seed"),
    [
        (64, 1),
        (256, 2),
        pytest.param(512, 7, marks=pytest.mark.slow),
        pytest.param(1024, 11, marks=pytest.mark.slow),
        pytest.param(1024, 12, marks=pytest.mark.slow),
    ],
)
def test_every_injection_found_and_nothing_else(tmp_path: Path, gpus: int, seed: int) -> None:
    result = generate(tmp_path / "b", gpus=gpus, seed=seed, scenarios=tuple(SCENARIOS))
    truth = json.loads((tmp_path / "b" / "truth.json").read_text())
    assert truth == result.truth
    skips = expected_skips(gpus)
    assert {m["scenario"] for m in truth["misconfigurations"]} == set(SCENARIOS) - {s["scenario"] for s in skips}
    assert truth["skipped"] == skips
    findings = run_checks(load_bundle(tmp_path / "b"))
    found = {(f.check, entity) for f in findings for entity in f.entities}
    assert found == _expected(truth)
    # a leaf taken out of the bundle never makes its NICs "non-rail" (the twin's hosts have no frontend NIC)
    assert not [f for f in findings if f.check == "TOPO-NCCL-HCA" and f.evidence["b"]["non_rail_included"]]
    assert {"COVERAGE", "TOPO-UNVERIFIED"} <= {m["check"] for m in truth["misconfigurations"]}


def _sides(side: str) -> tuple[str, ...]:
    """Sides whose devices a fix names; a host-side fault (GPU placement) is fixed on the host, like a NIC's."""
    return ("nic", "switch") if side == "both" else ("nic",) if side == "host" else (side,)


def _side(device: str) -> str:
    if device.startswith("job:"):
        return "job"
    return "switch" if device.startswith(("leaf", "spine")) else "nic"


# twins a scenario alone runs on: the default one, else the first whose devices meet the scenario's needs
TWINS = ({}, {"nic_vendor": "bnxt"}, {"nic_driver": "upstream"}, {"switch_os": "eos"}, {"switch_os": "nvue"})


def _twin_for(scenario: str) -> dict[str, str]:
    needs = NEEDS.get(scenario)
    for kwargs in TWINS:
        cluster = build(256, switch_os=kwargs.get("switch_os", "sonic"))
        apply_nic_variants(cluster, kwargs.get("nic_vendor", "mlx5"), kwargs.get("nic_driver", "ofed"))
        if needs is None or needs.met(Kinds.of(cluster)):
            return kwargs
    raise AssertionError(f"no twin has the devices {scenario!r} needs")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_each_scenario_alone(tmp_path: Path, scenario: str) -> None:
    result = generate(tmp_path / "b", gpus=256, seed=5, scenarios=(scenario,), **_twin_for(scenario))  # type: ignore[arg-type]
    assert result.truth["misconfigurations"] and result.truth["skipped"] == []
    findings = run_checks(load_bundle(tmp_path / "b"))
    assert {(f.check, e) for f in findings for e in f.entities} == _expected(result.truth)
    # every finding's fix targets the side the scenario broke
    sides = {s for m in result.truth["misconfigurations"] for s in _sides(m["side"])}
    by_entity = {(f.check, f.entities): f for f in findings}
    for m in result.truth["misconfigurations"]:
        if "device" in m:  # the exact switch that was broken is the one the fix names
            assert {x.device for x in by_entity[(m["check"], tuple(m["entities"]))].fix} == {m["device"]}
    fixed = {_side(x.device) for f in findings for x in f.fix}
    assert fixed == sides


def test_small_cluster_takes_one_scenario_but_not_all(tmp_path: Path) -> None:
    result = generate(tmp_path / "one", gpus=8, seed=0, scenarios=("pfc-mismatch",))
    assert len(result.truth["misconfigurations"]) == 1
    with pytest.raises(UsageError, match="too small"):
        generate(tmp_path / "all", gpus=8, seed=0, scenarios=tuple(SCENARIOS))
    assert not (tmp_path / "all").exists()


def test_clean_twin_is_clean(tmp_path: Path) -> None:
    generate(tmp_path / "b", gpus=256, seed=0)
    assert run_checks(load_bundle(tmp_path / "b")) == []


def test_same_seed_same_bundle(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", gpus=64, seed=9, scenarios=tuple(SCENARIOS))
    b = generate(tmp_path / "b", gpus=64, seed=9, scenarios=tuple(SCENARIOS))
    assert a.truth == b.truth
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files_a)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gpus": 4}, "positive multiple of 8"),
        ({"gpus": 100}, "positive multiple of 8"),
        ({"gpus": 64, "scenarios": ("nope",)}, "unknown scenario .nope."),
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(UsageError, match=message):
        generate(tmp_path / "b", **kwargs)
    assert not (tmp_path / "b").exists()


def test_refuses_non_empty_output(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an empty directory"):
        generate(tmp_path / "b", gpus=64)
    assert (tmp_path / "b" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(("switch_os", "seed"), [("eos", 1), ("nvue", 2), ("mixed", 3)])
def test_every_injection_found_on_other_switch_oses(tmp_path: Path, switch_os: str, seed: int) -> None:
    """EOS and NVUE switches: same recall and precision; scenarios an OS cannot express are skipped, and said so."""
    result = generate(tmp_path / "b", gpus=256, seed=seed, scenarios=tuple(SCENARIOS), switch_os=switch_os)
    skipped = {s["scenario"] for s in result.truth["skipped"]}
    injected = {m["scenario"] for m in result.truth["misconfigurations"]}
    assert injected | skipped == set(SCENARIOS) and not injected & skipped
    assert result.truth["skipped"] == expected_skips(256, switch_os)
    findings = run_checks(load_bundle(tmp_path / "b"))
    assert {(f.check, e) for f in findings for e in f.entities} == _expected(result.truth)
    fixes = [c for f in findings for x in f.fix if x.device.startswith(("leaf", "spine")) for c in x.commands]
    if switch_os == "eos":
        assert fixes and not any(c.startswith("sonic-db-cli") or c.startswith("nv ") for c in fixes)
    if switch_os == "nvue":
        assert fixes and all(c.startswith(("nv ", "# ")) for c in fixes)  # commands and comments
