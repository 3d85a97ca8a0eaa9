"""Figure 1 — full check at scale: ``unifab check`` against the time to read every byte of the bundle.

For each twin size the bundle is generated (all v1 scenarios injected, fixed seed), then the read
floor (``bench/floor.py``: open + read every file) and ``unifab check --format json`` run as pairs of
child processes. Each pair starts from the same cache state: the harness reads the whole bundle right
before it (``bench/cache.py``: the machine may evict idle page cache by itself, so "right after
generation" is not enough), the side that goes first alternates from pair to pair, and each side's reads
from storage (its ``ru_inblock``) are recorded. A pair in which either side fetched a tenth of the bundle
or more from storage is rejected (said in the notes) and another is taken; the verdicts use accepted
(warm) pairs only, best of N each. Cold figures (every file's pages dropped with ``posix_fadvise``
before each side) are measured separately where the file system allows it and never carry a verdict.

Also per size: peak RSS of the check (its own ``ru_maxrss``), links, files, bytes, and accuracy
against the twin's ``truth.json`` (recall and precision of ``(check, entity)`` pairs). Over all
sizes: the fitted exponent of check time against links (least squares on log-log).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cache import evict, reclaim_note, warm
from bench.common import (
    BENCH_DIR,
    ChildRun,
    best_of,
    fit_power_law,
    human_bytes,
    human_seconds,
    log,
    run_child,
    unifab_argv,
)
from bench.context import Context
from bench.results import FigureResult, Row, Target
from bench.twins import Twin, TwinError

NAME = "full-check"
TITLE = "Full check at scale: wall time and peak memory of `unifab check` vs. reading every byte"

FULL_SIZES = [1024, 8192, 32768, 100_000]
QUICK_SIZES = [256, 512, 1024]
RATIO_SIZE = 32768
RATIO_TARGET = Target("<=", 2.5, "×")
MEMORY_SIZE = 100_000
MEMORY_TARGET = Target("<=", 3.0, "GiB")
EXPONENT_TARGET = Target("<=", 1.05)  # "linear in links", allowing for measurement noise
ACCURACY_TARGET = Target(">=", 100.0, "%")
COLD_FRACTION = 0.1  # a side that fetched this much of the bundle from storage did not run warm
COLD_MAX_GPUS = 32768  # cold pairs above this size cost more than they tell


def sizes(ctx: Context) -> list[int]:
    return ctx.sizes or (QUICK_SIZES if ctx.quick else FULL_SIZES)


def twin_sizes(ctx: Context) -> list[int]:
    return sizes(ctx)


@dataclass(slots=True)
class SizeResult:
    gpus: int
    links: int
    hosts: int
    files: int
    bytes: int
    generate_s: float
    floor: ChildRun
    check: ChildRun
    findings: list[dict[str, Any]]
    recall: float | None
    precision: float | None
    injected: int
    seconds: float  # everything this size took: generation (when done here) and all rounds
    pair_ratios: list[float]  # check / floor of each accepted pair, in the order taken
    rejected: list[str]  # why a pair was not used (a side read from storage)
    cold_floor: ChildRun | None = None
    cold_check: ChildRun | None = None
    cold_why: str = ""  # why no cold pair was measured

    @property
    def ratio(self) -> float:
        return self.check.wall_s / self.floor.wall_s

    @property
    def cold(self) -> bool:
        """The accepted pairs are warm by construction; kept for the notes (always False when measured)."""
        return _not_warm(self.floor, self.bytes) or _not_warm(self.check, self.bytes)

    @property
    def cold_ratio(self) -> float | None:
        if self.cold_floor is None or self.cold_check is None or self.cold_floor.wall_s <= 0:
            return None
        return self.cold_check.wall_s / self.cold_floor.wall_s


def _not_warm(run: ChildRun, size: int) -> bool:
    return run.disk_read_bytes >= COLD_FRACTION * size


def repetitions(ctx: Context, gpus: int) -> int:
    if ctx.quick:
        return 2
    if gpus <= 8192:
        return 3
    return 2 if gpus <= 32768 else 1


def _run_side(side: str, argv: list[str], timeout_s: float) -> ChildRun:
    run = run_child(argv, timeout_s=timeout_s)
    if not run.ok or run.returncode != 0:
        what = "read floor" if side == "floor" else "unifab check"
        raise RuntimeError(f"{what} failed: {run.describe_failure()}")
    return run


def measure_pairs(
    argvs: dict[str, list[str]], bundle: Path, size: int, reps: int, timeout_s: float, label: str
) -> tuple[list[tuple[ChildRun, ChildRun]], list[str]]:
    """``reps`` accepted (floor, check) pairs, each warmed right before it, the first side alternating; a pair
    in which a side read from storage is rejected (with why) and retaken, up to ``reps + 2`` pairs in all."""
    pairs: list[tuple[ChildRun, ChildRun]] = []
    rejected: list[str] = []
    for attempt in range(reps + 2):
        if len(pairs) >= reps:
            break
        order = ("floor", "check") if attempt % 2 == 0 else ("check", "floor")
        log(f"{label}: warm, then {order[0]} and {order[1]}, pair {attempt + 1} ({len(pairs)}/{reps} accepted)")
        warm(bundle)
        runs = {side: _run_side(side, argvs[side], timeout_s) for side in order}
        floor, check = runs["floor"], runs["check"]
        if _not_warm(floor, size) or _not_warm(check, size):
            rejected.append(
                f"pair {attempt + 1} ({order[0]} first) rejected: floor read {human_bytes(floor.disk_read_bytes)}, "
                f"check {human_bytes(check.disk_read_bytes)} from storage of {human_bytes(size)}"
            )
            log(rejected[-1])
            continue
        pairs.append((floor, check))
    return pairs, rejected


def measure_cold(
    argvs: dict[str, list[str]], bundle: Path, size: int, timeout_s: float
) -> tuple[ChildRun, ChildRun] | str:
    """One cold pair (every file's pages dropped before each side), or why none can be taken."""
    if not evict(bundle):
        return "cold not measurable here: the bundle's file system keeps files only in memory (tmpfs)"
    floor = _run_side("floor", argvs["floor"], timeout_s)
    evict(bundle)
    check = _run_side("check", argvs["check"], timeout_s)
    if not (_not_warm(floor, size) and _not_warm(check, size)):  # eviction did not take on one side
        return (
            f"cold pair rejected: floor read {human_bytes(floor.disk_read_bytes)}, check "
            f"{human_bytes(check.disk_read_bytes)} from storage of {human_bytes(size)}"
        )
    return floor, check


def measure_size(ctx: Context, twin: Twin, reps: int, timeout_s: float, started: float) -> SizeResult:
    """Warm pairs of floor and check (see the module doc), best of each accepted; then a cold pair."""
    argvs = {
        "check": [*unifab_argv(), "check", str(twin.path), "--format", "json", "--fail-on", "never"],
        "floor": [sys.executable, str(BENCH_DIR / "floor.py"), str(twin.path)],
    }
    size = warm(twin.path)
    pairs, rejected = measure_pairs(argvs, twin.path, size, reps, timeout_s, f"{twin.gpus:,} GPUs")
    if not pairs:
        raise RuntimeError("no warm pair: " + "; ".join(rejected))
    floor, check = best_of([p[0] for p in pairs]), best_of([p[1] for p in pairs])
    cold: tuple[ChildRun, ChildRun] | str = "cold not measured above 32,768 GPUs (it costs a full extra round)"
    if twin.gpus <= COLD_MAX_GPUS:
        log(f"{twin.gpus:,} GPUs: cold pair")
        cold = measure_cold(argvs, twin.path, size, timeout_s)
    counted = json.loads(floor.stdout)
    findings = json.loads(check.stdout)["findings"]
    recall, precision, injected = score(findings, twin.path / "truth.json")
    return SizeResult(
        gpus=twin.gpus,
        links=twin.links(),
        hosts=twin.hosts,
        files=counted["files"],
        bytes=counted["bytes"],
        generate_s=twin.generate_s,
        floor=floor,
        check=check,
        findings=findings,
        recall=recall,
        precision=precision,
        injected=injected,
        seconds=time.perf_counter() - started,
        pair_ratios=[c.wall_s / f.wall_s for f, c in pairs if f.wall_s > 0],
        rejected=rejected,
        cold_floor=cold[0] if isinstance(cold, tuple) else None,
        cold_check=cold[1] if isinstance(cold, tuple) else None,
        cold_why=cold if isinstance(cold, str) else "",
    )


def score(findings: list[dict[str, Any]], truth_path: Path) -> tuple[float | None, float | None, int]:
    """Recall and precision (in %) of the findings' ``(check, entity)`` pairs against the twin's truth."""
    truth = json.loads(truth_path.read_text())
    expected = {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}
    found = {(f["check"], e) for f in findings for e in f.get("entities", ())}
    hit = len(found & expected)
    recall = 100.0 * hit / len(expected) if expected else None
    precision = 100.0 * hit / len(found) if found else (100.0 if not expected else None)
    return recall, precision, len(truth["misconfigurations"])


def projected_seconds(done: list[SizeResult], gpus: int, reps: int) -> float | None:
    """Generation + floor + check time for ``gpus``, scaled linearly from the largest size done (+25 %)."""
    if not done:
        return None
    last = max(done, key=lambda r: r.gpus)
    scale = gpus / last.gpus
    per_round = 1.5 * last.floor.wall_s + last.check.wall_s  # the warm-up read costs about a floor
    cold_round = per_round if gpus <= COLD_MAX_GPUS else 0.0
    return 1.25 * scale * (last.generate_s + reps * per_round + cold_round)


def run(ctx: Context) -> FigureResult:
    fig = FigureResult(NAME, TITLE)
    done: list[SizeResult] = []
    not_run: dict[int, str] = {}
    for gpus in sizes(ctx):
        reps = repetitions(ctx, gpus)
        projected = projected_seconds(done, gpus, reps)
        if projected is not None and projected > ctx.size_budget_s:
            not_run[gpus] = (
                f"not run: projected {projected / 60:.0f} min (linear from {max(r.gpus for r in done):,} GPUs) "
                f"exceeds the {ctx.size_budget_s / 60:.0f} min budget per size"
            )
            log(f"{gpus:,} GPUs: {not_run[gpus]}")
            ctx.twins.release(NAME, gpus)
            continue
        started = time.perf_counter()
        try:
            twin = ctx.twins.get(gpus, timeout_s=ctx.size_budget_s)
            result = measure_size(ctx, twin, reps, timeout_s=ctx.size_budget_s, started=started)
        except (TwinError, RuntimeError) as exc:
            not_run[gpus] = f"not run: {exc}"
            log(f"{gpus:,} GPUs: {exc}")
            ctx.twins.release(NAME, gpus)
            continue
        done.append(result)
        ctx.shared[("check", gpus)] = result.check
        ctx.twins.release(NAME, gpus)
        log(
            f"{gpus:,} GPUs: check {human_seconds(result.check.wall_s)}, floor {human_seconds(result.floor.wall_s)}, "
            f"{result.ratio:.1f}×, peak {human_bytes(result.check.peak_rss_bytes)}"
        )
    _rows(fig, done, not_run, ctx)
    fig.headline = _headline(done, not_run, fig)
    fig.notes.append(
        "Each pair of floor and check starts from the same cache state: the harness reads the whole bundle right "
        "before the pair, and the side that runs first alternates from pair to pair. A pair in which either side "
        f"read {COLD_FRACTION:.0%} of the bundle or more from storage (its ru_inblock) is rejected and retaken; the "
        "ratios and fits use accepted pairs only, best of N each (full run: N = 3 up to 8,192 GPUs, 2 at 32,768, "
        "1 at 100,000; --quick: 2). The floor is a separate Python process that walks the bundle with os.scandir "
        "and reads every file in binary. Cold figures (pages dropped with posix_fadvise before each side) are "
        "reported beside them and carry no verdict."
    )
    fig.notes.append(f"Page-cache reclaim on this machine: {reclaim_note()}.")
    fig.notes.append(_cache_note(done))
    for r in done:
        if r.rejected:
            fig.notes.append(f"{r.gpus:,} GPUs: " + "; ".join(r.rejected))
    return fig


def _cache_note(done: list[SizeResult]) -> str:
    """Which sizes ran from the page cache and which spilled to storage (from each child's ru_inblock)."""
    warm = [r for r in done if not r.cold]
    cold = [r for r in done if r.cold]
    text = ""
    if warm:
        text += "Warm page cache at " + ", ".join(f"{r.gpus:,}" for r in warm) + " GPUs (both sides read ~nothing "
        text += "from storage). "
    for r in cold:
        text += (
            f"COLD at {r.gpus:,} GPUs: {r.files:,} files no longer fit the page cache "
            f"({_machine_memory()} RAM), so the floor fetched {human_bytes(r.floor.disk_read_bytes)} and the check "
            f"{human_bytes(r.check.disk_read_bytes)} from storage for {human_bytes(r.bytes)} of content; both "
            "times are disk-bound there and the exponents over all sizes include that cliff. "
        )
    return text.strip()


def _machine_memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return human_bytes(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return "this machine's"


def _rows(fig: FigureResult, done: list[SizeResult], not_run: dict[int, str], ctx: Context) -> None:
    for r in sorted(done, key=lambda r: r.gpus):
        case = f"{r.gpus:,} GPUs"
        size_note = f"{r.hosts:,} hosts, {r.links:,} links, {r.files:,} files, {human_bytes(r.bytes)}"
        fig.add(Row(NAME, case, "check wall time", round(r.check.wall_s, 3), "s", note=size_note))
        fig.add(
            Row(
                NAME,
                case,
                "read floor (open + read all files)",
                round(r.floor.wall_s, 3),
                "s",
                note=f"page cache {'COLD' if r.cold else 'warm'}: floor read {human_bytes(r.floor.disk_read_bytes)}, "
                f"check {human_bytes(r.check.disk_read_bytes)} from storage",
            )
        )
        fig.add(
            Row(
                NAME,
                case,
                "check / read floor",
                round(r.ratio, 2),
                "×",
                RATIO_TARGET if r.gpus == RATIO_SIZE else None,
                note="warm pairs: " + ", ".join(f"{x:.2f}×" for x in r.pair_ratios),
            )
        )
        if r.cold_ratio is not None and r.cold_floor is not None and r.cold_check is not None:
            fig.add(
                Row(
                    NAME,
                    case,
                    "check / read floor, COLD cache (no verdict)",
                    round(r.cold_ratio, 2),
                    "×",
                    note=f"check {human_seconds(r.cold_check.wall_s)} read {human_bytes(r.cold_check.disk_read_bytes)}"
                    f" from storage, floor {human_seconds(r.cold_floor.wall_s)} read "
                    f"{human_bytes(r.cold_floor.disk_read_bytes)}",
                )
            )
        else:
            fig.add(Row(NAME, case, "check / read floor, COLD cache (no verdict)", None, "×", note=r.cold_why))
        fig.add(
            Row(
                NAME,
                case,
                "check peak RSS",
                round(r.check.peak_rss_bytes / 2**30, 3),
                "GiB",
                MEMORY_TARGET if r.gpus == MEMORY_SIZE else None,
                note=f"{human_bytes(r.check.peak_rss_bytes / max(1, r.links))} per link",
            )
        )
        check_cpu = r.check.user_s + r.check.sys_s
        floor_cpu = r.floor.user_s + r.floor.sys_s
        fig.add(
            Row(NAME, case, "check CPU time (user + sys)", round(check_cpu, 2), "s", note=f"sys {r.check.sys_s:.2f} s")
        )
        fig.add(
            Row(
                NAME,
                case,
                "check / read floor, CPU time",
                round(check_cpu / floor_cpu, 2) if floor_cpu > 0 else None,
                "×",
                note=f"floor CPU {floor_cpu:.2f} s; CPU time is less sensitive than wall time to other load",
            )
        )
        fig.add(Row(NAME, case, "twin generation (unifab twin generate)", round(r.generate_s, 2), "s"))
        fig.add(
            Row(
                NAME,
                case,
                "time this size took in the run",
                round(r.seconds / 60, 1),
                "min",
                note=f"generation (if not done by an earlier figure) + rounds; budget {ctx.size_budget_s / 60:.0f} min",
            )
        )
        injected = f"{r.injected} injected, {len(r.findings)} findings"
        fig.add(Row(NAME, case, "accuracy: recall vs truth.json", _r(r.recall), "%", ACCURACY_TARGET, injected))
        fig.add(Row(NAME, case, "accuracy: precision vs truth.json", _r(r.precision), "%", ACCURACY_TARGET))
    measured = {r.gpus for r in done}
    for gpus, why in sorted(not_run.items()):
        fig.add(Row(NAME, f"{gpus:,} GPUs", "check wall time", None, "s", note=why))
    if RATIO_SIZE not in measured:
        why = not_run.get(RATIO_SIZE, "not in this run's sizes (--quick)" if ctx.quick else "not in this run's sizes")
        fig.add(Row(NAME, f"{RATIO_SIZE:,} GPUs", "check / read floor", None, "×", RATIO_TARGET, why))
    if MEMORY_SIZE not in measured:
        why = not_run.get(MEMORY_SIZE, "not in this run's sizes (--quick)" if ctx.quick else "not in this run's sizes")
        if len(done) >= 2:
            mem_fit = fit_power_law([r.links for r in done], [r.check.peak_rss_bytes for r in done])
            links_at = _links_for(MEMORY_SIZE, done)
            fig.add(
                Row(
                    NAME,
                    f"{MEMORY_SIZE:,} GPUs",
                    "check peak RSS, extrapolated (not measured)",
                    round(mem_fit.predict(links_at) / 2**30, 2),
                    "GiB",
                    note=f"power-law fit over {len(done)} sizes: RSS ∝ links^{mem_fit.exponent:.2f}",
                )
            )
        fig.add(Row(NAME, f"{MEMORY_SIZE:,} GPUs", "check peak RSS", None, "GiB", MEMORY_TARGET, why))
    if len(done) >= 2:
        t_fit = fit_power_law([r.links for r in done], [r.check.wall_s for r in done])
        m_fit = fit_power_law([r.links for r in done], [r.check.peak_rss_bytes for r in done])
        f_fit = fit_power_law([r.links for r in done], [r.floor.wall_s for r in done])
        span = f"{min(measured):,}–{max(measured):,} GPUs"
        fig.add(
            Row(
                NAME,
                span,
                "check time ∝ links^k: fitted k",
                round(t_fit.exponent, 3),
                "",
                EXPONENT_TARGET,
                f"least squares on log-log over {t_fit.points} sizes, r² {t_fit.r2:.3f}",
            )
        )
        u_fit = fit_power_law([r.links for r in done], [r.check.user_s for r in done])
        fig.add(Row(NAME, span, "read floor ∝ links^k: fitted k", round(f_fit.exponent, 3), ""))
        fig.add(Row(NAME, span, "check user CPU ∝ links^k: fitted k", round(u_fit.exponent, 3), ""))
        fig.add(Row(NAME, span, "check peak RSS ∝ links^k: fitted k", round(m_fit.exponent, 3), ""))
        warm = [r for r in done if not r.cold]
        if len(warm) >= 2 and len(warm) < len(done):
            w_fit = fit_power_law([r.links for r in warm], [r.check.wall_s for r in warm])
            w_span = f"{min(r.gpus for r in warm):,}–{max(r.gpus for r in warm):,} GPUs (warm cache only)"
            fig.add(
                Row(
                    NAME,
                    w_span,
                    "check time ∝ links^k: fitted k",
                    round(w_fit.exponent, 3),
                    "",
                    note=f"the sizes that ran from the page cache; r² {w_fit.r2:.3f}; the target row above uses all",
                )
            )
    else:
        fig.add(
            Row(NAME, "all sizes", "check time ∝ links^k: fitted k", None, "", EXPONENT_TARGET, "fewer than 2 sizes")
        )


def _links_for(gpus: int, done: list[SizeResult]) -> float:
    """Links at a size not generated: links per GPU of the largest size done (the twin is regular)."""
    last = max(done, key=lambda r: r.gpus)
    return last.links * gpus / last.gpus


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _headline(done: list[SizeResult], not_run: dict[int, str], fig: FigureResult) -> str:
    if not done:
        return "no size could be measured: " + "; ".join(f"{g:,}: {w}" for g, w in not_run.items())
    parts = []
    at = [r for r in done if r.gpus <= RATIO_SIZE] or done
    r = max(at, key=lambda r: r.gpus)
    parts.append(
        f"{r.gpus:,} GPUs: check {human_seconds(r.check.wall_s)} = {r.ratio:.1f}× read floor "
        f"({human_seconds(r.floor.wall_s)})"
    )
    big = max(done, key=lambda r: r.gpus)
    parts.append(f"peak {human_bytes(big.check.peak_rss_bytes)} at {big.gpus:,} GPUs")
    fit_rows = [row for row in fig.rows if row.metric.startswith("check time ∝") and row.value is not None]
    if fit_rows:
        parts.append(f"time ∝ links^{fit_rows[0].value:.2f}")
    worst_recall = min((r.recall for r in done if r.recall is not None), default=None)
    worst_precision = min((r.precision for r in done if r.precision is not None), default=None)
    if worst_recall is not None and worst_precision is not None:
        parts.append(f"recall {worst_recall:.0f}%, precision {worst_precision:.0f}%")
    cold = [r.gpus for r in done if r.cold]
    if cold:
        parts.append("page cache COLD (disk-bound) at " + ", ".join(f"{g:,}" for g in cold) + " GPUs")
    for gpus in sorted(not_run):
        parts.append(f"{gpus:,} GPUs not run")
    return "; ".join(parts)
