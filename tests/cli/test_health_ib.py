"""``unifab health`` on a bundle whose only counters are successive ``perfquery`` rounds (ib/perfquery/<t>.txt)
of a simulated fabric (real infiniband-diags output, counters set through ibsim): the IB series reach the
detectors through the same command an operator runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from unifab.cli import app

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "ib"


def test_health_reads_the_perfquery_rounds_of_a_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    (bundle / "ib" / "perfquery").mkdir(parents=True)
    shutil.copy(SAMPLES / "ibnetdiscover_sim_rail_series.txt", bundle / "ib" / "ibnetdiscover.txt")
    for snapshot in (SAMPLES / "perfquery_series_sim").glob("1*.txt"):
        shutil.copy(snapshot, bundle / "ib" / "perfquery" / snapshot.name)
    result = CliRunner().invoke(app, ["health", str(bundle), "--format", "json", "--quiet"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["series"] > 0 and doc["problems"] == []
    # LinkDownedCounter 3 -> 9 in a minute on leaf-r1 port 2 (the stored rounds), and its peer dgx-002 mlx5_1
    # retrained 5 times meanwhile (LinkErrorRecoveryCounter 250 -> 255, saturated): both ends, the cable
    (incident,) = doc["incidents"]
    assert incident["root_cause"] == {"kind": "link", "id": "link:dgx-002:mlx5_1--ib-leaf-r1:2"}
    assert {(s["detector"], s["counter"]) for s in incident["symptoms"]} == {
        ("HEALTH-LINK-FLAP", "link_down"),
        ("HEALTH-FEC", "link_error_recovery"),
    }


def test_health_names_the_ib_rounds_when_a_bundle_has_no_counters(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    (bundle / "ib").mkdir(parents=True)
    shutil.copy(SAMPLES / "ibnetdiscover_sim_rail_series.txt", bundle / "ib" / "ibnetdiscover.txt")
    result = CliRunner().invoke(app, ["health", str(bundle), "--quiet"])
    assert result.exit_code == 2
    assert "ib/perfquery/*.txt" in result.output
