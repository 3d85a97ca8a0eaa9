"""The suite needs nothing outside the repository and talks only to services it started itself.

* Redis: tests use the private ``redis-server`` of the ``redis_server`` fixture (tests/conftest.py),
  never a developer's or CI's own Redis on the standard port. The standard port number may appear in
  the tests tree only on a line whose comment says ``no-connect:`` and why (for instance, an address
  that is only formatted), in this file, or in the real device outputs under tests/data/.
* Samples: the corpus is tests/data/samples; no code names the old location beside the repository.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = REPO_ROOT / "tests"
STANDARD_PORT = "63" + "79"  # spelled in two parts so that this file's own guard needs no exception
ALLOWED_MARK = "no-connect:"
TEXT_SUFFIXES = {".py", ".json", ".yaml", ".yml", ".txt", ".toml", ".cfg", ".ini", ".conf", ".sh", ".md", ""}


def _tree_files() -> list[Path]:
    data = TESTS / "data"
    return sorted(
        p
        for p in TESTS.rglob("*")
        if p.is_file()
        and data not in p.parents
        and "__pycache__" not in p.parts
        and p.suffix in TEXT_SUFFIXES
        and p.resolve() != Path(__file__).resolve()
    )


def test_no_test_uses_the_standard_redis_port() -> None:
    word = re.compile(rf"(?<!\d){STANDARD_PORT}(?!\d)")
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()}"
        for path in _tree_files()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if word.search(line) and ALLOWED_MARK not in line
    ]
    assert not offenders, (
        f"port {STANDARD_PORT} is a shared Redis: use the redis_server fixture (or mark a line that only "
        f"formats an address with '# {ALLOWED_MARK} why'):\n" + "\n".join(offenders)
    )


@pytest.mark.parametrize("where", ["tests", "bench", "src", "scripts"])
def test_no_code_reads_outside_the_repository(where: str) -> None:
    needles = ("shared/samples", "/work/" + "shared", "REPO_ROOT.parent", "../shared")
    offenders = []
    for path in sorted((REPO_ROOT / where).rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or (TESTS / "data") in path.parents:
            continue
        if path.suffix not in {".py", ".sh", ""} or path.resolve() == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        offenders += [f"{path.relative_to(REPO_ROOT)}: {needle}" for needle in needles if needle in text]
    assert not offenders, "the tests' corpus is tests/data/samples (UNIFAB_SAMPLES overrides):\n" + "\n".join(offenders)


def test_samples_default_to_the_repository(samples: Path) -> None:
    if os.environ.get("UNIFAB_SAMPLES"):
        pytest.skip("UNIFAB_SAMPLES points the tests at another corpus")
    assert samples == TESTS / "data" / "samples"
    assert (samples / "INDEX.md").is_file()
