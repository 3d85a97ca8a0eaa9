"""Physical agreement on each link: speed, FEC and MTU on both ends, the cable length headroom is sized for."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from unifab.checks.context import CheckContext, majority
from unifab.checks.findings import link_finding, port_link_finding, sides_to_fix
from unifab.checks.registry import CheckSpec
from unifab.model import Finding, Fix, Port, Severity
from unifab.platforms import PLATFORMS, clamp_mtu
from unifab.qos.headroom import sonic_cable_length_m
from unifab.render.nic_cli import NicFixes

__all__ = [
    "CHECKS",
    "IB_MTUS",
    "ROCE_HEADERS",
    "check_cable_len",
    "check_link_fec",
    "check_link_speed",
    "check_mtu",
    "check_uplink_mtu",
    "port_link_check",
    "roce_active_mtu",
]

ROCE_HEADERS = 96  # GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (iboe_get_mtu)
IB_MTUS = (4096, 2048, 1024, 512, 256)


def roce_active_mtu(netdev_mtu: int) -> int | None:
    """RoCE path MTU the NIC negotiates for a netdev MTU (the largest IB MTU that fits)."""
    room = netdev_mtu - ROCE_HEADERS
    return next((m for m in IB_MTUS if m <= room), None)


def check_mtu(ctx: CheckContext) -> Iterator[Finding]:
    """Switch port MTU must carry the NIC's frames, the NIC must run the fabric's MTU, and switch links agree."""
    yield from check_uplink_mtu(ctx)
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
            fixes.append(NicFixes(lk.nic).mtu(base.nic_mtu))
        want_sw = max(base.switch_mtu or 0, base.nic_mtu or 0, nic_mtu)
        if sw_mtu < want_sw and (too_small_switch or (base.switch_mtu or 0) > sw_mtu):
            fixes.append(Fix(lk.port.switch, ctx.cli(lk.port.switch).port_mtu(lk.port.name, want_sw)))
        roce = roce_active_mtu(nic_mtu)
        severity = Severity.CRITICAL
        if too_small_switch:
            message = f"{lk.port.endpoint} MTU {sw_mtu} is below {lk.nic.endpoint} MTU {nic_mtu}"
            impact = "frames larger than the switch MTU are dropped: RoCE messages time out and retransmit"
        else:
            severity, message, impact = _nic_below_fabric(str(lk.nic.endpoint), nic_mtu, base.nic_mtu or nic_mtu)
        yield link_finding(
            "QOS-MTU",
            severity,
            lk,
            message,
            {"mtu": nic_mtu, "roce_active_mtu": roce},
            {"mtu": sw_mtu},
            fixes,
            impact,
        )


def _nic_below_fabric(nic: str, nic_mtu: int, fabric_mtu: int) -> tuple[Severity, str, str]:
    """Severity, message and impact of a NIC whose MTU is below the fabric's (the switch carries its frames).

    RoCE runs at the largest IB MTU that fits the netdev MTU (:func:`roce_active_mtu`), so only a NIC MTU that
    lowers that IB MTU (1500 → 1024 in a 9000 fabric) costs RoCE anything; 5000 in a 9000 fabric still gives
    4096, the fabric's own RoCE MTU.
    """
    roce, fabric_roce = roce_active_mtu(nic_mtu), roce_active_mtu(fabric_mtu)
    message = f"{nic} MTU {nic_mtu} is below the fabric's {fabric_mtu} (RoCE MTU {roce})"
    if roce is None:
        return (
            Severity.WARNING,
            f"{nic} MTU {nic_mtu} is below the fabric's {fabric_mtu} (too small for any RoCE MTU)",
            f"MTU {nic_mtu} leaves no room for the smallest RoCE MTU ({IB_MTUS[-1]} + {ROCE_HEADERS} bytes of "
            "headers): RoCE cannot run on this NIC",
        )
    if fabric_roce is not None and roce < fabric_roce:
        # a lower RoCE MTU halves (or worse) the payload of every RoCE packet to and from this NIC: a real
        # bandwidth cost for the collective, not only drift
        return (
            Severity.WARNING,
            message,
            f"RoCE path MTU falls to {roce} bytes for every peer of this NIC, cutting bandwidth",
        )
    # INFO, not WARNING: a NIC MTU below the switch's drops nothing by itself (the switch carries every frame the
    # NIC sends) and RoCE keeps its MTU. What differs is non-RoCE IP traffic: this NIC's own packets are smaller,
    # and datagrams larger than its MTU from peers at the fabric MTU are dropped on its receive side (TCP is
    # spared, its MSS is negotiated from the MTU; UDP and other non-TCP IP above the NIC MTU is not). Drift from
    # the fabric to fix, not a fault of the RoCE fabric.
    return (
        Severity.INFO,
        f"{nic} MTU {nic_mtu} is below the fabric's {fabric_mtu}; RoCE MTU stays {roce}",
        f"RoCE traffic is unaffected (RoCE MTU stays {roce}, as at the fabric's {fabric_mtu}); non-RoCE traffic "
        f"above {nic_mtu} bytes is what differs: this NIC's packets are smaller than its peers', and non-TCP "
        f"datagrams above {nic_mtu} bytes from peers at MTU {fabric_mtu} are dropped on receive (TCP negotiates "
        "its segment size from the MTU)",
    )


def _switch_cable_setting(ctx: CheckContext, switch: str, metres: int) -> int:
    """What the switch should be configured with for a ``metres`` cable: on SONiC's traditional buffer model the
    ``pg_profile_lookup.ini`` bucket the cable rounds up to (buffermgrd has no profile for other lengths)."""
    sw = ctx.fabric.switches.get(switch)
    if sw is None or sw.os != "sonic":
        return metres
    return sonic_cable_length_m(metres, sw.hwsku, sw.buffers.model if sw.buffers is not None else None)


def check_cable_len(ctx: CheckContext) -> Iterator[Finding]:
    """Cable length configured for headroom on NIC and switch must match the cable that is there.

    The plan's length (rounded up to whole metres) is the truth when known; otherwise the two ends
    must at least agree. Shorter than real undersizes PFC headroom (drops); longer wastes buffer. A SONiC
    switch on the traditional buffer model is also right with its table's bucket for the cable (5 m for a 3 m
    one), and a fix writes that bucket, the only lengths its buffermgrd has a lossless profile for.
    """
    for lk in ctx.nic_links:
        nic_len = lk.nic.qos.cable_len_m if lk.nic.qos else None
        sw_len = lk.port.qos.cable_len_m if lk.port.qos else None
        plan = math.ceil(lk.link.cable_m) if lk.link.cable_m is not None else None
        if plan is not None:
            reference = plan
        elif nic_len is not None and sw_len is not None:
            # without a plan the switch is the reference, unless it holds the bucket the NIC's length rounds to
            agrees = _switch_cable_setting(ctx, lk.port.switch, nic_len) == sw_len
            reference = nic_len if agrees else sw_len
        else:
            continue
        sw_want = _switch_cable_setting(ctx, lk.port.switch, reference)
        wrong: dict[str, int] = {}
        if nic_len is not None and nic_len != reference:
            wrong["nic"] = nic_len
        if plan is not None and sw_len is not None and sw_len not in (reference, sw_want):
            wrong["switch"] = sw_len
        if not wrong:
            continue
        short = any(v < reference for v in wrong.values())
        fixes = []
        if "nic" in wrong:
            fixes.append(NicFixes(lk.nic).cable_len(reference))
        if "switch" in wrong:
            fixes.append(Fix(lk.port.switch, ctx.cli(lk.port.switch).cable_length(lk.port.name, sw_want)))
        against = f"the planned {plan} m cable" if plan is not None else f"the switch's {sw_len} m"
        yield link_finding(
            "QOS-CABLE-LEN",
            Severity.ERROR if short else Severity.WARNING,
            lk,
            "cable length for headroom differs from "
            + against
            + ": "
            + ", ".join(f"{side} {value} m" for side, value in wrong.items()),
            {"cable_len_m": nic_len, "planned_m": lk.link.cable_m},
            {"cable_len_m": sw_len, "planned_m": lk.link.cable_m, "expected_m": sw_want},
            fixes,
            "headroom sized for a shorter cable overflows before the pause takes effect (drops on a lossless class)"
            if short
            else "headroom sized for a longer cable wastes shared buffer that bursts need",
        )


def port_link_check(
    ctx: CheckContext,
    check: str,
    field: str,
    value: Callable[[Port], Any],
    severity: Severity,
    fix: Callable[[Port, Any], tuple[str, ...]],
    impact: str,
    prefer: Callable[[Any, Any], Any] = max,
    show: Callable[[Any], str] = str,
    label: str | None = None,
) -> Iterator[Finding]:
    """Both ends of every switch↔switch link must agree on ``field``; fix the end off the fabric's value."""
    links = ctx.port_links
    key = f"{check}:{field}"
    if key in ctx.fabric_values:
        fabric_value = ctx.fabric_values[key]
    else:
        fabric_value = majority(v for pl in links for v in (value(pl.a), value(pl.b)))
    for pl in links:
        a_value, b_value = value(pl.a), value(pl.b)
        if a_value is None or b_value is None or a_value == b_value:
            continue
        wrong = sides_to_fix(pl, a_value, b_value, fabric_value)
        target = fabric_value if fabric_value is not None else prefer(a_value, b_value)
        yield port_link_finding(
            check,
            severity,
            pl,
            f"{label or field} mismatch: {pl.a.endpoint} has {show(a_value)}, {pl.b.endpoint} has {show(b_value)}",
            field,
            a_value,
            b_value,
            [Fix(p.switch, fix(p, target)) for p in wrong],
            impact,
            ctx.path_impact(pl),
        )


