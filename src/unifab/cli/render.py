"""``unifab render INTENT``: per-device NIC and switch configuration from one intent file.

Exit codes: 0 every device rendered, 1 some device could not be rendered (the others are written),
2 usage or input error (a bad intent file: one message per problem).
"""

from __future__ import annotations

import enum
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
    progress,
)

if TYPE_CHECKING:
    from unifab.fabric_plan import FabricPlan

__all__ = ["render_command"]


class SwitchOs(enum.StrEnum):
    SONIC = "sonic"
    EOS = "eos"
    NVUE = "nvue"
    MIXED = "mixed"


def render_command(
    intent_file: Annotated[Path, typer.Argument(metavar="INTENT", help="fabric.yaml (see docs/intent.md)")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Directory for the rendered files (replaced atomically)")
    ] = None,
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Render for this bundle's devices, diffed against their state")
    ] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", help="Without --bundle: the rail-optimized template of N GPUs")
    ] = None,
    switch_os: Annotated[SwitchOs, typer.Option("--switch-os", help="Template switches' OS")] = SwitchOs.SONIC,
    write_bundle: Annotated[
        Path | None,
        typer.Option("--write-bundle", help="Also (or only) write a copy of the bundle as it will read once applied"),
    ] = None,
    fmt: FormatOption = OutputFormat.TABLE,
    show_all: Annotated[
        bool, typer.Option("--all", help="List every device in the table, not only those that change")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Render NIC scripts, switch configuration and the NCCL job environment from one intent.

    Writes hosts/<host>/unifab-qos.sh, switches/<switch>/config_db.json + patch.json (SONiC), eos.cfg
    (EOS) or nv-set.txt (NVUE), each device's changes.diff against its current state, and jobs/nccl.env.
    Without --bundle the devices are the rail-optimized template of --gpus N GPUs. Give --out, --write-bundle
    (a preview of the fixed fabric for unifab check), or both.

    Example: unifab render fabric.yaml --bundle ./b1 --out ./rendered --write-bundle ./b1-fixed
    """
    from unifab.errors import IntentError, UnifabError

    try:
        code = _run(intent_file, out, bundle, gpus, switch_os.value, write_bundle, fmt, show_all, quiet)
    except IntentError as exc:
        fail_lines(exc.problems)
    except UnifabError as exc:
        fail(str(exc))
    raise typer.Exit(code)


def _run(
    intent_file: Path,
    out: Path | None,
    bundle: Path | None,
    gpus: int | None,
    switch_os: str,
    write_bundle: Path | None,
    fmt: OutputFormat,
    show_all: bool,
    quiet: bool,
) -> int:
    from unifab.errors import UsageError
    from unifab.fabric_plan import output_files, plan, write_tree
    from unifab.intent import load_intent

    if (bundle is None) == (gpus is None):
        raise UsageError("give either --bundle BUNDLE (its devices) or --gpus N (the template fabric)")
    if out is None and write_bundle is None:
        raise UsageError(
            "give --out DIR for the rendered files, --write-bundle DIR for a preview of the fixed bundle, or both"
        )
    intent = load_intent(intent_file)
    with tempfile.TemporaryDirectory(prefix="unifab-render-") as scratch:
        if bundle is None:
            from unifab.twin.cluster import build
            from unifab.twin.rail_template import check_gpus
            from unifab.twin.writer import write_bundle as write_twin

            check_gpus(gpus or 0)
            bundle = Path(scratch) / "template"
            write_twin(build(gpus or 8, switch_os=switch_os), bundle)
        fabric = load_fabric(bundle, quiet=quiet)
        total = len(fabric.hosts) + len(fabric.switches)
        with progress("rendering", total, quiet=quiet) as advance:
            fp = plan(intent, fabric, bundle, progress=advance)
        if out is not None:
            write_tree(out, output_files(fp))
        if write_bundle is not None:
            # the preview carries the intent it was rendered from, so `unifab check` judges by it
            write_tree(write_bundle, fp.preview_files(), copy_from=bundle)
    _report(fp, out, write_bundle, fmt, show_all)
    return EXIT_FINDINGS if any(d.error for d in fp.devices) else EXIT_CLEAN


def _changed_lines(diff: str) -> int:
    return sum(1 for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


def _report(fp: FabricPlan, out: Path | None, preview: Path | None, fmt: OutputFormat, show_all: bool) -> None:
    rows: list[dict[str, Any]] = [
        {
            "kind": d.kind,
            "device": d.name,
            "os": d.os,
            "files": sorted(d.outputs),
            "changed_lines": _changed_lines(d.diff),
            "error": d.error,
            "notes": list(d.notes),  # why a rendered value is not the intent's (a platform's lower MTU)
        }
        for d in fp.devices
    ]
    if fmt is OutputFormat.JSON:
        from unifab.jsonify import dumps

        doc: dict[str, Any] = {"out": str(out) if out else None, "devices": rows}
        if preview is not None:
            doc["preview"] = str(preview)
        sys.stdout.write(dumps(doc) + "\n")
        return
    from rich.table import Table

    from unifab.report.text import cell

    shown = rows if show_all else [r for r in rows if r["changed_lines"] or r["error"]]
    unchanged = sum(1 for r in rows if not r["changed_lines"] and not r["error"])
    where = " and ".join(
        part for part in (f"rendered into {out}" if out else "", f"preview in {preview}" if preview else "") if part
    )
    stdout = console()
    if shown:
        table = Table(title=cell(where))
        for col in ("kind", "device", "os", "files", "changed lines", "error"):
            table.add_column(col)
        for r in shown:
            table.add_row(
                r["kind"],
                cell(r["device"]),
                cell(r["os"]),
                cell(", ".join(r["files"])),
                str(r["changed_lines"]),
                cell(r["error"] or ""),
            )
        stdout.print(table)
    else:
        stdout.print(cell(where))
    for r in shown:
        for note in r["notes"]:
            stdout.print(f"note: {cell(r['device'])}: {cell(note)}")
    changed = len(rows) - unchanged
    stdout.print(
        f"changes on {plural(changed, 'device')}; {plural(unchanged, 'device')} already match the intent"
        + ("" if show_all or not unchanged else " (--all lists them)")
    )
