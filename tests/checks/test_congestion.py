"""ECN, DCQCN and CNP checks: each silent on the clean fixture and exact on one deviation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from unifab.checks.runner import run_checks
from unifab.intent import parse_intent
from unifab.model import Fabric, Severity

FabricFactory = Callable[..., Fabric]


def _queues(fabric: Fabric, port: str) -> dict:  # type: ignore[type-arg]
    qos = fabric.switches["leaf1"].ports[port].qos
    assert qos is not None
    return qos.queues


def test_ecn_thresholds_swapped_in_a_shared_profile_is_one_finding(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(n=6)
    for i in range(6):
        queues = _queues(fabric, f"Ethernet{i * 8}")
        queues[3] = replace(queues[3], ecn_min_bytes=1_500_000, ecn_max_bytes=150_000)
    findings = run_checks(fabric)
    assert [f.check for f in findings] == ["QOS-ECN-THRESH"]
    f = findings[0]
    assert f.subject["config"] == "WRED_PROFILE|ROCE_LOSSLESS" and len(f.entities) == 6
    assert "min 1500000 B ≥ max 150000 B" in f.message
    assert f.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'WRED_PROFILE|ROCE_LOSSLESS' 'green_min_threshold' '150000' "
        "'green_max_threshold' '1500000'",
        "sudo config save -y",
    )


def test_zero_marking_probability(make_fabric: FabricFactory) -> None:
    fabric = make_fabric()
    queues = _queues(fabric, "Ethernet0")
    queues[3] = replace(queues[3], ecn_max_probability=0)
    [finding] = run_checks(fabric)
    assert finding.check == "QOS-ECN-THRESH" and "probability 0%" in finding.message


def test_cnp_queue_not_strict(make_fabric: FabricFactory) -> None:
    fabric = make_fabric()
    queues = _queues(fabric, "Ethernet16")
    queues[6] = replace(queues[6], scheduler_type="DWRR", scheduler="scheduler.0")
    [finding] = run_checks(fabric)
    assert finding.check == "QOS-CNP" and finding.severity is Severity.ERROR
    assert finding.evidence["a"]["cnp_dscp"] == 48 and finding.evidence["b"]["queue"] == 6
    # the strict scheduler this switch's other ports use for queue 6
    assert finding.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'QUEUE|Ethernet16|6' 'scheduler' 'scheduler.1'",
        "sudo config save -y",
    )


def test_cnp_on_a_paused_class(make_fabric: FabricFactory) -> None:
    findings = run_checks(make_fabric(nic_qos={1: {"cnp_dscp": 26}}))
    assert [f.check for f in findings] == ["QOS-CNP"]
    assert "PFC-paused" in findings[0].message


def test_dcqcn_notification_point_off(make_fabric: FabricFactory) -> None:
    [finding] = run_checks(make_fabric(nic_qos={3: {"ecn_np_enabled": frozenset()}}))
    assert finding.check == "QOS-DCQCN-OFF"
    assert finding.fix[0].commands == ("echo 1 > /sys/class/net/eth0/ecn/roce_np/enable/3",)


def test_unknown_dcqcn_state_is_not_a_finding(make_fabric: FabricFactory) -> None:
    assert run_checks(make_fabric(nic_qos={3: {"ecn_np_enabled": None, "ecn_rp_enabled": None}})) == []


def test_equal_ecn_thresholds_get_a_fix_that_changes_them(make_fabric: FabricFactory) -> None:
    """min == max: swapping the two would be a no-op; the fix writes usable thresholds."""
    fabric = make_fabric(n=4)
    for i in range(4):
        queues = _queues(fabric, f"Ethernet{i * 8}")
        queues[3] = replace(queues[3], ecn_min_bytes=500_000, ecn_max_bytes=500_000)
    [finding] = run_checks(fabric)
    assert finding.check == "QOS-ECN-THRESH"
    assert finding.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'WRED_PROFILE|ROCE_LOSSLESS' 'green_min_threshold' '150000' "
        "'green_max_threshold' '1500000'",
        "sudo config save -y",
    )


def _cc_broken(make_fabric: FabricFactory, mode: str | None) -> list[str]:
    """Port 1 does not ECN-mark the RoCE queue and NIC 2's reaction point is off, under an intent whose
    ``congestion_control`` is ``mode`` (no intent when None)."""
    fabric = make_fabric(n=4)
    queues = _queues(fabric, "Ethernet8")
    queues[3] = replace(queues[3], ecn_enabled=False, wred_profile=None, ecn_min_bytes=None, ecn_max_bytes=None)
    nic = fabric.hosts["gpu003"].nics["eth0"]
    assert nic.qos is not None
    fabric.hosts["gpu003"].nics["eth0"] = replace(nic, qos=replace(nic.qos, ecn_rp_enabled=frozenset()))
    if mode is not None:
        cc = f"\n  congestion_control: {mode}" if mode != "default" else ""
        text = f"version: 1\npreset: nvidia-spectrum-x\nqos:\n  name: ROCE{cc}\n"
        fabric.qos_intent = parse_intent(text).base_profile()
    return sorted(f.check for f in run_checks(fabric) if f.check in ("QOS-ECN-OFF", "QOS-DCQCN-OFF"))


@pytest.mark.parametrize("mode", [None, "default", "dcqcn"])
def test_dcqcn_fabric_reports_ecn_and_dcqcn_off(make_fabric: FabricFactory, mode: str | None) -> None:
    assert _cc_broken(make_fabric, mode) == ["QOS-DCQCN-OFF", "QOS-ECN-OFF"]


@pytest.mark.parametrize("mode", ["spectrum-x", "none"])
def test_spectrum_x_or_no_cc_does_not_flag_what_it_intends(make_fabric: FabricFactory, mode: str) -> None:
    assert _cc_broken(make_fabric, mode) == []
