"""``unifab topo diff``: table and JSON, grouped by kind, exit codes 0/1/2."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from unifab.cli.topo import topo_app
from unifab.twin.cluster import build
from unifab.twin.scenarios import Picker, Truth
from unifab.twin.topology_scenarios import NCCL_AND_LINK_SCENARIOS, TOPOLOGY_SCENARIOS
from unifab.twin.writer import write_bundle

runner = CliRunner()
app = typer.Typer()
app.add_typer(topo_app, name="topo")


def _bundle(out: Path, names: tuple[str, ...]) -> list[Truth]:
    cluster = build(64)
    pick = Picker(cluster, random.Random(4))
    scenarios = TOPOLOGY_SCENARIOS | NCCL_AND_LINK_SCENARIOS
    truth = [t for name in names for t in scenarios[name](cluster, pick)]
    write_bundle(cluster, out)
    return truth


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Truth]]:
    out = tmp_path_factory.mktemp("topo") / "b"
    return out, _bundle(out, tuple(TOPOLOGY_SCENARIOS))


def test_help_has_an_example() -> None:
    result = runner.invoke(app, ["topo", "diff", "--help"])
    assert result.exit_code == 0
    assert "Example: unifab topo diff" in result.output
    assert "Example:" in runner.invoke(app, ["topo", "--help"]).output


def test_json_groups_by_kind_and_matches_truth(faulty: tuple[Path, list[Truth]]) -> None:
    bundle, truth = faulty
    result = runner.invoke(app, ["topo", "diff", str(bundle), "--format", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    checks = [f["check"] for f in doc["findings"]]
    order = ["TOPO-MISSING", "TOPO-UNVERIFIED", "TOPO-MISWIRED", "TOPO-RAIL", "COVERAGE"]  # catalog order
    assert checks == sorted(checks, key=order.index)
    assert {(f["check"], tuple(f["entities"])) for f in doc["findings"]} == {
        (t["check"], tuple(t["entities"])) for t in truth
    }
    assert doc["summary"]["by_kind"]["TOPO-MISWIRED"] == 1
    assert doc["summary"]["plan"] is True
    swap = next(f for f in doc["findings"] if f["check"] == "TOPO-MISWIRED")
    assert len(swap["evidence"]["plan"]) == len(swap["evidence"]["discovered"]) == 2


def test_table_shows_both_views_and_consequence(faulty: tuple[Path, list[Truth]]) -> None:
    bundle, _ = faulty
    result = runner.invoke(app, ["topo", "diff", str(bundle)], env={"COLUMNS": "240"})
    assert result.exit_code == 1
    for text in ("TOPO-MISWIRED", "TOPO-MISSING", "TOPO-RAIL", "the plan says", "discovered", "consequence"):
        assert text in result.output
    assert "nothing (no LLDP on either end)" in result.output


def test_fail_on_never_and_clean_bundle(tmp_path: Path, faulty: tuple[Path, list[Truth]]) -> None:
    bundle, _ = faulty
    assert runner.invoke(app, ["topo", "diff", str(bundle), "--fail-on", "never"]).exit_code == 0
    assert runner.invoke(app, ["topo", "diff", str(bundle), "--fail-on", "critical"]).exit_code == 0
    _bundle(tmp_path / "clean", ())
    result = runner.invoke(app, ["topo", "diff", str(tmp_path / "clean")])
    assert result.exit_code == 0
    assert "cabling matches" in result.output


def test_missing_bundle_and_bad_option_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["topo", "diff", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "error" in result.output
    assert runner.invoke(app, ["topo", "diff", str(tmp_path), "--format", "xml"]).exit_code == 2


@pytest.fixture(scope="module")
def nccl_and_links(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Truth]]:
    out = tmp_path_factory.mktemp("topo") / "b"
    return out, _bundle(out, tuple(NCCL_AND_LINK_SCENARIOS))


def test_nccl_and_link_kinds_match_truth(nccl_and_links: tuple[Path, list[Truth]]) -> None:
    bundle, truth = nccl_and_links
    result = runner.invoke(app, ["topo", "diff", str(bundle), "--format", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert {(f["check"], tuple(f["entities"])) for f in doc["findings"]} == {
        (t["check"], tuple(t["entities"])) for t in truth
    }
    kinds = {"TOPO-PCIE-AFFINITY", "TOPO-NCCL-HCA", "TOPO-DEGRADED", "TOPO-UPLINKS"}
    assert all(doc["summary"]["by_kind"][k] >= 1 for k in kinds)


def test_table_names_the_subject_and_where_the_view_comes_from(nccl_and_links: tuple[Path, list[Truth]]) -> None:
    """Host, job and leaf rows: the subject, the plan's wording, what nvidia-smi / NCCL_IB_HCA / LLDP show."""
    bundle, truth = nccl_and_links
    result = runner.invoke(app, ["topo", "diff", str(bundle)], env={"COLUMNS": "400"})
    assert result.exit_code == 1
    out = result.output
    [affinity] = [t for t in truth if t["check"] == "TOPO-PCIE-AFFINITY"]
    [hca] = [t for t in truth if t["check"] == "TOPO-NCCL-HCA"]
    [uplinks] = [t for t in truth if t["check"] == "TOPO-UPLINKS"]
    host, gpu = affinity["entities"][0].removeprefix("gpu:").split(":")
    for text in (
        f"host:{host}",
        "each GPU's closest NIC is its own rail NIC",
        f"GPU {gpu} -> ",
        "(from nvidia-smi topo -m and the NCCL topology)",
        hca["subject"]["id"],
        "rail NICs mlx5_0",
        "(from the job's NCCL_IB_HCA)",
        uplinks["subject"]["id"],
        "8 uplinks, 1:1",
        "uplinks up",
        "not up: ",
        "(from LLDP on the leaf's uplinks)",
    ):
        assert text in out, text
    assert "LLDP says" not in out and "no LLDP on either end" not in out.split("TOPO-PCIE-AFFINITY")[1]