def check_link_speed(ctx: CheckContext) -> Iterator[Finding]:
    """Both ends of a switch↔switch link must run the same speed."""
    yield from port_link_check(
        ctx,
        "LINK-SPEED",
        "speed_mbps",
        lambda p: p.speed_mbps,
        Severity.ERROR,
        lambda p, v: ctx.cli(p.switch).port_speed(p.name, v),
        "the link stays down, or comes up at the lower speed and its ECMP share overloads: congestion and PFC "
        "pauses on the paths through it",
        show=lambda v: f"{v // 1000}G",
        label="speed",
    )


def check_link_fec(ctx: CheckContext) -> Iterator[Finding]:
    """Both ends of a switch↔switch link must use the same FEC."""
    yield from port_link_check(
        ctx,
        "LINK-FEC",
        "fec",
        lambda p: p.fec,
        Severity.ERROR,
        lambda p, v: ctx.cli(p.switch).port_fec(p.name, v),
        "a FEC mismatch keeps the link down or drowns it in symbol errors: CRC drops that RoCE can only recover "
        "by retransmission",
        label="FEC",
    )


def _settable_mtu(ctx: CheckContext, port: Port, mtu: int) -> int:
    """The MTU ``port``'s switch sets when asked for ``mtu`` (its platform's maximum at most)."""
    found = PLATFORMS.get(ctx.os_of(port.switch) or "")
    return mtu if found is None else clamp_mtu(found, mtu)[0]


