"""``unifab plan-change``: ordered change waves that keep running jobs and redundancy up; a file to review.

Exit codes: 0 every selected device is in a wave, 1 some are blocked (the plan says by what), 2 usage or
bundle error. unifab never executes the plan.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from unifab.cli.common import EXIT_CLEAN, EXIT_FINDINGS, QuietOption, console, fail, load_fabric

__all__ = ["plan_change_command"]


Step = dict[str, Any]

# The file `unifab render` writes for a switch, by OS, the command that applies it on the switch, and what follows.
_SWITCH_APPLY = (
    ("patch.json", ["sudo", "config", "apply-patch", "patch.json"], "then `sudo config save -y`"),  # SONiC: RFC 6902
    ("eos.cfg", ["copy", "flash:eos.cfg", "running-config"], "then `write memory`"),  # EOS: a config section
    ("nv-set.txt", ["sh", "nv-set.txt"], "it ends with `nv config apply`; then `nv config save`"),  # NVUE: nv set
)


def _step(argv: list[str], on: str | None = None, note: str | None = None, **extra: Any) -> Step:
    """One command of the plan: ``argv`` to run ``on`` a device (None: where the bundle is), and its shell form.

    Every device name in ``argv`` passed :func:`unifab.render.host_script.host_name` in the planner; the shell
    form quotes every word (:func:`shlex.join`), paths included.
    """
    step: Step = {"on": on, "argv": argv, "command": shlex.join(argv)}
    if note is not None:
        step["note"] = note
    return {**step, **extra}


def _scheduler_steps(scheduler: str, hosts: list[str], wave: int) -> tuple[list[Step], list[Step]]:
    """(drain before, resume after) for the hosts, in the scheduler's own commands (unifab.render.scheduler)."""
    from unifab.render.scheduler import drain_argvs, resume_argvs

    drain = drain_argvs(scheduler, hosts, f"unifab change wave {wave}")
    return [_step(a) for a in drain], [_step(a) for a in resume_argvs(scheduler, hosts)]


@dataclass(frozen=True, slots=True)
class _Paths:
    bundle: Path
    rendered: Path
    intent: Path
    inventory: Path

    def render(self) -> list[str]:
        return ["unifab", "render", str(self.intent), "--bundle", str(self.bundle), "--out", str(self.rendered)]


def _change(device: str, is_host: bool, paths: _Paths) -> Step:
    """The change of one device from `unifab render`'s output, or the render to run first when it is missing."""
    kind = "hosts" if is_host else "switches"
    folder = paths.rendered / kind / device
    if is_host:
        nic_plan = folder / "nic-plan.json"
        if nic_plan.is_file():
            argv = ["unifab", "agent", "apply", str(nic_plan), "--drained"]
            return _step(argv, device, f"copy {nic_plan} to {device}", device=device, files=[str(nic_plan)])
    elif folder.is_dir():
        diff = folder / "changes.diff"
        extra = {"device": device, "diff": str(diff) if diff.is_file() else None}
        for name, argv, then in _SWITCH_APPLY:
            if (folder / name).is_file():
                note = f"copy {folder / name} to {device}, run this there, {then}"
                return _step(argv, device, note, files=[str(folder / name)], **extra)
        files = sorted(str(f) for f in folder.iterdir() if f.is_file() and f.name != "changes.diff")
        note = f"{folder} holds no configuration unifab applies ({', '.join(files) or 'empty'}): render it again"
        return _step(paths.render(), None, note, files=files, missing=True, **extra)
    missing = folder / "nic-plan.json" if is_host else folder
    note = f"{missing} does not exist: render it first, then plan again"
    return _step(paths.render(), None, note, device=device, missing=True)


