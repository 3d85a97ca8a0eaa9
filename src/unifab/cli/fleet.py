"""``unifab fleet versions BUNDLE``: what versions the fleet runs, by group, outliers first.

Groups are what should run one version (NIC model + PSID for NIC firmware, the driver module, the GPU model, the
switch OS + platform, the job log for NCCL; see :mod:`unifab.checks.fleet_versions`); ``unifab check`` judges them
(``FLEET-*``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from unifab.cli.common import EXIT_CLEAN, FormatOption, OutputFormat, QuietOption, console, load_fabric, plural

if TYPE_CHECKING:
    from unifab.checks.fleet import GroupView

__all__ = ["FLEET_HELP", "fleet_app", "versions", "versions_document"]

FLEET_HELP = (
    "Fleet lifecycle: the firmware, driver, NCCL and OS versions devices run, by group.\n\n"
    "Example: unifab fleet versions ./bundle"
)

fleet_app = typer.Typer(
    help=FLEET_HELP,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

MAX_NAMES = 20  # device names listed per version (the count is always whole)


@fleet_app.command()
def versions(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory (hosts/, switches/, optional fabric.yaml).")],
    output: FormatOption = OutputFormat.TABLE,
    quiet: QuietOption = False,
) -> None:
    """Versions by group with their counts, groups that are not uniform first, each group's outliers first.

    Per group (NIC firmware by NIC model and PSID, NIC driver, GPU driver and CUDA by GPU model, NCCL by job log
    under telemetry/nccl/, switch OS by OS and platform, host optics by vendor and part): every version, how many
    devices (and NICs) run it and which.
    'unifab check' reports the stragglers and what the fabric.yaml fleet: baseline does not allow (FLEET-*).

    Example: unifab fleet versions ./bundle

    Example: unifab fleet versions ./bundle --format json

    Exit codes: 0 printed; 2 usage or input error (not a bundle, no device readable); 3 internal error.
    """
    fabric = load_fabric(bundle, quiet=quiet)
    doc = versions_document(fabric, str(bundle))
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(doc) + "\n")
    else:
        _table(doc)
    raise typer.Exit(EXIT_CLEAN)


def versions_document(fabric: Any, source: str) -> dict[str, Any]:
    """The ``--format json`` document: ``{"bundle", "baseline", "groups": [{field, title, check, group, unit, uniform,
    majority, versions: [{version, devices, names, nics?}]}]}``, groups that are not uniform first."""
    from unifab.checks.context import CheckContext
    from unifab.checks.fleet import fleet_groups
    from unifab.checks.fleet_versions import FIELDS

    ctx = CheckContext.build(fabric)
    _, groups = fleet_groups(ctx)
    order = list(FIELDS)
    views = sorted(groups.values(), key=lambda g: (len(g.weight) == 1, order.index(g.field), g.label))
    return {
        "bundle": source,
        "baseline": [rule.where for rule in fabric.fleet_baseline],
        "groups": [_group(view) for view in views],
    }


def _group(view: GroupView) -> dict[str, Any]:
    from unifab.checks.fleet_versions import FIELDS, version_key

    spec = FIELDS[view.field]
    ordered = sorted(view.weight, key=lambda v: (view.weight[v], version_key(v)))
    rows = []
    for version in ordered:
        names = sorted(view.devices[version])
        row: dict[str, Any] = {"version": version, "devices": len(names), "names": names[:MAX_NAMES]}
        if view.field == "nic_firmware":
            row["nics"] = view.weight[version]
        rows.append(row)
    return {
        "field": view.field,
        "title": spec.title,
        "check": spec.check,
        "group": view.label,
        "unit": spec.unit,
        "uniform": len(view.weight) == 1,
        "majority": view.target,
        "versions": rows,
    }


def _table(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from unifab.report.text import cell

    groups = doc["groups"]
    mixed = sum(1 for g in groups if not g["uniform"])
    title = f"unifab fleet versions: {plural(len(groups), 'group')}, {plural(mixed, 'not uniform', 'not uniform')}"
    table = Table(title=title, show_lines=True)
    for column in ("what", "group", "version", "count", "devices"):
        table.add_column(column, overflow="fold")
    for g in groups:
        for i, row in enumerate(g["versions"]):
            count = plural(row["devices"], g["unit"], "switches" if g["unit"] == "switch" else None)
            if "nics" in row:
                count += f" ({plural(row['nics'], 'NIC')})"
            shown = ", ".join(row["names"])
            more = row["devices"] - len(row["names"])
            style = "" if g["uniform"] or row["version"] == g["majority"] else "[yellow]"
            table.add_row(
                cell(g["title"]) if i == 0 else "",
                cell(g["group"]) if i == 0 else "",
                f"{style}{cell(row['version'])}{'[/]' if style else ''}",
                count,
                cell(shown + (f" and {more} more" if more > 0 else "")),
            )
    out = console()
    out.print(table)
    if doc["baseline"]:
        out.print(f"baseline: {cell(', '.join(doc['baseline']))} (unifab check judges it: FLEET-*)")
