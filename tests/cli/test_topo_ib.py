"""End to end: a bundle of the faulty ibsim sample plus a plan derived from the clean one, through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from unifab.cli.topo import topo_app

runner = CliRunner()
app = typer.Typer()
app.add_typer(topo_app, name="topo")


def _lid(a: str, b: str) -> str:
    return "link:" + "--".join(sorted((a, b)))


def test_topo_diff_on_ib_bundle_yields_exactly_the_known_faults(samples: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "ib-bundle"
    (bundle / "ib").mkdir(parents=True)
    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt", bundle / "ib" / "ibnetdiscover.txt")
    plan = runner.invoke(
        app,
        [
            "topo",
            "plan",
            "--from-ibnetdiscover",
            str(samples / "ib" / "ibnetdiscover_sim_rail_clean.txt"),
            "--out",
            str(bundle / "plan" / "cabling.csv"),
        ],
    )
    assert plan.exit_code == 0, plan.output

    result = runner.invoke(app, ["topo", "diff", str(bundle), "--format", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert {(f["check"], tuple(f["entities"])) for f in doc["findings"]} == {
        ("TOPO-RAIL", (_lid("dgx-003:mlx5_5", "ib-leaf-r5:3"), _lid("dgx-003:mlx5_6", "ib-leaf-r6:3"))),
        ("TOPO-MISSING", (_lid("dgx-004:mlx5_2", "ib-leaf-r2:4"),)),
        ("TOPO-DEGRADED", (_lid("dgx-002:mlx5_1", "ib-leaf-r1:2"),)),
    }
    assert doc["summary"]["plan"] is True

    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_clean.txt", bundle / "ib" / "ibnetdiscover.txt")
    clean = runner.invoke(app, ["topo", "diff", str(bundle)])
    assert clean.exit_code == 0 and "cabling matches" in clean.output
