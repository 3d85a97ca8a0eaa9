"""Topology scenarios: the plan keeps the intent, LLDP shows the real cabling, checks find exactly the truth."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from unifab.checks import topology
from unifab.checks.context import CheckContext
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding
from unifab.twin.cluster import build
from unifab.twin.scenarios import SCENARIOS, Picker, Truth
from unifab.twin.topology_scenarios import TOPOLOGY_SCENARIOS
from unifab.twin.writer import write_bundle


def _generate(out: Path, gpus: int, seed: int, names: tuple[str, ...], switch_os: str = "sonic") -> list[Truth]:
    """Like ``twin generate``: the existing scenarios first (catalog order), then the topology ones."""
    cluster = build(gpus, switch_os=switch_os)
    pick = Picker(cluster, random.Random(seed))
    catalog = {**SCENARIOS, **TOPOLOGY_SCENARIOS}
    truth = [t for name in catalog if name in names for t in catalog[name](cluster, pick)]
    assert pick.skipped == []
    write_bundle(cluster, out)
    return truth


def _findings(out: Path) -> list[Finding]:
    fabric = load_bundle(out)
    ctx = CheckContext.build(fabric)
    topo = [f for spec in topology.CHECKS if spec.run is not None for f in spec.run(ctx)]
    return [*run_checks(fabric), *topo]


def _pairs(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.check, e) for f in findings for e in f.entities}


def _expected(truth: list[Truth]) -> set[tuple[str, str]]:
    return {(t["check"], e) for t in truth for e in t["entities"]}


@pytest.mark.parametrize("scenario", sorted(TOPOLOGY_SCENARIOS))
def test_each_scenario_alone(tmp_path: Path, scenario: str) -> None:
    truth = _generate(tmp_path / "b", 256, 5, (scenario,))
    assert truth
    findings = _findings(tmp_path / "b")
    assert _pairs(findings) == _expected(truth)
    # one finding per injected root cause, naming all its cables, fixed at the switch
    by_entities = {(f.check, f.entities): f for f in findings}
    for t in truth:
        f = by_entities[(t["check"], tuple(t["entities"]))]
        assert f.subject == t["subject"]
        assert f.fix
        assert all(x.device.startswith("leaf") for x in f.fix)


@pytest.mark.parametrize(("gpus", "seed"), [(64, 1), (256, 2), (512, 7), (1024, 11)])
def test_all_scenarios_recall_and_no_extra_findings(tmp_path: Path, gpus: int, seed: int) -> None:
    names = (*SCENARIOS, *TOPOLOGY_SCENARIOS)
    truth = _generate(tmp_path / "b", gpus, seed, names)
    assert {t["check"] for t in truth} >= {"TOPO-MISWIRED", "TOPO-MISSING", "TOPO-RAIL"}
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)


def test_plan_keeps_the_intent_and_lldp_shows_the_cabling(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 64, 3, ("miswire",))
    [t] = truth
    plan = (tmp_path / "b" / "plan" / "cabling.csv").read_text()
    fabric = load_bundle(tmp_path / "b")
    by_id = {lk.id: lk for lk in fabric.links}
    for planned in t["entities"]:
        a, b = (end.replace(":", ",") for end in planned.removeprefix("link:").split("--"))
        assert f"{a},{b}," in plan or f"{b},{a}," in plan
        assert by_id[planned].sources == frozenset({"plan"})
    discovered = [lk for lk in fabric.links if lk.sources == frozenset({"lldp"})]
    assert len(discovered) == 2


def test_clean_twin_has_no_topology_findings(tmp_path: Path) -> None:
    _generate(tmp_path / "b", 256, 0, ())
    assert _findings(tmp_path / "b") == []


@pytest.mark.parametrize(("switch_os", "seed"), [("eos", 1), ("nvue", 2), ("mixed", 3)])
def test_other_switch_oses_report_the_real_cabling(tmp_path: Path, switch_os: str, seed: int) -> None:
    truth = _generate(tmp_path / "b", 256, seed, tuple(TOPOLOGY_SCENARIOS), switch_os=switch_os)
    assert {t["check"] for t in truth} == {"TOPO-MISWIRED", "TOPO-MISSING", "TOPO-RAIL"}
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)
