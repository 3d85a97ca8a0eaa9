"""Rail map: one cell per leaf, colored by the worst finding touching it; well-formed SVG; JSON of the same grid."""

from __future__ import annotations

import json
import random
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Endpoint, Fabric, Host, Link, Switch
from unifab.report import railmap
from unifab.twin.cluster import build
from unifab.twin.generate import generate
from unifab.twin.scenarios import SCENARIOS, Picker
from unifab.twin.writer import write_bundle

if TYPE_CHECKING:
    from conftest import Chromium  # tests/report/conftest.py: the ``chromium`` fixture

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def pfc_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """128 GPUs (4 SUs of 4 hosts) with one injected PFC mismatch; returns the bundle and the faulty links."""
    out = tmp_path_factory.mktemp("railmap") / "b"
    cluster = build(128, su_hosts=4)
    truth = SCENARIOS["pfc-mismatch"](cluster, Picker(cluster, random.Random(5)))
    write_bundle(cluster, out)
    return out, [e for t in truth for e in t["entities"]]


def _grid(bundle: Path) -> tuple[railmap.RailGrid, list[str]]:
    fabric = load_bundle(bundle)
    findings = run_checks(fabric)
    return railmap.rail_grid(fabric, findings), [f.severity.value for f in findings]


def _leaf_of(link: str) -> str:
    a, b = link.removeprefix("link:").split("--")
    return next(end.split(":")[0] for end in (a, b) if end.startswith("leaf"))