def check_uplink_mtu(ctx: CheckContext) -> Iterator[Finding]:
    """Both ends of a switch↔switch link must carry the same MTU.

    The target is the fabric's switch MTU, capped at what both ends' platforms take (:func:`clamp_mtu`): on a
    SONiC↔EOS link of a 9216 fabric both ends go to 9214, the fix lowers the SONiC end, never asks EOS for a
    9216 it cannot set. CRITICAL when the smaller end is below the hosts' MTU (their frames are dropped);
    WARNING when both ends carry every host frame (9214 against 9216 under hosts at 9000).
    """
    key = "QOS-MTU:mtu"
    links = ctx.port_links
    if key in ctx.fabric_values:
        fabric_value = ctx.fabric_values[key]
    else:
        fabric_value = majority(v for pl in links for v in (pl.a.mtu, pl.b.mtu))
    host_mtu = ctx.baseline.nic_mtu
    for pl in links:
        a_mtu, b_mtu = pl.a.mtu, pl.b.mtu
        if a_mtu is None or b_mtu is None or a_mtu == b_mtu:
            continue
        target = fabric_value if isinstance(fabric_value, int) else max(a_mtu, b_mtu)
        target = _settable_mtu(ctx, pl.b, _settable_mtu(ctx, pl.a, target))  # what both ends can take
        wrong = [p for p, v in ((pl.a, a_mtu), (pl.b, b_mtu)) if v != target]
        small = min(a_mtu, b_mtu)
        if host_mtu is None or small < host_mtu:
            severity = Severity.CRITICAL
            impact = "frames above the smaller MTU are dropped in one direction: RoCE messages time out and retransmit"
        else:
            # no data frame is lost: every packet a host sends (at most its MTU) fits both ends. What a mismatch
            # breaks is above that, and routing protocols that compare MTUs, so it is worth fixing, not an outage.
            severity = Severity.WARNING
            impact = (
                f"both ends carry every host frame (hosts at MTU {host_mtu}), so RoCE is not affected; packets "
                f"above {small} bytes are dropped in one direction, and routing protocols that compare MTUs "
                "refuse the adjacency (OSPF stays in ExStart, IS-IS pads its hellos to the MTU)"
            )
        yield port_link_finding(
            "QOS-MTU",
            severity,
            pl,
            f"MTU mismatch: {pl.a.endpoint} has {a_mtu}, {pl.b.endpoint} has {b_mtu}",
            "mtu",
            a_mtu,
            b_mtu,
            [Fix(p.switch, ctx.cli(p.switch).port_mtu(p.name, target)) for p in wrong],
            impact,
            ctx.path_impact(pl),
        )


