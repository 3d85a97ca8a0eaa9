"""The initial schema: snapshots, device_files, devices, findings, finding_devices, tokens, audit.

Revision ID: 0001
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision: str | None = None
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None

__all__ = ["branch_labels", "depends_on", "down_revision", "downgrade", "revision", "upgrade"]


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(JSONB(), "postgresql")


def _when() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("received_at", _when(), nullable=False),
        sa.Column("devices", _json(), nullable=False),
        sa.Column("units", _json(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("findings", sa.Integer(), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
    )
    op.create_table(
        "device_files",
        sa.Column("unit", sa.String(300), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("snapshot_id", sa.String(200), nullable=False),
        sa.Column("updated_at", _when(), nullable=False),
    )
    op.create_table(
        "devices",
        sa.Column("name", sa.String(300), primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("os", sa.String(40), nullable=True),
        sa.Column("collected_at", _when(), nullable=True),
        sa.Column("received_at", _when(), nullable=False),
        sa.Column("origin", _json(), nullable=False),
        sa.Column("snapshot_id", sa.String(200), nullable=False),
    )
    op.create_table(
        "findings",
        sa.Column("key", sa.Text(), primary_key=True),
        sa.Column("check", sa.String(100), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("severity_order", sa.Integer(), nullable=False),
        sa.Column("subject", _json(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("document", _json(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("first_seen", _when(), nullable=False),
        sa.Column("last_seen", _when(), nullable=False),
        sa.Column("cleared_at", _when(), nullable=True),
        sa.Column("snapshot_id", sa.String(200), nullable=False),
    )
    op.create_index("ix_findings_open_order", "findings", ["cleared_at", "severity_order", "check", "key"])
    op.create_index("ix_findings_check", "findings", ["check"])
    op.create_table(
        "finding_devices",
        sa.Column("finding_key", sa.Text(), sa.ForeignKey("findings.key", ondelete="CASCADE"), primary_key=True),
        sa.Column("device", sa.String(300), primary_key=True),
    )
    op.create_index("ix_finding_devices_device", "finding_devices", ["device"])
    op.create_table(
        "tokens",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("hash", sa.Text(), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", _when(), nullable=False),
        sa.Column("revoked_at", _when(), nullable=True),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("at", _when(), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("action", sa.String(50), nullable=False),
        sa.Column("target", sa.String(300), nullable=False),
        sa.Column("detail", _json(), nullable=False),
    )


def downgrade() -> None:
    for table in ("audit", "tokens", "finding_devices", "findings", "devices", "device_files", "snapshots"):
        op.drop_table(table)