def _recollect(devices: list[str], hosts: set[str], paths: _Paths) -> list[Step]:
    """Read the wave's devices again into the bundle: the switches from the inventory, each host by its agent."""
    steps = []
    if any(d not in hosts for d in devices):
        argv = ["unifab", "collect", "--inventory", str(paths.inventory), "--out", str(paths.bundle)]
        steps.append(_step(argv, None, "re-reads every switch of the inventory into the bundle"))
    for d in devices:
        if d in hosts:
            argv = ["unifab", "agent", "collect", "--out", str(paths.bundle), "--hostname", d]
            steps.append(_step(argv, d, f"the bundle as {d} sees it, or copy hosts/{d}/ back into it"))
    return steps


def _document(plan: Any, fabric: Any, scheduler: str, paths: _Paths, options: dict[str, Any]) -> dict[str, Any]:
    from unifab.change_plan import PLAN_FORMAT

    waves = []
    check = ["unifab", "check", str(paths.bundle)]
    gate_format = "slurm" if scheduler == "slurm" else "text"
    for wave in plan.waves:
        drain, resume = _scheduler_steps(scheduler, list(wave.drain_hosts), wave.index)
        gate = [_step(["unifab", "agent", "gate", "--format", gate_format], h) for h in wave.drain_hosts]
        waves.append(
            {
                "wave": wave.index,
                "devices": list(wave.devices),
                "drained_jobs": list(wave.drained_jobs),
                "drain_hosts": list(wave.drain_hosts),
                "before": [*drain, _step(check, None, "the fabric is clean before the wave")],
                "change": [_change(d, d in fabric.hosts, paths) for d in wave.devices],
                "after": [
                    *_recollect(list(wave.devices), set(fabric.hosts), paths),
                    _step(check, None, "the fabric is clean after the wave"),
                    *gate,
                    *resume,
                ],
            }
        )
    blocked = [{"device": b.device, "reason": b.reason} for b in plan.blocked]
    return {"format": PLAN_FORMAT, "bundle": str(paths.bundle), **options, "waves": waves, "blocked": blocked}


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
        Path, typer.Option("--rendered", help="Where `unifab render --out` wrote the devices' configuration.")
    ] = Path("rendered"),
    intent: Annotated[
        Path | None,
        typer.Option("--intent", help="The intent to render from when a device is not rendered (BUNDLE/fabric.yaml)."),
    ] = None,
    inventory: Annotated[
        Path, typer.Option("--inventory", help="The inventory `unifab collect` re-reads the switches from.")
    ] = Path("inventory.yaml"),
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the plan as JSON to this file ('-': stdout).")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Plan waves of upgrades or reconfiguration that keep running jobs' hosts and rail paths up.

    No wave takes down a host a running job uses or a switch on its path (unless the job is in --allow-drain:
    its hosts are drained first), nor every member of a redundancy group (a leaf's uplinks, a dual-homed
    host's two ToRs, a spine's super-spines). Each wave lists, as commands, the drain and resume, the change
    from --rendered (or the `unifab render` to run first), the re-collect, and the checks before and after.
    unifab never runs the plan.

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
    paths = _Paths(bundle, rendered, intent or bundle / "fabric.yaml", inventory)
    doc = _document(plan, fabric, scheduler, paths, options)
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
    for column in ("wave", "devices", "drained jobs", "drained hosts"):
        table.add_column(column)
    for wave in doc["waves"]:
        drains = ", ".join(wave["drained_jobs"]) or "-"
        hosts = str(len(wave["drain_hosts"])) if wave["drain_hosts"] else "-"
        table.add_row(str(wave["wave"]), "\n".join(cell(d) for d in wave["devices"]), cell(drains), hosts)
    out = console()
    out.print(table)
    for wave in doc["waves"]:  # the steps as plain lines: never wrapped, each command whole
        out.print(cell(f"wave {wave['wave']}: {', '.join(wave['devices'])}"))
        for part in ("before", "change", "after"):
            out.print(f"  {part}:")
            for step in wave[part]:
                where = f"on {step['on']}: " if step["on"] else ""
                note = f"  # {step['note']}" if "note" in step else ""
                out.print(cell(f"    {where}{step['command']}{note}"))
    for b in doc["blocked"]:
        out.print(cell(f"blocked {b['device']}: {b['reason']}"))
