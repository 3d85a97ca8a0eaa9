"""``unifab check --cache DIR`` / ``--no-cache``: the same findings, the directory only where asked or needed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.record_cache import MARKER, RACY_NS
from unifab.twin.generate import generate

runner = CliRunner()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small twin whose files are older than the cache's racy window (so its entries can be written)."""
    out = tmp_path_factory.mktemp("cache") / "b"
    generate(out, 32, seed=2, scenarios=("pfc-mismatch",))
    time.sleep(RACY_NS / 1e9 + 0.1)
    return out


def _check(bundle: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", str(bundle), "--format", "json", "-q", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_cache_gives_the_same_findings_and_fills_its_directory(bundle: Path, tmp_path: Path) -> None:
    cache = tmp_path / "records"
    plain = _check(bundle, "--no-cache")
    first = _check(bundle, "--cache", str(cache))
    assert (cache / MARKER).is_file()
    entries = sorted(cache.glob("??/*.rec"))
    assert len(entries) == sum(1 for top in ("hosts", "switches") for _ in (bundle / top).iterdir())
    stamps = [p.stat().st_mtime_ns for p in entries]
    second = _check(bundle, "--cache", str(cache))
    assert plain == first == second
    assert plain[0] == 1 and '"QOS-PFC-MISMATCH"' in plain[1]
    assert sorted(cache.glob("??/*.rec")) == entries
    assert [p.stat().st_mtime_ns for p in entries] != stamps  # read (and marked used), not rewritten elsewhere


def test_default_cache_is_off_for_a_small_bundle(bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNIFAB_CACHE_DIR", str(tmp_path / "default"))
    assert _check(bundle)[0] == 1
    assert not (tmp_path / "default").exists()


def test_cache_and_no_cache_and_a_foreign_directory_are_usage_errors(bundle: Path, tmp_path: Path) -> None:
    code, _, err = _check(bundle, "--cache", str(tmp_path / "c"), "--no-cache")
    assert code == 2 and "--cache and --no-cache do not combine" in err
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    code, _, err = _check(bundle, "--cache", str(foreign))
    assert code == 2 and f"--cache {foreign}" in err and "CACHEDIR.TAG" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["cat.jpg"]
    code, _, err = _check(bundle, "--watch", "--cache", str(tmp_path / "c"))
    assert code == 2 and "--watch does not combine with --cache" in err
