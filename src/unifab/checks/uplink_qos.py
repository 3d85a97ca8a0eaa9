"""The per-port QoS rules on switch↔switch links (leaf↔spine, spine↔super-spine): trust, the RoCE DSCP map,
the CNP queue and the PFC watchdog, judged on each end against the fabric's values.

The host-facing rules live in :mod:`unifab.checks.qos` and :mod:`unifab.checks.congestion`; their check
functions call the ones here, so one check id covers every link tier. Uplinks carry every flow of their leaf,
so a spine that maps DSCP 26 to a lossy class drops RoCE for every job that crosses it.

A setting that is wrong on many ports of one switch (its DSCP map, trust or watchdog on every uplink) is one
finding about that switch, naming every link it affects and holding the fix for each port, rather than one
finding per port: the review of a fabric of 64-port spines must not drown in copies.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from unifab.checks.context import CheckContext, PortLink, cnp_queue
from unifab.checks.pfcwd import SwitchWatchdog, judge_port
from unifab.model import Finding, Fix, Port, Severity

__all__ = ["PerSwitch", "Wrong", "merged_commands", "uplink_cnp", "uplink_dscp_map", "uplink_pfcwd", "uplink_trust"]

DROPS = "congestion drops RoCE packets and the NICs fall into go-back-N retransmission"


@dataclass(slots=True)
class Wrong:
    """One end of a switch link that is off: the message about it, its evidence, the commands that fix it.

    ``severity`` overrides the group's when set; ``impact`` adds fields to the finding's impact;
    ``peer`` is evidence about the other end of the link (what the host-side checks show of the NIC)."""

    pl: PortLink
    port: Port
    message: str
    evidence: dict[str, Any]
    commands: tuple[str, ...]
    severity: Severity | None = None
    impact: dict[str, Any] = field(default_factory=dict)
    peer: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PerSwitch:
    """Wrong ends grouped by (switch, shared setting, what is wrong): one finding per group."""

    check: str
    severity: Severity
    impact: str
    groups: dict[tuple[str, str, str], list[Wrong]] = field(default_factory=dict)
    # a one-port finding names the judged end as the link's "b" (as host-link findings name the switch port), so
    # findings about the two ends of one link differ in subject; else the link's own order
    judged_as_b: bool = False

    def add(self, config: str, summary: str, wrong: Wrong) -> None:
        self.groups.setdefault((wrong.port.switch, config, summary), []).append(wrong)

    def findings(self, ctx: CheckContext, severity_of: Callable[[Wrong], Severity] | None = None) -> Iterator[Finding]:
        def rank(w: Wrong) -> Severity:
            return severity_of(w) if severity_of else w.severity or self.severity

        for (switch, config, summary), group in self.groups.items():
            severity = max((rank(w) for w in group), key=lambda s: s.rank)
            if len(group) == 1:
                yield _link_finding(ctx, self.check, severity, group[0], self.impact, self.judged_as_b)
                continue
            links = sorted({w.pl.link.id for w in group})
            commands = merged_commands(w.commands for w in group)
            yield Finding(
                check=self.check,
                severity=severity,
                subject={"kind": "switch", "id": f"switch:{switch}", "config": config},
                message=f"{summary}; {len(links)} switch links depend on it",
                evidence={
                    "a": {"devices": sorted({(w.pl.b if w.port is w.pl.a else w.pl.a).switch for w in group})},
                    "b": {"device": switch, **group[0].evidence},
                    "ports": sorted(w.port.name for w in group),
                    "links": links,
                },
                fix=(Fix(switch, tuple(commands)),) if commands else (),
                impact={"summary": self.impact, **group[0].impact, "links": len(links)},
                entities=tuple(links),
            )


# SONiC CONFIG_DB writes (a key set twice holds the same value) and comments: written once per switch finding
_IDEMPOTENT = ("sonic-db-cli ", "#")


def merged_commands(groups: Iterable[Iterable[str]]) -> list[str]:
    """The commands of many ports' fixes as one switch's fix: a CONFIG_DB write or note shared by many ports
    once (a map's, a profile's), every other line as written (an EOS ``interface`` block per port)."""
    seen: set[str] = set()
    commands: list[str] = []
    for group in groups:
        for c in group:
            if c not in seen or not c.startswith(_IDEMPOTENT):
                commands.append(c)
            seen.add(c)
    return commands


def _link_finding(
    ctx: CheckContext, check: str, severity: Severity, w: Wrong, impact: str, judged_as_b: bool = False
) -> Finding:
    pl, other = w.pl, w.pl.b if w.port is w.pl.a else w.pl.a
    ends = {w.port.id: {"device": w.port.switch, "port": w.port.id, **w.evidence}}
    ends[other.id] = {"device": other.switch, "port": other.id, **w.peer}
    a, b = (other, w.port) if judged_as_b else (pl.a, pl.b)
    return Finding(
        check=check,
        severity=severity,
        subject={"kind": "link", "a": str(a.endpoint), "b": str(b.endpoint)},
        message=w.message,
        evidence={"a": ends[a.id], "b": ends[b.id]},
        fix=(Fix(w.port.switch, w.commands),) if w.commands else (),
        impact={"summary": impact, **w.impact, **ctx.path_impact(pl)},
        entities=(pl.link.id,),
    )


def _ends(ctx: CheckContext) -> Iterator[tuple[PortLink, Port]]:
    for pl in ctx.port_links:
        yield pl, pl.a
        yield pl, pl.b


def uplink_trust(ctx: CheckContext) -> Iterator[Finding]:
    """QOS-TRUST on switch links: each end must classify by DSCP as the fabric's switches do."""
    base = ctx.baseline
    if base.switch_trust is None:
        return
    out = PerSwitch(
        "QOS-TRUST",
        Severity.CRITICAL,
        "RoCE arriving over this link is classified by another field than on the rest of the path: it lands in "
        "the default class, PFC pauses the wrong one and " + DROPS,
    )
    entries = {base.roce_dscp: base.switch_roce_tc} if base.switch_roce_tc is not None else {}
    for pl, port in _ends(ctx):
        q = port.qos
        if q is None or q.trust == base.switch_trust:
            continue
        trust = q.trust or "nothing (no DSCP map bound)"
        fix = ctx.cli(port.switch).trust_dscp(port.name, entries) if base.switch_trust == "dscp" else ()
        message = f"{port.endpoint} (switch link) trusts {trust}; the fabric's switches trust {base.switch_trust}"
        evidence = {"trust": q.trust, "dscp_to_tc_map": q.dscp_map_name}
        out.add("trust", f"{port.switch} switch-link ports trust {trust}", Wrong(pl, port, message, evidence, fix))
    yield from out.findings(ctx)


