"""``twin generate --jobs M --duration SPAN``: how many Slurm jobs share the hosts, and how long the fault
timelines run; the truth, the scheduler files and ``unifab health`` agree with both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.health.test_twin_faults import health
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.twin.generate import generate


def test_jobs_split_every_host_into_contiguous_blocks(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", 128, seed=0, jobs=5)
    fabric = load_bundle(tmp_path / "b")
    blocks = [fabric.jobs[j].hosts for j in sorted(fabric.jobs)]
    assert [len(b) for b in blocks] == [4, 3, 3, 3, 3]
    assert [h for b in blocks for h in b] == sorted(fabric.hosts)  # every host in one job, in order
    assert result.truth["generator"]["jobs"] == 5


def test_default_is_one_job_per_eight_hosts(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", 128, seed=0)
    assert len(load_bundle(tmp_path / "b").jobs) == 2 and "jobs" not in result.truth["generator"]


def test_faults_over_two_hours_land_on_the_jobs_they_hurt(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", 64, seed=3, faults=2, jobs=3, duration_s=7200)
    telemetry = result.truth["telemetry"]
    assert telemetry["samples"] == 7200 // 30 + 1 and result.truth["generator"]["duration_s"] == 7200
    found = {i.root: list(i.jobs) for i in health(tmp_path / "b").incidents}
    assert found == {f["root_cause"]["id"]: f["jobs"] for f in result.truth["faults"]}
    assert {j for f in result.truth["faults"] for j in f["jobs"]} <= set(load_bundle(tmp_path / "b").jobs)


def test_an_infiniband_twin_takes_the_span_as_perfquery_rounds(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", 64, seed=1, faults=2, fabric="ib", duration_s=1200)
    assert result.truth["telemetry"]["samples"] == 1200 // 60 + 1
    assert len(list((tmp_path / "b" / "ib" / "perfquery").glob("*.txt"))) == 21


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--jobs", "0"], "--jobs"),
        (["--jobs", "17"], "--jobs 17: expected 1 to 16"),
        (["--duration", "2h"], "--duration: only with --faults"),
        (["--faults", "1", "--duration", "soon"], "--duration 'soon': expected a span such as 90m"),
        (["--faults", "1", "--duration", "5m"], "--duration 300s: expected 600s to 86400s"),
        (["--faults", "1", "--duration", "nan"], "--duration 'nan': expected a span"),
        (["--faults", "1", "--duration", "infh"], "--duration 'infh': expected a span"),
        (["--faults", "1", "--duration", "2d"], "--duration 172800s: expected 600s to 86400s"),
    ],
)
def test_bad_jobs_or_duration_is_one_usage_line(tmp_path: Path, argv: list[str], said: str) -> None:
    out = tmp_path / "b"
    result = CliRunner().invoke(app, ["twin", "generate", "--gpus", "128", "--out", str(out), "-q", *argv])
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output
    assert not out.exists()  # refused before anything was written


def test_cli_writes_the_jobs_and_the_span(tmp_path: Path) -> None:
    out = tmp_path / "b"
    argv = ["twin", "generate", "--gpus", "64", "--out", str(out), "-q", "--faults", "1", "--jobs", "2"]
    result = CliRunner().invoke(app, [*argv, "--duration", "30m"])
    assert result.exit_code == 0, result.output
    truth = json.loads((out / "truth.json").read_text())
    assert truth["generator"]["jobs"] == 2 and truth["telemetry"]["samples"] == 61


def test_the_library_refuses_jobs_outside_the_hosts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="expected 1 to 8"):
        generate(tmp_path / "b", 64, jobs=9)
