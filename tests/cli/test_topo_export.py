"""``unifab topo export``: refusal on open topology errors, safe writes, the diff, --check, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from unifab.cli.topo import topo_app
from unifab.twin.generate import generate

runner = CliRunner()
app = typer.Typer()
app.add_typer(topo_app, name="topo")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "bundle"
    generate(out, gpus=128, seed=4)
    return out


def _export(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["topo", "export", *args, "--quiet"])
    return result.exit_code, result.stdout, result.stderr


def test_writes_all_formats_then_unchanged(clean: Path, tmp_path: Path) -> None:
    conf, labels, rails = tmp_path / "topology.conf", tmp_path / "labels.yaml", tmp_path / "rails.json"
    code, _out, err = _export(str(clean), "--slurm", str(conf), "--k8s", str(labels), "--rail-map", str(rails))
    assert code == 0, err
    assert "SwitchName=leaf-su1 Nodes=gpu[001-016]" in conf.read_text()
    doc = yaml.safe_load(labels.read_text())
    assert doc["kind"] == "List" and len(doc["items"]) == 16
    assert json.loads(rails.read_text())["format"] == "unifab-rail-map/1"
    assert not list(tmp_path.glob(".*unifab-tmp"))  # no temporary file left
    assert _export(str(clean), "--slurm", str(conf), "--check") == (0, "", "")
    code, _out, _err = _export(str(clean), "--slurm", str(conf), "--rail-map", str(rails))
    assert code == 0  # an earlier export (text or JSON) is recognised as unifab's and rewritten


def test_check_shows_the_diff_and_exits_1(clean: Path, tmp_path: Path) -> None:
    conf = tmp_path / "topology.conf"
    assert _export(str(clean), "--slurm", str(conf))[0] == 0
    stale = conf.read_text().replace("gpu[001-016]", "gpu[001-015]")
    conf.write_text(stale)
    code, out, _err = _export(str(clean), "--slurm", str(conf), "--check")
    assert code == 1
    assert "-SwitchName=leaf-su1 Nodes=gpu[001-015]" in out and "+SwitchName=leaf-su1 Nodes=gpu[001-016]" in out
    assert conf.read_text() == stale  # --check writes nothing


def test_never_overwrites_a_hand_kept_file(clean: Path, tmp_path: Path) -> None:
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s0 Nodes=gpu[001-016]\n")
    code, out, err = _export(str(clean), "--slurm", str(conf))
    assert code == 2 and "was not written by unifab" in err and "--overwrite" in err
    assert "+SwitchName=leaf-su1" in out
    assert conf.read_text() == "SwitchName=s0 Nodes=gpu[001-016]\n"
    assert _export(str(clean), "--slurm", str(conf), "--overwrite")[0] == 0
    assert conf.read_text().startswith("# Written by unifab topo export")


def test_refused_while_topology_errors_are_open(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus=128, seed=4, scenarios=("miswire",))
    conf = tmp_path / "topology.conf"
    code, _out, err = _export(str(bundle), "--slurm", str(conf))
    assert code == 1 and "refusing to export" in err and "TOPO-MISWIRED" in err
    assert not conf.exists()
    assert _export(str(bundle), "--slurm", str(conf), "--force")[0] == 0 and conf.exists()


def test_usage_errors(clean: Path, tmp_path: Path) -> None:
    assert _export(str(clean))[0] == 2  # nothing asked for
    assert _export(str(tmp_path / "absent"), "--slurm", "-")[0] == 2
    code, out, _err = _export(str(clean), "--slurm", "-")
    assert code == 0 and out.startswith("# Written by unifab topo export")
    help_text = runner.invoke(app, ["topo", "export", "--help"]).output
    assert "Example: unifab topo export" in help_text
