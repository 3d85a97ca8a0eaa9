"""The ``unifab`` command line: a thin layer over the library, one module per command group.

Exit codes (stable, :mod:`unifab.cli.common`): 0 clean, 1 findings at or above ``--fail-on``, 2 usage, input
or output error, 3 internal error (the traceback is written to a file the message names; see
:class:`~unifab.cli.common.UnifabGroup`). Heavy modules are imported inside the commands so ``unifab --help``
starts fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from unifab.cli.agent import agent_app
from unifab.cli.check import check, list_checks
from unifab.cli.collect import COLLECT_HELP, collect
from unifab.cli.common import EXIT_HELP, UnifabGroup
from unifab.cli.demo import demo
from unifab.cli.fleet import fleet_app
from unifab.cli.health import HEALTH_HELP, health
from unifab.cli.jobs import JOBS_HELP, jobs
from unifab.cli.parse import PARSE_HELP, parse
from unifab.cli.plan_change import plan_change_command
from unifab.cli.render import render_command
from unifab.cli.serve import serve_app
from unifab.cli.topo import topo_app
from unifab.cli.twin import twin_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="unifab",
    help="One place to prove an AI cluster's RoCE fabric is lossless end to end, NIC to switch to NIC.\n\n"
    f"Example: unifab demo\n\n{EXIT_HELP}",
    cls=UnifabGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from unifab import __version__

        typer.echo(f"unifab {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    max_file_size: Annotated[
        str | None,
        typer.Option(
            "--max-file-size",
            metavar="SIZE",
            help="Largest bundle file read (e.g. 64M, 2G; default 256M, or UNIFAB_MAX_FILE_BYTES); a larger file "
            "is reported as unreadable, the rest is read.",
        ),
    ] = None,
) -> None:
    """One place to prove an AI cluster's RoCE fabric is lossless end to end, NIC to switch to NIC.

    Example: unifab demo

    Exit codes: 0 clean; 1 findings at or above --fail-on; 2 usage, input or output error (one 'unifab: error:'
    line); 3 internal error (the traceback is written to a file the message names).
    """
    if max_file_size is not None:
        import os

        from unifab.cli.common import fail
        from unifab.errors import UsageError
        from unifab.sources import MAX_FILE_BYTES_ENV, parse_size

        try:
            os.environ[MAX_FILE_BYTES_ENV] = str(parse_size(max_file_size, "--max-file-size"))
        except UsageError as exc:
            fail(str(exc))


app.command()(check)
app.command("checks")(list_checks)
app.command(help=PARSE_HELP)(parse)
app.command(help=COLLECT_HELP)(collect)
app.command()(demo)
app.command(help=HEALTH_HELP)(health)
app.command(help=JOBS_HELP)(jobs)
app.command("render")(render_command)
app.command("plan-change")(plan_change_command)
app.add_typer(twin_app, name="twin", no_args_is_help=True)
app.add_typer(agent_app, name="agent", no_args_is_help=True)
app.add_typer(topo_app, name="topo", no_args_is_help=True)
app.add_typer(fleet_app, name="fleet", no_args_is_help=True)
app.add_typer(serve_app, name="serve")


def main() -> None:
    app()
