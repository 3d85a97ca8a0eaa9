"""``unifab topo show``: the rail grid as table and JSON, the SVG written, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import typer
from typer.testing import CliRunner

from unifab.cli.topo import topo_app

runner = CliRunner()
app = typer.Typer()
app.add_typer(topo_app, name="topo")


def test_show_json_and_svg(twin_bundle: Path, tmp_path: Path) -> None:
    svg = tmp_path / "rails.svg"
    result = runner.invoke(app, ["topo", "show", str(twin_bundle), "--rail-map", str(svg), "--format", "json"])
    assert result.exit_code == 1, result.output  # the session twin carries every scenario
    doc = json.loads(result.stdout)
    assert doc["rail_map"] == str(svg)
    assert doc["summary"]["leaves"] == 8 and doc["rails"] == list(range(8))
    cells = [c for su in doc["scalable_units"] for c in su["leaves"]]
    assert any(c["severity"] != "ok" for c in cells)
    root = ET.parse(svg).getroot()
    drawn = {g.get("data-leaf"): g.get("data-severity") for g in root.iter("{http://www.w3.org/2000/svg}g")}
    assert {c["leaf"]: c["severity"] for c in cells}.items() <= drawn.items()


def test_show_table_and_exit_codes(twin_bundle: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["topo", "show", str(twin_bundle), "--fail-on", "never"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "rail 7" in result.output and "su1" in result.output and "leaves" in result.output
    assert runner.invoke(app, ["topo", "show", str(tmp_path / "nope")]).exit_code == 2
    help_text = runner.invoke(app, ["topo", "show", "--help"]).output
    assert "Example: unifab topo show" in help_text


def test_show_table_of_a_mixed_bundle_prints_one_grid_per_fabric(tmp_path: Path) -> None:
    from unifab.twin.generate import generate

    generate(tmp_path / "b", gpus=64, seed=0, fabric="mixed")
    result = runner.invoke(app, ["topo", "show", str(tmp_path / "b")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("— Ethernet (RoCE)") < out.index("— InfiniBand")
    roce, ib = out.split("— InfiniBand")
    assert "rail 7" in roce and "rail 7" not in ib  # the storage leaves are on no rail
    assert "ib-stor" not in roce
    summaries = [line for line in out.splitlines() if "flagged/total host links" in line]
    doc = json.loads(runner.invoke(app, ["topo", "show", str(tmp_path / "b"), "--format", "json"]).stdout)
    assert [s["fabric"] for s in doc["sections"]] == ["roce", "ib"]
    assert [line.split(" leaves")[0] for line in summaries] == [str(s["summary"]["leaves"]) for s in doc["sections"]]
