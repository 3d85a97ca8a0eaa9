"""``unifab health`` and ``unifab jobs`` take their thresholds from the intent's ``health:`` section: the bundle's
``fabric.yaml``, or ``--intent FILE``; a bad key there is exit 2 naming the file, line and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("hi") / "b"
    generate(out, 64, 3, su_hosts=4)
    faults = write_faults(out, 2, 3)  # a flapping link and a dirty optic
    return out, faults


def roots(args: list[str]) -> tuple[int, set[str], str]:
    result = CliRunner().invoke(app, [*args, "--format", "json", "--quiet"])
    if result.exit_code == 2:
        return 2, set(), result.stderr
    return result.exit_code, {i["root_cause"]["id"] for i in orjson.loads(result.stdout)["incidents"]}, ""


def test_the_bundles_fabric_yaml_sets_the_thresholds(twin: tuple[Path, list[dict[str, Any]]]) -> None:
    bundle, faults = twin
    flap, optic = (f["root_cause"]["id"] for f in faults)
    intent = bundle / "fabric.yaml"
    original = intent.read_text()
    assert "health:" not in original
    assert roots(["health", str(bundle)])[:2] == (1, {flap, optic})
    try:
        intent.write_text(original + "health:\n  link_flap: {events: 1000}\n")
        assert roots(["health", str(bundle)])[:2] == (1, {optic})
        intent.write_text(original + "health:\n  link_flap: {events: 1000}\n  fec: {total: 1000000}\n")
        assert roots(["health", str(bundle)])[:2] == (0, set())
        intent.write_text(original + "health:\n  link_flap: {event: 1000}\n")
        code, _, err = roots(["health", str(bundle)])
        line = len(original.splitlines()) + 2
        assert code == 2 and f"fabric.yaml:{line}: health.link_flap.event: unknown key 'event'" in err
    finally:
        intent.write_text(original)


def test_intent_option_wins_over_the_bundles_file(twin: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    bundle, faults = twin
    flap = faults[0]["root_cause"]["id"]
    quiet = tmp_path / "quiet.yaml"
    quiet.write_text("version: 1\nhealth:\n  fec: {intervals: 100}\n")  # a file with only health: is enough
    assert roots(["health", str(bundle), "--intent", str(quiet)])[:2] == (1, {flap})
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nhealth:\n  pfc_storm: {share: 2}\n")
    code, _, err = roots(["health", str(bundle), "--intent", str(bad)])
    assert code == 2 and "bad.yaml:3: health.pfc_storm.share: Input should be less than or equal to 1" in err
    code, _, err = roots(["health", str(bundle), "--intent", str(tmp_path / "missing.yaml")])
    assert code == 2 and "cannot read" in err


def test_jobs_takes_the_same_thresholds(twin: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    bundle, faults = twin
    hurt = {j for f in faults for j in f["jobs"]}
    assert hurt
    runner = CliRunner()

    def incidents(*extra: str) -> set[str]:
        result = runner.invoke(app, ["jobs", str(bundle), "--format", "json", "--quiet", *extra])
        assert result.exit_code in (0, 1), result.output
        doc = orjson.loads(result.stdout)
        return {j["job"] for j in doc["jobs"] if j["incidents"]}

    assert hurt <= incidents()
    off = tmp_path / "off.yaml"
    off.write_text("version: 1\nhealth:\n  link_flap: {events: 1000}\n  fec: {total: 1000000}\n")
    assert incidents("--intent", str(off)) == set()
