"""Writing twin files."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_text"]


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
