"""TOPO-* checks over small rail fabrics built from model records, and the ibsim faulty/clean pair."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from unifab.checks import topology
from unifab.checks.context import CheckContext
from unifab.collect.bundle import load_bundle
from unifab.collect.ib import ib_view
from unifab.model import Endpoint, Fabric, Finding, Gpu, Host, Link, Nic, Port, Severity, Switch, link_id
from unifab.parse.ib import ibnetdiscover
from unifab.parse.plan import cabling

Cable = tuple[Endpoint, Endpoint]


def _merge(discovered: list[Cable], planned: list[Cable], speeds: dict[str, int] | None = None) -> list[Link]:
    merged: dict[str, Link] = {}
    for sources, cables in ((frozenset({"lldp"}), discovered), (frozenset({"plan"}), planned)):
        for a, b in cables:
            lk = Link(a, b, sources)
            known = merged.get(lk.id)
            merged[lk.id] = lk if known is None else Link(known.a, known.b, known.sources | sources)
    return list(merged.values())


def rail_fabric(
    hosts: int = 4,
    rails: int = 4,
    swap: dict[Endpoint, Endpoint] | None = None,
    absent: set[Endpoint] | None = None,
    extra: list[Cable] | None = None,
    plan: bool = True,
    nic_speed: dict[Endpoint, int] | None = None,
) -> Fabric:
    """Host h<i> NIC eth<r> cabled to leaf-r<r> Ethernet<8i>; ``swap`` maps a NIC end to the switch end it
    really reaches, ``absent`` NIC ends have no cable."""
    swap, absent, nic_speed = swap or {}, absent or set(), nic_speed or {}
    fabric = Fabric()
    planned: list[Cable] = []
    discovered: list[Cable] = []
    for r in range(rails):
        ports = {
            f"Ethernet{h * 8}": Port(f"leaf-r{r}", f"Ethernet{h * 8}", 9100, 400_000, "up", None) for h in range(hosts)
        }
        fabric.switches[f"leaf-r{r}"] = Switch(f"leaf-r{r}", "sonic", "x", ports)
    for h in range(hosts):
        name = f"h{h}"
        nics = {}
        for r in range(rails):
            end = Endpoint(name, f"eth{r}")
            nics[end.port] = Nic(name, end.port, f"mlx5_{r}", 9000, None, speed_mbps=nic_speed.get(end, 400_000))
            leaf_end = Endpoint(f"leaf-r{r}", f"Ethernet{h * 8}")
            planned.append((end, leaf_end))
            if end not in absent:
                discovered.append((end, swap.get(end, leaf_end)))
        fabric.hosts[name] = Host(name, nics)
    discovered += extra or []
    fabric.links = _merge(discovered, planned if plan else [])
    return fabric


def run(fabric: Fabric) -> list[Finding]:
    ctx = CheckContext.build(fabric)
    out: list[Finding] = []
    for spec in topology.CHECKS:
        assert spec.run is not None
        out.extend(spec.run(ctx))
    return out


def lid(a: str, b: str) -> str:
    an, ap = a.split(":")
    bn, bp = b.split(":")
    return link_id(Endpoint(an, ap), Endpoint(bn, bp))


def test_clean_fabric_is_silent() -> None:
    assert run(rail_fabric()) == []
    assert run(rail_fabric(plan=False)) == []


def test_swap_on_one_leaf_is_one_miswired_finding() -> None:
    fabric = rail_fabric(
        swap={
            Endpoint("h0", "eth1"): Endpoint("leaf-r1", "Ethernet8"),
            Endpoint("h1", "eth1"): Endpoint("leaf-r1", "Ethernet0"),
        }
    )
    [f] = run(fabric)
    assert f.check == "TOPO-MISWIRED"
    assert f.entities == tuple(sorted((lid("h0:eth1", "leaf-r1:Ethernet0"), lid("h1:eth1", "leaf-r1:Ethernet8"))))
    assert f.evidence["plan"] == ["h0:eth1 -- leaf-r1:Ethernet0", "h1:eth1 -- leaf-r1:Ethernet8"]
    assert sorted(f.evidence["discovered"]) == ["h0:eth1 -- leaf-r1:Ethernet8", "h1:eth1 -- leaf-r1:Ethernet0"]
    assert "swapped" in f.message
    assert f.evidence["a"]["lldp_peer"] == ["leaf-r1:Ethernet8"]  # h0:eth1, planned to Ethernet0
    assert f.evidence["recable"] == ["leaf-r1:Ethernet0 -> h0:eth1", "leaf-r1:Ethernet8 -> h1:eth1"]
    assert f.subject == {
        "kind": "link",
        "a": "h0:eth1",
        "b": "leaf-r1:Ethernet0",
        "with": lid("h1:eth1", "leaf-r1:Ethernet8"),
    }


def test_single_cable_moved_to_a_free_port_is_one_finding() -> None:
    fabric = rail_fabric(swap={Endpoint("h2", "eth0"): Endpoint("leaf-r0", "Ethernet200")})
    [f] = run(fabric)
    assert (f.check, f.entities) == ("TOPO-MISWIRED", (lid("h2:eth0", "leaf-r0:Ethernet16"),))
    assert f.subject == {"kind": "link", "a": "h2:eth0", "b": "leaf-r0:Ethernet16"}


def test_rail_swap_is_one_rail_finding() -> None:
    fabric = rail_fabric(
        swap={
            Endpoint("h3", "eth1"): Endpoint("leaf-r2", "Ethernet24"),
            Endpoint("h3", "eth2"): Endpoint("leaf-r1", "Ethernet24"),
        }
    )
    [f] = run(fabric)
    assert f.check == "TOPO-RAIL"
    assert f.entities == tuple(sorted((lid("h3:eth1", "leaf-r1:Ethernet24"), lid("h3:eth2", "leaf-r2:Ethernet24"))))
    assert "h3:eth1 (rail 1) reaches leaf-r2 (rail 2)" in f.message


def test_rail_uses_the_gpu_nic_pairing_when_known() -> None:
    fabric = rail_fabric(hosts=1, rails=2)
    host = fabric.hosts["h0"]
    # GPU 0's closest NIC is mlx5_1: eth1 belongs to rail 0, so both cables cross rails.
    gpus = {0: Gpu("h0", 0, nic="mlx5_1"), 1: Gpu("h0", 1, nic="mlx5_0")}
    fabric.hosts["h0"] = Host(host.name, host.nics, gpus)
    found = run(fabric)
    assert [f.check for f in found] == ["TOPO-RAIL", "TOPO-RAIL"]
    assert all(f.evidence["plan"] for f in found)  # plan and cabling agree: the plan crosses rails


def test_rail_without_plan() -> None:
    fabric = rail_fabric(plan=False, swap={Endpoint("h0", "eth3"): Endpoint("leaf-r2", "Ethernet64")})
    [f] = run(fabric)
    assert (f.check, f.entities) == ("TOPO-RAIL", (lid("h0:eth3", "leaf-r2:Ethernet64"),))


def test_missing_cable() -> None:
    [f] = run(rail_fabric(absent={Endpoint("h1", "eth2")}))
    assert (f.check, f.entities) == ("TOPO-MISSING", (lid("h1:eth2", "leaf-r2:Ethernet8"),))
    assert (f.evidence["plan"], f.evidence["discovered"]) == (["h1:eth2 -- leaf-r2:Ethernet8"], [])
    assert f.evidence["a"] == {"device": "h1", "netdev": "eth2", "plan_peer": "leaf-r2:Ethernet8", "lldp_peer": []}
    assert f.evidence["b"]["port"] == "Ethernet8"
    assert [(x.device, x.commands) for x in f.fix] == [("leaf-r2", ("show lldp neighbors Ethernet8",))]


def test_missing_needs_both_devices_collected() -> None:
    """h9 was not collected and leaf-r0 has no port Ethernet72: nothing tells whether the cable is there."""
    fabric = rail_fabric()
    fabric.links.append(Link(Endpoint("h9", "eth0"), Endpoint("leaf-r0", "Ethernet72"), frozenset({"plan"})))
    [f] = run(fabric)
    assert (f.check, f.entities, f.severity) == ("COVERAGE", ("host:h9",), Severity.INFO)


def _state(fabric: Fabric, end: str, state: str | None) -> None:
    host, netdev = end.split(":")
    nics = fabric.hosts[host].nics
    nics[netdev] = replace(nics[netdev], port_state=state)


def _uncollected(fabric: Fabric, *switches: str) -> Fabric:
    for name in switches:
        del fabric.switches[name]
    return fabric


def _by_check(found: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in found:
        out.setdefault(f.check, []).append(f)
    return out


def test_dark_host_port_toward_an_uncollected_leaf_is_missing() -> None:
    fabric = _uncollected(rail_fabric(absent={Endpoint("h1", "eth2")}), "leaf-r2")
    _state(fabric, "h1:eth2", "DOWN")
    found = _by_check(run(fabric))
    assert sorted(found) == ["COVERAGE", "TOPO-MISSING"]
    [f] = found["TOPO-MISSING"]
    assert (f.entities, f.severity) == ((lid("h1:eth2", "leaf-r2:Ethernet8"),), Severity.ERROR)
    assert f.message.endswith(": host end h1:eth2 dark (RDMA port DOWN), far end not collected")
    assert f.evidence["not_collected"] == ["leaf-r2"] and f.evidence["port_state"] == {"h1:eth2": "DOWN"}
    assert [x.device for x in f.fix] == ["h1", "leaf-r2"]
    assert f.fix[0].commands == ("ethtool eth2", "ethtool -m eth2")
    assert "not collected" in f.fix[1].commands[0]  # no command guessed for a switch of unknown OS


def test_dark_host_port_is_missing_even_when_no_device_reports_lldp() -> None:
    fabric = rail_fabric(hosts=1, rails=1, absent={Endpoint("h0", "eth0")})
    assert run(fabric) == []  # nothing reports LLDP: nothing known to be absent
    _state(fabric, "h0:eth0", "DOWN")
    [f] = run(fabric)
    assert f.check == "TOPO-MISSING"
    assert f.message.endswith("host end h0:eth0 dark (RDMA port DOWN), far end reports no LLDP")


def test_missing_cable_says_when_the_host_end_is_dark() -> None:
    fabric = rail_fabric(absent={Endpoint("h1", "eth2")})
    _state(fabric, "h1:eth2", "DOWN")
    [f] = run(fabric)
    assert f.message == (
        "planned cable h1:eth2 -- leaf-r2:Ethernet8 is not seen by LLDP on either end; host end h1:eth2 dark "
        "(RDMA port DOWN)"
    )
    assert [x.device for x in f.fix] == ["h1", "leaf-r2"]


@pytest.mark.parametrize(("state", "said"), [("ACTIVE", "RDMA port ACTIVE"), (None, "port state not collected")])
def test_up_host_port_without_lldp_toward_an_uncollected_leaf_is_unverified(state: str | None, said: str) -> None:
    fabric = _uncollected(rail_fabric(absent={Endpoint("h1", "eth2")}), "leaf-r2")
    _state(fabric, "h1:eth2", state)
    found = _by_check(run(fabric))
    assert sorted(found) == ["COVERAGE", "TOPO-UNVERIFIED"]
    [f] = found["TOPO-UNVERIFIED"]
    assert (f.entities, f.severity) == ((lid("h1:eth2", "leaf-r2:Ethernet8"),), Severity.WARNING)
    assert f"host end h1:eth2 up ({said}) with no LLDP neighbour" in f.message
    assert f.message.endswith("far end leaf-r2 not collected")
    assert [x.device for x in f.fix] == ["h1", "leaf-r2"]
    assert f.fix[0].commands[:2] == ("lldpcli show neighbors ports eth2 details", "lldpcli show statistics ports eth2")
    assert "firmware" in f.impact["summary"]


def test_host_that_reports_no_lldp_at_all_leaves_only_coverage() -> None:
    """No neighbour on any port of h0: LLDP was not collected there, which says nothing about one cable."""
    fabric = _uncollected(
        rail_fabric(hosts=1, rails=2, absent={Endpoint("h0", "eth0"), Endpoint("h0", "eth1")}), "leaf-r1"
    )
    [f] = run(fabric)
    assert (f.check, f.entities) == ("COVERAGE", ("switch:leaf-r1",))


def test_cables_the_host_lldp_sees_are_verified_without_their_leaf() -> None:
    fabric = _uncollected(rail_fabric(), "leaf-r2")
    [f] = run(fabric)
    assert f.check == "COVERAGE" and f.evidence["b"]["confirmed_by_other_end"] == 4


def test_silent_switch_port_toward_an_uncollected_host_is_unverified() -> None:
    fabric = rail_fabric()
    fabric.switches["leaf-r0"].ports["Ethernet72"] = Port("leaf-r0", "Ethernet72", 9100, 400_000, "up", None)
    fabric.links.append(Link(Endpoint("h9", "eth0"), Endpoint("leaf-r0", "Ethernet72"), frozenset({"plan"})))
    found = _by_check(run(fabric))
    [f] = found["TOPO-UNVERIFIED"]
    assert "switch end leaf-r0:Ethernet72 up" in f.message and f.message.endswith("far end h9 not collected")
    assert [x.device for x in f.fix] == ["leaf-r0", "h9"]
    assert f.fix[0].commands == ("show lldp neighbors Ethernet72",)
    assert "unifab agent collect" in f.fix[1].commands[0]
    [cov] = found["COVERAGE"]
    assert cov.subject == {"kind": "host", "id": "host:h9"}


def test_unexpected_cable_only_with_a_plan() -> None:
    extra = [(Endpoint("leaf-r0", "Ethernet256"), Endpoint("leaf-r1", "Ethernet256"))]
    [f] = run(rail_fabric(extra=extra))
    assert (f.check, f.entities) == ("TOPO-UNEXPECTED", (lid("leaf-r0:Ethernet256", "leaf-r1:Ethernet256"),))
    assert run(rail_fabric(extra=extra, plan=False)) == []


def test_degraded_nic() -> None:
    [f] = run(rail_fabric(nic_speed={Endpoint("h2", "eth3"): 200_000}))
    assert (f.check, f.entities) == ("TOPO-DEGRADED", (lid("h2:eth3", "leaf-r3:Ethernet16"),))
    assert f.evidence["expected_speed_mbps"] == 400_000


def _ib_fabric(root: Path, discovered_text: str, plan_text: str | None) -> Fabric:
    """The IB pair read as a bundle: ``ib/ibnetdiscover.txt`` through the bundle reader's IB view
    (:mod:`unifab.collect.ib`), and a known-good run's cables as ``plan/cabling.csv`` (``topo plan
    --from-ibnetdiscover``)."""
    write = {"ib/ibnetdiscover.txt": discovered_text}
    if plan_text is not None:
        known_good = ibnetdiscover.named_links(ibnetdiscover.parse(plan_text, "known-good ibnetdiscover"))
        cables = tuple(cabling.PlannedCable(lk.a_node, lk.a_port, lk.b_node, lk.b_port, None) for lk in known_good)
        write["plan/cabling.csv"] = cabling.dump(cables)
    for rel, text in write.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    fabric = load_bundle(root)
    assert fabric.input_findings == []
    return fabric


def test_ib_view_is_what_the_bundle_reader_uses(tmp_path: Path, samples: Path) -> None:
    """CAs become host NICs named by RDMA device and switch ports by number, with the trained rate as speed."""
    text = (samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt").read_text()
    view = ib_view(ibnetdiscover.parse(text, "ibnetdiscover.txt"))
    fabric = _ib_fabric(tmp_path, text, None)
    assert set(view.hosts) <= set(fabric.hosts) and set(view.switches) <= set(fabric.switches)
    assert {lk.id for lk in view.links} == {lk.id for lk in fabric.links}
    nics = fabric.hosts["dgx-002"].nics
    assert (nics["mlx5_1"].rdma_dev, nics["mlx5_1"].link_layer) == ("mlx5_1", "InfiniBand")
    slow, healthy = nics["mlx5_1"].speed_mbps, nics["mlx5_0"].speed_mbps  # the degraded cable trained lower
    assert slow is not None and healthy is not None and slow < healthy


def test_ib_faulty_against_clean_plan_yields_exactly_the_injected_faults(tmp_path: Path, samples: Path) -> None:
    ib = samples / "ib"
    fabric = _ib_fabric(
        tmp_path,
        (ib / "ibnetdiscover_sim_rail_faulty.txt").read_text(),
        (ib / "ibnetdiscover_sim_rail_clean.txt").read_text(),
    )
    found = {(f.check, f.entities) for f in run(fabric)}
    assert found == {
        (
            "TOPO-RAIL",
            (lid("dgx-003:mlx5_5", "ib-leaf-r5:3"), lid("dgx-003:mlx5_6", "ib-leaf-r6:3")),
        ),
        ("TOPO-MISSING", (lid("dgx-004:mlx5_2", "ib-leaf-r2:4"),)),
        ("TOPO-DEGRADED", (lid("dgx-002:mlx5_1", "ib-leaf-r1:2"),)),
    }


def test_ib_clean_is_silent(tmp_path: Path, samples: Path) -> None:
    clean = (samples / "ib" / "ibnetdiscover_sim_rail_clean.txt").read_text()
    assert run(_ib_fabric(tmp_path / "planned", clean, clean)) == []
    assert run(_ib_fabric(tmp_path / "unplanned", clean, None)) == []


def test_linear_scale_smoke() -> None:
    """A 4,096-NIC fabric with a swap: one finding, and the diff indexes instead of comparing pairs."""
    fabric = rail_fabric(
        hosts=512,
        rails=8,
        swap={
            Endpoint("h7", "eth4"): Endpoint("leaf-r4", "Ethernet64"),
            Endpoint("h8", "eth4"): Endpoint("leaf-r4", "Ethernet56"),
        },
    )
    assert [f.check for f in run(fabric)] == ["TOPO-MISWIRED"]


def test_three_cables_crossed_in_a_cycle_are_one_finding() -> None:
    fabric = rail_fabric(
        swap={
            Endpoint("h0", "eth0"): Endpoint("leaf-r0", "Ethernet8"),
            Endpoint("h1", "eth0"): Endpoint("leaf-r0", "Ethernet16"),
            Endpoint("h2", "eth0"): Endpoint("leaf-r0", "Ethernet0"),
        }
    )
    [f] = run(fabric)
    assert f.check == "TOPO-MISWIRED" and len(f.entities) == 3
    assert "are crossed" in f.message
    assert [x.device for x in f.fix] == ["leaf-r0"] and len(f.fix[0].commands) == 3


def test_no_missing_when_neither_end_reports_lldp() -> None:
    fabric = rail_fabric(hosts=2, rails=1, absent={Endpoint("h0", "eth0"), Endpoint("h1", "eth0")})
    assert run(fabric) == []
