"""Every platform is known to every layer that acts on one; an unknown OS is an error, never another OS."""

from __future__ import annotations

import pytest

from unifab.collect.bundle import SWITCH_READERS
from unifab.platforms import PLATFORMS, UnknownPlatformError, platform, safe_name
from unifab.render.switch_cli import DIALECTS, for_os
from unifab.twin.cluster import OSES
from unifab.twin.writer import SWITCH_WRITERS


def test_every_platform_has_a_dialect() -> None:
    assert sorted(DIALECTS) == sorted(PLATFORMS)


def test_every_platform_with_a_configuration_file_has_a_reader() -> None:
    assert sorted(SWITCH_READERS) == sorted(name for name, p in PLATFORMS.items() if p.config_file is not None)


def test_the_twin_writes_every_os_it_builds() -> None:
    assert sorted(SWITCH_WRITERS) == sorted(OSES)
    assert set(OSES) <= set(PLATFORMS)


def test_port_names_of_each_platform_are_valid_on_it() -> None:
    for p in PLATFORMS.values():
        assert all(safe_name(p, p.port_name(i)) for i in range(64)), p.name


def test_unknown_os_names_the_device() -> None:
    with pytest.raises(UnknownPlatformError, match="leaf9: unknown switch OS 'dellos10'"):
        platform("dellos10", "leaf9")
    with pytest.raises(UnknownPlatformError):
        for_os("dellos10", "leaf9")


def test_a_switch_of_unknown_os_gets_no_guessed_command() -> None:
    [line] = for_os(None, "leaf9").lldp_neighbors("leaf9", "Ethernet0")
    assert line.startswith("# leaf9 was not collected")


@pytest.mark.parametrize(
    ("os_name", "port"),
    [
        ("sonic", "Ethernet0;sudo reboot"),
        ("eos", "Ethernet1\nreload now"),
        ("nvue", "swp1$(id)"),
        ("junos", "et-0/0/1\nrequest system reboot"),
        ("ib", "3;ls"),
    ],
)
def test_a_hostile_port_name_never_enters_a_command(os_name: str, port: str) -> None:
    cli = for_os(os_name, "sw1")
    for commands in (
        cli.lldp_neighbors("sw1", port),
        cli.link_status("sw1", port),
        cli.port_mtu(port, 9100),
        cli.pfc_enable(port, [3]),
    ):
        assert len(commands) == 1
        assert "not printed" in commands[0] or "does not apply" in commands[0]
        assert "\n" not in commands[0]


def test_a_hostile_object_name_never_enters_a_command() -> None:
    [line] = for_os("eos", "sw1").ecn_thresholds("ROCE\nreload now", 3, 1000, 2000)
    assert line.startswith("! not printed:")
    assert "\n" not in line


def test_infiniband_switches_get_infiniband_tools() -> None:
    cli = for_os("ib", "ib-leaf-r1")
    [line] = cli.lldp_neighbors("ib-leaf-r1", "2")
    assert line.startswith("iblinkinfo -l --switches-only | grep -F -- ib-leaf-r1  # the lines of port 2")
    assert cli.pfc_enable("2", [3])[0].startswith("# PFC does not apply")


def test_the_intent_renders_for_every_os_the_twin_builds() -> None:
    from unifab.fabric_plan import SWITCH_RENDERERS

    assert sorted(SWITCH_RENDERERS) == sorted(OSES)


def test_every_live_reader_belongs_to_a_platform() -> None:
    from unifab.collect.inventory import LIVE_ADAPTERS, load_inventory

    assert set(LIVE_ADAPTERS) == {p.live for p in PLATFORMS.values() if p.live is not None}
    with pytest.raises(Exception, match="the switch OSes unifab reads live"):
        load_inventory("devices:\n  - {name: s1, os: nvue, address: 192.0.2.1}\n", "inventory.yaml")
