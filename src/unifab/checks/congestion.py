"""Congestion control on every NIC↔switch link: ECN marking, its thresholds, DCQCN and CNP handling.

DCQCN needs three things: the switch marks ECN on the RoCE queue (QOS-ECN-OFF, QOS-ECN-THRESH), the
receiving NIC turns marks into CNPs and the sending NIC slows down on them (QOS-DCQCN-OFF), and CNPs
cross the fabric quickly, in a strict-priority queue that PFC does not pause (QOS-CNP).

That is the intent's ``congestion_control: dcqcn`` (the default). A fabric whose intent says ``spectrum-x``
(NVIDIA Spectrum-X programmable congestion control on the SuperNICs) or ``none`` (PFC alone) does not rely on
switch ECN marks and NIC DCQCN, so QOS-ECN-OFF and QOS-DCQCN-OFF do not report them there; the ECN rules that
guard a configured profile (thresholds, colours, WRED drops on lossless queues) and QOS-CNP still apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from unifab.checks.context import CheckContext, cnp_queue
from unifab.checks.findings import SwitchWide, link_finding
from unifab.checks.memo import run_memo
from unifab.checks.registry import CheckSpec
from unifab.checks.uplink_qos import uplink_cnp
from unifab.model import Finding, Fix, Port, QueueQos, Severity
from unifab.render.nic_cli import NicFixes

__all__ = [
    "CHECKS",
    "GREEN_MARK_MODES",
    "NO_CC",
    "NVIDIA_ECN",
    "check_cnp",
    "check_dcqcn_off",
    "check_ecn_color",
    "check_ecn_off",
    "check_ecn_thresh",
    "check_wred_green_drop",
    "congestion_control",
]

NO_CC = (
    "without ECN marks and CNPs DCQCN never slows senders down, so congestion is handled by PFC alone: "
    "pause storms, head-of-line blocking and victim flows"
)


NVIDIA_ECN = (150_000, 1_500_000)  # NVIDIA's RoCE default (NVUE RoCE mode, bytes)
DCQCN = "dcqcn"


def congestion_control(ctx: CheckContext) -> str:
    """The congestion control the intent says the fabric runs; DCQCN without an intent (the RoCE default)."""
    intent = ctx.fabric.qos_intent
    return intent.congestion_control if intent is not None else DCQCN


def _queue_evidence(index: int, queue: QueueQos | None) -> dict[str, object]:
    if queue is None:
        return {"queue": index, "configured": False}
    return {
        "queue": index,
        "wred_profile": queue.wred_profile,
        "ecn_marking": queue.ecn_enabled,
        "min_bytes": queue.ecn_min_bytes,
        "max_bytes": queue.ecn_max_bytes,
        "max_probability": queue.ecn_max_probability,
        "scheduler": queue.scheduler,
        "scheduler_type": queue.scheduler_type,
    }


def _roce_queue(port: Port, tc: int) -> tuple[int, QueueQos | None]:
    assert port.qos is not None
    index = port.qos.tc_to_queue.get(tc, tc)
    return index, port.qos.queues.get(index)


def check_ecn_off(ctx: CheckContext) -> Iterator[Finding]:
    """The switch must ECN-mark the RoCE queue on every egress: toward each NIC and on each switch link."""
    base = ctx.baseline
    tc = base.switch_roce_tc
    if tc is None or congestion_control(ctx) != DCQCN:
        return  # Spectrum-X CC or PFC alone: ECN marking is not what the fabric's congestion control asks for
    usable = base.roce_ecn_thresholds is not None and base.roce_ecn_thresholds[0] < base.roce_ecn_thresholds[1]
    thresholds = base.roce_ecn_thresholds if usable and base.roce_ecn_thresholds else NVIDIA_ECN
    for lk in ctx.nic_links:
        if lk.port.qos is None or lk.nic.qos is None:
            continue
        index, queue = _roce_queue(lk.port, tc)
        if queue is not None and queue.ecn_enabled:
            continue
        yield link_finding(
            "QOS-ECN-OFF",
            Severity.ERROR,
            lk,
            f"{lk.port.endpoint} does not ECN-mark RoCE queue {index} toward {lk.nic.endpoint}",
            {"roce_priority": base.nic_roce_prio},
            {"tc": tc, **_queue_evidence(index, queue)},
            [Fix(lk.port.switch, ctx.cli(lk.port.switch).queue_ecn(lk.port.name, index, *thresholds))],
            NO_CC,
        )
    for pl in ctx.port_links:
        if pl.a.qos is None or pl.b.qos is None:
            continue
        (a_index, a_queue), (b_index, b_queue) = _roce_queue(pl.a, tc), _roce_queue(pl.b, tc)
        ends = ((pl.a, a_index, a_queue), (pl.b, b_index, b_queue))
        silent = [(port, index) for port, index, queue in ends if queue is None or not queue.ecn_enabled]
        if not silent:
            continue
        yield Finding(
            check="QOS-ECN-OFF",
            severity=Severity.ERROR,
            subject={"kind": "link", "a": str(pl.a.endpoint), "b": str(pl.b.endpoint)},
            message="no ECN marking on RoCE queue of "
            + ", ".join(f"{port.endpoint} (queue {index})" for port, index in silent),
            evidence={
                "a": {"device": pl.a.switch, "port": pl.a.id, "tc": tc, **_queue_evidence(a_index, a_queue)},
                "b": {"device": pl.b.switch, "port": pl.b.id, "tc": tc, **_queue_evidence(b_index, b_queue)},
            },
            fix=tuple(
                Fix(port.switch, ctx.cli(port.switch).queue_ecn(port.name, index, *thresholds))
                for port, index in silent
            ),
            impact={"summary": NO_CC, **ctx.path_impact(pl)},
            entities=(pl.link.id,),
        )


def check_ecn_thresh(ctx: CheckContext) -> Iterator[Finding]:
    """ECN thresholds on the RoCE queue must be usable: min < max and a non-zero marking probability."""
    base = ctx.baseline
    if base.switch_roce_tc is None:
        return
    shared = SwitchWide()
    for lk in ctx.nic_links:
        port_q = lk.port.qos
        if port_q is None:
            continue
        index = port_q.tc_to_queue.get(base.switch_roce_tc, base.switch_roce_tc)
        queue = port_q.queues.get(index)
        if queue is None or not queue.ecn_enabled:
            continue
        low, high, prob = queue.ecn_min_bytes, queue.ecn_max_bytes, queue.ecn_max_probability
        problems = []
        if low is not None and high is not None and low >= high:
            problems.append(f"min {low} B ≥ max {high} B")
        if prob == 0:
            problems.append("marking probability 0%")
        if not problems:
            continue
        fixes = []
        cli = ctx.cli(lk.port.switch)
        if queue.wred_profile and low is not None and high is not None and low >= high:
            fixes.append(
                Fix(lk.port.switch, cli.ecn_thresholds(queue.wred_profile, index, *_thresholds(ctx, low, high)))
            )
        elif queue.wred_profile:
            fixes.append(Fix(lk.port.switch, cli.ecn_probability(queue.wred_profile, index, 100)))
        finding = link_finding(
            "QOS-ECN-THRESH",
            Severity.ERROR,
            lk,
            f"ECN thresholds on {lk.port.endpoint} queue {index} are unusable: {', '.join(problems)}",
            {},
            {"tc": base.switch_roce_tc, **_queue_evidence(index, queue)},
            fixes,
            "the queue marks at the wrong depth (or never), so DCQCN reacts late or not at all: deeper queues, "
            "more PFC pauses and tail latency",
        )
        if queue.wred_profile:
            config = f"WRED_PROFILE|{queue.wred_profile}"
            shared.add(lk.port.switch, config, f"{lk.port.switch} {config}: {', '.join(problems)}", finding)
        else:
            yield finding
    yield from shared.findings()


def _thresholds(ctx: CheckContext, low: int, high: int) -> tuple[int, int]:
    """Usable (min, max) for a queue configured with min >= max: the fabric's (the intent's, else most RoCE
    queues') when usable, else the two swapped, else (min == max, where a swap changes nothing) NVIDIA's."""
    fabric = ctx.baseline.roce_ecn_thresholds
    if fabric is not None and fabric[0] < fabric[1]:
        return fabric
    if low > high:
        return high, low
    return NVIDIA_ECN if low < NVIDIA_ECN[1] else (low, 2 * low)


# SAI's ECN mark modes that mark green packets: RoCE traffic is green (no policer colours it)
GREEN_MARK_MODES = frozenset({"ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all"})
ECN_ALL = "ecn_all"


def _roce_egress(ctx: CheckContext, tc: int) -> list[tuple[Port, int, QueueQos, str]]:
    """Every egress port of every link tier (toward NICs, on switch links) once, with its RoCE queue and link
    (once per check run: the ECN colour and WRED checks walk the same ports)."""
    return run_memo(f"roce_egress:{tc}", ctx, lambda: list(_each_roce_egress(ctx, tc)))


def _each_roce_egress(ctx: CheckContext, tc: int) -> Iterator[tuple[Port, int, QueueQos, str]]:
    seen: set[str] = set()
    ports = [(lk.port, lk.link.id) for lk in ctx.nic_links]
    ports += [(port, pl.link.id) for pl in ctx.port_links for port in (pl.a, pl.b)]
    for port, link in ports:
        if port.qos is None or port.id in seen:
            continue
        seen.add(port.id)
        index, queue = _roce_queue(port, tc)
        if queue is not None:
            yield port, index, queue, link


def _by_profile(
    ctx: CheckContext, tc: int, wanted: Callable[[Port, QueueQos], bool]
) -> dict[tuple[str, str], list[tuple[Port, int, QueueQos, str]]]:
    """The RoCE queues ``wanted`` picks, grouped by the switch's WRED profile they share."""
    groups: dict[tuple[str, str], list[tuple[Port, int, QueueQos, str]]] = {}
    for port, index, queue, link in _roce_egress(ctx, tc):
        if queue.wred_profile is not None and queue.ecn_mode is not None and wanted(port, queue):
            groups.setdefault((port.switch, queue.wred_profile), []).append((port, index, queue, link))
    return groups


