"""Cumulus Linux LLDP and interfaces: NCLU JSON, lldpctl text, vtysh + ip captures; variants, errors, fuzz."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host import ip_link, lldpcli, lldpctl_text
from unifab.parse.netdev import Interface, Neighbor
from unifab.parse.switch import cumulus

GOLDEN = Path(__file__).parent / "golden"
D = "switch/nvue/"
EXIT01_LLDP = D + "cumulus-4.3.0_exit01_net_show_lldp_json.json"
LEAF01_LLDP = D + "cumulus-4.3.0_leaf01_net_show_lldp_json.json"
EXIT01_IF = D + "cumulus-4.3.0_exit01_vtysh_show_int_vrf_all__ip_-d_address_show.txt"
LEAF01_IF = D + "cumulus-4.3.0_leaf01_vtysh_show_int_vrf_all__ip_-d_address_show.txt"
CL_INTERFACES = D + "suzieq_texttfsm_cl_interfaces.txt"
LLDPD_TXT = D + "suzieq_texttfsm_lldpd.txt"
EDGE01_LLDP = "host/ubuntu-16.04_edge01_lldpctl.txt"
EDGE01_IF = "host/ubuntu-16.04_edge01_ip_-d_address_show.txt"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [
        (EXIT01_LLDP, "cumulus-4.3.0_exit01_net_show_lldp_json.json"),
        (LEAF01_LLDP, "cumulus-4.3.0_leaf01_net_show_lldp_json.json"),
        (EXIT01_IF, "cumulus-4.3.0_exit01_vtysh_show_int_vrf_all__ip_-d_address_show.json"),
        (LEAF01_IF, "cumulus-4.3.0_leaf01_vtysh_show_int_vrf_all__ip_-d_address_show.json"),
        (CL_INTERFACES, "suzieq_texttfsm_cl_interfaces.json"),
        (LLDPD_TXT, "suzieq_texttfsm_lldpd.json"),
    ],
)
def test_golden(samples: Path, golden: object, sample: str, golden_name: str) -> None:
    assert callable(golden)
    golden(GOLDEN / golden_name, cumulus.parse(read(samples, sample), sample))


def test_nclu_json_by_hand(samples: Path) -> None:
    neighbors = cumulus.parse_lldp_json(read(samples, EXIT01_LLDP))
    assert [(n.local_port, n.system_name, n.port_id) for n in neighbors] == [
        ("swp1", "spine01", "swp6"),
        ("swp2", "spine02", "swp6"),
        ("swp3", "exit01", "swp4"),  # exit01's own swp3 and swp4 are cabled to each other
        ("swp4", "exit01", "swp3"),
        ("swp5", "edge01", "eth1"),
        ("swp6", "internet", "swp1"),
    ]
    assert neighbors[0] == Neighbor("swp1", "spine01", "52:54:00:83:72:c9", "swp6", "ifname", "swp6", "10.0.0.21", None)


def test_both_ends_of_exit01_swp5_edge01_eth1(samples: Path) -> None:
    # the link SuzieQ flags with [MTU mismatch, Speed mismatch]: both ends' LLDP and interface state
    exit01 = next(n for n in cumulus.parse_lldp_json(read(samples, EXIT01_LLDP)) if n.local_port == "swp5")
    edge01 = next(n for n in lldpctl_text.parse(read(samples, EDGE01_LLDP)) if n.local_port == "eth1")
    assert (exit01.system_name, exit01.port_id, edge01.system_name, edge01.port_id) == (
        "edge01",
        "eth1",
        "exit01",
        "swp5",
    )
    swp5 = next(i for i in cumulus.parse_interfaces_text(read(samples, EXIT01_IF)) if i.name == "swp5")
    eth1 = next(i for i in ip_link.parse(read(samples, EDGE01_IF)) if i.name == "eth1")
    assert (swp5.mtu, swp5.speed_mbps, swp5.kind) == (9216, 1000, "ethernet")
    assert (eth1.mtu, eth1.speed_mbps, eth1.kind) == (1500, None, "ethernet")
    assert swp5.mac == "52:54:00:41:f9:4d"
    # lldpd on exit01 advertises eth0's MAC as its chassis id
    eth0 = next(i for i in cumulus.parse_interfaces_text(read(samples, EXIT01_IF)) if i.name == "eth0")
    assert edge01.chassis_id == eth0.mac == "52:54:00:7f:7a:90"


def test_combined_capture_by_hand(samples: Path) -> None:
    interfaces = cumulus.parse_interfaces_text(read(samples, EXIT01_IF))
    assert [i.name for i in interfaces] == [  # ip's (ifindex) order
        "lo", "eth0", "swp1", "swp2", "swp3", "swp4", "swp5", "swp6", "mgmt", "swp5.4", "internet-vrf", "swp5.2",
    ]  # fmt: skip
    by_name = {i.name: i for i in interfaces}
    assert by_name["lo"] == Interface("lo", True, True, 65536, None, None, None, "loopback")  # zebra "speed 0"
    assert by_name["swp5.2"] == Interface("swp5.2", True, True, 9216, 1000, "52:54:00:41:f9:4d", None, "vlan")
    assert by_name["mgmt"].kind == "vrf"


def test_cl_interfaces_merges_two_devices(samples: Path) -> None:
    # the SuzieQ fixture glues zebra output of one switch to `ip -d address show` of another plus a laptop
    interfaces = cumulus.parse_interfaces_text(read(samples, CL_INTERFACES))
    by_name = {i.name: i for i in interfaces}
    assert len(interfaces) == 28
    # zebra-only links come last, with zebra's view
    assert [i.name for i in interfaces[-3:]] == ["bond01", "vxlan4001", "mgmt"]
    assert by_name["bond01"] == Interface("bond01", True, True, 9000, None, "44:38:39:00:00:03", None, None)
    assert by_name["vxlan4001"].kind == "vxlan"
    # both parts: kernel state/MTU/MAC, zebra speed and Description
    assert by_name["swp51"] == Interface("swp51", True, True, 9216, 1000, "44:38:39:00:00:28", "to Spine01", "ethernet")
    assert by_name["lo"].description == "loopback interface"
    assert by_name["swp46"] == Interface("swp46", False, False, 1500, None, "44:38:39:00:00:0e", None, "ethernet")
    # zebra speed 4294967295 (SPEED_UNKNOWN) and 0 are unknown
    assert (by_name["bond02"].speed_mbps, by_name["bridge"].speed_mbps) == (None, None)
    assert by_name["peerlink.4094"].speed_mbps == 2000
    assert (by_name["peerlink"].kind, by_name["vlan13-v0"].kind, by_name["vnet2"].kind) == ("bond", "macvlan", "tun")
    assert by_name["wlp107s0"].mtu == 1500  # 3-space indented lines in the capture


def test_lldpctl_text_reused(samples: Path) -> None:
    raw = read(samples, LLDPD_TXT)
    assert cumulus.parse_lldp_text(raw) == lldpctl_text.parse(raw) == cumulus.parse(raw)


# --- constructed variants -------------------------------------------------------------------------


def test_nclu_json_in_the_cleaned_up_json_shape(samples: Path) -> None:
    # an lldpd without json0 prints `-f json`; the same neighbors come out
    raw = read(samples, "host/lldpcli_neighbors_details_switch.json")
    assert cumulus.parse(raw) == cumulus.parse_lldp_json(raw)
    assert [n.local_port for n in cumulus.parse(raw)] == [n.local_port for n in lldpcli.parse(raw)]


def test_zebra_only_states() -> None:
    raw = (
        "Interface swp1 is up, line protocol is down\n"
        "  index 3 metric 0 mtu 9216 speed 100000 \n"
        "  flags: <UP,BROADCAST,MULTICAST>\n"
        "  HWaddr: 44:38:39:00:00:01\n"
        "  Description: to gpu-node-001 ens1np0\n"
        "Interface swp2 is up, line protocol detection is disabled\n"
        "  index 4 metric 0 mtu 9216 speed 25000 txqlen 1000\n"
        "  flags: <UP,BROADCAST,RUNNING,MULTICAST>\n"
        "  Interface Type Bond\n"
        "Interface swp3 is down\n"
        "  Interface Type Other\n"
    )
    assert cumulus.parse(raw) == cumulus.parse_vtysh_interfaces(raw)
    assert cumulus.parse(raw) == (
        Interface("swp1", True, False, 9216, 100000, "44:38:39:00:00:01", "to gpu-node-001 ens1np0", None),
        Interface("swp2", True, True, 9216, 25000, None, None, "bond"),
        Interface("swp3", False, False, None, None, None, None, None),
    )


def test_ip_only_capture() -> None:
    raw = "3: swp1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9216 state UP\n    link/ether 44:38:39:00:00:01\n"
    assert cumulus.parse(raw) == ip_link.parse(raw)


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("", 1, "one of:"),
        ("hello\n", 1, "one of:"),
        ("Interface swp1 is up\nInterface swp1 is sideways\n", 2, "Interface <ifname> is up|down"),
        ("Interface swp1 is up\nInterface swp1 is up\n", 2, "each zebra interface once"),
        (
            "Interface swp1 is up\n1: lo: <LOOPBACK,UP> mtu 65536\n2: lo: <LOOPBACK,UP> mtu 65536\n",
            3,
            "each ip interface once",
        ),
        ("Interface swp1 is up\n1: lo: <LOOPBACK,UP> mtu 65536\nInterface swp2 is up\n", 3, "<index>: <ifname>"),
        ("  index 3 metric 0 mtu 9216\n", 1, "one of:"),
        ('{"lldp": 3}', None, "expected an object"),
        ("LLDP neighbors:\n  Chassis:\n", 2, "before indented lines"),
    ],
)
def test_errors(raw: str, line: int | None, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        cumulus.parse(raw, "t")
    assert (info.value.source, info.value.line) == ("t", line)
    assert expected in info.value.expected


# --- fuzz -----------------------------------------------------------------------------------------


@_SETTINGS
@given(st.text(max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    for prefix in ("", "Interface swp1 is up\n", "LLDP neighbors:\n", "1: lo: <UP> mtu 1\n"):
        try:
            cumulus.parse(prefix + text, "t")
        except ParseError as err:
            assert err.source == "t" and err.expected


def test_interface_capture_with_prompts_between_parts() -> None:
    text = (
        "cumulus@leaf01:mgmt:~$ sudo vtysh -c 'show interface swp1'\n"
        "Interface swp1 is up, line protocol is up\n"
        "  Description: to-spine\n"
        "cumulus@leaf01:mgmt:~$ ip -d address show swp1\n"
        "3: swp1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9216 qdisc pfifo_fast state UP group default qlen 1000\n"
        "    link/ether 44:38:39:00:00:03 brd ff:ff:ff:ff:ff:ff\n"
    )
    (swp1,) = cumulus.parse(text, "t")
    assert isinstance(swp1, Interface)
    assert (swp1.name, swp1.mtu, swp1.description) == ("swp1", 9216, "to-spine")
