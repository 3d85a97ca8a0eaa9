"""``unifab agent run``: the continuous host agent (periodic collect, durable push to ``unifab serve``).

Only typer is imported here; the agent (and httpx) load when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``agent run`` to the agent group."""
    app.command("run")(run)


def run(
    controller: Annotated[
        str | None, typer.Option("--controller", metavar="URL", help="The unifab serve to push to (http[s]://…).")
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="File whose first line is the token (re-read for every push).")
    ] = None,
    interval: Annotated[float | None, typer.Option("--interval", help="Seconds between collects (default 60).")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="YAML file with the settings; flags override its keys.")
    ] = None,
    spool_dir: Annotated[
        Path | None,
        typer.Option("--spool-dir", help="Where snapshots wait for the controller (default $STATE_DIRECTORY/spool)."),
    ] = None,
    spool_max_bytes: Annotated[
        str | None, typer.Option("--spool-max-bytes", help="Spool bound in bytes, e.g. 256M (default 256M).")
    ] = None,
    spool_max_snapshots: Annotated[
        int | None, typer.Option("--spool-max-snapshots", help="Spool bound in snapshots (default 1000).")
    ] = None,
    root: Annotated[
        Path | None, typer.Option("--root", help="Read /sys and /etc under this directory instead of /.")
    ] = None,
    hostname: Annotated[
        str | None, typer.Option("--hostname", help="This host's name (default: its short name).")
    ] = None,
    command_timeout: Annotated[
        float | None, typer.Option("--command-timeout", help="Seconds each collect command may run (default 30).")
    ] = None,
    sudo: Annotated[
        bool | None,
        typer.Option(
            "--sudo/--no-sudo",
            help="Run the collect's root-only reads through sudo -n (allow-list: unifab agent sudoers).",
        ),
    ] = None,
    once: Annotated[
        bool, typer.Option("--once", help="One cycle, then exit: 0 delivered or unchanged, 1 left in the spool.")
    ] = False,
) -> None:
    """Collect this host every interval and push what changed to a unifab serve; spool it while the
    controller cannot take it, replay it in order, heartbeat every interval.

    Logs go to stderr, one logfmt line per event. Runs as an unprivileged user: it needs only the spool
    directory, the token file and what the collect can read. SIGTERM or SIGINT stops it cleanly (exit 0).

    Exit codes: 0 stopped by a signal, or with --once everything delivered; 1 with --once, something left in
    the spool; 2 bad settings (one line naming the key) or an unusable spool directory.

    Example: unifab agent run --controller http://unifab.example:8080 --token-file /etc/unifab/agent.token
    """
    import signal
    import threading

    from unifab.agent.config import build_config, read_config_file
    from unifab.agent.run import Agent
    from unifab.agent.spool import SpoolError
    from unifab.cli.common import fail
    from unifab.errors import UsageError

    flags = {
        "controller": controller,
        "token_file": token_file,
        "interval": interval,
        "spool_dir": spool_dir,
        "spool_max_bytes": spool_max_bytes,
        "spool_max_snapshots": spool_max_snapshots,
        "root": root,
        "hostname": hostname,
        "command_timeout": command_timeout,
        "sudo": sudo,
    }
    try:
        settings = build_config(read_config_file(config) if config is not None else {}, flags)
    except UsageError as exc:
        fail(str(exc))
    if not settings.root.is_dir():
        fail(f"root: {settings.root} is not a directory")
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    agent = Agent(settings, stop=stop)
    try:
        code = agent.run(once=once)
    except SpoolError as exc:
        fail(str(exc))
    raise typer.Exit(code)
