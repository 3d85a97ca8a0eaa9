"""Figure 2 — incremental re-check: one host's (then one switch's) snapshot changes; time to updated findings.

The change is real and must show up: the host change enables PFC on one more priority in one NIC's
``mlnx_qos`` output (a ``QOS-PFC-MISMATCH`` on that NIC's link); the switch change drops one leaf
port's MTU to 1500 in ``config_db.json`` (a ``QOS-MTU`` on that port's link). Both pick devices the
baseline findings do not mention, and the files are restored byte for byte afterwards.

How the updated findings are obtained is a :class:`Strategy`. unifab has no incremental path yet, so
the only strategy today is :class:`FullRecheck` (``unifab check`` again, as an operator would), and
the figure reports it against the target plainly. When the product grows one (``unifab check
--since``, a watch mode, or a library session that takes changed paths), add a strategy class here
and put it first in :data:`STRATEGIES`; :func:`incremental_api_hints` already looks for the usual
signs and says in the report when one appears without a strategy to measure it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.common import BENCH_DIR, ChildRun, human_seconds, log, run_child, unifab_argv
from bench.context import Context
from bench.results import FigureResult, Row, Target

NAME = "incremental"
TITLE = "Incremental re-check: one host's, then one switch's snapshot changes; time to updated findings"

FULL_SIZE = 32768
QUICK_SIZE = 512
LATENCY_TARGET = Target("<=", 50.0, "ms")
SPEEDUP_TARGET = Target(">=", 100.0, "×")
FOUND_TARGET = Target("==", 1.0)


def size(ctx: Context) -> int:
    return QUICK_SIZE if ctx.quick else FULL_SIZE


def twin_sizes(ctx: Context) -> list[int]:
    return [size(ctx)]


# ------------------------------------------------------------------------------------------- changes


@dataclass(slots=True)
class Change:
    """One snapshot change: which files, how to recognise it in the findings, how to undo it."""

    label: str
    device: str
    files: dict[Path, bytes]  # path -> original bytes (for restoring)
    expect_check: str
    expect_endpoint: str  # "device:port" that must appear in the finding's subject

    def restore(self) -> None:
        for path, original in self.files.items():
            path.write_bytes(original)

    def seen_in(self, findings: list[dict[str, Any]]) -> bool:
        return any(
            f["check"] == self.expect_check and self.expect_endpoint in (f["subject"].get("a"), f["subject"].get("b"))
            for f in findings
        )


def _mentioned(findings: list[dict[str, Any]]) -> set[str]:
    devices = set()
    for f in findings:
        for end in ("a", "b"):
            value = f.get("subject", {}).get(end)
            if isinstance(value, str):
                devices.add(value.split(":", 1)[0])
        for end in ("a", "b"):
            ev = f.get("evidence", {}).get(end)
            if isinstance(ev, dict) and isinstance(ev.get("device"), str):
                devices.add(ev["device"])
    return devices


def change_one_host(bundle: Path, baseline: list[dict[str, Any]]) -> Change:
    """Enable PFC on one more priority in one NIC's ``mlnx_qos`` output, on a host no finding mentions."""
    busy = _mentioned(baseline)
    for host_dir in sorted((bundle / "hosts").iterdir()):
        if host_dir.name in busy:
            continue
        qos_files = sorted((host_dir / "cmd" / "mlnx_qos").glob("*.txt"))
        if not qos_files:
            continue
        path = qos_files[0]
        original = path.read_bytes()
        text = original.decode()
        match = re.search(r"^(\s*enabled)((?:\s+[01])+)", text, flags=re.M)
        if match is None:
            continue
        flags = match.group(2).split()
        flip = next(i for i, v in enumerate(flags) if v == "0")
        flags[flip] = "1"
        new_line = match.group(1) + "".join(f"{v:>4}" for v in flags)
        path.write_text(text[: match.start()] + new_line + text[match.end() :])
        return Change(
            label="one host (NIC PFC priorities)",
            device=host_dir.name,
            files={path: original},
            expect_check="QOS-PFC-MISMATCH",
            expect_endpoint=f"{host_dir.name}:{path.stem}",
        )
    raise RuntimeError("no host without findings has an mlnx_qos file to change")


