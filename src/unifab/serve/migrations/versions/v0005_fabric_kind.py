"""Which fabric a device is on, and the finding events of one snapshot by index.

Revision ID: 0005

``devices.fabric`` is ``roce``, ``ib`` or ``roce+ib`` (a host with RoCE NICs and an InfiniBand HCA), ``None``
for rows written before this revision until their device is ingested again (a restart's re-check rewrites
them). InfiniBand switches (read from the bundle's ``ib/`` part) get rows of their own, kind ``switch``,
os ``ib``. ``ix_finding_events_snapshot`` answers "what changed with this snapshot" (the overview) without
scanning the events of every snapshot.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None

__all__ = ["branch_labels", "depends_on", "down_revision", "downgrade", "revision", "upgrade"]


def upgrade() -> None:
    with op.batch_alter_table("devices") as batch:
        batch.add_column(sa.Column("fabric", sa.String(20), nullable=True))
    op.create_index("ix_finding_events_snapshot", "finding_events", ["snapshot_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_finding_events_snapshot", table_name="finding_events")
    with op.batch_alter_table("devices") as batch:
        batch.drop_column("fabric")
