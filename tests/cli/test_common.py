"""What every command shares: help with an example, --version, one error prefix, progress on stderr, --quiet."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from unifab.cli import app
from unifab.cli.common import plural

runner = CliRunner()
UNIFAB = [sys.executable, "-m", "unifab.cli"]


def _leaf_commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(group, typer.core.TyperGroup):
        return [p for name, cmd in group.commands.items() for p in _leaf_commands(cmd, (*path, name))]
    return [path]


def test_every_command_has_help_with_an_example() -> None:
    commands = _leaf_commands(typer.main.get_command(app))
    assert len(commands) >= 12
    for path in commands:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Example:" in result.stdout, path


def test_version() -> None:
    from unifab import __version__

    result = runner.invoke(app, ["--version"])
    assert (result.exit_code, result.stdout.strip()) == (0, f"unifab {__version__}")


@pytest.mark.parametrize(
    "args",
    [
        ["check", "/nonexistent/bundle"],
        ["topo", "diff", "/nonexistent/bundle"],
        ["topo", "show", "/nonexistent/bundle"],
        ["parse", "no-such-format", "x"],
        ["twin", "generate", "--gpus", "100", "--out", "OUT"],
        ["topo", "plan", "--gpus", "100"],
        ["render", "fabric.yaml", "--gpus", "8"],
        ["collect", "--inventory", "/nonexistent.yaml", "--out", "OUT"],
        ["agent", "collect", "--out", "OUT", "--hostname", "bad/name"],
    ],
)
def test_usage_errors_are_one_prefixed_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    args = [str(tmp_path / "o") if a == "OUT" else a for a in args]
    proc = subprocess.run([*UNIFAB, *args], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) >= 1
    assert all(line.startswith("unifab: error: ") for line in lines), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_gpu_counts_validate_the_same_everywhere(tmp_path: Path) -> None:
    messages = set()
    for args in (
        ["twin", "generate", "--gpus", "100", "--out", str(tmp_path / "t")],
        ["topo", "plan", "--gpus", "100"],
    ):
        proc = subprocess.run([*UNIFAB, *args], capture_output=True, text=True, check=False)
        assert proc.returncode == 2
        messages.add(proc.stderr.strip())
    assert messages == {"unifab: error: --gpus must be a positive multiple of 8 (GPUs per host), got 100"}


def test_progress_goes_to_stderr_as_plain_lines_and_quiet_silences_it(twin_bundle: Path) -> None:
    loud = subprocess.run(
        [*UNIFAB, "check", str(twin_bundle), "-f", "json"], capture_output=True, text=True, check=False
    )
    assert loud.returncode == 1
    json.loads(loud.stdout)  # stdout stays pure JSON
    progress = [ln for ln in loud.stderr.splitlines() if ln.startswith("unifab: reading")]
    assert 2 <= len(progress) <= 6, loud.stderr  # a few lines, not one per device
    done, total = re.search(r": ([\d,]+)/([\d,]+) devices", progress[-1]).groups()  # type: ignore[union-attr]
    assert done == total
    quiet = subprocess.run(
        [*UNIFAB, "check", str(twin_bundle), "-f", "json", "-q"], capture_output=True, text=True, check=False
    )
    assert quiet.stderr == ""
    assert json.loads(quiet.stdout) == json.loads(loud.stdout)


def test_twin_generate_shows_progress(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*UNIFAB, "twin", "generate", "--gpus", "16", "--out", str(tmp_path / "b")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "unifab: writing" in proc.stderr
    assert proc.stdout.startswith(f"wrote {tmp_path / 'b'}: 2 hosts, 16 switches, 0 injected misconfigurations")


def test_check_html_says_where_it_wrote(twin_bundle: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    proc = subprocess.run(
        [*UNIFAB, "check", str(twin_bundle), "-f", "json", "-q", "--html", str(report)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    json.loads(proc.stdout)
    assert proc.stderr.strip() == f"unifab: HTML report written to {report}"
    assert report.is_file()


def test_plural() -> None:
    assert [plural(1, "finding"), plural(2, "finding"), plural(0, "switch", "switches")] == [
        "1 finding",
        "2 findings",
        "0 switches",
    ]


def test_error_messages_do_not_replay_terminal_escapes(tmp_path: Path) -> None:
    proc = subprocess.run([*UNIFAB, "check", str(tmp_path / "x\x1b[2Jy")], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr
    assert "\\x1b[2J" in proc.stderr
