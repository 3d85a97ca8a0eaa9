"""Fixtures of the ``unifab agent run`` tests: a real ``unifab serve`` (SQLite in the test's directory) that a
test may kill and restart, fake host roots whose files the test changes, and the agent as a subprocess.

The agents run with ``PATH`` set to an empty directory: every collect command is "not installed" (a fixed,
fast answer), so what changes between collects is only what the test writes into the fake root.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.serve.conftest import UNIFAB, Process, free_port


@dataclass
class Controller:
    """A ``unifab serve`` on a private port over a SQLite file; :meth:`start`, :meth:`kill`, :meth:`stop`."""

    work: Path
    port: int = field(default_factory=free_port)
    proc: Process | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    starts: int = 0

    @property
    def db(self) -> str:
        return str(self.work / "serve.db")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def create_tokens(self, **scopes: list[str] | None) -> None:
        """Tokens straight into the store: ``agent``, ``viewer``, ``admin`` and one agent token per scope."""
        from unifab.serve.service import Server, Settings

        server = Server(Settings(db=self.db), load=False)
        try:
            for role in ("agent", "viewer", "admin"):
                self.tokens[role] = server.create_token(role, role, "test").token
            for name, hosts in scopes.items():
                self.tokens[name] = server.create_token("agent", name, "test", hosts=hosts).token
        finally:
            server.close()

    def new_token(self, role: str = "agent", hosts: list[str] | None = None) -> tuple[str, str]:
        """(id, token) of a fresh token made over the API."""
        body: dict[str, Any] = {"role": role, "name": "rotated"}
        if hosts:
            body["hosts"] = hosts
        made = httpx.post(f"{self.url}/api/v1/tokens", json=body, headers=self.auth("admin"), timeout=30)
        made.raise_for_status()
        doc = made.json()
        return doc["id"], doc["token"]

    def start(self) -> None:
        self.starts += 1
        log = self.work / f"server-{self.starts}.log"
        self.proc = Process(["serve", "--db", self.db, "--port", str(self.port)], log, self.port)
        self.proc.wait_healthy(120)

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, as a crash or an OOM kill."""
        assert self.proc is not None
        self.proc.proc.kill()
        self.proc.proc.wait()
        self.proc.stop()
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def auth(self, role: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def get(self, path: str, role: str = "admin") -> Any:
        response = httpx.get(f"{self.url}{path}", headers=self.auth(role), timeout=30)
        response.raise_for_status()
        return response.json()

    def all(self, path: str, role: str = "admin") -> list[dict[str, Any]]:
        """Every item of a paged list."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            sep = "&" if "?" in path else "?"
            page = self.get(f"{path}{sep}limit=500" + (f"&cursor={cursor}" if cursor else ""), role)
            items += page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return items


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[Controller]:
    """A controller that is not started yet (tokens made): the test starts, kills and restarts it."""
    work = tmp_path / "controller"
    work.mkdir()
    made = Controller(work)
    made.create_tokens(gpu001=["gpu001"])
    try:
        yield made
    finally:
        made.stop()


def make_root(root: Path, nics: int = 1) -> Path:
    """A fake host / with RDMA NICs mlx5_<i> -> eth<i> (enough for collect_host to read something real)."""
    for i in range(nics):
        dev = root / "sys/class/infiniband" / f"mlx5_{i}"
        (dev / "device/net" / f"eth{i}").mkdir(parents=True)
        (dev / "device/net" / f"eth{i}" / "ifindex").write_text(f"{i + 2}\n")
        (dev / "device/uevent").write_text(f"DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:{0x17 + i:02x}:00.0\n")
        (dev / "fw_ver").write_text("28.39.1002\n")
        port = dev / "ports/1"
        (port / "hw_counters").mkdir(parents=True)
        (port / "state").write_text("4: ACTIVE\n")
        (port / "rate").write_text("400 Gb/sec (4X NDR)\n")
        (port / "link_layer").write_text("Ethernet\n")
        (port / "hw_counters/np_cnp_sent").write_text("0\n")
        net = root / "sys/class/net" / f"eth{i}"
        net.mkdir(parents=True)
        (net / "mtu").write_text("9000\n")
    return root


def bump(root: Path, value: int, nic: int = 0) -> None:
    """Change the host: a counter the collect copies (written atomically, as the kernel's files read)."""
    path = root / "sys/class/infiniband" / f"mlx5_{nic}" / "ports/1/hw_counters/np_cnp_sent"
    tmp = path.with_name(".np_cnp_sent.tmp")
    tmp.write_text(f"{value}\n")
    tmp.replace(path)


def agent_env(tmp_path: Path) -> dict[str, str]:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("UNIFAB_TOKEN", "STATE_DIRECTORY")}
    env["PATH"] = str(empty)
    return env


def run_agent(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``unifab agent run ARGS`` to completion (``--once`` or a bad configuration)."""
    return subprocess.run(
        [*UNIFAB, "agent", "run", *args],
        capture_output=True,
        text=True,
        env=agent_env(tmp_path),
        timeout=timeout,
        check=False,
    )


def start_agent(tmp_path: Path, log: Path, *args: str, **popen: Any) -> subprocess.Popen[bytes]:
    """``unifab agent run ARGS`` in the background, stderr (its log) to ``log``."""
    handle = log.open("wb")
    try:
        return subprocess.Popen(
            [*UNIFAB, "agent", "run", *args],
            stdout=subprocess.DEVNULL,
            stderr=handle,
            env=agent_env(tmp_path),
            **popen,
        )
    finally:
        handle.close()


def events(log_text: str, event: str | None = None) -> list[dict[str, str]]:
    """The agent's logfmt lines as dicts (``event`` keeps only those)."""
    import shlex

    out = []
    for line in log_text.splitlines():
        if "event=" not in line:
            continue
        fields = {}
        for token in shlex.split(line, posix=True):
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
        if event is None or fields.get("event") == event:
            out.append(fields)
    return out
