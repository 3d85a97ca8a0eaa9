"""Fixtures of the serve tests: a throw-away PostgreSQL database, store URLs for both backends, a small twin.

PostgreSQL: the session creates ``unifab_test_<random>`` on the server at 127.0.0.1:5432 (trust auth, as on
the project's machines) and drops it at the end; it never touches another database. No server there: the
PostgreSQL cases skip, or fail when ``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import socket
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from processes import wait_until_ready

PG_ADMIN = os.environ.get("UNIFAB_TEST_PG", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A SQLAlchemy URL of a new, empty PostgreSQL database, dropped when the session ends."""
    try:
        import psycopg

        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except Exception as exc:
        message = f"no PostgreSQL at {PG_ADMIN!r}: {exc}"
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    name = f"unifab_test_{secrets.token_hex(6)}"
    info = admin.info
    try:
        admin.execute(f'CREATE DATABASE "{name}"')
        yield f"postgresql+psycopg://{info.user}@{info.host}:{info.port}/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store URL for each test, on SQLite (a file) and on PostgreSQL (a new schema each time)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'serve.db'}"
        return
    base: str = request.getfixturevalue("pg_database")
    from sqlalchemy import create_engine, text

    # each test gets its own clean database state: drop every table of the throw-away database first
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    yield base


@pytest.fixture(scope="session")
def small_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 64-GPU twin with every scenario (read-only for tests)."""
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    out = tmp_path_factory.mktemp("serve-twin") / "bundle"
    generate(out, gpus=64, seed=3, scenarios=tuple(SCENARIOS))
    return out


@pytest.fixture(scope="session")
def twin_counts(small_twin: Path) -> dict[str, int]:
    """Hosts and switches of the twin as the library reads them (what /api/v1/summary should count)."""
    import unifab

    fabric = unifab.load_snapshot(small_twin).fabric
    return {"host": len(fabric.hosts), "switch": len(fabric.switches)}


@pytest.fixture(scope="session")
def twin_upload(small_twin: Path) -> bytes:
    from unifab.serve.service import pack_directory

    return pack_directory(small_twin)


@pytest.fixture
def tar_of() -> Callable[..., bytes]:
    """``tar_of(files, links=None)``: the tar.gz a client would send (see :func:`make_tar`)."""
    return make_tar


@pytest.fixture
def host_files() -> Callable[..., dict[str, bytes]]:
    """``host_files(bundle, host, changes=None)``: one host's part of a bundle (see :func:`host_part`)."""
    return host_part


def make_tar(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    """A tar.gz of ``files`` (and symlinks ``name -> target``), as a client would send it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buffer.getvalue()


def host_part(bundle: Path, host: str, changes: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Every file of ``hosts/<host>/`` (bundle-relative names), with ``changes`` (host-relative) applied."""
    root = bundle / "hosts" / host
    files = {f"hosts/{host}/{p.relative_to(root).as_posix()}": p.read_bytes() for p in root.rglob("*") if p.is_file()}
    for rel, body in (changes or {}).items():
        files[f"hosts/{host}/{rel}"] = body
    return files


UNIFAB = [sys.executable, "-m", "unifab.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def token_for(db: Path, role: str = "viewer") -> str:
    """A new token of ``role`` in the store at ``db`` (created there when missing), as an admin would make it."""
    made = subprocess.run(
        [*UNIFAB, "serve", "token", "create", "--role", role, "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return made.stdout.strip()


@contextmanager
def serving(work: Path, bundle: Path) -> Iterator[tuple[str, str, Path]]:
    """A real ``unifab serve`` of ``bundle`` on a free port, its store in ``work``: (url, a viewer token, db)."""
    db = work / "serve.db"
    token = token_for(db)
    port = free_port()
    server = Process(["serve", "--db", str(db), "--bundle", str(bundle), "--port", str(port)], work / "log", port)
    try:
        server.wait_healthy()
        yield server.url, token, db
    finally:
        server.stop()


class Process:
    """A ``unifab`` subprocess (a server) with its log; :meth:`wait_healthy` until /healthz answers."""

    def __init__(self, args: list[str], log: Path, port: int, **popen: Any) -> None:
        self.log_path = log
        self.url = f"http://127.0.0.1:{port}"
        self._log = log.open("wb")
        popen.setdefault("stdout", self._log)
        self.proc = subprocess.Popen([*UNIFAB, *args], stderr=self._log, **popen)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-3000:]

    def wait_healthy(self, seconds: float = 180) -> None:
        wait_until_ready(self.proc, f"{self.url}/healthz", "unifab serve", seconds, self.log)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        return self.proc.returncode


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """The throw-away PostgreSQL database, emptied for this test."""
    from sqlalchemy import create_engine, text

    engine = create_engine(pg_database)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return pg_database


@pytest.fixture
def shots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where a browser test's screenshots go: ``$UNIFAB_ARTIFACTS/browser/<test>`` when set (``.ci/run`` keeps
    that directory after the run), else the test's temp directory."""
    kept = os.environ.get("UNIFAB_ARTIFACTS")
    out = Path(kept) / "browser" / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name) if kept else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    return out
