"""``unifab plan-change``: ordered change waves that keep running jobs and redundancy up; a file to review.

Exit codes: 0 every selected device is in a wave, 1 some are blocked (the plan says by what), 2 usage or
bundle error. unifab never executes the plan.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from unifab.cli.common import EXIT_CLEAN, EXIT_FINDINGS, QuietOption, console, fail, load_fabric

__all__ = ["plan_change_command"]


def _scheduler_commands(scheduler: str, hosts: list[str], wave: int) -> tuple[list[str], list[str]]:
    """(drain before, resume after) for the hosts, in the scheduler's own commands."""
    from unifab.report.topology_export import hostlist

    if not hosts:
        return [], []
    if scheduler == "slurm":
        nodes = shlex.quote(hostlist(hosts))
        reason = shlex.quote(f"unifab change wave {wave}")
        return (
            [f"scontrol update NodeName={nodes} State=DRAIN Reason={reason}"],
            [f"scontrol update NodeName={nodes} State=RESUME"],
        )
    before = [f"kubectl cordon {h}" for h in hosts]
    before += [f"kubectl drain {h} --ignore-daemonsets --delete-emptydir-data" for h in hosts]
    return before, [f"kubectl uncordon {h}" for h in hosts]


def _document(
    bundle: Path, plan: Any, fabric: Any, scheduler: str, rendered: str, options: dict[str, Any]
) -> dict[str, Any]:
    from unifab.change_plan import PLAN_FORMAT

    waves = []
    q = shlex.quote(str(bundle))
    for wave in plan.waves:
        drain, resume = _scheduler_commands(scheduler, list(wave.drain_hosts), wave.index)
        change = []
        for device in wave.devices:
            if device in fabric.hosts:
                change.append(f"on {device}: unifab agent apply {rendered}/hosts/{device}/nic-plan.json")
            else:
                change.append(f"{device}: apply {rendered}/switches/{device}/ (or the vendor's upgrade procedure)")
        gate = [f"on {h}: unifab agent gate --format slurm" for h in wave.drain_hosts]
        waves.append(
            {
                "wave": wave.index,
                "devices": list(wave.devices),
                "drained_jobs": list(wave.drained_jobs),
                "drain_hosts": list(wave.drain_hosts),
                "before": [*drain, f"unifab check {q}  # the fabric is clean before the wave"],
                "change": change,
                "after": [
                    f"re-collect {', '.join(wave.devices)} into {bundle}, then: unifab check {q}",
                    *gate,
                    *resume,
                ],
            }
        )
    blocked = [{"device": b.device, "reason": b.reason} for b in plan.blocked]
    return {"format": PLAN_FORMAT, "bundle": str(bundle), **options, "waves": waves, "blocked": blocked}


def plan_change_command(
    bundle: Annotated[Path, typer.Argument(help="Bundle with the devices' LLDP (or plan) and scheduler/ data.")],
    devices: Annotated[
        list[str],
        typer.Option(
            "--devices", help="Devices to change: [host:|switch:]GLOB, comma-separated or repeated (leaf-su1-*)."
        ),
    ],
    max_parallel: Annotated[int, typer.Option("--max-parallel", help="Devices changed at once, at most.")] = 1,
    allow_drain: Annotated[
        list[str] | None,
        typer.Option("--allow-drain", help="Jobs that may be drained (ids, comma-separated, or 'all')."),
    ] = None,
    scheduler: Annotated[str, typer.Option("--scheduler", help="Drain commands for: slurm or kubernetes.")] = "slurm",
    rendered: Annotated[
        str, typer.Option("--rendered", help="Where `unifab render --out` wrote the devices' configuration.")
    ] = "rendered",
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the plan as JSON to this file ('-': stdout).")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Plan waves of upgrades or reconfiguration that keep running jobs' hosts and rail paths up.

    No wave takes down a host a running job uses or a switch on its path (unless the job is in --allow-drain:
    its hosts are drained first), nor every member of a redundancy group (a leaf's uplinks, a dual-homed
    host's two ToRs). Each wave lists the drain and resume commands, the change, and the checks before and
    after. unifab never runs the plan.

    Example: unifab plan-change ./bundle --devices 'leaf-su1-*' --max-parallel 2 --allow-drain 1001 --out plan.json
    """
    from unifab.change_plan import plan_change, select
    from unifab.errors import UsageError
    from unifab.jsonify import dumps

    if scheduler not in ("slurm", "kubernetes"):
        fail(f"--scheduler {scheduler!r}: expected slurm or kubernetes")
    fabric = load_fabric(bundle, quiet=quiet)
    try:
        chosen = select(fabric, devices)
        plan = plan_change(fabric, chosen, max_parallel=max_parallel, allow_drain=allow_drain or ())
    except UsageError as exc:
        fail(str(exc))
    options = {
        "devices": chosen,
        "max_parallel": max_parallel,
        "allow_drain": allow_drain or [],
        "scheduler": scheduler,
    }
    doc = _document(bundle, plan, fabric, scheduler, rendered, options)
    if out is not None:
        text = dumps(doc) + "\n"
        if str(out) == "-":
            sys.stdout.write(text)
        else:
            try:
                out.write_text(text, encoding="utf-8")
            except OSError as exc:
                fail(f"{out}: cannot write: {exc.strerror or exc}")
    if out is None or str(out) != "-":
        _print(doc)
    raise typer.Exit(EXIT_FINDINGS if plan.blocked else EXIT_CLEAN)


def _print(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from unifab.report.text import cell

    table = Table(title=f"{len(doc['waves'])} waves", show_lines=True)
    for column in ("wave", "devices", "drains", "before / after"):
        table.add_column(column)
    for wave in doc["waves"]:
        drains = ", ".join(wave["drained_jobs"]) or "-"
        steps = "\n".join(cell(step) for step in [*wave["before"], "…", *wave["after"]])
        table.add_row(str(wave["wave"]), "\n".join(cell(d) for d in wave["devices"]), cell(drains), steps)
    out = console()
    out.print(table)
    for b in doc["blocked"]:
        out.print(cell(f"blocked {b['device']}: {b['reason']}"))
