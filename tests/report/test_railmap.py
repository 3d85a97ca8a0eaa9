"""Rail map: one cell per leaf, colored by the worst finding touching it; well-formed SVG; JSON of the same grid."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.report import railmap
from unifab.twin.cluster import build
from unifab.twin.scenarios import SCENARIOS, Picker
from unifab.twin.writer import write_bundle

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


def test_chromium_renders_it(pfc_bundle: tuple[Path, list[str]], tmp_path: Path) -> None:
    """Headless Chromium draws the SVG (a PNG of the page size); skipped where Chromium is not installed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail("chromium is required (UNIFAB_REQUIRE_SERVICES=1): apt-get install chromium")
        pytest.skip("chromium not installed")
    grid, _ = _grid(pfc_bundle[0])
    svg = tmp_path / "rails.svg"
    svg.write_text(railmap.render_svg(grid, "rails"))
    png = tmp_path / "rails.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={png}",
            "--window-size=1200,700",
            svg.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_100k_gpus_is_aggregated_per_leaf() -> None:
    """12,500 hosts: ~3,100 cells and a bounded number of SVG elements, not one shape per cable."""
    from unifab.model import Endpoint, Fabric, Finding, Host, Link, Severity, Switch
    from unifab.parse.plan import rail_template

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
