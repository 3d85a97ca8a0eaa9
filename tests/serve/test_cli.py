"""``unifab serve`` on the command line: token creation, usage errors, and a CLI that starts without the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from unifab.cli import app
from unifab.serve.service import Server, Settings

UNIFAB = [sys.executable, "-m", "unifab.cli"]
runner = CliRunner()


def test_token_create_prints_a_working_token_once(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    proc = subprocess.run(
        [*UNIFAB, "serve", "token", "create", "--role", "operator", "--name", "ci", "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    token = proc.stdout.strip()
    assert token.startswith("ufb_") and len(proc.stdout.splitlines()) == 1
    assert "shown only now" in proc.stderr
    server = Server(Settings(db=str(db)))
    try:
        principal = server.authenticate(token)
        assert principal is not None and principal.role == "operator"
        assert server.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
        entry = server.store.audit_log().items[0]
        assert (entry["actor"], entry["action"], entry["detail"]) == (
            "cli",
            "token.create",
            {"role": "operator", "name": "ci"},
        )
    finally:
        server.close()


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in (
        ["serve", "token", "create", "--role", "root", "--db", str(tmp_path / "s.db")],
        ["serve", "--bundle", str(tmp_path / "missing"), "--db", str(tmp_path / "s.db")],
    ):
        proc = subprocess.run([*UNIFAB, *args], capture_output=True, text=True, check=False)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("unifab: error: ") and len(proc.stderr.strip().splitlines()) == 1
        assert proc.stdout == ""


def test_help_has_examples() -> None:
    for path in (["serve"], ["serve", "token"], ["serve", "token", "create"]):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0 and "Example:" in result.stdout, path


def test_the_cli_does_not_import_the_server_stack() -> None:
    heavy = ("fastapi", "sqlalchemy", "uvicorn", "alembic", "argon2", "prometheus_client")
    code = f"import sys, unifab.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
