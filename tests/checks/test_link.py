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
    [truth] = result.truth["misconfigurations"]
    assert finding.entities == tuple(truth["entities"])
    leaf = finding.impact["leaf"]
    assert leaf.startswith("leaf-su1-")
    assert finding.impact["hosts"] == [f"gpu{i:03d}" for i in range(1, 33)]
    assert finding.impact["ecmp_share"] == f"1 of 32 uplinks of {leaf}"
