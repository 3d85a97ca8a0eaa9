"""The ``unifab`` command line: a thin layer over the library.

Exit codes (stable): 0 clean, 1 findings at or above ``--fail-on``, 2 usage or input error.
Heavy modules are imported inside the commands so ``unifab --help`` starts fast.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from unifab.cli_agent import agent_app
from unifab.cli_render import render_command
from unifab.cli_topo import topo_app

if TYPE_CHECKING:
    from rich.console import Console

    from unifab.model import Fabric, Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

app = typer.Typer(
    name="unifab",
    help="One place to prove an AI cluster's RoCE fabric is lossless end to end, NIC to switch to NIC.\n\n"
    "Example: unifab demo",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
twin_app = typer.Typer(
    help="Synthetic clusters in real device formats.\n\nExample: unifab twin generate --gpus 256 --out b1"
)
app.add_typer(twin_app, name="twin", no_args_is_help=True)
app.add_typer(agent_app, name="agent", no_args_is_help=True)
app.add_typer(topo_app, name="topo", no_args_is_help=True)
app.command("render")(render_command)


class OutputFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"


class FailOn(enum.StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _fail(message: str) -> NoReturn:
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]unifab: error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def _load(bundle: Path, show_progress: bool) -> Fabric:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from unifab.collect.bundle import count_devices, load_bundle
    from unifab.errors import UnifabError

    console = _console(stderr=True)
    try:
        if not (show_progress and console.is_terminal):
            return load_bundle(bundle)
        with Progress(
            TextColumn("reading {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            task = progress.add_task(str(bundle), total=count_devices(bundle))
            return load_bundle(bundle, progress=lambda _phase, n: progress.advance(task, n))
    except UnifabError as exc:
        _fail(str(exc))


def _exit_code(findings: list[Finding], fail_on: FailOn) -> int:
    from unifab.model import Severity

    if fail_on is FailOn.NEVER:
        return EXIT_CLEAN
    threshold = Severity(fail_on.value).rank
    return EXIT_FINDINGS if any(f.severity.rank >= threshold for f in findings) else EXIT_CLEAN


def _check_titles() -> dict[str, tuple[str, str]]:
    from unifab.checks.registry import registry

    return {spec.id: (spec.title, spec.why) for spec in registry().values()}


def _write_report(path: Path, bundle: Path, fabric: Fabric, findings: list[Finding]) -> None:
    from unifab.report.html import render_html, write_html

    facts = {
        "hosts": len(fabric.hosts),
        "NICs": sum(len(h.nics) for h in fabric.hosts.values()),
        "switches": len(fabric.switches),
        "links": len(fabric.links),
    }
    write_html(path, render_html(str(bundle), findings, _check_titles(), facts))


@app.command()
def check(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory (see DESIGN: hosts/, switches/, plan/).")],
    output: Annotated[OutputFormat, typer.Option("--format", "-f", help="table for people, json for scripts.")] = (
        OutputFormat.TABLE
    ),
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 when a finding is at least this severe.")] = FailOn.ERROR,
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
) -> None:
    """Run every check on a bundle and report the findings.

    Example: unifab check ./bundle --format json --fail-on critical

    Example: unifab check ./bundle --job 1002   (is the network on this job's path clean?)

    Example: unifab check ./bundle --watch   (Ctrl-C stops; --format json prints one line per change)
    """
    from unifab.checks.registry import registry
    from unifab.checks.runner import run_checks

    if watch:
        if only or job or html:
            _fail("--watch re-checks the whole bundle; it does not combine with --check, --job or --html")
        from unifab.cli_watch import watch as watch_bundle
        from unifab.errors import UnifabError

        try:
            raise typer.Exit(watch_bundle(bundle, output.value))
        except UnifabError as exc:
            _fail(str(exc))

    known = registry()
    if only:
        unknown = [c for c in only if c not in known]
        if unknown:
            _fail(f"unknown check id {unknown[0]!r}; known: {', '.join(known)}")
    from unifab.errors import UsageError

    fabric = _load(bundle, show_progress=output is OutputFormat.TABLE)
    try:
        findings = run_checks(fabric, only=set(only) if only else None, job=job)
    except UsageError as exc:
        _fail(str(exc))
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps
        from unifab.report.findings_json import document

        sys.stdout.write(dumps(document(str(bundle), findings)) + "\n")
    else:
        from unifab.report.table import print_report

        print_report(_console(), findings, {k: v[0] for k, v in _check_titles().items()}, limit or None)
    if html is not None:
        _write_report(html, bundle, fabric, findings)
    raise typer.Exit(_exit_code(findings, fail_on))


@app.command("checks")
def list_checks(
    output: Annotated[OutputFormat, typer.Option("--format", "-f", help="table for people, json for scripts.")] = (
        OutputFormat.TABLE
    ),
) -> None:
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

    table = Table(title="unifab checks", show_lines=True)
    for column in ("id", "what", "why it hurts", "how to fix"):
        table.add_column(column, overflow="fold")
    for spec in specs:
        table.add_row(f"[bold]{spec.id}[/]", spec.title, spec.why, spec.fix)
    _console().print(table)


@app.command()
def parse(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help="Format name; run with --help to list them.")],
    file: Annotated[Path, typer.Argument(help="Raw artifact (or directory, for tree formats); - for stdin.")],
) -> None:
    """Print one raw artifact as normalized JSON (to debug how unifab reads it).

    Formats: mlnx_qos, sysfs-ecn, traffic-class, ibdev2netdev, lldpcli, sonic-config-db, sonic-qos, cabling-csv.

    Example: unifab parse mlnx_qos /tmp/mlnx_qos_eth2.txt
    """
    from unifab.errors import ParseError
    from unifab.jsonify import dumps
    from unifab.parse.registry import FORMATS

    spec = FORMATS.get(fmt)
    if spec is None:
        _fail(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    try:
        if str(file) == "-":
            record = spec.parser()(sys.stdin.read(), "<stdin>")
        elif file.is_dir():
            if not spec.tree:
                _fail(f"{file} is a directory; format {fmt} reads a file")
            files = {p.relative_to(file).as_posix(): p.read_text() for p in sorted(file.rglob("*")) if p.is_file()}
            record = spec.tree_parser()(files, str(file))
        else:
            record = spec.parser()(file.read_text(encoding="utf-8"), str(file))
    except ParseError as exc:
        _fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{file}: cannot read: {exc}")
    sys.stdout.write(dumps(record) + "\n")


@app.command()
def collect(
    inventory: Annotated[Path, typer.Option(help="Inventory YAML: devices with name, os (sonic|eos), address.")],
    out: Annotated[Path, typer.Option(help="Bundle directory to write (switches/<name>/...).")],
    workers: Annotated[int, typer.Option(min=1, max=256, help="Devices read at once.")] = 16,
    output: Annotated[OutputFormat, typer.Option("--format", "-f", help="table for people, json for scripts.")] = (
        OutputFormat.TABLE
    ),
) -> None:
    """Read every switch in an inventory live into a bundle; one unreachable device never stops the rest.

    Exit 0 when every device was collected, 1 when some failed (the summary says which and why).

    Example: unifab collect --inventory fabric-inventory.yaml --out ./b-live && unifab check ./b-live
    """
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from unifab.collect.inventory import collect_inventory, load_inventory, summary_json
    from unifab.errors import ParseError

    try:
        inv = load_inventory(inventory.read_text(encoding="utf-8"), str(inventory))
    except ParseError as exc:
        _fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{inventory}: cannot read: {exc}")
    console = _console(stderr=True)
    with Progress(
        TextColumn("collecting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("devices", total=len(inv.devices))
        summary = collect_inventory(inv, out, workers, progress=lambda _result: progress.advance(task))
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(summary_json(summary)) + "\n")
    else:
        from rich.table import Table

        table = Table(title=f"collected {len(summary.results) - len(summary.failed)} of {len(summary.results)} devices")
        for column in ("device", "os", "result", "why"):
            table.add_column(column, overflow="fold")
        for r in summary.results:
            table.add_row(r.name, r.os, "[green]ok[/]" if r.ok else f"[red]{r.kind}[/]", escape(r.reason or ""))
        _console().print(table)
    raise typer.Exit(EXIT_FINDINGS if summary.failed else EXIT_CLEAN)


@twin_app.command("generate")
def twin_generate(
    out: Annotated[Path, typer.Option(help="New (or empty) directory for the bundle.")],
    gpus: Annotated[int, typer.Option(help="Cluster size in GPUs (8 per host).")] = 256,
    seed: Annotated[int, typer.Option(help="Random seed: same seed, same bundle.")] = 0,
    scenario: Annotated[
        list[str] | None,
        typer.Option(help="Misconfiguration to inject (repeatable); see `unifab twin scenarios`."),
    ] = None,
    su_hosts: Annotated[int, typer.Option(help="Hosts per scalable unit (one leaf per rail per SU).")] = 32,
    switch_os: Annotated[str, typer.Option(help="Switch OS: sonic, eos, nvue, or mixed (cycled by index).")] = "sonic",
    nic_vendor: Annotated[
        str, typer.Option(help="Host NICs: mlx5 (ConnectX-7), bnxt (Broadcom Thor2), or mixed (by host).")
    ] = "mlx5",
    nic_driver: Annotated[
        str, typer.Option(help="mlx5 driver stack: ofed (MLNX_OFED), upstream (in-tree), or mixed (by host).")
    ] = "ofed",
) -> None:
    """Write a synthetic rail-optimized RoCE cluster as a bundle, with truth.json.

    Example: unifab twin generate --gpus 1024 --out ./b1 --seed 7 --scenario pfc-mismatch --scenario ecn-off

    Example: unifab twin generate --gpus 512 --out ./b2 --switch-os mixed

    Example: unifab twin generate --gpus 256 --out ./b3 --nic-vendor mixed --nic-driver mixed
    """
    from unifab.errors import UnifabError
    from unifab.twin.generate import generate

    try:
        result = generate(
            out, gpus, seed, tuple(scenario or ()), su_hosts, switch_os, nic_vendor=nic_vendor, nic_driver=nic_driver
        )
    except UnifabError as exc:
        _fail(str(exc))
    skipped = result.truth.get("skipped", [])
    _console().print(
        f"wrote {result.root}: {result.hosts} hosts, {result.switches} switches, "
        f"{len(result.truth['misconfigurations'])} injected misconfigurations"
        + "".join(f"\nskipped {s['scenario']}: {s['why']}" for s in skipped)
    )


@twin_app.command("scenarios")
def twin_scenarios() -> None:
    """List the misconfigurations the twin can inject and the check that must find each.

    Example: unifab twin scenarios
    """
    from rich.table import Table

    from unifab.twin.scenarios import SCENARIOS

    table = Table(title="twin scenarios")
    table.add_column("scenario", style="bold")
    table.add_column("what it breaks")
    for name, fn in SCENARIOS.items():
        table.add_row(name, (fn.__doc__ or "").strip())
    _console().print(table)


@app.command()
def demo(
    out: Annotated[
        Path | None, typer.Option(help="Directory for the bundle and report (default: a new temp dir).")
    ] = None,
    gpus: Annotated[int, typer.Option(help="Cluster size in GPUs.")] = 256,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
) -> None:
    """Generate a twin with every scenario injected once, check it, and write an HTML report.

    Example: unifab demo --out ./unifab-demo
    """
    import tempfile

    from unifab.checks.runner import run_checks
    from unifab.errors import UnifabError
    from unifab.report.table import print_report
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    root = out if out is not None else Path(tempfile.mkdtemp(prefix="unifab-demo-"))
    bundle = root / "bundle"
    console = _console()
    try:
        result = generate(bundle, gpus, seed, tuple(SCENARIOS))
    except UnifabError as exc:
        _fail(str(exc))
    console.print(
        f"[bold]Twin:[/] {gpus} GPUs, {result.hosts} hosts, {result.switches} SONiC switches; "
        f"injected {len(result.truth['misconfigurations'])} misconfigurations ({', '.join(SCENARIOS)})"
    )
    fabric = _load(bundle, show_progress=True)
    findings = run_checks(fabric)
    print_report(console, findings, {k: v[0] for k, v in _check_titles().items()}, limit=15)
    report = root / "report.html"
    _write_report(report, bundle, fabric, findings)
    console.print(f"\n[bold]Bundle:[/] {bundle}\n[bold]HTML report:[/] {report}")
    console.print(f"Next: unifab check {bundle} --format json")
    console.print(f"      unifab topo show {bundle} --rail-map {root / 'rails.svg'}")
    console.print(
        f"      unifab render {bundle / 'fabric.yaml'} --bundle {bundle} --out {root / 'rendered'}"
        f" --write-bundle {root / 'fixed'}   (then: unifab check {root / 'fixed'})"
    )


def main() -> None:
    app()
