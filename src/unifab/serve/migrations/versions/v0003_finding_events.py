"""Finding history: one row per change of a finding key (opened, changed, cleared) over snapshots.

Revision ID: 0003

The findings table keeps only a key's current occurrence (a key that clears and returns gets a new
first_seen); ``finding_events`` keeps every transition, so ``/api/v1/findings/history`` can list each
occurrence. Existing rows are backfilled: an ``opened`` event at first_seen, and ``cleared`` at cleared_at.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None

__all__ = ["branch_labels", "depends_on", "down_revision", "downgrade", "revision", "upgrade"]


def upgrade() -> None:
    op.create_table(
        "finding_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("event", sa.String(20), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("snapshot_id", sa.String(200), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
    )
    op.create_index("ix_finding_events_key", "finding_events", ["key", "id"])
    columns = "key, event, at, snapshot_id, severity, message"
    op.execute(
        f"INSERT INTO finding_events ({columns}) "
        "SELECT key, 'opened', first_seen, snapshot_id, severity, message FROM findings"
    )
    op.execute(
        f"INSERT INTO finding_events ({columns}) "
        "SELECT key, 'cleared', cleared_at, snapshot_id, severity, message FROM findings WHERE cleared_at IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_index("ix_finding_events_key", "finding_events")
    op.drop_table("finding_events")
