"""Rich tables: a summary grouped by check and severity, and the findings themselves.

Every cell that may hold device text goes through :func:`unifab.report.text.cell` (control characters and
terminal escapes made visible, Rich markup escaped).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from unifab.model import Finding, Severity
from unifab.report.text import cell

__all__ = ["SEVERITY_STYLE", "findings_table", "print_report", "summary_table"]

SEVERITY_STYLE = {
    Severity.CRITICAL: "bold white on red",
    Severity.ERROR: "bold red",
    Severity.WARNING: "yellow",
    Severity.INFO: "cyan",
}


def summary_table(findings: Sequence[Finding], titles: dict[str, str]) -> Table:
    table = Table(title="Findings by check and severity", show_lines=False)
    table.add_column("check", style="bold")
    table.add_column("severity")
    table.add_column("count", justify="right")
    table.add_column("what")
    counts = Counter((f.check, f.severity) for f in findings)
    for (check, severity), n in sorted(counts.items(), key=lambda kv: (-kv[0][1].rank, kv[0][0])):
        table.add_row(
            cell(check), f"[{SEVERITY_STYLE[severity]}]{severity.value}[/]", str(n), cell(titles.get(check, ""))
        )
    return table


def findings_table(findings: Sequence[Finding], limit: int | None = None) -> Table:
    shown = findings if limit is None else findings[:limit]
    title = f"{len(findings):,} finding{'' if len(findings) == 1 else 's'}" + (
        f" (first {len(shown)})" if len(shown) < len(findings) else ""
    )
    table = Table(title=title, show_lines=False)
    table.add_column("severity")
    table.add_column("check", style="bold")
    table.add_column("where", overflow="fold")
    table.add_column("message", overflow="fold")
    table.add_column("fix", overflow="fold")
    for f in shown:
        where = _where(f.subject)
        fix = "; ".join(f"{x.device}: {' && '.join(x.commands)}" for x in f.fix)
        table.add_row(
            f"[{SEVERITY_STYLE[f.severity]}]{f.severity.value}[/]",
            cell(f.check),
            cell(where),
            cell(f.message),
            cell(fix),
        )
    return table


def _where(subject: dict[str, str]) -> str:
    if "a" in subject and "b" in subject:
        return f"{subject['a']} ↔ {subject['b']}"
    if "id" in subject:
        return subject["id"].partition(":")[2] + (f" {subject['config']}" if "config" in subject else "")
    return subject.get("path", "")


def print_report(console: Console, findings: Sequence[Finding], titles: dict[str, str], limit: int | None) -> None:
    if not findings:
        console.print("[bold green]No findings: every check passed.[/]")
        return
    console.print(summary_table(findings, titles))
    console.print(findings_table(findings, limit))
