"""Figure 2 — incremental re-check: one host's (then one switch's) snapshot changes; time to updated findings.

The change is real and must show up: the host change enables PFC on one more priority in one NIC's
``mlnx_qos`` output (a ``QOS-PFC-MISMATCH`` on that NIC's link); the switch change drops one leaf
port's MTU to 1500 in ``config_db.json`` (a ``QOS-MTU`` on that port's link). Both pick devices the
baseline findings do not mention, and the files are restored byte for byte afterwards.

How the updated findings are obtained is a :class:`Strategy`. The measured one is
:class:`SessionUpdate`: the product's incremental session (:mod:`unifab.session.incremental`, the engine
behind ``unifab check --watch``) loads the bundle once, untimed, then each change is timed from
"files changed" to "updated findings in hand" (``Session.update_paths``), best of N. Its findings must
show the change and equal, finding for finding, a full ``unifab check`` of the changed bundle, which
:class:`FullRecheck` runs in the same round as the comparison.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.common import human_seconds, log, run_child, unifab_argv
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
    last_mode: str  # how the last update was obtained (for the note)

    def prepare(self, bundle: Path, timeout_s: float) -> None:
        """Anything done once before the change (e.g. load a session); not timed."""

    def baseline(self, bundle: Path, timeout_s: float) -> list[dict[str, Any]]:
        """The findings of the unchanged bundle (to pick devices no finding mentions)."""

    def updated_findings(self, bundle: Path, change: Change, timeout_s: float) -> tuple[float, list[dict[str, Any]]]:
        """Seconds from 'the files changed' to 'the updated findings are in hand', and those findings."""

    def restored(self, change: Change) -> None:
        """After the figure undoes the change (files restored byte for byte)."""


class FullRecheck:
    """The comparison: run ``unifab check --format json`` on the whole (changed) bundle again."""

    name = "full re-check (unifab check)"
    last_mode = "full"

    def prepare(self, bundle: Path, timeout_s: float) -> None:
        return None

    def baseline(self, bundle: Path, timeout_s: float) -> list[dict[str, Any]]:
        return self.updated_findings(bundle, Change("unchanged", "", {}, "", ""), timeout_s)[1]

    def restored(self, change: Change) -> None:
        return None

    def updated_findings(self, bundle: Path, change: Change, timeout_s: float) -> tuple[float, list[dict[str, Any]]]:
        run = run_child(
            [*unifab_argv(), "check", str(bundle), "--format", "json", "--fail-on", "never"], timeout_s=timeout_s
        )
        if not run.ok or run.returncode != 0:
            raise RuntimeError(f"unifab check failed: {run.describe_failure()}")
        findings: list[dict[str, Any]] = json.loads(run.stdout)["findings"]
        return run.wall_s, findings


class SessionUpdate:
    """The incremental session, in this process: load once (not timed), then re-read only the changed files."""

    name = "incremental session (Session.update_paths, in process)"

    def __init__(self, reps: int = 5) -> None:
        self.reps = reps
        self.session: Any = None
        self.load_s = 0.0
        self.last_mode = ""

    def prepare(self, bundle: Path, timeout_s: float) -> None:
        from unifab.session.incremental import Session

        start = time.perf_counter()
        self.session = Session(bundle)
        self.load_s = time.perf_counter() - start

    def baseline(self, bundle: Path | None = None, timeout_s: float = 0.0) -> list[dict[str, Any]]:
        return _as_json(self.session.findings)

    def updated_findings(self, bundle: Path, change: Change, timeout_s: float) -> tuple[float, list[dict[str, Any]]]:
        """Best of ``reps``: each rep restores the files (and lets the session see that), then re-applies the change."""
        changed = {path: path.read_bytes() for path in change.files}
        best = float("inf")
        findings: list[Any] = []
        for _ in range(self.reps):
            change.restore()
            self.session.update_paths(list(change.files))
            for path, data in changed.items():
                path.write_bytes(data)
            start = time.perf_counter()
            update = self.session.update_paths(list(change.files))
            best = min(best, time.perf_counter() - start)
            findings = update.findings
            self.last_mode = update.mode
        return best, _as_json(findings)

    def restored(self, change: Change) -> None:
        """After the figure undoes the change, bring the session back to the unchanged bundle."""
        self.session.update_paths(list(change.files))


def _as_json(findings: list[Any]) -> list[dict[str, Any]]:
    from unifab.jsonify import to_jsonable

    out: list[dict[str, Any]] = to_jsonable(findings)  # type: ignore[assignment]
    return out


SESSION_REPS = 5
# The first is measured; the last is the comparison every round runs on the same changed bundle.
STRATEGIES: list[Strategy] = [SessionUpdate(SESSION_REPS), FullRecheck()]


# ------------------------------------------------------------------------------------------------ run


def run(ctx: Context) -> FigureResult:
    """Load the session once; per change, time the session's update (best of N) and one full re-check of the
    same changed bundle, check that both show the change and agree finding for finding, then undo it."""
    fig = FigureResult(NAME, TITLE)
    gpus = size(ctx)
    case = f"{gpus:,} GPUs"
    twin = ctx.twins.get(gpus, timeout_s=ctx.size_budget_s)
    timeout = ctx.size_budget_s
    session, full = STRATEGIES[0], STRATEGIES[-1]
    log(f"{case}: {session.name}: prepare (not timed)")
    start = time.perf_counter()
    session.prepare(twin.path, timeout)
    fig.add(
        Row(
            NAME,
            case,
            "session load: read + parse + all checks, once (not timed)",
            round(time.perf_counter() - start, 2),
            "s",
        )
    )
    baseline = session.baseline(twin.path, timeout)
    headline_parts = []
    fulls: list[float] = []
    for make in CHANGES:
        change = make(twin.path, baseline)
        try:
            log(f"{case}: {change.label} changed on {change.device}; {session.name}")
            seconds, findings = session.updated_findings(twin.path, change, timeout)
            mode = session.last_mode
            log(f"{case}: {change.label}: {full.name}")
            full_s, full_findings = full.updated_findings(twin.path, change, timeout)
        finally:
            change.restore()
            session.restored(change)
        fulls.append(full_s)
        label = f"{case}, {change.label}"
        changed = ", ".join(p.name for p in change.files)
        fig.add(
            Row(
                NAME,
                label,
                "time to updated findings",
                round(seconds * 1000, 2),
                "ms",
                LATENCY_TARGET,
                f"strategy: {session.name}, path taken: {mode}; changed {changed} on {change.device}; "
                f"best of {SESSION_REPS}",
            )
        )
        speedup = full_s / seconds
        fig.add(
            Row(
                NAME,
                label,
                "speed-up vs full check",
                round(speedup, 1),
                "×",
                SPEEDUP_TARGET,
                f"{full.name} of the same changed bundle: {human_seconds(full_s)}",
            )
        )
        fig.add(
            Row(
                NAME,
                label,
                "updated findings show the change (1 = yes)",
                1.0 if change.seen_in(findings) else 0.0,
                "",
                FOUND_TARGET,
                f"expects {change.expect_check} on {change.expect_endpoint}",
            )
        )
        same = _canonical(findings) == _canonical(full_findings)
        fig.add(
            Row(
                NAME,
                label,
                "session findings equal the full check's (1 = yes)",
                1.0 if same else 0.0,
                "",
                FOUND_TARGET,
                f"{len(findings)} vs {len(full_findings)} findings, compared in order with every field",
            )
        )
        headline_parts.append(f"{change.label}: {seconds * 1000:.1f} ms ({speedup:,.0f}× vs full)")
    fig.add(Row(NAME, case, "full re-check (unifab check), best of the rounds", round(min(fulls), 3), "s"))
    fig.notes.append(
        "The incremental session (unifab.session.incremental, behind `unifab check --watch`) re-reads only the "
        "changed device's files, re-runs the per-link checks for the links touching it, and keeps the "
        "fabric-wide results (baseline counters, cabling groups, per-switch speed majorities) unless its inputs "
        "to them changed; the comparison is a full `unifab check` of the same changed bundle in a child process."
    )
    fig.headline = f"{case}: " + "; ".join(headline_parts) + f" — full check {human_seconds(min(fulls))}"
    return fig


def _canonical(findings: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(f, sort_keys=True) for f in findings]
