"""Health — root causes and impacted jobs scored against injected faults, for unifab and two baselines run on the
same telemetry in the same run; and one poll of every series at 32,768 GPUs through the streaming detectors.

Per seed, the twin's telemetry is rewritten with :func:`unifab.twin.faults.write_faults`: five faults of kinds
drawn from :data:`~unifab.twin.faults.FAULT_KINDS` (a different draw per seed) plus the noise every twin carries
(single flaps and errors, a driver reload, a wrapping counter, missed scrapes, application Xids, a dead peer
process, congestion that ECN handles). Three methods read the same series and logs:

* **unifab**: ``unifab health``'s engine (:func:`unifab.health.engine.run_health`), and the same telemetry replayed
  poll by poll (:func:`unifab.health.replay.replay`) for the time each incident would first have been raised;
* **per-port alerts** (:func:`unifab.health.baselines.per_port_alerts`): a plain alert-rule set;
* **007** (:func:`unifab.health.baselines.vote_007`): link voting by failing flows (Arzani et al., NSDI'18).

Scored by :mod:`unifab.health.score` (exact root cause, and located: the root or a part of it), pooled over the
seeds. The scale rows register every series a 32,768-GPU twin exports (the twin's own cluster model, no files)
in a :class:`unifab.health.stream.Stream` and time one poll: a new sample of every series, then the poll's
checks for silent devices; memory is the stream's resident size, and its growth over more polls.
"""

from __future__ import annotations

import gc
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

from bench.common import human_seconds, log
from bench.context import Context
from bench.results import FigureResult, Row, Target

NAME = "health"
TITLE = "Health: root causes and impacted jobs vs per-port alerts and 007, and one poll at 32,768 GPUs"

FULL_GPUS, QUICK_GPUS = 4096, 256
FULL_SEEDS, QUICK_SEEDS = (1, 2, 3), (1, 2)
FAULTS = 5
SCALE_GPUS, QUICK_SCALE_GPUS = 32768, 2048
POLL_S = 10.0
F1_TARGET = Target(">=", 0.97)
ZERO = Target("==", 0.0)
RATIO_TARGET = Target(">=", 2.0, "×")
POLL_TARGET = Target("<=", POLL_S, "s")
GROWTH_TARGET = Target("<=", 5.0, "%")
METHODS = ("unifab", "per-port alerts", "007")


def twin_sizes(ctx: Context) -> list[int]:
    return []  # its own twin: the telemetry is rewritten per seed, which the shared twins must not see


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _one_seed(bundle: Path, seed: int) -> dict[str, Any]:
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.health.baselines import Prediction, per_port_alerts, vote_007
    from unifab.health.engine import run_health
    from unifab.health.events import read_events
    from unifab.health.replay import replay
    from unifab.health.score import Entities, jobs_named, score_jobs, score_roots
    from unifab.health.series import read_bundle
    from unifab.sources import as_source_path
    from unifab.twin.faults import FAULT_KINDS, write_faults

    shutil.rmtree(bundle / "telemetry", ignore_errors=True)
    kinds = random.Random(seed).sample(FAULT_KINDS, FAULTS)
    start = time.perf_counter()
    faults = write_faults(bundle, FAULTS, seed, kinds=kinds)
    write_s = time.perf_counter() - start
    fabric = load_bundle(bundle)
    root = as_source_path(bundle)
    start = time.perf_counter()
    store = read_bundle(root, fabric)
    events = read_events(root, fabric, 2026)
    read_s = time.perf_counter() - start
    findings = run_checks(fabric)
    start = time.perf_counter()
    result = run_health(fabric, store, findings, events=events)
    health_s = time.perf_counter() - start
    timeline = replay(fabric, store, events, findings)
    entities = Entities(fabric)
    unifab = [Prediction(i.root, timeline.first_seen.get(i.root, i.start), i.summary) for i in result.incidents]
    per_port = per_port_alerts(fabric, store, events)
    voted = vote_007(fabric, store, events)
    named = {
        "unifab": {j for i in result.incidents for j in i.jobs},
        "per-port alerts": jobs_named(per_port, entities),
        "007": jobs_named(voted, entities),
    }
    out: dict[str, Any] = {"kinds": kinds, "series": len(store), "write_s": write_s, "read_s": read_s}
    out["health_s"] = health_s
    out["replay_same"] = sorted(i.root for i in result.incidents) == list(timeline.final)
    for method, preds in zip(METHODS, (unifab, per_port, voted), strict=True):
        out[method] = {
            "exact": score_roots(preds, faults, entities, exact=True),
            "located": score_roots(preds, faults, entities, exact=False),
            "jobs": score_jobs(named[method], faults),
        }
    return out


