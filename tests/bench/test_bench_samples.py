"""The harness reads the real outputs from the repository's own corpus unless told otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.context import default_samples

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_default_samples_are_in_the_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("UNIFAB_SAMPLES", raising=False)
    assert default_samples() == REPO_ROOT / "tests" / "data" / "samples"
    assert (default_samples() / "INDEX.md").is_file()
    monkeypatch.setenv("UNIFAB_SAMPLES", str(tmp_path))
    assert default_samples() == tmp_path