def uplink_dscp_map(ctx: CheckContext, reported: Collection[tuple[str, str | None]] = ()) -> Iterator[Finding]:
    """QOS-DSCP-MAP on switch links: RoCE's DSCP must reach the fabric's RoCE TC on each end's map.

    ``reported``: the (switch, map) pairs the host-side rule already reported; a leaf's one map serves its host
    and uplink ports alike, so its finding (and its one fix) stands for both tiers."""
    base = ctx.baseline
    tc_wanted = base.switch_roce_tc
    if tc_wanted is None:
        return
    dscp = base.roce_dscp
    out = PerSwitch(
        "QOS-DSCP-MAP",
        Severity.ERROR,
        "RoCE crossing this switch is queued and paused in another class than on the rest of the path",
    )
    lossy_ends: set[str] = set()
    for pl, port in _ends(ctx):
        q = port.qos
        if q is None or q.trust != "dscp":
            continue  # QOS-TRUST reports a port that does not trust DSCP
        tc = q.dscp_to_tc.get(dscp)
        if tc == tc_wanted or (port.switch, q.dscp_map_name) in reported:
            continue
        lossy = tc is None or tc not in q.pfc_enabled
        if lossy:
            lossy_ends.add(port.id)
        note = " (lossy: PFC off)" if lossy else ""
        map_name = q.dscp_map_name
        fix = ctx.cli(port.switch).dscp_to_tc(map_name, dscp, tc_wanted) if map_name else ()
        message = (
            f"{port.endpoint} (switch link) maps RoCE DSCP {dscp} to TC {tc}, the fabric uses TC {tc_wanted}{note}"
        )
        evidence = {"dscp_to_tc_map": map_name, "roce_dscp": dscp, "tc": tc, "pfc_enabled": sorted(q.pfc_enabled)}
        config = f"DSCP_TO_TC_MAP|{map_name}" if map_name else "dscp-map"
        summary = f"{port.switch} maps RoCE DSCP {dscp} to TC {tc} in {config}{note}"
        out.add(config, summary, Wrong(pl, port, message, evidence, fix))
    out.impact += "; where that class is lossy, " + DROPS
    yield from out.findings(ctx, lambda w: Severity.CRITICAL if w.port.id in lossy_ends else Severity.ERROR)


