"""``unifab topo ...``: planned vs. discovered cabling (wired into the main CLI as the ``topo`` group).

Exit codes as in :mod:`unifab.cli`: 0 clean, 1 differences at or above ``--fail-on``, 2 usage or input error.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from unifab.model import Fabric, Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

topo_app = typer.Typer(
    help="Topology truth: the planned cabling against what LLDP sees, rails and link speed.\n\n"
    "Example: unifab topo diff ./bundle",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class TopoFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"


class TopoFailOn(enum.StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"


KIND_TITLES = {
    "TOPO-MISSING": "missing cable",
    "TOPO-UNEXPECTED": "unplanned cable",
    "TOPO-MISWIRED": "miswired",
    "TOPO-RAIL": "off its rail",
    "TOPO-DEGRADED": "degraded link",
}


@topo_app.callback()
def _group() -> None:
    """Topology truth: the planned cabling against what LLDP sees, rails and link speed."""


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]unifab: error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(EXIT_USAGE)


def topo_findings(fabric: Fabric) -> list[Finding]:
    """Every TOPO-* finding of a fabric, grouped by kind (catalog order), worst first within a kind."""
    from unifab.checks import topology
    from unifab.checks.context import CheckContext

    ctx = CheckContext.build(fabric)
    order = {spec.id: i for i, spec in enumerate(topology.CHECKS)}
    found = [f for spec in topology.CHECKS if spec.run is not None for f in spec.run(ctx)]
    return sorted(found, key=lambda f: (order[f.check], f.sort_key()))


def _views(f: Finding) -> tuple[str, str]:
    plan = f.evidence.get("plan")
    seen = f.evidence.get("discovered")
    if f.check == "TOPO-DEGRADED":
        a, b = f.evidence.get("a", {}), f.evidence.get("b", {})
        want = f.evidence.get("expected_speed_mbps")
        speeds = f"{_gbps(a.get('speed_mbps'))} / {_gbps(b.get('speed_mbps'))}"
        return (f"{', '.join(plan or [])} at {_gbps(want)}".strip(), f"{', '.join(seen or [])} at {speeds}")
    rail = f.evidence.get("rail")
    seen_text = "\n".join(seen or []) or "nothing (no LLDP on either end)"
    if rail:
        seen_text += "\n" + "\n".join(rail)
    return "\n".join(plan or []) or "nothing (not in the plan)", seen_text


def _gbps(value: Any) -> str:
    return f"{value // 1000}G" if isinstance(value, int) else "?"


def _print_table(console: Console, findings: list[Finding], has_plan: bool) -> None:
    from rich.table import Table

    if not has_plan:
        console.print("[yellow]no planned cabling in the bundle (plan/cabling.csv): only rails and speed compared[/]")
    if not findings:
        console.print("[green]cabling matches: no topology differences[/]")
        return
    table = Table(title=f"{len(findings)} topology differences", show_lines=True)
    for column in ("kind", "severity", "the plan says", "LLDP says", "consequence"):
        table.add_column(column, overflow="fold")
    for f in findings:
        plan, seen = _views(f)
        table.add_row(
            f"{f.check}\n{KIND_TITLES.get(f.check, '')}",
            f.severity.value,
            plan,
            seen,
            str(f.impact.get("summary", "")),
        )
    console.print(table)


@topo_app.command("diff")
def diff(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory with plan/cabling.csv and the devices' LLDP.")],
    output: Annotated[TopoFormat, typer.Option("--format", "-f", help="table for people, json for scripts.")] = (
        TopoFormat.TABLE
    ),
    fail_on: Annotated[
        TopoFailOn, typer.Option(help="Exit 1 when a difference is at least this severe.")
    ] = TopoFailOn.ERROR,
) -> None:
    """Planned cabling vs. what LLDP sees: missing, unplanned, miswired (a swap is one row), off-rail, degraded.

    Example: unifab topo diff ./bundle --format json --fail-on warning
    """
    from unifab.collect.bundle import load_bundle
    from unifab.errors import UnifabError
    from unifab.model import Severity

    try:
        fabric = load_bundle(bundle)
    except UnifabError as exc:
        raise _fail(str(exc)) from None
    findings = topo_findings(fabric)
    has_plan = any("plan" in lk.sources for lk in fabric.links)
    if output is TopoFormat.JSON:
        from unifab.jsonify import dumps
        from unifab.report.findings_json import document

        doc = document(str(bundle), findings)
        doc["summary"]["by_kind"] = {k: sum(f.check == k for f in findings) for k in KIND_TITLES}
        doc["summary"]["plan"] = has_plan
        sys.stdout.write(dumps(doc) + "\n")
    else:
        _print_table(_console(), findings, has_plan)
    if fail_on is TopoFailOn.NEVER:
        raise typer.Exit(EXIT_CLEAN)
    threshold = Severity(fail_on.value).rank
    raise typer.Exit(EXIT_FINDINGS if any(f.severity.rank >= threshold for f in findings) else EXIT_CLEAN)
