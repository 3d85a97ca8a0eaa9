"""``unifab agent ...``: the host agent's commands (wired into the main CLI as the ``agent`` group).

Exit codes as in :mod:`unifab.cli.common`: 0 done (what the host lacks is listed, not an error), 2 unusable
arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from unifab.cli import agent_apply, agent_gate, agent_run
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
    lldp_socket: Annotated[
        Path | None,
        typer.Option("--lldp-socket", help="lldpd control socket to ask (lldpcli -u PATH) instead of the default."),
    ] = None,
    sudo: Annotated[
        bool,
        typer.Option(
            "--sudo", help="Run the few commands that need root through 'sudo -n' (see 'unifab agent sudoers')."
        ),
    ] = False,
) -> None:
    """Copy the /sys and configfs files unifab reads and run the NIC, GPU and PCIe commands, in the bundle layout.

    A missing tool, a failing command or an unreadable file is listed (and recorded in collect.json, which
    `unifab check` reports as INPUT-MISSING); it does not fail the collection. With --sudo, as a user other than
    root, exactly the commands of `unifab agent sudoers` run through `sudo -n --` (never a prompt); one that
    sudo refuses is listed as missing.

    Example: unifab agent collect --out ./bundle --hostname gpu017
    """
    from unifab.collect.host_live import collect_host
    from unifab.errors import UsageError

    try:
        report = collect_host(out, root=root, hostname=hostname, timeout=timeout, lldp_socket=lldp_socket, sudo=sudo)
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


@agent_app.command("sudoers")
def sudoers(
    user: Annotated[str, typer.Option("--user", help="The user the agent runs as.")] = "unifab",
    lldp_socket: Annotated[
        Path | None,
        typer.Option("--lldp-socket", help="Allow lldpcli on this control socket (as 'agent collect --lldp-socket')."),
    ] = None,
) -> None:
    """Print the sudoers snippet that lets USER run, as root, exactly the read commands 'agent collect --sudo' needs.

    Absolute tool paths (/usr/bin and /usr/sbin) and exact arguments; an interface name is the only variable part,
    and a command with more arguments than the agent runs is denied. deploy/sudoers.d/unifab-agent is its default
    output.

    Example: unifab agent sudoers --user unifab > f && visudo -cf f && install -m 0440 f /etc/sudoers.d/unifab-agent
    """
    from unifab.collect.host_live import sudoers as allow_list
    from unifab.errors import UsageError

    try:
        text = allow_list(user, lldp_socket=None if lldp_socket is None else lldp_socket.absolute())
    except UsageError as exc:
        fail(str(exc))
    typer.echo(text, nl=False)


agent_run.register(agent_app)
agent_apply.register(agent_app)
agent_gate.register(agent_app)
