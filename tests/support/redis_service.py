"""A private ``redis-server`` for the tests: its own process, its own free port on 127.0.0.1, its own
directory, nothing persisted. The tests never talk to a Redis they did not start.

:func:`private_redis` is the context manager behind the session fixture ``redis_server``
(tests/conftest.py). Without ``redis-server`` on PATH it skips, or fails when
``UNIFAB_REQUIRE_SERVICES=1`` (CI sets it); a server that is installed but does not come up is
always a failure, with its log.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

HOST = "127.0.0.1"
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
DATABASES = 16


@dataclass(frozen=True, slots=True)
class RedisServer:
    """Where the private server listens. Only the tests' own data is in it: flushing is fine."""

    host: str
    port: int
    log: Path  # its --logfile; what it printed before opening that is in log.with_suffix(".out")

    def client(self, db: int = 0) -> redis.Redis:
        return redis.Redis(host=self.host, port=self.port, db=db, socket_connect_timeout=2, socket_timeout=5)

    def flushall(self) -> None:
        with contextlib.closing(self.client()) as client:
            client.flushall()


def _free_port() -> int:
    """A port the kernel just handed out (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _missing(reason: str) -> None:
    if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (required: UNIFAB_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(reason)


def _wait_for_ping(proc: subprocess.Popen[bytes], server: RedisServer) -> bool:
    """True once the server answers PING; False when it exited (e.g. the port was taken meanwhile)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    client = redis.Redis(host=server.host, port=server.port, socket_connect_timeout=0.5, socket_timeout=1)
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            with contextlib.suppress(redis.exceptions.RedisError, OSError):
                if client.ping():
                    return True
            time.sleep(0.05)
    finally:
        client.close()
    _stop(proc, server)
    where = f"{server.host}:{server.port}"
    pytest.fail(
        f"redis-server on {where} did not answer PING within {START_TIMEOUT_S} s:\n{_tail(server.log)}", pytrace=False
    )


def _tail(log: Path, lines: int = 20) -> str:
    out: list[str] = []
    for path in (log.with_suffix(".out"), log):
        try:
            out += path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            continue
    return "\n".join(out) or "(no output)"


def _stop(proc: subprocess.Popen[bytes], server: RedisServer) -> None:
    if proc.poll() is None:
        with contextlib.suppress(redis.exceptions.RedisError, OSError):
            server.client().shutdown(nosave=True)  # the server closes the connection: an error here is normal
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def private_redis(workdir: Path, attempts: int = 3) -> Iterator[RedisServer]:
    """Start ``redis-server`` on a free port with ``workdir`` as its directory; stop it on exit."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server is not on PATH (apt-get install redis-server)")
        raise AssertionError("unreachable")  # pytest.skip/fail raise; this satisfies the type checker
    workdir.mkdir(parents=True, exist_ok=True)
    for attempt in range(attempts):
        port = _free_port()
        log = workdir / f"redis-{port}.log"
        server = RedisServer(HOST, port, log)
        argv = [
            binary,
            "--bind", HOST,
            "--port", str(port),
            "--dir", str(workdir),
            "--save", "",
            "--appendonly", "no",
            "--databases", str(DATABASES),
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--logfile", str(log),
        ]  # fmt: skip
        with log.with_suffix(".out").open("wb") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        try:
            if _wait_for_ping(proc, server):
                yield server
                return
        finally:
            _stop(proc, server)
        if attempt == attempts - 1:
            pytest.fail(f"redis-server exited at start ({attempts} ports tried):\n{_tail(log)}", pytrace=False)
    raise AssertionError("unreachable")
