"""The store behind ``unifab serve``: one interface, SQLite (a file, WAL) by default or PostgreSQL by URL.

:meth:`Store.open` creates the engine and applies the alembic migrations (``migrations/``) before anything
else runs. The server writes an ingest in two transactions, accept and re-check (:mod:`unifab.serve.work`,
which uses this module's helpers inside its own transactions); :meth:`Store.record_ingest` writes one
whole ingest in one transaction (tests of the findings' lifecycle, tools).

Lists are paged by cursor (the last row's sort key, opaque to clients), never by offset: a page costs the
same at the end of a 100,000-finding table as at its start.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    Engine,
    and_,
    create_engine,
    delete,
    event,
    false,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnElement

from unifab.serve.schema import (
    agents,
    audit,
    device_files,
    devices,
    finding_devices,
    finding_events,
    findings,
    snapshots,
    tokens,
    utc,
)

__all__ = [
    "MIGRATIONS",
    "TIME_FIELDS",
    "CurrentFinding",
    "DeviceState",
    "Heartbeat",
    "IngestRecord",
    "JobScope",
    "Page",
    "Store",
    "database_url",
    "decode_cursor",
    "encode_cursor",
]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
MIGRATION_LOCK = 0x756E6966  # "unif": the advisory lock replicas take around migrating
STATES = ("open", "cleared", "all")
TIME_FIELDS = ("first_seen", "last_seen", "cleared")


def database_url(value: str) -> str:
    """``--db``: a SQLAlchemy URL, or a plain path meaning a SQLite file there."""
    if "://" in value:
        if value.startswith(("postgresql://", "postgres://")):
            # the driver unifab installs (psycopg 3) rather than SQLAlchemy's default psycopg2
            return "postgresql+psycopg://" + value.split("://", 1)[1]
        return value
    return f"sqlite:///{Path(value).expanduser().absolute()}"


@dataclass(frozen=True, slots=True)
class CurrentFinding:
    """A finding of the current fabric, as the store keeps it (the live fabric computes these)."""

    key: str
    check: str
    severity: str
    severity_order: int
    subject: dict[str, str]
    message: str
    document: dict[str, Any]
    digest: str
    devices: tuple[str, ...]  # entity ids of the devices it is about


@dataclass(frozen=True, slots=True)
class DeviceState:
    name: str  # entity id
    kind: str
    os: str | None
    collected_at: datetime | None
    origin: dict[str, Any]
    fabric: str | None = None  # roce | ib | roce+ib


@dataclass(slots=True)
class IngestRecord:
    """Everything one ingest writes."""

    snapshot_id: str
    received_at: datetime
    size: int
    actor: str
    mode: str
    seconds: float
    units: dict[str, bytes]  # part -> tar.gz of its files
    devices: list[DeviceState]
    findings: list[CurrentFinding]
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What a host agent reports each interval (``POST /api/v1/agents/{host}/heartbeat``)."""

    host: str
    version: str
    spool_depth: int
    spool_bytes: int
    dropped: int  # in total since the agent's spool was created
    last_snapshot: str | None
    interval: float | None


@dataclass(frozen=True, slots=True)
class JobScope:
    """A job filter of :meth:`Store.findings`: the open findings ``unifab check --job`` reports for the job on
    the current fabric (``keys``), and the cleared findings about its hosts (``hosts``: entity ids), since a
    finding that is gone can no longer be scoped to a job's network."""

    keys: frozenset[str]
    hosts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Page:
    items: list[dict[str, Any]]
    next_cursor: str | None


