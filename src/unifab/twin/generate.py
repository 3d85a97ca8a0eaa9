"""``unifab twin generate``: build a cluster, inject scenarios, write the bundle and its truth."""

from __future__ import annotations

import errno
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from unifab import layout
from unifab.errors import UsageError
from unifab.twin.cluster import DEFAULT_SU_HOSTS, build
from unifab.twin.ib_generate import check_fabric, ib_truths, make_ib
from unifab.twin.ib_scenarios import IB_SCENARIOS
from unifab.twin.nic_variants import NIC_DRIVERS, NIC_VENDORS, apply_nic_variants
from unifab.twin.rail_template import check_gpus
from unifab.twin.scenario_needs import Kinds
from unifab.twin.scenarios import NEEDS, SCENARIOS, Picker
from unifab.twin.version_files import write_version_files
from unifab.twin.version_skew import apply_version_skew
from unifab.twin.writer import write_bundle

__all__ = ["SWITCH_OSES", "TwinResult", "generate"]


@dataclass(frozen=True, slots=True)
class TwinResult:
    root: Path
    hosts: int
    switches: int
    truth: dict[str, Any]


SWITCH_OSES = ("sonic", "eos", "nvue", "mixed")


def generate(
    out: Path,
    gpus: int,
    seed: int = 0,
    scenarios: tuple[str, ...] = (),
    su_hosts: int = DEFAULT_SU_HOSTS,
    switch_os: str = "sonic",
    *,
    nic_vendor: str = "mlx5",
    nic_driver: str = "ofed",
    progress: Callable[[int], None] | None = None,
    faults: int = 0,
    fabric: str = "roce",
    version_skew: int = 0,
    jobs: int | None = None,
    duration_s: float | None = None,
) -> TwinResult:
    """``switch_os``: every switch runs ``sonic``, ``eos`` or ``nvue``; ``mixed`` cycles them by index.

    ``nic_vendor`` / ``nic_driver``: the hosts' NICs and mlx5 driver stack (see :mod:`unifab.twin.nic_variants`).
    ``progress(n)`` is called as devices are written (:func:`~unifab.twin.cluster.device_count` in all).
    ``faults``: that many faults (and noise) as telemetry timelines, :func:`unifab.twin.faults.write_faults`.
    ``fabric``: ``roce`` (default), ``ib`` (an InfiniBand backend) or ``mixed`` (RoCE backend + IB storage), see
    :mod:`unifab.twin.ib_cluster`; the ``ib-*`` scenarios need ``ib`` or ``mixed``, the others a RoCE backend.
    ``version_skew``: that many devices on an older NIC firmware, driver or switch OS than the rest of their group
    (:func:`unifab.twin.version_skew.apply_version_skew`; FLEET-* in truth.json).
    ``jobs``: how many Slurm jobs share the hosts (default one per 8 hosts, :func:`unifab.twin.cluster.build`).
    ``duration_s``: the span of the ``faults`` timelines (only with ``faults``; default an hour).
    """
    check_gpus(gpus)
    if switch_os not in SWITCH_OSES:
        raise UsageError(f"unknown switch OS {switch_os!r}; expected one of {', '.join(SWITCH_OSES)}")
    if nic_vendor not in NIC_VENDORS:
        raise UsageError(f"unknown NIC vendor {nic_vendor!r}; expected one of {', '.join(NIC_VENDORS)}")
    if nic_driver not in NIC_DRIVERS:
        raise UsageError(f"unknown NIC driver {nic_driver!r}; expected one of {', '.join(NIC_DRIVERS)}")
    check_fabric(fabric, scenarios, SCENARIOS)
    if duration_s is not None:
        if not faults:
            raise UsageError("--duration: only with --faults (it is the span of the faults' timelines)")
        from unifab.twin.faults import check_duration

        check_duration(duration_s)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"output path {out} exists and is not an empty directory")
    cluster = build(gpus, su_hosts, switch_os, jobs)
    apply_nic_variants(cluster, nic_vendor, nic_driver)
    make_ib(cluster, fabric)
    rng = random.Random(seed)
    picker = Picker(cluster, rng)
    # catalog order, not argument order: switch-wide scenarios reserve their leaves first
    kinds = Kinds.of(cluster)
    misconfigurations = []
    for name in (n for n in SCENARIOS if n in scenarios):
        needs = NEEDS.get(name)
        if needs is not None and not needs.met(kinds):  # before it runs: a skip draws nothing from the RNG
            picker.skipped.append({"scenario": name, "why": needs.why})
            continue
        misconfigurations += [{"scenario": name, **truth} for truth in SCENARIOS[name](cluster, picker)]
    misconfigurations += ib_truths(cluster, scenarios, seed, picker.skipped)
    if cluster.uncollected:  # a switch link with an end that was not collected cannot be judged per port
        for m in misconfigurations:
            if m.get("subject", {}).get("kind") == "switch":
                m["entities"] = [e for e in m["entities"] if not _touches(e, cluster.uncollected)]
    truth = {
        "generator": {
            "gpus": gpus,
            "seed": seed,
            "scenarios": [name for name in (*SCENARIOS, *IB_SCENARIOS) if name in scenarios],
            "su_hosts": su_hosts,
            "switch_os": switch_os,
            "nic_vendor": nic_vendor,
            "nic_driver": nic_driver,
            **({"fabric": fabric} if fabric != "roce" else {}),
            **({"jobs": jobs} if jobs is not None else {}),
            **({"duration_s": duration_s} if duration_s is not None else {}),
        },
        "misconfigurations": misconfigurations,
        "skipped": picker.skipped,
        "faults": [],
    }
    # Write beside the target and rename at the end, so an interrupted run leaves no half bundle.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_bundle(cluster, staging, progress)
        (staging / layout.TRUTH).write_bytes(orjson.dumps(truth, option=orjson.OPT_INDENT_2) + b"\n")
        write_version_files(staging)
        if version_skew:
            apply_version_skew(staging, seed, version_skew)  # appends its truth to truth.json
            truth = orjson.loads((staging / layout.TRUTH).read_bytes())
        if faults:
            from unifab.twin.faults import write_faults

            write_faults(staging, faults, seed, duration_s=duration_s)  # adds "faults" and "telemetry" to truth.json
            truth = orjson.loads((staging / layout.TRUTH).read_bytes())
        _move_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    ib_switches = len(cluster.ib.switches) if cluster.ib is not None else 0
    return TwinResult(out, len(cluster.hosts), len(cluster.switches) + ib_switches, truth)


def _touches(entity: str, devices: set[str]) -> bool:
    """Whether the link id ``entity`` (``link:<node>:<port>--<node>:<port>``) has an end on one of ``devices``."""
    if not entity.startswith("link:"):
        return False
    return any(end.rsplit(":", 1)[0] in devices for end in entity.removeprefix("link:").split("--"))


def _move_into_place(staging: Path, out: Path) -> None:
    """``staging`` becomes ``out`` in one rename. An empty directory at ``out`` is replaced by that same rename
    (POSIX renames a directory over an empty one atomically), so there is no moment between removing it and
    renaming; if something was written into ``out`` meanwhile, the rename fails and nothing of it is touched."""
    try:
        staging.rename(out)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise UsageError(
                f"output path {out} was written to while the twin was generated; it is left as it is"
            ) from None
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