CHECKS = (
    CheckSpec(
        "LINK-SPEED",
        "The two ends of a link run different speeds",
        "The link stays down or runs at the lower speed, and the ECMP paths through it congest.",
        "Set the same speed on both ends (PORT.speed on SONiC).",
        check_link_speed,
    ),
    CheckSpec(
        "LINK-FEC",
        "The two ends of a link use different FEC modes",
        "The link stays down or takes symbol errors that become CRC drops and RoCE retransmissions.",
        "Set the same FEC on both ends (rs for 400G and faster PAM4 links).",
        check_link_fec,
    ),
    CheckSpec(
        "QOS-MTU",
        "Switch port MTU below the NIC's, or a NIC below the fabric's MTU",
        "Oversized frames are dropped; a small NIC MTU lowers the RoCE path MTU for all its peers.",
        "Set the switch port MTU ≥ the NIC MTU (config interface mtu; EOS tops out at 9214) and the NIC to the "
        "fabric MTU (ip link).",
        check_mtu,
    ),
    CheckSpec(
        "QOS-CABLE-LEN",
        "Cable length configured for PFC headroom differs between NIC, switch and plan",
        "Headroom computed for the wrong length overflows (too short) or wastes buffer (too long).",
        "Set the real length: mlnx_qos --cable_len (dcb pfc delay on upstream mlx5) on the NIC, CABLE_LENGTH on "
        "SONiC, the port bound to a PFC profile of that cable-length on NVUE; Broadcom NICs have no cable-length "
        "setting. Every switch fix ends with its save step (config save -y, write memory, nv config save).",
        check_cable_len,
    ),
)
