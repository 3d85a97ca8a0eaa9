"""TOPO-UPLINKS: a leaf with fewer uplinks up than planned is oversubscribed.

A leaf is a switch with host cables (planned or seen); its uplinks are its cables to switches that are not
leaves (spines). The plan (``plan/cabling.csv``) gives the uplinks it should have; LLDP gives the ones that
are up (a cable LLDP sees on both sides is up). When fewer are up than planned, the finding gives the
oversubscription the leaf runs at — downlink bandwidth : uplink bandwidth up — against the planned one, e.g.
``1.33:1 instead of 1:1``. Bandwidth is the leaf ports' speed; with a port's speed unknown, ratios count ports.

Leaves that report no LLDP at all are skipped (LLDP was not collected, nothing is known to be down), as are
bundles without a plan. Linear: one pass over the links indexes them by leaf.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from unifab.checks.context import CheckContext
from unifab.checks.registry import CheckSpec
from unifab.checks.topology_common import lldp_verify
from unifab.model import Endpoint, Fabric, Finding, Fix, Link, Severity

__all__ = ["CHECKS", "check_uplinks", "ratio_text"]


@dataclass(slots=True)
class _Leaf:
    down: set[str] = field(default_factory=set)  # leaf ports cabled to hosts (plan or LLDP)
    planned_up: dict[str, Link] = field(default_factory=dict)  # by link id
    seen_up: dict[str, Link] = field(default_factory=dict)
    reports_lldp: bool = False


def _index(fabric: Fabric) -> dict[str, _Leaf]:
    leaves: dict[str, _Leaf] = {}
    switch_links: list[Link] = []
    for lk in fabric.links:
        a_sw, b_sw = lk.a.node in fabric.switches, lk.b.node in fabric.switches
        if a_sw and b_sw:
            switch_links.append(lk)
            continue
        for end, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if end.node in fabric.switches and other.node in fabric.hosts:
                leaf = leaves.setdefault(end.node, _Leaf())
                leaf.down.add(end.port)
                leaf.reports_lldp |= "lldp" in lk.sources
    for lk in switch_links:
        for end, other in ((lk.a, lk.b), (lk.b, lk.a)):
            found = leaves.get(end.node)
            if found is None or other.node in leaves:
                continue
            if "plan" in lk.sources:
                found.planned_up[lk.id] = lk
            if "lldp" in lk.sources:
                found.seen_up[lk.id] = lk
                found.reports_lldp = True
    return leaves


def _leaf_end(link: Link, leaf: str) -> Endpoint:
    return link.a if link.a.node == leaf else link.b


def _bandwidth(fabric: Fabric, leaf: str, ports: list[str]) -> int | None:
    """Sum of the leaf ports' speeds in Mb/s; ``None`` when one is unknown."""
    total = 0
    for name in ports:
        port = fabric.port_at(Endpoint(leaf, name))
        if port is None or port.speed_mbps is None:
            return None
        total += port.speed_mbps
    return total


def ratio_text(down: float, up: float) -> str:
    """``down:up`` as ``X:1`` with at most two decimals (``1.33:1``); no uplink at all is ``no uplink``."""
    if up <= 0:
        return "no uplink"
    value = f"{down / up:.2f}".rstrip("0").rstrip(".")
    return f"{value}:1"


def check_uplinks(ctx: CheckContext) -> Iterator[Finding]:
    """Leaves with fewer uplinks up than the plan gives them, and the oversubscription that results."""
    fabric = ctx.fabric
    for name, leaf in sorted(_index(fabric).items()):
        planned, seen = len(leaf.planned_up), len(leaf.seen_up)
        if not leaf.reports_lldp or seen >= planned:
            continue
        down_ports = sorted(leaf.down)
        planned_ports = sorted(_leaf_end(lk, name).port for lk in leaf.planned_up.values())
        seen_ports = sorted(_leaf_end(lk, name).port for lk in leaf.seen_up.values())
        down_bw = _bandwidth(fabric, name, down_ports)
        plan_bw = _bandwidth(fabric, name, planned_ports)
        seen_bw = _bandwidth(fabric, name, seen_ports)
        if down_bw is None or plan_bw is None or seen_bw is None:
            down_bw, plan_bw, seen_bw, unit = len(down_ports), planned, seen, "ports"
        else:
            unit = "Mb/s"
        now, want = ratio_text(down_bw, seen_bw), ratio_text(down_bw, plan_bw)
        gone = sorted((lk for lk in leaf.planned_up.values() if "lldp" not in lk.sources), key=lambda lk: lk.id)
        cut = (
            f"{name}'s hosts reach the rest of the fabric over {seen} of {planned} planned uplinks "
            f"({now} instead of {want}): cross-leaf traffic congests, PFC pauses spread back to the hosts"
            if seen
            else f"{name} has no uplink up: its hosts reach no other leaf"
        )
        yield Finding(
            check="TOPO-UPLINKS",
            severity=Severity.ERROR if seen else Severity.CRITICAL,
            subject={"kind": "switch", "id": f"switch:{name}"},
            message=f"{name} has {seen} of {planned} planned uplinks up: oversubscribed {now} instead of {want}",
            evidence={
                "a": {
                    "device": name,
                    "downlinks": len(down_ports),
                    "downlink_bandwidth": down_bw,
                    "unit": unit,
                },
                "b": {
                    "device": name,
                    "uplinks_planned": planned,
                    "uplinks_up": seen,
                    "uplink_bandwidth_planned": plan_bw,
                    "uplink_bandwidth_up": seen_bw,
                    "not_up": [f"{lk.a} -- {lk.b}" for lk in gone],
                },
                "oversubscription": now,
                "planned_oversubscription": want,
                "plan": [f"{planned} uplinks, {want}"],
                "discovered": [f"{seen} uplinks up, {now}"],
            },
            fix=(Fix(name, tuple(c for lk in gone for c in lldp_verify(fabric, name, _leaf_end(lk, name).port))),),
            impact={"summary": cut, "action": "restore the missing uplinks (cable, optic, admin state)"},
            entities=tuple(lk.id for lk in gone),
        )


CHECKS = (
    CheckSpec(
        "TOPO-UPLINKS",
        "A leaf has fewer uplinks up than planned (oversubscription above the plan's)",
        "Cross-leaf traffic shares fewer uplinks: congestion, ECN marks and PFC pauses reach the hosts and "
        "collectives slow down.",
        "Restore the missing uplinks (cable, optic, admin state); the finding lists them and the ratio they cost.",
        check_uplinks,
    ),
)
