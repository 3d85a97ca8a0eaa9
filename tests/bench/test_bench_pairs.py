"""The full-check figure's pairs: warmed right before, first side alternating, pairs with storage reads rejected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench.common import ChildRun
from bench.context import Context
from bench.fig_peer_suzieq import ensure_peer
from bench.runner import run_figures
from bench.twins import TwinCache

from bench import cache, fig_full_check


def _bundle(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    (root / "hosts" / "h1").mkdir(parents=True)
    for i in range(20):
        (root / "hosts" / "h1" / f"f{i}.txt").write_text("x" * 1000)
    return root


def _side(name: str, log: Path) -> list[str]:
    """A child that appends its name to ``log`` (so the order the sides ran in can be read back)."""
    code = f"open({str(log)!r}, 'a').write({name!r} + '\\n'); print('{{\"files\": 20, \"bytes\": 20000}}')"
    return [sys.executable, "-c", code]


def test_pairs_alternate_which_side_goes_first(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    log = tmp_path / "order"
    argvs = {"floor": _side("floor", log), "check": _side("check", log)}
    # the size the cold test is judged against: a child interpreter that pages its own libraries back in (the
    # machine evicts idle page cache) reads a few KiB from storage, which must not count against a 20 kB bundle
    pairs, rejected = fig_full_check.measure_pairs(argvs, bundle, 1 << 30, 3, 60, "test")
    assert len(pairs) == 3 and not rejected
    assert log.read_text().split() == ["floor", "check", "check", "floor", "floor", "check"]


def _fake(disk: dict[str, list[int]]) -> object:
    def run(argv: list[str], *, timeout_s: float) -> ChildRun:
        side = "floor" if "floor" in argv[-1] else "check"
        return ChildRun(tuple(argv), 0, 1.0, 1, 0.5, 0.1, b"{}", b"", False, disk[side].pop(0))

    return run


def test_a_pair_with_a_side_reading_from_storage_is_rejected_and_retaken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _bundle(tmp_path)
    # the first pair: the floor fetched half the bundle from storage (the cold reads fell on one side)
    monkeypatch.setattr(fig_full_check, "run_child", _fake({"floor": [10_000, 0, 0], "check": [0, 0, 0]}))
    argvs = {"floor": ["floor"], "check": ["check"]}
    pairs, rejected = fig_full_check.measure_pairs(argvs, bundle, 20000, 2, 60, "test")
    assert len(pairs) == 2
    assert len(rejected) == 1 and "floor read" in rejected[0] and "rejected" in rejected[0]


def test_no_warm_pair_at_all_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _bundle(tmp_path)
    monkeypatch.setattr(fig_full_check, "run_child", _fake({"floor": [20_000] * 4, "check": [20_000] * 4}))
    pairs, rejected = fig_full_check.measure_pairs({"floor": ["floor"], "check": ["check"]}, bundle, 20000, 2, 60, "t")
    assert pairs == [] and len(rejected) == 4  # reps + 2 tries, each rejected


def test_warm_reads_every_byte_and_evict_says_when_it_cannot(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    assert cache.warm(bundle) == 20000
    dropped = cache.evict(bundle)
    assert dropped is (cache._fs_type(bundle) not in ("tmpfs", "ramfs"))
    assert cache.reclaim_note()


def test_scratch_directory_is_created_when_missing(tmp_path: Path) -> None:
    scratch = tmp_path / "not" / "yet"
    run_figures([], quick=True, out=tmp_path / "out", scratch_parent=scratch)
    assert scratch.is_dir()


def test_the_peer_figure_without_its_peer_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNIFAB_BENCH_SUZIEQ_VENV", str(tmp_path / "no-venv"))
    ctx = Context(quick=True, scratch=tmp_path, twins=TwinCache(tmp_path))
    setup = ensure_peer(ctx)
    assert setup.venv is None
    assert "not installed" in setup.why_not and "--setup-peer" in setup.why_not
