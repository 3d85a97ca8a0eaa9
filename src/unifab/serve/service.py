"""One server's state and its operations, independent of HTTP: ingest, re-check, tokens, start-up recovery.

:class:`Server` ties the store, the live fabric and the metrics together. An ingest (:meth:`Server.ingest`)
is: refuse a known snapshot id (a retry stores nothing twice and answers with what the first stored),
check the upload (:mod:`unifab.serve.ingest`) and the token's scope, **accept** it (one transaction: the
snapshot, its parts, a pending job, the audit entry), then wait until a re-check has covered the job —
this replica's, or another's (:mod:`unifab.serve.work`). :meth:`Server.recheck` is that work: take the
claim, catch the live fabric up from the store, re-check incrementally, write findings, devices and the
jobs in one transaction. Several replicas on one PostgreSQL share it; docs/serve.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from unifab.serve import work
from unifab.serve.auth import READ, ROLES, NewToken, Principal, TokenCache, new_token, split_token, verify_secret
from unifab.serve.fabric_views import FabricIndex, Latest
from unifab.serve.health_view import HealthView
from unifab.serve.health_view import build as build_health
from unifab.serve.ingest import IngestError, pack_directory, pack_part, parse_upload, unpack_part, upload_id
from unifab.serve.live import LiveFabric, combined, current_findings, device_states, ib_switches
from unifab.serve.metrics import Metrics
from unifab.serve.render_view import RenderCache
from unifab.serve.store import Heartbeat, Store
from unifab.serve.store_views import unfilled_units
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.api import Finding, Session
    from unifab.collect.record_cache import RecordCache

V = TypeVar("V")

__all__ = ["DEFAULT_DB", "Server", "Settings", "pack_directory"]

log = logging.getLogger("unifab.serve")
DEFAULT_DB = "unifab-serve.db"


@dataclass(frozen=True, slots=True)
class Settings:
    db: str = DEFAULT_DB  # a SQLAlchemy URL or a SQLite file path
    bundle: Path | None = None  # a bundle directory to ingest at start-up
    max_upload_bytes: int = 256 * 1024 * 1024  # as sent (gzipped)
    max_unpacked_bytes: int = 1024 * 1024 * 1024
    metrics_public: bool = True  # /metrics without a token, as scrapers expect
    recheck_wait: float = 120.0  # an ingest answers 202 (queued) when no re-check covered it by then
    poll_seconds: float = 2.0  # how often a replica looks for work nobody took (a replica died mid-ingest)
    cache: RecordCache | None = None  # the parsed-record cache a full load of the fabric reads through


class Server:
    """The store, the live fabric, the metrics and the token cache of one ``unifab serve`` process."""

    def __init__(self, settings: Settings, *, load: bool = True) -> None:
        """``load=False``: only the store (token commands), no fabric, no start-up re-check."""
        self.settings = settings
        self.store = Store.open(settings.db)
        self.live = LiveFabric(settings.cache)
        self.metrics = Metrics(self.store, links=self.link_status)
        self.tokens = TokenCache()
        self.views: Latest[FabricIndex] = Latest()  # the live fabric indexed for links, jobs and topology
        self.health: Latest[HealthView] = Latest()  # incidents from the live fabric's telemetry
        self.renders = RenderCache()
        self.replica = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._claim = threading.Lock()  # this process's share of the claim (SKIP LOCKED within the process)
        # SQLite has no row locks and one writer: this process serializes its writes itself
        self._writes: contextlib.AbstractContextManager[Any] = (
            threading.Lock() if self.store.dialect == "sqlite" else contextlib.nullcontext()
        )
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        if load:
            self._restore()
        if load and settings.bundle is not None:
            created, doc = self.ingest(pack_directory(settings.bundle), None, Principal("cli", "admin"))
            log.info("bundle %s: %s (%s)", settings.bundle, doc["id"], "ingested" if created else "already stored")

    def close(self) -> None:
        self.stop_polling()
        self.store.close()

    def _restore(self) -> None:
        """Rebuild the live fabric from the stored parts, then finish what is pending (or re-sync findings)."""
        try:
            self.catch_up()
        except Exception as exc:
            log.warning("stored bundle cannot be loaded: %s", exc)
            return
        if self.live.session is not None:
            self.recheck(force=True)

    # ------------------------------------------------------------------------------------- the work

    def catch_up(self) -> int:
        """Apply the stored parts newer than the live fabric's generation; the generation it is at now."""
        with self.live.lock, self.store.engine.connect() as conn:
            return self._catch_up(work.changed_since(conn, self.live.generation))

    def _catch_up(self, changed: list[work.Changed]) -> int:
        if changed:
            parts = {c.unit: unpack_part(c.data, f"store:{c.unit}") for c in changed}
            applied = self.live.apply(parts)
            self.live.unreported.append(applied)
            self.live.generation = max(c.generation for c in changed)
        return self.live.generation

    def recheck(self, *, force: bool = False) -> bool:
        """Do the pending re-check work if this replica gets the claim; ``False`` when another one holds it.

        ``force``: write a round even with no job pending (at start-up: the checks may have changed).
        """
        if not self._claim.acquire(blocking=False):
            return False
        try:
            while True:
                with self._writes, self.store.engine.connect() as conn, conn.begin():
                    checked = work.claim(conn)
                    if checked is None:
                        return False
                    if not self._round(conn, checked, force):
                        return True
                force = False
        finally:
            self._claim.release()

    def _round(self, conn: Any, checked: int, force: bool) -> bool:
        """One re-check round inside the claim's transaction; ``False`` when there was nothing to do."""
        with self.live.lock:
            upto = self._catch_up(work.changed_since(conn, self.live.generation))
            done = work.pending_jobs(conn, upto)
            if not done and not (force and self.live.session is not None):
                return False
            mode, seconds = combined(self.live.unreported)
            snapshot = self.live.snapshot()
            found = current_findings(self.live.findings(), snapshot)
            changed = work.changed_since(conn, checked, upto=upto, data=False)
            if force:  # rows from before a column existed (devices.fabric): rewrite their devices once
                stale = unfilled_units(conn, ib_switches(snapshot))
                changed += [c for c in work.changed_since(conn, -1, upto=upto, data=False) if c.unit in stale]
            states = [(c, device_states(snapshot, _entities(c.unit, snapshot), c.snapshot_id)) for c in changed]
        now = datetime.now(UTC)
        for c, rows in states:
            self.store.put_devices(conn, rows, c.updated_at, c.snapshot_id)
        last = done[-1][1] if done else "restore"
        result: dict[str, Any] = {"mode": mode, "seconds": seconds, "findings": len(found)}
        result |= self.store.sync_findings_in(conn, found, now, last)
        work.finish(conn, done, replica=self.replica, generation=upto, now=now, result=result)
        self.live.unreported.clear()  # the transaction commits on return; a failure re-reports next round
        self.metrics.recheck_seconds.observe(seconds)
        return True

    def start_polling(self) -> None:
        """A thread that re-checks what nobody took (a replica that died between accept and re-check)."""
        if self._poller is not None:
            return

        def loop() -> None:
            while not self._stop.wait(self.settings.poll_seconds):
                try:
                    self.recheck()
                except Exception:
                    log.exception("re-check failed; it is retried")

        self._poller = threading.Thread(target=loop, name="unifab-recheck", daemon=True)
        self._poller.start()

    def stop_polling(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=10)
            self._poller = None

    # ------------------------------------------------------------------------------------- ingest

    def ingest(
        self, data: bytes, snapshot_id: str | None, principal: Principal, *, dropped: int = 0
    ) -> tuple[bool, dict[str, Any]]:
        """``(created, snapshot document)``; :class:`IngestError` when the upload is refused.

        ``dropped``: how many snapshots the sending agent dropped (its spool was full) before this one; a
        stored snapshot's audit entry records it as ``dropped_before`` (a known id records nothing again).
        """
        start = time.perf_counter()
        try:
            result = self._ingest(data, snapshot_id, principal, dropped)
        except IngestError:
            self.metrics.ingests.labels(result="refused").inc()
            raise
        except Exception:
            self.metrics.ingests.labels(result="failed").inc()
            raise
        self.metrics.ingests.labels(result="stored" if result[0] else "duplicate").inc()
        self.metrics.ingest_seconds.observe(time.perf_counter() - start)
        return result

    def _duplicate(self, snapshot_id: str) -> tuple[bool, dict[str, Any]] | None:
        """The answer to a known snapshot id (once a re-check covered it, like the first answer), else None."""
        known = self.store.snapshot(snapshot_id)
        if known is None:
            return None
        if known["mode"] == work.QUEUED:
            job_id = work.job_of(self.store, snapshot_id)
            if job_id is not None:
                self._wait(job_id)
                known = self.store.snapshot(snapshot_id) or known
        return False, {**known, "duplicate": True}

    def _ingest(
        self, data: bytes, header_id: str | None, principal: Principal, dropped: int = 0
    ) -> tuple[bool, dict[str, Any]]:
        snapshot_id = upload_id(header_id, data)
        upload = None
        if principal.hosts is not None:  # a scoped token learns nothing, not even "already stored", unchecked
            upload = parse_upload(data, f"upload:{snapshot_id}", self.settings.max_unpacked_bytes)
            _check_scope(principal, list(upload.parts))
        if (answer := self._duplicate(snapshot_id)) is not None:
            return answer
        if upload is None:
            upload = parse_upload(data, f"upload:{snapshot_id}", self.settings.max_unpacked_bytes)
        with self._writes:
            accepted = work.accept(
                self.store,
                snapshot_id=snapshot_id,
                received_at=datetime.now(UTC),
                size=len(data),
                actor=principal.token_id,
                units={part: pack_part(files) for part, files in upload.parts.items()},
                devices=upload.devices,
                note={"dropped_before": dropped} if dropped else None,
            )
        if not accepted.created:  # another request with the same id got there first
            answer = self._duplicate(snapshot_id)
            assert answer is not None
            return answer
        assert accepted.job_id is not None
        self._wait(accepted.job_id)
        stored = self.store.snapshot(snapshot_id)
        assert stored is not None
        return True, {**stored, "duplicate": False}

    def _wait(self, job_id: int) -> None:
        """Re-check (or let the replica holding the claim do it) until the job is done, or the wait is over."""
        deadline = time.monotonic() + self.settings.recheck_wait
        pause = 0.005
        while True:
            self.recheck()
            row = work.job(self.store, job_id)
            if row is None or row["state"] != "pending" or time.monotonic() > deadline:
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    # ------------------------------------------------------------------------------------- agents

    def heartbeat(self, beat: Heartbeat, principal: Principal) -> dict[str, Any]:
        """Record a host agent's heartbeat; a token limited to some hosts may only speak for those (403)."""
        if principal.hosts is not None and beat.host not in principal.hosts:
            allowed = ", ".join(principal.hosts)
            raise IngestError(403, f"agent {beat.host}: this token may only send heartbeats of {allowed}")
        self.store.put_heartbeat(beat, principal.token_id, datetime.now(UTC))
        doc = self.store.agent(beat.host)
        assert doc is not None
        return doc

    # ------------------------------------------------------------------------------------- tokens

    def create_token(self, role: str, name: str, actor: str, hosts: list[str] | None = None) -> NewToken:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
        made = new_token()
        scope = sorted(set(hosts)) if hosts else None
        self.store.add_token(made.id, made.hash, role, name or role, actor, datetime.now(UTC), scope)
        return made

    def revoke_token(self, token_id: str, actor: str) -> bool:
        """Revoke a live token (``False`` when there is none with that id); every replica refuses it at once."""
        revoked = self.store.revoke_token(token_id, actor, datetime.now(UTC))
        self.tokens.clear()
        return revoked

    def authenticate(self, token: str) -> Principal | None:
        """The principal of a valid, live token.

        argon2 runs once per token per minute (:class:`TokenCache`); whether the token is still live is
        read from the store on every call (a primary-key lookup), so a revocation on one replica holds on
        all of them at once.
        """
        parsed = split_token(token)
        if parsed is None:
            return None
        row = self.store.token(parsed[0])
        if row is None:
            return None
        cached = self.tokens.get(token)
        if cached is not None:
            return cached
        if not verify_secret(row["hash"], parsed[1]):
            return None
        hosts = row.get("hosts")
        principal = Principal(row["id"], row["role"], tuple(hosts) if hosts else None)
        self.tokens.put(token, principal)
        return principal

    def fabric_index(self) -> FabricIndex | None:
        """The live fabric, caught up from the store and indexed (see :mod:`unifab.serve.fabric_views`);
        ``None`` before the first snapshot."""
        return self._from_live(
            lambda key, session, findings: self.views.get(key, lambda: FabricIndex.build(key, session.fabric, findings))
        )

    def health_view(self) -> HealthView | None:
        """Incidents from the telemetry of the live fabric (:mod:`unifab.serve.health_view`), computed once per
        state of the fabric; ``None`` before the first snapshot."""
        root = SourcePath(self.live.files)
        return self._from_live(
            lambda key, session, findings: self.health.get(
                key, lambda: build_health(key, root, session.fabric, findings)
            )
        )

    def _from_live(self, build: Callable[[tuple[int, ...], Session, list[Finding]], V]) -> V | None:
        """``build(state key, session, findings)`` of the live fabric caught up from the store, under its lock
        (the session is not thread-safe); ``None`` before the first snapshot."""
        self.catch_up()
        with self.live.lock:
            session = self.live.session
            if session is None:
                return None
            findings = session.findings
            return build((self.live.generation, id(session), id(findings)), session, list(findings))

    def link_status(self) -> dict[tuple[str, str, str], int]:
        """Links by (fabric, kind, QoS status) for /metrics; empty before the first snapshot."""
        index = self.fabric_index()
        return {} if index is None else index.link_status()

    def bundle_parts(self) -> dict[str, dict[str, bytes]]:
        """The current bundle's files by part (what a render diffs against)."""
        with self.live.lock:
            return self.live.files.parts()

    def can_read(self, principal: Principal) -> bool:
        return principal.role in READ


def _entities(unit: str, snapshot: Any) -> list[str]:
    """The device rows a stored part writes: its host or switch, or for ``ib`` every InfiniBand switch."""
    if unit == "ib":
        return ib_switches(snapshot)
    top, _, name = unit.partition("/")
    entity = {"hosts": f"host:{name}", "switches": f"switch:{name}"}.get(top, "") if name else ""
    return [entity] if entity else []


def _check_scope(principal: Principal, parts: list[str]) -> None:
    """A token limited to some hosts may only carry ``hosts/<h>`` parts of those hosts (403 otherwise)."""
    if principal.hosts is None:
        return
    for part in parts:
        top, _, name = part.partition("/")
        if top != "hosts" or name not in principal.hosts:
            allowed = ", ".join(f"hosts/{h}" for h in principal.hosts)
            raise IngestError(403, f"{part}: this token may only send {allowed}")
