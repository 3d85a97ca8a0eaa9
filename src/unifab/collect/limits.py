"""Bounds on reading one live device: a total deadline and a byte cap, whatever the device sends.

A per-read socket timeout does not bound a collect: a server that drips one byte every two seconds never
lets a read time out, and a reply announcing 2 GiB would be read into memory. A :class:`Budget` is the
limit of one device's collect (one adapter instance):

* **time**: every connect and read gets at most the time that is left (:meth:`Budget.timeout`); so does the
  name lookup (:meth:`Budget.resolve`: ``getaddrinfo`` cannot be interrupted, so it runs in a thread that is
  abandoned when the deadline passes, and the connection goes to the address it found); for HTTP,
  where httpx keeps one read timeout for a whole response, a watchdog thread shuts the device's sockets
  down when the deadline passes, so a blocked read returns at once (:meth:`Budget.watch`).
* **bytes**: every byte received from the device counts (:meth:`Budget.take`), decoded bytes for HTTP (a
  gzip bomb counts by what it expands to); past ``max_bytes`` the read stops.

Running out raises :class:`BudgetExceeded`; each adapter turns it into its own error naming the device, so
the device fails and the others go on. :func:`http_read` streams one HTTP exchange under a budget;
:class:`BudgetSocket` wraps a socket (the SONiC Redis connection) so every ``recv`` is bounded.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from unifab.errors import UnifabError

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_MAX_BYTES",
    "Budget",
    "BudgetExceeded",
    "BudgetSocket",
    "HttpReply",
    "http_read",
]

DEFAULT_DEADLINE_S = 120.0  # one device, every request included
DEFAULT_MAX_BYTES = 256 * 2**20  # what one device may send in one collect (a large SONiC COUNTERS_DB is ~50 MB)
MIN_WAIT_S = 0.001  # a socket timeout of 0 would mean non-blocking


class BudgetExceeded(UnifabError):
    """One device used up its budget: ``deadline`` is True when time ran out, False when bytes did."""

    def __init__(self, reason: str, *, deadline: bool) -> None:
        self.reason = reason
        self.deadline = deadline
        super().__init__(reason)


class Budget:
    """The time and bytes one device's collect may use; the clock starts at creation.

    Thread-safe: the watchdog runs in its own thread. Use as a context manager (or call :meth:`close`) to
    stop the watchdog.
    """

    def __init__(self, deadline_s: float | None = DEFAULT_DEADLINE_S, max_bytes: int | None = DEFAULT_MAX_BYTES):
        if deadline_s is not None and deadline_s <= 0:
            raise ValueError(f"the deadline must be positive, got {deadline_s}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"the byte cap must be at least 1, got {max_bytes}")
        self.deadline_s = math.inf if deadline_s is None else deadline_s
        self.max_bytes = math.inf if max_bytes is None else max_bytes
        self.started = time.monotonic()
        self.received = 0
        self._tripped: BudgetExceeded | None = None
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer: threading.Timer | None = None
        self._closed = False
        self._resolved: dict[tuple[str, int], str] = {}

    # -- time --------------------------------------------------------------------------------------

    def remaining(self) -> float:
        return self.deadline_s - (time.monotonic() - self.started)

    def expired(self) -> bool:
        return self.remaining() <= 0

    def deadline_error(self) -> BudgetExceeded:
        return BudgetExceeded(f"no complete answer within the {self.deadline_s:g} s deadline", deadline=True)

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` when the deadline has passed or the cap was crossed."""
        if self._tripped is not None:
            raise self._tripped
        if self.expired():
            self._trip(self.deadline_error())
            raise self.deadline_error()

    def timeout(self, per_op: float | None) -> float:
        """The timeout for the next connect or read: ``per_op``, or less when the deadline is nearer."""
        self.check()
        left = self.remaining()
        wanted = left if per_op is None else min(per_op, left)
        return max(wanted, MIN_WAIT_S)

    @property
    def tripped(self) -> BudgetExceeded | None:
        """Why the budget ran out, once it did (the watchdog's shutdown shows up as a transport error)."""
        if self._tripped is None and self.expired():
            self._trip(self.deadline_error())
        return self._tripped

    def resolve(self, host: str, port: int) -> str:
        """``host``'s first address, looked up within what is left of the deadline (an address is returned as is).

        Raises :class:`BudgetExceeded` when the lookup outlasts the deadline and :class:`OSError` (``socket.gaierror``)
        when the name does not resolve. Answers are kept for the rest of the collect, so one device costs one lookup.
        """
        bare = host.strip("[]")
        try:
            ipaddress.ip_address(bare)
            return bare
        except ValueError:
            pass
        with self._lock:
            known = self._resolved.get((host, port))
        if known is not None:
            return known
        answer: list[str] = []
        failure: list[OSError] = []

        def lookup() -> None:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                answer.extend(str(info[4][0]) for info in infos)
            except OSError as exc:
                failure.append(exc)

        worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
        worker.start()
        worker.join(self.timeout(None))
        if worker.is_alive():
            error = BudgetExceeded(
                f"the name lookup of {host} did not answer within the {self.deadline_s:g} s deadline", deadline=True
            )
            self._trip(error)
            raise error
        if failure:
            raise failure[0]
        if not answer:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} has no address")
        with self._lock:
            self._resolved[(host, port)] = answer[0]
        return answer[0]

    # -- bytes -------------------------------------------------------------------------------------

    def take(self, n: int) -> None:
        """Count ``n`` more bytes from the device; raise once more than ``max_bytes`` came."""
        with self._lock:
            self.received += n
            over = self.received > self.max_bytes
        if over:
            error = BudgetExceeded(self.size_reason(), deadline=False)
            self._trip(error)
            raise error
        self.check()

    def size_reason(self, announced: int | None = None) -> str:
        what = f"announced {announced:,} bytes" if announced is not None else f"sent more than {self.max_bytes:,} bytes"
        return f"the reply is too large: it {what}, the cap is {self.max_bytes:,} bytes (max_bytes)"

    def refuse_announced(self, announced: int) -> None:
        """A reply that says up front it is larger than what is left of the cap is refused unread."""
        if self.received + announced > self.max_bytes:
            error = BudgetExceeded(self.size_reason(announced), deadline=False)
            self._trip(error)
            raise error

    # -- the watchdog ------------------------------------------------------------------------------

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it has), waking any read blocked on it."""
        with self._lock:
            if self._closed:
                return
            self._sockets.append(sock)
            start = self._timer is None and math.isfinite(self.deadline_s)
            if start:
                self._timer = threading.Timer(max(self.remaining(), 0.0), self._expire)
                self._timer.daemon = True
                self._timer.start()
        if self.expired():
            self._expire()

    def httpx_trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's ``trace`` request extension: watch each socket httpcore opens (TCP, then TLS over it)."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                self.watch(sock)

    def _expire(self) -> None:
        self._trip(self.deadline_error())
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            # the base class's shutdown: an SSLSocket's own would drop its state under a reading thread
            with contextlib.suppress(OSError):  # already closed
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def _trip(self, error: BudgetExceeded) -> None:
        with self._lock:
            if self._tripped is None:
                self._tripped = error

    def close(self) -> None:
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
            self._sockets.clear()
        if timer is not None:
            timer.cancel()

    def __enter__(self) -> Budget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class HttpReply:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes


def http_read(
    client: httpx.Client,
    method: str,
    url: str,
    budget: Budget,
    *,
    per_read_timeout: float | None,
    content: bytes | None = None,
) -> HttpReply:
    """One request under ``budget``: the reply streamed (decoded) into memory up to the budget's byte cap.

    Raises :class:`BudgetExceeded` when the deadline passes or the reply is too large (a ``Content-Length``
    over the cap is refused before any of the body is read); httpx's own errors (connect, TLS, a body that
    cannot be decoded) pass through for the caller to name. The host name is looked up under the budget
    (:meth:`Budget.resolve`) and the request sent to that address with the name kept in ``Host`` and in TLS
    (SNI and certificate check), so a resolver that never answers cannot outlast the deadline either.
    """
    target = httpx.URL(url)
    extensions: dict[str, Any] = {"trace": budget.httpx_trace}
    headers: dict[str, str] = {}
    port = target.port or (443 if target.scheme == "https" else 80)
    try:
        address = budget.resolve(target.host, port)
    except socket.gaierror as exc:
        raise httpx.ConnectError(f"cannot resolve {target.host}: {exc.strerror or exc}") from None
    if address != target.host.strip("[]"):
        headers["Host"] = target.netloc.decode("ascii")
        extensions["sni_hostname"] = target.host
        target = target.copy_with(host=address)
    wait = budget.timeout(per_read_timeout)
    timeout = httpx.Timeout(wait)
    try:
        with client.stream(
            method, target, content=content, headers=headers, timeout=timeout, extensions=extensions
        ) as response:
            announced = response.headers.get("content-length")
            if announced is not None and announced.strip().isdigit():
                budget.refuse_announced(int(announced))
            body = bytearray()
            for chunk in response.iter_bytes():
                budget.take(len(chunk))
                body += chunk
            return HttpReply(response.status_code, response.reason_phrase, response.headers, bytes(body))
    except httpx.TransportError:
        tripped = budget.tripped  # the watchdog shut the socket: say so, not "connection reset"
        if tripped is not None:
            raise tripped from None
        raise


class BudgetSocket:
    """A connected socket whose every ``recv``/``send`` is bounded by a :class:`Budget`.

    The owner's ``settimeout`` is kept as the per-operation timeout; each operation waits at most that or
    what is left of the deadline, and every byte received counts against the cap. Everything else is the
    socket's own.
    """

    def __init__(self, sock: socket.socket, budget: Budget) -> None:
        self._sock = sock
        self._budget = budget
        self._per_op: float | None = sock.gettimeout()

    def settimeout(self, value: float | None) -> None:
        self._per_op = value
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        return self._per_op

    def _bounded(self) -> None:
        if self._per_op == 0:  # non-blocking use (a poll): leave it alone
            self._budget.check()
            return
        self._sock.settimeout(self._budget.timeout(self._per_op))

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._bounded()
        data = self._sock.recv(bufsize, flags)
        self._budget.take(len(data))
        return data

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._bounded()
        n = self._sock.recv_into(buffer, nbytes, flags)
        self._budget.take(n)
        return n

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._bounded()
        self._sock.sendall(data, flags)

    def send(self, data: Any, flags: int = 0) -> int:
        self._bounded()
        return self._sock.send(data, flags)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)
