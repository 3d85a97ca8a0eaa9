"""fabric.yaml: presets, layering by device group, and one clear message per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.errors import IntentError
from unifab.intent import Device, load_intent, parse_intent, resolve
from unifab.intent_presets import PRESETS, percent_shares
from unifab.parse.switch import nvue


def _problems(text: str) -> list[str]:
    with pytest.raises(IntentError) as info:
        parse_intent(text, "fabric.yaml")
    return info.value.problems


def test_spectrum_x_preset_is_nvidias_roce_tuple() -> None:
    p = parse_intent("preset: nvidia-spectrum-x").base_profile()
    assert (p.roce_dscp, p.roce_priority, p.roce_queue, p.roce_tclass) == (26, 3, 3, 106)
    assert (p.cnp_dscp, p.cnp_priority, p.cnp_queue) == (48, 6, 6)
    assert p.lossless_priorities == frozenset({3})
    assert {(e.tc, e.tsa, e.bw_percent) for e in p.ets} == {(0, "ets", 50), (3, "ets", 50), (6, "strict", 0)}
    roce = next(e for e in p.ecn if e.queue == 3)
    assert (roce.min_bytes, roce.max_bytes, roce.max_probability) == (150_000, 1_500_000, 100)
    # the NVUE parser's `nv set qos roce` defaults are the same source
    assert p.priority_to_tc == nvue.ROCE_DEFAULTS["lossless"].tc_to_queue
    assert all(p.dscp_to_priority[d] == d >> 3 for d in range(64))
    assert p.dcqcn["rpg_time_reset"] == 300 and p.dcqcn["min_time_between_cnps"] == 4
    assert p.nccl_ib_tc == 106


def test_sonic_azure_preset() -> None:
    p = parse_intent("preset: sonic-azure").base_profile()
    assert p.lossless_priorities == frozenset({3, 4})
    assert p.dscp_to_priority[3] == 3 and p.dscp_to_priority[26] == 1 and p.dscp_to_priority[46] == 5
    assert sum(e.bw_percent for e in p.ets) == 100
    assert {(e.queue, e.min_bytes, e.max_bytes, e.max_probability) for e in p.ecn} == {
        (3, 1_048_576, 2_097_152, 5),
        (4, 1_048_576, 2_097_152, 5),
    }


def test_broadcom_thor_preset_puts_roce_on_tc1_and_cnp_strict_on_tc2() -> None:
    p = parse_intent("preset: broadcom-thor").base_profile()
    assert (p.roce_queue, p.cnp_queue, p.cnp_priority) == (1, 2, 7)
    assert next(e for e in p.ets if e.tc == 2).tsa == "strict"
    assert p.nccl_ib_tc == 104  # DSCP 26 << 2: the NIC sets ECT itself


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_valid_alone(name: str) -> None:
    parse_intent(f"preset: {name}").base_profile()


def test_percent_shares_add_up_to_100() -> None:
    assert percent_shares([14, 14, 14, 15, 15, 14, 14, 14]) == [13, 13, 12, 13, 13, 12, 12, 12]
    assert sum(percent_shares([1, 1, 1])) == 100


OVERRIDES = """
preset: nvidia-spectrum-x
qos: {mtu: {switch: 9100}}
overrides:
  - match: {name: "leaf-su2-*"}
    qos: {mtu: {switch: 9000}}
  - match: {role: leaf}
    qos: {mtu: {switch: 9200}, headroom: {per_link: {"leaf-su2-r3:Ethernet8": 11}}}
  - match: {rail: 3}
    qos: {mtu: {switch: 9150}}
  - match: {su: 2}
    qos: {mtu: {switch: 9120}, pfc_watchdog: {action: alert}}
  - match: {os: eos}
    qos: {mtu: {switch: 9214}}
