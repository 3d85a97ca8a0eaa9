"""Small helpers shared by the text parsers: decoding, integer tokens, name sort order."""

from __future__ import annotations

import re

from unifab.errors import ParseError

__all__ = ["decode_utf8", "natural_key", "parse_int", "parse_uint"]

_NATURAL = re.compile(r"(\d+)")


def decode_utf8(text: str | bytes, source: str) -> str:
    """``text`` as a string: bytes are decoded as UTF-8, or a :class:`ParseError` names the bad byte."""
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting Ethernet2 before Ethernet10."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _NATURAL.split(name) if p)


def parse_int(token: str, source: str, line: int | None, what: str, key: str | None = None) -> int:
    """``int(token)`` that raises a :class:`ParseError` naming the place and the expectation."""
    try:
        return int(token.strip())
    except ValueError:
        raise ParseError(source, f"expected {what}, got {token.strip()!r}", line=line, key=key) from None


def parse_uint(
    token: str,
    source: str,
    what: str,
    *,
    line: int | None = None,
    key: str | None = None,
    hi: int | None = None,
    max_digits: int | None = None,
    strip: bool = False,
) -> int:
    """A non-negative decimal integer: ASCII digits only (no sign, ``_`` or blanks; ``strip`` drops
    surrounding blanks first), at most ``max_digits`` of them and at most ``hi`` when given.

    Otherwise a :class:`ParseError` at ``line`` / ``key``: "``what`` as a non-negative integer, got
    ``token``", or "``what`` in 0..``hi``, got N".
    """
    text = token.strip() if strip else token
    if not (text.isdigit() and text.isascii() and (max_digits is None or len(text) <= max_digits)):
        raise ParseError(source, f"{what} as a non-negative integer, got {token!r}", line=line, key=key)
    value = int(text)
    if hi is not None and value > hi:
        raise ParseError(source, f"{what} in 0..{hi}, got {value}", line=line, key=key)
    return value
