"""``unifab fleet versions``: versions by group with counts, groups that are not uniform and outliers first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.twin.generate import generate
from unifab.twin.version_files import nccl_log, write_version_files

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


def test_nccl_of_a_job_log_is_a_group(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    log = nccl_log(["gpu001", "gpu002", "gpu003", "gpu004"]).replace(
        "gpu004:41051:41051 [0] NCCL INFO NCCL version 2.21.5", "gpu004:41051:41051 [0] NCCL INFO NCCL version 2.20.3"
    )
    (copy / "telemetry" / "nccl").mkdir(parents=True)
    (copy / "telemetry" / "nccl" / "1001.log").write_text(log)
    result = runner.invoke(app, ["fleet", "versions", str(copy), "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    (group,) = [g for g in json.loads(result.stdout)["groups"] if g["field"] == "nccl"]
    assert (group["title"], group["check"], group["group"], group["uniform"], group["majority"]) == (
        "NCCL version",
        "FLEET-DRIVER",
        "telemetry/nccl/1001.log",
        False,
        "2.21.5",
    )
    assert [(v["version"], v["names"]) for v in group["versions"]] == [
        ("2.20.3", ["gpu004"]),
        ("2.21.5", ["gpu001", "gpu002", "gpu003"]),
    ]
    table = runner.invoke(app, ["fleet", "versions", str(copy), "--quiet"])
    assert "NCCL version" in table.stdout and "2.20.3" in table.stdout
