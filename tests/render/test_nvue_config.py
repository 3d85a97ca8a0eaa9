"""NVUE rendering: nv set commands, the applied YAML parses back to the profile, merging into a switch."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from render_expect import assert_port
from render_profiles import ROCE, mixed_ports, with_
from strategies import port_sets, profiles

from unifab.collect.switch_view import parse_nvue
from unifab.errors import ParseError, RenderError
from unifab.parse.switch import nvue
from unifab.profile import PortSpec, QosProfile, WatchdogProfile
from unifab.render.nvue_config import pfcwd_timers, render_nv_set, render_nvue_yaml

GOLDEN = Path(__file__).resolve().parents[1] / "parse" / "switch" / "golden"


def test_ports_of_several_speeds_and_cables_read_back_as_the_profile() -> None:
    ports = mixed_ports("swp", (1, 2, 3, 4))
    text = render_nvue_yaml(ports, ROCE)
    view = parse_nvue(text, "rendered")
    for spec in ports:
        assert_port(view.ports[spec.name], ROCE, spec, "nvue")
    cfg = nvue.parse(text)
    assert cfg.roce_mode == "lossless"
    assert {i.pfc_profile for i in cfg.interfaces.values()} == {"ROCE-1m", "ROCE-3m", "ROCE-30m", "ROCE-100m"}


def test_nv_set_commands() -> None:
    commands = render_nv_set([PortSpec("swp1", 400_000, "host"), PortSpec("swp2s1", 400_000, "host", 7)], ROCE)
    assert commands[-1] == "nv config apply"
    for command in (
        "nv set qos roce mode lossless",
        "nv set qos mapping ROCE trust l3",
        "nv set qos mapping ROCE dscp 26 switch-priority 3",
        "nv set qos mapping ROCE dscp 0 switch-priority 0",
        "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
        "nv set qos pfc ROCE-3m switch-priority 3",
        "nv set qos pfc ROCE-3m cable-length 3",
        "nv set qos pfc ROCE-7m cable-length 7",
        "nv set qos pfc ROCE-3m rx enable",
        "nv set qos congestion-control ROCE traffic-class 3 min-threshold 150000",
        "nv set qos congestion-control ROCE traffic-class 3 max-threshold 1500000",
        "nv set qos congestion-control ROCE traffic-class 3 probability 100",
        "nv set qos egress-scheduler ROCE traffic-class 6 mode strict",
        "nv set qos egress-scheduler ROCE traffic-class 3 bw-percent 50",
        "nv set qos pfc-watchdog polling-interval 100",
        "nv set qos pfc-watchdog robustness 2",
        "nv set interface swp1 qos pfc-watchdog",
        "nv set interface swp1 link mtu 9100",
        "nv set interface swp2s1 qos pfc profile ROCE-7m",
        "nv set interface swp1 qos mapping profile ROCE",
    ):
        assert command in commands, command
    assert not any(" link speed " in c for c in commands)  # the port's speed is not QoS intent
    assert len(commands) == len(set(commands))


@pytest.mark.parametrize(("detection", "timers"), [(200, (100, 2)), (300, (100, 3)), (250, (125, 2)), (101, (101, 1))])
def test_watchdog_timers_multiply_to_the_detection_time(detection: int, timers: tuple[int, int]) -> None:
    assert pfcwd_timers(detection) == timers


def test_merge_into_a_switch_configuration() -> None:
    current = (GOLDEN / "nvue_roce_leaf_reconstructed.yaml").read_text()
    ports = [PortSpec("swp2", 400_000, "host", 2), PortSpec("swp40", 800_000, "fabric", 50)]
    text = render_nvue_yaml(ports, ROCE, current)
    cfg = nvue.parse(text, "merged")
    view = parse_nvue(text, "merged")
    for spec in ports:
        assert_port(view.ports[spec.name], ROCE, spec, "nvue")
    assert cfg.hostname == "leaf01" and cfg.version == "Cumulus Linux 5.16.0"
    # neighbours of a split range keep theirs: speed, MTU and the uplink ECN profile
    assert (cfg.interfaces["swp1"].speed_mbps, cfg.interfaces["swp1"].mtu) == (400_000, 9216)
    assert cfg.interfaces["swp41"].congestion_control_profile == "uplink-ecn"
    assert cfg.interfaces["swp2"].speed_mbps == 400_000  # kept from the switch, not written
    assert cfg.interfaces["swp40"].congestion_control_profile == "ROCE"
    doc = yaml.safe_load(text)
    assert "eth0" in doc[1]["set"]["interface"]  # non-swp interfaces untouched
    assert render_nvue_yaml(ports, ROCE, text) == text  # applying twice changes nothing


def test_a_watchdog_off_profile_turns_the_ports_watchdog_off() -> None:
    current = (GOLDEN / "nvue_roce_leaf_reconstructed.yaml").read_text()
    text = render_nvue_yaml([PortSpec("swp3", 400_000, "host")], with_(ROCE, pfcwd=None), current)
    cfg = nvue.parse(text)
    assert cfg.interfaces["swp3"].pfcwd is False and cfg.interfaces["swp4"].pfcwd is True


def test_current_yaml_that_is_not_nvue_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="a list of"):
        render_nvue_yaml([PortSpec("swp1", 400_000, "host")], ROCE, "- 1\n- 2\n")
    with pytest.raises(ParseError, match="YAML"):
        render_nvue_yaml([PortSpec("swp1", 400_000, "host")], ROCE, "set: [\n")


@pytest.mark.parametrize(
    ("ports", "profile", "message"),
    [
        ([PortSpec("swp1 && reboot", 400_000, "host")], ROCE, "is not a valid name"),
        ([PortSpec("Ethernet1", 400_000, "host")], ROCE, "expected swp<n> or swp<n>s<m>"),
        ([PortSpec("swp1", 400_000, "host")], with_(ROCE, name="default-global"), "NVUE's built-in profile"),
        ([PortSpec("swp1", 400_000, "host")], with_(ROCE, name="a b"), "profile name 'a b'"),
        ([PortSpec("swp1", 400_000, "host")], with_(ROCE, pfcwd=WatchdogProfile(0, 0, "drop")), "must be positive"),
    ],
)
def test_bad_names_and_values_are_refused(ports: list[PortSpec], profile: QosProfile, message: str) -> None:
    with pytest.raises(RenderError, match=r"^nvue: ") as err:
        render_nv_set(ports, profile)
    assert message in str(err.value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=profiles(), ports=port_sets("nvue"))
def test_any_valid_profile_reads_back(profile: QosProfile, ports: list[PortSpec]) -> None:
    text = render_nvue_yaml(ports, profile)
    view = parse_nvue(text, "rendered")
    for spec in ports:
        assert_port(view.ports[spec.name], profile, spec, "nvue")
    assert render_nv_set(ports, profile)[-1] == "nv config apply"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=profiles(), new=profiles(), old_ports=port_sets("nvue"), new_ports=port_sets("nvue"))
def test_re_rendering_a_switch_changes_only_the_rendered_ports(
    old: QosProfile, new: QosProfile, old_ports: list[PortSpec], new_ports: list[PortSpec]
) -> None:
    """Other ports keep their profiles; NVUE's egress-queue map and watchdog timers are switch-wide."""
    old, new = with_(old, name="OLD"), with_(new, name="NEW")
    after = render_nvue_yaml(new_ports, new, render_nvue_yaml(old_ports, old))
    view = parse_nvue(after, "after")
    renamed = {p.name for p in new_ports}
    for spec in new_ports:
        assert_port(view.ports[spec.name], new, spec, "nvue")
    wd = old.pfcwd
    if wd is not None and new.pfcwd is not None:
        wd = WatchdogProfile(new.pfcwd.detection_ms, wd.restoration_ms, wd.action)
    switch_wide = with_(old, priority_to_tc=new.priority_to_tc, pfcwd=wd)
    for spec in old_ports:
        if spec.name not in renamed:
            assert_port(view.ports[spec.name], switch_wide, spec, "nvue")