def change_one_switch(bundle: Path, baseline: list[dict[str, Any]]) -> Change:
    """Drop one host-facing port's MTU to 1500 in a leaf's ``config_db.json``, on a leaf no finding mentions."""
    busy = _mentioned(baseline)
    for sw_dir in sorted((bundle / "switches").iterdir()):
        path = sw_dir / "sonic" / "config_db.json"
        if sw_dir.name in busy or not sw_dir.name.startswith("leaf") or not path.is_file():
            continue
        original = path.read_bytes()
        db = json.loads(original)
        for port_name, port in sorted(db.get("PORT", {}).items()):
            if "mtu" in port and ":" in port.get("description", ""):
                port["mtu"] = "1500"
                path.write_text(json.dumps(db, indent=2, ensure_ascii=False) + "\n")
                return Change(
                    label="one switch (leaf port MTU)",
                    device=sw_dir.name,
                    files={path: original},
                    expect_check="QOS-MTU",
                    expect_endpoint=f"{sw_dir.name}:{port_name}",
                )
    raise RuntimeError("no leaf without findings has a host-facing port to change")


CHANGES: list[Callable[[Path, list[dict[str, Any]]], Change]] = [change_one_host, change_one_switch]


# ----------------------------------------------------------------------------------------- strategies


class Strategy(Protocol):
    name: str

    def prepare(self, bundle: Path, timeout_s: float) -> None:
        """Anything done once before the change (e.g. load a session); not timed."""

    def updated_findings(self, bundle: Path, change: Change, timeout_s: float) -> tuple[float, list[dict[str, Any]]]:
        """Seconds from 'the files changed' to 'the updated findings are in hand', and those findings."""


class FullRecheck:
    """What exists today: run ``unifab check --format json`` on the whole bundle again."""

    name = "full re-check (unifab check, no incremental path exists)"

    def prepare(self, bundle: Path, timeout_s: float) -> None:
        return None

    def updated_findings(self, bundle: Path, change: Change, timeout_s: float) -> tuple[float, list[dict[str, Any]]]:
        run = run_child(
            [*unifab_argv(), "check", str(bundle), "--format", "json", "--fail-on", "never"], timeout_s=timeout_s
        )
        if not run.ok or run.returncode != 0:
            raise RuntimeError(f"unifab check failed: {run.describe_failure()}")
        findings: list[dict[str, Any]] = json.loads(run.stdout)["findings"]
        return run.wall_s, findings


STRATEGIES: list[Strategy] = [FullRecheck()]


def incremental_api_hints() -> list[str]:
    """Signs that the product grew an incremental path this figure does not measure yet."""
    hints = []
    run = run_child([*unifab_argv(), "check", "--help"], timeout_s=60)
    if b"--since" in run.stdout or b"--watch" in run.stdout:
        hints.append("`unifab check --help` now lists --since/--watch")
    for module in ("unifab.incremental", "unifab.session", "unifab.checks.incremental"):
        if importlib.util.find_spec(module.rsplit(".", 1)[0]) and _has_module(module):
            hints.append(f"module {module} exists")
    return hints


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


# ------------------------------------------------------------------------------------------------ run


def _full_check(bundle: Path, timeout: float) -> ChildRun:
    run = run_child([*unifab_argv(), "check", str(bundle), "--format", "json", "--fail-on", "never"], timeout_s=timeout)
    if not run.ok or run.returncode != 0:
        raise RuntimeError(f"baseline unifab check failed: {run.describe_failure()}")
    return run


