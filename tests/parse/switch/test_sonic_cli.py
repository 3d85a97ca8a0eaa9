"""Dell Enterprise SONiC sonic-cli running configuration (AMD ROCm doc excerpt, Z9664F-O64); variants, errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import sonic_cli
from unifab.parse.switch.sonic_cli import SonicCliPfcWatchdog, SonicCliQueue, expand_list

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
SAMPLE = "switch/sonic/dell_enterprise_sonic_cli_z9664_roce_excerpt.cfg"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path) -> str:
    return (samples / SAMPLE).read_text()


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "dell_enterprise_sonic_cli_z9664_roce_excerpt.json", sonic_cli.parse(read(samples), SAMPLE))


def test_sample_by_hand(samples: Path) -> None:
    cfg = sonic_cli.parse(read(samples))
    assert list(cfg.ports) == ["Eth1/1"]
    port = cfg.ports["Eth1/1"]
    assert (port.mtu, port.speed_mbps, port.fec, port.admin_up, port.description) == (
        9216,
        400000,
        "RS",
        True,
        "Spine-Eth1/1",
    )
    assert port.trust == "dscp"
    assert port.dscp_to_tc[24] == port.dscp_to_tc[26] == 3
    assert port.dscp_to_tc[4] == 4 and port.dscp_to_tc[48] == 6
    assert sorted(k for k, v in port.dscp_to_tc.items() if v == 0) == [
        *range(0, 4), *range(5, 24), 25, *range(27, 48), *range(49, 64)
    ]  # fmt: skip
    assert port.dot1p_to_tc == {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 0, 6: 0, 7: 0}
    assert port.tc_to_pg == {0: 7, 1: 7, 2: 7, 3: 3, 4: 4, 5: 7, 6: 7, 7: 7}
    assert port.tc_to_queue == {i: i for i in range(8)} == port.pfc_priority_to_pg == port.pfc_priority_to_queue
    assert port.pfc_enabled == frozenset({3, 4})
    assert sorted(port.queues) == [0, 3, 4, 6]
    assert port.queues[3] == SonicCliQueue(
        index=3,
        scheduler_type="dwrr",
        weight=50,
        wred_policy="ROCE",
        ecn="green",
        green_min_threshold=2048,
        green_max_threshold=12480,
        green_min_bytes=2048 * 1024,
        green_max_bytes=12480 * 1024,
        green_drop_probability=15,
    )
    assert port.queues[6].scheduler_type == "strict" and port.queues[6].ecn is None
    assert port.pfc_watchdog == SonicCliPfcWatchdog(
        enabled=True, action="drop", detect_time_ms=200, restore_time_ms=400
    )


INDENTED = """\
qos wred-policy W
 green minimum-threshold 100 maximum-threshold 200 drop-probability 5
 yellow minimum-threshold 1 maximum-threshold 2 drop-probability 100
 ecn all
!
qos scheduler-policy S
 !
 queue 3
  type dwrr
  weight 40
 !
 queue 1
  type strict
!
qos map dot1p-tc D
 dot1p 0-7 traffic-class 1
!
qos map tc-dscp X
 traffic-class 0 dscp 9
!
router bgp 65000
 neighbor 10.0.0.1 remote-as 1
 mtu 1
!
interface Ethernet0
 shutdown
 mtu 9100
 queue 3 wred-policy W
 queue 5 wred-policy W
 scheduler-policy S
 qos-map dot1p-tc D
 qos-map tc-dscp X
 priority-flow-control priority 3
 priority-flow-control priority 5
 no priority-flow-control priority 5
 priority-flow-control watchdog off
