"""``unifab topo export``: the discovered topology as Slurm ``topology.conf``, Kubernetes labels, a rail map.

The files are built by :mod:`unifab.report.topology_export` from the cables seen on the wire. Writing is safe:
the new text goes to a temporary file beside the target and is renamed over it in one step, a file unifab did
not write (no :data:`~unifab.report.topology_export.HEADER`) is never overwritten without ``--overwrite``, and
the difference to the file already there is printed first. ``--check`` only prints the difference.

Exit codes: 0 written (or unchanged), 1 ``--check`` found a difference or the export was refused because
topology errors are open, 2 unusable arguments or bundle.
"""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from unifab.cli.common import EXIT_CLEAN, EXIT_FINDINGS, QuietOption, console, fail, load_fabric, plural

__all__ = ["register"]

_MAX_LISTED = 10


def _write(target: Path, text: str, *, overwrite: bool, check: bool, quiet: bool) -> bool:
    """Write ``text`` to ``target`` (``-``: stdout); True when the file differs from ``text``."""
    if str(target) == "-":
        sys.stdout.write(text)
        return False
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{target}: cannot read the existing file: {getattr(exc, 'strerror', None) or exc}")
    if old == text:
        if not quiet:
            console(stderr=True).print(f"{target}: unchanged", markup=False, highlight=False)
        return False
    if old is not None:
        diff = difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(target), f"{target} (new)")
        sys.stdout.writelines(diff)
    if check:
        return True
    if old is not None and not _written_by_unifab(old) and not overwrite:
        fail(f"{target}: exists and was not written by unifab; pass --overwrite to replace it (the diff is above)")
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".unifab-tmp", dir=target.parent)
        tmp = Path(name)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(target)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        fail(f"{target}: cannot write: {exc.strerror or exc}")
    if not quiet:
        console(stderr=True).print(f"{target}: written", markup=False, highlight=False)
    return True


def _written_by_unifab(text: str) -> bool:
    """A file an earlier export wrote: it starts with the export header (or is a unifab rail map)."""
    from unifab.report.topology_export import HEADER, RAIL_MAP_FORMAT

    return text.startswith(HEADER) or text.startswith(f'{{"format":"{RAIL_MAP_FORMAT}"')


def export(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory with the devices' LLDP or ib/ibnetdiscover.txt.")],
    slurm: Annotated[
        Path | None,
        typer.Option("--slurm", help="Write topology.conf for Slurm's topology/tree plugin ('-': stdout)."),
    ] = None,
    slurm_block: Annotated[
        Path | None,
        typer.Option(
            "--slurm-block",
            help="Write topology.conf for Slurm's topology/block plugin (23.11+): a block per NVLink domain "
            "(nvidia-smi -q Fabric ClusterUUID/CliqueId), else per scalable unit.",
        ),
    ] = None,
    k8s: Annotated[
        Path | None, typer.Option("--k8s", help="Write Kubernetes Node objects with placement labels (YAML).")
    ] = None,
    rails: Annotated[
        Path | None, typer.Option("--rail-map", help="Write the GPU↔NIC↔rail↔leaf map per host (JSON).")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only print how the files would change; exit 1 when they would.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a file unifab did not write (it is never replaced otherwise).")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Export even while topology errors (TOPO-*) are open.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Export the discovered topology for the schedulers: Slurm tree/block topology.conf, Kubernetes labels, rails.

    Built from the cables seen on the wire (LLDP, ibnetdiscover), not from the plan. Refused while the bundle has
    topology errors (a missing or miswired cable would be exported as the truth), unless --force.

    Example: unifab topo export ./bundle --slurm /etc/slurm/topology.conf --k8s labels.yaml --rail-map rails.json
    """
    if not any((slurm, slurm_block, k8s, rails)):
        fail("nothing to export: give --slurm, --slurm-block, --k8s and/or --rail-map")
    from unifab.checks.topology import topology_diff
    from unifab.jsonify import dumps
    from unifab.model import Severity
    from unifab.report import topology_export as tx

    fabric = load_fabric(bundle, quiet=quiet)
    errors = [f for f in topology_diff(fabric) if f.severity is Severity.ERROR]
    if errors and not force:
        err = console(stderr=True)
        err.print(
            f"unifab: refusing to export: {plural(len(errors), 'topology error')} open (fix them or pass --force):",
            markup=False,
            highlight=False,
        )
        for f in errors[:_MAX_LISTED]:
            err.print(f"  {f.check}: {f.message}", markup=False, highlight=False)
        if len(errors) > _MAX_LISTED:
            err.print(f"  … and {len(errors) - _MAX_LISTED} more (unifab topo diff shows all)", markup=False)
        raise typer.Exit(EXIT_FINDINGS)
    tree = tx.tree_of(fabric)
    if not tree.blocks:
        fail(f"{bundle}: no host-to-switch cable was discovered (LLDP or ibnetdiscover); nothing to export")
    outputs: list[tuple[Path, str]] = []
    refused = list(tree.refused)
    if slurm:
        outputs.append((slurm, tx.slurm_tree(tree)))
    if slurm_block:
        outputs.append((slurm_block, tx.slurm_block(tree, fabric)))
    if k8s:
        import yaml

        items, k8s_refused = tx.k8s_labels(fabric, tree)
        refused += [r for r in k8s_refused if r not in refused]
        body = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False)
        outputs.append((k8s, tx.HEADER + "# kubectl apply -f this file to set the labels\n" + body))
    if rails:
        outputs.append((rails, dumps(tx.rail_map(fabric)) + "\n"))
    for why in refused:
        console(stderr=True).print(f"unifab: left out {why}", markup=False, highlight=False)
    changed = [_write(target, text, overwrite=overwrite, check=check, quiet=quiet) for target, text in outputs]
    raise typer.Exit(EXIT_FINDINGS if check and any(changed) else EXIT_CLEAN)


def register(app: typer.Typer) -> None:
    """Add ``topo export`` to the topo group."""
    app.command("export")(export)
