"""Cabled as planned: the plan's cables against the ones LLDP (or ibnetdiscover) sees, rails and link speed.

Every link in the fabric carries its sources: ``plan`` (planned cabling), ``lldp`` (discovered), or
both when the two agree. The diff is built from two indexes keyed by endpoint, so it runs in time
linear in links (no pairwise search):

* **TOPO-MISWIRED** — a planned cable that LLDP does not confirm, while one of its ends is seen cabled
  to another port. Planned cables whose ends are crossed with each other (a swap, or a longer cycle)
  are joined through the discovered cables they share into *one* finding naming all of them; a single
  cable moved to a free port is one finding. Its subject is the first planned cable (by link id), with the
  others' ids under ``with``. The entities are the **planned** link ids; the discovered
  cables are in the evidence. The discovered cables of a miswire are never reported again as
  TOPO-UNEXPECTED, nor the planned ones as TOPO-MISSING.
* **TOPO-RAIL** — rail alignment. A host NIC's rail is the index of the GPU whose closest NIC it is
  (``Gpu.nic``), else the number in its name (``mlx5_<i>``, ``eth<i>``); a leaf's rail is the ``-r<i>``
  suffix of its name (``leaf-su1-r3``, ``ib-leaf-r3``). A NIC must reach a leaf of its own rail. A
  miswire that puts a NIC on another rail's leaf is reported as TOPO-RAIL instead of TOPO-MISWIRED (the
  same single finding, the worse consequence). A planned and confirmed cable that crosses rails (a
  plan error), or a discovered one when the bundle has no plan, is also TOPO-RAIL.
* **TOPO-MISSING** — a planned cable with no discovered cable at either end, when both end devices
  were collected and at least one of them reports LLDP neighbours at all; or when its host end is dark
  (RDMA port DOWN; on a RoCE port also a netdev without carrier in ``ip -d link``, see
  :func:`~unifab.checks.topology_common.dark_reason`), whether or not the far end was collected ("host end
  dark, far end not collected"). A dark port is evidence of its own: it needs no LLDP from either side.
* **TOPO-UNVERIFIED** — a planned cable whose far end was not collected and whose collected end shows no
  LLDP neighbour on it while it shows neighbours on its other ports, and is not dark. The cable may be
  there (LLDP off on the far port, or a NIC firmware LLDP agent consuming the frames) or not: a warning,
  not TOPO-MISSING, because nothing says it is absent. A cable that one end's LLDP sees is verified, even
  when the other end was not collected: the frames name the far device and port.
* **TOPO-UNEXPECTED** — a discovered cable the plan does not have and whose ends the plan leaves
  free, when a plan exists.
* **TOPO-DEGRADED** — a discovered link running below what its peers run. A link's speed is the lower
  of its two ends' speeds (``Nic.speed_mbps``, ``Port.speed_mbps``; an IB link's rate is lanes times
  lane rate, so ``1xHDR`` is 50 Gb/s). The expected speed is the most common speed of the same kind of
  link (host links, switch links) on the same switch, or fabric-wide (per fabric kind: RoCE and InfiniBand
  tiers never set each other's expectation) when the switch has fewer than three such links; an IB link's
  message names its trained width and speed (``1X HDR``). A switch link whose two ends disagree is
  LINK-SPEED's, not this check's. An IB cable the plan gives a width and speed (``plan/ibnetdiscover.txt``,
  ``IbFabric.planned_rates``) is judged against the plan instead: fewer lanes or a slower lane than planned,
  even when every peer runs as slow (a whole leaf at HDR where NDR was planned). The fix is physical (reseat,
  replace); its commands show each end's speed and optic after it (on IB, ``ibportstate <lid> <port>`` and its
  ``reset``).

TOPO-PCIE-AFFINITY and TOPO-NCCL-HCA (:mod:`unifab.checks.topology_nccl`), TOPO-UPLINKS
(:mod:`unifab.checks.topology_uplinks`) and COVERAGE (:mod:`unifab.checks.topology_coverage`, what a planned
device that was not collected leaves unchecked) complete the catalog below. ``docs/topology.md`` states the
evidence rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from unifab.checks.context import CheckContext, majority
from unifab.checks.ib import below_plan, planned_rate
from unifab.checks.memo import run_memo
from unifab.checks.registry import CheckSpec
from unifab.checks.topology_common import dark_reason, host_port_dark, leaf_rail, lldp_verify, nic_rail
from unifab.checks.topology_coverage import CHECKS as COVERAGE_CHECKS
from unifab.checks.topology_coverage import collect_fix, shown
from unifab.checks.topology_nccl import CHECKS as NCCL_CHECKS
from unifab.checks.topology_uplinks import CHECKS as UPLINK_CHECKS
from unifab.errors import UsageError
from unifab.model import Endpoint, Fabric, Finding, Fix, IbPort, Link, Port, Severity
from unifab.render.host_script import netdev as hs_netdev
from unifab.render.host_script import q
from unifab.render.nic_cli import NicFixes

__all__ = [
    "CABLING_CHECKS",
    "CHECKS",
    "CablingDiff",
    "cabling_diff",
    "leaf_rail",
    "nic_rail",
    "rail_violation",
    "topology_diff",
]

MIN_LINKS_FOR_LOCAL_MAJORITY = 3

CABLING_CHECKS = ("TOPO-MISSING", "TOPO-UNVERIFIED", "TOPO-UNEXPECTED", "TOPO-MISWIRED", "TOPO-RAIL")


def _cable(link: Link) -> str:
    return f"{link.a} -- {link.b}"


@dataclass(slots=True)
class _Group:
    """Planned cables whose ends are crossed, and the discovered cables that cross them."""

    planned: dict[str, Link] = field(default_factory=dict)
    discovered: dict[str, Link] = field(default_factory=dict)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _host_and_switch(fabric: Fabric, link: Link) -> tuple[Endpoint, Endpoint] | None:
    """(host end, switch end) of a host cable, ``None`` for a switch↔switch or unknown cable."""
    for host_end, switch_end in ((link.a, link.b), (link.b, link.a)):
        if host_end.node in fabric.hosts and host_end.node not in fabric.switches:
            return host_end, switch_end
    for host_end, switch_end in ((link.a, link.b), (link.b, link.a)):
        if switch_end.node in fabric.switches and host_end.node not in fabric.switches:
            return host_end, switch_end
    return None


def rail_violation(fabric: Fabric, link: Link) -> tuple[Endpoint, int, str, int] | None:
    """(NIC end, its rail, leaf, the leaf's rail) when a host cable lands on another rail's leaf."""
    ends = _host_and_switch(fabric, link)
    if ends is None:
        return None
    host_end, switch_end = ends
    want, got = nic_rail(fabric, host_end), leaf_rail(switch_end.node)
    if want is None or got is None or want == got:
        return None
    return host_end, want, switch_end.node, got


@dataclass(slots=True)
class CablingDiff:
    """Plan vs. discovery, one entry per root cause."""

    missing: list[Link] = field(default_factory=list)
    missing_why: dict[str, str] = field(default_factory=dict)  # link id -> what the host end adds (dark port)
    one_sided: set[str] = field(default_factory=set)  # missing link ids that only their dark host end tells
    unverified: list[tuple[Link, Endpoint]] = field(default_factory=list)  # with its collected (silent) end
    unexpected: list[Link] = field(default_factory=list)
    crossed: list[_Group] = field(default_factory=list)
    rail_confirmed: list[Link] = field(default_factory=list)  # discovered cables on a wrong rail, not miswires
    lldp_peers: dict[Endpoint, list[str]] = field(default_factory=dict)  # what LLDP sees at each end


def cabling_diff(fabric: Fabric) -> CablingDiff:
    """Index both views by endpoint, then walk each link once (plus a union-find over crossed cables)."""
    diff = CablingDiff()
    links = sorted(fabric.links, key=lambda lk: lk.id)
    has_plan = any("plan" in lk.sources for lk in links)
    seen_at: dict[Endpoint, list[Link]] = {}
    planned_only_at: dict[Endpoint, Link] = {}
    reporting: set[str] = set()  # nodes that report at least one discovered cable
    for lk in links:
        if "lldp" in lk.sources:
            for end in (lk.a, lk.b):
                seen_at.setdefault(end, []).append(lk)
                diff.lldp_peers.setdefault(end, []).append(str(_other(lk, end)))
                reporting.add(end.node)
        elif "plan" in lk.sources:
            for end in (lk.a, lk.b):
                planned_only_at[end] = lk
    collected = fabric.hosts.keys() | fabric.switches.keys()

    uf = _UnionFind()
    crossing: dict[str, list[Link]] = {}  # planned-only link id -> discovered cables at its ends
    for lk in links:
        if lk.sources != frozenset({"plan"}):
            continue
        found = [d for end in (lk.a, lk.b) for d in seen_at.get(end, ())]
        if not found:
            _unseen(fabric, lk, collected, reporting, diff)
            continue
        crossing[lk.id] = found
        uf.find(lk.id)
        for d in found:
            for end in (d.a, d.b):
                other = planned_only_at.get(end)
                if other is not None and other.id != lk.id:
                    uf.union(lk.id, other.id)

    groups: dict[str, _Group] = {}
    for lk in links:
        if lk.id not in crossing:
            continue
        group = groups.setdefault(uf.find(lk.id), _Group())
        group.planned[lk.id] = lk
        for d in crossing[lk.id]:
            group.discovered[d.id] = d
    diff.crossed = [groups[k] for k in sorted(groups)]

    for lk in links:
        if lk.sources != frozenset({"lldp"}):
            if "lldp" in lk.sources and rail_violation(fabric, lk) is not None:
                diff.rail_confirmed.append(lk)
            continue
        if any(end in planned_only_at for end in (lk.a, lk.b)):
            continue  # part of a miswire
        if has_plan:
            diff.unexpected.append(lk)
        elif rail_violation(fabric, lk) is not None:
            diff.rail_confirmed.append(lk)
    return diff


def _dark_end(fabric: Fabric, link: Link) -> Endpoint | None:
    """The host end of ``link`` whose port is dark (RDMA port DOWN, or no carrier in ``ip -d link``), if either is."""
    for end in (link.a, link.b):
        nic = fabric.nic_at(end)
        if nic is not None and host_port_dark(nic):
            return end
    return None


def _unseen(fabric: Fabric, lk: Link, collected: set[str], reporting: set[str], diff: CablingDiff) -> None:
    """Judge a planned cable that no LLDP sees, from what each end can tell (see the module docstring)."""
    both = lk.a.node in collected and lk.b.node in collected
    dark = _dark_end(fabric, lk)
    if both and (lk.a.node in reporting or lk.b.node in reporting):
        diff.missing.append(lk)
        if dark is not None:
            diff.missing_why[lk.id] = f"host end {dark} dark ({_state(fabric, dark)})"
        return
    if dark is not None:
        far = _other(lk, dark)
        far_text = "far end reports no LLDP" if far.node in collected else "far end not collected"
        diff.missing.append(lk)
        diff.missing_why[lk.id] = f"host end {dark} dark ({_state(fabric, dark)}), {far_text}"
        diff.one_sided.add(lk.id)
        return
    if both:
        return
    for near in (lk.a, lk.b):
        far = _other(lk, near)
        known = fabric.nic_at(near) is not None or fabric.port_at(near) is not None
        if known and near.node in reporting and far.node not in collected:
            diff.unverified.append((lk, near))
            return


def _state(fabric: Fabric, end: Endpoint) -> str:
    """Why a dark host end is dark: ``RDMA port DOWN``, or what ``ip -d link`` says (``no carrier: ...``)."""
    nic = fabric.nic_at(end)
    return (dark_reason(nic) or "RDMA port unknown") if nic is not None else "RDMA port unknown"


def _recable(fabric: Fabric, links: list[Link]) -> tuple[Fix, ...]:
    """Cabling is fixed at the switch end (the recabling itself is in ``recable``); the fix is the check after it."""
    by_device: dict[str, list[str]] = {}
    for lk in links:
        end = _switch_end(fabric, lk)
        by_device.setdefault(end.node, []).extend(lldp_verify(fabric, end.node, end.port))
    return tuple(Fix(device, tuple(lines)) for device, lines in sorted(by_device.items()))


def _switch_end(fabric: Fabric, link: Link) -> Endpoint:
    """The switch end of a cable: a collected switch, else the end that is not a collected host."""
    return min((link.a, link.b), key=lambda e: (e.node not in fabric.switches, e.node in fabric.hosts, str(e)))


def _ends_evidence(fabric: Fabric, link: Link, seen_at: dict[Endpoint, list[str]]) -> dict[str, Any]:
    """``a``/``b``: each end of the cable, what the plan and LLDP say is at its other end."""
    out: dict[str, Any] = {}
    for key, end, other in (("a", link.a, link.b), ("b", link.b, link.a)):
        kind = "port" if end.node in fabric.switches else "netdev"
        out[key] = {
            "device": end.node,
            kind: end.port,
            "plan_peer": str(other) if "plan" in link.sources else None,
            "lldp_peer": seen_at.get(end, []),
        }
    return out


def _recable_steps(fabric: Fabric, planned: list[Link]) -> list[str]:
    return [f"{_switch_end(fabric, lk)} -> {_other(lk, _switch_end(fabric, lk))}" for lk in planned]


def _other(link: Link, end: Endpoint) -> Endpoint:
    return link.b if end == link.a else link.a


def _link_subject(link: Link) -> dict[str, str]:
    return {"kind": "link", "a": str(link.a), "b": str(link.b)}


def _rail_text(fabric: Fabric, link: Link) -> str | None:
    bad = rail_violation(fabric, link)
    if bad is None:
        return None
    end, want, leaf, got = bad
    return f"{end} (rail {want}) reaches {leaf} (rail {got})"


RAIL_IMPACT = (
    "NCCL assumes GPU i's NIC reaches the rail-i leaf: traffic of this rail crosses the spines instead of "
    "staying on one leaf, adding a hop and congesting uplinks that the rail design leaves idle"
)


def _group_finding(fabric: Fabric, group: _Group, peers: dict[Endpoint, list[str]]) -> Finding:
    planned = sorted(group.planned.values(), key=lambda lk: lk.id)
    discovered = sorted(group.discovered.values(), key=lambda lk: lk.id)
    rails = [t for d in discovered if (t := _rail_text(fabric, d)) is not None]
    check = "TOPO-RAIL" if rails else "TOPO-MISWIRED"
    if len(planned) == 1:
        subject = _link_subject(planned[0])
        what = f"planned cable {_cable(planned[0])} is cabled as {', '.join(_cable(d) for d in discovered)}"
    else:
        subject = {**_link_subject(planned[0]), "with": ",".join(lk.id for lk in planned[1:])}
        verb = "are swapped" if len(planned) == 2 else "are crossed"
        what = f"planned cables {' and '.join(_cable(p) for p in planned)} {verb}: LLDP sees " + ", ".join(
            _cable(d) for d in discovered
        )
    message = what + (f"; {'; '.join(rails)}" if rails else "")
    impact = (
        RAIL_IMPACT
        if rails
        else "traffic reaches the switch on another port than its config and the inventory expect: port-based "
        "config (QoS, VLANs, descriptions) and troubleshooting point at the wrong host"
    )
    return Finding(
        check=check,
        severity=Severity.ERROR,
        subject=subject,
        message=message,
        evidence={
            **_ends_evidence(fabric, planned[0], peers),
            "plan": [_cable(p) for p in planned],
            "discovered": [_cable(d) for d in discovered],
            "recable": _recable_steps(fabric, planned),
            **({"rail": rails} if rails else {}),
        },
        fix=_recable(fabric, planned),
        impact={"summary": impact, "action": "recable to the plan (swap the cables back)"},
        entities=tuple(lk.id for lk in planned),
    )


MISSING_HOST_IMPACT = (
    "the port is dark: the host runs with one NIC (one rail) fewer and its GPU's traffic detours over another NIC "
    "or fails the job at NCCL init"
)
MISSING_UPLINK_IMPACT = (
    "the uplink is dark: its leaf's traffic to other leaves shares the remaining uplinks (TOPO-UPLINKS gives the "
    "oversubscription)"
)


def _is_switch_link(fabric: Fabric, link: Link) -> bool:
    return link.a.node in fabric.switches and link.b.node in fabric.switches


def _missing_finding(fabric: Fabric, lk: Link, diff: CablingDiff) -> Finding:
    why = diff.missing_why.get(lk.id)
    dark = _dark_end(fabric, lk)
    host_fix = () if dark is None or (nic := fabric.nic_at(dark)) is None else (NicFixes(nic).link_status(),)
    if lk.id in diff.one_sided:
        message = f"planned cable {_cable(lk)}: {why}"
    else:
        message = f"planned cable {_cable(lk)} is not seen by LLDP on either end" + (f"; {why}" if why else "")
    return Finding(
        check="TOPO-MISSING",
        severity=Severity.ERROR,
        subject=_link_subject(lk),
        message=message,
        evidence={
            **_ends_evidence(fabric, lk, diff.lldp_peers),
            "plan": [_cable(lk)],
            "discovered": [],
            "recable": _recable_steps(fabric, [lk]),
            **_collected_evidence(fabric, lk),
        },
        fix=(*host_fix, *_recable(fabric, [lk])),
        impact={
            "summary": MISSING_UPLINK_IMPACT if _is_switch_link(fabric, lk) else MISSING_HOST_IMPACT,
            "action": "cable or reseat the link, check the optic",
        },
        entities=(lk.id,),
    )


def _collected_evidence(fabric: Fabric, lk: Link) -> dict[str, Any]:
    """What each end could tell: whether it was collected, and a host end's RDMA port state."""
    collected = fabric.hosts.keys() | fabric.switches.keys()
    out: dict[str, Any] = {"not_collected": sorted({e.node for e in (lk.a, lk.b) if e.node not in collected})}
    states = {str(e): nic.port_state for e in (lk.a, lk.b) if (nic := fabric.nic_at(e)) is not None}
    if states:
        out["port_state"] = states
    return out


UNVERIFIED_IMPACT = (
    "nothing confirms the cable: the port may be cabled as planned (LLDP off on the far port, or the NIC "
    "firmware's LLDP agent consuming the frames) or cabled elsewhere; a miswire or a rail crossing here "
    "would go unseen"
)


def _unverified_finding(fabric: Fabric, lk: Link, near: Endpoint, diff: CablingDiff) -> Finding:
    far = _other(lk, near)
    nic = fabric.nic_at(near)
    state = "port state not collected" if nic is None or nic.port_state is None else f"RDMA port {nic.port_state}"
    if nic is not None and nic.port_state is None and nic.carrier:
        state = "carrier up in ip link, RDMA port state not collected"
    kind = "host" if nic is not None else "switch"
    fixes: list[Fix] = []
    if nic is not None:
        fixes.append(_lldp_host_fix(nic.host, near.port))
    else:
        fixes.append(Fix(near.node, lldp_verify(fabric, near.node, near.port)))
    fixes.append(collect_fix(far.node, "switch" if nic is not None else "host"))
    return Finding(
        check="TOPO-UNVERIFIED",
        severity=Severity.WARNING,
        subject=_link_subject(lk),
        message=f"planned cable {_cable(lk)} is unverified: {kind} end {near} up ({state}) with no LLDP neighbour "
        f"while its other ports have one, far end {far.node} not collected",
        evidence={
            **_ends_evidence(fabric, lk, diff.lldp_peers),
            "plan": [_cable(lk)],
            "discovered": [],
            **_collected_evidence(fabric, lk),
        },
        fix=tuple(fixes),
        impact={
            "summary": UNVERIFIED_IMPACT,
            "action": f"collect {far.node}, or turn LLDP on for the far port and off in the NIC firmware",
        },
        entities=(lk.id,),
    )


def _lldp_host_fix(host: str, netdev: str) -> Fix:
    """What lldpd sees (and receives) on the host port; a NIC firmware LLDP agent shows as frames sent, none in."""
    try:
        name = q(hs_netdev(netdev))
        commands: tuple[str, ...] = (
            f"lldpcli show neighbors ports {name} details",
            f"lldpcli show statistics ports {name}",
            f"# no LLDP in on {name}: check LLDP on the far port, and whether the NIC firmware's LLDP agent "
            "consumes the frames (Intel i40e/ice: 'lldp stop' in debugfs; ConnectX: its firmware LLDP settings)",
        )
    except UsageError as exc:
        commands = (f"# not rendered for {shown(netdev)}: {shown(str(exc))}",)
    return Fix(host, commands)


def _cabling_findings(ctx: CheckContext) -> Iterator[Finding]:
    fabric = ctx.fabric
    diff = cabling_diff(fabric)
    for lk in diff.missing:
        yield _missing_finding(fabric, lk, diff)
    for lk, near in diff.unverified:
        yield _unverified_finding(fabric, lk, near, diff)
    for lk in diff.unexpected:
        rail = _rail_text(fabric, lk)
        yield Finding(
            check="TOPO-UNEXPECTED",
            severity=Severity.WARNING,
            subject=_link_subject(lk),
            message=f"LLDP sees cable {_cable(lk)} that the plan does not have" + (f"; {rail}" if rail else ""),
            evidence={**_ends_evidence(fabric, lk, diff.lldp_peers), "plan": [], "discovered": [_cable(lk)]},
            fix=_recable(fabric, [lk]),
            impact={
                "summary": "an unplanned cable is outside the intent: it gets no planned config and can loop "
                "or bypass the rail design",
                "action": "remove the cable or add it to the plan",
            },
            entities=(lk.id,),
        )
    for group in diff.crossed:
        yield _group_finding(fabric, group, diff.lldp_peers)
    for lk in diff.rail_confirmed:
        rail = _rail_text(fabric, lk) or ""
        planned = "plan" in lk.sources
        yield Finding(
            check="TOPO-RAIL",
            severity=Severity.ERROR,
            subject=_link_subject(lk),
            message=f"{'planned and cabled' if planned else 'cabled'} {_cable(lk)}: {rail}",
            evidence={
                **_ends_evidence(fabric, lk, diff.lldp_peers),
                "plan": [_cable(lk)] if planned else [],
                "discovered": [_cable(lk)],
                "rail": [rail],
            },
            impact={"summary": RAIL_IMPACT, "action": "recable the NIC to its rail's leaf and fix the plan"},
            entities=(lk.id,),
        )


def _only(ctx: CheckContext, check: str) -> Iterator[Finding]:
    """One check's share of the cabling findings, which the five cabling checks of a run compute once."""
    found = run_memo("cabling-findings", ctx, lambda: list(_cabling_findings(ctx)))
    return (f for f in found if f.check == check)


def check_missing(ctx: CheckContext) -> Iterator[Finding]:
    """Planned cables that no end sees."""
    return _only(ctx, "TOPO-MISSING")


def check_unverified(ctx: CheckContext) -> Iterator[Finding]:
    """Planned cables whose collected end shows no LLDP on them and whose far end was not collected."""
    return _only(ctx, "TOPO-UNVERIFIED")


def check_unexpected(ctx: CheckContext) -> Iterator[Finding]:
    """Discovered cables the plan lacks."""
    return _only(ctx, "TOPO-UNEXPECTED")


def check_miswired(ctx: CheckContext) -> Iterator[Finding]:
    """Planned cables whose ends are cabled elsewhere; a swap is one finding."""
    return _only(ctx, "TOPO-MISWIRED")


def check_rail(ctx: CheckContext) -> Iterator[Finding]:
    """Host NICs that reach another rail's leaf."""
    return _only(ctx, "TOPO-RAIL")


def _speed(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _rate_text(mbps: int, *infos: IbPort | None) -> str:
    """``400G``, or for an InfiniBand link its trained width and speed too (``1X HDR, 50G``)."""
    ib = next((i for i in infos if i is not None and i.width and i.speed), None)
    return f"{ib.width} {ib.speed}, {mbps // 1000}G" if ib is not None else f"{mbps // 1000}G"


def _ib_port_fix(switch: str, port: Port) -> tuple[str, ...]:
    """The infiniband-diags view of an IB switch port's width and speed (enabled, supported, active), and its reset."""
    ib = port.ib
    if ib is None or ib.lid is None or not port.name.isdigit():
        return ()
    return (
        f"ibportstate {ib.lid} {int(port.name)}  # LinkWidth/LinkSpeed Enabled, Supported and Active",
        f"ibportstate {ib.lid} {int(port.name)} reset  # after reseating or replacing the cable: retrain the link",
    )


def _peers_text(want: int, peers: dict[int, str]) -> str:
    return peers.get(want) or f"{want // 1000}G"


def check_degraded(ctx: CheckContext) -> Iterator[Finding]:
    """Discovered links running below the speed most links of their kind run on the same switch.

    The kinds are host links and switch links of each fabric (RoCE, InfiniBand): an IB storage network at HDR
    beside a 400G RoCE backend is not degraded. An IB link is judged by its rate (lanes times lane rate) and its
    message names the trained width and speed (``1X HDR``) against the tier's (``4X HDR``).
    """
    fabric = ctx.fabric
    host_runs = [
        (lk, s, fabric.link_fabric(lk.link))
        for lk in ctx.nic_links
        if "lldp" in lk.link.sources and (s := _speed(lk.nic.speed_mbps, lk.port.speed_mbps)) is not None
    ]
    switch_runs = [
        (pl, pl.a.speed_mbps, fabric.link_fabric(pl.link))
        for pl in ctx.port_links
        if "lldp" in pl.link.sources and pl.a.speed_mbps is not None and pl.a.speed_mbps == pl.b.speed_mbps
    ]
    host_by_switch: dict[str, list[int]] = {}
    for nl, s, _ in host_runs:
        host_by_switch.setdefault(nl.port.switch, []).append(s)
    switch_by_switch: dict[str, list[int]] = {}
    for pl, s, _ in switch_runs:
        for port in (pl.a, pl.b):
            switch_by_switch.setdefault(port.switch, []).append(s)
    kinds = {k for _, _, k in host_runs} | {k for _, _, k in switch_runs}
    host_fabric = {k: majority(sorted((s for _, s, kk in host_runs if kk == k), reverse=True)) for k in kinds}
    switch_fabric = {k: majority(sorted((s for _, s, kk in switch_runs if kk == k), reverse=True)) for k in kinds}
    # the IB width and speed each rate is trained at, to name the tier's in messages
    ib_names: dict[int, str] = {}
    for nl, s, k in host_runs:
        if k == "ib":
            ib_names.setdefault(s, _rate_text(s, nl.port.ib, nl.nic.ib))
    for pl, s, k in switch_runs:
        if k == "ib" and s is not None:
            ib_names.setdefault(s, _rate_text(s, pl.a.ib, pl.b.ib))

    def per_switch(by_switch: dict[str, list[int]]) -> dict[str, int | None]:
        """Each switch's majority, computed once per switch (ties go to the higher speed)."""
        return {
            switch: majority(sorted(local, reverse=True))
            for switch, local in by_switch.items()
            if len(local) >= MIN_LINKS_FOR_LOCAL_MAJORITY
        }

    host_local, switch_local = per_switch(host_by_switch), per_switch(switch_by_switch)

    def expected(local: dict[str, int | None], switch: str, fabric_value: int | None) -> int | None:
        return local.get(switch, fabric_value)

    for nl, s, kind in host_runs:
        plan = planned_rate(fabric, nl.link) if kind == "ib" else None
        want = plan.mbps if plan is not None else expected(host_local, nl.port.switch, host_fabric.get(kind))
        if want is None or (not below_plan(plan, s, nl.port.ib, nl.nic.ib) if plan is not None else s >= want):
            continue
        peers = ib_names if kind == "ib" else {}
        whose = "planned" if plan is not None else "peers'"
        yield Finding(
            check="TOPO-DEGRADED",
            severity=Severity.ERROR,
            subject=_link_subject(nl.link),
            message=f"{nl.nic.endpoint} -- {nl.port.endpoint} runs at "
            f"{_rate_text(s, nl.port.ib, nl.nic.ib) if kind == 'ib' else _rate_text(s)}, "
            + (f"the plan says {plan.text}" if plan is not None else f"its peers run {_peers_text(want, peers)}"),
            evidence={
                **({"planned": {"width": plan.width, "speed": plan.speed}} if plan is not None else {}),
                "a": {"device": nl.nic.host, "nic": nl.nic.id, "speed_mbps": nl.nic.speed_mbps, **_ib_ev(nl.nic.ib)},
                "b": {
                    "device": nl.port.switch,
                    "port": nl.port.id,
                    "speed_mbps": nl.port.speed_mbps,
                    **_ib_ev(nl.port.ib),
                },
                "expected_speed_mbps": want,
                "fabric": kind,
                "plan": [_cable(nl.link)] if "plan" in nl.link.sources else [],
                "discovered": [_cable(nl.link)],
            },
            fix=(
                NicFixes(nl.nic).link_status(),
                Fix(
                    nl.port.switch,
                    (
                        *ctx.cli(nl.port.switch).link_status(nl.port.switch, nl.port.name),
                        *_ib_port_fix(nl.port.switch, nl.port),
                    ),
                ),
            ),
            impact={
                "summary": f"this NIC moves {s * 100 // want}% of its {whose} bandwidth: every collective of a job "
                "on the host runs at the slowest rail's pace",
                "action": "reseat or replace the cable/optic; check lanes (width) and auto-negotiation",
            },
            entities=(nl.link.id,),
        )
    for pl, s, kind in switch_runs:
        plan = planned_rate(fabric, pl.link) if kind == "ib" else None
        want = (
            plan.mbps
            if plan is not None
            else max(
                (
                    w
                    for w in (
                        expected(switch_local, pl.a.switch, switch_fabric.get(kind)),
                        expected(switch_local, pl.b.switch, switch_fabric.get(kind)),
                    )
                    if w is not None
                ),
                default=None,
            )
        )
        if s is None or want is None:
            continue
        if not below_plan(plan, s, pl.a.ib, pl.b.ib) if plan is not None else s >= want:
            continue
        peers = ib_names if kind == "ib" else {}
        yield Finding(
            check="TOPO-DEGRADED",
            severity=Severity.WARNING,
            subject=_link_subject(pl.link),
            message=f"{pl.a.endpoint} -- {pl.b.endpoint} runs at "
            f"{_rate_text(s, pl.a.ib, pl.b.ib) if kind == 'ib' else _rate_text(s)}, "
            + (f"the plan says {plan.text}" if plan is not None else f"its peers run {_peers_text(want, peers)}"),
            evidence={
                **({"planned": {"width": plan.width, "speed": plan.speed}} if plan is not None else {}),
                "a": {"device": pl.a.switch, "port": pl.a.id, "speed_mbps": pl.a.speed_mbps, **_ib_ev(pl.a.ib)},
                "b": {"device": pl.b.switch, "port": pl.b.id, "speed_mbps": pl.b.speed_mbps, **_ib_ev(pl.b.ib)},
                "expected_speed_mbps": want,
                "fabric": kind,
                "plan": [_cable(pl.link)] if "plan" in pl.link.sources else [],
                "discovered": [_cable(pl.link)],
            },
            fix=tuple(
                Fix(p.switch, (*ctx.cli(p.switch).link_status(p.switch, p.name), *_ib_port_fix(p.switch, p)))
                for p in (pl.a, pl.b)
            ),
            impact={
                "summary": "its ECMP share of traffic overloads it: congestion and PFC pauses on the paths through it",
                "action": "reseat or replace the cable/optic; check lanes and speed settings",
                **ctx.path_impact(pl),
            },
            entities=(pl.link.id,),
        )


def _ib_ev(info: IbPort | None) -> dict[str, Any]:
    """An IB end's trained width and speed and its LID, for the evidence (nothing for a RoCE end)."""
    if info is None:
        return {}
    return {"width": info.width, "speed": info.speed, "lid": info.lid}


CHECKS = (
    CheckSpec(
        "TOPO-MISSING",
        "A planned cable is seen by neither end, or its host end is dark (no carrier, RDMA port DOWN)",
        "The NIC or uplink is dark: a rail or ECMP path is missing and traffic detours or jobs fail at init. A "
        "dark host port is evidence of its own, so this holds even when the far end was not collected; "
        "otherwise both ends must have been collected and one must report LLDP.",
        "Cable or reseat the link and check the optic; the fix shows the host port's link and the far port's LLDP.",
        check_missing,
    ),
    CheckSpec(
        "TOPO-UNVERIFIED",
        "A planned cable's collected end is up with no LLDP neighbour on it (its other ports have one) and the "
        "far end was not collected",
        "Nothing confirms or denies the cable: LLDP may be off on the far port, or the NIC firmware's LLDP agent "
        "may consume the frames, or the cable may be elsewhere. A miswire or rail crossing here goes unseen. A "
        "warning, not TOPO-MISSING: the port has link, so nothing says the cable is absent.",
        "Collect the far device; turn LLDP on for its port and, on the host, stop a firmware LLDP agent that "
        "consumes the frames (the fix shows lldpd's neighbours and frame counters for the port).",
        check_unverified,
    ),
    CheckSpec(
        "TOPO-UNEXPECTED",
        "A discovered cable is not in the plan",
        "An unplanned cable gets no planned config and can bypass the rail design.",
        "Remove the cable or add it to the plan.",
        check_unexpected,
    ),
    CheckSpec(
        "TOPO-MISWIRED",
        "Planned cables land on other ports than planned (a swap is one finding naming both cables)",
        "Port-based config and inventory point at the wrong host; troubleshooting follows the wrong cable.",
        "Recable to the plan.",
        check_miswired,
    ),
    CheckSpec(
        "TOPO-RAIL",
        "A host NIC reaches a leaf of another rail than its GPU's",
        "NCCL assumes rail alignment: the rail's traffic crosses the spines and congests uplinks.",
        "Recable the NIC to its rail's leaf (leaf name suffix -r<i> for GPU/NIC i).",
        check_rail,
    ),
    *NCCL_CHECKS,
    CheckSpec(
        "TOPO-DEGRADED",
        "A link runs below the speed its peers run, or below the plan's rate (speed, lanes, IB width)",
        "The slowest link paces every collective: the job runs at a fraction of its bandwidth. Ethernet: the "
        "NIC's and the switch port's operational speed (ethtool, sysfs, the switch's interface state), against the "
        "most common speed of the same kind of link on that switch (fabric-wide when it has fewer than three). "
        "InfiniBand: each port's trained width and speed (ib/ibnetdiscover.txt, ib/iblinkinfo.txt, the hosts' "
        "ibstat), against the plan's width and speed when plan/ibnetdiscover.txt gives them, else against its "
        "peers in the same fabric kind.",
        "Reseat or replace the cable or optic; check lanes and auto-negotiation (IB: `mlxlink -d lid-<lid> -p "
        "<port>`, then `ibportstate <lid> <port> reset`).",
        check_degraded,
    ),
    *UPLINK_CHECKS,
    *COVERAGE_CHECKS,
)


def topology_diff(fabric: Fabric) -> list[Finding]:
    """Every TOPO-* finding of a fabric, and the COVERAGE of planned devices that were not collected (``unifab
    topo diff``), grouped by kind in catalog order, worst first."""
    ctx = CheckContext.build(fabric)
    order = {spec.id: i for i, spec in enumerate(CHECKS)}
    found = [f for spec in CHECKS if spec.run is not None for f in spec.run(ctx)]
    return sorted(found, key=lambda f: (order[f.check], f.sort_key()))
