"""Reads of the store that the overview adds to the summary: what the latest snapshot changed, and the fabrics.

**What changed.** Every re-check writes a ``finding_events`` row per key it opened, changed or cleared, under
the id of the newest snapshot it covered (one re-check covers a burst of ingests, so a burst is one change).
:func:`changes` reads the rows of the latest snapshot by its index (``ix_finding_events_snapshot``): the counts,
and the first rows of each kind, worst first. Nothing is recomputed: every replica answers the same.

**Fabrics.** A device row says which fabric it is on (``roce``, ``ib``, ``roce+ib`` for a host with RoCE NICs
and an InfiniBand HCA). :func:`fabrics` counts devices per fabric and the open findings of the InfiniBand
silo: the ``IB-*`` checks, and any finding about an InfiniBand switch (a cable on the IB network).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.engine import Connection

from unifab.serve.schema import devices, finding_devices, finding_events, findings, utc
from unifab.serve.store import Store

__all__ = ["CHANGE_ITEMS", "FABRICS", "changes", "fabrics", "unfilled_units"]

CHANGE_ITEMS = 20  # rows of each kind the summary carries; the counts are complete
FABRICS = ("roce", "ib")
_SEVERITY_ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}


def changes(store: Store, limit: int = CHANGE_ITEMS) -> dict[str, Any] | None:
    """What the latest snapshot changed: ``{snapshot, opened, changed, cleared, items}``; ``None`` before one.

    ``items`` maps ``opened`` and ``cleared`` to at most ``limit`` rows each (``key, check, severity,
    message, at``), worst first; the counts are of every row.
    """
    latest = store.latest_snapshot()
    if latest is None:
        return None
    sid = latest["id"]
    with store.engine.connect() as conn:
        counts: dict[str, int] = {
            str(event): int(n)
            for event, n in conn.execute(
                select(finding_events.c.event, func.count())
                .where(finding_events.c.snapshot_id == sid)
                .group_by(finding_events.c.event)
            )
        }
        items: dict[str, list[dict[str, Any]]] = {}
        for kind in ("opened", "cleared"):
            rows = conn.execute(
                select(
                    finding_events.c.key,
                    finding_events.c.severity,
                    finding_events.c.message,
                    finding_events.c.at,
                    findings.c.check,
                )
                .join(findings, findings.c.key == finding_events.c.key, isouter=True)
                .where(finding_events.c.snapshot_id == sid, finding_events.c.event == kind)
                .order_by(finding_events.c.id)
                .limit(max(limit * 20, 500))  # worst first among a bounded prefix: never the whole table
            ).mappings()
            found = sorted(rows, key=lambda r: (_SEVERITY_ORDER.get(r["severity"], 9), r["check"] or "", r["key"]))
            items[kind] = [
                {
                    "key": r["key"],
                    "check": r["check"] or r["key"].split("|", 1)[0],
                    "severity": r["severity"],
                    "message": r["message"],
                    "at": _iso(r["at"]),
                }
                for r in found[:limit]
            ]
    return {
        "snapshot": {"id": sid, "received_at": latest["received_at"], "mode": latest["mode"]},
        "opened": int(counts.get("opened", 0)),
        "changed": int(counts.get("changed", 0)),
        "cleared": int(counts.get("cleared", 0)),
        "items": items,
    }


def fabrics(store: Store) -> dict[str, Any]:
    """Devices per fabric and kind (``{"roce": {"host": n, "switch": n}, "ib": {...}}``; a ``roce+ib`` host
    counts on both) and the InfiniBand silo's open findings by severity (``ib_findings``)."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(devices.c.fabric, devices.c.kind, func.count()).group_by(devices.c.fabric, devices.c.kind)
        ).all()
        ib_switches = select(devices.c.name).where(devices.c.fabric == "ib", devices.c.kind == "switch")
        on_ib = select(finding_devices.c.finding_key).where(finding_devices.c.device.in_(ib_switches))
        by = conn.execute(
            select(findings.c.severity, func.count())
            .where(
                findings.c.cleared_at.is_(None),
                or_(findings.c.check.like("IB-%"), findings.c.key.in_(on_ib)),
            )
            .group_by(findings.c.severity)
        ).all()
    out: dict[str, dict[str, int]] = {f: {} for f in FABRICS}
    for fabric, kind, n in rows:
        for part in (fabric or "").split("+"):
            if part in out:
                out[part][kind] = out[part].get(kind, 0) + int(n)
    severities = dict.fromkeys(_SEVERITY_ORDER, 0)
    for severity, n in by:
        severities[severity] = severities.get(severity, 0) + int(n)
    return {"fabrics": out, "ib_findings": severities}


def _iso(value: Any) -> str | None:
    when = utc(value)
    return None if when is None else when.isoformat()


def unfilled_units(conn: Connection, ib_switch_ids: list[str]) -> set[str]:
    """The stored parts whose device rows predate ``devices.fabric`` (it is ``NULL``), and ``ib`` when an
    InfiniBand switch has no row yet: what a start-up re-check rewrites once."""
    have: dict[str, str | None] = {str(n): f for n, f in conn.execute(select(devices.c.name, devices.c.fabric))}
    units = set()
    for name, fabric in have.items():
        kind, _, short = name.partition(":")
        if fabric is None:
            units.add("ib" if name in ib_switch_ids else f"{'hosts' if kind == 'host' else 'switches'}/{short}")
    if any(n not in have for n in ib_switch_ids):
        units.add("ib")
    return units
