"""Reader arguments for tests: a directory on disk seen through the bundle :class:`~unifab.sources.Source`."""

from __future__ import annotations

from pathlib import Path

from unifab.sources import SourcePath, as_source_path


def within(root: Path, path: Path | None = None) -> SourcePath:
    """``path`` (a directory or file under ``root``) as the readers see it; ``root`` itself without ``path``."""
    base = as_source_path(root)
    return base if path is None else base / path.relative_to(root).as_posix()
