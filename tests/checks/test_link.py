"""Cable-length agreement between NIC, switch and plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, Severity
from unifab.twin.generate import generate

FabricFactory = Callable[..., Fabric]


def _with_plan(fabric: Fabric, metres: float) -> Fabric:
    fabric.links = [replace(lk, cable_m=metres, sources=lk.sources | {"plan"}) for lk in fabric.links]
    return fabric


def test_nic_shorter_than_the_planned_cable(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(_with_plan(make_fabric(nic_qos={2: {"cable_len_m": 1}}), 3.0))
    assert finding.check == "QOS-CABLE-LEN" and finding.severity is Severity.ERROR
    assert finding.fix[0].commands == ("mlnx_qos -i eth0 --cable_len 3",)


def test_switch_longer_than_the_planned_cable(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(_with_plan(make_fabric(port_qos={2: {"cable_len_m": 40}}), 2.5))
    # plan 2.5 m rounds up to 3 m, which the NIC has; the switch's 40 m wastes buffer, and the fix writes the
    # 5 m bucket, the shortest length traditional SONiC buffermgrd has a lossless profile for
    assert finding.severity is Severity.WARNING
    assert finding.fix == (
        replace(
            finding.fix[0],
            device="leaf1",
            commands=("sonic-db-cli CONFIG_DB hset 'CABLE_LENGTH|AZURE' 'Ethernet16' '5m'", "sudo config save -y"),
        ),
    )


def test_without_a_plan_the_ends_must_agree(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic_qos={5: {"cable_len_m": 30}}))
    assert finding.check == "QOS-CABLE-LEN" and "switch's 3 m" in finding.message


def test_matching_plan_is_clean(make_fabric: FabricFactory) -> None:
    assert run_checks(_with_plan(make_fabric(), 3.0)) == []


def test_bad_uplink_names_the_hosts_behind_its_leaf(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=256, seed=4, scenarios=("uplink-mtu",))
    [finding] = run_checks(load_bundle(tmp_path / "b"))
    assert finding.severity is Severity.CRITICAL  # 1500 is below the hosts' 9000: their frames are dropped
    [truth] = result.truth["misconfigurations"]
    assert finding.entities == tuple(truth["entities"])
    leaf = finding.impact["leaf"]
    assert leaf.startswith("leaf-su1-")
    assert finding.impact["hosts"] == [f"gpu{i:03d}" for i in range(1, 33)]
    assert finding.impact["ecmp_share"] == f"1 of 32 uplinks of {leaf}"


def test_nic_mtu_below_the_fabric_with_the_same_roce_mtu_says_roce_is_unaffected(make_fabric: FabricFactory) -> None:
    # 5000 and 9000 both give RoCE MTU 4096 (the largest IB MTU within MTU - 96 bytes of RoCE headers)
    [finding] = run_checks(make_fabric(nic={7: {"mtu": 5000}}))
    assert finding.check == "QOS-MTU" and finding.severity is Severity.INFO
    assert finding.message == "gpu008:eth0 MTU 5000 is below the fabric's 9000; RoCE MTU stays 4096"
    summary = finding.impact["summary"]
    assert summary.startswith("RoCE traffic is unaffected (RoCE MTU stays 4096")
    assert "falls" not in summary and "non-RoCE traffic above 5000 bytes" in summary
    assert finding.evidence["a"]["roce_active_mtu"] == 4096
    assert finding.fix[0].commands == ("ip link set dev eth0 mtu 9000",)


def test_nic_mtu_just_above_the_roce_mtu_and_its_headers_keeps_4096(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic={7: {"mtu": 4192}}))  # 4096 + 96: the smallest MTU that keeps 4096
    assert finding.severity is Severity.INFO and "RoCE MTU stays 4096" in finding.message


def test_nic_mtu_that_lowers_the_roce_mtu_says_it_falls(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic={7: {"mtu": 4191}}))  # one byte short: RoCE MTU 2048
    assert finding.check == "QOS-MTU" and finding.severity is Severity.WARNING
    assert finding.message == "gpu008:eth0 MTU 4191 is below the fabric's 9000 (RoCE MTU 2048)"
    falls = "RoCE path MTU falls to 2048 bytes for every peer of this NIC, cutting bandwidth"
    assert finding.impact["summary"] == falls


def test_nic_mtu_too_small_for_roce_says_so(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic={7: {"mtu": 300}}))
    assert finding.severity is Severity.WARNING and "too small for any RoCE MTU" in finding.message
    assert "RoCE cannot run" in finding.impact["summary"] and "None" not in finding.impact["summary"]


def test_a_fabric_whose_own_roce_mtu_is_lower_is_not_told_it_falls(make_fabric: FabricFactory) -> None:
    # a fabric at 4000 runs RoCE 2048; a NIC at 3000 keeps 2048
    fabric = make_fabric(nic={i: {"mtu": 4000} for i in range(8)} | {7: {"mtu": 3000}})
    [finding] = run_checks(fabric)
    assert finding.severity is Severity.INFO
    assert finding.message == "gpu008:eth0 MTU 3000 is below the fabric's 4000; RoCE MTU stays 2048"
