"""``unifab agent run``: collect this host every interval and deliver what changed to ``unifab serve``, durably.

One loop, one thread of control (the collect and each HTTP request run in a worker thread only so that a
stop signal never waits for them):

1. **collect** (every ``interval`` seconds) with :func:`unifab.collect.host_live.collect_host` into the
   spool's private ``collect/`` directory; what the host lacks or cannot read is logged once per change;
2. **changed?** the host part's content digest (``collect.json``'s times and the wording of its missing
   reasons left out: :func:`content_digest`) against the last snapshot's; unchanged: nothing is spooled;
3. **spool** a changed one (:mod:`unifab.agent.spool`: atomic, bounded) under a deterministic id
   ``<host>-<seq:08d>-<sha256 of the upload, 12 hex>``;
4. **drain** the spool oldest first to ``POST /api/v1/snapshots`` (the id in ``X-Unifab-Snapshot-Id``, the
   dropped-snapshots note in ``X-Unifab-Dropped-Snapshots``); stored (201/202) or already stored (200)
   removes the entry; the first failure stops the drain until a retry time (exponential backoff with full
   jitter, capped; collecting goes on meanwhile);
5. **heartbeat** (every interval, also when nothing changed): ``POST /api/v1/agents/<host>/heartbeat``.

Every event is one logfmt line on stderr (``ts=… level=… event=… key=value …``), which journald keeps as it
is. The token file is read again for every request, so a rotated token is used at once. Nothing a
controller, a token, the disk or the host can do stops the loop; only a stop signal (``stop`` set) does.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import orjson

from unifab.agent.backoff import Backoff
from unifab.agent.config import AgentConfig
from unifab.agent.spool import COLLECT_DIR, Entry, Spool, SpoolError

__all__ = [
    "DROPPED_HEADER",
    "EXIT_DELIVERED",
    "EXIT_PENDING",
    "Agent",
    "Controller",
    "EventLog",
    "Outcome",
    "content_digest",
    "snapshot_id",
]

DROPPED_HEADER = "X-Unifab-Dropped-Snapshots"
EXIT_DELIVERED = 0  # --once: everything produced is on the controller (or nothing changed)
EXIT_PENDING = 1  # --once: something waits in the spool (the controller could not take it now)
PUSH_TIMEOUT = 150.0  # the server answers once a re-check covered the upload (202 after 120 s)
VOLATILE = ("started", "finished", "last_attempt")  # collect.json keys that change on every collect


class EventLog:
    """One logfmt line per event on a stream (stderr): ``ts=… level=… event=… key=value``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()

    def __call__(self, level: str, event: str, **fields: Any) -> None:
        from unifab.report.text import display

        ts = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        parts = [f"ts={ts}", f"level={level}", f"event={event}"]
        for key, value in fields.items():
            if value is None:
                continue
            text = display(value if isinstance(value, str) else _scalar(value))
            if text == "" or any(c in text for c in ' "=\\'):
                text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
            parts.append(f"{key}={text}")
        with self._lock:
            try:
                self.stream.write(" ".join(parts) + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass  # a closed stderr must not stop the agent


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _version() -> str:
    """The installed unifab's version (the package root is above this layer, so not ``unifab.__version__``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unifab")
    except PackageNotFoundError:
        return "unknown"


def snapshot_id(host: str, seq: int, data: bytes) -> str:
    """``<host>-<seq:08d>-<12 hex of the upload's SHA-256>``: the same spooled snapshot, the same id, always."""
    return f"{host}-{seq:08d}-{hashlib.sha256(data).hexdigest()[:12]}"


def content_digest(host_dir: Path) -> str:
    """SHA-256 over the host part's files (names and bytes), with ``collect.json``'s times left out: two collects
    of an unchanged host give the same digest."""
    digest = hashlib.sha256()
    files = sorted(p for p in host_dir.rglob("*") if p.is_file())
    for path in files:
        rel = path.relative_to(host_dir).as_posix()
        body = path.read_bytes()
        if rel == "collect.json":
            try:
                doc = orjson.loads(body)
                if isinstance(doc, dict):
                    body = orjson.dumps(_steady(doc), option=orjson.OPT_SORT_KEYS)
            except orjson.JSONDecodeError:
                pass
        digest.update(f"{len(rel)}:{rel}:{len(body)}:".encode())
        digest.update(body)
    return digest.hexdigest()


def _steady(doc: dict[str, Any]) -> dict[str, Any]:
    """``collect.json`` without what differs between two collects of an unchanged host: its times, and the
    wording of why a file is missing (a tool's error message may carry its own clock); which files are
    missing still counts."""
    steady = {k: v for k, v in doc.items() if k not in VOLATILE}
    missing = steady.get("missing")
    if isinstance(missing, list):
        steady["missing"] = sorted(str(m.get("path")) if isinstance(m, dict) else str(m) for m in missing)
    return steady


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one request to the controller came to."""

    kind: str  # stored | duplicate | rejected | token | unreachable | in_doubt | failed
    message: str
    status: int | None = None
    doc: dict[str, Any] | None = None

    @property
    def delivered(self) -> bool:
        return self.kind in ("stored", "duplicate")


class Controller:
    """HTTP to one ``unifab serve``; the token file is read for every request (rotation works at once)."""

    def __init__(self, url: str, token_file: Path, *, timeout: float = PUSH_TIMEOUT) -> None:
        base = url.rstrip("/")
        self.base = base.removesuffix("/api/v1/snapshots")
        self.token_file = token_file
        self.timeout = timeout
        self._client: Any = None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def push(self, snapshot: str, data: bytes, dropped: int) -> Outcome:
        headers = {"Content-Type": "application/gzip", "X-Unifab-Snapshot-Id": snapshot}
        if dropped:
            headers[DROPPED_HEADER] = str(dropped)
        return self._post(f"{self.base}/api/v1/snapshots", headers, data, rejects=(400, 413, 422))

    def heartbeat(self, host: str, body: dict[str, Any]) -> Outcome:
        headers = {"Content-Type": "application/json"}
        return self._post(f"{self.base}/api/v1/agents/{host}/heartbeat", headers, orjson.dumps(body), rejects=(422,))

    def _post(self, url: str, headers: dict[str, str], body: bytes, rejects: tuple[int, ...]) -> Outcome:
        import httpx

        from unifab.serve.client import PushError, read_token

        try:
            token = read_token(self.token_file)
        except PushError as exc:
            return Outcome("token", f"token_file {exc}")
        headers = {**headers, "Authorization": f"Bearer {token}"}
        try:
            response = self._http().post(url, content=body, headers=headers)
        except httpx.ConnectError as exc:
            reason = "connection refused" if "refused" in str(exc).lower() else str(exc) or type(exc).__name__
            return Outcome("unreachable", f"cannot reach {url}: {reason}")
        except httpx.ConnectTimeout:
            return Outcome("unreachable", f"cannot reach {url}: no connection within {self.timeout:g} s")
        except httpx.TimeoutException:
            return Outcome("in_doubt", f"{url}: no answer within {self.timeout:g} s")
        except httpx.HTTPError as exc:  # the connection broke after the request went out
            return Outcome("in_doubt", f"{url}: {type(exc).__name__}: {exc}")
        status = response.status_code
        from unifab.serve.client import response_detail

        detail = response_detail(response)
        if status in (200, 201, 202):
            try:
                doc = response.json()
            except ValueError:
                doc = None
            kind = "duplicate" if isinstance(doc, dict) and doc.get("duplicate") else "stored"
            return Outcome(kind, detail, status, doc if isinstance(doc, dict) else None)
        if status in (401, 403):
            why = "the controller does not accept the token" if status == 401 else "the token may not send this"
            return Outcome("token", f"{url}: {why} ({status}): {detail}", status)
        if status in rejects:
            return Outcome("rejected", f"{url}: the controller refused it ({status}): {detail}", status)
        if status >= 500:
            return Outcome("in_doubt", f"{url}: the controller failed ({status}): {detail}", status)
        return Outcome("failed", f"{url}: unexpected answer ({status}): {detail}", status)


@dataclass(slots=True)
class Agent:
    """The run loop (see the module docstring). :meth:`run` returns the exit code."""

    config: AgentConfig
    stop: threading.Event = field(default_factory=threading.Event)
    log: Callable[..., None] = field(default_factory=EventLog)
    rng: random.Random = field(default_factory=random.Random)
    version: str = ""
    spool: Spool = field(init=False)
    controller: Controller = field(init=False)
    backoff: Backoff = field(init=False)
    unspooled: tuple[str, bytes] | None = None  # a snapshot the spool could not take (a full disk)
    collect_failed: bool = False  # the last collect could not be written (a full disk)
    _missing: dict[str, str] = field(default_factory=dict)
    _heartbeat_failing: str | None = None

    def __post_init__(self) -> None:
        cfg = self.config
        if not self.version:
            self.version = _version()
        self.spool = Spool(cfg.spool_dir, cfg.spool_max_bytes, cfg.spool_max_snapshots, self.log)
        self.controller = Controller(cfg.controller, cfg.token_file)
        base = max(0.1, min(1.0, cfg.interval / 4))
        self.backoff = Backoff(base=base, cap=min(300.0, max(1.0, 5 * cfg.interval)), rng=self.rng)

    # ------------------------------------------------------------------------------------- the loop

    def run(self, *, once: bool = False) -> int:
        """Until ``stop`` is set (exit 0), or one cycle with ``once`` (0 delivered, 1 left in the spool).
        :class:`SpoolError` when the spool directory cannot be used at all (the caller exits 2)."""
        cfg = self.config
        self.spool.open()
        self.log(
            "info",
            "started",
            host=cfg.hostname,
            controller=cfg.controller,
            interval=cfg.interval,
            spool=str(cfg.spool_dir),
            spooled=self.spool.depth,
            version=self.version,
            uid=os.getuid() if hasattr(os, "getuid") else None,
        )
        next_collect = time.monotonic()
        next_push = next_collect
        try:
            while not self.stop.is_set():
                collected = False
                if time.monotonic() >= next_collect:
                    next_collect = time.monotonic() + cfg.interval
                    self._collect()
                    collected = True
                if self._pending() and time.monotonic() >= next_push and not self.stop.is_set():
                    if self._drain():
                        self.backoff.reset()
                        next_push = time.monotonic()
                    else:
                        delay = self.backoff.next_delay()
                        next_push = time.monotonic() + delay
                        self.log("info", "retry_scheduled", retry_in=round(delay, 3), spooled=self.spool.depth)
                if collected and not self.stop.is_set():
                    self._heartbeat()
                if once:
                    break
                wake = next_collect if not self._pending() else min(next_collect, next_push)
                self.stop.wait(max(0.0, wake - time.monotonic()))
        finally:
            self._save_state()
            self.controller.close()
        pending = self._pending()
        self.log("info", "stopped", spooled=self.spool.depth, unspooled=self.unspooled is not None)
        if once:
            return EXIT_PENDING if pending or self.collect_failed else EXIT_DELIVERED
        return 0

    def _pending(self) -> bool:
        return bool(self.spool.entries) or self.unspooled is not None

    def _background(self, fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """``(True, fn(*args))``, or ``(False, None)`` when a stop came first (the call is abandoned)."""
        box: dict[str, Any] = {}
        done = threading.Event()

        def target() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # handed to the loop's thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=target, name="unifab-agent-io", daemon=True).start()
        while not done.wait(0.05):
            if self.stop.is_set():
                return False, None
        if "error" in box:
            raise box["error"]
        return True, box.get("value")

    # ------------------------------------------------------------------------------------- collect

    def _collect(self) -> None:
        from unifab.collect.host_live import collect_host
        from unifab.errors import UnifabError
        from unifab.serve.ingest import pack_directory

        cfg = self.config
        staging = cfg.spool_dir / COLLECT_DIR
        host_part = f"hosts/{cfg.hostname}"
        try:
            finished, report = self._background(
                lambda: collect_host(
                    staging, root=cfg.root, hostname=cfg.hostname, timeout=cfg.command_timeout, sudo=cfg.sudo
                )
            )
            if not finished:
                return
            data = pack_directory(staging, [host_part])
            digest = content_digest(staging / host_part)
        except (UnifabError, OSError) as exc:
            self.collect_failed = True
            self.log("error", "collect_failed", host=cfg.hostname, reason=str(exc)[:300])
            return
        self.collect_failed = False
        self._report_missing(report.missing)
        state = self.spool.state
        if digest == state.last_digest:
            self.log("info", "unchanged", host=cfg.hostname, files=len(report.files))
            return
        seq = self.spool.next_seq()
        sid = snapshot_id(cfg.hostname, seq, data)
        lost = self.unspooled
        try:
            added = self.spool.add(sid, seq, data, also_dropped=1 if lost else 0)
        except SpoolError as exc:
            if lost is not None:
                self.log("warning", "dropped", id=lost[0], reason="superseded before it could be spooled")
                state.dropped_total += 1
            self.unspooled = (sid, data)
            state.last_seq, state.last_digest, state.last_snapshot = seq, digest, sid
            self.log(
                "error",
                "spool_write_failed",
                id=sid,
                reason=str(exc),
                action=f"kept the {self.spool.depth} spooled snapshots; this one is held in memory only",
            )
            return
        state.last_seq, state.last_digest, state.last_snapshot = seq, digest, sid
        if lost is not None:
            self.unspooled = None
            state.dropped_total += 1
            self.log("warning", "dropped", id=lost[0], reason="superseded before it could be spooled")
        for old in added.dropped:
            state.dropped_total += 1
            self.log(
                "warning",
                "dropped",
                id=old.id,
                reason=f"spool full (at most {self.spool.max_snapshots} snapshots, {self.spool.max_bytes} bytes); "
                "the oldest go first",
            )
        self.log(
            "info",
            "spooled",
            id=sid,
            bytes=len(data),
            files=len(report.files),
            spooled=self.spool.depth,
            dropped_before=added.entry.dropped or None,
        )
        if added.oversize:
            self.log("warning", "spool_over_bound", id=sid, reason="the latest snapshot alone is over spool_max_bytes")
        self._save_state()

    def _report_missing(self, missing: Any) -> None:
        """One line per file that became missing or unreadable (and one when it is back), not one per collect."""
        now = {m.path: m.reason for m in missing}
        for path in sorted(now.keys() - self._missing.keys()):
            level = "warning" if now[path].startswith("cannot read") else "info"
            self.log(level, "host_file_missing", path=f"{self.config.hostname}/{path}", reason=now[path])
        for path in sorted(self._missing.keys() - now.keys()):
            self.log("info", "host_file_back", path=f"{self.config.hostname}/{path}", was=self._missing[path])
        self._missing = now

    def _save_state(self) -> None:
        try:
            self.spool.save_state()
        except SpoolError as exc:
            self.log("warning", "state_write_failed", reason=str(exc))

    # ------------------------------------------------------------------------------------- push

    def _drain(self) -> bool:
        """Push the spool oldest first (then a snapshot held in memory); ``False`` at the first failure."""
        for entry in list(self.spool.entries):
            if self.stop.is_set():
                return True
            if not self._push_entry(entry):
                return False
        if self.unspooled is not None and not self.spool.entries and not self.stop.is_set():
            sid, data = self.unspooled
            ok, outcome = self._background(self.controller.push, sid, data, 0)
            if not ok:
                self.log("info", "push_abandoned", id=sid, reason="stopping")
                return True
            if outcome.delivered or outcome.kind == "rejected":
                self.unspooled = None
            self._log_outcome(sid, outcome)
            return bool(outcome.delivered or outcome.kind == "rejected")
        return True

    def _push_entry(self, entry: Entry) -> bool:
        data = self.spool.payload(entry)
        if data is None:
            return True  # set aside as corrupt (logged); the next one
        ok, outcome = self._background(self.controller.push, entry.id, data, entry.dropped)
        if not ok:
            self.log("info", "push_abandoned", id=entry.id, reason="stopping; it stays in the spool")
            return True
        state = self.spool.state
        if outcome.delivered or outcome.kind == "rejected":
            self.spool.remove(entry)
        self._log_outcome(entry.id, outcome, dropped_before=entry.dropped or None)
        if outcome.delivered or outcome.kind == "rejected":
            if state.in_doubt == entry.id:
                state.in_doubt = None
                self._save_state()
            return True
        if outcome.kind == "in_doubt" and state.in_doubt != entry.id:
            state.in_doubt = entry.id  # the controller may have stored it: never drop it, replay it
            self._save_state()
        return False

    def _log_outcome(self, sid: str, outcome: Outcome, **extra: Any) -> None:
        if outcome.delivered:
            mode = outcome.doc.get("mode") if outcome.doc else None
            self.log(
                "info",
                "pushed",
                id=sid,
                status=outcome.status,
                result="already stored" if outcome.kind == "duplicate" else "stored",
                mode=mode,
                spooled=self.spool.depth,
                **extra,
            )
        elif outcome.kind == "rejected":
            self.log("error", "rejected", id=sid, reason=outcome.message, action="removed from the spool")
        else:
            level = "error" if outcome.kind == "token" else "warning"
            self.log(level, "push_failed", id=sid, kind=outcome.kind, reason=outcome.message)

    # ------------------------------------------------------------------------------------- heartbeat

    def _heartbeat(self) -> None:
        state = self.spool.state
        body = {
            "version": self.version,
            "spool_depth": self.spool.depth + (1 if self.unspooled else 0),
            "spool_bytes": self.spool.size_bytes,
            "dropped": state.dropped_total,
            "last_snapshot": state.last_snapshot,
            "interval": self.config.interval,
        }
        ok, outcome = self._background(self.controller.heartbeat, self.config.hostname, body)
        if not ok:
            return
        if outcome.delivered:
            if self._heartbeat_failing is not None:
                self.log("info", "heartbeat_restored", host=self.config.hostname)
            self._heartbeat_failing = None
            self.log("info", "heartbeat", spooled=body["spool_depth"], dropped=body["dropped"])
            return
        if self._heartbeat_failing != outcome.message:  # a long outage is one line, not one per interval
            level = "error" if outcome.kind == "token" else "warning"
            self.log(level, "heartbeat_failed", kind=outcome.kind, reason=outcome.message)
        self._heartbeat_failing = outcome.message
