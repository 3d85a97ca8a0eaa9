"""The work that follows an ingest, shared through the database by every replica on one store.

An ingest is two steps (docs/serve.md, "Several replicas"):

1. **Accept** (:func:`accept`, the replica that received the upload, one short transaction): bump the
   ``ingest`` counter (``UPDATE … RETURNING``: the row stays locked until commit, so accepted ingests commit
   one at a time and in generation order), refuse a snapshot id that is already stored, and write the
   snapshot row, the bundle parts (``device_files``, stamped with the generation), a ``pending`` job and the
   audit entry.
2. **Re-check** (any replica): :func:`claim` locks the ``recheck`` counter row ``FOR UPDATE SKIP LOCKED``.
   The holder catches its in-memory session up from the ``device_files`` rows newer than its own
   generation, re-checks, and in the same transaction writes the findings, the devices, every pending job up
   to that generation (``done``, ``claimed_by``, ``runs``) and the counter. A replica that finds the row
   locked skips: the holder loops until no job is pending, and an ingest waiting for its job tries again.

Why one claim for the whole fabric rather than ``SKIP LOCKED`` on each job row: findings over time are one
sequence (first/last seen, cleared) over one fabric, so two re-checks must never write it at once or out
of order; what is spread over the replicas is *who* does it, and one re-check to the newest generation
covers every job up to it (a burst of ingests costs one re-check, not one each).

SQLite has no row locks: there the replica's own locks stand in for them (one process per SQLite file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from unifab.serve.ingest import IngestError
from unifab.serve.schema import audit, counters, device_files, jobs, snapshots, utc
from unifab.serve.store import Store

__all__ = [
    "QUEUED",
    "Accepted",
    "Changed",
    "accept",
    "changed_since",
    "claim",
    "counts",
    "finish",
    "job",
    "job_of",
    "pending_jobs",
]

QUEUED = "queued"  # a snapshot's mode until a re-check has covered it
_BUNDLE_DIRS = ("hosts/", "switches/")


@dataclass(frozen=True, slots=True)
class Accepted:
    created: bool  # False: the snapshot id was already stored, nothing was written
    job_id: int | None
    generation: int


@dataclass(frozen=True, slots=True)
class Changed:
    """A stored bundle part newer than some generation."""

    unit: str
    data: bytes
    generation: int
    snapshot_id: str
    updated_at: datetime


def _is_bundle_dir(unit: str) -> bool:
    return unit.startswith(_BUNDLE_DIRS) or unit == "plan"


def accept(
    store: Store,
    *,
    snapshot_id: str,
    received_at: datetime,
    size: int,
    actor: str,
    units: dict[str, bytes],
    devices: Sequence[str],
    note: dict[str, Any] | None = None,
) -> Accepted:
    """Step 1 (see the module docstring); :class:`IngestError` (422) when the server would hold no bundle.

    ``note`` goes into the ingest's audit entry, in the same transaction (an agent's dropped-snapshots count).
    """
    with store.engine.connect() as conn, conn.begin() as trans:
        generation = int(
            conn.execute(
                update(counters)
                .where(counters.c.name == "ingest")
                .values(value=counters.c.value + 1)
                .returning(counters.c.value)
            ).scalar_one()
        )
        if conn.execute(select(snapshots.c.id).where(snapshots.c.id == snapshot_id)).first() is not None:
            trans.rollback()  # a retry, or the same upload sent to another replica meanwhile
            return Accepted(False, None, generation - 1)
        if not any(_is_bundle_dir(u) for u in units):
            held = conn.execute(
                select(device_files.c.unit)
                .where(or_(device_files.c.unit.like("hosts/%"), device_files.c.unit.like("switches/%")))
                .limit(1)
            ).first()
            plan = conn.execute(select(device_files.c.unit).where(device_files.c.unit == "plan")).first()
            if held is None and plan is None:
                raise IngestError(
                    422,
                    f"the server holds no bundle yet and the upload carries none of hosts/, switches/, plan/ "
                    f"(it has {', '.join(sorted(units))})",
                )
        conn.execute(
            insert(snapshots).values(
                id=snapshot_id,
                received_at=received_at,
                devices=sorted(devices),
                units=sorted(units),
                size=size,
                mode=QUEUED,
                seconds=0.0,
                findings=0,
                actor=actor,
            )
        )
        conn.execute(delete(device_files).where(device_files.c.unit.in_(list(units))))
        conn.execute(
            insert(device_files),
            [
                {
                    "unit": unit,
                    "data": data,
                    "snapshot_id": snapshot_id,
                    "updated_at": received_at,
                    "generation": generation,
                }
                for unit, data in units.items()
            ],
        )
        job_id = conn.execute(
            insert(jobs)
            .values(
                snapshot_id=snapshot_id,
                generation=generation,
                state="pending",
                created_at=received_at,
                runs=0,
            )
            .returning(jobs.c.id)
        ).scalar_one()
        detail = {"parts": len(units), "devices": len(devices), "generation": generation, **(note or {})}
        conn.execute(
            insert(audit).values(at=received_at, actor=actor, action="ingest", target=snapshot_id, detail=detail)
        )
    return Accepted(True, int(job_id), generation)


def claim(conn: Connection) -> int | None:
    """The re-check claim: the generation the findings reflect, or ``None`` when another replica holds it."""
    value = conn.execute(
        select(counters.c.value).where(counters.c.name == "recheck").with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    return None if value is None else int(value)


def changed_since(conn: Connection, generation: int, *, upto: int | None = None, data: bool = True) -> list[Changed]:
    """The stored parts written after ``generation`` (and at most ``upto``), oldest first."""
    columns = [device_files.c.unit, device_files.c.generation, device_files.c.snapshot_id, device_files.c.updated_at]
    query = select(*columns, *([device_files.c.data] if data else [])).where(device_files.c.generation > generation)
    if upto is not None:
        query = query.where(device_files.c.generation <= upto)
    rows = conn.execute(query.order_by(device_files.c.generation, device_files.c.unit)).mappings()
    out = []
    for r in rows:
        when = utc(r["updated_at"])
        assert when is not None
        out.append(Changed(r["unit"], r["data"] if data else b"", int(r["generation"]), r["snapshot_id"], when))
    return out


def pending_jobs(conn: Connection, upto: int) -> list[tuple[int, str]]:
    """(job id, snapshot id) of the pending jobs at or below generation ``upto``, oldest first."""
    query = (
        select(jobs.c.id, jobs.c.snapshot_id)
        .where(jobs.c.state == "pending", jobs.c.generation <= upto)
        .order_by(jobs.c.id)
    )
    return [(int(i), str(s)) for i, s in conn.execute(query)]


def finish(
    conn: Connection,
    done: Sequence[tuple[int, str]],
    *,
    replica: str,
    generation: int,
    now: datetime,
    result: dict[str, Any],
) -> None:
    """Mark the jobs done, give their snapshots the re-check's mode and counts, move the ``recheck`` counter."""
    ids = [i for i, _ in done]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        conn.execute(
            update(jobs)
            .where(jobs.c.id.in_(chunk), jobs.c.state == "pending")
            .values(state="done", claimed_by=replica, done_at=now, runs=jobs.c.runs + 1, result=result)
        )
        sids = [s for i, s in done if i in set(chunk)]
        conn.execute(
            update(snapshots)
            .where(snapshots.c.id.in_(sids))
            .values(mode=result["mode"], seconds=result["seconds"], findings=result["findings"])
        )
    conn.execute(update(counters).where(counters.c.name == "recheck").values(value=generation))
    if done:
        detail = {**result, "generation": generation, "jobs": ids}
        conn.execute(
            insert(audit).values(at=now, actor=replica[:100], action="recheck", target=done[-1][1], detail=detail)
        )


def job(store: Store, job_id: int) -> dict[str, Any] | None:
    with store.engine.connect() as conn:
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).mappings().first()
    return None if row is None else dict(row)


def job_of(store: Store, snapshot_id: str) -> int | None:
    """The id of the job of a snapshot (``None`` for snapshots stored before jobs existed)."""
    with store.engine.connect() as conn:
        found = conn.execute(select(jobs.c.id).where(jobs.c.snapshot_id == snapshot_id)).scalar_one_or_none()
    return None if found is None else int(found)


def counts(store: Store) -> dict[str, int]:
    """Jobs by state (for tests and /healthz)."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(jobs.c.state, func.count()).group_by(jobs.c.state)).all()
    return {str(s): int(n) for s, n in rows}
