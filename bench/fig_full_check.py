"""Figure 1 — full check at scale: ``unifab check`` against the time to read every byte of the bundle.

For each twin size the bundle is generated (all v1 scenarios injected, fixed seed), then the read
floor (``bench/floor.py``: open + read every file) and ``unifab check --format json`` run
alternately as child processes, best of N each. Both run right after generation, so both read
from a warm page cache: the ratio measures unifab's own cost over the bytes, not the disk.

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
RATIO_TARGET = Target("<=", 4.0, "×")
MEMORY_SIZE = 100_000
MEMORY_TARGET = Target("<=", 4.0, "GiB")
EXPONENT_TARGET = Target("<=", 1.10)  # "linear in links", allowing for measurement noise
ACCURACY_TARGET = Target(">=", 100.0, "%")
COLD_FRACTION = 0.1


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

    @property
    def ratio(self) -> float:
        return self.check.wall_s / self.floor.wall_s

    @property
    def cold(self) -> bool:
        """The page cache could not hold the bundle: the floor fetched a tenth of it or more from storage."""
        return self.floor.disk_read_bytes >= COLD_FRACTION * self.bytes


def repetitions(ctx: Context, gpus: int) -> int:
    if ctx.quick:
        return 2
    if gpus <= 8192:
        return 3
    return 2 if gpus <= 32768 else 1


def measure_size(ctx: Context, twin: Twin, reps: int, timeout_s: float, started: float) -> SizeResult:
    """Floor and check, alternately, ``reps`` times; best of each."""
    floors: list[ChildRun] = []
    checks: list[ChildRun] = []
    check_argv = [*unifab_argv(), "check", str(twin.path), "--format", "json", "--fail-on", "never"]
    floor_argv = [sys.executable, str(BENCH_DIR / "floor.py"), str(twin.path)]
    for i in range(reps):
        log(f"{twin.gpus:,} GPUs: read floor and check, round {i + 1}/{reps}")
        floors.append(run_child(floor_argv, timeout_s=timeout_s))
        if not floors[-1].ok or floors[-1].returncode != 0:
            raise RuntimeError(f"read floor failed: {floors[-1].describe_failure()}")
        checks.append(run_child(check_argv, timeout_s=timeout_s))
        if not checks[-1].ok or checks[-1].returncode != 0:
            raise RuntimeError(f"unifab check failed: {checks[-1].describe_failure()}")
    floor, check = best_of(floors), best_of(checks)
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
    per_round = last.floor.wall_s + last.check.wall_s
    return 1.25 * scale * (last.generate_s + reps * per_round)


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
        "The floor and the check run alternately right after the twin is generated, best of N each (full run: "
        "N = 3 up to 8,192 GPUs, 2 at 32,768, 1 at 100,000; --quick: 2). The floor is a separate Python process "
        "that walks the bundle with os.scandir and reads every file in binary. Nothing drops the page cache."
    )
    fig.notes.append(_cache_note(done))
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
            )
        )
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
