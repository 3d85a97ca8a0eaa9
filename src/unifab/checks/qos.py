"""Lossless-RoCE classification checks on every NIC↔switch link: trust, DSCP maps, PFC, watchdog.

Each check compares both ends of a link with each other and with the fabric's baseline (the
majority of devices, see :class:`~unifab.checks.context.Baseline`), so that the finding's ``fix``
names the side that deviates rather than both. One wrong setting reports one finding: a NIC whose
TOS override sends another DSCP is QOS-TC-OVERRIDE, not also a DSCP map mismatch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from unifab.checks.context import CheckContext, overrides_fabric_dscp, roce_dscp_of
from unifab.checks.findings import SwitchWide, link_finding, merge_switch_wide
from unifab.checks.headroom import lossless_pg_fix
from unifab.checks.link import port_link_check
from unifab.checks.pfcwd import SwitchWatchdog, judge_port
from unifab.checks.registry import CheckSpec
from unifab.checks.uplink_qos import merged_commands, uplink_dscp_map, uplink_pfcwd, uplink_trust
from unifab.model import Finding, Fix, Port, Severity
from unifab.render.nic_cli import NicFixes

__all__ = [
    "CHECKS",
    "DROPS",
    "PAUSE_COUNTERS",
    "check_dscp_map",
    "check_global_pause",
    "check_pfc_lossy_roce",
    "check_pfc_mismatch",
    "check_pfcwd",
    "check_tc_override",
    "check_trust",
]

DROPS = "congestion drops RoCE packets and the NICs fall into go-back-N retransmission"


def check_trust(ctx: CheckContext) -> Iterator[Finding]:
    """NIC and switch port must both classify RoCE by DSCP (or both as the fabric does)."""
    base = ctx.baseline
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None:
            continue
        nic_off = base.nic_trust is not None and nic_q.trust != base.nic_trust
        port_off = base.switch_trust is not None and port_q.trust != base.switch_trust
        if not (nic_off or port_off):
            continue
        fixes = []
        if nic_off and base.nic_trust in ("dscp", "pcp"):
            fixes.append(NicFixes(lk.nic).trust(base.nic_trust, base.roce_dscp, base.nic_roce_prio))
        if port_off and base.switch_trust == "dscp":
            entries = {base.roce_dscp: base.switch_roce_tc} if base.switch_roce_tc is not None else {}
            fixes.append(Fix(lk.port.switch, ctx.cli(lk.port.switch).trust_dscp(lk.port.name, entries)))
        yield link_finding(
            "QOS-TRUST",
            Severity.CRITICAL,
            lk,
            f"trust differs: {lk.nic.endpoint} trusts {nic_q.trust}, {lk.port.endpoint} trusts "
            f"{port_q.trust or 'nothing (no DSCP map bound)'}; the fabric trusts {base.nic_trust}/{base.switch_trust}",
            {"trust": nic_q.trust},
            {"trust": port_q.trust, "dscp_to_tc_map": port_q.dscp_map_name},
            fixes,
            "RoCE is classified into a different priority on each end: PFC pauses the wrong class and " + DROPS,
        )
    yield from uplink_trust(ctx)


def switch_pfc_fix(ctx: CheckContext, port: Port, priorities: Iterable[int]) -> tuple[str, ...]:
    """PFC on ``priorities`` of a switch port, with the watchdog on the ones it does not watch yet and the PG
    headroom they need: a priority made lossless without either is QOS-PFCWD's or QOS-HEADROOM's next finding
    (an expert enables all at once)."""
    wanted = frozenset(priorities)
    cli = ctx.cli(port.switch)
    commands = cli.pfc_enable(port.name, sorted(wanted))
    q = port.qos
    if wanted and q is not None and (q.pfcwd is None or not wanted <= q.pfcwd_priorities):
        commands += cli.pfc_watchdog(port.name, sorted(wanted), ctx.baseline.pfcwd if q.pfcwd is None else None)
    if wanted and q is not None and not wanted <= q.pfc_enabled:
        commands += lossless_pg_fix(ctx, port, wanted)
    return commands


def _pfc(port: Port) -> tuple[int, ...] | None:
    return None if port.qos is None else tuple(sorted(port.qos.pfc_enabled))


def check_pfc_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """NIC and switch port, and the two ends of a switch link, must enable PFC on the same priorities."""
    yield from port_link_check(
        ctx,
        "QOS-PFC-MISMATCH",
        "pfc_enabled",
        _pfc,
        Severity.CRITICAL,
        lambda p, v: switch_pfc_fix(ctx, p, v),
        "priorities lossless on one end only: pauses from the downstream switch are ignored, so " + DROPS,
        prefer=lambda a, b: a if len(a) >= len(b) else b,
        show=lambda v: str(list(v)),
        label="PFC priorities",
    )
    want = ctx.baseline.pfc
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or nic_q.pfc_enabled == port_q.pfc_enabled:
            continue
        target = want if want is not None else nic_q.pfc_enabled
        fixes = []
        if nic_q.pfc_enabled != target:
            fixes.append(NicFixes(lk.nic).pfc(target))
        if port_q.pfc_enabled != target:
            fixes.append(Fix(lk.port.switch, switch_pfc_fix(ctx, lk.port, target)))
        unpaused = sorted(nic_q.pfc_enabled ^ port_q.pfc_enabled)
        yield link_finding(
            "QOS-PFC-MISMATCH",
            Severity.CRITICAL,
            lk,
            f"PFC priorities differ: {lk.nic.endpoint} enables {sorted(nic_q.pfc_enabled)}, "
            f"{lk.port.endpoint} enables {sorted(port_q.pfc_enabled)}",
            {"pfc_enabled": sorted(nic_q.pfc_enabled)},
            {"pfc_enabled": sorted(port_q.pfc_enabled)},
            fixes,
            f"priorities {unpaused} are lossless on one end only: pause frames are ignored or never sent, so " + DROPS,
        )


def check_pfc_lossy_roce(ctx: CheckContext) -> Iterator[Finding]:
    """The priority RoCE travels on must be lossless; both ends agreeing on 'off' is still wrong."""
    base = ctx.baseline
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or nic_q.pfc_enabled != port_q.pfc_enabled or nic_q.trust != "dscp":
            continue
        # the fabric's RoCE priority: a NIC mapping RoCE elsewhere is QOS-DSCP-MAP's finding
        prio = base.nic_roce_prio if base.nic_roce_prio is not None else nic_q.dscp2prio.get(roce_dscp_of(lk.nic, base))
        if prio is None or prio in nic_q.pfc_enabled:
            continue
        target = nic_q.pfc_enabled | {prio}
        yield link_finding(
            "QOS-PFC-LOSSY-ROCE",
            Severity.CRITICAL,
            lk,
            f"RoCE priority {prio} is lossy on both {lk.nic.endpoint} and {lk.port.endpoint} "
            f"(PFC on {sorted(nic_q.pfc_enabled)} only)",
            {"roce_priority": prio, "pfc_enabled": sorted(nic_q.pfc_enabled)},
            {"pfc_enabled": sorted(port_q.pfc_enabled)},
            [
                NicFixes(lk.nic).pfc(target),
                Fix(lk.port.switch, switch_pfc_fix(ctx, lk.port, target)),
            ],
            "RoCE runs without PFC on this link: " + DROPS,
        )


def check_dscp_map(ctx: CheckContext) -> Iterator[Finding]:
    """RoCE DSCP must land on the same priority/TC on the NIC and on the switch port it enters.

    A switch's DSCP map is shared by its ports, so when only the switch deviates the links behind
    one map entry are reported as one finding about that entry.
    """
    base = ctx.baseline
    shared = SwitchWide()
    reported: set[tuple[str, str | None]] = set()
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or nic_q.trust != "dscp" or overrides_fabric_dscp(lk.nic, base):
            continue
        if port_q.trust != "dscp":
            continue  # QOS-TRUST reports it
        dscp = base.roce_dscp
        nic_prio = nic_q.dscp2prio.get(dscp)
        switch_tc = port_q.dscp_to_tc.get(dscp)
        nic_off = base.nic_roce_prio is not None and nic_prio != base.nic_roce_prio
        switch_off = base.switch_roce_tc is not None and switch_tc != base.switch_roce_tc
        if not (nic_off or switch_off or nic_prio != switch_tc):
            continue
        fixes = []
        if nic_off and base.nic_roce_prio is not None:
            fixes.append(NicFixes(lk.nic).dscp2prio(dscp, base.nic_roce_prio))
        fix_tc = base.switch_roce_tc if base.switch_roce_tc is not None else nic_prio
        if (switch_off or not nic_off) and fix_tc is not None and port_q.dscp_map_name:
            fixes.append(Fix(lk.port.switch, ctx.cli(lk.port.switch).dscp_to_tc(port_q.dscp_map_name, dscp, fix_tc)))
        lossy = switch_tc is None or switch_tc not in port_q.pfc_enabled
        queue = port_q.tc_to_queue.get(switch_tc, switch_tc) if switch_tc is not None else None
        lossy_note = " (lossy: PFC off)" if lossy else ""
        finding = link_finding(
            "QOS-DSCP-MAP",
            Severity.CRITICAL if lossy else Severity.ERROR,
            lk,
            f"RoCE DSCP {dscp} goes to priority {nic_prio} on {lk.nic.endpoint} "
            f"but to TC {switch_tc} on {lk.port.endpoint}{lossy_note}",
            {"roce_dscp": dscp, "trust": nic_q.trust, "priority": nic_prio, "pfc_enabled": sorted(nic_q.pfc_enabled)},
            {
                "dscp_to_tc_map": port_q.dscp_map_name,
                "tc": switch_tc,
                "pg": port_q.tc_to_pg.get(switch_tc) if switch_tc is not None else None,
                "queue": queue,
                "pfc_enabled": sorted(port_q.pfc_enabled),
            },
            fixes,
            "RoCE is queued and paused in a different class than the NIC expects"
            + ("; that class is lossy, so " + DROPS if lossy else ""),
        )
        if switch_off:
            reported.add((lk.port.switch, port_q.dscp_map_name))
        if switch_off and not nic_off and port_q.dscp_map_name:
            config = f"DSCP_TO_TC_MAP|{port_q.dscp_map_name}"
            message = f"{lk.port.switch} maps RoCE DSCP {dscp} to TC {switch_tc} in {config}{lossy_note}"
            shared.add(lk.port.switch, config, message, finding)
        else:
            yield finding
    yield from shared.findings()
    yield from uplink_dscp_map(ctx, reported)


def check_tc_override(ctx: CheckContext) -> Iterator[Finding]:
    """A NIC's global traffic_class override must not move RoCE off the fabric's DSCP."""
    base = ctx.baseline
    fabric_tclass = base.roce_dscp << 2 | 2  # ECT(0), as the fabric's own override writes it
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or nic_q.traffic_class is None or not overrides_fabric_dscp(lk.nic, base):
            continue
        dscp = nic_q.traffic_class >> 2
        switch_tc = port_q.dscp_to_tc.get(dscp) if port_q else None
        lossless = port_q is not None and switch_tc in port_q.pfc_enabled
        dev = lk.nic.rdma_dev or lk.nic.netdev
        yield link_finding(
            "QOS-TC-OVERRIDE",
            Severity.CRITICAL if not lossless else Severity.ERROR,
            lk,
            f"{lk.nic.endpoint} ({dev}) overrides every RoCE TOS with tclass {nic_q.traffic_class} "
            f"(DSCP {dscp}); the fabric's RoCE DSCP is {base.roce_dscp}",
            {"traffic_class": nic_q.traffic_class, "dscp": dscp, "fabric_dscp": base.roce_dscp},
            {"tc_for_dscp": switch_tc, "pfc_enabled": sorted(port_q.pfc_enabled) if port_q else None},
            [NicFixes(lk.nic).traffic_class(fabric_tclass)],
            f"the override beats NCCL_IB_TC and every application's TOS: RoCE from this NIC enters TC {switch_tc}"
            + (" which is lossy, so " + DROPS if not lossless else ""),
        )


def check_pfcwd(ctx: CheckContext) -> Iterator[Finding]:
    """Every lossless priority of a switch port needs a PFC watchdog that breaks pause storms (see
    :mod:`unifab.checks.pfcwd`: presence, action, start_default's scaled timers, the poll interval).

    Ports of one switch with the same fault are one finding about the switch, with each port's fix."""
    watch: dict[str, SwitchWatchdog] = {}
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for lk in ctx.nic_links:
        switch = ctx.fabric.switches.get(lk.port.switch)
        if switch is None:
            continue
        sw = watch.get(switch.name)
        if sw is None:
            sw = watch[switch.name] = SwitchWatchdog.of(ctx, switch)
        verdict = judge_port(ctx, lk.port, sw)
        if verdict is None:
            continue
        only_missing = verdict.missing is not None and len(verdict.problems) == 1
        what = f"off on {{}}: {verdict.missing}" if only_missing else f"on {{}}: {verdict.summary}"
        finding = link_finding(
            "QOS-PFCWD",
            verdict.severity,
            lk,
            "PFC watchdog " + what.format(lk.port.endpoint),
            {},
            verdict.evidence,
            [Fix(lk.port.switch, verdict.commands)] if verdict.commands else [],
            "a NIC that stops draining (PCIe stall, crashed driver) pauses this port forever; the storm spreads "
            "upstream and stalls every job behind it",
        )
        summary = "PFC watchdog " + what.format(f"{switch.name} host ports")
        groups.setdefault((switch.name, verdict.config, summary), []).append(finding)
    for (switch_name, config, summary), group in groups.items():
        if len(group) == 1:
            yield group[0]
            continue
        merged = merge_switch_wide(switch_name, config, summary, group)
        commands = merged_commands(fix.commands for f in group for fix in f.fix)
        yield replace(merged, fix=(Fix(switch_name, tuple(commands)),) if commands else ())
    yield from uplink_pfcwd(ctx)


PAUSE_COUNTERS = ("ethtool:rx_pause_ctrl_phy", "ethtool:tx_pause_ctrl_phy")


def check_global_pause(ctx: CheckContext) -> Iterator[Finding]:
    """802.3x link-level pause must be off on a NIC whose link runs PFC."""
    for lk in ctx.nic_links:
        nic = lk.nic
        if nic.global_pause is None or not any(nic.global_pause):
            continue
        pfc = nic.qos.pfc_enabled if nic.qos else frozenset()
        port_pfc = lk.port.qos.pfc_enabled if lk.port.qos else frozenset()
        if not (pfc or port_pfc):
            continue  # a lossy-only link may use global pause on purpose
        rx, tx = nic.global_pause
        frames = {name.removeprefix("ethtool:"): nic.counters[name] for name in PAUSE_COUNTERS if name in nic.counters}
        yield link_finding(
            "QOS-GLOBAL-PAUSE",
            Severity.ERROR,
            lk,
            f"{nic.endpoint} has 802.3x global pause on (rx {'on' if rx else 'off'}, tx {'on' if tx else 'off'}) "
            f"on a PFC link",
            {"global_pause": {"rx": rx, "tx": tx}, "pfc_enabled": sorted(pfc), "pause_frames": frames},
            {"pfc_enabled": sorted(port_pfc)},
            [NicFixes(nic).global_pause_off()],
            "a global pause stops every class of the link, lossy and CNP traffic included, and spreads congestion "
            "beyond the RoCE class PFC was set up to protect",
        )


CHECKS = (
    CheckSpec(
        "QOS-TRUST",
        "NIC and switch port classify RoCE differently (DSCP vs PCP), or a switch-link port does not trust DSCP",
        "Each end puts RoCE in a different priority, so PFC pauses the wrong class and RoCE is dropped. Covers "
        "NIC↔leaf links and every switch↔switch tier (each end against the fabric's switches; one finding per "
        "switch when many of its link ports are off).",
        "Trust DSCP on both ends: on the NIC mlnx_qos --trust dscp (MLNX_OFED) or a DSCP APP entry (dcb app on "
        "upstream mlx5, niccli apptlv on Broadcom); on the switch the DSCP map THAT switch's other ports use "
        "(created first when it has none): PORT_QOS_MAP.dscp_to_tc_map on SONiC, qos trust dscp on EOS, the "
        "port bound to a DSCP-trusting mapping profile on NVUE. Where the NIC's DCBX is firmware controlled the "
        "fix hands DCBX to the OS first (mlnx_qos -d os).",
        check_trust,
    ),
    CheckSpec(
        "QOS-PFC-MISMATCH",
        "PFC priorities differ between the two ends of a link (NIC↔switch or switch↔switch)",
        "A priority that is lossless on one end only loses packets under congestion; RoCE then retransmits. "
        "Covers NIC↔leaf links and every switch↔switch tier.",
        "Enable PFC on the same priorities on both ends (mlnx_qos --pfc, dcb pfc or niccli pfc on the NIC, "
        "PORT_QOS_MAP.pfc_enable on SONiC, the port bound to its own PFC profile unifab-pfc-<prios>-<m>m on "
        "NVUE). A NIC PFC change toggles its link: the fix drains the node in Slurm first and resumes it after.",
        check_pfc_mismatch,
    ),
    CheckSpec(
        "QOS-PFC-LOSSY-ROCE",
        "The priority RoCE uses has PFC off on both ends of a link",
        "Both ends agree, but on a lossy class: RoCE is dropped under congestion and retransmits go-back-N.",
        "Enable PFC on the RoCE priority on the NIC (mlnx_qos --pfc, dcb pfc or niccli pfc; drained, as a PFC "
        "change toggles the link) and the switch port (pfc_enable; an own PFC profile on NVUE).",
        check_pfc_lossy_roce,
    ),
    CheckSpec(
        "QOS-DSCP-MAP",
        "RoCE DSCP maps to different classes on NIC and switch, or to a lossy class",
        "RoCE lands in a queue without PFC/ECN, or is paused on the wrong priority: drops and stalls. Covers "
        "NIC↔leaf links and switch↔switch links (a spine's map is judged against the fabric's RoCE TC); a "
        "switch's shared map is one finding naming every link behind it.",
        "Map the RoCE DSCP to the lossless priority on the NIC (mlnx_qos --dscp2prio, dcb app or niccli apptlv) "
        "and switch (that switch's own DSCP_TO_TC_MAP, qos map dscp on EOS).",
        check_dscp_map,
    ),
    CheckSpec(
        "QOS-TC-OVERRIDE",
        "A NIC's traffic_class override sends RoCE with another DSCP than the fabric's",
        "The global override silently rewrites every job's TOS (NCCL_IB_TC included) into a class the switches "
        "may treat as lossy.",
        "Write the fabric's tclass to /sys/class/infiniband/<dev>/tc/1/traffic_class (or clear it); the override "
        "exists on MLNX_OFED only.",
        check_tc_override,
    ),
    CheckSpec(
        "QOS-GLOBAL-PAUSE",
        "802.3x global pause is on where PFC runs",
        "Link-level pause freezes every class, not just RoCE: CNPs and lossy traffic stall behind it.",
        "Turn global pause off on the NIC (ethtool -A <if> rx off tx off) and the switch port; keep PFC.",
        check_global_pause,
    ),
    CheckSpec(
        "QOS-PFCWD",
        "PFC watchdog is off for a lossless priority on a switch port, does not break storms (action forward/"
        "alert), detects slower than the switch's configuration asks, or faster than it polls",
        "A stuck receiver turns into an endless pause storm that spreads through the fabric. Covers host-facing "
        "ports and both ends of every switch↔switch link. SONiC's pfcwd start_default scales detection, "
        "restoration and poll by ceil(PORT rows / 32) x 200 ms: such switches are held to the scaled values, "
        "others to the intent's pfc_watchdog. EOS's default stuck-queue action (errdisable) breaks a storm by "
        "taking the port, a host's rail, down; the evidence names it.",
        "Enable the PFC watchdog on every lossless priority with action drop (PORT_QOS_MAP.pfcwd_sw_enable and "
        "PFC_WD on SONiC, priority-flow-control pause watchdog port action drop on EOS), detection no longer than "
        "the switch's start_default values (else the intent's), and PFC_WD|GLOBAL POLL_INTERVAL no longer than the "
        "shortest detection time.",
        check_pfcwd,
    ),
)
