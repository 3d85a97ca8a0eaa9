"""IB-SM, IB-DUPLICATE, IB-COUNTERS, IB-MTU, IB-SL and TOPO-DEGRADED on InfiniBand, over small hand-built fabrics."""

from __future__ import annotations

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.ib import (
    COUNTER_RULES,
    CounterRule,
    check_counters,
    check_duplicate,
    check_mtu,
    check_sl,
    check_sm,
)
from unifab.checks.topology import check_degraded
from unifab.model import (
    Endpoint,
    Fabric,
    Finding,
    Host,
    IbFabric,
    IbPort,
    IbSm,
    Job,
    Link,
    Nic,
    Port,
    Severity,
    Switch,
)

LEAF = "ib-leaf-r0"
HDR = 200_000


def _fabric(hcas: int = 4, **changes: dict[str, object]) -> Fabric:
    """``hcas`` hosts with one HCA each (mlx5_0, LID 10+i) on one IB leaf (LID 1) port i+1, 4X HDR."""
    hosts: dict[str, Host] = {}
    ports: dict[str, Port] = {}
    links = []
    for i in range(hcas):
        name = f"h{i + 1}"
        values: dict[str, object] = {
            "node_guid": f"0xa088c2030000{i:03x}0",
            "port_guid": f"0xa088c2030000{i:03x}1",
            "lid": 10 + i,
            "port_num": 1,
            "width": "4X",
            "speed": "HDR",
        }
        info = IbPort(**{**values, **changes.get(name, {})})  # type: ignore[arg-type]
        nic = Nic(name, "mlx5_0", "mlx5_0", None, None, speed_mbps=HDR, link_layer="InfiniBand", ib=info)
        hosts[name] = Host(name, {"mlx5_0": nic})
        port_info = IbPort("0xb83fd20300000001", "0xb83fd20300000001", 1, i + 1, "4X", "HDR")
        port_info = IbPort(**{**{k: getattr(port_info, k) for k in IbPort.__slots__}, **changes.get(str(i + 1), {})})
        ports[str(i + 1)] = Port(LEAF, str(i + 1), None, HDR, "up", None, ib=port_info)
        links.append(Link(Endpoint(name, "mlx5_0"), Endpoint(LEAF, str(i + 1)), frozenset({"lldp"})))
    switch = Switch(LEAF, "ib", "ib/ibnetdiscover.txt", ports, guid="0xb83fd20300000001", lid=1)
    return Fabric(hosts=hosts, switches={LEAF: switch}, links=links)


def _run(check: object, fabric: Fabric) -> list[Finding]:
    return list(check(CheckContext.build(fabric)))  # type: ignore[operator]


def _sms(*sms: tuple[str, int, int, str]) -> IbFabric:
    return IbFabric(tuple(IbSm(g, lid, prio, state, 1, "ib/sminfo.txt") for g, lid, prio, state in sms), True)


# --- IB-SM ---


def test_one_master_with_a_lower_standby_is_fine() -> None:
    fabric = _fabric()
    fabric.ib = _sms(("0xb83fd20300000001", 1, 15, "master"), ("0xb83fd20300000002", 2, 14, "standby"))
    assert _run(check_sm, fabric) == []


def test_no_master_sm() -> None:
    fabric = _fabric()
    fabric.ib = _sms(("0xb83fd20300000002", 2, 14, "standby"))
    [f] = _run(check_sm, fabric)
    assert (f.check, f.severity, f.entities) == ("IB-SM", Severity.CRITICAL, ("fabric:ib",))
    assert "no subnet manager is master" in f.message
    fabric.ib = IbFabric((), sm_collected=False)  # sminfo not collected: nothing to say
    assert _run(check_sm, fabric) == []


def test_two_masters_keep_the_higher_priority_one() -> None:
    fabric = _fabric()
    fabric.ib = _sms(("0xb83fd20300000001", 1, 15, "master"), ("0xa088c20300000011", 11, 0, "master"))
    [f] = _run(check_sm, fabric)
    assert f.severity is Severity.CRITICAL and f.entities == ("sm:0xa088c20300000011", "sm:0xb83fd20300000001")
    assert f.evidence["keep"] == "0xb83fd20300000001"
    assert [x.device for x in f.fix] == ["h2"]  # the SM whose port GUID is h2's HCA port is the one to stop
    assert any("systemctl stop opensm" in c for c in f.fix[0].commands)


