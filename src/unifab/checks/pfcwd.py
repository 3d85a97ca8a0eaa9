"""What a port's PFC watchdog must be, shared by the host-facing and switch-link ``QOS-PFCWD`` rules.

A watchdog is judged on four things, each from what the switch's own configuration says:

* **Presence**: every lossless priority is watched (SONiC ``pfcwd_sw_enable`` ⊇ ``pfc_enable``).
* **Action**: ``forward`` and ``alert`` (EOS ``no-drop`` and ``notify-only``) let the stuck queue keep pausing its
  peer, so they do not break a storm; ``drop`` does. EOS's default stuck-queue action is error-disable
  (AVD schema), which breaks the storm by taking the port, and with it the host's rail, down: it is named in
  the evidence, not reported.
* **Timers** (SONiC, where the fix writes them): ``pfcwd start_default`` (sonic-utilities ``pfcwd/main.py``)
  writes ``detection_time = restoration_time = 200 * m`` ms and ``PFC_WD|GLOBAL POLL_INTERVAL = min(200 * m,
  1000)`` with ``m = max(1, (len(PORT) - 1) // 32 + 1)`` (the PORT table's size, as the source counts). On a
  switch whose rows came from it (``DEVICE_METADATA|localhost default_pfcwd_status enable``, or every row
  identical at the scaled values) the scaled values are the switch's own default, never 200 ms; a port may run
  the longer of them and the intent's ``pfc_watchdog`` (intent only, elsewhere; not judged without either).
  A detection longer than that leaves a storm unbroken for longer. An action the intent asks for is not
  reported (the intent → render → check loop must come back clean).
* **Polling**: a detection time below ``PFC_WD|GLOBAL POLL_INTERVAL`` cannot be honoured (the watchdog looks
  once per poll; the YANG model rejects it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from unifab.checks.context import CheckContext, majority
from unifab.model import PfcWatchdog, Port, Severity, Switch
from unifab.render import sonic

__all__ = [
    "BREAKS_STORM",
    "START_DEFAULT_MS",
    "Expected",
    "SwitchWatchdog",
    "Verdict",
    "expected_timers",
    "judge_port",
    "start_default_multiplier",
]

START_DEFAULT_MS = 200  # sonic-utilities pfcwd/main.py DEFAULT_DETECTION_TIME, _RESTORATION_TIME, _POLL_INTERVAL
START_DEFAULT_POLL_CAP_MS = 1000
SONIC_MIN_POLL_MS = 100  # sonic-pfcwd.yang POLL_INTERVAL range 100..1000
BREAKS_STORM = frozenset({"drop", "errdisable"})
EFFECTS = {
    "drop": "drops what the stuck queue holds and ignores its pauses until restored: the storm stops at this port",
    "forward": "keeps forwarding and keeps honouring the pauses: the storm is not broken",
    "alert": "only raises an alarm: the storm is not broken",
    "errdisable": "EOS error-disables the port: the storm stops, and the link (a host's rail) stays down until "
    "errdisable recovery",
}
_POLL_SOURCE = "PFC_WD|GLOBAL POLL_INTERVAL"
INTENT = "fabric.yaml qos.pfc_watchdog"


@dataclass(frozen=True, slots=True)
class Expected:
    """The watchdog timers a port is held to, and why."""

    detection_ms: int
    restoration_ms: int
    poll_ms: int | None
    source: str
    start_default: bool = False  # the scaled values of pfcwd start_default (else the intent's)

    def evidence(self) -> dict[str, Any]:
        return {
            "detection_ms": self.detection_ms,
            "restoration_ms": self.restoration_ms,
            "poll_ms": self.poll_ms,
            "source": self.source,
        }


@dataclass(slots=True)
class Verdict:
    """Everything wrong with one port's watchdog: one finding's worth (problems, fix, evidence)."""

    severity: Severity
    problems: list[str]
    config: str  # the shared setting at fault, for grouping one switch's ports
    summary: str  # the problems without the port's name
    commands: tuple[str, ...]
    evidence: dict[str, Any] = field(default_factory=dict)
    missing: str | None = None  # "no watchdog entry" / "priorities [..] unwatched"


def start_default_multiplier(switch: Switch) -> tuple[int, int]:
    """``(m, ports)``: start_default's scale factor from the switch's PORT table size (ports read from PORT)."""
    ports = sum(1 for p in switch.ports.values() if p.admin_status is not None)
    return max(1, (ports - 1) // 32 + 1), ports


def expected_timers(ctx: CheckContext, switch: Switch) -> Expected | None:
    """The longest timers ``switch``'s ports may run: the intent's, or start_default's scaled ones where the
    switch runs start_default and they are longer (a 64-port switch's 400 ms is its own default, not slower
    than an intent's 200 ms); ``None`` when neither applies (the timers are then not judged)."""
    intent = ctx.fabric.qos_intent.pfcwd if ctx.fabric.qos_intent is not None else None
    wanted = Expected(intent.detection_ms, intent.restoration_ms, None, INTENT) if intent is not None else None
    scaled = _start_default(switch)
    if scaled is None or (wanted is not None and wanted.detection_ms >= scaled.detection_ms):
        return wanted
    return scaled


def _start_default(switch: Switch) -> Expected | None:
    """What ``pfcwd start_default`` writes on ``switch``, when its rows came from it."""
    if switch.os == "sonic":
        m, ports = start_default_multiplier(switch)
        scaled = START_DEFAULT_MS * m
        rows = [p.qos.pfcwd for p in switch.ports.values() if p.qos is not None and p.qos.pfcwd is not None]
        at_scaled = bool(rows) and all(
            (r.action, r.detection_ms, r.restoration_ms) == ("drop", scaled, scaled) for r in rows
        )
        if switch.pfcwd_default or at_scaled:
            why = (
                "DEVICE_METADATA|localhost default_pfcwd_status enable"
                if switch.pfcwd_default
                else "every PFC_WD row at start_default's values"
            )
            return Expected(
                scaled,
                scaled,
                min(scaled, START_DEFAULT_POLL_CAP_MS),
                f"pfcwd start_default ({why}): 200 ms x ceil({ports} PORT rows / 32) (sonic-utilities pfcwd/main.py)",
                start_default=True,
            )
    return None


def _watchdog_evidence(wd: PfcWatchdog | None, switch: Switch) -> dict[str, Any] | None:
    if wd is None:
        return None
    return {
        "action": wd.action,
        "detection_ms": wd.detection_ms,
        "restoration_ms": wd.restoration_ms,
        "poll_ms": switch.pfcwd_poll_ms,
        "action_effect": EFFECTS.get(wd.action or ""),
    }


@dataclass(frozen=True, slots=True)
class SwitchWatchdog:
    """One switch's watchdog facts, computed once: the timers its ports are held to, the shortest detection
    time among its rows (what the poll interval must not exceed) and the row most of its ports run."""

    switch: Switch
    expected: Expected | None
    min_detection: int | None
    usual: PfcWatchdog | None

    @classmethod
    def of(cls, ctx: CheckContext, switch: Switch) -> SwitchWatchdog:
        rows = [p.qos.pfcwd for p in switch.ports.values() if p.qos is not None and p.qos.pfcwd is not None]
        detections = [r.detection_ms for r in rows if r.detection_ms is not None]
        return cls(switch, expected_timers(ctx, switch), min(detections) if detections else None, majority(rows))


def _new_row(ctx: CheckContext, sw: SwitchWatchdog, asked: str | None) -> PfcWatchdog | None:
    """The row for a port without one: what the switch's other ports run when that row is sound, else the
    timers it is held to with ``drop``, else the fabric's."""
    usual, expected = sw.usual, sw.expected
    if usual is not None:
        breaks = usual.action in BREAKS_STORM or usual.action == asked or usual.action is None
        in_time = expected is None or usual.detection_ms is None or usual.detection_ms <= expected.detection_ms
        if breaks and in_time:
            return usual
    if expected is not None:
        return PfcWatchdog("drop", expected.detection_ms, expected.restoration_ms)
    return ctx.baseline.pfcwd


def judge_port(ctx: CheckContext, port: Port, sw: SwitchWatchdog) -> Verdict | None:
    """What is wrong with ``port``'s watchdog (``None``: nothing, or PFC off so nothing to watch)."""
    switch, expected = sw.switch, sw.expected
    q = port.qos
    if q is None or not q.pfc_enabled:
        return None
    wd = q.pfcwd
    cli = ctx.cli(port.switch)
    unwatched = q.pfc_enabled - q.pfcwd_priorities
    problems: list[str] = []
    config: list[str] = []
    severity = Severity.WARNING
    missing = None
    if wd is None or unwatched:
        missing = "no watchdog entry" if wd is None else f"priorities {sorted(unwatched)} unwatched"
        problems.append(missing)
        config.append("pfcwd")
    new_action = wd.action if wd is not None else None
    new_detection = wd.detection_ms if wd is not None else None
    new_restoration = wd.restoration_ms if wd is not None else None
    rewrite = False
    intent = ctx.fabric.qos_intent.pfcwd if ctx.fabric.qos_intent is not None else None
    asked = intent.action if intent is not None else None  # an action the intent asks for is the intent's call
    if wd is not None and wd.action in ("forward", "alert") and wd.action != asked:
        problems.append(f"action {wd.action} does not break a storm")
        config.append(f"PFC_WD action {wd.action}")
        new_action, rewrite = "drop", True
    slow = (
        wd is not None
        and switch.os == "sonic"
        and expected is not None
        and wd.detection_ms is not None
        and wd.detection_ms > expected.detection_ms
    )
    if slow and wd is not None and expected is not None:
        problems.append(
            f"detection {wd.detection_ms} ms is slower than the {expected.detection_ms} ms "
            f"{'start_default scales to' if expected.start_default else 'the intent asks'}"
        )
        config.append(f"PFC_WD detection {wd.detection_ms}ms")
        new_detection, new_restoration, rewrite = expected.detection_ms, expected.restoration_ms, True
    poll = switch.pfcwd_poll_ms
    if wd is not None and poll is not None and wd.detection_ms is not None and wd.detection_ms < poll:
        problems.append(f"detection {wd.detection_ms} ms is below {_POLL_SOURCE} {poll} ms")
        config.append(f"PFC_WD|GLOBAL POLL_INTERVAL {poll}")
    if not problems:
        return None
    if rewrite:
        fixed = PfcWatchdog(new_action, new_detection, new_restoration)
        commands = cli.pfc_watchdog(port.name, sorted(q.pfc_enabled), fixed)
    elif missing is not None:
        row = _new_row(ctx, sw, asked) if wd is None else None
        new_detection = row.detection_ms if row is not None else new_detection
        commands = cli.pfc_watchdog(port.name, sorted(q.pfc_enabled), row)
    else:
        commands = ()
    extra: list[str] = []
    if switch.os == "sonic" and poll is not None and new_detection is not None and new_detection < poll:
        # the poll no longer than any detection time (the one this fix writes included), never below YANG's 100
        fastest = min(new_detection, sw.min_detection) if sw.min_detection is not None else new_detection
        extra.append(sonic.hset("PFC_WD|GLOBAL", "POLL_INTERVAL", str(max(SONIC_MIN_POLL_MS, fastest))))
    evidence: dict[str, Any] = {
        "pfc_enabled": sorted(q.pfc_enabled),
        "pfcwd_priorities": sorted(q.pfcwd_priorities),
        "pfcwd": _watchdog_evidence(wd, switch),
    }
    if expected is not None:
        evidence["expected"] = expected.evidence()
    if switch.os == "eos" and (wd is None or wd.action == "errdisable"):
        evidence["eos_default_action"] = EFFECTS["errdisable"]
    return Verdict(
        severity,
        problems,
        "; ".join(config),
        ", ".join(problems),
        (*commands, *extra),
        evidence,
        missing,
    )
