"""Files read in part: a bad row of a twin switch's databases is an INPUT-PARTIAL, the rest of the switch is checked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.problems import MAX_PARTIAL, Problems
from unifab.errors import ParseProblem
from unifab.model import Fabric, Severity
from unifab.sources import as_source_path

LEAF = "leaf-su1-r2"
CONFIG_DB = f"switches/{LEAF}/sonic/config_db.json"
APPL_DB = f"switches/{LEAF}/sonic/appl_db.json"


@pytest.fixture(scope="module")
def clean_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A twin without injected faults: its files read without a single input finding."""
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("twin") / "bundle"
    generate(out, gpus=128, seed=5, scenarios=())
    return out


@pytest.fixture(scope="module")
def whole(clean_twin: Path) -> Fabric:
    fabric = load_bundle(clean_twin)
    assert fabric.input_findings == []
    return fabric


@pytest.fixture
def bundle(clean_twin: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(clean_twin, copy)
    return copy


def _edit(path: Path) -> tuple[dict[str, Any], Path]:
    return json.loads(path.read_text()), path


def _partials(fabric: Fabric) -> list[Any]:
    return [f for f in fabric.input_findings if f.check == "INPUT-PARTIAL"]


def test_a_dangling_scheduler_costs_one_port_not_the_switch(bundle: Path, whole: Fabric) -> None:
    doc, path = _edit(bundle / CONFIG_DB)
    port = next(k.partition("|")[0] for k, v in doc["QUEUE"].items() if v.get("scheduler") and k.endswith("|3"))
    doc["QUEUE"][f"{port}|3"]["scheduler"] = "ROCE_DWRR_TYPO"
    path.write_text(json.dumps(doc))

    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.severity is Severity.WARNING
    assert finding.subject == {
        "kind": "file",
        "path": CONFIG_DB,
        "key": f"QUEUE|{port}|3",
        "skipped": f"the QoS of {port}",
        "device": LEAF,
    }
    assert finding.message.startswith(f"{CONFIG_DB} [QUEUE|{port}|3]: expected scheduler 'ROCE_DWRR_TYPO'")
    assert "checks skip what was not read" in finding.message and finding.evidence["not_checked"]
    switch, before = fabric.switches[LEAF], whole.switches[LEAF]
    assert set(switch.ports) == set(before.ports)
    assert switch.ports[port].qos is None and switch.ports[port].mtu == before.ports[port].mtu
    assert {n: p for n, p in switch.ports.items() if n != port} == {n: p for n, p in before.ports.items() if n != port}
    assert fabric.switches.keys() == whole.switches.keys()
    # the checks run on what was read, and none judges the port whose QoS is unknown
    findings = run_checks(fabric)
    assert not [f for f in findings if f"port:{LEAF}:{port}" in f.entities and f.check.startswith("QOS-")]


def test_a_flood_of_problems_is_capped_per_file(bundle: Path, whole: Fabric) -> None:
    doc, path = _edit(bundle / CONFIG_DB)
    rows = [k for k in doc["QUEUE"] if k.endswith("|3")]
    assert len(rows) > MAX_PARTIAL
    for key in rows:
        doc["QUEUE"][key]["scheduler"] = "MISSING"
    path.write_text(json.dumps(doc))
    partials = _partials(load_bundle(bundle))
    assert len(partials) == MAX_PARTIAL + 1
    summary = partials[-1]
    assert summary.evidence["more"] == len(rows) - MAX_PARTIAL and f"{len(rows) - MAX_PARTIAL} more" in summary.message
    assert len({f.key for f in partials}) == len(partials)  # every finding has its own identity


def test_one_bad_lldp_entry_costs_one_neighbour(bundle: Path, whole: Fabric) -> None:
    doc, path = _edit(bundle / APPL_DB)
    key = sorted(doc)[0]
    doc[key]["lldp_rem_port_id_subtype"] = "ifname"
    path.write_text(json.dumps(doc))
    fabric = load_bundle(bundle)
    (finding,) = _partials(fabric)
    assert (finding.subject["path"], finding.subject["key"]) == (APPL_DB, key)
    assert "lldp_rem_port_id_subtype" in finding.message and "topology" in finding.message

    def lldp(f: Fabric) -> set[str]:
        return {lk.id for lk in f.links if "lldp" in lk.sources and LEAF in (lk.a.node, lk.b.node)}

    lost = lldp(whole) - lldp(fabric)
    assert len(lost) <= 1 and len(lldp(fabric)) == len(lldp(whole)) - len(lost) > 0


def test_a_file_with_nothing_usable_is_still_unreadable(bundle: Path, whole: Fabric) -> None:
    (bundle / CONFIG_DB).write_text('{"PORT": ["Ethernet0"], "QUEUE": "none"}')
    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-UNREADABLE" and finding.subject["path"] == CONFIG_DB
    assert LEAF not in fabric.switches


def test_partial_names_file_line_key_and_what_was_skipped(tmp_path: Path) -> None:
    (tmp_path / "hosts").mkdir()
    root = as_source_path(tmp_path)
    problems = Problems(root)
    problem = ParseProblem("x.txt", "a number", "row 4", line=4)
    problems.partial(root / "hosts" / "x.txt", problem, device="gpu1")
    (finding,) = problems.findings
    assert finding.message == "hosts/x.txt:4: expected a number; skipped row 4"
    assert finding.subject == {"kind": "file", "path": "hosts/x.txt", "line": "4", "skipped": "row 4", "device": "gpu1"}
    assert finding.evidence["line"] == 4 and finding.evidence["not_checked"] is None
    problems.partials(root / "hosts" / "x.txt", [problem, problem])  # a repeat is one finding
    assert len(problems.findings) == 2