def test_priority_tie_names_the_lowest_guid_as_winner() -> None:
    fabric = _fabric()
    fabric.ib = _sms(("0xb83fd20300000009", 1, 14, "master"), ("0xb83fd20300000003", 3, 14, "standby"))
    [f] = _run(check_sm, fabric)
    assert f.severity is Severity.WARNING
    assert "the election falls to the lowest GUID, 0xb83fd20300000003" in f.message
    assert any("sm_priority 15" in c for x in f.fix for c in x.commands)


# --- IB-DUPLICATE ---


def test_unique_guids_and_lids_and_a_switchs_shared_lid_are_fine() -> None:
    assert _run(check_duplicate, _fabric()) == []  # the leaf's 4 ports share its GUID and LID: one device


def test_duplicate_port_guid() -> None:
    fabric = _fabric(h3={"port_guid": "0xa088c20300000001"})
    [f] = _run(check_duplicate, fabric)
    assert (f.check, f.subject) == ("IB-DUPLICATE", {"kind": "guid", "id": "0xa088c20300000001"})
    assert f.entities == ("nic:h1:mlx5_0", "nic:h3:mlx5_0")
    assert any("flint -d mlx5_0 query" in c for x in f.fix for c in x.commands)


def test_duplicate_node_guid_between_two_hosts_hcas() -> None:
    """Two adapters burnt with one node GUID (a cloned or mis-flashed card): one finding, not one per GUID kind."""
    fabric = _fabric(h3={"node_guid": "0xa088c20300000000"})  # h1's node GUID; the port GUIDs still differ
    [f] = _run(check_duplicate, fabric)
    assert (f.subject, f.evidence["kind"]) == ({"kind": "guid", "id": "0xa088c20300000000"}, "node GUID")
    assert f.entities == ("nic:h1:mlx5_0", "nic:h3:mlx5_0") and f.severity is Severity.CRITICAL


def test_duplicate_lid_between_an_hca_and_a_switch() -> None:
    fabric = _fabric(h2={"lid": 1})
    [f] = _run(check_duplicate, fabric)
    assert f.subject == {"kind": "lid", "id": "1"} and f.entities == ("nic:h2:mlx5_0", "switch:ib-leaf-r0")


# --- IB-COUNTERS ---


def test_saturated_counters_are_at_least_their_maximum() -> None:
    counters = {"SymbolErrorCounter": 65535, "LinkDownedCounter": 12, "PortRcvErrors": 0}
    fabric = _fabric(**{"2": {"counters": counters, "saturated": frozenset({"SymbolErrorCounter"})}})
    [f] = _run(check_counters, fabric)
    assert f.severity is Severity.ERROR and f.entities == ("link:h2:mlx5_0--ib-leaf-r0:2",)
    assert "SymbolErrorCounter at least 65535 (saturated)" in f.message and "LinkDownedCounter 12" in f.message
    assert "PortRcvErrors" not in f.message
    commands = [c for x in f.fix for c in x.commands]
    assert "perfquery -R 1 2  # clear the counters after the fix, then watch them" in commands
    assert f.evidence["saturated"] == ["SymbolErrorCounter"]


@pytest.mark.parametrize(
    ("counters", "severity"),
    [
        ({"SymbolErrorCounter": 10, "PortXmitWait": 1000}, None),  # at the thresholds: nothing
        ({"PortXmitWait": 5_000_000}, Severity.WARNING),  # congestion
        ({"PortXmitDiscards": 3}, Severity.WARNING),
        ({"PortXmitDiscards": 3, "LocalLinkIntegrityErrors": 1}, Severity.ERROR),
    ],
)
def test_counter_thresholds(counters: dict[str, int], severity: Severity | None) -> None:
    found = _run(check_counters, _fabric(h1={"counters": counters}))
    assert [f.severity for f in found] == ([] if severity is None else [severity])
    if severity is not None:
        assert found[0].subject == {"kind": "nic", "id": "nic:h1:mlx5_0"}