def uplink_cnp(ctx: CheckContext) -> Iterator[Finding]:
    """QOS-CNP on switch links: CNPs crossing a switch link leave through a strict, unpaused queue."""
    base = ctx.baseline
    out = PerSwitch(
        "QOS-CNP",
        Severity.ERROR,
        "congestion notifications crossing this link wait behind the data they are about: senders slow down "
        "late, DCQCN oscillates and PFC does the work",
    )
    for pl, port in _ends(ctx):
        q = port.qos
        if q is None or q.trust != "dscp":
            continue
        if not q.queues:
            continue  # no queue configuration read for this port: unknown, not wrong
        cnp = cnp_queue(q, base.cnp_dscp)
        if not cnp.problems:
            continue
        tc, index, queue, problems = cnp.tc, cnp.index, cnp.queue, cnp.problems
        strict = queue is not None and queue.scheduler_type == "STRICT"
        fix = ctx.cli(port.switch).queue_strict(port.name, index) if not strict and index is not None else ()
        message = f"CNPs (DSCP {base.cnp_dscp}) wait on {port.endpoint} (switch link): {', '.join(problems)}"
        evidence = {
            "cnp_dscp": base.cnp_dscp,
            "tc": tc,
            "queue": index,
            "scheduler_type": queue and queue.scheduler_type,
        }
        out.add(
            f"queue {index}",
            f"{port.switch} switch-link ports: {', '.join(problems)}",
            Wrong(pl, port, message, evidence, fix),
        )
    yield from out.findings(ctx)


def uplink_pfcwd(ctx: CheckContext) -> Iterator[Finding]:
    """QOS-PFCWD on switch links: every lossless priority of a switch-link port is watched by a watchdog that
    breaks storms (``drop``), within the timers the switch's own configuration asks (see :mod:`.pfcwd`)."""
    out = PerSwitch(
        "QOS-PFCWD",
        Severity.WARNING,
        "a pause storm from the next switch (a stuck NIC behind it) holds this port forever and spreads to every "
        "leaf behind it",
    )
    watch: dict[str, SwitchWatchdog] = {}
    for pl, port in _ends(ctx):
        switch = ctx.fabric.switches.get(port.switch)
        if switch is None:
            continue
        sw = watch.get(switch.name)
        if sw is None:
            sw = watch[switch.name] = SwitchWatchdog.of(ctx, switch)
        verdict = judge_port(ctx, port, sw)
        if verdict is None:
            continue
        if verdict.missing is not None and len(verdict.problems) == 1:
            message = f"PFC watchdog off on {port.endpoint} (switch link): {verdict.missing}"
            summary = f"PFC watchdog off on {port.switch} switch-link ports: {verdict.missing}"
        else:
            message = f"PFC watchdog on {port.endpoint} (switch link): {verdict.summary}"
            summary = f"PFC watchdog on {port.switch} switch-link ports: {verdict.summary}"
        wrong = Wrong(pl, port, message, verdict.evidence, verdict.commands, severity=verdict.severity)
        out.add(f"{verdict.config} (switch links)", summary, wrong)  # apart from the host ports' finding
    yield from out.findings(ctx)
