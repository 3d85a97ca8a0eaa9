"""``unifab render INTENT``: per-device NIC and switch configuration from one intent file.

Exit codes: 0 every device rendered, 1 some device could not be rendered (the others are written),
2 usage or input error (a bad intent file: one message per problem).
"""

from __future__ import annotations

import enum
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from unifab.render.write_bundle import FabricPlan

EXIT_CLEAN, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class RenderFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"


class SwitchOs(enum.StrEnum):
    SONIC = "sonic"
    EOS = "eos"
    NVUE = "nvue"
    MIXED = "mixed"


def render_command(
    intent_file: Annotated[Path, typer.Argument(metavar="INTENT", help="fabric.yaml (see docs/intent.md)")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the rendered files (replaced atomically)")],
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Render for this bundle's devices, diffed against their state")
    ] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", min=8, help="Without --bundle: the rail-optimized template of N GPUs")
    ] = None,
    switch_os: Annotated[SwitchOs, typer.Option("--switch-os", help="Template switches' OS")] = SwitchOs.SONIC,
    write_bundle: Annotated[
        Path | None,
        typer.Option("--write-bundle", help="Also write a copy of the bundle as it will read once applied"),
    ] = None,
    fmt: Annotated[RenderFormat, typer.Option("--format", help="Summary as a table or JSON")] = RenderFormat.TABLE,
) -> None:
    """Render NIC scripts, switch configuration and the NCCL job environment from one intent.

    Writes hosts/<host>/unifab-qos.sh, switches/<switch>/config_db.json + patch.json (SONiC), eos.cfg
    (EOS) or nv-set.txt (NVUE), each device's changes.diff against its current state, and jobs/nccl.env.
    Without --bundle the devices are the rail-optimized template of --gpus N GPUs.

    Example: unifab render fabric.yaml --bundle ./b1 --out ./rendered --write-bundle ./b1-fixed
    """
    from unifab.errors import IntentError, UnifabError

    try:
        code = _run(intent_file, out, bundle, gpus, switch_os.value, write_bundle, fmt)
    except IntentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    except UnifabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)


def _run(
    intent_file: Path,
    out: Path,
    bundle: Path | None,
    gpus: int | None,
    switch_os: str,
    write_bundle: Path | None,
    fmt: RenderFormat,
) -> int:
    from unifab.collect.bundle import load_bundle
    from unifab.errors import UsageError
    from unifab.intent import load_intent
    from unifab.render.write_bundle import output_files, plan, write_tree

    intent = load_intent(intent_file)
    if (bundle is None) == (gpus is None):
        raise UsageError("give either --bundle BUNDLE (its devices) or --gpus N (the template fabric)")
    with tempfile.TemporaryDirectory(prefix="unifab-render-") as scratch:
        if bundle is None:
            from unifab.twin.cluster import build
            from unifab.twin.writer import write_bundle as write_twin

            bundle = Path(scratch) / "template"
            write_twin(build(gpus or 8, switch_os=switch_os), bundle)
        fabric = load_bundle(bundle)
        fp = plan(intent, fabric, bundle)
        write_tree(out, output_files(fp))
        if write_bundle is not None:
            # the preview carries the intent it was rendered from, so `unifab check` judges by it
            write_tree(write_bundle, fp.preview_files(), copy_from=bundle)
    _report(fp, out, fmt)
    return EXIT_FAILED if any(d.error for d in fp.devices) else EXIT_CLEAN


def _report(fp: FabricPlan, out: Path, fmt: RenderFormat) -> None:
    rows = [
        {
            "kind": d.kind,
            "device": d.name,
            "os": d.os,
            "files": sorted(d.outputs),
            "changed_lines": sum(
                1 for ln in d.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
            ),
            "error": d.error,
        }
        for d in fp.devices
    ]
    if fmt is RenderFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps({"out": str(out), "devices": rows}) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"rendered into {out}")
    for col in ("kind", "device", "os", "files", "changed lines", "error"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["kind"]),
            str(r["device"]),
            str(r["os"]),
            ", ".join(r["files"]),  # type: ignore[arg-type]
            str(r["changed_lines"]),
            str(r["error"] or ""),
        )
    Console(width=160).print(table)
