"""Figure 5 — CLI responsiveness: ``unifab --help`` and ``unifab parse`` on one small file vs ``python -c pass``.

Each command runs N times as a fresh process, best of N, interleaved with the floor so load on the
machine hits all three alike. The notes list the modules that dominate start-up, read from
``python -X importtime`` (cumulative microseconds of the top-level imports), which is where lazy
imports pay off.
"""

from __future__ import annotations

import re
import sys

from bench.common import ChildRun, best_of, human_seconds, log, run_child, unifab_argv
from bench.context import Context
from bench.results import FigureResult, Row

NAME = "cli"
TITLE = "CLI responsiveness: `unifab --help` and `unifab parse` on one small file vs. `python -c pass`"

SMALL_SAMPLE = "host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"
SMALL_FORMAT = "mlnx-qos"
_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def twin_sizes(ctx: Context) -> list[int]:
    return []


def _entry(args: list[str]) -> list[str]:
    """The CLI invoked in-process under ``-X importtime`` (same code path as the console script)."""
    code = f"import sys; sys.argv = {['unifab', *args]!r}; from unifab.cli import main; main()"
    return [sys.executable, "-X", "importtime", "-c", code]


def top_imports(stderr: str, n: int = 6) -> list[tuple[str, float]]:
    """Top-level modules by cumulative import time (ms), from ``-X importtime`` output."""
    top: dict[str, float] = {}
    for line in stderr.splitlines():
        m = _IMPORTTIME.match(line)
        if m and len(m.group(3)) <= 1:  # one space of indent = imported by __main__ directly
            top[m.group(4)] = max(top.get(m.group(4), 0.0), int(m.group(2)) / 1000)
    return sorted(top.items(), key=lambda kv: -kv[1])[:n]


def run(ctx: Context) -> FigureResult:
    fig = FigureResult(NAME, TITLE)
    reps = 5 if ctx.quick else 15
    sample = ctx.samples / SMALL_SAMPLE
    commands: dict[str, list[str]] = {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "unifab --help": [*unifab_argv(), "--help"],
    }
    if sample.is_file():
        commands[f"unifab parse {SMALL_FORMAT} <{sample.stat().st_size} B file>"] = [
            *unifab_argv(),
            "parse",
            SMALL_FORMAT,
            str(sample),
        ]
    else:
        fig.notes.append(f"sample {sample} not found: `unifab parse` not measured")
    runs: dict[str, list[ChildRun]] = {k: [] for k in commands}
    log(f"{len(commands)} commands × {reps}")
    for _ in range(reps):
        for label, argv in commands.items():
            runs[label].append(run_child(argv, timeout_s=60))
    floor_label = next(iter(commands))
    best: dict[str, ChildRun] = {}
    for label, rs in runs.items():
        bad = [r for r in rs if not r.ok or r.returncode != 0]
        if bad:
            fig.add(Row(NAME, label, "wall time, best of N", None, "ms", note=bad[0].describe_failure()))
            continue
        best[label] = best_of(rs)
    if floor_label not in best:
        fig.skipped = "python -c pass failed"
        return fig
    floor = best[floor_label]
    parts = []
    for label, r in best.items():
        fig.add(
            Row(
                NAME,
                label,
                f"wall time, best of {reps}",
                round(r.wall_s * 1000, 1),
                "ms",
                note=f"peak RSS {r.peak_rss_bytes / 2**20:.0f} MiB",
            )
        )
        if label != floor_label:
            ratio = r.wall_s / floor.wall_s
            fig.add(Row(NAME, label, "vs python -c pass", round(ratio, 1), "×"))
            parts.append(f"{label.split(' <')[0]} {human_seconds(r.wall_s)} = {ratio:.1f}× floor")
    for label, args in (("unifab --help", ["--help"]), ("unifab parse", ["parse", SMALL_FORMAT, str(sample)])):
        if label == "unifab parse" and not sample.is_file():
            continue
        prof = run_child(_entry(args), timeout_s=60)
        tops = top_imports(prof.stderr.decode(errors="replace"))
        if tops:
            fig.notes.append(
                f"`{label}` start-up, top-level imports by cumulative time (one -X importtime run): "
                + ", ".join(f"{mod} {ms:.0f} ms" for mod, ms in tops)
            )
    fig.headline = f"floor {human_seconds(floor.wall_s)}; " + "; ".join(parts)
    return fig
