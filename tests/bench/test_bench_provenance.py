"""``--only`` re-measures figures inside the existing results, each figure saying where it was measured."""

from __future__ import annotations

import json
from pathlib import Path

from bench.fig_incremental import SessionUpdate, change_one_host, change_one_switch
from bench.fig_peer_suzieq import run_unifab, unifab_mismatches
from bench.results import FigureResult, Row, Target, merge_figures, provenance, read_results, to_markdown, write_results
from bench.runner import FIGURES, _merged


def _meta(commit: str, started: str, command: str) -> dict[str, object]:
    return {
        "command": command,
        "mode": "full",
        "started": started,
        "seconds": 12.0,
        "machine": {"cpu": "AMD EPYC", "cores": 2, "memory_gib": 23.5, "git_commit": commit, "git_dirty": False},
        "load_avg_1m_per_figure": {},
        "twin_generation_s": {},
    }


def _figure(name: str, value: float) -> FigureResult:
    fig = FigureResult(name, f"{name} title", headline=f"{name} {value}")
    fig.add(Row(name, "case", "metric", value, "ms", Target("<=", 50.0, "ms"), "note"))
    return fig


def test_only_replaces_its_figures_and_keeps_the_others(tmp_path: Path) -> None:
    old_meta = _meta("a" * 40, "2026-11-30T04:27:34+00:00", "python -m bench")
    write_results(tmp_path, [_figure("cli", 10.0), _figure("incremental", 114000.0)], old_meta, "latest")
    fresh = _figure("incremental", 12.5)
    new_meta = _meta("b" * 40, "2026-11-30T08:00:00+00:00", "python -m bench --only incremental")
    fresh.measured_on = provenance(new_meta)
    figures, meta = _merged(tmp_path / "latest.json", [fresh], new_meta)
    assert [f.name for f in figures] == [n for n in FIGURES if n in ("cli", "incremental")]
    by_name = {f.name: f for f in figures}
    assert by_name["incremental"].rows[0].value == 12.5
    assert by_name["cli"].rows[0].value == 10.0
    # the old figure keeps the old run's provenance, the new one its own
    assert by_name["cli"].measured_on["commit"] == "a" * 40
    assert by_name["cli"].measured_on["date"] == "2026-11-30T04:27:34+00:00"
    assert by_name["incremental"].measured_on["commit"] == "b" * 40
    assert meta["started"] == "2026-11-30T04:27:34+00:00"
    assert [u["figures"] for u in meta["updates"]] == [["incremental"]]
    write_results(tmp_path, figures, meta, "latest")
    md = (tmp_path / "latest.md").read_text()
    assert "Updated: `python -m bench --only incremental`" in md
    assert "| incremental | bbbbbbbbbbbb | 2026-11-30T08:00:00+00:00 |" in md
    assert "| cli | aaaaaaaaaaaa | 2026-11-30T04:27:34+00:00 |" in md
    assert "| incremental | bbbbbbbbbb 2026-11-30 | case | metric | 12.5 ms |" in md
    again = read_results(tmp_path / "latest.json")
    assert again is not None
    assert [f.to_json() for f in again[0]] == [f.to_json() for f in figures]


def test_a_missing_or_broken_previous_file_writes_just_this_run(tmp_path: Path) -> None:
    fresh = [_figure("peer", 1.0)]
    meta = _meta("c" * 40, "2026-11-30T08:00:00+00:00", "python -m bench --only peer")
    assert _merged(tmp_path / "latest.json", fresh, meta) == (fresh, meta)
    (tmp_path / "latest.json").write_text("{not json")
    assert _merged(tmp_path / "latest.json", fresh, meta) == (fresh, meta)
    assert "| peer |" in to_markdown(merge_figures([], fresh, list(FIGURES)), meta)


def test_peer_capture_becomes_a_bundle_unifab_reads(samples: Path, tmp_path: Path) -> None:
    uni = run_unifab(samples / "switch" / "eos" / "suzieq_gather_eos", tmp_path, quick=True)
    assert uni.unavailable == ""
    assert len(uni.devices) == 8
    assert uni.switch_links > 0
    assert not [f for f in uni.findings if f["check"].startswith("INPUT-")]
    assert unifab_mismatches(uni.findings, uni.devices) == set()


def test_session_strategy_sees_the_change_and_matches_a_full_check(tmp_path: Path) -> None:
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.jsonify import to_jsonable
    from unifab.twin.generate import generate

    bundle = tmp_path / "b"
    generate(bundle, gpus=128, seed=7, scenarios=("pfc-mismatch", "uplink-mtu"))
    strategy = SessionUpdate(reps=2)
    strategy.prepare(bundle, 60)
    for make in (change_one_host, change_one_switch):
        change = make(bundle, strategy.baseline())
        try:
            seconds, findings = strategy.updated_findings(bundle, change, 60)
            full = to_jsonable(run_checks(load_bundle(bundle)))
        finally:
            change.restore()
            strategy.restored(change)
        assert seconds > 0
        assert change.seen_in(findings)
        assert json.dumps(findings, sort_keys=True) == json.dumps(full, sort_keys=True)
        assert strategy.last_mode == "incremental"