def _profile_finding(
    ctx: CheckContext,
    check: str,
    switch: str,
    profile: str,
    group: list[tuple[Port, int, QueueQos, str]],
    message: str,
    impact: str,
) -> Finding:
    _, index, queue, _ = group[0]
    links = sorted({link for *_, link in group})
    return Finding(
        check=check,
        severity=Severity.ERROR,
        subject={"kind": "switch", "id": f"switch:{switch}", "config": f"WRED_PROFILE|{profile}"},
        message=f"{message}; {len(links)} links depend on it",
        evidence={
            # the far ends of the links behind the profile: the devices whose RoCE traffic goes unmarked
            "a": {"devices": sorted({_node(end) for link in links for end in _ends(link)} - {switch})},
            "b": {
                "device": switch,
                "tc": ctx.baseline.switch_roce_tc,
                "wred_profile": profile,
                "ecn_mode": queue.ecn_mode,
                "wred_green_enable": queue.wred_green_enable,
                "ports": sorted({f"{port.name} (queue {i})" for port, i, _, _ in group}),
            },
            "links": links,
        },
        fix=(Fix(switch, ctx.cli(switch).ecn_mark_mode(profile, index, ECN_ALL)),),
        impact={"summary": impact, "links": len(links)},
        entities=tuple(links),
    )


