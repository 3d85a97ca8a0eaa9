"""Shared fixtures: where the real device samples live."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from unifab.jsonify import to_jsonable

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


GoldenCheck = Callable[[Path, Any], None]


@pytest.fixture
def golden() -> GoldenCheck:
    """``golden(path, record)``: the record's JSON must equal the golden file.

    ``UNIFAB_UPDATE_GOLDEN=1 pytest ...`` (re)writes the files; review the diff by hand before committing.
    """

    def check(path: Path, value: Any) -> None:
        actual = to_jsonable(value)
        if os.environ.get("UNIFAB_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(orjson.dumps(actual, option=orjson.OPT_INDENT_2) + b"\n")
        assert path.is_file(), f"golden file {path} missing (run with UNIFAB_UPDATE_GOLDEN=1)"
        assert actual == orjson.loads(path.read_bytes())

    return check