def _scale(gpus: int) -> dict[str, float]:
    """One poll of every series of a ``gpus``-GPU twin through the stream: seconds (best of 3) and memory."""
    from unifab.health.series import METRICS, Series
    from unifab.health.stream import Stream
    from unifab.model import Endpoint, nic_id, port_id
    from unifab.twin.cluster import build

    cluster = build(gpus)
    host_metrics = [
        m for m, spec in METRICS.items() if spec.port != "interface" and not m.startswith("node_infiniband")
    ]
    port_metrics = [m for m, spec in METRICS.items() if spec.port == "interface"]
    specs: list[Series] = []
    for nics in cluster.hosts.values():
        for n in nics:
            for m in host_metrics:
                spec = METRICS[m]
                qualifier = "3" if spec.qualifier else ""
                end = Endpoint(n.host, n.netdev)
                specs.append(Series(nic_id(n.host, n.rdma_dev), end, spec.counter, qualifier, spec, m))
    for sw in cluster.switches.values():
        for p in sw.ports.values():
            if not p.peer_node:
                continue
            for m in port_metrics:
                spec = METRICS[m]
                qualifier = "3" if spec.qualifier else ""
                specs.append(
                    Series(port_id(sw.name, p.name), Endpoint(sw.name, p.name), spec.counter, qualifier, spec, m)
                )
    gc.collect()
    before = _rss_bytes()
    stream = Stream(step_s=POLL_S)
    index = [stream.track(s) for s in specs]
    rng = random.Random(1)
    rates = [
        1.0 if s.spec.gauge else float(rng.randrange(0, 3) if s.counter in ("pause_tx_us", "pause_rx_us") else 0)
        for s in specs
    ]
    rates = [r * 1000.0 if s.counter.startswith("pause") else r for r, s in zip(rates, specs, strict=True)]
    gauges = [s.spec.gauge for s in specs]
    t0 = 1_800_000_000.0

    def poll(k: int) -> float:
        now = t0 + k * POLL_S
        start = time.perf_counter()
        push = stream.push
        for i, rate, gauge in zip(index, rates, gauges, strict=True):
            push(i, now, rate if gauge else rate * k)
        stream.tick(now)
        return time.perf_counter() - start

    poll(0)
    poll(1)
    timed = [poll(k) for k in (2, 3, 4)]
    gc.collect()
    after = _rss_bytes()
    for k in range(5, 25):
        poll(k)
    gc.collect()
    later = _rss_bytes()
    return {
        "series": float(len(specs)),
        "poll_s": min(timed),
        "state_mb": (after - before) / 2**20,
        "growth_pct": 100.0 * (later - after) / max(1, after - before),
        "symptoms": float(len(stream.symptoms())),
    }


def _pooled(runs: list[dict[str, Any]], method: str, key: str) -> Any:
    total = runs[0][method][key]
    for r in runs[1:]:
        total = total.add(r[method][key])
    return total


