"""Cable-length agreement between NIC, switch and plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from unifab.checks.runner import run_checks
from unifab.model import Fabric, Severity

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
    # plan 2.5 m rounds up to 3 m, which the NIC has; the switch's 40 m wastes buffer
    assert finding.severity is Severity.WARNING
    assert finding.fix == (
        replace(
            finding.fix[0],
            device="leaf1",
            commands=("sonic-db-cli CONFIG_DB hset 'CABLE_LENGTH|AZURE' 'Ethernet16' '3m'",),
        ),
    )


def test_without_a_plan_the_ends_must_agree(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic_qos={5: {"cable_len_m": 30}}))
    assert finding.check == "QOS-CABLE-LEN" and "switch's 3 m" in finding.message


def test_matching_plan_is_clean(make_fabric: FabricFactory) -> None:
    assert run_checks(_with_plan(make_fabric(), 3.0)) == []