def test_svg_is_xml_with_one_cell_per_leaf_and_fault_colors(pfc_bundle: tuple[Path, list[str]]) -> None:
    bundle, faulty = pfc_bundle
    grid, severities = _grid(bundle)
    root = ET.fromstring(railmap.render_svg(grid, "test"))
    assert root.tag == f"{SVG}svg"
    cells = {g.get("data-leaf"): g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"}
    assert set(cells) == {f"leaf-su{su}-r{r}" for su in range(1, 5) for r in range(8)}
    assert len(root.findall(f".//{SVG}g[@class='spine']")) == 4  # 4 uplinks per leaf reach spines 01..04
    bad_leaves = {_leaf_of(link) for link in faulty}
    assert bad_leaves and severities
    for leaf, g in cells.items():
        frame = g.find(f"{SVG}rect")
        assert frame is not None
        level = g.get("data-severity")
        if leaf in bad_leaves:
            assert level in {"critical", "error"}
            assert frame.get("stroke") == railmap.COLORS[str(level)]
            assert g.find(f"{SVG}rect[@class='links-{level}']") is not None  # the faulty host link in the bar
        else:
            assert (level, frame.get("stroke"), frame.get("fill")) == ("ok", railmap.COLORS["ok"], railmap.TINTS["ok"])
    text = "".join(root.itertext())
    assert "critical" in text and "no finding" in text  # legend
    assert "32 leaves · 4 spines" in text  # title counts


def test_json_is_the_same_grid(pfc_bundle: tuple[Path, list[str]]) -> None:
    bundle, faulty = pfc_bundle
    grid, _ = _grid(bundle)
    doc = railmap.grid_json(grid, "t")
    json.dumps(doc)
    cells = {c["leaf"]: c for su in doc["scalable_units"] for c in su["leaves"]}
    assert len(cells) == doc["summary"]["leaves"] == 32
    assert doc["rails"] == list(range(8)) and [su["su"] for su in doc["scalable_units"]] == ["su1", "su2", "su3", "su4"]
    for link in faulty:
        cell = cells[_leaf_of(link)]
        assert cell["severity"] != "ok"
        assert sum(n for k, n in cell["host_links_by_severity"].items() if k != "ok") >= 1
    assert cells["leaf-su1-r0"]["hosts"] == 4 and cells["leaf-su1-r0"]["uplinks"] == 4


def test_ib_fabric_rails_without_scalable_units(samples: Path, tmp_path: Path) -> None:
    (tmp_path / "ib").mkdir()
    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt", tmp_path / "ib" / "ibnetdiscover.txt")
    grid, _ = _grid(tmp_path)
    assert grid.units == ["fabric"] and grid.rails == list(range(8))
    assert set(grid.spines) == {f"ib-spine-{s}" for s in range(1, 5)}
    # The IB link trained at 1X (dgx-002 mlx5_1 on ib-leaf-r1) and the cross-rail swap (no plan: rail check).
    assert grid.leaves["ib-leaf-r1"].severity == "error"
    assert grid.leaves["ib-leaf-r0"].severity == "ok"


def test_findings_off_the_map_are_counted() -> None:
    from unifab.model import Fabric, Finding, Severity

    grid = railmap.rail_grid(Fabric(), [Finding("HOST-ACS", Severity.WARNING, {}, "x", entities=("host:h1",))])
    assert (grid.off_map, grid.by_severity["warning"]) == (1, 1)
    assert ET.fromstring(railmap.render_svg(grid, "empty")).tag == f"{SVG}svg"


def test_chromium_renders_it(pfc_bundle: tuple[Path, list[str]], tmp_path: Path, chromium: Chromium) -> None:
    """Headless Chromium draws the SVG (a PNG of the page size); skipped where Chromium is not installed."""
    grid, _ = _grid(pfc_bundle[0])
    svg = tmp_path / "rails.svg"
    svg.write_text(railmap.render_svg(grid, "rails"))
    png = tmp_path / "rails.png"
    chromium.screenshot(svg, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def uplink_down(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """The ``uplink-down`` twin (64 GPUs): the bundle, the leaf that lost uplinks and its dark ports."""
    out = tmp_path_factory.mktemp("uplink-down") / "b"
    generate(out, gpus=64, seed=0, scenarios=("uplink-down",))
    truth = orjson.loads((out / "truth.json").read_bytes())["misconfigurations"]
    (leaf,) = {t["device"] for t in truth if t["check"] == "TOPO-UPLINKS"}
    gone = [e for t in truth if t["check"] == "TOPO-MISSING" for e in t["entities"]]
    ports = sorted(
        end.split(":")[1] for link in gone for end in link.removeprefix("link:").split("--") if end.startswith(leaf)
    )
    return out, leaf, ports


def _cell_labels(svg: str) -> dict[str, tuple[str, str | None]]:
    """Leaf -> (the text drawn under its name, that line's fill)."""
    out: dict[str, tuple[str, str | None]] = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") == "cell":
            line = g.findall(f"{SVG}text")[1]
            out[str(g.get("data-leaf"))] = ("".join(line.itertext()), line.get("fill"))
    return out


def test_leaf_label_counts_the_uplinks_that_are_up(uplink_down: tuple[Path, str, list[str]]) -> None:
    """A leaf that lost a quarter of its uplinks reads "6/8 uplinks up", not the 8 the plan gives it."""
    bundle, leaf, dark = uplink_down
    grid, _ = _grid(bundle)
    planned = len(grid.leaves[leaf].uplinks)
    assert planned == 8 and len(dark) == 2
    svg = railmap.render_svg(grid, "t")
    labels = _cell_labels(svg)
    assert labels[leaf] == (f"{planned - len(dark)}/{planned} uplinks up", railmap.COLORS["error"])
    root = ET.fromstring(svg)
    assert {t.text for t in root.iter(f"{SVG}text") if t.get("class") == "hosts"} == {"8 hosts"}
    spine_labels = sorted(str(t.text) for t in root.iter(f"{SVG}text") if t.get("class") == "uplinks-up")
    spine_labels = [label for label in spine_labels if "links up" in label and "uplinks" not in label]
    assert spine_labels == ["7/8 links up"] * 2 + ["8/8 links up"] * 6
    assert {name: label for name, label in labels.items() if name != leaf} == {
        name: ("8/8 uplinks up", "#333") for name in labels if name != leaf
    }
    tooltip = railmap._tooltip(grid.leaves[leaf])
    assert f"6 of 8 uplinks up (not seen by LLDP: {', '.join(dark)})" in tooltip
    cells = {c["leaf"]: c for su in railmap.grid_json(grid, "t")["scalable_units"] for c in su["leaves"]}
    assert (cells[leaf]["uplinks"], cells[leaf]["uplinks_up"], cells[leaf]["uplinks_down"]) == (8, 6, dark)
    assert {c["uplinks_up"] for name, c in cells.items() if name != leaf} == {8}
    # The spines at the other end of the dark cables lost one leaf link each.
    spines = {s["spine"]: s["uplinks_up"] for s in railmap.grid_json(grid, "t")["spines"]}
    assert sorted(spines.values()).count(7) == 2 and set(spines.values()) == {7, 8}


def test_without_lldp_nothing_is_claimed_up() -> None:
    """A plan-only bundle (no LLDP collected) gives the uplinks it has, not a count of them up."""
    fabric = Fabric(
        hosts={"gpu001": Host("gpu001", {})},
        switches={n: Switch(n, "sonic", "x", {}) for n in ("leaf-su1-r0", "spine01", "spine02")},
        links=[
            Link(Endpoint("gpu001", "eth0"), Endpoint("leaf-su1-r0", "Ethernet0"), frozenset({"plan"})),
            Link(Endpoint("leaf-su1-r0", "Ethernet8"), Endpoint("spine01", "Ethernet0"), frozenset({"plan"})),
            Link(Endpoint("leaf-su1-r0", "Ethernet16"), Endpoint("spine02", "Ethernet0"), frozenset({"plan"})),
        ],
    )
    grid = railmap.rail_grid(fabric, [])
    cell = grid.leaves["leaf-su1-r0"]
    assert (cell.uplinks_up, cell.uplinks_down()) == (None, [])
    assert _cell_labels(railmap.render_svg(grid, "t"))["leaf-su1-r0"] == ("2 uplinks (no LLDP)", "#333")
    assert "LLDP not collected" in railmap._tooltip(cell)
    assert [s.uplinks_up for s in grid.spines.values()] == [None, None]
    # LLDP seen on the host link only: the leaf reports LLDP, so its unseen planned uplinks are down.
    fabric.links[0] = Link(fabric.links[0].a, fabric.links[0].b, frozenset({"plan", "lldp"}))
    grid = railmap.rail_grid(fabric, [])
    assert _cell_labels(railmap.render_svg(grid, "t"))["leaf-su1-r0"] == (
        "0/2 uplinks up",
        railmap.COLORS["error"],
    )
    assert [s.uplinks_up for s in grid.spines.values()] == [0, 0]  # dark on the spines' side too


@pytest.mark.slow
def test_100k_gpus_is_aggregated_per_leaf() -> None:
    """12,500 hosts: ~3,100 cells and a bounded number of SVG elements, not one shape per cable."""
    from unifab.model import Endpoint, Fabric, Finding, Host, Link, Severity, Switch
    from unifab.twin import rail_template

    cables = rail_template.plan(rail_template.shape(100_000))
    fabric = Fabric()
    names = {c.a_node for c in cables} | {c.z_node for c in cables}
    fabric.hosts = {n: Host(n, {}) for n in names if n.startswith("gpu")}
    fabric.switches = {n: Switch(n, "sonic", "x", {}) for n in names if not n.startswith("gpu")}
    seen = frozenset({"plan", "lldp"})
    fabric.links = [Link(Endpoint(c.a_node, c.a_port), Endpoint(c.z_node, c.z_port), seen) for c in cables]
    fault = next(lk for lk in fabric.links if lk.b.node == "leaf-su200-r3")
    grid = railmap.rail_grid(fabric, [Finding("TOPO-MISSING", Severity.ERROR, {}, "x", entities=(fault.id,))])
    root = ET.fromstring(railmap.render_svg(grid, "100k"))
    assert len(grid.leaves) == 391 * 8
    assert sum(1 for _ in root.iter()) < 30_000
    cells = {g.get("data-leaf"): g.get("data-severity") for g in root.iter(f"{SVG}g") if g.get("class") == "cell"}
    assert len(cells) == 3128 and cells["leaf-su200-r3"] == "error"
    assert sum(level != "ok" for level in cells.values()) == 1
