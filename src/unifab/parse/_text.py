"""Small helpers shared by line-oriented parsers."""

from __future__ import annotations

from unifab.errors import ParseError


def parse_int(token: str, source: str, line: int | None, what: str, key: str | None = None) -> int:
    """``int(token)`` that raises a :class:`ParseError` naming the place and the expectation."""
    try:
        return int(token.strip())
    except ValueError:
        raise ParseError(source, f"expected {what}, got {token.strip()!r}", line=line, key=key) from None
