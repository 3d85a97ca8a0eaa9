"""eos_config: EOS running-config -> interfaces, QoS profiles/maps and the resolved per-port QoS view.

Goldens hold ``to_jsonable`` of the records (``UNIFAB_UPDATE_GOLDEN=1`` rewrites them); the explicit
assertions are the values read by hand from the samples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import eos_config
from unifab.parse.switch.eos_config import (
    DEFAULT_DSCP_TO_TC,
    PFCWD_ACTIONS,
    UNIT_BYTES,
    EosConfig,
    EosInterface,
    EosPfcWatchdog,
    EosPfcWatchdogGlobal,
    EosQosMaps,
    EosQosProfile,
    EosQosSettings,
    EosQueue,
    EosQueueConfig,
    EosThreshold,
    EosWatchdogTimer,
    dump,
    expand_interfaces,
    parse,
    resolve,
    speed_to_mbps,
)

GoldenCheck = Callable[[Path, object], None]
EOS = Path("switch") / "eos"
GOLDEN = Path(__file__).parent / "golden"
AVD_QOS = "eos_avd_intended_qos.cfg"
AVD_PFC = "eos_avd_intended_ethernet_interfaces_pfc_excerpt.cfg"
ROCM = "eos_rocm_doc_arista7388_roce_dcqcn.cfg"
SAMPLES = (AVD_QOS, AVD_PFC, ROCM)


def _load(samples: Path, name: str) -> EosConfig:
    return parse((samples / EOS / name).read_text(), name)


def _non_default(dscp_to_tc: dict[int, int]) -> dict[int, int]:
    return {d: tc for d, tc in dscp_to_tc.items() if DEFAULT_DSCP_TO_TC[d] != tc}


# --- samples ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_golden_and_round_trip(samples: Path, golden: GoldenCheck, name: str) -> None:
    cfg = _load(samples, name)
    golden(GOLDEN / f"eos_config_{name.removesuffix('.cfg')}.json", cfg)
    again = parse(dump(cfg), "rendered")
    assert again == cfg
    assert dump(again) == dump(cfg)


def test_rocm_arista7388_roce(samples: Path) -> None:
    cfg = _load(samples, ROCM)
    assert cfg.hostname is None
    assert list(cfg.interfaces) == ["Ethernet2/5/1", "Ethernet2/5/5"]
    assert cfg.qos_maps.tc_to_dscp == {3: 26, 7: 48}
    assert cfg.qos_maps.dscp_to_tc == {}  # RoCE DSCP 26 reaches TC3 only through the (unverified) default map
    prof = cfg.qos_profiles["QOS_ROCE_DCQCN"].qos
    assert prof.trust == "dscp"
    assert prof.pfc_on is True
    assert prof.pfc_priorities == {3: True}
    assert prof.tx_queues == {}
    q3 = prof.uc_tx_queues[3]
    assert q3.ecn is True
    assert q3.min_threshold == EosThreshold(2000, "segments", None)
    assert q3.max_threshold == EosThreshold(10000, "segments", None)
    assert (q3.max_mark_probability, q3.weight, q3.ecn_count) == (20, 0, True)
    e = cfg.interfaces["Ethernet2/5/1"]
    assert (e.mtu, e.speed, e.speed_mbps, e.service_profile, e.ip_address) == (
        9214,
        "200g-4",
        200000,
        "QOS_ROCE_DCQCN",
        "1.1.122.14/31",
    )
    q = cfg.interface_qos["Ethernet2/5/5"]
    assert q.routed is True  # `ip address` without `switchport`
    assert q.trust == "dscp"
    assert q.dscp_to_tc[26] == 3
    assert q.dscp_to_tc[48] == 6
    assert q.tc_to_queue[3] == 3
    assert q.pfc_on is True
    assert q.pfc_enabled == q.pfc_no_drop == frozenset({3})
    assert q.queues[3].ecn_enabled is True
    assert q.queues[3].strict is True  # default
    assert (q.mtu, q.speed_mbps, q.shutdown) == (9214, 200000, False)
    assert q.pfcwd == EosPfcWatchdog(False, "errdisable", None, None, False, None, False)
    assert q.assumed == {"dscp_to_tc", "cos_to_tc", "tc_to_queue", "queues.strict", "pfcwd.action"}


def test_avd_qos(samples: Path) -> None:
    cfg = _load(samples, AVD_QOS)
    assert list(cfg.interfaces) == [
        "Ethernet1",
        "Ethernet3",
        "Ethernet4",
        "Ethernet6",
        "Ethernet7",
        "Management1",
        "Port-Channel3",
    ]
    assert "Management1" not in cfg.interface_qos
    assert sorted(cfg.qos_profiles) == [
        "experiment",
        "no_qos_trust",
        "qprof_testwithpolicy",
        "test",
        "test_with_pfc",
        "uc_mc_queues_test",
        "wred_queues_test",
        "wred_uc_queues_test",
    ]
    maps = cfg.qos_maps
    assert maps.cos_to_tc == {1: 2, 2: 2, 3: 3, 4: 2}  # `cos 3 to traffic-class 3` comes after `1 2 3 4 to 2`
    assert maps.dscp_to_tc[46] == 5
    assert maps.dscp_to_tc[26] == 4
    assert maps.dscp_drop_precedence == dict.fromkeys((18, 20, 22, 26, 28, 30, 34, 36, 38), 2)
    assert len(maps.dscp_to_tc) == 44 + 9 + 1
    assert maps.tc_to_queue == {6: 2}
    assert maps.tc_to_dscp == {1: 56}
    assert maps.tc_to_cos == {2: 7, 4: 7, 5: 7}
    assert cfg.qos_rewrite_dscp and cfg.ecn_allow_non_ect and cfg.pfc_all_off
    assert cfg.pfc_watchdog == EosPfcWatchdogGlobal("no-drop", 50, 10001, 1220, False)

    assert cfg.qos_profiles["no_qos_trust"].qos.trust == "disabled"
    pfc = cfg.qos_profiles["test_with_pfc"].qos
    assert pfc.pfc_on is True
    assert pfc.pfc_priorities == {0: True, 1: False}
    assert pfc.pfcwd_enabled is True
    assert pfc.pfcwd_action == "drop"
    assert pfc.pfcwd_timer == EosWatchdogTimer(50, None, True, 1110, True)
    uc = cfg.qos_profiles["uc_mc_queues_test"].qos
    assert uc.uc_tx_queues[1].min_threshold == EosThreshold(3, "milliseconds", None)
    assert uc.uc_tx_queues[2].min_threshold == EosThreshold(320, "kbytes", 320 * 1024)
    assert uc.mc_tx_queues[2].strict is True
    assert uc.mc_tx_queues[4].bandwidth_guaranteed_percent == 10
    wred = cfg.qos_profiles["wred_queues_test"].qos.tx_queues
    assert wred[1].ecn is None  # `random-detect drop` is not ECN
    assert wred[3].ecn is True
    assert wred[3].weight == 10

    e1 = cfg.interface_qos["Ethernet1"]  # profile `test` + interface `qos trust dscp`, `qos dscp 48`
    assert (e1.service_profile, e1.trust, e1.routed, e1.default_dscp, e1.mtu) == ("test", "dscp", True, 48, 1500)
    assert e1.service_policy == "pmap_test1"
    assert e1.shape_rate == "80 percent"
    assert e1.pfc_on is False
    assert e1.queues[1] == EosQueue(1, False, None, None, None, None, False, 50, None, False, None)
    q2 = e1.queues[2]
    assert (q2.ecn_enabled, q2.strict, q2.bandwidth_percent, q2.max_mark_probability) == (True, True, 10, 90)
    assert q2.min_threshold == q2.max_threshold == EosThreshold(320, "kbytes", 327680)
    q4 = e1.queues[4]
    assert q4.min_threshold == EosThreshold(320, "segments", None)
    assert (q4.weight, q4.bandwidth_guaranteed_percent) == (10, 10)
    assert e1.tc_to_queue[6] == 2
    assert e1.cos_to_tc == {0: 1, 1: 2, 2: 2, 3: 3, 4: 2, 5: 5, 6: 6, 7: 7}
    assert _non_default(e1.dscp_to_tc)[26] == 4
    assert e1.pfcwd.action == "no-drop"  # global
    assert (e1.pfcwd.timeout_ms, e1.pfcwd.polling_interval_ms, e1.pfcwd.recovery_time_ms) == (50, 10001, 1220)

    e6 = cfg.interface_qos["Ethernet6"]  # profile `experiment`, interface adds `tx-queue 2 / random-detect ecn count`
    assert (e6.trust, e6.routed, e6.default_cos, e6.mtu) == ("cos", False, 2, 9214)
    assert sorted(e6.queues) == [2, 3, 4, 5, 7]
    assert e6.queues[2].ecn_count is True
    assert e6.queues[2].ecn_enabled is False
    assert e6.queues[3].strict is False
    assert e6.queues[7].shape_rate == "40 percent"
    assert "mtu" in e6.assumed

    e7 = cfg.interface_qos["Ethernet7"]  # no trust anywhere: switchport default
    assert e7.trust == "cos"
    assert "trust" in e7.assumed
    assert e7.queues[4].ecn_count is True
    assert e7.queues[5].bandwidth_percent == 19
    assert cfg.interfaces["Ethernet3"].channel_group == 3
    assert cfg.interfaces["Ethernet3"].channel_group_mode == "active"
    assert cfg.interface_qos["Port-Channel3"].service_profile == "experiment"


def test_avd_ethernet_interfaces_pfc(samples: Path) -> None:
    cfg = _load(samples, AVD_PFC)
    e1, e2, e3, e4 = (cfg.interfaces[f"Ethernet{i}"] for i in range(1, 5))
    assert e1.description == "P2P_LINK_TO_DC1-SPINE1_Ethernet1"
    assert (e1.mtu, e1.speed, e1.speed_mbps, e1.switchport) == (1500, "forced 100gfull", 100000, False)
    assert e1.qos.pfc_priorities == {5: False}
    assert e2.switchport is True
    assert e2.ip_address == "10.1.255.3/24"  # the secondaries are not the primary address
    assert e2.qos.pfc_priorities == {5: True}
    assert e3.qos.pfc_on is False  # `no priority-flow-control`
    assert (e4.shutdown, e4.mtu, e4.description) == (True, 9100, "Molecule IPv6")
    q = cfg.interface_qos
    assert (q["Ethernet1"].pfc_on, q["Ethernet1"].pfc_enabled) == (True, frozenset())
    assert (q["Ethernet2"].pfc_on, q["Ethernet2"].pfc_enabled) == (True, frozenset({5}))
    assert (q["Ethernet2"].routed, q["Ethernet2"].trust) == (False, "cos")
    assert q["Ethernet3"].pfc_on is False
    assert (q["Ethernet4"].pfc_on, q["Ethernet4"].pfc_enabled, q["Ethernet4"].shutdown) == (True, frozenset(), True)
    # the `comment ... EOF` body of Ethernet1 is skipped, not read as commands
    assert e1.shutdown is False


# --- variants --------------------------------------------------------------------------------------


def test_interface_ranges_and_lists() -> None:
    assert expand_interfaces("Ethernet1-4") == ["Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"]
    assert expand_interfaces("Ethernet1/1-2") == ["Ethernet1/1", "Ethernet1/2"]
    assert expand_interfaces("Ethernet1/1-1/3") == ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
    assert expand_interfaces("Ethernet1,Ethernet3-4, 7") == ["Ethernet1", "Ethernet3", "Ethernet4", "Ethernet7"]
    assert expand_interfaces("Port-Channel10-11") == ["Port-Channel10", "Port-Channel11"]
    assert expand_interfaces("ethernet3.2") == ["Ethernet3.2"]
    cfg = parse(
        "interface Ethernet1/1-2, Ethernet2/1\n   mtu 9214\n   priority-flow-control on\n"
        "   priority-flow-control priority 3 no-drop\n!\ninterface Ethernet1/2\n   mtu 4200\n"
    )
    assert list(cfg.interfaces) == ["Ethernet1/1", "Ethernet1/2", "Ethernet2/1"]
    assert [i.mtu for i in cfg.interfaces.values()] == [9214, 4200, 9214]
    assert all(q.pfc_enabled == {3} for q in cfg.interface_qos.values())


@pytest.mark.parametrize(
    ("unit", "value", "expected"),
    [
        ("bytes", 20000, 20000),
        ("kbytes", 320, 327680),
        ("mbytes", 2, 2 * 1024 * 1024),
        ("segments", 2000, None),
        ("microseconds", 50, None),
        ("milliseconds", 3, None),
    ],
)
def test_every_threshold_unit(unit: str, value: int, expected: int | None) -> None:
    text = (
        "interface Ethernet1\n   tx-queue 3\n"
        f"      random-detect ecn minimum-threshold {value} {unit} maximum-threshold {value * 2} {unit}\n"
    )
    q = parse(text).interface_qos["Ethernet1"].queues[3]
    assert q.ecn_enabled
    assert q.min_threshold == EosThreshold(value, unit, expected)
    assert q.max_threshold == EosThreshold(value * 2, unit, None if expected is None else expected * 2)
    assert (q.max_mark_probability, q.weight) == (None, None)
    assert set(UNIT_BYTES) >= {unit}


def test_interface_overrides_profile() -> None:
    text = """\
