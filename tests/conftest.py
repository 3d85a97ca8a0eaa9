"""Shared fixtures: where the real device samples live, the private Redis, the session twin."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from hypothesis import HealthCheck, settings

from unifab.jsonify import to_jsonable

if TYPE_CHECKING:
    from redis_service import RedisServer

REPO_ROOT = Path(__file__).resolve().parents[1]

# Property tests judge what is generated, never how fast: on a loaded 2-core CI machine Hypothesis' per-example
# deadline and its "input generation is slow" health check failed tests whose properties held. A test's own
# @settings still override these.
settings.register_profile("unifab", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("unifab")


def _samples_dir() -> Path:
    """``tests/data/samples`` in this repository (refresh it with ``scripts/sync-samples DIR``);
    ``UNIFAB_SAMPLES`` points the tests at another copy."""
    env = os.environ.get("UNIFAB_SAMPLES")
    return Path(env) if env else REPO_ROOT / "tests" / "data" / "samples"


SAMPLES = _samples_dir()


@pytest.fixture(scope="session", autouse=True)
def private_record_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point the default record cache (``check`` on > 256 devices) at this session's temp dir, so no
    test writes the user's ``~/.cache``; tests of the cache pass ``--cache DIR`` or set the variable."""
    old = os.environ.get("UNIFAB_CACHE_DIR")
    os.environ["UNIFAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("record-cache"))
    yield
    if old is None:
        os.environ.pop("UNIFAB_CACHE_DIR", None)
    else:
        os.environ["UNIFAB_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def samples() -> Path:
    """The real-output corpus (``tests/data/samples``); tests fail, never skip, when it is absent."""
    if not (SAMPLES / "INDEX.md").is_file():
        pytest.fail(
            f"sample corpus not found at {SAMPLES} (scripts/sync-samples DIR refreshes it; UNIFAB_SAMPLES overrides)"
        )
    return SAMPLES


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private ``redis-server`` for this session, started on first use: a free port on 127.0.0.1, its
    directory under the session's temp dir, nothing saved, shut down at the end. Tests connect only to
    ``redis_server.host``/``.port`` and may flush it. No ``redis-server`` on PATH: skip, or fail when
    ``UNIFAB_REQUIRE_SERVICES=1``. See tests/support/redis_service.py.
    """
    from redis_service import private_redis

    with private_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


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
