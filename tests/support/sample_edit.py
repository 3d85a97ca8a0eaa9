"""A real sample with one line replaced, for the partial-mode parser tests (one bad line costs what it holds)."""

from __future__ import annotations

__all__ = ["replace_line"]


def replace_line(raw: str, needle: str, replacement: str) -> tuple[str, int]:
    """``raw`` with the first line holding ``needle`` replaced by ``replacement``; and that line's number."""
    lines = raw.split("\n")
    index = next(i for i, line in enumerate(lines) if needle in line)
    lines[index] = replacement
    return "\n".join(lines), index + 1