def run(ctx: Context) -> FigureResult:
    from unifab.health.score import JobScore
    from unifab.twin.generate import generate

    fig = FigureResult(NAME, TITLE)
    gpus = QUICK_GPUS if ctx.quick else FULL_GPUS
    seeds = QUICK_SEEDS if ctx.quick else FULL_SEEDS
    case = f"{gpus:,} GPUs, {FAULTS} faults x {len(seeds)} seeds"
    bundle = ctx.scratch / "health" / f"gpus-{gpus}"
    if bundle.exists():
        shutil.rmtree(bundle)
    log(f"health: generating a {gpus:,}-GPU twin")
    start = time.perf_counter()
    generate(bundle, gpus, 7)
    fig.add(Row(NAME, case, "twin generation (no telemetry)", round(time.perf_counter() - start, 1), "s"))
    runs = []
    try:
        for seed in seeds:
            log(f"health: seed {seed}: faults, unifab, per-port alerts, 007")
            runs.append(_one_seed(bundle, seed))
    finally:
        shutil.rmtree(bundle, ignore_errors=True)
    kinds = "; ".join(f"seed {s}: {', '.join(r['kinds'])}" for s, r in zip(seeds, runs, strict=True))
    fig.add(Row(NAME, case, "series per twin", float(runs[0]["series"]), "", note=f"fault kinds drawn: {kinds}"))
    fig.add(
        Row(
            NAME,
            case,
            "read telemetry + logs (median)",
            round(sorted(r["read_s"] for r in runs)[len(runs) // 2], 2),
            "s",
        )
    )
    fig.add(
        Row(
            NAME,
            case,
            "unifab health engine (median)",
            round(sorted(r["health_s"] for r in runs)[len(runs) // 2], 2),
            "s",
        )
    )
    fig.add(
        Row(
            NAME,
            case,
            "replay ends with the batch engine's incidents (1 = yes)",
            float(all(r["replay_same"] for r in runs)),
            "",
            Target("==", 1.0),
        )
    )
    scores: dict[str, dict[str, Any]] = {m: {k: _pooled(runs, m, k) for k in ("exact", "located")} for m in METHODS}
    jobs: dict[str, JobScore] = {}
    for m in METHODS:
        # per seed the jobs are judged on their own faults; pooled: jobs of every seed, tagged by seed
        named = frozenset(f"{i}/{j}" for i, r in enumerate(runs) for j in r[m]["jobs"].named)
        truth = frozenset(f"{i}/{j}" for i, r in enumerate(runs) for j in r[m]["jobs"].truth)
        jobs[m] = JobScore(named, truth)
    for m in METHODS:
        exact, located = scores[m]["exact"], scores[m]["located"]
        label = f"{case}, {m}"
        is_unifab = m == "unifab"
        wrong = ", ".join(exact.wrong[:4]) or "none"
        fig.add(
            Row(
                NAME,
                label,
                "root cause F1 (exact)",
                round(exact.f1, 3),
                "",
                F1_TARGET if is_unifab else None,
                f"precision {exact.precision:.3f} ({exact.correct}/{exact.predictions}), recall {exact.recall:.3f} "
                f"({exact.found}/{exact.faults}); missed: {', '.join(exact.missed) or 'none'}; wrong (first): {wrong}",
            )
        )
        fig.add(Row(NAME, label, "root cause precision (exact)", round(exact.precision, 3), ""))
        fig.add(Row(NAME, label, "root cause recall (exact)", round(exact.recall, 3), ""))
        fig.add(
            Row(
                NAME,
                label,
                "root cause F1 (located: the root or a part of it)",
                round(located.f1, 3),
                "",
                None,
                f"precision {located.precision:.3f} ({located.correct}/{located.predictions}), recall "
                f"{located.recall:.3f}",
            )
        )
        fig.add(Row(NAME, label, "precision (located)", round(located.precision, 3), ""))
        lat = located.median_latency
        fig.add(
            Row(
                NAME,
                label,
                "time from fault start to incident (median, located match)",
                None if lat is None else round(lat, 1),
                "s",
                None,
                f"max {max(located.latencies or (0.0,)):.0f} s over {len(located.latencies)} faults found; "
                f"exact match: median {exact.median_latency if exact.latencies else float('nan'):.0f} s; "
                "the telemetry polls every 30 s",
            )
        )
        j = jobs[m]
        fig.add(
            Row(
                NAME,
                label,
                "impacted jobs F1",
                round(j.f1, 3),
                "",
                None,
                f"precision {j.precision:.3f}, recall {j.recall:.3f}",
            )
        )
        fig.add(Row(NAME, label, "impacted jobs not named", float(len(j.missed)), "", ZERO if is_unifab else None))
        fig.add(Row(NAME, label, "unaffected jobs named", float(len(j.unaffected)), "", ZERO if is_unifab else None))
    for key, target, why in (
        ("exact", RATIO_TARGET, "precision of root causes, as every method is scored"),
        (
            "located",
            None,
            "located credits an alert on any part of a fault, duplicates included: kindest to the baseline",
        ),
    ):
        ours, theirs = scores["unifab"][key].precision, scores["per-port alerts"][key].precision
        fig.add(
            Row(
                NAME,
                case,
                f"unifab precision / per-port alerts precision ({key})",
                round(ours / theirs, 1) if theirs else None,
                "×",
                target,
                f"{ours:.3f} vs {theirs:.3f}; {why}",
            )
        )
    scale_gpus = QUICK_SCALE_GPUS if ctx.quick else SCALE_GPUS
    log(f"health: one poll of every series at {scale_gpus:,} GPUs")
    scale = _scale(scale_gpus)
    scase = f"{scale_gpus:,} GPUs, {int(scale['series']):,} series"
    fig.add(
        Row(
            NAME,
            scase,
            "one new sample of every series (stream push + poll checks)",
            round(scale["poll_s"], 2),
            "s",
            POLL_TARGET,
            f"best of 3 polls; one poll interval is {POLL_S:.0f} s",
        )
    )
    fig.add(
        Row(
            NAME,
            scase,
            "stream state (resident)",
            round(scale["state_mb"], 1),
            "MiB",
            None,
            f"{scale['state_mb'] * 2**20 / scale['series']:.0f} B per series",
        )
    )
    fig.add(
        Row(
            NAME,
            scase,
            "resident growth over 20 more polls",
            round(scale["growth_pct"], 1),
            "%",
            GROWTH_TARGET,
            "state per series is its last sample and its window: bounded, whatever the history",
        )
    )
    u = scores["unifab"]["exact"]
    fig.headline = (
        f"{case}: unifab F1 {u.f1:.2f} vs per-port {scores['per-port alerts']['exact'].f1:.2f} and 007 "
        f"{scores['007']['exact'].f1:.2f} (exact root cause); one poll at {scale_gpus:,} GPUs "
        f"{human_seconds(scale['poll_s'])}"
    )
    fig.notes.append(
        "Exact: the prediction names the fault's root cause entity. Located: it names the root or one of its parts "
        "(unifab.health.score.Entities.members), which credits per-port alerts and 007's links on a dead host or "
        "switch. Pooled over the seeds (micro-averaged); each seed's jobs are judged against its own faults."
    )
    return fig
