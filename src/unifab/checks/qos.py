"""Lossless-RoCE QoS checks on every NIC↔switch link: PFC, DSCP classification, ECN and MTU.

Each check compares both ends of a link with each other and with the fabric's baseline (the
majority of devices, see :class:`~unifab.checks.context.Baseline`), so that the finding's ``fix``
names the side that deviates rather than both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from unifab.checks.context import CheckContext, NicLink, roce_dscp_of
from unifab.checks.registry import CheckSpec
from unifab.model import Finding, Fix, Severity
from unifab.render import nic_mlx5, sonic

ROCE_HEADERS = 96  # GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (iboe_get_mtu)
IB_MTUS = (4096, 2048, 1024, 512, 256)


def roce_active_mtu(netdev_mtu: int) -> int | None:
    """RoCE path MTU the NIC negotiates for a netdev MTU (the largest IB MTU that fits)."""
    room = netdev_mtu - ROCE_HEADERS
    return next((m for m in IB_MTUS if m <= room), None)


def _prios(values: frozenset[int] | None) -> list[int] | None:
    return None if values is None else sorted(values)


def _finding(
    check: str,
    severity: Severity,
    lk: NicLink,
    message: str,
    nic_evidence: dict[str, Any],
    port_evidence: dict[str, Any],
    fixes: list[Fix],
    impact: str,
) -> Finding:
    nic, port = lk.nic, lk.port
    return Finding(
        check=check,
        severity=severity,
        subject={"kind": "link", "a": str(nic.endpoint), "b": str(port.endpoint)},
        message=message,
        evidence={
            "a": {"device": nic.host, "nic": nic.id, "netdev": nic.netdev, **nic_evidence},
            "b": {"device": port.switch, "port": port.id, **port_evidence},
        },
        fix=tuple(fixes),
        impact={"summary": impact},
        entities=(lk.link.id,),
    )


def check_pfc_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """NIC and switch port must enable PFC on exactly the same priorities."""
    want = ctx.baseline.pfc
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or nic_q.pfc_enabled == port_q.pfc_enabled:
            continue
        target = want if want is not None else nic_q.pfc_enabled
        fixes = []
        if nic_q.pfc_enabled != target:
            fixes.append(Fix(lk.nic.host, (nic_mlx5.pfc(lk.nic.netdev, target),)))
        if port_q.pfc_enabled != target:
            fixes.append(Fix(lk.port.switch, (sonic.pfc_enable(lk.port.name, target),)))
        unpaused = sorted(nic_q.pfc_enabled ^ port_q.pfc_enabled)
        yield _finding(
            "QOS-PFC-MISMATCH",
            Severity.CRITICAL,
            lk,
            f"PFC priorities differ: {lk.nic.endpoint} enables {sorted(nic_q.pfc_enabled)}, "
            f"{lk.port.endpoint} enables {sorted(port_q.pfc_enabled)}",
            {"pfc_enabled": sorted(nic_q.pfc_enabled)},
            {"pfc_enabled": sorted(port_q.pfc_enabled)},
            fixes,
            f"priorities {unpaused} are lossless on one end only: pause frames are ignored or never sent, "
            "so congestion drops RoCE packets and NICs fall into go-back-N retransmission",
        )


def check_dscp_map(ctx: CheckContext) -> Iterator[Finding]:
    """RoCE DSCP must land on the same priority/TC on the NIC and on the switch port it enters.

    A switch's DSCP map is shared by its ports, so when only the switch deviates the links behind
    one map entry are reported as one finding about that entry.
    """
    base = ctx.baseline
    switch_wide: dict[tuple[str, str, int, int | None], list[Finding]] = {}
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or nic_q.trust != "dscp":
            continue
        dscp = roce_dscp_of(lk.nic, base)
        nic_prio = nic_q.dscp2prio.get(dscp)
        switch_tc = port_q.dscp_to_tc.get(dscp)
        nic_off = base.nic_roce_prio is not None and nic_prio != base.nic_roce_prio
        switch_off = base.switch_roce_tc is not None and switch_tc != base.switch_roce_tc
        if not (nic_off or switch_off or nic_prio != switch_tc):
            continue
        fixes = []
        if nic_off and base.nic_roce_prio is not None:
            fixes.append(Fix(lk.nic.host, (nic_mlx5.dscp2prio(lk.nic.netdev, dscp, base.nic_roce_prio),)))
        fix_tc = base.switch_roce_tc if base.switch_roce_tc is not None else nic_prio
        if (switch_off or not nic_off) and fix_tc is not None and port_q.dscp_map_name:
            fixes.append(Fix(lk.port.switch, (sonic.dscp_to_tc(port_q.dscp_map_name, dscp, fix_tc),)))
        lossy = switch_tc is None or switch_tc not in port_q.pfc_enabled
        queue = port_q.tc_to_queue.get(switch_tc, switch_tc) if switch_tc is not None else None
        finding = _finding(
            "QOS-DSCP-MAP",
            Severity.CRITICAL if lossy else Severity.ERROR,
            lk,
            f"RoCE DSCP {dscp} goes to priority {nic_prio} on {lk.nic.endpoint} "
            f"but to TC {switch_tc} on {lk.port.endpoint}" + (" (lossy: PFC off)" if lossy else ""),
            {
                "roce_dscp": dscp,
                "trust": nic_q.trust,
                "priority": nic_prio,
                "pfc_enabled": sorted(nic_q.pfc_enabled),
            },
            {
                "dscp_to_tc_map": port_q.dscp_map_name,
                "tc": switch_tc,
                "pg": port_q.tc_to_pg.get(switch_tc) if switch_tc is not None else None,
                "queue": queue,
                "pfc_enabled": sorted(port_q.pfc_enabled),
            },
            fixes,
            "RoCE is queued and paused in a different class than the NIC expects"
            + ("; that class is lossy, so congestion drops RoCE packets" if lossy else ""),
        )
        if switch_off and not nic_off and port_q.dscp_map_name:
            switch_wide.setdefault((lk.port.switch, port_q.dscp_map_name, dscp, switch_tc), []).append(finding)
        else:
            yield finding
    for (switch, map_name, dscp, switch_tc), group in switch_wide.items():
        yield group[0] if len(group) == 1 else _merge_map_findings(switch, map_name, dscp, switch_tc, group)


def _merge_map_findings(switch: str, map_name: str, dscp: int, switch_tc: int | None, group: list[Finding]) -> Finding:
    """One finding for a switch map entry that misclassifies RoCE on many links."""
    first = group[0]
    lossy = any(f.severity is Severity.CRITICAL for f in group)
    links = sorted(e for f in group for e in f.entities)
    return Finding(
        check=first.check,
        severity=Severity.CRITICAL if lossy else first.severity,
        subject={"kind": "switch", "id": f"switch:{switch}", "config": f"DSCP_TO_TC_MAP|{map_name}"},
        message=f"{switch} maps RoCE DSCP {dscp} to TC {switch_tc} in DSCP_TO_TC_MAP|{map_name}"
        + (" (lossy: PFC off)" if lossy else "")
        + f"; {len(links)} host links enter through it",
        evidence={
            "a": {k: v for k, v in first.evidence["a"].items() if k not in ("device", "nic", "netdev")},
            "b": {"device": switch, **{k: v for k, v in first.evidence["b"].items() if k not in ("device", "port")}},
            "links": links,
        },
        fix=first.fix,
        impact={**first.impact, "links": len(links)},
        entities=tuple(links),
    )


def check_ecn_off(ctx: CheckContext) -> Iterator[Finding]:
    """ECN must mark the RoCE queue toward the NIC, and the NIC must react (RP) and notify (NP)."""
    base = ctx.baseline
    prio = base.nic_roce_prio
    for lk in ctx.nic_links:
        nic_q, port_q = lk.nic.qos, lk.port.qos
        if nic_q is None or port_q is None or base.switch_roce_tc is None:
            continue
        queue_index = port_q.tc_to_queue.get(base.switch_roce_tc, base.switch_roce_tc)
        queue = port_q.queues.get(queue_index)
        switch_marks = queue is not None and queue.ecn_enabled
        np_on = None if nic_q.ecn_np_enabled is None or prio is None else prio in nic_q.ecn_np_enabled
        rp_on = None if nic_q.ecn_rp_enabled is None or prio is None else prio in nic_q.ecn_rp_enabled
        if switch_marks and np_on is not False and rp_on is not False:
            continue
        fixes: list[Fix] = []
        nic_cmds = [
            nic_mlx5.ecn_enable(lk.nic.netdev, pt, prio)
            for pt, on in (("roce_np", np_on), ("roce_rp", rp_on))
            if on is False and prio is not None
        ]
        if nic_cmds:
            fixes.append(Fix(lk.nic.host, tuple(nic_cmds)))
        off = [name for name, on in (("NIC notification point", np_on), ("NIC reaction point", rp_on)) if on is False]
        if not switch_marks:
            fixes.append(
                Fix(
                    lk.port.switch,
                    (sonic.queue_wred(lk.port.name, queue_index, base.roce_wred_profile or "AZURE_LOSSLESS"),),
                )
            )
            off.insert(0, f"switch queue {queue_index} marking")
        yield _finding(
            "QOS-ECN-OFF",
            Severity.ERROR,
            lk,
            f"ECN for RoCE is off between {lk.nic.endpoint} and {lk.port.endpoint}: {', '.join(off)}",
            {
                "priority": prio,
                "roce_np_enabled": _prios(nic_q.ecn_np_enabled),
                "roce_rp_enabled": _prios(nic_q.ecn_rp_enabled),
            },
            {
                "tc": base.switch_roce_tc,
                "queue": queue_index,
                "wred_profile": queue.wred_profile if queue else None,
                "ecn_marking": switch_marks,
            },
            fixes,
            "without ECN marks and CNPs DCQCN never slows senders down, so congestion is handled by PFC "
            "alone: pause storms, head-of-line blocking and victim flows",
        )


def check_mtu(ctx: CheckContext) -> Iterator[Finding]:
    """Switch port MTU must carry the NIC's frames, and the NIC must run the fabric's MTU."""
    base = ctx.baseline
    for lk in ctx.nic_links:
        nic_mtu, sw_mtu = lk.nic.mtu, lk.port.mtu
        if nic_mtu is None or sw_mtu is None:
            continue
        too_small_switch = sw_mtu < nic_mtu
        nic_below = base.nic_mtu is not None and nic_mtu < base.nic_mtu
        if not (too_small_switch or nic_below):
            continue
        fixes = []
        if nic_below and base.nic_mtu is not None:
            fixes.append(Fix(lk.nic.host, (nic_mlx5.mtu(lk.nic.netdev, base.nic_mtu),)))
        want_sw = max(base.switch_mtu or 0, base.nic_mtu or 0, nic_mtu)
        if sw_mtu < want_sw and (too_small_switch or (base.switch_mtu or 0) > sw_mtu):
            fixes.append(Fix(lk.port.switch, (sonic.port_mtu(lk.port.name, want_sw),)))
        roce = roce_active_mtu(nic_mtu)
        if too_small_switch:
            message = f"{lk.port.endpoint} MTU {sw_mtu} is below {lk.nic.endpoint} MTU {nic_mtu}"
            impact = "frames larger than the switch MTU are dropped: RoCE messages time out and retransmit"
        else:
            message = f"{lk.nic.endpoint} MTU {nic_mtu} is below the fabric's {base.nic_mtu} (RoCE MTU {roce})"
            impact = f"RoCE path MTU falls to {roce} bytes for every peer of this NIC, cutting bandwidth"
        yield _finding(
            "QOS-MTU",
            Severity.CRITICAL if too_small_switch else Severity.WARNING,
            lk,
            message,
            {"mtu": nic_mtu, "roce_active_mtu": roce},
            {"mtu": sw_mtu},
            fixes,
            impact,
        )


CHECKS = (
    CheckSpec(
        "QOS-PFC-MISMATCH",
        "PFC priorities differ between a NIC and its switch port",
        "A priority that is lossless on one end only loses packets under congestion; RoCE then retransmits.",
        "Enable PFC on the same priorities on both ends (mlnx_qos --pfc on the NIC, PORT_QOS_MAP.pfc_enable on SONiC).",
        check_pfc_mismatch,
    ),
    CheckSpec(
        "QOS-DSCP-MAP",
        "RoCE DSCP maps to different classes on NIC and switch, or to a lossy class",
        "RoCE lands in a queue without PFC/ECN, or is paused on the wrong priority: drops and stalls.",
        "Map the RoCE DSCP to the lossless priority on the NIC (mlnx_qos --dscp2prio) and switch (DSCP_TO_TC_MAP).",
        check_dscp_map,
    ),
    CheckSpec(
        "QOS-ECN-OFF",
        "ECN marking or DCQCN is off for RoCE on a link",
        "Without ECN, DCQCN cannot throttle senders; congestion turns into PFC storms and victim flows.",
        "Attach the ECN WRED profile to the RoCE queue (QUEUE.wred_profile) and enable roce_np/roce_rp on the NIC.",
        check_ecn_off,
    ),
    CheckSpec(
        "QOS-MTU",
        "Switch port MTU below the NIC's, or a NIC below the fabric's MTU",
        "Oversized frames are dropped; a small NIC MTU lowers the RoCE path MTU for all its peers.",
        "Set the switch port MTU ≥ the NIC MTU (config interface mtu) and the NIC to the fabric MTU (ip link).",
        check_mtu,
    ),
)
