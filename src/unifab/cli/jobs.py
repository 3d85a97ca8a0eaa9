"""``unifab jobs BUNDLE``: per job, "is it the network?" — incidents and findings on its GPUs, NICs and paths."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from unifab.cli.common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    FailOn,
    FailOnOption,
    FormatOption,
    OutputFormat,
    QuietOption,
    console,
    fail,
    load_fabric,
    plural,
)

if TYPE_CHECKING:
    from unifab.health.impact import JobVerdict

__all__ = ["JOBS_HELP", "jobs"]

_MIN = {"what": 16}
_SHORT = {"roce": "RoCE", "ib": "IB"}  # the table's fabric column (the JSON says "roce" / "ib")

JOBS_HELP = """Is it the network? Per job: the incidents and configuration findings on its GPUs, NICs and paths.

A job's network is its hosts, their GPUs and NICs, each NIC's link to its leaf (port and optics), the leaves and
their ECMP uplinks; the fabric column says which network its collectives run over (RoCE, InfiniBand or both:
the NICs its NCCL_IB_HCA selects). Incidents come from the bundle's telemetry (as 'unifab health' finds them),
findings from every check; a job with neither gets a clean bill listing what was checked.

Example: unifab jobs ./bundle

Example: unifab jobs ./bundle --job 1002 --format json

Exit codes: 0 every job clean; 1 an incident, or a finding at or above --fail-on, on a job's network; 2 usage,
input or output error (an unknown --job, a bundle without jobs); 3 internal error.
"""


def jobs(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory: topology, scheduler/ jobs, telemetry.")],
    job: Annotated[
        str | None, typer.Option(help="Only this job (job:slurm:1002, slurm:1002, 1002 or its name).")
    ] = None,
    output: FormatOption = OutputFormat.TABLE,
    fail_on: FailOnOption = FailOn.ERROR,
    intent: Annotated[
        Path | None,
        typer.Option(help="Intent file whose health: section sets the thresholds (default: the bundle's fabric.yaml)."),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    from unifab.checks.runner import find_job, run_checks
    from unifab.cli.health import health_thresholds
    from unifab.errors import UsageError
    from unifab.health.engine import read_bundle_series, run_health
    from unifab.health.events import read_events
    from unifab.health.impact import judge_jobs
    from unifab.model import Severity
    from unifab.sources import as_source_path

    thresholds = health_thresholds(bundle, intent)
    fabric = load_fabric(bundle, quiet=quiet)
    if not fabric.jobs:
        fail(f"{bundle}: no jobs (nothing under scheduler/ that names one): nothing to judge")
    try:
        wanted = [find_job(fabric, job)] if job is not None else sorted(fabric.jobs.values(), key=lambda j: j.id)
    except UsageError as exc:
        fail(str(exc))
    root = as_source_path(bundle)
    store = read_bundle_series(root, fabric)
    span = store.span()
    year = datetime.fromtimestamp(span[1] if span else datetime.now(UTC).timestamp(), UTC).year
    events = read_events(root, fabric, year)
    findings = run_checks(fabric)
    result = run_health(fabric, store, findings, thresholds, events)
    threshold = Severity.CRITICAL if fail_on is FailOn.NEVER else Severity(fail_on.value)
    verdicts = judge_jobs(
        fabric, wanted, findings, result.incidents, threshold, telemetry=bool(store.series or events.files)
    )
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        doc = {
            "source": str(bundle),
            "fail_on": fail_on.value,
            "problems": list(result.problems),
            "jobs": [v.as_dict() for v in verdicts],
        }
        sys.stdout.write(dumps(doc) + "\n")
    else:
        _table(verdicts)
    bad = any(v.incidents or v.findings for v in verdicts)
    raise typer.Exit(EXIT_FINDINGS if bad and fail_on is not FailOn.NEVER else EXIT_CLEAN)


def _table(verdicts: list[JobVerdict]) -> None:
    from rich.table import Table

    from unifab.errors import UnifabError
    from unifab.parse.sched import hostlist
    from unifab.report.text import cell

    table = Table(title=f"unifab jobs: {plural(len(verdicts), 'job')}", show_lines=True)
    for column in ("job", "hosts", "fabric", "verdict", "what", "checked"):
        # the short columns keep their words whole; "what" gets room for one verdict line
        table.add_column(column, overflow="fold", no_wrap=column in ("fabric", "verdict"), min_width=_MIN.get(column))
    for v in verdicts:
        s = v.scope
        lines = [
            f"[bold]{cell(i.root)}[/] ({'on its hosts' if on == 'hosts' else 'on its path'}): {cell(i.summary)}"
            for i, on in v.incidents[:5]
        ]
        lines += [f"{cell(f.check)} [{f.severity.value}] {cell(f.message)}" for f in v.findings[:5]]
        more = len(v.incidents) + len(v.findings) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more (--format json)")
        if not lines:
            lines.append("[green]not the network[/]: no incident, no finding on what it uses")
        colour = {"incidents": "red", "findings": "yellow", "clean": "green"}[v.verdict]
        checked = (
            f"{plural(len(s.gpus), 'GPU')}, {plural(len(s.nics), 'NIC')}, {plural(len(s.links), 'link')}, "
            f"{plural(len(s.leaves), 'leaf', 'leaves')}, {plural(len(s.uplinks), 'uplink')}"
            + ("" if v.telemetry else "; no telemetry")
            + (f"; no data for {cell(', '.join(s.missing))}" if s.missing else "")
        )
        try:
            hosts = hostlist.compress(list(s.hosts), sort=True) if s.hosts else "-"
        except (ValueError, UnifabError):
            hosts = ", ".join(s.hosts)
        fabric = "+".join(_SHORT[k] for k in s.fabrics) or "-"
        table.add_row(cell(s.job.id), cell(hosts), fabric, f"[{colour}]{v.verdict}[/]", "\n".join(lines), checked)
    console().print(table)
