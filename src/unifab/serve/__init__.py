"""``unifab serve``: the single pane over a fabric — a store, ingest, a REST API, a web UI and /metrics.

Built on the library's public API (:mod:`unifab.api`: :class:`~unifab.api.Session`, ``findings_document``,
``check_catalog``, :class:`~unifab.api.MemorySource`), never on the CLI. Its third-party dependencies
(FastAPI, SQLAlchemy, alembic, prometheus-client, argon2) are the ``serve`` extra; nothing here is imported
when the command line starts, and this package's ``__init__`` imports none of them.

Modules: :mod:`~unifab.serve.schema` (tables) and ``migrations/`` (alembic, applied at start-up),
:mod:`~unifab.serve.store` (the one store interface over SQLite or PostgreSQL), :mod:`~unifab.serve.auth`
(tokens and roles), :mod:`~unifab.serve.live` (the fabric the server holds: its files and incremental
session), :mod:`~unifab.serve.ingest` (upload → validated bundle part), :mod:`~unifab.serve.work` (accept
and re-check, shared by replicas through the database), :mod:`~unifab.serve.service` (one server),
:mod:`~unifab.serve.client` (``--push``; httpx only), :mod:`~unifab.serve.app` (FastAPI
routes), :mod:`~unifab.serve.ui` (server-rendered pages) and :mod:`~unifab.serve.metrics`. docs/serve.md.
"""

from __future__ import annotations

__all__ = ()