def check_ecn_color(ctx: CheckContext) -> Iterator[Finding]:
    """The RoCE queue's ECN mark mode must include green: RoCE packets are green, yellow/red-only marking
    never marks them (SAI ``ecn_mark_mode``; SONiC WRED_PROFILE ``ecn``)."""
    tc = ctx.baseline.switch_roce_tc
    if tc is None:
        return

    def colour_only(_port: Port, q: QueueQos) -> bool:
        return q.ecn_enabled and q.ecn_mode not in GREEN_MARK_MODES

    for (switch, profile), group in _by_profile(ctx, tc, colour_only).items():
        mode = group[0][2].ecn_mode
        yield _profile_finding(
            ctx,
            "QOS-ECN-COLOR",
            switch,
            profile,
            group,
            f"{switch} WRED_PROFILE|{profile} marks ECN only on {mode}, not on green (RoCE) packets",
            f"the queue looks ECN-enabled but never marks RoCE traffic: {NO_CC}",
        )


def check_wred_green_drop(ctx: CheckContext) -> Iterator[Finding]:
    """A lossless RoCE queue must not WRED-drop green packets: ``wred_green_enable`` without green ECN
    marking drops RoCE packets instead of marking them, on a queue PFC means to keep lossless."""
    tc = ctx.baseline.switch_roce_tc
    if tc is None:
        return

    def drops(port: Port, q: QueueQos) -> bool:
        lossless = port.qos is not None and tc in port.qos.pfc_enabled
        return lossless and q.wred_green_enable is True and q.ecn_mode not in GREEN_MARK_MODES

    for (switch, profile), group in _by_profile(ctx, tc, drops).items():
        mode = group[0][2].ecn_mode
        yield _profile_finding(
            ctx,
            "QOS-WRED-DROP",
            switch,
            profile,
            group,
            f"{switch} WRED_PROFILE|{profile} WRED-drops green packets on lossless RoCE queues (wred_green_enable "
            f"true, ECN {mode} does not mark green)",
            "RoCE packets are dropped at the WRED thresholds on a lossless queue: go-back-N retransmissions, "
            "throughput collapse and timeouts that PFC was configured to prevent",
        )