def encode_cursor(values: Sequence[object]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


def decode_cursor(cursor: str, arity: int) -> list[Any]:
    """The values of a cursor this store made; :class:`ValueError` for anything else."""
    try:
        values = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        raise ValueError("malformed cursor") from None
    if not isinstance(values, list) or len(values) != arity:
        raise ValueError("malformed cursor")
    return values


def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


class Store:
    """The server's database (see the module docstring). Thread-safe: every call takes its own connection."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        url = database_url(url)
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True)
        store = cls(engine)
        if migrate:
            store.migrate()
        return store

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Bring the schema to the newest alembic revision (a no-op when it is there)."""
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as conn:
            if self.dialect == "postgresql":  # replicas starting together: one migrates, the others wait
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            config.attributes["connection"] = conn
            command.upgrade(config, "head")

    def revision(self) -> str | None:
        from alembic.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------------------------- ingest

    def snapshot(self, snapshot_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(snapshots).where(snapshots.c.id == snapshot_id)).mappings().first()
        return None if row is None else _snapshot_doc(row)

    def latest_snapshot(self) -> dict[str, Any] | None:
        query = select(snapshots).order_by(snapshots.c.received_at.desc(), snapshots.c.id.desc()).limit(1)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else _snapshot_doc(row)

    def units(self) -> dict[str, bytes]:
        """Every stored bundle part (to rebuild the fabric at start-up)."""
        with self.engine.connect() as conn:
            return {r.unit: r.data for r in conn.execute(select(device_files.c.unit, device_files.c.data))}

    def part_snapshot(self, unit: str) -> str | None:
        """The snapshot that last wrote a stored bundle part (``fabric.yaml``, ``hosts/gpu001``, ...)."""
        query = select(device_files.c.snapshot_id).where(device_files.c.unit == unit)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar_one_or_none()
        return None if found is None else str(found)

    def record_ingest(self, record: IngestRecord) -> None:
        """Write one ingest in one transaction (raises :class:`sqlalchemy.exc.IntegrityError` on a duplicate id)."""
        now = record.received_at
        with self.engine.begin() as conn:
            conn.execute(
                insert(snapshots).values(
                    id=record.snapshot_id,
                    received_at=now,
                    devices=sorted(d.name for d in record.devices),
                    units=sorted(record.units),
                    size=record.size,
                    mode=record.mode,
                    seconds=record.seconds,
                    findings=len(record.findings),
                    actor=record.actor,
                )
            )
            if record.units:
                conn.execute(delete(device_files).where(device_files.c.unit.in_(list(record.units))))
                conn.execute(
                    insert(device_files),
                    [
                        {"unit": u, "data": data, "snapshot_id": record.snapshot_id, "updated_at": now}
                        for u, data in record.units.items()
                    ],
                )
            self._put_devices(conn, record.devices, now, record.snapshot_id)
            counts = self._sync_findings(conn, record.findings, now, record.snapshot_id)
            self._audit(conn, record.actor, "ingest", record.snapshot_id, {**record.detail, **counts}, now)

    def sync_findings(self, current: Sequence[CurrentFinding], now: datetime, snapshot_id: str) -> dict[str, int]:
        """Bring the findings table to ``current`` in a transaction of its own."""
        with self.engine.begin() as conn:
            return self._sync_findings(conn, current, now, snapshot_id)

    def sync_findings_in(
        self, conn: Connection, current: Sequence[CurrentFinding], now: datetime, snapshot_id: str
    ) -> dict[str, int]:
        """:meth:`sync_findings` inside the caller's transaction (a re-check round)."""
        return self._sync_findings(conn, current, now, snapshot_id)

    def put_devices(self, conn: Connection, states: Sequence[DeviceState], now: datetime, snapshot_id: str) -> None:
        """The devices' latest rows, inside the caller's transaction."""
        self._put_devices(conn, states, now, snapshot_id)

    @staticmethod
    def _put_devices(conn: Connection, states: Sequence[DeviceState], now: datetime, snapshot_id: str) -> None:
        if not states:
            return
        names = [d.name for d in states]
        for chunk in _chunks(names, 500):
            conn.execute(delete(devices).where(devices.c.name.in_(chunk)))
        conn.execute(
            insert(devices),
            [
                {
                    "name": d.name,
                    "kind": d.kind,
                    "os": d.os,
                    "collected_at": d.collected_at,
                    "received_at": now,
                    "origin": d.origin,
                    "snapshot_id": snapshot_id,
                    "fabric": d.fabric,
                }
                for d in states
            ],
        )

    @staticmethod
    def _sync_findings(
        conn: Connection, current: Sequence[CurrentFinding], now: datetime, snapshot_id: str
    ) -> dict[str, int]:
        """first_seen / last_seen / cleared_at: new keys open, vanished keys clear, cleared keys that return
        reopen (with a new first_seen: it is a new occurrence); every open one is seen now."""
        by_key = {f.key: f for f in current}  # a snapshot never holds one key twice; keep the first if it does
        known = {
            r.key: (r.digest, r.cleared_at)
            for r in conn.execute(select(findings.c.key, findings.c.digest, findings.c.cleared_at))
        }
        gone = [k for k, (_, cleared) in known.items() if cleared is None and k not in by_key]
        fresh = [f for k, f in by_key.items() if k not in known]
        reopened = [f for k, f in by_key.items() if k in known and known[k][1] is not None]
        changed = [f for k, f in by_key.items() if k in known and known[k][1] is None and known[k][0] != f.digest]
        for chunk in _chunks(gone, 500):
            conn.execute(
                insert(finding_events).from_select(
                    ["key", "event", "at", "snapshot_id", "severity", "message"],
                    select(
                        findings.c.key,
                        literal("cleared"),
                        literal(now, findings.c.first_seen.type),
                        literal(snapshot_id),
                        findings.c.severity,
                        findings.c.message,
                    ).where(findings.c.key.in_(chunk)),
                )
            )
            conn.execute(update(findings).where(findings.c.key.in_(chunk)).values(cleared_at=now))
        events = [_event(f, "opened", now, snapshot_id) for f in fresh + reopened]
        events += [_event(f, "changed", now, snapshot_id) for f in changed]
        if events:
            conn.execute(insert(finding_events), events)
        if fresh:
            conn.execute(insert(findings), [_finding_row(f, now, snapshot_id) for f in fresh])
        changed_keys = {f.key for f in changed}
        for f in reopened + changed:
            values = _finding_row(f, now, snapshot_id)
            del values["key"]
            if f.key in changed_keys:
                del values["first_seen"]
            conn.execute(update(findings).where(findings.c.key == f.key).values(**values))
        rewritten = [f.key for f in reopened + changed]
        for chunk in _chunks(rewritten, 500):
            conn.execute(delete(finding_devices).where(finding_devices.c.finding_key.in_(chunk)))
        links = [{"finding_key": f.key, "device": d} for f in fresh + reopened + changed for d in f.devices]
        if links:
            conn.execute(insert(finding_devices), links)
        conn.execute(update(findings).where(findings.c.cleared_at.is_(None)).values(last_seen=now))
        return {"opened": len(fresh) + len(reopened), "changed": len(changed), "cleared": len(gone)}

    # ------------------------------------------------------------------------------------- reads

    def summary(self) -> dict[str, Any]:
        """Open findings by severity and by check, devices by kind, the last snapshot."""
        with self.engine.connect() as conn:
            by = conn.execute(
                select(findings.c.check, findings.c.severity, func.count())
                .where(findings.c.cleared_at.is_(None))
                .group_by(findings.c.check, findings.c.severity)
            ).all()
            kinds = conn.execute(select(devices.c.kind, func.count()).group_by(devices.c.kind)).all()
            cleared = conn.execute(
                select(func.count()).select_from(findings).where(findings.c.cleared_at.is_not(None))
            ).scalar_one()
        by_severity = dict.fromkeys(("critical", "error", "warning", "info"), 0)
        by_check: dict[str, dict[str, int]] = {}
        for check, severity, n in by:
            by_severity[severity] = by_severity.get(severity, 0) + n
            by_check.setdefault(check, {})[severity] = n
        return {
            "findings": {"open": sum(by_severity.values()), "cleared": cleared, "by_severity": by_severity},
            "by_check": dict(sorted(by_check.items())),
            "devices": {str(kind): int(n) for kind, n in sorted(kinds)},
            "last_snapshot": self.latest_snapshot(),
        }

    def open_counts(self) -> list[tuple[str, str, int]]:
        """(check, severity, open findings) for /metrics."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(findings.c.check, findings.c.severity, func.count())
                .where(findings.c.cleared_at.is_(None))
                .group_by(findings.c.check, findings.c.severity)
            ).all()
        return [(c, s, n) for c, s, n in rows]

    def device_times(self) -> list[tuple[str, datetime | None, datetime]]:
        """(kind, collected_at, received_at) of every device, for /metrics' collect age."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(devices.c.kind, devices.c.collected_at, devices.c.received_at)).all()
        return [(k, utc(c), utc(r) or r) for k, c, r in rows]

    def devices(
        self, *, kind: str | None = None, fabric: str | None = None, cursor: str | None = None, limit: int = 100
    ) -> Page:
        """Devices by name; ``fabric`` (``roce`` or ``ib``) keeps those on it (a ``roce+ib`` host is on both)."""
        query = select(devices).order_by(devices.c.name).limit(limit + 1)
        if kind:
            query = query.where(devices.c.kind == kind)
        if fabric:
            query = query.where(devices.c.fabric.in_([fabric, "roce+ib"]))
        if cursor:
            (after,) = decode_cursor(cursor, 1)
            query = query.where(devices.c.name > str(after))
        with self.engine.connect() as conn:
            rows = [_device_doc(r) for r in conn.execute(query).mappings()]
        return _page(rows, limit, lambda r: [r["name"]])

    def device(self, name: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(devices).where(devices.c.name == name)).mappings().first()
        return None if row is None else _device_doc(row)

    def findings(
        self,
        *,
        check: Iterable[str] = (),
        severity: Iterable[str] = (),
        device: str | None = None,
        state: str = "open",
        cursor: str | None = None,
        limit: int = 100,
        q: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        time: str = "first_seen",
        job: JobScope | None = None,
    ) -> Page:
        """Findings in report order (severity, check, key), filtered; ``state``: open, cleared or all.

        ``since`` (inclusive) and ``until`` (exclusive) bound the ``time`` column: ``first_seen`` (when the
        occurrence opened), ``last_seen`` (the last snapshot that still had it) or ``cleared`` (when it went;
        only cleared findings have one). ``job``: see :class:`JobScope`.
        """
        if state not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}, got {state!r}")
        if time not in TIME_FIELDS:
            raise ValueError(f"time must be one of {', '.join(TIME_FIELDS)}, got {time!r}")
        order = (findings.c.severity_order, findings.c.check, findings.c.key)
        query = select(findings).order_by(*order).limit(limit + 1)
        conditions: list[ColumnElement[bool]] = []
        if state == "open":
            conditions.append(findings.c.cleared_at.is_(None))
        elif state == "cleared":
            conditions.append(findings.c.cleared_at.is_not(None))
        checks, severities = list(check), list(severity)
        if checks:
            conditions.append(findings.c.check.in_(checks))
        if severities:
            conditions.append(findings.c.severity.in_(severities))
        if q:
            needle = q.lower()
            conditions.append(
                or_(
                    func.lower(findings.c.message).contains(needle, autoescape=True),
                    func.lower(findings.c.key).contains(needle, autoescape=True),
                )
            )
        if device:
            names = [device] if ":" in device else [f"host:{device}", f"switch:{device}"]
            keys = select(finding_devices.c.finding_key).where(finding_devices.c.device.in_(names))
            conditions.append(findings.c.key.in_(keys))
        column = {"first_seen": findings.c.first_seen, "last_seen": findings.c.last_seen}.get(
            time, findings.c.cleared_at
        )
        if since is not None:
            conditions.append(column >= since)
        if until is not None:
            conditions.append(column < until)
        if job is not None:
            on_hosts = select(finding_devices.c.finding_key).where(finding_devices.c.device.in_(job.hosts))
            conditions.append(
                or_(
                    findings.c.key.in_(sorted(job.keys)) if job.keys else false(),
                    and_(findings.c.cleared_at.is_not(None), findings.c.key.in_(on_hosts)),
                )
            )
        if cursor:
            rank, chk, key = decode_cursor(cursor, 3)
            conditions.append(tuple_(*order) > tuple_(int(rank), str(chk), str(key)))
        if conditions:
            query = query.where(and_(*conditions))
        with self.engine.connect() as conn:
            rows = list(conn.execute(query).mappings())
        items = [_finding_doc(r) for r in rows]
        next_cursor = None
        if len(rows) > limit:
            last = rows[limit - 1]
            next_cursor = encode_cursor([last["severity_order"], last["check"], last["key"]])
        return Page(items[:limit], next_cursor)

    def finding(self, key: str) -> dict[str, Any] | None:
        """The findings-table row of one key (its current or last occurrence) as the API's finding item."""
        with self.engine.connect() as conn:
            row = conn.execute(select(findings).where(findings.c.key == key)).mappings().first()
        return None if row is None else _finding_doc(row)

    def finding_history(self, key: str, *, cursor: str | None = None, limit: int = 100) -> Page:
        """A key's transitions (opened, changed, cleared), oldest first, with the snapshot of each."""
        query = select(finding_events).where(finding_events.c.key == key).order_by(finding_events.c.id).limit(limit + 1)
        if cursor:
            (after,) = decode_cursor(cursor, 1)
            query = query.where(finding_events.c.id > int(after))
        with self.engine.connect() as conn:
            rows = [
                {
                    "id": r["id"],
                    "event": r["event"],
                    "at": _iso(r["at"]),
                    "snapshot_id": r["snapshot_id"],
                    "severity": r["severity"],
                    "message": r["message"],
                }
                for r in conn.execute(query).mappings()
            ]
        return _page(rows, limit, lambda r: [r["id"]])

    def count_open(self, *, device: str) -> int:
        """Open findings about one device."""
        keys = select(finding_devices.c.finding_key).where(finding_devices.c.device == device)
        query = (
            select(func.count()).select_from(findings).where(findings.c.cleared_at.is_(None), findings.c.key.in_(keys))
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def finding_checks(self) -> list[str]:
        """The checks that have findings in the table (the UI's filter choices)."""
        with self.engine.connect() as conn:
            return list(conn.execute(select(findings.c.check).distinct().order_by(findings.c.check)).scalars())

    # ------------------------------------------------------------------------------------- tokens, audit

    def add_token(
        self,
        token_id: str,
        token_hash: str,
        role: str,
        name: str,
        actor: str,
        now: datetime,
        hosts: list[str] | None = None,
    ) -> None:
        """A new token; ``hosts`` limits what it may ingest to those hosts' parts."""
        with self.engine.begin() as conn:
            conn.execute(
                insert(tokens).values(
                    id=token_id, hash=token_hash, role=role, name=name, created_at=now, revoked_at=None, hosts=hosts
                )
            )
            detail: dict[str, Any] = {"role": role, "name": name}
            if hosts:
                detail["hosts"] = hosts
            self._audit(conn, actor, "token.create", token_id, detail, now)

    def revoke_token(self, token_id: str, actor: str, now: datetime) -> bool:
        """Revoke a live token; ``False`` when no live token has that id."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(tokens).where(tokens.c.id == token_id, tokens.c.revoked_at.is_(None)).values(revoked_at=now)
            ).rowcount
            if done:
                self._audit(conn, actor, "token.revoke", token_id, {}, now)
        return bool(done)

    def token_list(self) -> list[dict[str, Any]]:
        """Every token (never its hash), newest first."""
        query = select(
            tokens.c.id, tokens.c.role, tokens.c.name, tokens.c.created_at, tokens.c.revoked_at, tokens.c.hosts
        ).order_by(tokens.c.created_at.desc(), tokens.c.id)
        with self.engine.connect() as conn:
            return [
                {**dict(r), "created_at": _iso(r["created_at"]), "revoked_at": _iso(r["revoked_at"])}
                for r in conn.execute(query).mappings()
            ]

    def token(self, token_id: str) -> dict[str, Any] | None:
        """The live (not revoked) token with this id."""
        query = select(tokens).where(and_(tokens.c.id == token_id, tokens.c.revoked_at.is_(None)))
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else dict(row)

    def audit_log(self, *, cursor: str | None = None, limit: int = 100) -> Page:
        """Newest first."""
        query = select(audit).order_by(audit.c.id.desc()).limit(limit + 1)
        if cursor:
            (before,) = decode_cursor(cursor, 1)
            query = query.where(audit.c.id < int(before))
        with self.engine.connect() as conn:
            rows = [
                {
                    "id": r["id"],
                    "at": _iso(r["at"]),
                    "actor": r["actor"],
                    "action": r["action"],
                    "target": r["target"],
                    "detail": r["detail"],
                }
                for r in conn.execute(query).mappings()
            ]
        return _page(rows, limit, lambda r: [r["id"]])

    # ------------------------------------------------------------------------------------- agents

    def put_heartbeat(self, beat: Heartbeat, actor: str, now: datetime) -> None:
        """The host's agent row, replaced (the dropped total never goes down: a late heartbeat cannot undo one)."""
        with self.engine.begin() as conn:
            old = conn.execute(select(agents.c.dropped).where(agents.c.host == beat.host)).scalar_one_or_none()
            conn.execute(delete(agents).where(agents.c.host == beat.host))
            conn.execute(
                insert(agents).values(
                    host=beat.host,
                    last_seen=now,
                    version=beat.version,
                    spool_depth=beat.spool_depth,
                    spool_bytes=beat.spool_bytes,
                    dropped=max(beat.dropped, int(old or 0)),
                    last_snapshot=beat.last_snapshot,
                    interval=beat.interval,
                    actor=actor,
                )
            )

    def agents(self, *, cursor: str | None = None, limit: int = 100) -> Page:
        """The agents that sent a heartbeat, by host name."""
        query = select(agents).order_by(agents.c.host).limit(limit + 1)
        if cursor:
            (after,) = decode_cursor(cursor, 1)
            query = query.where(agents.c.host > str(after))
        with self.engine.connect() as conn:
            rows = [_agent_doc(r) for r in conn.execute(query).mappings()]
        return _page(rows, limit, lambda r: [r["host"]])

    def agent(self, host: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(agents).where(agents.c.host == host)).mappings().first()
        return None if row is None else _agent_doc(row)

    def audit_entry(self, actor: str, action: str, target: str, detail: dict[str, Any], now: datetime) -> None:
        """One audit row in a transaction of its own (a change that is not an ingest or a token)."""
        with self.engine.begin() as conn:
            self._audit(conn, actor, action, target, detail, now)

    @staticmethod
    def _audit(conn: Connection, actor: str, action: str, target: str, detail: dict[str, Any], now: datetime) -> None:
        conn.execute(insert(audit).values(at=now, actor=actor, action=action, target=target[:300], detail=detail))

    def table_names(self) -> list[str]:
        from sqlalchemy import inspect

        return sorted(inspect(self.engine).get_table_names())


def _chunks(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _page(rows: list[dict[str, Any]], limit: int, key: Any) -> Page:
    if len(rows) > limit:
        return Page(rows[:limit], encode_cursor(key(rows[limit - 1])))
    return Page(rows, None)


def _iso(value: datetime | None) -> str | None:
    when = utc(value)
    return None if when is None else when.isoformat()


def _finding_row(f: CurrentFinding, now: datetime, snapshot_id: str) -> dict[str, Any]:
    return {
        "key": f.key,
        "check": f.check,
        "severity": f.severity,
        "severity_order": f.severity_order,
        "subject": f.subject,
        "message": f.message,
        "document": f.document,
        "digest": f.digest,
        "first_seen": now,
        "last_seen": now,
        "cleared_at": None,
        "snapshot_id": snapshot_id,
    }


def _event(f: CurrentFinding, kind: str, now: datetime, snapshot_id: str) -> dict[str, Any]:
    return {
        "key": f.key,
        "event": kind,
        "at": now,
        "snapshot_id": snapshot_id,
        "severity": f.severity,
        "message": f.message,
    }


def _finding_doc(row: RowMapping) -> dict[str, Any]:
    return {
        "key": row["key"],
        "state": "open" if row["cleared_at"] is None else "cleared",
        "first_seen": _iso(row["first_seen"]),
        "last_seen": _iso(row["last_seen"]),
        "cleared_at": _iso(row["cleared_at"]),
        "finding": row["document"],
    }


def _device_doc(row: RowMapping) -> dict[str, Any]:
    return {
        "name": row["name"],
        "kind": row["kind"],
        "os": row["os"],
        "collected_at": _iso(row["collected_at"]),
        "received_at": _iso(row["received_at"]),
        "origin": row["origin"],
        "snapshot_id": row["snapshot_id"],
        "fabric": row["fabric"],
    }


def _agent_doc(row: RowMapping) -> dict[str, Any]:
    return {
        "host": row["host"],
        "last_seen": _iso(row["last_seen"]),
        "version": row["version"],
        "spool_depth": row["spool_depth"],
        "spool_bytes": row["spool_bytes"],
        "dropped": row["dropped"],
        "last_snapshot": row["last_snapshot"],
        "interval": row["interval"],
        "actor": row["actor"],
    }


def _snapshot_doc(row: RowMapping) -> dict[str, Any]:
    return {
        "id": row["id"],
        "received_at": _iso(row["received_at"]),
        "devices": row["devices"],
        "units": row["units"],
        "size": row["size"],
        "mode": row["mode"],
        "seconds": row["seconds"],
        "findings": row["findings"],
    }
