"""``unifab health BUNDLE``: counter series → incidents with one root cause, the jobs they hurt, the action."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from unifab.cli.common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    FormatOption,
    OutputFormat,
    QuietOption,
    console,
    fail,
    fail_lines,
    load_fabric,
    plural,
)

if TYPE_CHECKING:
    from unifab.health.detect import Thresholds
    from unifab.health.engine import HealthResult

__all__ = ["HEALTH_HELP", "health", "health_thresholds"]

HEALTH_HELP = """Find incidents in a bundle's telemetry: one root cause each, the jobs it hurts, what to do.

Reads the counter series of telemetry/*.om (OpenMetrics with timestamps; docs/health.md) or, with --prometheus,
the same metrics from a Prometheus-compatible TSDB, plus kernel logs (Xid), NCCL logs (completion errors) and the
transceivers' DOM; the bundle gives the topology, the jobs and the configuration findings.

Example: unifab health ./bundle

Example: unifab health ./bundle --format json

Example: unifab health ./bundle --prometheus http://127.0.0.1:9090 --start 2026-11-30T01:00:00Z --step 30

Example: unifab health ./bundle --intent fabric.yaml

Thresholds: the health: section of --intent FILE, else of the bundle's fabric.yaml, else the defaults
(docs/intent.md).

Exit codes: 0 no incident; 1 incidents; 2 usage, input or output error (one 'unifab: error:' line); 3 internal
error.
"""


def _time(text: str | None, option: str) -> float | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"{option} {text!r}: expected an ISO time such as 2026-11-30T01:00:00Z")
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def health(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory: topology, jobs, and telemetry/*.om.")],
    output: FormatOption = OutputFormat.TABLE,
    prometheus: Annotated[
        str | None, typer.Option(help="Read the series from this Prometheus API base URL instead of telemetry/.")
    ] = None,
    start: Annotated[str | None, typer.Option(help="With --prometheus: window start (ISO; default end - 1 h).")] = None,
    end: Annotated[str | None, typer.Option(help="With --prometheus: window end (ISO; default now).")] = None,
    step: Annotated[
        float, typer.Option(min=1.0, help="With --prometheus: seconds per point (the scrape interval).")
    ] = 30.0,
    timeout: Annotated[
        float,
        typer.Option(min=0.1, help="With --prometheus: seconds to wait for each answer before giving up."),
    ] = 10.0,
    intent: Annotated[
        Path | None,
        typer.Option(help="Intent file whose health: section sets the thresholds (default: the bundle's fabric.yaml)."),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    from unifab.checks.runner import run_checks
    from unifab.health.engine import read_bundle_series, run_health
    from unifab.health.events import read_events
    from unifab.health.prometheus import PrometheusError, read_prometheus, read_prometheus_xids
    from unifab.sources import as_source_path

    if prometheus is None and (start or end):
        fail("--start and --end choose a window of --prometheus; a bundle's telemetry is read whole")
    thresholds = health_thresholds(bundle, intent)
    fabric = load_fabric(bundle, quiet=quiet)
    if prometheus is not None:
        until = _time(end, "--end") or datetime.now(UTC).timestamp()
        since = _time(start, "--start") or until - 3600.0
        try:
            store = read_prometheus(prometheus, fabric, since, until, step, timeout=timeout)
            gpu_events = read_prometheus_xids(prometheus, fabric, since, until, step, timeout=timeout)
        except PrometheusError as exc:
            fail(str(exc))
        source = prometheus
    else:
        store = read_bundle_series(as_source_path(bundle), fabric)
        source = str(bundle)
    span = store.span()
    year = datetime.fromtimestamp(span[1] if span else datetime.now(UTC).timestamp(), UTC).year
    # with a TSDB, the GPUs' dcgm-exporter gauges come from it (as the counters do), not from telemetry/dcgm/
    events = read_events(as_source_path(bundle), fabric, year, dcgm=prometheus is None)
    if prometheus is not None:
        events.xids.extend(gpu_events.xids)
        events.problems.extend(gpu_events.problems)
    if not store.series and not events.files:
        where = prometheus or f"{bundle}/telemetry/*.om or ib/perfquery/*.txt"
        first = f" ({store.problems[0]})" if store.problems else ""
        logs = "no telemetry/kernel or telemetry/nccl log"
        fail(f"no counter series in {where} and {logs}{first}: nothing to judge health by")
    result = run_health(fabric, store, run_checks(fabric), thresholds, events)
    if output is OutputFormat.JSON:
        from unifab.health.engine import document
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(document(source, result)) + "\n")
    else:
        _table(result)
    raise typer.Exit(EXIT_FINDINGS if result.incidents else EXIT_CLEAN)


def health_thresholds(bundle: Path, intent: Path | None) -> Thresholds:
    """The ``health:`` section of ``--intent``, else of the bundle's ``fabric.yaml``; a problem in it: exit 2."""
    from unifab import layout
    from unifab.errors import IntentError
    from unifab.health.detect import Thresholds
    from unifab.health.thresholds import from_text
    from unifab.sources import as_source_path

    if intent is not None:
        try:
            text, source = intent.read_text(encoding="utf-8"), str(intent)
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"--intent {intent}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    else:
        try:
            path = as_source_path(bundle) / layout.INTENT
            if not path.is_file():
                return Thresholds()
            text, source = path.read_text(encoding="utf-8"), f"{bundle}/{layout.INTENT}"
        except (ValueError, OSError, UnicodeDecodeError):
            return Thresholds()  # not a bundle, or an unreadable fabric.yaml: load_fabric and the checks say so
    try:
        return from_text(text, source)
    except IntentError as exc:
        fail_lines(exc.problems)


def _table(result: HealthResult) -> None:
    from rich.table import Table

    from unifab.health.localize import iso
    from unifab.report.text import cell

    out = console()
    span = f", {iso(result.span[0])} to {iso(result.span[1])}" if result.span else ""
    out.print(
        f"{plural(result.series, 'series', 'series')}, {plural(result.samples, 'sample')}{span}; "
        f"{plural(result.gaps, 'gap')} (missed samples, not filled in)"
    )
    for problem in result.problems:
        out.print(f"[yellow]not read:[/] {cell(problem)}")
    if not result.incidents:
        out.print("[green]no incident[/]: no counter rose persistently enough to be more than noise")
        return
    table = Table(title=f"unifab health: {plural(len(result.incidents), 'incident')}", show_lines=True)
    for column in ("root cause", "since", "conf.", "what", "jobs (GPU-h/h)", "action"):
        table.add_column(column, overflow="fold")
    for i in result.incidents:
        jobs = ", ".join(i.jobs) + f" ({i.gpus_at_risk})" if i.jobs else "-"
        what = cell(i.summary) + "".join(f"\n[dim]config: {cell(f.check)} {cell(f.message)}[/]" for f in i.findings[:3])
        actions = "\n".join(cell(c) for a in i.actions for c in a.commands)
        table.add_row(f"[bold]{cell(i.root)}[/]", iso(i.start), f"{i.confidence:.2f}", what, cell(jobs), actions)
    out.print(table)
