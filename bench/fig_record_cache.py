"""Figure — the parsed-record cache: a second ``unifab check`` of an unchanged bundle against the first.

Per round, on one twin (4,096 GPUs with ``--quick``, 32,768 otherwise) and a cache directory of its own
(``--cache DIR``, empty at the start of the round): the bundle warmed (``bench/cache.py``), the first check
(everything parsed, every device's entry written), warmed again, the second check (every device found
unchanged). ``--no-cache`` beside them says what writing the entries costs. Best of N each; the findings of all
three must be byte-identical. The twin's files are older than the cache's racy window (2 s) by the time the
first check reads them (the warm-up alone takes longer), so every entry can be written.
"""

from __future__ import annotations

import shutil
import time

from bench.cache import warm
from bench.common import ChildRun, best_of, human_seconds, log, run_child, unifab_argv
from bench.context import Context
from bench.results import FigureResult, Row, Target

NAME = "record-cache"
TITLE = "Parsed-record cache: second `unifab check` of an unchanged bundle vs. the first"

QUICK_GPUS = 4096
FULL_GPUS = 32768
TARGET_GPUS = 32768  # the size the target is stated at (issue 22); smaller sizes report the ratio as info
RATIO_TARGET = Target("<=", 0.2, "×")
EQUAL_TARGET = Target("==", 1)
RACY_S = 2.0


def sizes(ctx: Context) -> list[int]:
    return [QUICK_GPUS if ctx.quick else FULL_GPUS]


def twin_sizes(ctx: Context) -> list[int]:
    return sizes(ctx)


def _check(argv: list[str], timeout_s: float) -> ChildRun:
    run = run_child(argv, timeout_s=timeout_s)
    if not run.ok or run.returncode not in (0, 1):
        raise RuntimeError(f"unifab check failed: {run.describe_failure()}")
    return run


def run(ctx: Context) -> FigureResult:
    fig = FigureResult(NAME, TITLE)
    gpus = sizes(ctx)[0]
    twin = ctx.twins.get(gpus)
    reps = 2
    timeout_s = 3600.0
    base = [*unifab_argv(), "check", str(twin.path), "--format", "json", "--fail-on", "never", "--quiet"]
    firsts: list[ChildRun] = []
    seconds: list[ChildRun] = []
    plain: list[ChildRun] = []
    hits: list[int] = []
    time.sleep(max(0.0, RACY_S - (time.time() - twin.path.stat().st_mtime)))
    for rep in range(reps):
        cache_dir = ctx.scratch / f"record-cache-{rep}"
        shutil.rmtree(cache_dir, ignore_errors=True)
        with_cache = [*base, "--cache", str(cache_dir)]
        log(f"{gpus:,} GPUs, round {rep + 1}/{reps}: no cache, first and second check with the cache")
        warm(twin.path)
        plain.append(_check([*base, "--no-cache"], timeout_s))
        warm(twin.path)
        firsts.append(_check(with_cache, timeout_s))
        written = {p: p.stat().st_ino for p in cache_dir.glob("??/*.rec")}
        warm(twin.path)
        seconds.append(_check(with_cache, timeout_s))
        # an entry the second check found unchanged keeps its inode (a rewritten one is a new file renamed in)
        entries = len(written)
        hits.append(sum(1 for p, ino in written.items() if p.exists() and p.stat().st_ino == ino))
        shutil.rmtree(cache_dir, ignore_errors=True)
    first, second, nocache = best_of(firsts), best_of(seconds), best_of(plain)
    same = all(r.stdout == nocache.stdout for r in (*firsts, *seconds, *plain))
    ratio = second.wall_s / first.wall_s
    case = f"{gpus:,} GPUs"
    target = RATIO_TARGET if gpus == TARGET_GPUS else None
    note = f"the target is stated at {TARGET_GPUS:,} GPUs; " if target is None else ""
    note += "per round: " + ", ".join(f"{s.wall_s / f.wall_s:.2f}" for f, s in zip(firsts, seconds, strict=True))
    fig.add(Row(NAME, case, f"first check, writing the cache (best of {reps})", round(first.wall_s, 2), "s"))
    fig.add(Row(NAME, case, f"second check, unchanged bundle (best of {reps})", round(second.wall_s, 2), "s"))
    fig.add(Row(NAME, case, f"check with --no-cache (best of {reps})", round(nocache.wall_s, 2), "s"))
    fig.add(Row(NAME, case, "second / first check", round(ratio, 3), "×", target, note))
    fig.add(Row(NAME, case, "first check with the cache / --no-cache", round(first.wall_s / nocache.wall_s, 3), "×"))
    fig.add(
        Row(NAME, case, "findings byte-identical with and without the cache (1 = yes)", int(same), "", EQUAL_TARGET)
    )
    fig.add(
        Row(
            NAME,
            case,
            "devices the second check took from the cache",
            min(hits),
            "",
            note=f"of {entries:,} entries written by the first; per round: {', '.join(map(str, hits))} (an entry "
            "is rewritten when the unifab code changed in between)",
        )
    )
    fig.add(Row(NAME, case, "second check peak RSS", round(second.peak_rss_bytes / 2**30, 2), "GiB"))
    fig.headline = (
        f"{case}: second check {human_seconds(second.wall_s)} = {ratio:.2f}× the first ({human_seconds(first.wall_s)}; "
        f"--no-cache {human_seconds(nocache.wall_s)}); findings {'identical' if same else 'DIFFER'}"
    )
    fig.notes.append(
        "record cache: one entry per device directory, keyed by its files' size, mtime, ctime and inode "
        "(src/unifab/collect/record_cache.py); every other figure runs with UNIFAB_CACHE_DIR=off"
    )
    return fig