def check_dcqcn_off(ctx: CheckContext) -> Iterator[Finding]:
    """The NIC must notify (roce_np: send CNPs) and react (roce_rp: slow down) on the RoCE priority."""
    prio = ctx.baseline.nic_roce_prio
    if prio is None or congestion_control(ctx) != DCQCN:
        return  # Spectrum-X programmable CC (or none) replaces the DCQCN reaction and notification points
    for lk in ctx.nic_links:
        nic_q = lk.nic.qos
        if nic_q is None:
            continue
        off = [
            point
            for point, enabled in (("roce_np", nic_q.ecn_np_enabled), ("roce_rp", nic_q.ecn_rp_enabled))
            if enabled is not None and prio not in enabled
        ]
        if not off:
            continue
        names = {"roce_np": "notification point (CNP generation)", "roce_rp": "reaction point (rate limiting)"}
        yield link_finding(
            "QOS-DCQCN-OFF",
            Severity.ERROR,
            lk,
            f"DCQCN {' and '.join(names[p] for p in off)} off on {lk.nic.endpoint} for RoCE priority {prio}",
            {
                "roce_priority": prio,
                "roce_np_enabled": None if nic_q.ecn_np_enabled is None else sorted(nic_q.ecn_np_enabled),
                "roce_rp_enabled": None if nic_q.ecn_rp_enabled is None else sorted(nic_q.ecn_rp_enabled),
            },
            {},
            [NicFixes(lk.nic).dcqcn_enable(off, prio)],
            NO_CC,
        )


def check_cnp(ctx: CheckContext) -> Iterator[Finding]:
    """CNPs must reach a strict-priority queue on the switch and must not ride a PFC-paused class."""
    base = ctx.baseline
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or port_q.trust != "dscp":
            continue
        cnp_dscp = nic_q.cnp_dscp if nic_q.cnp_dscp is not None else base.cnp_dscp
        cnp = cnp_queue(port_q, cnp_dscp)
        if not cnp.problems:
            continue
        tc, index, queue, problems = cnp.tc, cnp.index, cnp.queue, cnp.problems
        strict = queue is not None and queue.scheduler_type == "STRICT"
        fixes = []
        if not strict and index is not None:
            fixes.append(Fix(lk.port.switch, ctx.cli(lk.port.switch).queue_strict(lk.port.name, index)))
        yield link_finding(
            "QOS-CNP",
            Severity.ERROR,
            lk,
            f"CNPs (DSCP {cnp_dscp}) from {lk.nic.endpoint} wait on {lk.port.endpoint}: {', '.join(problems)}",
            {"cnp_dscp": cnp_dscp, "cnp_priority": nic_q.cnp_prio},
            {"tc": tc, **_queue_evidence(index if index is not None else -1, queue)},
            fixes,
            "congestion notifications queue behind data, so senders slow down late: DCQCN oscillates and PFC "
            "does the work",
        )
    yield from uplink_cnp(ctx)


