"""The switch dialects bound to one switch: its own object names, created when missing, and the save step."""

from __future__ import annotations

from dataclasses import replace

from unifab.model import Port, PortQos, QueueQos, Switch
from unifab.render.switch_cli import EOS_MAX_MTU, finish, for_os


def _port(name: str, wred: str | None, scheduler: str | None = "SCHED_STRICT", marks: bool = True) -> Port:
    queues = {
        3: QueueQos(3, marks, wred if marks else None, "DWRR", 150_000, 1_500_000, 100, 50, "SCHED_DWRR"),
        6: QueueQos(6, False, None, "STRICT" if scheduler else "DWRR", scheduler=scheduler or "SCHED_DWRR"),
    }
    qos = PortQos("MAP_A", {26: 3}, {3: 3}, {3: 3}, frozenset({3}), queues, 5, trust="dscp")
    return Port("leaf1", name, 9100, 400_000, "up", qos)


def _switch(os_name: str, *ports: Port) -> Switch:
    return Switch("leaf1", os_name, "x", {p.name: replace(p, switch="leaf1") for p in ports})


def test_sonic_binds_this_switchs_wred_profile_not_another_switchs() -> None:
    sw = _switch("sonic", _port("Ethernet0", "ROCE_Q3"), _port("Ethernet8", None, marks=False))
    cli = for_os("sonic", "leaf1", sw)
    assert cli.queue_ecn("Ethernet8", 3, 150_000, 1_500_000) == (
        "sonic-db-cli CONFIG_DB hset 'QUEUE|Ethernet8|3' 'wred_profile' 'ROCE_Q3'",
        "sudo config save -y",
    )


def test_sonic_creates_what_the_switch_lacks_before_binding_it() -> None:
    sw = _switch("sonic", _port("Ethernet8", None, scheduler=None, marks=False))
    cli = for_os("sonic", "leaf1", sw)
    create, bind, save = cli.queue_ecn("Ethernet8", 3, 150_000, 1_500_000)
    assert create == (
        "sonic-db-cli CONFIG_DB hset 'WRED_PROFILE|AZURE_LOSSLESS' 'ecn' 'ecn_all' 'wred_green_enable' 'true' "
        "'green_min_threshold' '150000' 'green_max_threshold' '1500000' 'green_drop_probability' '100'"
    )
    assert bind.endswith("'QUEUE|Ethernet8|3' 'wred_profile' 'AZURE_LOSSLESS'") and save == "sudo config save -y"
    assert cli.queue_strict("Ethernet8", 6)[:2] == (
        "sonic-db-cli CONFIG_DB hset 'SCHEDULER|scheduler.strict' 'type' 'STRICT'",
        "sonic-db-cli CONFIG_DB hset 'QUEUE|Ethernet8|6' 'scheduler' 'scheduler.strict'",
    )
    lonely = replace(sw.ports["Ethernet8"], qos=replace(sw.ports["Ethernet8"].qos, trust=None, dscp_map_name=None))
    trust = for_os("sonic", "leaf1", _switch("sonic", lonely)).trust_dscp("Ethernet8", {26: 3})
    assert trust[:2] == (
        "sonic-db-cli CONFIG_DB hset 'DSCP_TO_TC_MAP|AZURE' '26' '3'",
        "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet8' 'dscp_to_tc_map' 'AZURE'",
    )


def test_a_name_read_from_the_switch_passes_the_gate() -> None:
    sw = _switch("sonic", _port("Ethernet0", "bad'; reboot"), _port("Ethernet8", None, marks=False))
    (refused,) = for_os("sonic", "leaf1", sw).queue_ecn("Ethernet8", 3, 150_000, 1_500_000)
    assert refused.startswith("# not printed:") and "reboot" in refused


def test_nvue_creates_a_profile_with_the_ports_whole_content_when_none_fits() -> None:
    sw = _switch("nvue", _port("swp1", None, marks=False))
    cli = for_os("nvue", "leaf1", sw)
    commands = cli.queue_ecn("swp1", 3, 150_000, 1_500_000)
    name = commands[0].split()[4]
    assert name.startswith("unifab-ecn-")
    assert commands[:-3] == (
        f"nv set qos congestion-control {name} traffic-class 3 ecn enable",
        f"nv set qos congestion-control {name} traffic-class 3 min-threshold 150000",
        f"nv set qos congestion-control {name} traffic-class 3 max-threshold 1500000",
        f"nv set qos congestion-control {name} traffic-class 3 probability 100",
    )
    assert commands[-3:] == (
        f"nv set interface swp1 qos congestion-control profile {name}",
        "nv config apply -y",
        "nv config save",
    )


def test_save_steps_close_each_group_once() -> None:
    eos = for_os("eos", "leaf1")
    assert eos.port_mtu("Ethernet1", 9000) == ("configure", "interface Ethernet1", "mtu 9000", "end", "write memory")
    assert eos.port_mtu("Ethernet1", 9216)[:2] == (
        "configure",
        f"! Arista EOS interface MTU tops out at {EOS_MAX_MTU} (asked 9216)",
    )
    assert finish("eos", eos.port_mtu("Ethernet1", 9000)) == eos.port_mtu("Ethernet1", 9000)  # configure once
    assert eos.port_mtu("Ethernet1", 9216)[-3:] == (f"mtu {EOS_MAX_MTU}", "end", "write memory")
    assert eos.cable_length("Ethernet1", 3)[-1].startswith("! EOS sizes")  # nothing to save
    assert eos.lldp_neighbors("leaf1", "Ethernet1") == ("show lldp neighbors Ethernet1 detail",)
    twice = finish("sonic", finish("sonic", ["sudo config interface mtu Ethernet0 9100"]))
    assert twice == ("sudo config interface mtu Ethernet0 9100", "sudo config save -y")
    assert finish("nvue", ["nv set a b", "nv config apply -y", "nv set c d"])[-3:] == (
        "nv set c d",
        "nv config apply -y",
        "nv config save",
    )
    assert finish(None, ["# unknown"]) == ("# unknown",)
