"""Alembic migrations of the serve store (see env.py)."""

__all__ = ()
