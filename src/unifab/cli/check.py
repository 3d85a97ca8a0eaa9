"""``unifab check BUNDLE`` and ``unifab checks``: run the checks, list the catalog."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from unifab.cli.common import (
    FailOn,
    FailOnOption,
    FormatOption,
    OutputFormat,
    QuietOption,
    check_titles,
    console,
    exit_code,
    fail,
    load_fabric,
    record_cache,
)
from unifab.cli.serve import PushOption, TokenFileOption, push_or_fail, push_token

if TYPE_CHECKING:
    from unifab.model import Fabric, Finding

__all__ = ["check", "list_checks", "write_report"]

CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="DIR",
        help="Keep parsed device records in DIR and reuse those whose files are unchanged (default: on for "
        "bundles of more than 256 devices, in $UNIFAB_CACHE_DIR or ~/.cache/unifab/records).",
    ),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Parse every file; neither read nor write a cache.")]


def write_report(path: Path, bundle: Path, fabric: Fabric, findings: list[Finding]) -> None:
    """The self-contained HTML report; an unwritable path is a usage error."""
    from unifab.report.html import render_html, write_html

    facts = {
        "hosts": len(fabric.hosts),
        "NICs": sum(len(h.nics) for h in fabric.hosts.values()),
        "switches": len(fabric.switches),
        "links": len(fabric.links),
    }
    try:
        write_html(path, render_html(str(bundle), findings, check_titles(), facts))
    except OSError as exc:
        fail(f"cannot write the HTML report {path}: {exc.strerror or exc}")


def check(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory (hosts/, switches/, plan/; docs/bundle.md).")],
    output: FormatOption = OutputFormat.TABLE,
    fail_on: FailOnOption = FailOn.ERROR,
    only: Annotated[list[str] | None, typer.Option("--check", help="Run only this check id (repeatable).")] = None,
    job: Annotated[
        str | None, typer.Option(help="Only what touches this job's hosts and paths (e.g. job:slurm:1002 or 1002).")
    ] = None,
    html: Annotated[Path | None, typer.Option(help="Also write a self-contained HTML report here.")] = None,
    limit: Annotated[int, typer.Option(help="Rows of the findings table (0 = all).")] = 50,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch", help="Stay running: re-check the devices whose files change, print only the changed findings."
        ),
    ] = False,
    quiet: QuietOption = False,
    push: PushOption = None,
    token_file: TokenFileOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Run every check on a bundle and report the findings.

    Example: unifab check ./bundle --format json --fail-on critical

    Example: unifab check ./bundle --job 1002   (is the network on this job's path clean?)

    Example: unifab check ./bundle --watch   (Ctrl-C stops; --format json prints one line per change)

    Example: UNIFAB_TOKEN=... unifab check ./bundle --push http://unifab.example:8080   (and store it there)

    Example: unifab check ./bundle --cache ~/.cache/unifab/records   (a second check of unchanged files is quick)
    """
    from unifab.checks.registry import registry
    from unifab.checks.runner import run_checks
    from unifab.errors import UnifabError, UsageError

    token = push_token(push, token_file)
    if watch:
        if push:
            fail("--watch does not combine with --push (unifab agent pushes continuously)")
        if only or job or html:
            fail("--watch re-checks the whole bundle; it does not combine with --check, --job or --html")
        from unifab.cli.watch import watch as watch_bundle

        try:  # the first load reads through the record cache; the session keeps the records in memory after it
            raise typer.Exit(watch_bundle(bundle, output.value, cache=record_cache(bundle, cache, no_cache)))
        except UnifabError as exc:
            fail(str(exc))

    known = registry()
    if only:
        unknown = [c for c in only if c not in known]
        if unknown:
            fail(f"unknown check id {unknown[0]!r}; known: {', '.join(known)}")
    fabric = load_fabric(bundle, quiet=quiet, cache=record_cache(bundle, cache, no_cache))
    try:
        findings = run_checks(fabric, only=set(only) if only else None, job=job)
    except UsageError as exc:
        fail(str(exc))
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps
        from unifab.report.findings_json import document

        sys.stdout.write(dumps(document(str(bundle), findings)) + "\n")
    else:
        from unifab.report.table import print_report

        print_report(console(), findings, {k: v[0] for k, v in check_titles().items()}, limit or None)
    if html is not None:
        write_report(html, bundle, fabric, findings)
        # stderr, so that stdout stays pure JSON with --format json
        sys.stderr.write(f"unifab: HTML report written to {html}\n")
    push_or_fail(push, token, bundle)
    raise typer.Exit(exit_code(findings, fail_on))


def list_checks(output: FormatOption = OutputFormat.TABLE) -> None:
    """List the check catalog: id, what it looks at, why it hurts, how to fix it.

    Example: unifab checks --format json
    """
    from unifab.checks.registry import registry

    specs = list(registry().values())
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        rows = [{"id": s.id, "title": s.title, "why": s.why, "fix": s.fix} for s in specs]
        sys.stdout.write(dumps(rows) + "\n")
        return
    from rich.table import Table

    from unifab.report.text import cell

    table = Table(title="unifab checks", show_lines=True)
    for column in ("id", "what", "why it hurts", "how to fix"):
        table.add_column(column, overflow="fold")
    for spec in specs:
        table.add_row(f"[bold]{cell(spec.id)}[/]", cell(spec.title), cell(spec.why), cell(spec.fix))
    console().print(table)
