"""Alembic's environment: migrate the connection :func:`unifab.serve.store.migrate` hands over.

There is no alembic.ini: the store builds the configuration in code and passes its open connection in
``config.attributes["connection"]``, so migrations run on the very engine (and SQLite pragmas) the server uses.
"""

from __future__ import annotations

from alembic import context

from unifab.serve.schema import metadata

__all__ = ["connection"]

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
