"""Honest exit codes through the real entry point: 0 clean, 1 findings, 2 usage/input/output error (one
``unifab: error:`` line, no traceback), 3 internal error (a short message and the file holding the traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.cli.common import EXIT_HELP, EXIT_INTERNAL, EXIT_USAGE

UNIFAB = [sys.executable, "-m", "unifab.cli"]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("exit") / "b"
    generate(out, gpus=8, seed=1, scenarios=("pfc-mismatch", "ecn-off", "mtu-mismatch"))
    return out


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*UNIFAB, *args], capture_output=True, text=True, check=False, timeout=300, **kwargs)  # type: ignore[call-overload, no-any-return]


def _one_error_line(stderr: str) -> str:
    """The stderr of an exit 2: exactly one line, ``unifab: error: ...``, and no traceback."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("unifab: error: "), stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    return lines[0]


def test_an_unexpected_exception_is_exit_3_with_the_traceback_in_a_file(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    import unifab.checks.runner

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug in a check")

    monkeypatch.setattr(unifab.checks.runner, "run_checks", boom)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(app, ["check", str(small), "-q"])
    assert result.exit_code == EXIT_INTERNAL, result.output
    assert "internal error" in result.stderr and "RuntimeError: a bug in a check" in result.stderr
    assert "Traceback" not in result.stderr  # a short message, the traceback is in the file
    [crash] = tmp_path.glob("unifab-crash-*.txt")
    assert str(crash) in result.stderr
    text = crash.read_text()
    assert "Traceback" in text and "boom" in text and "a bug in a check" in text


def test_html_into_a_missing_directory_is_exit_2(small: Path, tmp_path: Path) -> None:
    proc = _run("check", str(small), "-q", "--html", str(tmp_path / "no" / "such" / "r.html"))
    assert proc.returncode == EXIT_USAGE
    assert "r.html" in _one_error_line(proc.stderr)


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_output_under_an_unwritable_path_is_exit_2(small: Path, tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "out" if where == "under-a-file" else Path("/proc/unifab-test/out")
    for args in (
        ["render", str(small / "fabric.yaml"), "--bundle", str(small), "--out", str(target), "-q"],
        ["topo", "show", str(small), "-q", "--rail-map", str(target / "rails.svg")],
        ["check", str(small), "-q", "--html", str(target / "r.html")],
    ):
        proc = _run(*args)
        assert proc.returncode == EXIT_USAGE, (args, proc.stderr)
        _one_error_line(proc.stderr)


def test_stdout_closed_by_its_reader_is_exit_2(small: Path) -> None:
    """``unifab check B | head -1``: the reader is gone before unifab writes (the read end closed first)."""
    for args in (["check", str(small), "-q"], ["check", str(small), "-q", "--format", "json"], ["checks"]):
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(
                [*UNIFAB, *args], stdout=write, stderr=subprocess.PIPE, text=True, check=False, timeout=300
            )
        finally:
            os.close(write)
        assert proc.returncode == EXIT_USAGE, (args, proc.stderr)
        assert "stdout was closed" in _one_error_line(proc.stderr)


def test_stdout_full_or_closed_is_exit_2(small: Path) -> None:
    if Path("/dev/full").exists():
        with Path("/dev/full").open("w") as full:
            proc = subprocess.run(
                [*UNIFAB, "check", str(small), "-q"], stdout=full, stderr=subprocess.PIPE, text=True, check=False
            )
        assert proc.returncode == EXIT_USAGE
        assert "No space left" in _one_error_line(proc.stderr)
    closed = subprocess.run(
        [*UNIFAB, "check", str(small), "-q"],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        preexec_fn=lambda: os.close(1),  # the child starts with no stdout at all
    )
    assert closed.returncode == EXIT_USAGE
    assert "stdout is closed" in _one_error_line(closed.stderr)


def test_a_bundle_with_no_device_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty" / "hosts").mkdir(parents=True)
    (tmp_path / "empty" / "plan").mkdir()
    proc = _run("check", str(tmp_path / "empty"), "-q")
    assert proc.returncode == EXIT_USAGE
    assert "no device" in _one_error_line(proc.stderr)


def test_a_bundle_where_no_device_had_anything_readable_is_an_input_error(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "hosts" / "h1" / "cmd").mkdir(parents=True)
    (root / "hosts" / "h1" / "cmd" / "ibdev2netdev.txt").write_text("garbage\n")
    (root / "switches" / "s1" / "sonic").mkdir(parents=True)
    (root / "switches" / "s1" / "sonic" / "config_db.json").write_text("{not json")
    for args in (
        ["check", str(root), "-q"],
        ["check", str(root), "-q", "--format", "json"],
        ["topo", "diff", str(root)],
    ):
        proc = _run(*args)
        assert proc.returncode == EXIT_USAGE, (args, proc.stdout, proc.stderr)
        line = _one_error_line("\n".join(ln for ln in proc.stderr.splitlines() if "reading" not in ln))
        assert "no device had anything readable" in line and "first:" in line


def test_watching_a_bundle_with_nothing_to_check_is_an_input_error(tmp_path: Path) -> None:
    """--watch on a bundle with no device, or none readable, stops at once with exit 2 (never "watching")."""
    (tmp_path / "empty" / "hosts" / "h1").mkdir(parents=True)
    bad = tmp_path / "bad"
    (bad / "switches" / "s1" / "sonic").mkdir(parents=True)
    (bad / "switches" / "s1" / "sonic" / "config_db.json").write_text("{not json")
    for root, said in ((tmp_path / "empty", "none of the files unifab reads"), (bad, "no device")):
        proc = _run("check", str(root), "--watch")
        assert proc.returncode == EXIT_USAGE, (proc.stdout, proc.stderr)
        assert said in _one_error_line(proc.stderr)
        assert "watching" not in proc.stdout


def test_max_file_size_reports_larger_files_and_reads_the_rest(small: Path) -> None:
    """--max-file-size (or UNIFAB_MAX_FILE_BYTES) caps each file: a larger one is an INPUT-UNREADABLE finding
    naming the cap, the others are read; a cap that is not a size is a usage error."""
    import json

    proc = _run("--max-file-size", "16K", "check", str(small), "--format", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    capped = [f for f in findings if f["check"] == "INPUT-UNREADABLE" and "16,384 bytes a file" in f["message"]]
    larger = {str(p.relative_to(small)) for p in small.rglob("*") if p.is_file() and p.stat().st_size > 16 * 1024}
    assert larger and {f["subject"]["path"] for f in capped} == larger
    assert {"QOS-PFC-MISMATCH", "QOS-ECN-OFF", "QOS-MTU"} <= {f["check"] for f in findings}
    env = {**os.environ, "UNIFAB_MAX_FILE_BYTES": "16K"}
    by_env = _run("check", str(small), "--format", "json", "--fail-on", "never", env=env)
    assert json.loads(by_env.stdout)["findings"] == findings
    for bad in ("4X", "0", "-1"):
        wrong = _run("--max-file-size", bad, "check", str(small))
        assert wrong.returncode == EXIT_USAGE and "--max-file-size" in _one_error_line(wrong.stderr)


def test_clean_and_findings_codes_are_unchanged(small: Path) -> None:
    assert _run("check", str(small), "-q", "--fail-on", "never").returncode == 0
    assert _run("check", str(small), "-q").returncode == 1


def test_help_lists_the_exit_codes() -> None:
    proc = _run("--help")
    assert proc.returncode == 0
    flat = " ".join(proc.stdout.split())
    assert "3 internal error" in flat
    assert "3 internal error" in EXIT_HELP


def test_render_never_replaces_the_current_directory_or_the_bundle(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    intent = str(small / "fabric.yaml")
    first = _run("render", intent, "--bundle", str(small), "--out", str(out), "-q")
    assert first.returncode in (0, 1), first.stderr
    before = sorted(p.name for p in out.iterdir())
    here = _run("render", intent, "--bundle", str(small), "--out", ".", "-q", cwd=out)
    assert here.returncode == EXIT_USAGE and "current directory" in _one_error_line(here.stderr)
    assert sorted(p.name for p in out.iterdir()) == before
    for flag in ("--out", "--write-bundle"):
        over = _run("render", intent, "--bundle", str(small), flag, str(small), "-q")
        assert over.returncode == EXIT_USAGE, over.stderr
        _one_error_line(over.stderr)
    assert (small / "truth.json").is_file() and (small / "hosts").is_dir()
