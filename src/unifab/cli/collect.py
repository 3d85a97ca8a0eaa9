"""``unifab collect --inventory FILE --out DIR``: read every switch of an inventory live into a bundle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from unifab.cli.common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    FormatOption,
    OutputFormat,
    QuietOption,
    console,
    fail,
    plural,
    progress,
)
from unifab.cli.serve import PushOption, TokenFileOption, push_or_fail, push_token

__all__ = ["COLLECT_HELP", "collect"]

EXAMPLE_INVENTORY = """\
defaults:
  timeout_s: 10               # each connect and read
  deadline_s: 120             # all of one device, every request
devices:
  - name: leaf-su1-r0
    os: sonic                 # the switch's Redis
    address: 192.0.2.11
    password_env: SONIC_REDIS_PASSWORD
  - name: spine01
    os: eos                   # Arista eAPI over HTTPS
    address: 192.0.2.21
    username_env: EOS_USER
    password_env: EOS_PASSWORD
    verify: true              # or false, or a CA file"""

COLLECT_HELP = (
    "Read every switch in an inventory live into a bundle; one unreachable device never stops the rest.\n\n"
    "Exit 0 when every device was collected, 1 when some failed (the summary says which and why), 2 when the "
    "inventory is unusable or --out cannot be written.\n\n"
    "Each device is written into a staging directory and renamed into place when complete, so an interrupted "
    "collect never leaves a half-written device; a device that fails keeps its previous data, which unifab "
    "check then reports as stale (INPUT-STALE). collect-manifest.json records every device's last attempt.\n\n"
    "Example: unifab collect --inventory examples/inventory.yaml --out ./b-live && unifab check ./b-live\n\n"
    "Example: unifab collect --inventory inv.yaml --out ./b-live --push http://unifab.example:8080 "
    "(sends the devices collected to a unifab serve; token: $UNIFAB_TOKEN or --token-file)\n\n"
    "An inventory (the repository ships examples/inventory.yaml; credentials are named by *_env, never "
    "written in the file):\n\n"
    # \b keeps Click from re-wrapping the example's lines
    "\b\n" + EXAMPLE_INVENTORY
)


def collect(
    inventory: Annotated[
        Path, typer.Option(help="Inventory YAML: devices with name, os (sonic|eos), address (see below).")
    ],
    out: Annotated[Path, typer.Option(help="Bundle directory to write (switches/<name>/...).")],
    workers: Annotated[int, typer.Option(min=1, max=256, help="Devices read at once.")] = 16,
    output: FormatOption = OutputFormat.TABLE,
    quiet: QuietOption = False,
    push: PushOption = None,
    token_file: TokenFileOption = None,
) -> None:
    from rich.markup import escape

    from unifab.collect.inventory import collect_inventory, load_inventory, summary_json
    from unifab.collect.staging import BundleWriter
    from unifab.errors import ParseError, UnifabError

    token = push_token(push, token_file)
    try:
        inv = load_inventory(inventory.read_text(encoding="utf-8"), str(inventory))
    except ParseError as exc:
        fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{inventory}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    try:
        with BundleWriter(out) as writer, progress("collecting", len(inv.devices), quiet=quiet) as advance:
            summary = collect_inventory(inv, writer, workers, progress=lambda _result: advance(1))
    except UnifabError as exc:  # --out is a file, unwritable, or another collect writes into it
        fail(str(exc))
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(summary_json(summary)) + "\n")
    else:
        from rich.table import Table

        done = len(summary.results) - len(summary.failed)
        table = Table(title=f"collected {done:,} of {plural(len(summary.results), 'device')}")
        for column in ("device", "os", "result", "why"):
            table.add_column(column, overflow="fold")
        for r in summary.results:
            why = r.reason or ""
            if r.stale:
                why += f"; its previous data (from {r.data_from}) is kept and marked stale"
            table.add_row(escape(r.name), r.os, "[green]ok[/]" if r.ok else f"[red]{r.kind}[/]", escape(why))
        console().print(table)
    if collected := [f"switches/{r.name}" for r in summary.results if r.ok]:  # --push: what this run collected
        push_or_fail(push, token, out, collected)
    raise typer.Exit(EXIT_FINDINGS if summary.failed else EXIT_CLEAN)
