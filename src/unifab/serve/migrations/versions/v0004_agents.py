"""Host agents: one row per host whose agent (``unifab agent run``) sent a heartbeat.

Revision ID: 0004

``agents`` holds each agent's last heartbeat: when it was seen, its version, how many snapshots wait in its
spool (and their bytes), how many it dropped in total because the spool was full, and the last snapshot it
produced. The dropped-snapshots note of a push (``X-Unifab-Dropped-Snapshots``) goes into that ingest's
audit entry, no column needed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None

__all__ = ["branch_labels", "depends_on", "down_revision", "downgrade", "revision", "upgrade"]


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("host", sa.String(253), primary_key=True),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.String(50), nullable=False),
        sa.Column("spool_depth", sa.Integer(), nullable=False),
        sa.Column("spool_bytes", sa.BigInteger(), nullable=False),
        sa.Column("dropped", sa.BigInteger(), nullable=False),
        sa.Column("last_snapshot", sa.String(200), nullable=True),
        sa.Column("interval", sa.Float(), nullable=True),
        sa.Column("actor", sa.String(100), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("agents")