@pytest.mark.parametrize("rule", COUNTER_RULES, ids=[r.name for r in COUNTER_RULES])
def test_every_counter_rule_fires_just_beyond_its_threshold(rule: CounterRule) -> None:
    assert _run(check_counters, _fabric(h1={"counters": {rule.name: rule.threshold}})) == []
    [f] = _run(check_counters, _fabric(h1={"counters": {rule.name: rule.threshold + 1}}))
    assert f.severity is rule.severity and f"{rule.name} {rule.threshold + 1}" in f.message


def test_an_8_bit_counter_at_255_is_at_least_255() -> None:
    """LinkErrorRecoveryCounter and LinkDownedCounter are 8 bits wide in the PMA: 255 is where they stop."""
    counters = {"LinkErrorRecoveryCounter": 255, "PortRcvRemotePhysicalErrors": 4}
    fabric = _fabric(**{"3": {"counters": counters, "saturated": frozenset({"LinkErrorRecoveryCounter"})}})
    [f] = _run(check_counters, fabric)
    assert "LinkErrorRecoveryCounter at least 255 (saturated)" in f.message
    assert "PortRcvRemotePhysicalErrors 4" in f.message and f.severity is Severity.ERROR


# --- IB-MTU ---


def test_hca_below_the_fabrics_mtu() -> None:
    fabric = _fabric(h1={"mtu": 4096}, h2={"mtu": 4096}, h3={"mtu": 2048}, h4={"mtu": 4096})
    [f] = _run(check_mtu, fabric)
    assert f.entities == ("link:h3:mlx5_0--ib-leaf-r0:3",) and "runs IB MTU 2048" in f.message
    assert any("partitions.conf" in c for x in f.fix for c in x.commands)
    assert _run(check_mtu, _fabric(h1={"mtu": 4096})) == []


def test_a_low_mtu_names_the_jobs_whose_nccl_runs_through_it() -> None:
    fabric = _fabric(h1={"mtu": 4096}, h2={"mtu": 4096}, h3={"mtu": 2048}, h4={"mtu": 4096}, **{"3": {"mtu": 4096}})
    _jobs(
        fabric,
        Job("job:slurm:7", "train", ("h3", "h4")),
        Job("job:slurm:8", "other", ("h1",)),
        Job("job:slurm:9", "eth", ("h3",), nccl_ib_hca="=mlx5_9"),  # its NCCL uses no IB HCA of h3
    )
    [f] = _run(check_mtu, fabric)
    assert f.evidence["jobs"] == ["job:slurm:7"]
    assert f.impact["summary"].endswith("; NCCL over IB of job:slurm:7 runs through it")
    leaf_side = _fabric(h1={"mtu": 4096}, h2={"mtu": 4096}, h4={"mtu": 4096}, **{"3": {"mtu": 2048}})
    [g] = _run(check_mtu, _jobs(leaf_side, Job("job:slurm:7", "train", ("h3",))))
    assert g.evidence["device"] == LEAF and g.evidence["jobs"] == ["job:slurm:7"]  # the port's HCA's host


def test_mtu_from_ibv_devinfo_when_the_port_record_has_none() -> None:
    fabric = _fabric()
    for name in ("h1", "h2", "h3"):
        host = fabric.hosts[name]
        nic = host.nics["mlx5_0"]
        fabric.hosts[name] = Host(
            name, {"mlx5_0": Nic(**{**_nic_fields(nic), "active_mtu": 1024 if name == "h1" else 4096})}
        )
    [f] = _run(check_mtu, fabric)
    assert f.evidence["mtu"] == 1024 and f.evidence["fabric_mtu"] == 4096


def _nic_fields(nic: Nic) -> dict[str, object]:
    return {k: getattr(nic, k) for k in Nic.__slots__}


# --- IB-SL ---


