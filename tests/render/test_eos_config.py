"""EOS rendering: the section parses back to the profile, and merges into real running-configs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from render_expect import assert_port
from render_profiles import ROCE, mixed_ports, with_
from strategies import port_sets, profiles

from unifab.collect.switch_view import parse_eos
from unifab.errors import RenderError
from unifab.parse.switch import eos_config as ec
from unifab.profile import PortSpec, QosProfile, WatchdogProfile
from unifab.render.eos_config import apply_to_running_config, render_eos


def _sample(samples: Path, name: str) -> str:
    return (samples / "switch" / "eos" / name).read_text()


def test_ports_of_several_speeds_and_cables_read_back_as_the_profile() -> None:
    ports = mixed_ports("Ethernet", (1, 2, 3, 49))
    ports[1] = PortSpec("Ethernet3/1/1", 200_000, "host")
    text = render_eos(ports, ROCE)
    view = parse_eos(text, "rendered")
    assert set(view.ports) == {p.name for p in ports}
    for spec in ports:
        assert_port(view.ports[spec.name], ROCE, spec, "eos")


def test_section_is_what_running_config_prints() -> None:
    text = render_eos([PortSpec("Ethernet1", 400_000, "host")], ROCE)
    lines = text.splitlines()
    assert "qos map dscp 26 to traffic-class 3" in lines
    assert "qos map dscp 48 to traffic-class 6" in lines
    assert "qos map traffic-class 3 to tx-queue 3" in lines
    profile = lines[lines.index("qos profile ROCE") : lines.index("interface Ethernet1")]
    for line in (
        "   qos trust dscp",
        "   priority-flow-control on",
        "   priority-flow-control priority 3 no-drop",
        "   priority-flow-control pause watchdog",
        "   priority-flow-control pause watchdog port action drop",
        "   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval auto recovery-time 0.2",
        "   tx-queue 3",
        "      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes"
        " max-mark-probability 100",
        "   tx-queue 6",
        "      priority strict",
        "      bandwidth percent 50",
        "      no priority",
    ):
        assert line in profile, line
    assert lines[-5:] == ["interface Ethernet1", "   mtu 9100", "   service-profile ROCE", "!", "end"]


def test_forward_and_alert_watchdog_actions() -> None:
    ports = [PortSpec("Ethernet1", 400_000, "host")]
    forward = render_eos(ports, with_(ROCE, pfcwd=WatchdogProfile(300, 900, "forward")))
    assert "priority-flow-control pause watchdog action no-drop" in forward.splitlines()
    alert = render_eos(ports, with_(ROCE, pfcwd=WatchdogProfile(300, 900, "alert")))
    assert "   priority-flow-control pause watchdog port action notify-only" in alert.splitlines()
    for text, action in ((forward, "forward"), (alert, "alert")):
        wd = parse_eos(text).ports["Ethernet1"].pfcwd
        assert wd is not None and (wd.action, wd.detection_ms, wd.restoration_ms) == (action, 300, 900)


@pytest.mark.parametrize(
    ("ports", "profile", "message"),
    [
        ([PortSpec("Ethernet1\n   shutdown", 400_000, "host")], ROCE, "is not a valid name"),
        ([PortSpec("Et1", 400_000, "host")], ROCE, "expected Ethernet<n>[/<n>[/<n>]]"),
        ([PortSpec("Ethernet1", 400_000, "host")], with_(ROCE, name="ROCE; reload"), "profile name"),
        ([PortSpec("Ethernet1", 400_000, "host")], with_(ROCE, switch_mtu=50), "MTU must be an integer in 68..9214"),
    ],
)
def test_bad_names_and_values_are_refused(ports: list[PortSpec], profile: QosProfile, message: str) -> None:
    with pytest.raises(RenderError, match=r"^eos: ") as err:
        render_eos(ports, profile)
    assert message in str(err.value)


def test_a_switch_mtu_above_the_eos_maximum_is_set_as_9214_with_a_note() -> None:
    """Spectrum-X's 9216 (what SONiC and NVUE take) is more than an Arista interface takes: 9214, and it says so."""
    ports = [PortSpec("Ethernet1", 400_000, "host"), PortSpec("Ethernet2", 400_000, "fabric")]
    text = render_eos(ports, with_(ROCE, switch_mtu=9216))
    assert text.splitlines()[0] == (
        "! unifab: Arista EOS interface MTU tops out at 9214 (asked 9216): "
        "the intent's switch MTU 9216 is set as mtu 9214"
    )
    assert {i.mtu for i in ec.parse(text).interfaces.values()} == {9214}
    assert {p.mtu for p in parse_eos(text, "rendered").ports.values()} == {9214}
    after = apply_to_running_config("hostname leaf1\n!\ninterface Ethernet1\n   mtu 1500\n!\nend\n", text)
    assert "unifab:" not in after and ec.parse(after).interfaces["Ethernet1"].mtu == 9214
    assert render_eos(ports, with_(ROCE, switch_mtu=9214)).startswith("qos map"), "no note when nothing changed"


