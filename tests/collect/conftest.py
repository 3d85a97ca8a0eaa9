"""Shared collect fixtures: a one-host twin to damage (``small``, ``bundle``), and hostile servers on loopback:
real sockets in threads, nothing mocked.

``hostile.start(name)`` starts a raw TCP server on 127.0.0.1 (port 0) that reads one request (an HTTP request up to the
end of its body, or whatever a Redis client sends first) and then runs one of the behaviours below on the
connection: drip a reply one byte at a time, announce or stream a reply far over any cap, send a body that
is not the gzip it claims, or send bytes that are not RESP. Every server stops at the end of the test.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HOST = "127.0.0.1"
DRIP_S = 0.25  # between two bytes: shorter than any per-read timeout the tests set
GIB = 2**30

Behaviour = Callable[[socket.socket, threading.Event], None]


def _read_http_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _drip(conn: socket.socket, stop: threading.Event, data: bytes, then_forever: bytes = b"x") -> None:
    for i in range(len(data)):
        if stop.wait(DRIP_S):
            return
        conn.sendall(data[i : i + 1])
    while not stop.wait(DRIP_S):
        conn.sendall(then_forever)


def drip_body(conn: socket.socket, stop: threading.Event) -> None:
    """A 200 announcing a megabyte of JSON, then one byte every DRIP_S: no read ever times out."""
    _read_http_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
    _drip(conn, stop, b'{"jsonrpc": "2.0", "id": "unifab-1", "result": [', b" ")


def drip_headers(conn: socket.socket, stop: threading.Event) -> None:
    """The status line and headers themselves, one byte every DRIP_S, never ending."""
    _read_http_request(conn)
    _drip(conn, stop, b"HTTP/1.1 200 OK\r\nX-Padding: ", b"a")


def announce_2gib(conn: socket.socket, stop: threading.Event) -> None:
    """A 200 whose Content-Length is 2 GiB; the body follows for as long as the client reads."""
    _read_http_request(conn)
    conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {2 * GIB}\r\n\r\n".encode())
    _stream(conn, stop, 2 * GIB, chunked=False)


def stream_2gib_chunked(conn: socket.socket, stop: threading.Event) -> None:
    """A chunked 200 with no length up front, streaming 2 GiB of spaces for as long as the client reads."""
    _read_http_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    _stream(conn, stop, 2 * GIB, chunked=True)


def _stream(conn: socket.socket, stop: threading.Event, total: int, *, chunked: bool) -> None:
    block = b" " * 65536
    frame = f"{len(block):x}\r\n".encode() + block + b"\r\n" if chunked else block
    sent = 0
    with contextlib.suppress(OSError):  # the client hung up: that is the point
        while sent < total and not stop.is_set():
            conn.sendall(frame)
            sent += len(block)


def bad_gzip(conn: socket.socket, stop: threading.Event) -> None:
    """A 200 that says its body is gzip and is not."""
    _read_http_request(conn)
    body = b"this is not gzip, whatever the header says"
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}"
    conn.sendall(head.encode() + b"\r\n\r\n" + body)


def not_resp(conn: socket.socket, stop: threading.Event) -> None:
    """A "Redis" that answers a bulk string whose length is not a number (redis-py's parser: int(b"x"))."""
    conn.recv(65536)
    conn.sendall(b"$x\r\n")
    stop.wait(5)


def drip_resp(conn: socket.socket, stop: threading.Event) -> None:
    """A "Redis" that answers every command with a bulk string of a million bytes, one byte every DRIP_S."""
    conn.recv(65536)
    _drip(conn, stop, b"$1000000\r\n", b"x")


BEHAVIOURS: dict[str, Behaviour] = {
    "drip_body": drip_body,
    "drip_headers": drip_headers,
    "announce_2gib": announce_2gib,
    "stream_2gib_chunked": stream_2gib_chunked,
    "bad_gzip": bad_gzip,
    "not_resp": not_resp,
    "drip_resp": drip_resp,
}


@dataclass
class Hostile:
    """Start raw servers with a behaviour; all stop (and their connections close) at the end of the test."""

    stop: threading.Event = field(default_factory=threading.Event)
    sockets: list[socket.socket] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, name: str) -> int:
        """A server on a free loopback port running the behaviour ``name`` (a key of BEHAVIOURS)."""
        behaviour = BEHAVIOURS[name]
        server = socket.socket()
        server.bind((HOST, 0))
        server.listen(16)
        server.settimeout(0.1)
        self.sockets.append(server)
        thread = threading.Thread(target=self._accept, args=(server, behaviour), daemon=True)
        thread.start()
        self.threads.append(thread)
        return int(server.getsockname()[1])

    def _accept(self, server: socket.socket, behaviour: Behaviour) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(None)
            with self.lock:
                self.sockets.append(conn)
            worker = threading.Thread(target=self._run, args=(conn, behaviour), daemon=True)
            worker.start()
            with self.lock:
                self.threads.append(worker)

    def _run(self, conn: socket.socket, behaviour: Behaviour) -> None:
        with contextlib.suppress(OSError):
            behaviour(conn, self.stop)

    def close(self) -> None:
        self.stop.set()
        with self.lock:
            sockets, threads = list(self.sockets), list(self.threads)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()
        for thread in threads:
            thread.join(5)


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    servers = Hostile()
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="session")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-host (8-GPU) clean twin, read-only: ``gpu001`` behind its leaves."""
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("small") / "bundle"
    generate(out, gpus=8, seed=0)
    return out


@pytest.fixture
def bundle(small: Path, tmp_path: Path) -> Path:
    """A copy of ``small`` for one test to damage (test modules with their own ``bundle`` override it)."""
    copy = tmp_path / "bundle"
    shutil.copytree(small, copy)
    return copy