hostname leaf1
qos profile P
   qos trust cos
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control priority 4 no-drop
   priority-flow-control pause watchdog
   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 recovery-time 2
   tx-queue 3
      no priority
      bandwidth percent 40
      random-detect ecn minimum-threshold 100 kbytes maximum-threshold 1 mbytes max-mark-probability 10
   tx-queue 6
      random-detect ecn minimum-threshold 1 kbytes maximum-threshold 2 kbytes
interface Ethernet1
   service-profile P
   qos trust dscp
   priority-flow-control priority 4 drop
   no priority-flow-control pause watchdog
   tx-queue 3
      random-detect ecn minimum-threshold 50 segments maximum-threshold 60 segments
   uc-tx-queue 6
      no random-detect ecn
interface Ethernet2
   service-profile P
   priority-flow-control off
interface Ethernet3
   service-profile MISSING
"""
    cfg = parse(text)
    assert cfg.hostname == "leaf1"
    e1 = cfg.interface_qos["Ethernet1"]
    assert e1.trust == "dscp"
    assert e1.pfc_enabled == {3}
    assert e1.pfcwd.enabled is False
    assert (e1.pfcwd.timeout_ms, e1.pfcwd.polling_interval_ms, e1.pfcwd.recovery_time_ms) == (200, 100, 2000)
    q3 = e1.queues[3]
    assert q3.min_threshold == EosThreshold(50, "segments", None)
    assert q3.max_mark_probability is None  # the interface's threshold group replaces the profile's
    assert (q3.strict, q3.bandwidth_percent) == (False, 40)  # other fields merge
    assert e1.queues[6].ecn_enabled is False
    assert e1.queues[6].min_threshold is None
    e2 = cfg.interface_qos["Ethernet2"]
    assert (e2.pfc_on, e2.pfc_no_drop, e2.pfc_enabled) == (False, {3, 4}, frozenset())
    assert e2.pfcwd.enabled is True
    assert e2.queues[6].ecn_enabled is True
    e3 = cfg.interface_qos["Ethernet3"]  # a profile missing from the config contributes nothing
    assert (e3.service_profile, e3.trust, e3.queues) == ("MISSING", "cos", {})


def test_defaults_and_global_switches() -> None:
    cfg = parse(
        "interface Ethernet1\n   no switchport\ninterface Ethernet2\n   description two words  here\n"
        "interface Ethernet3.3\ninterface Management1\n   mtu 1500\n"
        "priority-flow-control all off\n"
        "interface Ethernet4\n   priority-flow-control mode on\n   priority-flow-control priority 3 no-drop\n"
    )
    q = cfg.interface_qos
    assert (q["Ethernet1"].trust, q["Ethernet1"].mtu, q["Ethernet1"].routed) == ("dscp", 1500, True)
    assert (q["Ethernet2"].trust, q["Ethernet2"].mtu, q["Ethernet2"].routed) == ("cos", 9214, False)
    assert cfg.interfaces["Ethernet2"].description == "two words  here"
    assert q["Ethernet3.3"].routed is True
    assert "Management1" not in q
    assert q["Ethernet1"].dscp_to_tc == DEFAULT_DSCP_TO_TC
    assert q["Ethernet1"].dscp_to_tc is not q["Ethernet2"].dscp_to_tc
    assert q["Ethernet1"].tc_to_queue == {i: i for i in range(8)}
    assert q["Ethernet1"].cos_to_tc[0] == 1
    # `priority-flow-control all off` wins over the interface's `on`
    assert (q["Ethernet4"].pfc_on, q["Ethernet4"].pfc_no_drop, q["Ethernet4"].pfc_enabled) == (False, {3}, frozenset())
    assert cfg.interfaces["Ethernet4"].qos.pfc_on is True


def test_unknown_commands_comments_and_heredocs_are_skipped() -> None:
    text = (
        "! Command: show running-config\r\n"
        "banner motd\r\nhostname evil\r\ninterface Ethernet9\r\nEOF\r\n"
        "router bgp 65000\r\n   neighbor 10.0.0.1 remote-as 65001\r\n   mtu 1\r\n"
        "interface Ethernet1\r\n   comment\r\n   shutdown\r\n   mtu 1\r\n   EOF\r\n"
        "   !! a comment\r\n   switchport trunk allowed vlan 1-4\r\n   l2 mtu 8000\r\n   mtu 9000\r\n"
        "   tx-queue 1\r\n      random-detect drop minimum-threshold 1 kbytes maximum-threshold 2 kbytes\r\n"
        "      some-future-command 3\r\n"
        "qos map exp 0 to traffic-class 0\r\n"
        "qos map dscp to traffic-class NAMED\r\n   dscp 10 to traffic-class 2\r\n"
        "end\r\n"
    )
    cfg = parse(text)
    assert cfg.hostname is None
    assert list(cfg.interfaces) == ["Ethernet1"]
    e1 = cfg.interfaces["Ethernet1"]
    assert (e1.shutdown, e1.mtu) == (False, 9000)
    assert e1.qos.tx_queues == {1: EosQueueConfig(1)}
    assert cfg.qos_maps == EosQosMaps()


def test_speed_forms() -> None:
    assert speed_to_mbps("200g-4") == 200000
    assert speed_to_mbps("forced 100gfull") == 100000
    assert speed_to_mbps("1000full") == 1000
    assert speed_to_mbps("2.5gfull") == 2500
    assert speed_to_mbps("auto") is None
    assert speed_to_mbps("auto 40gfull") == 40000
    assert speed_to_mbps("sfp-1000baset auto 100full") == 100
    with pytest.raises(ValueError, match="fast"):
        speed_to_mbps("fast")


def test_render_for_twin() -> None:
    """What the twin builds: a profile, interfaces with a speed string, resolved then rendered."""
    settings_ = EosQosSettings(
        trust="dscp",
        pfc_on=True,
        pfc_priorities={3: True},
        pfcwd_enabled=True,
        tx_queues={3: EosQueueConfig(3, ecn=True, min_threshold=EosThreshold(150, "kbytes", 153600),
                                     max_threshold=EosThreshold(1500, "kbytes", 1536000), max_mark_probability=10)},
    )  # fmt: skip
    cfg = resolve(
        EosConfig(
            hostname="leaf-su1-r0",
            interfaces={
                f"Ethernet{i}": EosInterface(
                    f"Ethernet{i}", mtu=9214, speed="400g-8", speed_mbps=400000, service_profile="ROCE"
                )
                for i in (1, 2)
            },
            interface_qos={},
            qos_profiles={"ROCE": EosQosProfile("ROCE", settings_)},
            qos_maps=EosQosMaps(dscp_to_tc={26: 3, 48: 6}),
            qos_rewrite_dscp=False,
            ecn_allow_non_ect=False,
            pfc_all_off=False,
            pfc_watchdog=EosPfcWatchdogGlobal(action="drop", timeout_ms=200),
        )
    )
    text = dump(cfg)
    assert "qos map dscp 26 to traffic-class 3\n" in text
    assert "   service-profile ROCE\n" in text
    assert "priority-flow-control pause watchdog default timeout 0.2\n" in text
    assert parse(text) == cfg
    q = cfg.interface_qos["Ethernet2"]
    assert (q.pfc_enabled, q.queues[3].ecn_enabled, q.speed_mbps, q.pfcwd.action) == ({3}, True, 400000, "drop")


def test_render_refuses_ecn_without_thresholds() -> None:
    cfg = resolve(
        EosConfig(
            None,
            {"Ethernet1": EosInterface("Ethernet1", qos=EosQosSettings(tx_queues={3: EosQueueConfig(3, ecn=True)}))},
        )
    )
    with pytest.raises(ValueError, match="thresholds"):
        dump(cfg)


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("hostname\n", 1, "hostname NAME"),
        ("!\ninterface Ethernet1\n   mtu jumbo\n", 3, "'jumbo'"),
        ("interface Ethernet1\n   mtu 70000\n", 2, "MTU in 0..65535"),
        ("interface Ethernet1\n   speed fast\n", 2, "speed"),
        ("interface Ethernet1\n   description\n", 2, "description"),
        ("interface Ethernet1\n   qos trust everything\n", 2, "dscp|cos|disabled"),
        ("interface Ethernet1\n   qos dscp 64\n", 2, "default dscp in 0..63"),
        ("interface Ethernet1\n   priority-flow-control priority 9 no-drop\n", 2, "PFC priority in 0..7"),
        ("interface Ethernet1\n   priority-flow-control priority 3 lossless\n", 2, "no-drop|drop"),
        ("interface Ethernet1\n   priority-flow-control pause watchdog port action panic\n", 2, "port action"),
        ("qos profile P\n   priority-flow-control pause watchdog port timer timeout 0.0001\n", 2, "3 decimals"),
        ("qos profile P\n   priority-flow-control pause watchdog port timer sometimes 1\n", 2, "'forced'"),
        ("qos profile P\n   service-profile X\n   tx-queue x\n", 3, "tx-queue number"),
        ("qos profile P\n   tx-queue 3\n      priority high\n", 3, "priority strict"),
        ("qos profile P\n   tx-queue 3\n      bandwidth percent 101\n", 3, "0..100"),
        (
            "qos profile P\n   tx-queue 3\n"
            "      random-detect ecn minimum-threshold 1 furlongs maximum-threshold 2 bytes\n",
            3,
            "'furlongs'",
        ),
        ("qos profile P\n   tx-queue 3\n      random-detect ecn minimum-threshold 1 bytes\n", 3, "maximum-threshold"),
        (
            "qos profile P\n   tx-queue 3\n      random-detect ecn minimum-threshold 1 bytes maximum-threshold 2 bytes"
            " max-mark-probability 101\n",
            3,
            "max-mark-probability in 0..100",
        ),
        (
            "qos profile P\n   tx-queue 3\n"
            "      random-detect ecn minimum-threshold 1 bytes maximum-threshold 2 bytes x\n",
            3,
            "weight",
        ),
        ("qos profile\n", 1, "qos profile NAME"),
        ("qos map dscp 64 to traffic-class 1\n", 1, "dscp in 0..63"),
        ("qos map dscp 10 to traffic-class\n", 1, "traffic class"),
        ("qos map dscp 10 to traffic-class 1 color red\n", 1, "drop-precedence"),
        ("qos map dscp 10-8 to traffic-class 1\n", 1, "ascending"),
        ("qos map traffic-class 1 to tx-queue 1 2\n", 1, "one value"),
        ("qos map cos 1 2\n", 1, "to ..."),
        ("priority-flow-control pause watchdog default timeout soon\n", 1, "timeout in seconds"),
        ("priority-flow-control pause watchdog default nap 1\n", 1, "default timeout"),
        ("priority-flow-control pause watchdog action explode\n", 1, "'action'"),
        ("priority-flow-control pause watchdog override action keep\n", 1, "override action drop"),
        ("interface Ethernet1/1-2/4\n", 1, "differ only in the last number"),
        ("interface Ethernet4-1\n", 1, "ascending interface range"),
        ("interface Ethernet1-99999\n", 1, "at most"),
        ("interface 7\n", 1, "with a type"),
        ("interface Ethernet1\n   channel-group x mode active\n", 2, "channel-group number"),
        ("interface Ethernet1\n   channel-group 1 active\n", 2, "channel-group N mode"),
    ],
)
def test_malformed_known_commands(text: str, line: int, needle: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text, "bad.cfg")
    err = info.value
    assert err.source == "bad.cfg"
    assert err.line == line, err
    assert needle in err.expected, err


@pytest.mark.parametrize("text", ["", "\n\n", "!\n! only comments\n", "   \n \n"])
def test_empty_config_is_an_error(text: str) -> None:
    with pytest.raises(ParseError, match="no commands"):
        parse(text, "empty.cfg")


# --- properties ------------------------------------------------------------------------------------

_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)
_IFACES = st.sampled_from(["Ethernet1", "Ethernet2", "Ethernet10", "Ethernet1/1", "Ethernet2/5/1", "Port-Channel3"])
_SPEEDS = st.sampled_from([None, "100g", "200g-4", "400g-8", "forced 100gfull", "25gfull", "1000full", "auto"])
_MS = st.integers(0, 10**6)


@st.composite
def _threshold(draw: st.DrawFn) -> EosThreshold:
    unit = draw(st.sampled_from(sorted(UNIT_BYTES)))
    value = draw(st.integers(0, 10**7))
    scale = UNIT_BYTES[unit]
    return EosThreshold(value, unit, None if scale is None else value * scale)


@st.composite
def _queue(draw: st.DrawFn, index: int) -> EosQueueConfig:
    ecn = draw(st.sampled_from([None, True, False]))
    on = ecn is True
    return EosQueueConfig(
        index=index,
        strict=draw(st.sampled_from([None, True, False])),
        bandwidth_percent=draw(st.none() | st.integers(0, 100)),
        bandwidth_guaranteed_percent=draw(st.none() | st.integers(0, 100)),
        shape_rate=draw(st.sampled_from([None, "40 percent", "10000000"])),
        ecn=ecn,
        min_threshold=draw(_threshold()) if on else None,
        max_threshold=draw(_threshold()) if on else None,
        max_mark_probability=draw(st.none() | st.integers(0, 100)) if on else None,
        weight=draw(st.none() | st.integers(0, 15)) if on else None,
        ecn_count=draw(st.sampled_from([None, True, False])),
    )


def _queues(draw: st.DrawFn) -> dict[int, EosQueueConfig]:
    return {i: draw(_queue(i)) for i in draw(st.sets(st.integers(0, 7), max_size=3))}


@st.composite
def _timer(draw: st.DrawFn) -> EosWatchdogTimer:
    auto = draw(st.booleans())
    return EosWatchdogTimer(
        timeout_ms=draw(st.none() | _MS),
        polling_interval_ms=None if auto else draw(st.none() | _MS),
        polling_auto=auto,
        recovery_time_ms=draw(st.none() | _MS),
        forced=draw(st.booleans()),
    )


@st.composite
def _qos(draw: st.DrawFn) -> EosQosSettings:
    return EosQosSettings(
        trust=draw(st.sampled_from([None, "dscp", "cos", "disabled"])),
        default_cos=draw(st.none() | st.integers(0, 7)),
        default_dscp=draw(st.none() | st.integers(0, 63)),
        service_policy=draw(st.none() | _NAME),
        shape_rate=draw(st.sampled_from([None, "80 percent"])),
        pfc_on=draw(st.sampled_from([None, True, False])),
        pfc_priorities=draw(st.dictionaries(st.integers(0, 7), st.booleans(), max_size=3)),
        pfcwd_enabled=draw(st.sampled_from([None, True, False])),
        pfcwd_action=draw(st.none() | st.sampled_from(sorted(PFCWD_ACTIONS))),
        pfcwd_timer=draw(st.none() | _timer()),
        tx_queues=_queues(draw),
        uc_tx_queues=_queues(draw),
        mc_tx_queues=_queues(draw),
    )


@st.composite
def _interface(draw: st.DrawFn, name: str, profiles: list[str]) -> EosInterface:
    speed = draw(_SPEEDS)
    group = draw(st.none() | st.integers(1, 2000))
    return EosInterface(
        name=name,
        description=draw(st.none() | st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ .:/-]{0,20}[A-Za-z0-9_]", fullmatch=True)),
        shutdown=draw(st.booleans()),
        mtu=draw(st.none() | st.integers(68, 9216)),
        speed=speed,
        speed_mbps=None if speed is None else speed_to_mbps(speed),
        switchport=draw(st.sampled_from([None, True, False])),
        ip_address=draw(st.sampled_from([None, "10.0.0.1/31", "192.0.2.5/24"])),
        channel_group=group,
        channel_group_mode=None if group is None else draw(st.sampled_from([None, "active", "on"])),
        service_profile=draw(st.none() | st.sampled_from([*profiles, "ABSENT"])),
        qos=draw(_qos()),
    )


@st.composite
def configs(draw: st.DrawFn) -> EosConfig:
    profile_names = sorted(draw(st.sets(_NAME, max_size=2)))
    dscp_to_tc = draw(st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=10))
    dp_keys = draw(st.sets(st.sampled_from(sorted(dscp_to_tc)), max_size=3)) if dscp_to_tc else set()
    maps = EosQosMaps(
        dscp_to_tc=dscp_to_tc,
        dscp_drop_precedence={d: draw(st.integers(0, 2)) for d in dp_keys},
        cos_to_tc=draw(st.dictionaries(st.integers(0, 7), st.integers(0, 7), max_size=4)),
        tc_to_queue=draw(st.dictionaries(st.integers(0, 7), st.integers(0, 15), max_size=4)),
        tc_to_dscp=draw(st.dictionaries(st.integers(0, 7), st.integers(0, 63), max_size=2)),
        tc_to_cos=draw(st.dictionaries(st.integers(0, 7), st.integers(0, 7), max_size=2)),
    )
    names = draw(st.sets(_IFACES, max_size=3))
    cfg = EosConfig(
        hostname=draw(st.none() | _NAME),
        interfaces={n: draw(_interface(n, profile_names)) for n in names},
        interface_qos={},
        qos_profiles={p: EosQosProfile(p, draw(_qos())) for p in profile_names},
        qos_maps=maps,
        qos_rewrite_dscp=draw(st.booleans()),
        ecn_allow_non_ect=draw(st.booleans()),
        pfc_all_off=draw(st.booleans()),
        pfc_watchdog=EosPfcWatchdogGlobal(
            action=draw(st.none() | st.sampled_from(sorted(PFCWD_ACTIONS))),
            timeout_ms=draw(st.none() | _MS),
            polling_interval_ms=draw(st.none() | _MS),
            recovery_time_ms=draw(st.none() | _MS),
            override_action_drop=draw(st.booleans()),
        ),
    )
    return resolve(cfg)


@settings(_SETTINGS, max_examples=300)
@given(configs())
def test_render_round_trip(cfg: EosConfig) -> None:
    text = dump(cfg)
    assert parse(text, "rendered") == cfg


def _only_parse_errors(text: str) -> None:
    try:
        parse(text, "fuzz.cfg")
    except ParseError as err:
        assert err.source == "fuzz.cfg"
        assert err.expected
        assert err.line is None or 1 <= err.line <= text.count("\n") + 1


_WORDS = [
    "interface", "Ethernet1", "Ethernet1-3", "qos", "profile", "P", "map", "dscp", "cos", "traffic-class",
    "tx-queue", "uc-tx-queue", "to", "1", "3", "63", "99", "priority-flow-control", "priority", "no-drop",
    "on", "pause", "watchdog", "port", "timer", "timeout", "0.05", "action", "drop", "default", "random-detect",
    "ecn", "minimum-threshold", "maximum-threshold", "kbytes", "segments", "max-mark-probability", "weight",
    "no", "mtu", "speed", "100g", "service-profile", "trust", "description", "bandwidth", "percent",
    "strict", "shape", "rate", "hostname", "comment", "EOF", "!", "-", ",", "auto", "forced", "polling-interval",
]  # fmt: skip


@settings(_SETTINGS, max_examples=400)
@given(st.lists(st.tuples(st.sampled_from([0, 3, 6]), st.lists(st.sampled_from(_WORDS), min_size=1, max_size=9))))
def test_keyword_soup_raises_only_parse_error(lines: list[tuple[int, list[str]]]) -> None:
    _only_parse_errors("".join(" " * indent + " ".join(words) + "\n" for indent, words in lines))


@settings(_SETTINGS, max_examples=200)
@given(st.data())
def test_truncated_and_mutated_samples_raise_only_parse_error(samples: Path, data: st.DataObject) -> None:
    text = (samples / EOS / data.draw(st.sampled_from(SAMPLES))).read_text()
    cut = data.draw(st.integers(0, len(text)))
    lines = text[:cut].splitlines(keepends=True)
    if lines and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(lines) - 1))
        lines[i] = data.draw(st.text(max_size=40)) + "\n"
    _only_parse_errors("".join(lines))


def test_records_are_frozen() -> None:
    q = EosQueueConfig(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.index = 2  # type: ignore[misc]
    assert isinstance(eos_config.DEFAULT_PFCWD_ACTION, str)
