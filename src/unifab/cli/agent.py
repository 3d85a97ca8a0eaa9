"""``unifab agent ...``: the host agent's commands (wired into the main CLI as the ``agent`` group).

Exit codes as in :mod:`unifab.cli.common`: 0 done (what the host lacks is listed, not an error), 2 unusable
arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from unifab.cli.common import fail

__all__ = ["agent_app"]

agent_app = typer.Typer(
    help="The host agent: collect this host's NIC, GPU and PCIe artifacts into a bundle.\n\n"
    "Example: unifab agent collect --out ./bundle",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@agent_app.callback()
def _group() -> None:
    """The host agent: collect this host's NIC, GPU and PCIe artifacts into a bundle."""


@agent_app.command("collect")
def collect(
    out: Annotated[Path, typer.Option("--out", help="Bundle directory; the host is written to DIR/hosts/<hostname>/.")],
    root: Annotated[
        Path, typer.Option("--root", help="Read /sys and /etc under this directory instead of / (tests, chroots).")
    ] = Path("/"),
    hostname: Annotated[
        str | None, typer.Option("--hostname", help="Name of the host directory (default: this host's short name).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each command may run.")] = 30.0,
) -> None:
    """Copy the /sys and configfs files unifab reads and run the NIC, GPU and PCIe commands, in the bundle layout.

    A missing tool, a failing command or an unreadable file is listed (and recorded in collect.json, which
    `unifab check` reports as INPUT-MISSING); it does not fail the collection.

    Example: unifab agent collect --out ./bundle --hostname gpu017
    """
    from unifab.collect.host_live import collect_host
    from unifab.errors import UsageError

    try:
        report = collect_host(out, root=root, hostname=hostname, timeout=timeout)
    except UsageError as exc:
        fail(str(exc))
    from unifab.report.text import display

    nics = ", ".join(report.nics) if report.nics else "none"
    typer.echo(
        display(
            f"collected {report.host}: {len(report.files)} files in {report.host_dir}, "
            f"RDMA NICs: {nics}, {len(report.missing)} missing"
        )
    )
    for m in report.missing:
        typer.echo(display(f"  missing {m.path}: {m.reason}"))
