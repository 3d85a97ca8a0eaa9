"""Fix commands quote what they take from a switch's configuration: one name stays one argument."""

from __future__ import annotations

import shlex

from unifab.render import sonic
from unifab.render.switch_cli import NvueCli, SonicCli


def test_hset_keeps_its_usual_form() -> None:
    expected = "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet0' 'pfc_enable' '3,4'"
    assert sonic.pfc_enable("Ethernet0", [4, 3]) == expected
    assert sonic.port_mtu("Ethernet0", 9100) == "sudo config interface mtu Ethernet0 9100"


def test_names_with_quotes_or_separators_stay_one_argument() -> None:
    evil = "Ethernet0'; reboot; '"
    command = sonic.pfc_enable(evil, [3])
    assert shlex.split(command) == ["sonic-db-cli", "CONFIG_DB", "hset", f"PORT_QOS_MAP|{evil}", "pfc_enable", "3"]
    assert shlex.split(sonic.port_mtu("Ethernet0; reboot", 9100))[4] == "Ethernet0; reboot"
    (create, bind) = SonicCli().queue_strict("a b", 6)  # no strict scheduler on the switch: created first
    assert shlex.split(create)[-3:] == ["SCHEDULER|scheduler.strict", "type", "STRICT"]
    assert shlex.split(bind)[-3:] == ["QUEUE|a b|6", "scheduler", "scheduler.strict"]


def test_nvue_commands_quote_names_for_the_shell() -> None:
    cli = NvueCli()
    assert cli.port_mtu("swp1", 9216) == ("nv set interface swp1 link mtu 9216",)
    assert cli.finish(cli.port_mtu("swp1", 9216)) == (
        "nv set interface swp1 link mtu 9216",
        "nv config apply -y",
        "nv config save",
    )
    (mtu,) = cli.port_mtu("swp1 && reboot", 9216)
    assert shlex.split(mtu) == ["nv", "set", "interface", "swp1 && reboot", "link", "mtu", "9216"]
    (threshold, _) = cli.ecn_thresholds("my profile", 3, 1, 2)
    assert shlex.split(threshold)[4] == "my profile"