def _jobs(fabric: Fabric, *jobs: Job) -> Fabric:
    fabric.jobs = {j.id: j for j in jobs}
    return fabric


def test_job_sl_against_the_intent() -> None:
    fabric = _jobs(
        _fabric(),
        Job("job:slurm:1", "a", ("h1", "h2"), nccl_ib_sl=1, env_known=True),
        Job("job:slurm:2", "b", ("h3",), nccl_ib_sl=0, env_known=True),
        Job("job:slurm:3", "c", ("h4",), nccl_ib_tc=106, env_known=True),
    )
    fabric.ib = IbFabric(intent_sl=1)
    found = {f.entities[0]: f for f in _run(check_sl, fabric)}
    assert sorted(found) == ["job:slurm:2", "job:slurm:3"]
    assert "NCCL_IB_TC=106 is the GRH traffic class on InfiniBand and selects no SL" in found["job:slurm:3"].message
    assert found["job:slurm:2"].fix[0].commands == ("export NCCL_IB_SL=1",)


def test_job_sl_against_the_other_jobs_and_rank_conflicts() -> None:
    jobs = [Job(f"job:slurm:{i}", None, (f"h{i}",), nccl_ib_sl=2, env_known=True) for i in (1, 2, 3)]
    odd = Job("job:slurm:4", None, ("h4",), nccl_ib_sl=5, env_known=True)
    torn = Job("job:slurm:5", None, ("h1",), nccl_ib_sl=2, env_known=True, sl_conflict=True)
    found = {f.entities[0]: f for f in _run(check_sl, _jobs(_fabric(), *jobs, odd, torn))}
    assert sorted(found) == ["job:slurm:4", "job:slurm:5"]
    assert "different NCCL_IB_SL values" in found["job:slurm:5"].message


def test_a_job_whose_nccl_uses_no_ib_hca_is_not_judged() -> None:
    fabric = _jobs(_fabric(), Job("job:slurm:1", None, ("h1",), nccl_ib_sl=7, nccl_ib_hca="=mlx5_9", env_known=True))
    fabric.ib = IbFabric(intent_sl=1)
    assert _run(check_sl, fabric) == []


# --- TOPO-DEGRADED on InfiniBand ---


def test_degraded_ib_link_names_width_and_speed() -> None:
    fabric = _fabric(h2={"width": "1X"}, **{"2": {"width": "1X"}})
    fabric.hosts["h2"] = Host(
        "h2", {"mlx5_0": Nic(**{**_nic_fields(fabric.hosts["h2"].nics["mlx5_0"]), "speed_mbps": 50_000})}
    )
    sw = fabric.switches[LEAF]
    sw.ports["2"] = Port(LEAF, "2", None, 50_000, "up", None, ib=sw.ports["2"].ib)
    [f] = _run(check_degraded, fabric)
    assert "runs at 1X HDR, 50G, its peers run 4X HDR, 200G" in f.message
    assert any(c.startswith("ibportstate 1 2") for x in f.fix for c in x.commands)


def test_an_hdr_storage_network_beside_a_400g_roce_backend_is_not_degraded() -> None:
    """Tiers are per fabric kind: 200G IB HCAs are not measured against 400G RoCE NICs."""
    fabric = _fabric(hcas=2)  # two IB host links: fewer than three, so the fabric-wide tier decides
    roce_leaf = Switch(
        "leaf1",
        "sonic",
        "x",
        {f"Ethernet{8 * i}": Port("leaf1", f"Ethernet{8 * i}", 9100, 400_000, "up", None) for i in range(2)},
    )
    fabric.switches["leaf1"] = roce_leaf
    for i in range(2):
        name = f"r{i}"
        fabric.hosts[name] = Host(
            name, {"eth0": Nic(name, "eth0", "mlx5_0", 9000, None, speed_mbps=400_000, link_layer="Ethernet")}
        )
        fabric.links.append(Link(Endpoint(name, "eth0"), Endpoint("leaf1", f"Ethernet{8 * i}"), frozenset({"lldp"})))
    assert _run(check_degraded, fabric) == []
