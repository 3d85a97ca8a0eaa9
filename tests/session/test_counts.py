"""Counter-kept majorities answer exactly as a full build, and say so when only the ordered pass can tell."""

from __future__ import annotations

from collections.abc import Callable

from unifab.checks.context import CheckContext, _baseline
from unifab.model import Endpoint, Fabric, Link, Port, Switch
from unifab.session.counts import BaselineCounts, PortCounts, ordered_port_values

FabricFactory = Callable[..., Fabric]


def test_counts_equal_the_full_baseline_and_follow_replacements(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(8, nic={1: {"mtu": 1500}}, nic_qos={2: {"pfc_enabled": frozenset({3, 4})}})
    ctx = CheckContext.build(fabric)
    counts = BaselineCounts.build(ctx.nic_links)
    assert counts.baseline() == _baseline(ctx.nic_links)
    # one NIC changes: the counters follow and still agree with a full build
    changed = make_fabric(8, nic={1: {"mtu": 1500}, 5: {"mtu": 4200}}, nic_qos={2: {"pfc_enabled": frozenset({3, 4})}})
    new_ctx = CheckContext.build(changed)
    counts.replace([ctx.nic_links[5]], [new_ctx.nic_links[5]])
    assert counts.baseline() == _baseline(new_ctx.nic_links)


def test_a_tie_needs_the_ordered_pass(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(4, nic={0: {"mtu": 1500}, 1: {"mtu": 1500}})  # two NICs at 1500, two at 9000
    counts = BaselineCounts.build(CheckContext.build(fabric).nic_links)
    assert counts.baseline() is None


def test_a_moved_roce_dscp_needs_a_full_build(make_fabric: FabricFactory) -> None:
    ctx = CheckContext.build(make_fabric(3))
    counts = BaselineCounts.build(ctx.nic_links)
    assert counts.baseline() is not None
    moved = CheckContext.build(make_fabric(3, nic_qos={i: {"traffic_class": 98} for i in range(3)}))
    counts.replace(ctx.nic_links, moved.nic_links)
    assert counts.baseline() is None  # the RoCE DSCP the other fields are projected through changed


def _uplinks(mtus: list[tuple[int, int]]) -> CheckContext:
    fabric = Fabric()
    leaf, spine = {}, {}
    for i, (a, b) in enumerate(mtus):
        leaf[f"Ethernet{i}"] = Port("leaf1", f"Ethernet{i}", mtu=a, speed_mbps=400000, admin_status="up", qos=None)
        spine[f"Ethernet{i}"] = Port("spine1", f"Ethernet{i}", mtu=b, speed_mbps=400000, admin_status="up", qos=None)
        fabric.links.append(Link(Endpoint("leaf1", f"Ethernet{i}"), Endpoint("spine1", f"Ethernet{i}"), frozenset()))
    fabric.switches = {"leaf1": Switch("leaf1", "sonic", "x", leaf), "spine1": Switch("spine1", "sonic", "x", spine)}
    return CheckContext.build(fabric)


def test_port_counts_match_the_ordered_majority_or_say_tie() -> None:
    ctx = _uplinks([(9100, 9100), (9100, 1500), (9100, 9100)])
    counts = PortCounts(ctx.port_links)
    assert counts.values() == ordered_port_values(ctx.port_links)
    assert counts.values() is not None and counts.values()["QOS-MTU:mtu"] == 9100
    tied = _uplinks([(9100, 1500)])
    assert PortCounts(tied.port_links).values() is None
    assert ordered_port_values(tied.port_links)["QOS-MTU:mtu"] == 9100  # first seen wins the ordered pass
