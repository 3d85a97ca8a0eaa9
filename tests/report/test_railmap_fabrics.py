"""The rail map per fabric kind: a mixed twin (RoCE backend + InfiniBand storage) draws an Ethernet (RoCE) section
and an InfiniBand section, each with its own leaves, spines and uplink counts; an IB-only twin draws the IB grid.

The expected leaves, spines and uplinks come from the twin's own plan (``plan/cabling.csv``; the IB switches are
the ones of ``plan/ibnetdiscover.txt``), not from numbers written here."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rail_plan import plan_of  # tests/support

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.report import railmap
from unifab.twin.generate import generate

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("railmap-mixed") / "b"
    generate(out, gpus=128, seed=2, su_hosts=8, fabric="mixed")
    return out


@pytest.fixture(scope="module")
def ib_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("railmap-ib") / "b"
    generate(out, gpus=128, seed=2, su_hosts=8, fabric="ib")
    return out


def _grid(bundle: Path) -> railmap.RailGrid:
    fabric = load_bundle(bundle)
    return railmap.rail_grid(fabric, run_checks(fabric))


def test_a_mixed_fabric_has_a_section_per_kind_as_planned(mixed: Path) -> None:
    plan = plan_of(mixed)
    assert set(plan.leaves) == {"roce", "ib"}  # the twin is mixed
    grid = _grid(mixed)
    assert grid.fabrics() == ["roce", "ib"]
    for kind in ("roce", "ib"):
        section = grid.section(kind)
        assert set(section.leaves) == plan.leaves[kind]
        assert set(section.spines) == plan.spines[kind]
        assert {c.fabric for c in section.leaves.values()} | {s.fabric for s in section.spines.values()} == {kind}
        assert {n: len(c.uplinks) for n, c in section.leaves.items()} == dict(plan.uplinks[kind])
        assert {n: c.uplinks_up for n, c in section.leaves.items()} == dict(plan.uplinks[kind])  # a clean twin
        assert section.units == sorted({c.su for c in section.leaves.values()})
    # The IB silo's rails are its own (the storage HCA's), not the RoCE rails.
    assert set(grid.section("ib").rails).isdisjoint(grid.section("roce").rails)

    doc = railmap.grid_json(grid, "t")
    assert doc["fabrics"] == ["roce", "ib"]
    assert doc["summary"]["leaves"] == sum(len(v) for v in plan.leaves.values())  # the top level is the whole map
    for sec in doc["sections"]:
        kind = sec["fabric"]
        assert sec["label"] == railmap.FABRIC_LABELS[kind]
        cells = [c for su in sec["scalable_units"] for c in su["leaves"]]
        assert {c["leaf"] for c in cells} == plan.leaves[kind] and {c["fabric"] for c in cells} == {kind}
        assert sec["summary"]["leaves"] == len(plan.leaves[kind])
        assert sec["summary"]["spines"] == len(plan.spines[kind]) == len(sec["spines"])
        assert sec["summary"]["uplinks"] == sec["summary"]["uplinks_up"] == sum(plan.uplinks[kind].values())


def test_the_svg_draws_both_sections_one_under_the_other(mixed: Path) -> None:
    plan = plan_of(mixed)
    root = ET.fromstring(railmap.render_svg(_grid(mixed), "mixed"))
    headings = {t.get("data-fabric"): t for t in root.iter(f"{SVG}text") if t.get("class") == "section"}
    assert list(headings) == ["roce", "ib"]
    ib_top = float(headings["ib"].get("y") or 0)
    assert str(headings["roce"].text).startswith(f"Ethernet (RoCE): {len(plan.leaves['roce'])} leaves")
    total = sum(plan.uplinks["ib"].values())
    assert str(headings["ib"].text).startswith(f"InfiniBand: {len(plan.leaves['ib'])} lea")
    assert str(headings["ib"].text).endswith(f"{total}/{total} uplinks up")
    cells: dict[str, set[str]] = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "cell":
            frame = g.find(f"{SVG}rect")
            assert frame is not None
            kind = "ib" if float(frame.get("y") or 0) > ib_top else "roce"
            cells.setdefault(kind, set()).add(str(g.get("data-leaf")))
    assert cells == plan.leaves
    spines = {str(g.get("data-spine")): g.get("data-fabric") for g in root.iter(f"{SVG}g") if g.get("class") == "spine"}
    assert spines == {s: kind for kind, names in plan.spines.items() for s in names}


def test_an_ib_only_fabric_is_the_ib_grid(ib_only: Path) -> None:
    plan = plan_of(ib_only)
    assert set(plan.leaves) == {"ib"}
    grid = _grid(ib_only)
    assert grid.fabrics() == ["ib"] and set(grid.leaves) == plan.leaves["ib"]
    doc = railmap.grid_json(grid, "t")
    (sec,) = doc["sections"]
    assert (sec["fabric"], sec["label"]) == ("ib", "InfiniBand")
    assert sec["scalable_units"] == doc["scalable_units"] and sec["summary"] == doc["summary"]
    assert {c["leaf"] for su in sec["scalable_units"] for c in su["leaves"]} == plan.leaves["ib"]
    # One fabric: drawn as one grid, without section headings.
    root = ET.fromstring(railmap.render_svg(grid, "ib"))
    assert not [t for t in root.iter(f"{SVG}text") if t.get("class") == "section"]
    assert {g.get("data-leaf") for g in root.iter(f"{SVG}g") if g.get("class") == "cell"} == plan.leaves["ib"]


def test_a_finding_counts_in_the_section_it_touches(mixed: Path) -> None:
    from unifab.model import Finding, Severity

    fabric = load_bundle(mixed)
    ib_leaf = sorted(plan_of(mixed).leaves["ib"])[0]
    finding = Finding("TOPO-MISSING", Severity.ERROR, {}, "x", entities=(f"switch:{ib_leaf}",))
    grid = railmap.rail_grid(fabric, [finding])
    assert grid.section("ib").by_severity["error"] == 1 and grid.section("roce").by_severity["error"] == 0
    assert grid.by_severity["error"] == 1 and grid.leaves[ib_leaf].severity == "error"