"""


def test_indented_variant() -> None:
    cfg = sonic_cli.parse(INDENTED)
    port = cfg.ports["Ethernet0"]
    assert (port.admin_up, port.mtu, port.trust, port.dot1p_to_tc[7], port.dscp_to_tc) == (False, 9100, "dot1p", 1, {})
    assert port.pfc_enabled == frozenset({3}) and port.pfc_watchdog.enabled is False
    assert {i: (q.scheduler_type, q.weight, q.ecn) for i, q in port.queues.items()} == {
        1: ("strict", None, None),
        3: ("dwrr", 40, "all"),
        5: (None, None, "all"),
    }
    assert cfg.wred_policies["W"].green_max_threshold == 200  # yellow is read but not kept
    assert port.maps == {"dot1p-tc": "D"}  # unknown map kinds are ignored


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "empty"),
        ("interface Eth1/1\nmtu big\n", 2, "mtu"),
        ("interface Eth1/1\nspeed\n", 2, "speed N"),
        ("interface Eth1/1\npriority-flow-control priority 9\n", 2, "0-7"),
        ("interface Eth1/1\npriority-flow-control watchdog on detect 5\n", 2, "detect-time"),
        ("interface Eth1/1\nqueue 3 wred-policy ROCE\n", 2, "wred-policy ROCE"),
        ("interface Eth1/1\nscheduler-policy S\n", 2, "scheduler-policy S"),
        ("interface Eth1/1\nqos-map dscp-tc M\n", 2, "qos map dscp-tc M"),
        ("qos map dscp-tc M\ndscp 0-64 traffic-class 1\n", 2, "0-63"),
        ("qos map dscp-tc M\ndscp 1 traffic-class 8\n", 2, "0-7"),
        ("qos map dscp-tc M\ndscp 1 queue 1\n", 2, "traffic-class"),
        ("qos wred-policy W\ngreen minimum-threshold 9 maximum-threshold 1 drop-probability 5\n", 2, "minimum"),
        ("qos wred-policy W\ngreen minimum-threshold x\n", 2, "minimum-threshold N"),
        ("qos scheduler-policy S\nweight 5\n", 2, "queue N"),
        ("qos scheduler-policy S\nqueue x\n", 2, "queue N"),
        ("interface\n", 1, "interface NAME"),
    ],
)
def test_errors_name_line(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        sonic_cli.parse(text, "t")
    assert err.value.line == line and expected in err.value.expected and err.value.source == "t"


def test_expand_list() -> None:
    assert expand_list("0-2,5", 7) == [0, 1, 2, 5]
    for bad in ("", "1-", "3-1", "8", "a"):
        with pytest.raises(ValueError):
            expand_list(bad, 7)


@_SETTINGS
@given(st.text(max_size=300), st.sampled_from(["", "interface Eth1/1\n", "qos map dscp-tc M\n", "qos wred-policy W\n"]))
def test_random_text_raises_only_parse_error(text: str, prefix: str) -> None:
    try:
        sonic_cli.parse(prefix + text, "t")
    except ParseError as err:
        assert err.source == "t" and err.expected


def test_prompt_lines_around_the_config_are_ignored() -> None:
    text = "sonic# show running-configuration\n!\ninterface Eth1/1\n mtu 9100\n!\nsonic#\n"
    with_prompts = sonic_cli.parse(text, "t")
    without = sonic_cli.parse("!\ninterface Eth1/1\n mtu 9100\n!\n", "t")
    assert with_prompts == without


# --- partial reading and pasted captures -------------------------------------------------------------


def _two_ports(samples: Path) -> str:
    """The sample with its interface block repeated as Eth1/2 (the excerpt configures one port)."""
    text = read(samples)
    start = text.index("interface Eth1/1")
    end = text.find("\n!", start)
    block = text[start : end if end >= 0 else len(text)]
    return text + "\n!\n" + block.replace("interface Eth1/1", "interface Eth1/2") + "\n!\n"


def _lenient(text: str) -> tuple[sonic_cli.SonicCliConfig, ParseProblems]:
    log = ParseProblems(SAMPLE)
    return sonic_cli.parse(text, SAMPLE, log), log


def _break(text: str, old: str, new: str, after: str = "") -> tuple[str, int]:
    lines = text.split("\n")
    i = lines.index(old, lines.index(after) if after else 0)
    lines[i] = new
    return "\n".join(lines), i + 1


def test_bad_interface_line_costs_that_interface(samples: Path) -> None:
    text = _two_ports(samples)
    whole = sonic_cli.parse(text, SAMPLE)
    broken, line = _break(text, "mtu 9216", "mtu jumbo", after="interface Eth1/1")
    with pytest.raises(ParseError):
        sonic_cli.parse(broken, SAMPLE)
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert (problem.line, problem.skipped) == (line, "interface Eth1/1")
    assert got.ports == {"Eth1/2": whole.ports["Eth1/2"]}
    assert (got.wred_policies, got.scheduler_policies, got.maps) == (
        whole.wred_policies,
        whole.scheduler_policies,
        whole.maps,
    )


def test_bad_map_line_costs_the_map_and_the_interfaces_binding_it(samples: Path) -> None:
    text = _two_ports(samples)
    whole = sonic_cli.parse(text, SAMPLE)
    broken, line = _break(text, "dscp 4 traffic-class 4", "dscp 4 traffic-class 9")
    got, log = _lenient(broken)
    first, *bound = log.problems
    assert (first.line, first.skipped) == (line, "qos map dscp-tc ROCE and every interface binding it")
    assert [p.skipped for p in bound] == ["interface Eth1/1", "interface Eth1/2"]
    assert all(f"its line {line} is not" in p.expected for p in bound)
    assert got.ports == {}
    assert got.maps == tuple(m for m in whole.maps if (m.kind, m.name) != ("dscp-tc", "ROCE"))
    assert (got.wred_policies, got.scheduler_policies) == (whole.wred_policies, whole.scheduler_policies)


def test_dangling_binding_costs_that_interface(samples: Path) -> None:
    text = _two_ports(samples)
    whole = sonic_cli.parse(text, SAMPLE)
    broken, line = _break(text, "scheduler-policy ROCE", "scheduler-policy GONE", after="interface Eth1/2")
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert (problem.line, problem.skipped) == (line, "interface Eth1/2")
    assert got.ports == {"Eth1/1": whole.ports["Eth1/1"]}


def test_pasted_blocks_with_prompts_and_blank_lines(samples: Path) -> None:
    text = read(samples)
    whole = sonic_cli.parse(text, SAMPLE)
    start = text.index("interface Eth1/1")
    pasted = (
        "sonic# show running-configuration qos\n\n"
        + text[:start]
        + "\n\nsonic# show running-configuration interface Eth1/1\n# the port\n\n"
        + text[start:]
        + "\nsonic#\n"
    )
    assert sonic_cli.parse(pasted, SAMPLE) == whole
