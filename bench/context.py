"""What every figure module receives, and the shape every figure module has.

A figure is one module with::

    NAME: str                                   # short id, used by --only
    TITLE: str                                  # one line, for the report
    def twin_sizes(ctx: Context) -> list[int]   # twin bundles it needs (may be [])
    def run(ctx: Context) -> FigureResult       # measure, compare, return rows

and one line in ``bench.runner.FIGURES``. Nothing else needs to change to add one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.common import REPO_ROOT
from bench.results import FigureResult
from bench.twins import TwinCache


def default_samples() -> Path:
    """The real-output corpus kept in the repository (``tests/data/samples``); ``UNIFAB_SAMPLES`` overrides it."""
    env = os.environ.get("UNIFAB_SAMPLES")
    return Path(env) if env else REPO_ROOT / "tests" / "data" / "samples"


@dataclass(slots=True)
class Context:
    quick: bool
    scratch: Path
    twins: TwinCache
    samples: Path = field(default_factory=default_samples)
    size_budget_s: float = 25 * 60  # one full-check size may take this long (generate + floor + check)
    sizes: list[int] | None = None  # overrides the full-check sizes
    setup_peer: bool = False  # allowed to create the peer's virtualenv (downloads from PyPI)
    shared: dict[Any, Any] = field(default_factory=dict)  # measurements one figure leaves for another


class Figure(Protocol):
    NAME: str
    TITLE: str

    def twin_sizes(self, ctx: Context) -> list[int]: ...

    def run(self, ctx: Context) -> FigureResult: ...
