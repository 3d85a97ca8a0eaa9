"""``unifab check --watch``: a real file change in a temp bundle shows up as changed findings."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.cli.watch import changed_paths, snapshot, watch
from unifab.session.incremental import Session


@pytest.fixture
def bundle(twin_bundle: Path, tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    shutil.copytree(twin_bundle, out)
    return out


def _qos_file(bundle: Path) -> Path:
    host = sorted((bundle / "hosts").iterdir())[0]
    return sorted((host / "cmd" / "mlnx_qos").glob("*.txt"))[0]


def _edits(*steps: Callable[[], None]) -> Callable[[float], None]:
    """A ``sleep`` that performs one edit per poll (then nothing), so the loop sees each change once."""
    pending = list(steps)

    def sleep(_seconds: float) -> None:
        if pending:
            pending.pop(0)()

    return sleep


def test_snapshot_sees_modified_added_and_removed_files(bundle: Path) -> None:
    before = snapshot(bundle)
    path = _qos_file(bundle)
    path.write_text(path.read_text() + "\n")
    (bundle / "hosts" / path.parts[-4] / "cmd" / "new.txt").write_text("x")
    (bundle / "plan" / "cabling.csv").unlink()
    changed = changed_paths(before, snapshot(bundle))
    rel = path.relative_to(bundle).as_posix()
    assert rel in changed
    assert f"hosts/{path.parts[-4]}/cmd/new.txt" in changed
    assert "plan/cabling.csv" in changed


def test_watch_prints_the_changed_findings_then_their_removal(bundle: Path) -> None:
    path = _qos_file(bundle)
    original = path.read_text()
    host = path.parts[-4]
    out = io.StringIO()
    sleep = _edits(
        lambda: path.write_text(original.replace("trust state: dscp", "trust state: pcp")),
        lambda: None,
        lambda: path.write_text(original),
    )
    code = watch(bundle, "table", interval_s=0, iterations=4, out=out, sleep=sleep)
    assert code == 0
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0].endswith("Ctrl-C stops")
    change = [i for i, line in enumerate(lines) if f"host:{host} changed" in line]
    assert len(change) == 2, text  # the edit, then the restore; the quiet poll prints nothing
    added = lines[change[0] + 1 : change[1]]
    assert any(line.startswith("  + ") and "QOS-TRUST" in line and f"{host}:{path.stem}" in line for line in added)
    assert any(line.startswith("  - ") and "QOS-TRUST" in line for line in lines[change[1] + 1 :])


def test_watch_json_is_one_object_per_change(bundle: Path) -> None:
    path = _qos_file(bundle)
    original = path.read_text()
    out = io.StringIO()
    session = Session(bundle)
    sleep = _edits(lambda: path.write_text(original.replace("trust state: dscp", "trust state: pcp")))
    assert watch(bundle, "json", interval_s=0, iterations=2, out=out, sleep=sleep, session=session) == 0
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(docs) == 1
    doc = docs[0]
    assert doc["devices"] == [f"host:{path.parts[-4]}"]
    assert doc["mode"] == "incremental"
    assert {f["check"] for f in doc["added"]} >= {"QOS-TRUST"}
    assert doc["findings"] == len(session.findings)
    assert doc["time"].endswith("Z")


def test_ctrl_c_exits_zero(bundle: Path) -> None:
    def interrupt(_seconds: float) -> None:
        raise KeyboardInterrupt

    assert watch(bundle, "table", out=io.StringIO(), sleep=interrupt) == 0


def test_cli_help_lists_watch_and_a_bad_bundle_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["check", "--help"])
    assert result.exit_code == 0
    assert "--watch" in result.output
    bad = runner.invoke(app, ["check", str(tmp_path / "nope"), "--watch"])
    assert bad.exit_code == 2
    assert "bundle not found" in bad.output
    mixed = runner.invoke(app, ["check", str(tmp_path), "--watch", "--job", "1002"])
    assert mixed.exit_code == 2
    assert "does not combine" in mixed.output


def test_a_vanished_bundle_is_reported_and_watching_goes_on(bundle: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(bundle)
    moved = tmp_path / "moved"
    sleep = _edits(lambda: (bundle / "plan" / "cabling.csv").write_text("a_node\n"), lambda: bundle.rename(moved))
    assert watch(bundle, "table", interval_s=0, iterations=3, out=out, sleep=sleep, session=session) == 0
    text = out.getvalue()
    assert "bundle changed: +" in text  # the broken plan: re-read whole, its INPUT finding appears
    assert "cannot re-check: bundle not found" in text
