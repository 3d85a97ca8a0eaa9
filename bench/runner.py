"""Run the selected figures in order, share twin bundles between them, write the results."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from bench.cache import reclaim_note
from bench.common import log, machine_description
from bench.context import Context, Figure
from bench.results import FigureResult, merge_figures, provenance, read_results, write_results
from bench.twins import TwinCache

# Run order. It only matters for disk: a twin is deleted once no later figure needs it, so the
# incremental figure (32,768 GPUs) runs before the full check, which then frees each size before
# generating the next. A new figure (telemetry ingest, root-cause accuracy, ...) is one module and
# one line here.
FIGURES: dict[str, str] = {
    "cli": "bench.fig_cli",
    "parse": "bench.fig_parse",
    "peer": "bench.fig_peer_suzieq",
    "incremental": "bench.fig_incremental",
    "record-cache": "bench.fig_record_cache",
    "health": "bench.fig_health",
    "serve": "bench.fig_serve",
    "full-check": "bench.fig_full_check",
}


def load_figure(name: str) -> Figure:
    return cast(Figure, importlib.import_module(FIGURES[name]))


def run_figures(
    names: Sequence[str],
    *,
    quick: bool,
    out: Path,
    scratch_parent: Path | None = None,
    keep_scratch: bool = False,
    sizes: list[int] | None = None,
    size_budget_s: float | None = None,
    setup_peer: bool = False,
    command: str = "python -m bench",
) -> list[FigureResult]:
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    # no figure's `unifab check` reads or writes the default record cache (~/.cache): each check parses, as
    # measured; the record-cache figure passes --cache DIR (under the scratch directory) itself
    os.environ["UNIFAB_CACHE_DIR"] = "off"
    if scratch_parent is not None:
        scratch_parent.mkdir(parents=True, exist_ok=True)  # --scratch DIR: created when missing
    scratch = Path(tempfile.mkdtemp(prefix="unifab-bench-", dir=scratch_parent))
    twins = TwinCache(scratch)
    ctx = Context(quick=quick, scratch=scratch, twins=twins, sizes=sizes, setup_peer=setup_peer)
    if size_budget_s is not None:
        ctx.size_budget_s = size_budget_s
    machine = machine_description(scratch)
    figures = {name: load_figure(name) for name in names}
    for name, fig_mod in figures.items():
        for gpus in fig_mod.twin_sizes(ctx):
            twins.claim(name, gpus)
    results: list[FigureResult] = []
    load: dict[str, list[float]] = {}
    try:
        for name, fig_mod in figures.items():
            print(f"== {name}: {fig_mod.TITLE}", file=sys.stderr, flush=True)
            f0 = time.perf_counter()
            load[name] = [round(os.getloadavg()[0], 2)]
            try:
                result = fig_mod.run(ctx)
            except Exception as exc:
                traceback.print_exc()
                result = FigureResult(name, fig_mod.TITLE, skipped=f"harness error: {type(exc).__name__}: {exc}")
            result.seconds = time.perf_counter() - f0
            load[name].append(round(os.getloadavg()[0], 2))
            for gpus in fig_mod.twin_sizes(ctx):
                twins.release(name, gpus)
            results.append(result)
            print(result.summary_line(), flush=True)
    finally:
        if keep_scratch:
            log(f"scratch kept: {scratch}")
        else:
            twins.cleanup()
            shutil.rmtree(scratch, ignore_errors=True)
    machine["load_avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    meta: dict[str, Any] = {
        "command": command,
        "mode": "quick" if quick else "full",
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - t0, 1),
        "machine": machine,
        "load_avg_1m_per_figure": load,
        "page_cache": (
            "full-check: each floor/check pair warmed right before it, first side alternating, pairs with storage "
            "reads rejected; cold pairs (posix_fadvise DONTNEED) reported separately, never a verdict"
        ),
        "page_cache_reclaim": reclaim_note(),
        "twin_generation_s": {str(g): round(r.wall_s, 2) for g, r in sorted(twins.generations.items())},
    }
    for result in results:
        result.measured_on = provenance(meta)
    stem = "quick" if quick else "latest"
    figures_out, meta_out = results, meta
    if list(names) != list(FIGURES):
        figures_out, meta_out = _merged(out / f"{stem}.json", results, meta)
    for path in write_results(out, figures_out, meta_out, stem):
        log(f"wrote {path}")
    return results


def _merged(
    previous_path: Path, results: list[FigureResult], meta: dict[str, Any]
) -> tuple[list[FigureResult], dict[str, Any]]:
    """A partial run (``--only``) replaces its figures inside the previous results and keeps the others.

    The previous run's meta stays the file's header; this run is appended under ``updates``, and each
    figure carries its own provenance (commit, date, machine), so the table says which run measured what.
    """
    previous = read_results(previous_path)
    if previous is None:
        return results, meta
    figures, old_meta = previous
    update = {
        "command": meta["command"],
        "started": meta["started"],
        "seconds": meta["seconds"],
        "figures": [r.name for r in results],
        "machine": meta["machine"],
        "load_avg_1m_per_figure": meta["load_avg_1m_per_figure"],
        "twin_generation_s": meta["twin_generation_s"],
    }
    merged_meta = {**old_meta, "updates": [*old_meta.get("updates", []), update]}
    return merge_figures(figures, results, list(FIGURES)), merged_meta