def run(ctx: Context) -> FigureResult:
    """Per change, ``reps`` rounds of (full check of the unchanged bundle, change, updated findings, undo).

    Baseline and re-check alternate so both see the same machine; best of the rounds for each.
    """
    fig = FigureResult(NAME, TITLE)
    gpus = size(ctx)
    case = f"{gpus:,} GPUs"
    twin = ctx.twins.get(gpus, timeout_s=ctx.size_budget_s)
    timeout = ctx.size_budget_s
    reps = 1
    strategy = STRATEGIES[0]
    strategy.prepare(twin.path, timeout)
    headline_parts = []
    fulls: list[ChildRun] = []
    for make in CHANGES:
        times: list[float] = []
        seen = True
        change: Change | None = None
        for _ in range(reps):
            fulls.append(_full_check(twin.path, timeout))
            baseline: list[dict[str, Any]] = json.loads(fulls[-1].stdout)["findings"]
            change = make(twin.path, baseline)
            try:
                log(f"{case}: {change.label} changed on {change.device}; {strategy.name}")
                seconds, findings = strategy.updated_findings(twin.path, change, timeout)
            finally:
                change.restore()
            times.append(seconds)
            seen = seen and change.seen_in(findings)
        assert change is not None
        seconds = min(times)
        full_s = min(r.wall_s for r in fulls[-reps:])
        label = f"{case}, {change.label}"
        fig.add(
            Row(
                NAME,
                label,
                "time to updated findings",
                round(seconds * 1000, 1),
                "ms",
                LATENCY_TARGET,
                f"strategy: {strategy.name}; changed {', '.join(p.name for p in change.files)} on {change.device}; "
                f"best of {reps}",
            )
        )
        speedup = full_s / seconds
        fig.add(
            Row(
                NAME,
                label,
                "speed-up vs full check",
                round(speedup, 2),
                "×",
                SPEEDUP_TARGET,
                f"full check of the unchanged bundle in the same rounds: {human_seconds(full_s)}",
            )
        )
        fig.add(
            Row(
                NAME,
                label,
                "updated findings show the change (1 = yes)",
                1.0 if seen else 0.0,
                "",
                FOUND_TARGET,
                f"expects {change.expect_check} on {change.expect_endpoint}",
            )
        )
        headline_parts.append(f"{change.label}: {human_seconds(seconds)} ({speedup:.1f}× vs full)")
    full = min(fulls, key=lambda r: r.wall_s)
    fig.add(Row(NAME, case, "full check (baseline), best of all rounds", round(full.wall_s, 3), "s"))
    _phase_rows(fig, twin.path, case, timeout)
    hints = incremental_api_hints()
    if hints:
        fig.notes.append(
            "An incremental API seems to exist (" + "; ".join(hints) + ") but no Strategy measures it yet: "
            "add one in bench/fig_incremental.py."
        )
    else:
        fig.notes.append(
            "unifab has no incremental re-check (no `unifab check --since`, no library session API): the "
            "figure measures the only path that exists, a full re-check, and reports it against the target."
        )
    fig.headline = f"{case}: " + "; ".join(headline_parts) + f" — full check {human_seconds(full.wall_s)}"
    return fig


def _phase_rows(fig: FigureResult, bundle: Path, case: str, timeout: float) -> None:
    """Where an in-process check spends its time: the floor for any re-check that re-runs all checks."""
    run = run_child([sys.executable, str(BENCH_DIR / "_phases.py"), str(bundle)], timeout_s=timeout)
    if not run.ok or run.returncode != 0:
        fig.notes.append(f"phase breakdown failed: {run.describe_failure()}")
        return
    p = json.loads(run.stdout)
    for key, metric in (
        ("import_s", "in-process: import unifab"),
        ("load_bundle_s", "in-process: load_bundle (read + parse all files)"),
        ("run_checks_s", "in-process: run_checks (all checks, loaded fabric)"),
        ("run_checks_again_s", "in-process: run_checks again (re-check of a loaded fabric)"),
        ("render_json_s", "in-process: render findings JSON"),
    ):
        fig.add(Row(NAME, case, metric, round(p[key] * 1000, 1), "ms"))
    fig.notes.append(
        f"In-process breakdown at {case} ({p['links']:,} links, {p['findings']} findings): re-running every check "
        f"on an already loaded fabric takes {p['run_checks_again_s'] * 1000:.0f} ms, so an incremental path must "
        "re-check only the links touching the changed device, not the whole fabric, to reach 50 ms."
    )