CHECKS = (
    CheckSpec(
        "QOS-ECN-OFF",
        "The switch does not ECN-mark the RoCE queue toward a NIC or on a switch link",
        "Without ECN, DCQCN cannot throttle senders; congestion turns into PFC storms and victim flows. Covers "
        "the leaf port toward each NIC and both ends of every switch↔switch link.",
        "Attach an ECN profile of THAT switch to the RoCE queue (QUEUE|<port>|<q> wred_profile on SONiC, the "
        "port's congestion-control profile on NVUE), creating it first when the switch has none; EOS sets "
        "random-detect ecn on the interface's tx-queue. Not reported where the intent's congestion_control is "
        "spectrum-x or none.",
        check_ecn_off,
    ),
    CheckSpec(
        "QOS-ECN-THRESH",
        "ECN thresholds on the RoCE queue are unusable (min ≥ max, or zero marking probability)",
        "Marks come too late or never; DCQCN cannot keep queues short and PFC pauses grow.",
        "Set min < max thresholds in bytes (the fabric's, else swapped, else NVIDIA's 150000/1500000 when "
        "min == max) and a non-zero marking probability in the WRED profile.",
        check_ecn_thresh,
    ),
    CheckSpec(
        "QOS-ECN-COLOR",
        "The RoCE queue's ECN profile marks only yellow/red packets, never green (RoCE) ones",
        "SAI marks only the colours its ecn mark mode names; RoCE traffic is green, so DCQCN never sees a mark.",
        "Set that switch's own WRED profile to mark every colour (SONiC WRED_PROFILE|<profile> ecn ecn_all); "
        "covers every link tier (toward NICs and on switch links).",
        check_ecn_color,
    ),
    CheckSpec(
        "QOS-WRED-DROP",
        "WRED drops green packets on a lossless RoCE queue (wred_green_enable without green ECN marking)",
        "Packets past the WRED thresholds are dropped instead of marked, on the queue PFC keeps lossless.",
        "Make the profile mark green instead of dropping (SONiC WRED_PROFILE|<profile> ecn ecn_all on that "
        "switch's own profile); covers every link tier.",
        check_wred_green_drop,
    ),
    CheckSpec(
        "QOS-DCQCN-OFF",
        "DCQCN notification or reaction point is off on a NIC for the RoCE priority",
        "The NIC never sends CNPs for marked packets, or never slows down on the CNPs it receives.",
        "echo 1 > /sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio> (MLNX_OFED), bnxt_re configfs "
        "cc/ecn_marking, cc/ecn_enable and cc/cc_mode then cc/apply (Broadcom, as bnxt_setupcc.sh), or the "
        "firmware ROCE_CC_PRIO_MASK (upstream mlx5). Not reported where the intent's congestion_control is "
        "spectrum-x (programmable CC) or none.",
        check_dcqcn_off,
    ),
    CheckSpec(
        "QOS-CNP",
        "CNPs are not in a strict-priority queue, or ride a PFC-paused class",
        "Congestion notifications wait behind the data they are about, so rate control reacts late. Covers the "
        "leaf port toward each NIC and both ends of every switch↔switch link (CNPs cross the spines too).",
        "Map the CNP DSCP to a strict-priority, non-PFC queue: the strict scheduler THAT switch uses (created "
        "first when it has none) on SONiC, the port bound to a strict egress-scheduler profile on NVUE.",
        check_cnp,
    ),
)


def _ends(link: str) -> list[str]:
    """The two ``node:port`` ends of a ``link:a--b`` entity id."""
    return link.removeprefix("link:").split("--")


def _node(end: str) -> str:
    return end.rsplit(":", 1)[0]
