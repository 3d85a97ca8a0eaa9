"""The store's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

The alembic revisions in ``migrations/versions/`` create exactly these tables; ``tests/serve`` checks that
the migrated schema and this metadata agree, so a new column needs both a revision and a change here.

Times are stored timezone-aware (UTC); SQLite hands them back naive, :func:`utc` puts the zone back.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = [
    "agents",
    "audit",
    "counters",
    "device_files",
    "devices",
    "finding_devices",
    "finding_events",
    "findings",
    "jobs",
    "metadata",
    "snapshots",
    "tokens",
    "utc",
]

metadata = MetaData()

Json = JSON().with_variant(JSONB(), "postgresql")
When = DateTime(timezone=True)

snapshots = Table(
    "snapshots",
    metadata,
    Column("id", String(200), primary_key=True),  # the client's snapshot id, or sha256:<digest of the upload>
    Column("received_at", When, nullable=False),
    Column("devices", Json, nullable=False),  # entity ids of the devices this snapshot carried
    Column("units", Json, nullable=False),  # the bundle parts it replaced: hosts/<h>, switches/<s>, plan, ...
    Column("size", Integer, nullable=False),  # bytes as uploaded
    Column("mode", String(20), nullable=False),  # the session's update mode: incremental, recheck, reload, load
    Column("seconds", Float, nullable=False),  # re-check time
    Column("findings", Integer, nullable=False),  # open findings after it
    Column("actor", String(100), nullable=False),  # token id, or "cli"
)

# The server's current bundle, one row per part an upload replaces whole, so a restart rebuilds the fabric.
device_files = Table(
    "device_files",
    metadata,
    Column("unit", String(300), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # a tar.gz of the part's files, paths relative to the bundle
    Column("snapshot_id", String(200), nullable=False),
    Column("updated_at", When, nullable=False),
    # the ingest generation that wrote the row: a replica catches up by reading the rows newer than its own
    Column("generation", Integer, nullable=False, server_default="0"),
    Index("ix_device_files_generation", "generation"),
)

# Two rows that coordinate replicas (docs/serve.md, "Several replicas"): ``ingest`` is the last ingest
# generation (every accepted upload bumps it under the row's lock, so generations commit in order) and
# ``recheck`` the generation the findings and devices tables reflect; locking that row FOR UPDATE SKIP
# LOCKED is the claim on the re-check work.
counters = Table(
    "counters",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("value", Integer, nullable=False),
)

# The work that follows an ingest: one row per accepted snapshot, done by whichever replica holds the
# ``recheck`` claim (one re-check to the newest generation covers every pending job up to it).
jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("snapshot_id", String(200), nullable=False, unique=True),
    Column("generation", Integer, nullable=False),
    Column("state", String(20), nullable=False),  # pending | done | failed
    Column("created_at", When, nullable=False),
    Column("claimed_by", String(100), nullable=True),  # the replica that did it
    Column("runs", Integer, nullable=False),  # how many times a replica ran it (1 when done once)
    Column("done_at", When, nullable=True),
    Column("result", Json, nullable=True),  # {mode, seconds, findings, opened, changed, cleared, round}
    Index("ix_jobs_state", "state", "id"),
)

devices = Table(
    "devices",
    metadata,
    Column("name", String(300), primary_key=True),  # entity id: host:<name> | switch:<name>
    Column("kind", String(20), nullable=False),  # host | switch
    Column("os", String(40), nullable=True),  # linux, or the switch platform (sonic, eos, nvue)
    Column("collected_at", When, nullable=True),  # the collector's time (collect.json); None when unknown
    Column("received_at", When, nullable=False),  # when this server last received the device's files
    Column("origin", Json, nullable=False),  # {"location": ..., "collector": ...}
    Column("snapshot_id", String(200), nullable=False),
    Column("fabric", String(20), nullable=True),  # roce | ib | roce+ib (a host with both); None: not known
)

findings = Table(
    "findings",
    metadata,
    Column("key", Text, primary_key=True),  # Finding.key: check id + subject, stable across snapshots
    Column("check", String(100), nullable=False),
    Column("severity", String(20), nullable=False),
    Column("severity_order", Integer, nullable=False),  # 0 = critical first; the list's sort order
    Column("subject", Json, nullable=False),
    Column("message", Text, nullable=False),
    Column("document", Json, nullable=False),  # the finding's object of the findings document
    Column("digest", String(64), nullable=False),  # sha256 of the document: rewrite only what changed
    Column("first_seen", When, nullable=False),
    Column("last_seen", When, nullable=False),
    Column("cleared_at", When, nullable=True),  # None while open
    Column("snapshot_id", String(200), nullable=False),  # the snapshot that last changed the row
    Index("ix_findings_open_order", "cleared_at", "severity_order", "check", "key"),
    Index("ix_findings_check", "check"),
)

# Which devices a finding is about (from its entities), so "findings of device X" is an index lookup.
finding_devices = Table(
    "finding_devices",
    metadata,
    Column("finding_key", Text, ForeignKey("findings.key", ondelete="CASCADE"), primary_key=True),
    Column("device", String(300), primary_key=True),
    Index("ix_finding_devices_device", "device"),
)

# Every transition of a finding key (opened, changed, cleared), oldest first: a key's history over snapshots,
# which the findings table (its current occurrence only) cannot tell once a cleared key reopens.
finding_events = Table(
    "finding_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", Text, nullable=False),
    Column("event", String(20), nullable=False),  # opened | changed | cleared
    Column("at", When, nullable=False),
    Column("snapshot_id", String(200), nullable=False),  # the snapshot (or re-check round) that made it
    Column("severity", String(20), nullable=False),
    Column("message", Text, nullable=False),
    Index("ix_finding_events_key", "key", "id"),
    Index("ix_finding_events_snapshot", "snapshot_id", "id"),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", String(40), primary_key=True),  # the public part of the token
    Column("hash", Text, nullable=False),  # argon2 hash of the secret part
    Column("role", String(20), nullable=False),
    Column("name", String(200), nullable=False),
    Column("created_at", When, nullable=False),
    Column("revoked_at", When, nullable=True),
    Column("hosts", Json, nullable=True),  # an agent token's hosts: it may ingest hosts/<h> of these only
)

audit = Table(
    "audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", When, nullable=False),
    Column("actor", String(100), nullable=False),  # token id, or "cli"
    Column("action", String(50), nullable=False),  # ingest, token.create, ...
    Column("target", String(300), nullable=False),
    Column("detail", Json, nullable=False),
)

# The host agents' last heartbeat each (``unifab agent run``): liveness even when nothing changed on the host.
agents = Table(
    "agents",
    metadata,
    Column("host", String(253), primary_key=True),
    Column("last_seen", When, nullable=False),
    Column("version", String(50), nullable=False),  # the agent's unifab version
    Column("spool_depth", Integer, nullable=False),  # snapshots waiting in its spool
    Column("spool_bytes", BigInteger, nullable=False),
    Column("dropped", BigInteger, nullable=False),  # snapshots it dropped in total (its spool was full)
    Column("last_snapshot", String(200), nullable=True),  # the last snapshot id it produced
    Column("interval", Float, nullable=True),  # seconds between its collects
    Column("actor", String(100), nullable=False),  # the token id that sent the heartbeat
)


def utc(value: datetime | None) -> datetime | None:
    """A stored time as an aware UTC datetime (SQLite returns naive ones)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
