"""``unifab fleet versions``: versions by group with counts, groups that are not uniform and outliers first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.twin.generate import generate
from unifab.twin.version_files import write_version_files

runner = CliRunner()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleetcli") / "b"
    generate(out, gpus=32, seed=2, switch_os="mixed")
    write_version_files(out)
    ibv = out / "hosts" / "gpu002" / "cmd" / "ibv_devinfo.txt"
    ibv.write_text(ibv.read_text().replace("28.39.1002", "28.36.1010"))
    return out


def test_json_puts_the_mixed_group_and_its_outlier_first(bundle: Path) -> None:
    result = runner.invoke(app, ["fleet", "versions", str(bundle), "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    first = doc["groups"][0]
    assert (first["field"], first["check"], first["uniform"], first["majority"]) == (
        "nic_firmware",
        "FLEET-FIRMWARE",
        False,
        "28.39.1002",
    )
    assert [(v["version"], v["devices"], v["nics"], v["names"]) for v in first["versions"]] == [
        ("28.36.1010", 1, 8, ["gpu002"]),
        ("28.39.1002", 3, 24, ["gpu001", "gpu003", "gpu004"]),
    ]
    assert all(g["uniform"] for g in doc["groups"][1:])
    assert {g["group"].split()[0] for g in doc["groups"] if g["field"] == "switch_os"} == {"sonic", "eos", "nvue"}


def test_table(bundle: Path) -> None:
    result = runner.invoke(app, ["fleet", "versions", str(bundle), "--quiet"])
    assert result.exit_code == 0
    assert "1 not uniform" in result.stdout and "28.36.1010" in result.stdout


def test_not_a_bundle_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fleet", "versions", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "unifab: error:" in result.output


def test_help_has_an_example() -> None:
    result = runner.invoke(app, ["fleet", "versions", "--help"])
    assert result.exit_code == 0 and "Example: unifab fleet versions" in result.stdout
