"""Lets the render tests import their helpers (``strategies``, ``render_profiles``, ``render_expect``):
the suite runs with ``--import-mode=importlib``, which does not put a test's folder on ``sys.path``."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
