"""``unifab twin ...``: synthetic clusters in real device formats."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from unifab.cli.common import QuietOption, console, fail, plural, progress

__all__ = ["twin_app"]

twin_app = typer.Typer(
    help="Synthetic clusters in real device formats.\n\nExample: unifab twin generate --gpus 256 --out b1",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@twin_app.command("generate")
def twin_generate(
    out: Annotated[Path, typer.Option(help="New (or empty) directory for the bundle.")],
    gpus: Annotated[int, typer.Option(help="Cluster size in GPUs: a multiple of 8 (8 per host).")] = 256,
    seed: Annotated[int, typer.Option(help="Random seed: same seed, same bundle.")] = 0,
    scenario: Annotated[
        list[str] | None,
        typer.Option(help="Misconfiguration to inject (repeatable); see `unifab twin scenarios`."),
    ] = None,
    su_hosts: Annotated[int, typer.Option(min=1, help="Hosts per scalable unit (one leaf per rail per SU).")] = 32,
    switch_os: Annotated[str, typer.Option(help="Switch OS: sonic, eos, nvue, or mixed (cycled by index).")] = "sonic",
    nic_vendor: Annotated[
        str, typer.Option(help="Host NICs: mlx5 (ConnectX-7), bnxt (Broadcom Thor2), or mixed (by host).")
    ] = "mlx5",
    nic_driver: Annotated[
        str, typer.Option(help="mlx5 driver stack: ofed (MLNX_OFED), upstream (in-tree), or mixed (by host).")
    ] = "ofed",
    faults: Annotated[
        int, typer.Option(min=0, help="Faults to inject as telemetry/*.om timelines, with noise (unifab health).")
    ] = 0,
    fabric: Annotated[
        str,
        typer.Option(help="Network: roce, ib (an InfiniBand backend), or mixed (RoCE backend + IB storage)."),
    ] = "roce",
    version_skew: Annotated[
        int,
        typer.Option(
            "--version-skew",
            min=0,
            help=(
                "Put that many devices on an older NIC firmware, driver, switch OS or (in the jobs' NCCL logs)"
                " NCCL release than their group (FLEET-*)."
            ),
        ),
    ] = 0,
    jobs: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Slurm jobs sharing the hosts, in contiguous blocks (default: one job per 8 hosts).",
        ),
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option(
            metavar="<span>",
            help="Span of the --faults timelines: 90m, 2h, 3600s or seconds, 10m to 24h (default 1h; an"
            " InfiniBand twin's perfquery rounds: 30m).",
        ),
    ] = None,
    telemetry: Annotated[
        str,
        typer.Option(
            help="How --faults timelines are written: openmetrics (telemetry/*.om), rounds (successive counter"
            " snapshots in telemetry/rounds/<unix time>/), or both."
        ),
    ] = "openmetrics",
    quiet: QuietOption = False,
) -> None:
    """Write a synthetic rail-optimized RoCE cluster as a bundle, with truth.json.

    Example: unifab twin generate --gpus 1024 --out ./b1 --seed 7 --scenario pfc-mismatch --scenario ecn-off

    Example: unifab twin generate --gpus 512 --out ./b2 --switch-os mixed

    Example: unifab twin generate --gpus 256 --out ./b3 --nic-vendor mixed --nic-driver mixed

    Example: unifab twin generate --gpus 128 --out ./b4 --faults 3   (then: unifab health ./b4)

    Example: unifab twin generate --gpus 256 --out ./b5 --fabric ib --scenario ib-second-master

    Example: unifab twin generate --gpus 256 --out ./b6 --version-skew 3   (then: unifab fleet versions ./b6)

    Example: unifab twin generate --gpus 128 --out ./b7 --faults 3 --switch-os eos --telemetry rounds

    Example: unifab twin generate --gpus 512 --out ./b8 --faults 5 --jobs 12 --duration 2h   (then: unifab jobs ./b8)
    """
    from unifab.errors import UnifabError
    from unifab.twin.cluster import device_count
    from unifab.twin.generate import generate
    from unifab.twin.rail_template import check_gpus

    if telemetry not in ("openmetrics", "rounds", "both"):
        fail(f"--telemetry {telemetry!r}: expected openmetrics, rounds or both")
    if telemetry != "openmetrics" and not faults:
        fail(f"--telemetry {telemetry}: only with --faults (there is no telemetry to write)")
    duration_s = None if duration is None else _span_s(duration)
    telemetry_dir = out / "telemetry"
    before = set(telemetry_dir.glob("*.om")) if telemetry_dir.is_dir() else set()
    try:
        check_gpus(gpus)
        with progress(f"writing {out}", device_count(gpus, su_hosts), quiet=quiet) as advance:
            result = generate(
                out,
                gpus,
                seed,
                tuple(scenario or ()),
                su_hosts,
                switch_os,
                nic_vendor=nic_vendor,
                nic_driver=nic_driver,
                progress=advance,
                faults=faults,
                fabric=fabric,
                version_skew=version_skew,
                jobs=jobs,
                duration_s=duration_s,
            )
        if telemetry != "openmetrics":
            from unifab.twin.telemetry_rounds import write_rounds

            write_rounds(out)
            if telemetry == "rounds":  # only the .om files this run wrote
                for path in set(telemetry_dir.glob("*.om")) - before:
                    path.unlink()
    except UnifabError as exc:
        fail(str(exc))
    skipped = result.truth.get("skipped", [])
    injected = len(result.truth["misconfigurations"])
    console().print(
        f"wrote {result.root}: {plural(result.hosts, 'host')}, {plural(result.switches, 'switch', 'switches')}, "
        f"{plural(injected, 'injected misconfiguration')}"
        + (f", {_fault_places(result.truth['faults'], telemetry)}" if faults else "")
        + "".join(f"\nskipped {s['scenario']}: {s['why']}" for s in skipped)
    )


_SPAN_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _span_s(text: str) -> float:
    """``90m``, ``2h``, ``3600s`` or ``3600`` (seconds) as seconds; anything else is a usage error (exit 2)."""
    value = text.strip().lower()
    unit = _SPAN_UNITS.get(value[-1:]) if value else None
    number = value[:-1] if unit is not None else value
    try:
        seconds = float(number) * (unit or 1.0)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds):
        fail(f"--duration {text!r}: expected a span such as 90m, 2h, 3600s or 3600 (seconds)")
    return seconds  # its range is judged by generate()


def _fault_places(faults: list[dict[str, Any]], telemetry: str) -> str:
    """Where the faults' counters are: an InfiniBand fault's in perfquery rounds (``ib/perfquery/``), the others'
    in ``telemetry/`` (``telemetry/rounds/`` with ``--telemetry rounds``)."""
    from unifab.twin.ib_faults import IB_FAULT_KINDS

    ib = sum(f["kind"] in IB_FAULT_KINDS for f in faults)
    places = [(len(faults) - ib, "telemetry/" + ("rounds/" if telemetry == "rounds" else "")), (ib, "ib/perfquery/")]
    found = [(n, where) for n, where in places if n] or places[:1]
    if len(found) == 1:
        return f"{plural(found[0][0], 'fault')} in {found[0][1]}"
    return f"{plural(len(faults), 'fault')} ({', '.join(f'{n} in {where}' for n, where in found)})"


@twin_app.command("scenarios")
def twin_scenarios() -> None:
    """List the misconfigurations the twin can inject and the check that must find each.

    Example: unifab twin scenarios
    """
    from rich.table import Table

    from unifab.twin.ib_generate import scenario_fabrics
    from unifab.twin.ib_scenarios import IB_SCENARIOS
    from unifab.twin.scenarios import SCENARIOS

    table = Table(title="twin scenarios")
    table.add_column("scenario", style="bold")
    table.add_column("what it breaks")
    table.add_column("--fabric")
    for name, fn in {**SCENARIOS, **IB_SCENARIOS}.items():
        table.add_row(name, (fn.__doc__ or "").strip(), ", ".join(scenario_fabrics(name)))
    console().print(table)
