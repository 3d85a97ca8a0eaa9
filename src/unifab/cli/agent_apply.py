"""``unifab agent apply``: apply this host's rendered NIC plan with record, verify and automatic rollback.

Exit codes (this command's own): 0 applied and verified (or a dry run), 1 a step or the verification failed
and everything was rolled back (the message names the step and the reason), 2 an unusable plan or arguments,
4 refused: a step would toggle a link and the node is not drained (3 is an internal error, as everywhere).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``agent apply`` to the agent group."""
    app.command("apply")(apply)


def apply(
    plan: Annotated[Path, typer.Argument(help="nic-plan.json (from `unifab render`), or a render output directory.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and show what would change; change nothing.")
    ] = False,
    drained: Annotated[
        bool, typer.Option("--drained", help="The node is drained: steps that toggle a link may run.")
    ] = False,
    allow_link_flap: Annotated[
        bool, typer.Option("--allow-link-flap", help="Run steps that toggle a link even on a node in service.")
    ] = False,
    root: Annotated[
        Path, typer.Option("--root", help="Write /sys files under this directory instead of / (tests, chroots).")
    ] = Path("/"),
    hostname: Annotated[
        str | None, typer.Option("--hostname", help="This host's name in the plan (default: the short host name).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each command may run.")] = 30.0,
    log: Annotated[
        Path | None, typer.Option("--log", help="Write the apply log here (default: beside the plan).")
    ] = None,
) -> None:
    """Apply the rendered NIC configuration of this host: record, apply step by step, verify, roll back on failure.

    Every step is read first and changed only when it differs. A step that toggles a link (PFC, receive
    buffers, cable length, MTU) runs only when the node is drained (--drained, or Slurm reports it drained)
    or with --allow-link-flap. Exit codes: 0 applied and verified (or dry run), 1 rolled back, 2 unusable plan
    or arguments, 4 refused (link flap on a node in service).

    Example: unifab agent apply rendered/hosts/gpu017/nic-plan.json --dry-run
    """
    import socket

    from unifab.agent import apply as ap
    from unifab.agent.plan_exec import HostIo
    from unifab.cli.common import fail, printable

    name = hostname or socket.gethostname().split(".")[0]
    path = plan / "hosts" / name / "nic-plan.json" if plan.is_dir() else plan
    if timeout <= 0:
        fail("--timeout must be more than 0 seconds")
    if not root.is_dir():
        fail(f"--root {root}: not a directory")
    try:
        loaded = ap.load_plan(path)
    except ap.PlanError as exc:
        fail(str(exc))
    if loaded.host != name:
        fail(f"plan {path}: renders host {loaded.host!r}, this is {name!r} (--hostname names this host)")
    outcome = ap.apply_plan(
        loaded,
        io=HostIo(root),
        dry_run=dry_run,
        drained=drained or (lambda: ap.slurm_drained(loaded.host)),
        allow_link_flap=allow_link_flap,
        timeout=timeout,
    )
    for line in outcome.lines:
        typer.echo(printable(line))
    if not dry_run:
        target = log or ap.log_path(path)
        try:
            ap.write_log(target, outcome.log)
        except OSError as exc:
            typer.echo(printable(f"unifab: error: apply log {target}: {exc.strerror or exc}"), err=True)
        else:
            typer.echo(printable(f"unifab-apply: log {target}"))
    if outcome.code == ap.EXIT_APPLIED:
        typer.echo(printable(f"unifab-apply: {outcome.message}"))
    else:
        typer.echo(printable(f"unifab-apply: {outcome.message}"), err=True)
    raise typer.Exit(outcome.code)
