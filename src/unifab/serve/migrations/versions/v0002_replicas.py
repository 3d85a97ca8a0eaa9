"""Several replicas and scoped tokens: device_files.generation, counters, jobs, tokens.hosts.

Revision ID: 0002
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision: str | None = "0001"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None

__all__ = ["branch_labels", "depends_on", "down_revision", "downgrade", "revision", "upgrade"]


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("device_files") as batch:
        batch.add_column(sa.Column("generation", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_device_files_generation", "device_files", ["generation"])
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.Integer(), nullable=False),
    )
    op.bulk_insert(counters, [{"name": "ingest", "value": 0}, {"name": "recheck", "value": 0}])
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("snapshot_id", sa.String(200), nullable=False, unique=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(100), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result", _json(), nullable=True),
    )
    op.create_index("ix_jobs_state", "jobs", ["state", "id"])
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("hosts", _json(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("hosts")
    op.drop_table("jobs")
    op.drop_table("counters")
    op.drop_index("ix_device_files_generation", "device_files")
    with op.batch_alter_table("device_files") as batch:
        batch.drop_column("generation")
