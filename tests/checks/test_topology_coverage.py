"""COVERAGE: one finding per planned device that was not collected, with what it leaves unchecked."""

from __future__ import annotations

import pytest
from tests.checks.test_topology import rail_fabric

from unifab.checks.context import CheckContext
from unifab.checks.registry import registry
from unifab.checks.topology_coverage import HOST_SIDE_CHECKS, SWITCH_SIDE_CHECKS, check_coverage
from unifab.model import Endpoint, Fabric, Finding, Job, Link, Severity


def _coverage(fabric: Fabric) -> list[Finding]:
    return list(check_coverage(CheckContext.build(fabric)))


def _drop(fabric: Fabric, switch: str, lldp: bool = True) -> Fabric:
    """``switch`` not collected; without ``lldp`` its cables are planned only (the hosts' LLDP saw nothing)."""
    del fabric.switches[switch]
    if not lldp:
        fabric.links = [
            lk if switch not in (lk.a.node, lk.b.node) else Link(lk.a, lk.b, frozenset({"plan"})) for lk in fabric.links
        ]
    return fabric


def _uplink(fabric: Fabric, leaf: str, spine: str, port: int) -> None:
    end = Endpoint(leaf, f"Ethernet{256 + port}")
    fabric.links.append(Link(end, Endpoint(spine, f"Ethernet{port}"), frozenset({"plan"})))


def test_every_collected_planned_device_is_silent() -> None:
    assert _coverage(rail_fabric()) == []
    assert _coverage(rail_fabric(plan=False)) == []


def test_uncollected_leaf_counts_its_links_and_the_checks_it_leaves_out() -> None:
    [f] = _coverage(_drop(rail_fabric(), "leaf-r2"))
    assert (f.check, f.severity, f.entities) == ("COVERAGE", Severity.INFO, ("switch:leaf-r2",))
    assert f.subject == {"kind": "switch", "id": "switch:leaf-r2"}
    assert f.message.startswith("leaf-r2 is planned but was not collected: 4 planned links unchecked at its end")
    assert "(4 confirmed by the other end's LLDP, 0 seen by neither end)" in f.message
    assert f.evidence["b"]["checks_not_run"] == list(SWITCH_SIDE_CHECKS)
    assert f.evidence["b"]["hosts_behind"] == 4 and f.evidence["b"]["jobs"] == []
    [fix] = f.fix
    assert fix.device == "leaf-r2" and fix.commands[0].startswith("# leaf-r2 is in the plan but was not collected")


def test_links_seen_by_neither_end_are_listed() -> None:
    [f] = _coverage(_drop(rail_fabric(hosts=2), "leaf-r1", lldp=False))
    assert f.evidence["b"]["confirmed_by_other_end"] == 0
    assert len(f.evidence["b"]["seen_by_neither_end"]) == 2 and "none confirmed by LLDP" in f.message


def test_a_job_behind_the_links_makes_it_a_warning() -> None:
    fabric = _drop(rail_fabric(), "leaf-r2")
    fabric.jobs["job:slurm:9"] = Job("job:slurm:9", "train", ("h1", "h3"))
    fabric.jobs["job:slurm:8"] = Job("job:slurm:8", "other", ("h7",))  # not behind leaf-r2
    [f] = _coverage(fabric)
    assert f.severity == Severity.WARNING
    assert f.evidence["b"]["jobs"] == ["job:slurm:9"] and f.impact["jobs"] == ["job:slurm:9"]
    assert "jobs behind them: job:slurm:9" in f.message


def test_uncollected_spine_reaches_jobs_through_its_leaves() -> None:
    fabric = rail_fabric()
    _uplink(fabric, "leaf-r0", "spine1", 0)
    _uplink(fabric, "leaf-r1", "spine1", 1)
    fabric.jobs["job:slurm:9"] = Job("job:slurm:9", "train", ("h0",))
    [f] = _coverage(fabric)
    assert f.subject == {"kind": "switch", "id": "switch:spine1"}
    assert (f.severity, f.evidence["b"]["hosts_behind"], f.evidence["b"]["planned_links"]) == (Severity.WARNING, 4, 2)


@pytest.mark.parametrize("in_job", [True, False])
def test_uncollected_host_is_a_host(in_job: bool) -> None:
    fabric = rail_fabric()
    for r in range(2):
        fabric.links.append(Link(Endpoint("h9", f"eth{r}"), Endpoint(f"leaf-r{r}", "Ethernet72"), frozenset({"plan"})))
    if in_job:
        fabric.jobs["job:slurm:1"] = Job("job:slurm:1", "train", ("h0", "h9"))
    [f] = _coverage(fabric)
    assert f.subject == {"kind": "host", "id": "host:h9"} and f.entities == ("host:h9",)
    assert f.evidence["b"]["checks_not_run"] == list(HOST_SIDE_CHECKS)
    assert f.severity == (Severity.WARNING if in_job else Severity.INFO)
    assert "unifab agent collect" in f.fix[0].commands[0]


def test_an_unreadable_device_names_its_files() -> None:
    fabric = _drop(rail_fabric(), "leaf-r2")
    fabric.input_findings.append(
        Finding(
            "INPUT-UNREADABLE",
            Severity.ERROR,
            {"kind": "file", "path": "switches/leaf-r2/sonic/config_db.json", "device": "leaf-r2"},
            "not JSON",
        )
    )
    [f] = _coverage(fabric)
    assert f.evidence["a"]["input_files"] == ["switches/leaf-r2/sonic/config_db.json"]


def test_a_hostile_planned_name_never_reaches_a_fix_line_raw() -> None:
    fabric = rail_fabric()
    fabric.links.append(Link(Endpoint("h0", "eth0"), Endpoint("leaf\nreboot", "x"), frozenset({"plan"})))
    [f] = _coverage(fabric)
    [line] = f.fix[0].commands
    assert line.startswith("# 'leaf\\nreboot'") and "\n" not in line


def test_the_checks_it_names_exist() -> None:
    ids = set(registry())
    assert set(SWITCH_SIDE_CHECKS) <= ids and set(HOST_SIDE_CHECKS) <= ids
    assert "COVERAGE" in ids and "TOPO-UNVERIFIED" in ids
