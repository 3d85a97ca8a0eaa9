"""``unifab demo``: a twin with every scenario, checked, with an HTML report — the first thing to run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from unifab.cli.common import QuietOption, check_titles, console, fail, load_fabric, plural, progress

__all__ = ["demo"]


def demo(
    out: Annotated[
        Path | None, typer.Option(help="Directory for the bundle and report (default: a new temp dir).")
    ] = None,
    gpus: Annotated[int, typer.Option(help="Cluster size in GPUs (a multiple of 8).")] = 256,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
    quiet: QuietOption = False,
    serve: Annotated[
        bool,
        typer.Option("--serve", help="Then serve it: an embedded store, a viewer token, the web UI (Ctrl-C stops)."),
    ] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port for --serve (on 127.0.0.1).")] = 8080,
) -> None:
    """Generate a twin with every scenario injected once, check it, and write an HTML report.

    Example: unifab demo --out ./unifab-demo

    Example: unifab demo --serve   (the single pane over the demo at http://127.0.0.1:8080/)
    """
    import tempfile

    from unifab.checks.runner import run_checks
    from unifab.cli.check import write_report
    from unifab.errors import UnifabError
    from unifab.report.table import print_report
    from unifab.twin.cluster import device_count
    from unifab.twin.generate import generate
    from unifab.twin.rail_template import check_gpus
    from unifab.twin.scenarios import SCENARIOS

    try:
        check_gpus(gpus)
    except UnifabError as exc:
        fail(str(exc))
    temporary = out is None
    root = out if out is not None else Path(tempfile.mkdtemp(prefix="unifab-demo-"))
    bundle = root / "bundle"
    stdout = console()
    try:
        with progress(f"writing {bundle}", device_count(gpus), quiet=quiet) as advance:
            result = generate(bundle, gpus, seed, tuple(SCENARIOS), progress=advance)
    except UnifabError as exc:
        fail(str(exc))
    injected = len(result.truth["misconfigurations"])
    stdout.print(
        f"[bold]Twin:[/] {gpus:,} GPUs, {plural(result.hosts, 'host')}, "
        f"{plural(result.switches, 'SONiC switch', 'SONiC switches')}; "
        f"injected {plural(injected, 'misconfiguration')} ({', '.join(SCENARIOS)})"
    )
    fabric = load_fabric(bundle, quiet=quiet)
    findings = run_checks(fabric)
    print_report(stdout, findings, {k: v[0] for k, v in check_titles().items()}, limit=15)
    report = root / "report.html"
    write_report(report, bundle, fabric, findings)
    stdout.print(f"\n[bold]Bundle:[/] {bundle}\n[bold]HTML report:[/] {report}")
    stdout.print(f"Next: unifab check {bundle} --format json")
    stdout.print(f"      unifab topo show {bundle} --rail-map {root / 'rails.svg'}")
    stdout.print(
        f"      unifab render {bundle / 'fabric.yaml'} --bundle {bundle} --out {root / 'rendered'}"
        f" --write-bundle {root / 'fixed'}   (then: unifab check {root / 'fixed'})"
    )
    if temporary:
        stdout.print(f"[dim]The demo lives in a temp directory; remove it when done: rm -rf {root}[/]")
    if serve:
        from unifab.cli.serve import serve_demo

        serve_demo(root, bundle, "127.0.0.1", port)
