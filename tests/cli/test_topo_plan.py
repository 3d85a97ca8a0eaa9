"""``unifab topo plan``: template, NetBox over a real local server, ibnetdiscover, PTM dot; exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from fake_netbox import TOKEN, recorded, serve
from typer.testing import CliRunner

from unifab.cli.topo import topo_app
from unifab.parse.plan import cabling
from unifab.twin import rail_template

runner = CliRunner()
app = typer.Typer()
app.add_typer(topo_app, name="topo")


def test_help_has_examples() -> None:
    result = runner.invoke(app, ["topo", "plan", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "Example: unifab topo plan --gpus 256" in result.output
    assert "--from-netbox" in result.output


def test_template_to_a_directory(tmp_path: Path) -> None:
    (tmp_path / "plan").mkdir()
    result = runner.invoke(
        app,
        [
            "topo",
            "plan",
            "--gpus",
            "256",
            "--su-size",
            "16",
            "--spines",
            "4",
            "--out",
            str(tmp_path / "plan"),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == {
        "out": str(tmp_path / "plan" / "cabling.csv"),
        "cables": 512,
        "hosts": 32,
        "scalable_units": 2,
        "leaves": 16,
        "spines": 4,
        "uplinks_per_leaf": 16,
    }
    written = cabling.parse((tmp_path / "plan" / "cabling.csv").read_text())
    assert written == rail_template.plan(rail_template.shape(256, 8, 16, 4))


def test_template_to_stdout_and_validation() -> None:
    result = runner.invoke(app, ["topo", "plan", "--gpus", "8"])
    assert result.exit_code == 0
    assert result.output.splitlines()[:2] == [
        "a_node,a_port,z_node,z_port,cable_m",
        "gpu001,eth0,leaf-su1-r0,Ethernet0,3",
    ]
    bad = runner.invoke(app, ["topo", "plan", "--gpus", "12"])
    assert bad.exit_code == 2
    assert "--gpus must be a positive multiple of 8" in bad.output
    both = runner.invoke(app, ["topo", "plan", "--gpus", "8", "--from-dot", "x.dot"])
    assert both.exit_code == 2 and "exactly one source" in both.output


def test_from_netbox_paginated(tmp_path: Path) -> None:
    with serve(recorded("pynetbox_cables.json")) as (url, handler):
        result = runner.invoke(
            app,
            ["topo", "plan", "--from-netbox", url, "--page-size", "2", "--out", str(tmp_path / "c.csv")],
            env={"UNIFAB_NETBOX_TOKEN": TOKEN, "COLUMNS": "200"},
        )
    assert result.exit_code == 0, result.output
    assert "wrote 3 planned cables" in result.output and "pages: 2" in result.output
    assert len(handler.requests) == 2
    assert (tmp_path / "c.csv").read_text().splitlines()[1] == "tst1-test1,Console,tst1-test2,Port 10,"


def test_from_netbox_refused_or_without_token(tmp_path: Path) -> None:
    with serve(recorded("pynetbox_cables.json")) as (url, _):
        refused = runner.invoke(app, ["topo", "plan", "--from-netbox", url, "--token", "nope"], env={"COLUMNS": "300"})
    assert refused.exit_code == 2
    assert "HTTP 403 Forbidden: Invalid token" in refused.output
    assert "Traceback" not in refused.output
    missing = runner.invoke(
        app, ["topo", "plan", "--from-netbox", "http://127.0.0.1:9"], env={"UNIFAB_NETBOX_TOKEN": ""}
    )
    assert missing.exit_code == 2 and "needs an API token" in missing.output


def test_from_ibnetdiscover_and_dot(samples: Path, tmp_path: Path) -> None:
    clean = samples / "ib" / "ibnetdiscover_sim_rail_clean.txt"
    result = runner.invoke(app, ["topo", "plan", "--from-ibnetdiscover", str(clean)])
    assert result.exit_code == 0
    rows = result.output.splitlines()
    assert "dgx-004,mlx5_2,ib-leaf-r2,4," in rows and len(rows) == 1 + 32 + 32
    dot = tmp_path / "t.dot"
    dot.write_text('graph G { "s1":"swp1" -- "l1":"swp49" }')
    assert runner.invoke(app, ["topo", "plan", "--from-dot", str(dot)]).output.splitlines()[1] == "s1,swp1,l1,swp49,"
    dot.write_text('graph G { "s1":"swp1" -- "l1" }')
    broken = runner.invoke(app, ["topo", "plan", "--from-dot", str(dot)], env={"COLUMNS": "300"})
    assert broken.exit_code == 2 and f"{dot}:1:" in broken.output
