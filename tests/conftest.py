"""Shared fixtures: where the real device samples live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _samples_dir() -> Path:
    env = os.environ.get("UNIFAB_SAMPLES")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "samples"


SAMPLES = _samples_dir()


@pytest.fixture(scope="session")
def samples() -> Path:
    """The real-output corpus (``../shared/samples``); tests fail, never skip, when it is absent."""
    if not (SAMPLES / "INDEX.md").is_file():
        pytest.fail(f"sample corpus not found at {SAMPLES} (set UNIFAB_SAMPLES to its path)")
    return SAMPLES


@pytest.fixture(scope="session")
def twin_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 128-GPU twin with every v1 scenario, generated once per test session (read-only for tests)."""
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    out = tmp_path_factory.mktemp("twin") / "bundle"
    generate(out, gpus=128, seed=3, scenarios=tuple(SCENARIOS))
    return out