# --- apply ------------------------------------------------------------------------------------------


def test_apply_to_a_real_roce_switch(samples: Path) -> None:
    """AMD's Arista 7388 example: one port re-rendered, the other keeps its DCQCN profile."""
    current = _sample(samples, "eos_rocm_doc_arista7388_roce_dcqcn.cfg")
    spec = PortSpec("Ethernet2/5/1", 200_000, "host")
    after = apply_to_running_config(current, render_eos([spec], ROCE))
    view = parse_eos(after, "after")
    assert_port(view.ports["Ethernet2/5/1"], ROCE, spec, "eos")
    assert view.ports["Ethernet2/5/1"].speed_mbps == 200_000
    other = view.ports["Ethernet2/5/5"]
    assert other.mtu == 9214 and other.ecn[3].configured == "2000 segments .. 10000 segments"
    cfg = ec.parse(after)
    iface = cfg.interfaces["Ethernet2/5/1"]
    assert (iface.service_profile, iface.ip_address, iface.speed) == ("ROCE", "1.1.122.14/31", "200g-4")
    assert "   error-correction encoding reed-solomon" in after.splitlines()
    assert cfg.qos_maps.tc_to_dscp == {3: 26, 7: 48}  # global lines the render does not set stay
    assert after.endswith("!\nend\n")
    # applying twice changes nothing
    assert apply_to_running_config(after, render_eos([spec], ROCE)) == after


def test_apply_drops_port_overrides_global_pfc_off_and_replaces_global_settings(samples: Path) -> None:
    current = _sample(samples, "eos_avd_intended_qos.cfg")
    assert "priority-flow-control all off" in current.splitlines()
    ports = [PortSpec("Ethernet1", 100_000, "fabric"), PortSpec("Ethernet99", 400_000, "host")]
    profile = with_(ROCE, pfcwd=WatchdogProfile(500, 1500, "forward"))
    after = apply_to_running_config(current, render_eos(ports, profile))
    lines = after.splitlines()
    assert "priority-flow-control all off" not in lines
    assert lines.count("priority-flow-control pause watchdog action no-drop") == 1
    assert "priority-flow-control pause watchdog default timeout 0.05" in lines  # not a setting the render owns
    view = parse_eos(after, "after")
    for spec in ports:
        assert_port(view.ports[spec.name], profile, spec, "eos")
    eth1 = ec.parse(after).interfaces["Ethernet1"]
    assert eth1.description == "P2P_LINK_TO_DC1-SPINE1_Ethernet1" and eth1.switchport is False
    assert eth1.qos.service_policy is None and eth1.qos.default_dscp is None  # the port's own QoS lines are gone
    assert lines.index("interface Ethernet99") > lines.index("interface Ethernet6")
    assert view.ports["Ethernet6"].trust == "pcp"  # an untouched port keeps its settings


def test_apply_over_a_broken_twin_port() -> None:
    current = "\n".join(
        [
            "qos map dscp 26 to traffic-class 1",
            "!",
            "interface Ethernet5",
            "   description gpu001:eth0",
            "   mtu 1500",
            "   qos trust cos",
            "   no priority-flow-control",
            "   no priority-flow-control pause watchdog",
            "   !",
            "   tx-queue 3",
            "      no random-detect ecn",
            "!",
            "end",
        ]
    )
    spec = PortSpec("Ethernet5", 400_000, "host")
    after = apply_to_running_config(current, render_eos([spec], ROCE))
    assert_port(parse_eos(after).ports["Ethernet5"], ROCE, spec, "eos")
    assert "qos map dscp 26 to traffic-class 1" not in after.splitlines()
    assert "   description gpu001:eth0" in after.splitlines()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=profiles(), ports=port_sets("eos"))
def test_any_valid_profile_reads_back(profile: QosProfile, ports: list[PortSpec]) -> None:
    text = render_eos(ports, profile)
    view = parse_eos(text, "rendered")
    for spec in ports:
        assert_port(view.ports[spec.name], profile, spec, "eos")
    assert apply_to_running_config(text, text) == text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=profiles(), new=profiles(), old_ports=port_sets("eos"), new_ports=port_sets("eos"))
def test_re_rendering_a_switch_changes_only_the_rendered_ports(
    old: QosProfile, new: QosProfile, old_ports: list[PortSpec], new_ports: list[PortSpec]
) -> None:
    """Other ports keep their profile; EOS's DSCP and traffic-class maps are switch-wide, so they follow the new one."""
    old, new = with_(old, name="OLD"), with_(new, name="NEW")
    after = apply_to_running_config(render_eos(old_ports, old), render_eos(new_ports, new))
    view = parse_eos(after, "after")
    renamed = {p.name for p in new_ports}
    for spec in new_ports:
        assert_port(view.ports[spec.name], new, spec, "eos")
    switch_wide = with_(old, dscp_to_priority=new.dscp_to_priority, priority_to_tc=new.priority_to_tc)
    for spec in old_ports:
        if spec.name not in renamed:
            assert_port(view.ports[spec.name], switch_wide, spec, "eos")
