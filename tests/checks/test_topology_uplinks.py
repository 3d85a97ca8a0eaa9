"""TOPO-UPLINKS over a small leaf-spine fabric built from model records; and the fix TOPO-DEGRADED gives."""

from __future__ import annotations

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.topology import check_degraded
from unifab.checks.topology_uplinks import check_uplinks, ratio_text
from unifab.model import Endpoint, Fabric, Finding, Host, Link, Nic, Port, Switch, link_id

PLAN, LLDP = frozenset({"plan"}), frozenset({"lldp"})
BOTH = PLAN | LLDP


def _fabric(
    hosts: int = 4,
    uplinks: int = 4,
    down: int = 0,
    host_speed: int | None = 400_000,
    up_speed: int | None = 400_000,
    lldp: bool = True,
    plan: bool = True,
) -> Fabric:
    """Leaf ``leaf1`` with ``hosts`` host ports and ``uplinks`` uplinks to spine1/spine2; the last ``down``
    uplinks are planned but not seen."""
    fabric = Fabric()
    leaf_ports = {}
    for h in range(hosts):
        name = f"h{h}"
        fabric.hosts[name] = Host(name, {"eth0": Nic(name, "eth0", "mlx5_0", 9000, None, speed_mbps=host_speed)})
        leaf_ports[f"Ethernet{h}"] = Port("leaf1", f"Ethernet{h}", 9100, host_speed, "up", None)
        sources = (BOTH if lldp else PLAN) if plan else LLDP
        fabric.links.append(Link(Endpoint(name, "eth0"), Endpoint("leaf1", f"Ethernet{h}"), sources))
    spine_ports: dict[str, dict[str, Port]] = {"spine1": {}, "spine2": {}}
    for u in range(uplinks):
        spine, port = f"spine{u % 2 + 1}", f"Ethernet{u // 2}"
        leaf_ports[f"Ethernet{100 + u}"] = Port("leaf1", f"Ethernet{100 + u}", 9100, up_speed, "up", None)
        spine_ports[spine][port] = Port(spine, port, 9100, up_speed, "up", None)
        seen = lldp and u < uplinks - down
        sources = (BOTH if seen else PLAN) if plan else LLDP
        if sources == LLDP and not seen:
            continue
        fabric.links.append(Link(Endpoint("leaf1", f"Ethernet{100 + u}"), Endpoint(spine, port), sources))
    fabric.switches["leaf1"] = Switch("leaf1", "sonic", "x", leaf_ports)
    for spine, ports in spine_ports.items():
        fabric.switches[spine] = Switch(spine, "eos" if spine == "spine2" else "sonic", "x", ports)
    return fabric


def _run(fabric: Fabric) -> list[Finding]:
    return list(check_uplinks(CheckContext.build(fabric)))


def test_all_planned_uplinks_up_is_silent() -> None:
    assert _run(_fabric()) == []


def test_uplinks_below_plan_give_the_oversubscription() -> None:
    [f] = _run(_fabric(down=1))
    assert f.check == "TOPO-UPLINKS" and f.subject == {"kind": "switch", "id": "switch:leaf1"}
    assert f.message == "leaf1 has 3 of 4 planned uplinks up: oversubscribed 1.33:1 instead of 1:1"
    assert f.entities == (link_id(Endpoint("leaf1", "Ethernet103"), Endpoint("spine2", "Ethernet1")),)
    assert f.evidence["b"]["uplinks_planned"] == 4 and f.evidence["b"]["uplinks_up"] == 3
    assert f.evidence["a"]["downlink_bandwidth"] == 1_600_000 and f.evidence["a"]["unit"] == "Mb/s"
    assert (f.evidence["plan"], f.evidence["discovered"]) == (["4 uplinks, 1:1"], ["3 uplinks up, 1.33:1"])
    [fix] = f.fix
    assert fix.device == "leaf1" and fix.commands == ("show lldp neighbors Ethernet103",)


def test_planned_oversubscription_is_the_baseline() -> None:
    """A leaf planned 2:1 that loses one of two uplinks runs 4:1."""
    [f] = _run(_fabric(hosts=4, uplinks=2, down=1, up_speed=400_000))
    assert "oversubscribed 4:1 instead of 2:1" in f.message


def test_no_uplink_up_is_critical() -> None:
    [f] = _run(_fabric(down=4))
    assert f.severity.value == "critical"
    assert "no uplink" in f.message and "reach no other leaf" in f.impact["summary"]
    assert len(f.entities) == 4


def test_unknown_speeds_count_ports() -> None:
    [f] = _run(_fabric(hosts=6, down=1, up_speed=None))
    assert "oversubscribed 2:1 instead of 1.5:1" in f.message
    assert f.evidence["a"]["unit"] == "ports"


@pytest.mark.parametrize("kwargs", [{"lldp": False}, {"plan": False}])
def test_no_lldp_or_no_plan_is_not_judged(kwargs: dict[str, bool]) -> None:
    assert _run(_fabric(down=2, **kwargs)) == []


@pytest.mark.parametrize(
    ("down", "up", "text"), [(8, 8, "1:1"), (8, 6, "1.33:1"), (32, 24, "1.33:1"), (3, 2, "1.5:1"), (4, 0, "no uplink")]
)
def test_ratio_text(down: int, up: int, text: str) -> None:
    assert ratio_text(down, up) == text


def test_degraded_host_link_fix_checks_both_ends() -> None:
    fabric = _fabric()
    fabric.hosts["h0"] = Host("h0", {"eth0": Nic("h0", "eth0", "mlx5_0", 9000, None, speed_mbps=200_000)})
    [f] = [x for x in check_degraded(CheckContext.build(fabric)) if x.evidence["a"]["device"] == "h0"]
    assert [x.device for x in f.fix] == ["h0", "leaf1"]
    assert f.fix[0].commands == ("ethtool eth0", "ethtool -m eth0")
    assert f.fix[1].commands == ("show interfaces status Ethernet0", "show interfaces transceiver eeprom Ethernet0")
