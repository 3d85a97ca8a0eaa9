"""A mixed fabric (RoCE backend + InfiniBand storage) through the command line: ``unifab check`` and ``unifab topo``
report both silos in one run, each finding exactly the injected fault of its silo, and a host shows its RoCE NICs
and its HCA side by side (the model, and the rail map ``topo export`` writes)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.twin.generate import generate

runner = CliRunner()
SCENARIOS = ("degraded-link", "pfc-mismatch", "ib-degraded-link", "ib-swapped-cable")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[type-arg]
    root = tmp_path_factory.mktemp("mixed") / "b"
    result = generate(root, gpus=128, seed=11, scenarios=SCENARIOS, fabric="mixed")
    return root, result.truth


def _pairs(findings: list[dict]) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(f["check"], e) for f in findings for e in f["entities"]}


def _truth(truth: dict, *scenarios: str) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(m["check"], e) for m in truth["misconfigurations"] if m["scenario"] in scenarios for e in m["entities"]}


def _silo(entity: str) -> str:
    return "ib" if ":ib-" in entity or entity.startswith("link:ib-") or "mlx5_8" in entity else "roce"


def test_check_reports_both_silos(mixed: tuple[Path, dict]) -> None:  # type: ignore[type-arg]
    root, truth = mixed
    done = runner.invoke(app, ["check", str(root), "--format", "json", "-q"])
    assert done.exit_code != 0, done.output  # findings
    found = _pairs(json.loads(done.stdout)["findings"])
    assert found == _truth(truth, *SCENARIOS)
    assert {_silo(e) for _, e in found} == {"ib", "roce"}
    assert {c for c, _ in found} >= {"QOS-PFC-MISMATCH", "TOPO-DEGRADED", "TOPO-MISWIRED"}


def test_topo_diff_reports_both_silos(mixed: tuple[Path, dict]) -> None:  # type: ignore[type-arg]
    root, truth = mixed
    done = runner.invoke(app, ["topo", "diff", str(root), "--format", "json", "-q"])
    findings = json.loads(done.stdout)["findings"]
    assert _pairs(findings) == _truth(truth, "degraded-link", "ib-degraded-link", "ib-swapped-cable")
    degraded = {f["evidence"]["fabric"]: f for f in findings if f["check"] == "TOPO-DEGRADED"}
    assert set(degraded) == {"roce", "ib"}  # one per silo, each judged within its own tier
    ib = degraded["ib"]
    assert ib["evidence"]["planned"]["speed"] == "HDR" and "the plan says 4X HDR, 200G" in ib["message"]
    assert "planned" not in degraded["roce"]["evidence"] and "its peers run" in degraded["roce"]["message"]


def test_a_host_shows_its_roce_nics_and_its_hca(mixed: tuple[Path, dict], tmp_path: Path) -> None:  # type: ignore[type-arg]
    root, _ = mixed
    fabric = load_bundle(root)
    for host in fabric.hosts.values():
        kinds = {key: nic.fabric for key, nic in host.nics.items()}
        assert kinds.pop("mlx5_8") == "ib" and set(kinds.values()) == {"roce"}, host.name
    out = tmp_path / "rails.json"
    done = runner.invoke(app, ["topo", "export", str(root), "--rail-map", str(out), "--force", "-q"])
    assert done.exit_code == 0, done.output
    rails = json.loads(out.read_text())["hosts"]
    for host, entries in rails.items():
        leaves = {e["rdma_dev"]: e["leaf"] for e in entries}
        assert leaves.pop("mlx5_8").startswith("ib-stor-leaf"), host
        assert leaves and all(leaf.startswith("leaf-su") for leaf in leaves.values()), host


def test_jobs_map_to_the_fabric_their_nccl_nics_are_on(mixed: tuple[Path, dict], tmp_path: Path) -> None:  # type: ignore[type-arg]
    """The twin's jobs run NCCL over the RoCE rails; one pointed at the storage HCA runs over InfiniBand, and one
    that leaves NCCL_IB_HCA unset would open both (NCCL takes every RDMA device)."""
    root, _ = mixed
    bundle = tmp_path / "b"
    shutil.copytree(root, bundle)
    env = bundle / "scheduler" / "env"
    (env / "1002.env").write_text(
        re.sub(r"(?m)^NCCL_IB_HCA=.*$", "NCCL_IB_HCA==mlx5_8:1", (env / "1002.env").read_text())
    )

    def fabrics() -> dict[str, list[str]]:
        done = runner.invoke(app, ["jobs", str(bundle), "--format", "json", "-q", "--fail-on", "never"])
        assert done.exit_code == 0, done.output
        return {j["job"]: j["checked"]["fabrics"] for j in json.loads(done.stdout)["jobs"]}

    assert fabrics() == {"job:slurm:1001": ["roce"], "job:slurm:1002": ["ib"]}
    (env / "1001.env").write_text(re.sub(r"(?m)^NCCL_IB_HCA=.*\n", "", (env / "1001.env").read_text()))
    assert fabrics()["job:slurm:1001"] == ["roce", "ib"]
    table = runner.invoke(app, ["jobs", str(bundle), "--job", "1002", "-q", "--fail-on", "never"], terminal_width=200)
    assert "│ IB " in table.stdout and "RoCE" not in table.stdout, table.stdout
