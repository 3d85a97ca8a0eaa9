"""The benchmark harness's pure helpers: fits, verdicts, tables, machine description. Fast; no twins."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from bench.common import best_of, fit_power_law, machine_description, median, run_child
from bench.fig_cli import top_imports
from bench.fig_incremental import Change
from bench.fig_parse import _floor_one, _tokens, count_records
from bench.fig_peer_suzieq import describe, suzieq_mismatches, unifab_mismatches
from bench.results import FigureResult, Row, Target, fmt_number, to_json, to_markdown, write_results
from bench.runner import FIGURES, load_figure


def test_fit_recovers_exponent_and_coefficient() -> None:
    xs = [1024, 8192, 32768, 100_000]
    fit = fit_power_law(xs, [3e-4 * x**1.0 for x in xs])
    assert fit.exponent == pytest.approx(1.0)
    assert fit.coefficient == pytest.approx(3e-4)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.predict(2048) == pytest.approx(3e-4 * 2048)
    quadratic = fit_power_law(xs, [x**2 for x in xs])
    assert quadratic.exponent == pytest.approx(2.0)


def test_fit_with_noise_and_bad_input() -> None:
    fit = fit_power_law([1, 2, 4, 8], [1.0, 2.2, 3.9, 8.3])
    assert 0.95 < fit.exponent < 1.05
    assert 0.99 < fit.r2 <= 1.0
    with pytest.raises(ValueError, match="two distinct"):
        fit_power_law([5, 5], [1.0, 2.0])
    with pytest.raises(ValueError, match="differ"):
        fit_power_law([1, 2], [1.0])


def test_target_verdicts() -> None:
    ratio = Target("<=", 4.0, "×")
    assert Row("f", "c", "m", 3.9, "×", ratio).verdict == "pass"
    assert Row("f", "c", "m", 4.0, "×", ratio).verdict == "pass"
    assert Row("f", "c", "m", 9.5, "×", ratio).verdict == "MISSED"
    assert Row("f", "c", "m", None, "×", ratio).verdict == "NOT RUN"
    assert Row("f", "c", "m", math.nan, "×", ratio).verdict == "NOT RUN"
    assert Row("f", "c", "m", 9.5, "×").verdict == "info"
    assert Row("f", "c", "m", 150.0, "×", Target(">=", 100.0, "×")).verdict == "pass"
    assert Row("f", "c", "m", 1.0, "", Target("==", 1.0)).verdict == "pass"
    assert str(ratio) == "≤ 4×"
    assert str(Target(">=", 100.0, "%")) == "≥ 100%"
    assert str(Target("<=", 50.0, "ms")) == "≤ 50 ms"


def _figures() -> list[FigureResult]:
    fig = FigureResult("full-check", "Full check at scale", headline="32,768 GPUs: 9.8× floor")
    fig.add(Row("full-check", "32,768 GPUs", "check / read floor", 9.8, "×", Target("<=", 4.0, "×"), "a|b"))
    fig.add(Row("full-check", "32,768 GPUs", "check wall time", 41.25, "s"))
    fig.add(Row("full-check", "100,000 GPUs", "check peak RSS", None, "GiB", Target("<=", 4.0, "GiB"), "budget"))
    fig.add(Row("full-check", "all", "fitted k", 1.02, "", Target("<=", 1.1)))
    fig.notes.append("warm page cache")
    skipped = FigureResult("peer", "Peer", skipped="peer unavailable: no Python 3.9")
    return [fig, skipped]


def test_summary_line_counts_verdicts() -> None:
    fig, skipped = _figures()
    line = fig.summary_line()
    assert line.startswith("[full-check] 32,768 GPUs: 9.8× floor")
    assert "targets: 1/3 pass, MISSED 1, not run 1" in line
    assert skipped.summary_line() == "[peer] SKIPPED: peer unavailable: no Python 3.9"


def test_markdown_says_missed_plainly() -> None:
    md = to_markdown(_figures(), {"mode": "full", "seconds": 12.5, "machine": {"cpu": "Test CPU", "cores": 2}})
    assert "cpu Test CPU, cores 2" in md
    assert "## Targets missed" in md
    assert "- **MISSED** full-check / 32,768 GPUs: check / read floor = 9.80× (target ≤ 4×) — a|b" in md
    assert "| full-check |  | 32,768 GPUs | check / read floor | 9.80× | ≤ 4× | **MISSED** | a\\|b |" in md
    assert "| full-check |  | 100,000 GPUs | check peak RSS | — | ≤ 4 GiB | NOT RUN | budget |" in md
    assert "| peer |  | — | — | — | — | skipped | peer unavailable: no Python 3.9 |" in md
    assert "- **full-check**: warm page cache" in md


def test_markdown_without_misses() -> None:
    fig = FigureResult("cli", "CLI", headline="ok")
    fig.add(Row("cli", "help", "wall", 0.18, "s"))
    assert "## Targets missed\n\n- none\n" in to_markdown([fig], {})


def test_json_round_trip(tmp_path: Path) -> None:
    figures = _figures()
    doc = json.loads(to_json(figures, {"mode": "quick"}))
    rows = doc["figures"][0]["rows"]
    assert rows[0]["verdict"] == "MISSED"
    assert rows[0]["target"] == {"op": "<=", "bound": 4.0, "unit": "×", "text": "≤ 4×"}
    assert rows[2]["verdict"] == "NOT RUN" and rows[2]["value"] is None
    assert doc["figures"][1]["skipped"].startswith("peer unavailable")
    paths = write_results(tmp_path / "out", figures, {"mode": "quick"}, "quick")
    assert [p.name for p in paths] == ["quick.json", "quick.md"]
    assert all(p.is_file() for p in paths)


@pytest.mark.parametrize(
    ("value", "text"),
    [(100_000, "100,000"), (9.8, "9.80"), (41.25, "41.2"), (0.0123, "0.0123"), (1234.5, "1,234"), (0, "0")],
)
def test_fmt_number(value: float, text: str) -> None:
    assert fmt_number(value) == text


def test_machine_description_names_the_machine() -> None:
    desc = machine_description(Path("/tmp"))
    assert isinstance(desc["cpu"], str) and desc["cpu"]
    assert isinstance(desc["cores"], int) and desc["cores"] >= 1
    assert desc["python"] == ".".join(str(v) for v in sys.version_info[:3])
    assert desc["memory_gib"] is None or float(str(desc["memory_gib"])) > 0
    assert "git_commit" in desc and "load_avg_1m_at_start" in desc


def test_run_child_measures_time_memory_and_timeout() -> None:
    run = run_child([sys.executable, "-c", "b = bytearray(64 * 2**20); print(len(b))"], timeout_s=60)
    assert run.ok and run.returncode == 0
    assert run.stdout.strip() == str(64 * 2**20).encode()
    assert run.peak_rss_bytes >= 64 * 2**20  # the child's own peak, not the harness's
    assert run.wall_s > 0
    slow = run_child([sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5)
    assert slow.timed_out and not slow.ok
    assert "timed out" in slow.describe_failure()
    assert best_of([slow, run]) is run
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5


def test_importtime_top_level_modules() -> None:
    stderr = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 |   _io",
            "import time:      2000 |      90000 | typer",
            "import time:       500 |      60000 |   rich.console",
            "import time:       300 |      15000 | unifab.cli",
        ]
    )
    assert top_imports(stderr) == [("typer", 90.0), ("unifab.cli", 15.0)]


def test_peer_mismatch_sets_compare_links_not_rows() -> None:
    rows = [
        {"hostname": "exit01", "ifname": "Ethernet4", "peerHostname": "dcedge01", "peerIfname": "xe-0/0/0"}
        | {"result": "fail", "assertReason": ["Speed mismatch"]},
        {"hostname": "dcedge01", "ifname": "xe-0/0/0", "peerHostname": "exit01", "peerIfname": "Ethernet4"}
        | {"result": "fail", "assertReason": ["Speed mismatch"]},
        {"hostname": "leaf01", "ifname": "Ethernet1", "peerHostname": "", "peerIfname": ""}
        | {"result": "fail", "assertReason": "No Peer Found"},
        {"hostname": "leaf01", "ifname": "Ethernet2", "peerHostname": "spine01", "peerIfname": "Ethernet1"}
        | {"result": "pass", "assertReason": "-"},
    ]
    peer = suzieq_mismatches(rows)
    assert peer == {("speed", frozenset({("exit01", "Ethernet4"), ("dcedge01", "xe-0/0/0")}))}
    findings = [
        {"check": "LINK-SPEED", "subject": {"kind": "link", "a": "dcedge01:xe-0/0/0", "b": "exit01:Ethernet4"}},
        {"check": "QOS-PFC-MISMATCH", "subject": {"kind": "link", "a": "exit01:Ethernet5", "b": "x:y"}},
    ]
    assert unifab_mismatches(findings, {"dcedge01", "exit01"}) == peer
    assert describe(peer) == "speed dcedge01:xe-0/0/0—exit01:Ethernet4"


def test_incremental_change_is_recognised_in_findings() -> None:
    change = Change("one host", "gpu007", {}, "QOS-PFC-MISMATCH", "gpu007:eth0")
    hit = {"check": "QOS-PFC-MISMATCH", "subject": {"kind": "link", "a": "gpu007:eth0", "b": "leaf:Ethernet48"}}
    other = {"check": "QOS-MTU", "subject": {"kind": "link", "a": "gpu007:eth0", "b": "leaf:Ethernet48"}}
    assert change.seen_in([other, hit])
    assert not change.seen_in([other])


def test_parse_floor_and_record_count() -> None:
    assert _floor_one("json-stream", '[{"a": 1}]\n[{"b": 2}] [3]') == 3
    assert _floor_one("json", '{"a": 1}') == {"a": 1}
    assert _floor_one("json", "lldp.eth0.via=LLDP\n") == ["lldp.eth0.via=LLDP"]
    assert count_records((1, 2, 3)) == 3
    assert count_records(object()) == 1


def test_every_registered_figure_has_the_module_shape() -> None:
    for name in FIGURES:
        fig = load_figure(name)
        assert isinstance(fig.NAME, str)
        assert name == fig.NAME
        assert isinstance(fig.TITLE, str) and fig.TITLE
        assert callable(fig.run) and callable(fig.twin_sizes)


def test_auto_corpus_matching_by_name_tokens() -> None:
    assert _tokens("junos-lldp") <= _tokens("junos-qfx-19.4R1.10_leaf01_show_lldp_neighbors_detail.json")
    assert _tokens("nxos-interfaces") <= _tokens("nxos-9.3.4_leaf01_show_interface_brief_json.json")
    assert not _tokens("eos-config") <= _tokens("eos_avd_intended_qos.cfg")