"""


def test_overrides_apply_by_rank_role_su_rail_name() -> None:
    intent = parse_intent(OVERRIDES)
    assert resolve(intent, Device("spine01", "spine")).switch_mtu == 9100
    assert resolve(intent, Device("leaf-su1-r0", "leaf", rail=0, su=1)).switch_mtu == 9200
    assert resolve(intent, Device("leaf-su3-r0", "leaf", rail=0, su=2)).switch_mtu == 9120  # su beats role
    assert resolve(intent, Device("leaf-su1-r3", "leaf", rail=3, su=2)).switch_mtu == 9150  # rail beats su
    both = resolve(intent, Device("leaf-su2-r3", "leaf", rail=3, su=2))
    assert both.switch_mtu == 9000  # a name glob beats everything, though listed first
    assert both.pfcwd is not None and both.pfcwd.action == "alert"  # mappings merge: su 2's survives
    assert both.cable_m("Ethernet8") == 11 and both.cable_m("Ethernet0") == both.cable_length_m
    assert resolve(intent, Device("spine02", "spine", os="eos")).switch_mtu == 9214
    # the fabric-wide profile (the checks' baseline) takes no override
    assert intent.base_profile().switch_mtu == 9100


def test_same_rank_applies_in_file_order() -> None:
    intent = parse_intent(
        "preset: nvidia-spectrum-x\noverrides:\n"
        "  - {match: {role: leaf}, qos: {mtu: {switch: 9100}}}\n"
        "  - {match: {role: [leaf, spine]}, qos: {mtu: {switch: 9000}}}\n"
    )
    assert resolve(intent, Device("l", "leaf")).switch_mtu == 9000


def test_every_schema_problem_named_with_line_path_value_and_allowed() -> None:
    problems = _problems(
        "version: 1\n"
        "preset: nvidia-spectrum-x\n"
        "qos:\n"
        "  roce: {dscp: 70, priority: 3}\n"
        "  mtu: {host: 9000, swich: 9100}\n"
        "  pfc_watchdog: {action: explode, detection_ms: 200, restoration_ms: 200}\n"
        "  ets: [{tc: 9, tsa: ets}]\n"
        "overrides:\n"
        "  - match: {}\n"
        "    qos: {}\n"
    )
    assert problems == [
        "fabric.yaml:4: qos.roce.dscp: Input should be less than or equal to 63; got 70",
        "fabric.yaml:5: qos.mtu.swich: unknown key 'swich'; allowed: host, switch",
        "fabric.yaml:6: qos.pfc_watchdog.action: Input should be 'drop', 'forward' or 'alert'; got 'explode'",
        "fabric.yaml:7: qos.ets[0].tc: Input should be less than or equal to 7; got 9",
        "fabric.yaml:9: overrides[0].match: match needs at least one of role, os, su, rail, name; got {}",
    ]


def test_consistency_problems_are_all_reported() -> None:
    problems = _problems(
        "preset: nvidia-spectrum-x\n"
        "qos:\n"
        "  lossless_priorities: [4]\n"
        "  cnp: {dscp: 26}\n"
        "  ets: [{tc: 0, tsa: ets, bw_percent: 30}, {tc: 6, tsa: strict, bw_percent: 10}]\n"
        "  mtu: {host: 9216, switch: 9100}\n"
        "  nccl: {traffic_class: 160}\n"
    )
    assert problems == [
        "fabric.yaml:4: qos.cnp.dscp: 26 is also the RoCE DSCP; CNPs need their own DSCP",
        "fabric.yaml:3: qos.lossless_priorities: [4] does not contain the RoCE priority 3; RoCE would be lossy",
        "fabric.yaml:5: qos.ets[1].bw_percent: 10 on a strict TC; strict TCs take 0",
        "fabric.yaml:5: qos.ets: ETS bandwidth adds up to 30%; the ets classes must add up to 100%",
        "fabric.yaml:6: qos.mtu.host: 9216 is above the switch MTU 9100",
        "fabric.yaml:7: qos.nccl.traffic_class: 160 carries DSCP 40, not the RoCE DSCP 26; allowed: 104 to 107",
    ]


def test_an_override_that_breaks_the_intent_is_named() -> None:
    problems = _problems("preset: nvidia-spectrum-x\noverrides:\n  - match: {role: leaf}\n    qos: {ecn: []}\n")
    assert problems == [
        "fabric.yaml:4: overrides[0].qos.ecn: no ECN on the RoCE queue 3; DCQCN would never slow a sender"
    ]


def test_missing_values_without_a_preset() -> None:
    problems = _problems("qos: {roce: {dscp: 26, priority: 3}}\n")
    assert problems[0] == "fabric.yaml:1: qos.cnp.dscp: required (no preset sets it); name a preset or give the value"
    assert len(problems) == 9


def test_unknown_preset_lists_the_presets() -> None:
    [problem] = _problems("preset: azure\n")
    assert problem.startswith("fabric.yaml:1: preset: Input should be ")
    assert all(name in problem for name in PRESETS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("qos: [1, 2\n", "fabric.yaml:2: not valid YAML"),
        ("- 1\n- 2\n", "fabric.yaml:1: expected a mapping with version, preset, qos, overrides"),
        ("version: 2\n", "fabric.yaml:1: version: Input should be 1; got 2"),
        ("qos: {roce: {dscp: '26'}}\n", "fabric.yaml:1: qos.roce.dscp: Input should be a valid integer; got '26'"),
    ],
)
def test_unreadable_files(text: str, expected: str) -> None:
    assert _problems(text)[0].startswith(expected)


def test_load_intent_names_an_unreadable_path(tmp_path: Path) -> None:
    with pytest.raises(IntentError, match="cannot read"):
        load_intent(tmp_path / "absent.yaml")


def test_the_documented_example_is_valid() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "intent.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    intent = parse_intent(example, "docs/intent.md")
    assert resolve(intent, Device("spine01", "spine", os="eos")).switch_mtu == 9100
    assert resolve(intent, Device("gpu001", "host", os="mlx5")).dcqcn["rpg_ai_rate"] == 10
    assert resolve(intent, Device("leaf-su1-r0", "leaf")).cable_m("Ethernet0") == 5


def test_traffic_class_zero_is_kept() -> None:
    intent = parse_intent("preset: nvidia-spectrum-x\nqos: {roce: {dscp: 0, priority: 3}, nccl: {traffic_class: 0}}\n")
    assert intent.base_profile().nccl_ib_tc == 0
    # without an explicit one, NCCL_IB_TC follows the RoCE DSCP (with ECT(0))
    assert parse_intent("preset: sonic-azure").base_profile().nccl_ib_tc == 14
    moved = parse_intent("preset: nvidia-spectrum-x\nqos: {roce: {dscp: 24}}\n")
    assert moved.base_profile().nccl_ib_tc == 98
