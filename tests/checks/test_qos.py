"""Each v1 QoS check: silent on a clean fabric, exact on one deviating link, fix on the deviating side."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from unifab.checks.link import roce_active_mtu
from unifab.checks.runner import run_checks
from unifab.model import Fabric, Finding, PfcWatchdog, QueueQos, Severity

SAVE = "sudo config save -y"


def drained(host: str, *commands: str) -> tuple[str, ...]:
    """A link-flapping NIC fix: drain the node in Slurm, wait for its jobs, change, resume."""
    return (
        f"# a PFC change on eth0 toggles its link: drain {host} first (running jobs finish), change it, then resume it",
        f"scontrol update NodeName={host} State=DRAIN 'Reason=unifab: a PFC change on eth0 toggles its link'",
        f"until sinfo -h -n {host} -o %T | grep -q '^drained'; do sleep 10; done",
        *commands,
        f"scontrol update NodeName={host} State=RESUME",
    )


FabricFactory = Callable[..., Fabric]


def _only(fabric: Fabric, check: str) -> list[Finding]:
    return [f for f in run_checks(fabric) if f.check == check]


def test_clean_fabric_has_no_findings(make_fabric: FabricFactory) -> None:
    assert run_checks(make_fabric()) == []


def test_pfc_mismatch_nic_side(make_fabric: FabricFactory) -> None:
    findings = run_checks(make_fabric(nic_qos={2: {"pfc_enabled": frozenset()}}))
    assert [f.check for f in findings] == ["QOS-PFC-MISMATCH"]
    f = findings[0]
    assert f.severity is Severity.CRITICAL
    assert f.entities == ("link:gpu003:eth0--leaf1:Ethernet16",)
    assert f.evidence["a"]["pfc_enabled"] == [] and f.evidence["b"]["pfc_enabled"] == [3]
    assert [(x.device, x.commands) for x in f.fix] == [
        ("gpu003", drained("gpu003", "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0"))
    ]


def test_pfc_mismatch_switch_side(make_fabric: FabricFactory) -> None:
    findings = _only(make_fabric(port_qos={5: {"pfc_enabled": frozenset({3, 4})}}), "QOS-PFC-MISMATCH")
    assert len(findings) == 1
    assert [(x.device, x.commands) for x in findings[0].fix] == [
        ("leaf1", ("sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet40' 'pfc_enable' '3'", SAVE))
    ]


def test_dscp_to_lossy_tc_on_switch(make_fabric: FabricFactory) -> None:
    lossy = dict.fromkeys(range(64), 0) | {26: 1, 48: 6}
    findings = run_checks(make_fabric(port_qos={1: {"dscp_to_tc": lossy}}))
    assert [f.check for f in findings] == ["QOS-DSCP-MAP"]
    f = findings[0]
    assert f.severity is Severity.CRITICAL
    assert "lossy" in f.message
    assert f.evidence["b"]["tc"] == 1 and f.evidence["a"]["priority"] == 3
    assert [x.device for x in f.fix] == ["leaf1"]
    assert f.fix[0].commands == ("sonic-db-cli CONFIG_DB hset 'DSCP_TO_TC_MAP|ROCE' '26' '3'", SAVE)


def test_dscp_to_other_priority_on_nic(make_fabric: FabricFactory) -> None:
    remap = {d: d >> 3 for d in range(64)} | {26: 4}
    findings = run_checks(make_fabric(nic_qos={0: {"dscp2prio": remap}}))
    assert [f.check for f in findings] == ["QOS-DSCP-MAP"]
    assert findings[0].severity is Severity.ERROR  # switch class is still lossless
    assert findings[0].fix[0].commands == ("mlnx_qos -i eth0 --dscp2prio set,26,3",)


def test_nic_tos_override_is_its_own_root_cause(make_fabric: FabricFactory) -> None:
    # tclass 96 is DSCP 24, which the switch leaves in lossy TC 0: one finding, not a DSCP map mismatch too
    findings = run_checks(make_fabric(nic_qos={4: {"traffic_class": 96}}))
    assert [f.check for f in findings] == ["QOS-TC-OVERRIDE"]
    f = findings[0]
    assert f.severity is Severity.CRITICAL
    assert f.evidence["a"]["dscp"] == 24 and f.evidence["b"]["tc_for_dscp"] == 0
    assert f.fix[0].commands == ("echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class",)


def test_ecn_off_on_switch_queue(
    make_fabric: FabricFactory,
) -> None:
    fabric = make_fabric()
    port = fabric.switches["leaf1"].ports["Ethernet8"]
    assert port.qos is not None
    port.qos.queues[3] = QueueQos(3, False, None, "DWRR")
    findings = run_checks(fabric)
    assert [f.check for f in findings] == ["QOS-ECN-OFF"]
    assert findings[0].fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'QUEUE|Ethernet8|3' 'wred_profile' 'ROCE_LOSSLESS'",
        SAVE,
    )


def test_dcqcn_off_on_nic_reaction_point(make_fabric: FabricFactory) -> None:
    findings = run_checks(make_fabric(nic_qos={6: {"ecn_rp_enabled": frozenset({0, 1})}}))
    assert [f.check for f in findings] == ["QOS-DCQCN-OFF"]
    assert findings[0].fix[0].device == "gpu007"
    assert findings[0].fix[0].commands == ("echo 1 > /sys/class/net/eth0/ecn/roce_rp/enable/3",)


def test_switch_mtu_below_nic(make_fabric: FabricFactory) -> None:
    findings = run_checks(make_fabric(port={3: {"mtu": 1500}}))
    assert [f.check for f in findings] == ["QOS-MTU"]
    assert findings[0].severity is Severity.CRITICAL
    assert findings[0].fix[0].commands == ("sudo config interface mtu Ethernet24 9100", SAVE)


def test_nic_mtu_below_fabric(make_fabric: FabricFactory) -> None:
    findings = run_checks(make_fabric(nic={7: {"mtu": 1500}}))
    assert [f.check for f in findings] == ["QOS-MTU"]
    assert findings[0].severity is Severity.WARNING
    assert findings[0].evidence["a"]["roce_active_mtu"] == 1024
    assert findings[0].fix[0].commands == ("ip link set dev eth0 mtu 9000",)


def test_unknown_nic_qos_is_skipped_not_guessed(make_fabric: FabricFactory) -> None:
    assert run_checks(make_fabric(nic={0: {"qos": None, "mtu": None}})) == []


def test_roce_active_mtu() -> None:
    assert [roce_active_mtu(m) for m in (9000, 4200, 4191, 1500, 300)] == [4096, 4096, 2048, 1024, None]


def test_only_filters_checks(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(nic={7: {"mtu": 1500}}, nic_qos={2: {"pfc_enabled": frozenset()}})
    assert {f.check for f in run_checks(fabric, only={"QOS-MTU"})} == {"QOS-MTU"}


def test_switch_map_entry_is_one_finding_for_all_its_links(make_fabric: FabricFactory) -> None:
    lossy = dict.fromkeys(range(64), 0) | {26: 1, 48: 6}
    findings = run_checks(make_fabric(port_qos={i: {"dscp_to_tc": lossy} for i in (1, 2, 3)}, n=10))
    assert len(findings) == 1
    f = findings[0]
    assert f.subject == {"kind": "switch", "id": "switch:leaf1", "config": "DSCP_TO_TC_MAP|ROCE"}
    assert len(f.entities) == 3 and f.impact["links"] == 3
    assert f.evidence["b"]["tc"] == 1 and f.evidence["a"]["priority"] == 3
    assert "3 host links" in f.message


def test_nic_trusting_pcp(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic_qos={4: {"trust": "pcp", "dscp2prio": {}}}))
    assert finding.check == "QOS-TRUST" and finding.severity is Severity.CRITICAL
    assert finding.fix[0].commands == ("mlnx_qos -i eth0 --trust dscp",)


def test_switch_port_without_dscp_map(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(port_qos={4: {"trust": None, "dscp_map_name": None, "dscp_to_tc": {}}}))
    assert finding.check == "QOS-TRUST"
    # the map this switch's other ports use, not a fabric-wide name
    assert finding.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet32' 'dscp_to_tc_map' 'ROCE'",
        SAVE,
    )


def test_pfc_off_on_both_ends_is_lossy_roce(make_fabric: FabricFactory) -> None:
    findings = run_checks(
        make_fabric(nic_qos={1: {"pfc_enabled": frozenset()}}, port_qos={1: {"pfc_enabled": frozenset()}})
    )
    assert [f.check for f in findings] == ["QOS-PFC-LOSSY-ROCE"]
    assert {x.device for x in findings[0].fix} == {"gpu002", "leaf1"}


def test_pfc_watchdog_missing(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(port_qos={2: {"pfcwd": None, "pfcwd_priorities": frozenset()}}))
    assert finding.check == "QOS-PFCWD" and finding.severity is Severity.WARNING
    assert finding.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet16' 'pfcwd_sw_enable' '3'",
        "sonic-db-cli CONFIG_DB hset 'PFC_WD|Ethernet16' 'action' 'drop' 'detection_time' '200' "
        "'restoration_time' '200'",
        SAVE,
    )


def test_pfc_watchdog_on_other_priority_only(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(port_qos={2: {"pfcwd_priorities": frozenset({4})}}))
    assert "priorities [3] unwatched" in finding.message


def test_host_ports_whose_watchdog_only_forwards_are_one_switch_finding(make_fabric: FabricFactory) -> None:
    forward = {"pfcwd": PfcWatchdog("forward", 200, 200)}
    [finding] = _only(make_fabric(4, port_qos=dict.fromkeys(range(4), forward)), "QOS-PFCWD")
    assert finding.severity is Severity.WARNING
    assert finding.subject == {"kind": "switch", "id": "switch:leaf1", "config": "PFC_WD action forward"}
    assert "action forward does not break a storm" in finding.message and len(finding.entities) == 4
    [fix] = finding.fix
    rows = [c for c in fix.commands if "'PFC_WD|Ethernet" in c]
    assert len(rows) == 4 and all("'action' 'drop'" in c for c in rows), "each port's row is rewritten to drop"
    assert fix.commands[-1] == SAVE


def test_detection_below_the_switch_poll_interval_is_fixed_once(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(4)
    fabric.switches["leaf1"] = replace(fabric.switches["leaf1"], pfcwd_poll_ms=1000)
    [finding] = _only(fabric, "QOS-PFCWD")
    assert finding.subject["kind"] == "switch" and "below PFC_WD|GLOBAL POLL_INTERVAL 1000 ms" in finding.message
    assert finding.fix[0].commands == ("sonic-db-cli CONFIG_DB hset 'PFC_WD|GLOBAL' 'POLL_INTERVAL' '200'", SAVE)


def test_global_pause_on_a_pfc_link(make_fabric: FabricFactory) -> None:
    counters = {"ethtool:rx_pause_ctrl_phy": 12, "ethtool:tx_pause_ctrl_phy": 0}
    [finding] = run_checks(make_fabric(nic={3: {"global_pause": (True, True), "counters": counters}}))
    assert finding.check == "QOS-GLOBAL-PAUSE" and finding.severity is Severity.ERROR
    assert finding.evidence["a"]["pause_frames"] == {"rx_pause_ctrl_phy": 12, "tx_pause_ctrl_phy": 0}
    assert finding.fix[0].commands == ("ethtool -A eth0 autoneg off rx off tx off",)


def test_global_pause_off_or_unknown_is_clean(make_fabric: FabricFactory) -> None:
    assert run_checks(make_fabric(nic={3: {"global_pause": (False, False)}, 4: {"global_pause": None}})) == []
