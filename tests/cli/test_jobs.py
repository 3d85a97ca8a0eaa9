"""``unifab jobs``: per job, the incidents and findings on its network, or a clean bill; stable exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, ["jobs", *args])


def doc(*args: str) -> dict[str, Any]:
    result = run(*args, "--format", "json", "--quiet")
    assert result.exit_code in (0, 1), result.output
    parsed: dict[str, Any] = orjson.loads(result.stdout)
    return parsed


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("jobs")
    generate(base / "clean", 64, 1, su_hosts=4)
    generate(base / "faulty", 64, 1, su_hosts=4)
    write_faults(base / "faulty", 4, 1)  # a flapping link, a dirty optic, lossless drops, a dead-ish host
    generate(base / "misconfigured", 64, 1, ("ecn-off",), su_hosts=4)
    return {p.name: p for p in base.iterdir()}


def test_help_has_an_example() -> None:
    result = run("--help")
    assert result.exit_code == 0 and "Example: unifab jobs ./bundle" in result.stdout


def test_a_clean_cluster_gets_a_clean_bill_per_job_listing_what_was_checked(twins: dict[str, Path]) -> None:
    table = run(str(twins["clean"]), "--quiet")
    assert table.exit_code == 0, table.output
    assert "not the network" in table.stdout
    d = doc(str(twins["clean"]))
    assert d["jobs"] and {j["verdict"] for j in d["jobs"]} == {"clean"}
    checked = d["jobs"][0]["checked"]
    assert checked["gpus"] == 8 * checked["hosts"] and checked["links"] == checked["nics"] > 0
    assert checked["ecmp_uplinks"] > 0 and checked["telemetry"] is False


def test_incidents_land_on_the_jobs_whose_hosts_or_paths_they_touch(twins: dict[str, Path]) -> None:
    bundle = twins["faulty"]
    truth = orjson.loads((bundle / "truth.json").read_bytes())["faults"]
    assert run(str(bundle), "--quiet").exit_code == 1
    d = doc(str(bundle))
    by_job = {j["job"]: j for j in d["jobs"]}
    for fault in truth:
        for job in fault["jobs"]:
            roots = {(i["root_cause"]["id"], i["on"]) for i in by_job[job]["incidents"]}
            assert (fault["root_cause"]["id"], "hosts") in roots, (fault, job)
    assert all(j["checked"]["telemetry"] for j in d["jobs"])
    one = next(iter(by_job))
    only = doc(str(bundle), "--job", one.rsplit(":", 1)[-1])
    assert [j["job"] for j in only["jobs"]] == [one]


def test_a_misconfiguration_on_a_jobs_path_is_a_finding(twins: dict[str, Path]) -> None:
    bundle = twins["misconfigured"]
    d = doc(str(bundle))
    assert any(f["check"] == "QOS-ECN-OFF" for j in d["jobs"] for f in j["findings"])
    assert run(str(bundle), "--quiet").exit_code == 1
    assert run(str(bundle), "--quiet", "--fail-on", "never").exit_code == 0


def test_usage_errors_exit_2(twins: dict[str, Path], tmp_path: Path) -> None:
    unknown = run(str(twins["clean"]), "--job", "424242", "--quiet")
    assert unknown.exit_code == 2 and "424242" in unknown.stderr and "job:slurm:" in unknown.stderr
    assert run(str(tmp_path / "nowhere")).exit_code == 2
    generate(tmp_path / "nojobs", 8, 1)
    shutil.rmtree(tmp_path / "nojobs" / "scheduler", ignore_errors=True)
    nojobs = run(str(tmp_path / "nojobs"), "--quiet")
    assert nojobs.exit_code == 2 and "no jobs" in nojobs.stderr
