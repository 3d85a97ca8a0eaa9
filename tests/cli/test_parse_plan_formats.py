"""``unifab parse`` reads the planned-topology formats: PTM topology.dot, ptmctl tables, NetBox cables JSON."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from unifab.cli import app

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "collect" / "data" / "netbox"


def test_parse_topology_dot_and_ptmctl(samples: Path, tmp_path: Path) -> None:
    text = (samples / "vendor-docs" / "ptmctl_d_and_topology_dot.txt").read_text()
    dot, tables = tmp_path / "topology.dot", tmp_path / "ptmctl.txt"
    dot.write_text(text[: text.index("\n}\n") + 3])
    tables.write_text(text[text.index("cumulus@switch") :])
    result = runner.invoke(app, ["parse", "topology-dot", str(dot)])
    assert result.exit_code == 0, result.output
    assert [c["z_port"] for c in json.loads(result.stdout)["cables"]] == ["swp20", "swp22"]
    result = runner.invoke(app, ["parse", "ptmctl", str(tables)])
    assert result.exit_code == 0, result.output
    assert [t["command"] for t in json.loads(result.stdout)] == ["ptmctl", "ptmctl -d", "ptmctl -l"]
    wrong = runner.invoke(app, ["parse", "topology-dot", str(tables)], env={"COLUMNS": "200"})
    # the transcript's prompt line is a pasted prompt, left out: the first table line is what is not DOT
    assert wrong.exit_code == 2 and "ptmctl.txt:3: unexpected character '-' in a DOT graph" in wrong.output


def test_parse_netbox_cables() -> None:
    result = runner.invoke(app, ["parse", "netbox-cables", str(DATA / "pynetbox_cables.json")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["count"] == 3 and doc["cables"][0]["a"][0]["device"] == "tst1-test1"
