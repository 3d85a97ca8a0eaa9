"""NX-OS LLDP and interfaces: 9.3(4) `| json native` and text captures, ntc detail text; variants, errors, fuzz."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.netdev import Interface, Neighbor, normalize_mac, port_id_subtype
from unifab.parse.switch import nxos

GOLDEN = Path(__file__).parent / "golden"
D = "switch/nxos/"
LLDP_JSON = D + "nxos-9.3.4_leaf01_show_lldp_neighbors_json.json"
BRIEF_JSON = D + "nxos-9.3.4_leaf01_show_interface_brief_json.json"
EGREP = D + "nxos-9.3.4_leaf01_show_interface_egrep.txt"
DETAIL = D + "ntc_cisco_nxos_show_lldp_neighbors_detail.raw"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [
        (LLDP_JSON, "nxos-9.3.4_leaf01_show_lldp_neighbors_json.json"),
        (DETAIL, "ntc_cisco_nxos_show_lldp_neighbors_detail.json"),
        (BRIEF_JSON, "nxos-9.3.4_leaf01_show_interface_brief_json.json"),
        (EGREP, "nxos-9.3.4_leaf01_show_interface_egrep.json"),
    ],
)
def test_golden(samples: Path, golden: object, sample: str, golden_name: str) -> None:
    assert callable(golden)
    golden(GOLDEN / golden_name, nxos.parse(read(samples, sample), sample))


def test_lldp_json_by_hand(samples: Path) -> None:
    neighbors = nxos.parse_lldp_json(read(samples, LLDP_JSON))
    # "Eth1/1" expanded to the name `show interface` uses; the Device ID is the system name
    assert neighbors[0] == Neighbor(
        local_port="Ethernet1/1",
        system_name="spine01",
        chassis_id="spine01",
        port_id="Ethernet1/1",
        port_id_type="ifname",
        port_descr=None,
        mgmt_ip="10.255.2.119",
        mfs=None,
    )
    assert [n.local_port for n in neighbors] == ["Ethernet1/1", "Ethernet1/2", "Ethernet1/5", "Ethernet1/6"]


def test_lldp_detail_by_hand(samples: Path) -> None:
    mgmt, eth1, *_ = nxos.parse_lldp_text(read(samples, DETAIL))
    assert mgmt == Neighbor(
        local_port="mgmt0",
        system_name="Switch.cisco.com",
        chassis_id="00:14:1c:57:a4:8b",  # 0014.1c57.a48b
        port_id="Fa1/0/9",  # the peer's (IOS) abbreviation is kept
        port_id_type=None,
        port_descr="FastEthernet1/0/9",
        mgmt_ip="10.30.140.1",
        mfs=None,
    )
    assert (eth1.local_port, eth1.system_name, eth1.chassis_id) == (
        "Ethernet1/1",
        "n9k2.company.com",
        "50:87:89:a1:d8:d6",
    )


def test_interfaces_by_hand(samples: Path) -> None:
    brief = {i.name: i for i in nxos.parse_interfaces_json(read(samples, BRIEF_JSON))}
    text = {i.name: i for i in nxos.parse_interfaces_text(read(samples, EGREP))}
    assert len(brief) == len(text) == 75
    assert list(brief) == list(text)
    assert brief["mgmt0"] == Interface(
        "mgmt0", True, True, 1500, None, None, None, "ethernet"
    )  # "unknown enum:<65535>"
    assert brief["Ethernet1/1"] == Interface("Ethernet1/1", True, True, None, 1000, None, None, "ethernet")
    assert brief["Ethernet1/7"] == Interface("Ethernet1/7", True, False, None, None, None, None, "ethernet")  # auto
    assert brief["port-channel1"].speed_mbps == 1000  # "a-1000"
    assert (brief["Vlan1"].admin_up, brief["Vlan1"].oper_up) == (False, False)
    assert (brief["Vlan10"].admin_up, brief["Vlan10"].oper_up) == (True, None)
    assert brief["nve1"] == Interface("nve1", True, True, 9216, None, None, None, "vxlan")
    # the text gives MTU and MAC (no speed: egrep drops the duplex/speed line; BW is not speed)
    assert text["Ethernet1/1"] == Interface(
        "Ethernet1/1", True, True, 9216, None, "44:01:02:01:1b:08", None, "ethernet"
    )
    assert text["Ethernet1/7"] == Interface(
        "Ethernet1/7", True, False, 1500, None, "44:01:02:01:01:07", None, "ethernet"
    )
    assert text["Vlan1"] == Interface("Vlan1", False, False, 1500, None, "44:01:02:01:1b:08", None, "vlan")
    assert text["Vlan10"].mtu == 9000  # the SVI lines end in "\r" in the capture
    assert Counter(i.kind for i in text.values()) == Counter(
        {"ethernet": 65, "bond": 3, "loopback": 2, "vlan": 4, "vxlan": 1}
    )


def test_neighbors_join_interfaces(samples: Path) -> None:
    names = {i.name for i in nxos.parse_interfaces_json(read(samples, BRIEF_JSON))}
    assert {n.local_port for n in nxos.parse_lldp_json(read(samples, LLDP_JSON))} <= names


# --- constructed variants -------------------------------------------------------------------------


def test_single_row_tables_and_mac_device_id() -> None:
    # NX-OS collapses a one-row table to an object; a peer without SysName shows its chassis MAC
    raw = json.dumps(
        {
            "TABLE_nbor": {
                "ROW_nbor": {
                    "chassis_type": "Mac Address",
                    "chassis_id": "5087.89a1.d8d6",
                    "l_port_id": "Po12",
                    "hold_time": 120,
                    "port_type": "Mac Address",
                    "port_id": "5087.89a1.d8d7",
                    "mgmt_addr": "not advertised",
                }
            },
            "neigh_count": 1,
        }
    )
    assert nxos.parse(raw) == (
        Neighbor("port-channel12", None, "50:87:89:a1:d8:d6", "50:87:89:a1:d8:d7", "mac", None, None, None),
    )
    assert nxos.parse('{"neigh_hdr": "neigh_hdr", "neigh_count": 0}') == ()
    brief = '{"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/49", "state": "down", "state_rsn_desc": "Administratively down", "speed": "100G", "type": "eth"}}}'  # noqa: E501
    assert nxos.parse(brief) == (Interface("Ethernet1/49", False, False, None, 100000, None, None, "ethernet"),)


@pytest.mark.parametrize(
    ("speed", "mbps"), [("1000", 1000), ("a-1000", 1000), ("10G", 10000), ("a-25G", 25000), ("auto", None)]
)
def test_brief_speeds(speed: str, mbps: int | None) -> None:
    raw = json.dumps(
        {"TABLE_interface": {"ROW_interface": [{"interface": "Ethernet1/1", "state": "up", "speed": speed}]}}
    )
    assert nxos.parse_interfaces_json(raw)[0].speed_mbps == mbps


def test_full_show_interface_text() -> None:
    raw = (
        "Ethernet1/1 is up\n"
        "admin state is up, Dedicated Interface\n"
        "  Hardware: 100/1000/10000 Ethernet, address: 4401.0201.1b08 (bia 4401.0201.0101)\n"
        "  Description: to gpu-node-001\n"
        "  MTU 9216 bytes, BW 10000000 Kbit , DLY 10 usec\n"
        "  reliability 255/255, txload 1/255, rxload 1/255\n"
        "  full-duplex, 10 Gb/s, media type is 10G\n"
        "Ethernet1/2 is down (XCVR not inserted)\n"
        "admin state is up, Dedicated Interface\n"
        "  auto-duplex, auto-speed\n"
        "Ethernet1/3 is down (Administratively down)\n"
        "Ethernet1/3.100 is up\n"
    )
    assert nxos.parse(raw) == (
        Interface("Ethernet1/1", True, True, 9216, 10000, "44:01:02:01:1b:08", "to gpu-node-001", "ethernet"),
        Interface("Ethernet1/2", True, False, None, None, None, None, "ethernet"),
        Interface("Ethernet1/3", False, False, None, None, None, None, "ethernet"),
        Interface("Ethernet1/3.100", True, True, None, None, None, None, "subinterface"),
    )


def test_detail_text_empty_and_not_advertised() -> None:
    raw = (
        "Capability codes:\n  (R) Router, (B) Bridge\n"
        "Device ID            Local Intf      Hold-time  Capability  Port ID  \n\n"
        "Chassis id: leaf9\nPort id: swp3\nLocal Port id: Eth1/9\nPort Description: null\nSystem Name: not advertised\n"
        "System Description: line one\nline two: with a colon\nTime remaining: 100 seconds\n"
        "Management Address: not advertised\n\nTotal entries displayed: 1\n"
    )
    (nb,) = nxos.parse(raw)
    assert nb == Neighbor("Ethernet1/9", None, "leaf9", "swp3", None, None, None, None)
    assert nxos.parse("Capability codes:\nTotal entries displayed: 0\n") == ()


@pytest.mark.parametrize(
    ("text", "mac"),
    [
        ("4401.0201.1B08", "44:01:02:01:1b:08"),
        ("44:1:2:1:1b:8", "44:01:02:01:1b:08"),
        ("44-01-02-01-1B-08", "44:01:02:01:1b:08"),
        ("4401.0201", None),
        ("spine01", None),
        (None, None),
    ],
)
def test_normalize_mac(text: str | None, mac: str | None) -> None:
    assert normalize_mac(text) == mac


def test_port_id_subtypes() -> None:
    assert [port_id_subtype(s) for s in ("Interface Name", "Mac Address", "Locally Assigned", "Agent Circuit Id")] == [
        "ifname",
        "mac",
        "local",
        "unhandled",
    ]
    assert (port_id_subtype("Something New"), port_id_subtype(" "), port_id_subtype(None)) == (
        "something new",
        None,
        None,
    )


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        ("[]", "<root>", "'TABLE_nbor' or 'TABLE_interface'"),
        ('{"TABLE_nbor": []}', "TABLE_nbor", "expected an object"),
        ('{"TABLE_nbor": {"ROW_nbor": [3]}}', "TABLE_nbor.ROW_nbor[0]", "expected an object"),
        ('{"TABLE_nbor": {"ROW_nbor": [{"chassis_id": "x"}]}}', "TABLE_nbor.ROW_nbor[0].l_port_id", "local port"),
        (
            '{"TABLE_nbor": {"ROW_nbor": {"l_port_id": ["Eth1/1"]}}}',
            "TABLE_nbor.ROW_nbor.l_port_id",
            "string or integer",
        ),
        (
            '{"TABLE_interface": {"ROW_interface": [{"interface": "Eth1/1", "speed": "fast"}]}}',
            "TABLE_interface.ROW_interface[0].speed",
            "a speed",
        ),
        (
            '{"TABLE_interface": {"ROW_interface": [{"interface": "Eth1/1", "state": "sleepy"}]}}',
            "TABLE_interface.ROW_interface[0].state",
            "'up' or 'down'",
        ),
        (
            '{"TABLE_interface": {"ROW_interface": [{"mtu": 1500}]}}',
            "TABLE_interface.ROW_interface[0].interface",
            "name",
        ),
    ],
)
def test_json_errors_name_the_key(raw: str, key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        nxos.parse(raw, "t")
    assert (info.value.source, info.value.key, info.value.line) == ("t", key, None)
    assert expected in info.value.expected


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("", 1, "one of:"),
        ("hello\n", 1, "one of:"),
        ("Chassis id: a\nLocal Port id: Eth1/1\nLocal Port id: Eth1/2\n", 3, "one 'Local Port id'"),
        ("Chassis id: a\nPort id: b\n", 1, "`Local Port id:`"),
        ("Capability codes:\nChassis id: a\nbogus line\n", 3, "`Key: value`"),
        ("mgmt0 is up\nadmin state is up,\nEthernet1/1 is sideways\n", 3, "is up|down"),
    ],
)
def test_text_errors_name_the_line(raw: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        nxos.parse(raw, "t")
    assert (info.value.source, info.value.line) == ("t", line)
    assert expected in info.value.expected


# --- fuzz -----------------------------------------------------------------------------------------


@_SETTINGS
@given(st.text(max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    for prefix in ("", "Capability codes:\n", "Ethernet1/1 is up\n"):
        try:
            nxos.parse(prefix + text, "t")
        except ParseError as err:
            assert err.source == "t" and err.expected


_KEYS = ["TABLE_nbor", "ROW_nbor", "l_port_id", "chassis_id", "chassis_type", "port_type", "port_id", "mgmt_addr"]
_KEYS += ["interface", "state", "speed", "mtu", "svi_admin_state", "state_rsn_desc"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "up", "a-10G", "Eth1/1", "Mac Address"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=16,
)


@_SETTINGS
@given(_JSON, st.sampled_from([("TABLE_nbor", "ROW_nbor"), ("TABLE_interface", "ROW_interface")]))
def test_malformed_json_raises_only_parse_error(doc: object, table: tuple[str, str]) -> None:
    try:
        result = nxos.parse(json.dumps({table[0]: {table[1]: doc}}), "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
        return
    assert all(isinstance(r, Neighbor | Interface) for r in result)


@pytest.mark.parametrize(
    ("text", "name", "description", "oper_up"),
    [
        (
            "switch(nxos)# show int vfc3509\nvfc3509 is trunking\n    Bound interface is Vethernet11701\n"
            "    Port description is server 9/1, VHBA fc0\n    Hardware is Virtual Fibre Channel\n",
            "vfc3509",
            "server 9/1, VHBA fc0",
            True,
        ),
        (
            "vfc248 is down (Error Disabled - VFC not bound)\n    Port description is PILLAR_A1\n",
            "vfc248",
            "PILLAR_A1",
            False,
        ),
        ("Vlan10 is up, line protocol is up, autostate enabled\n  Description: SVI-10\n", "Vlan10", "SVI-10", True),
        ("loopback0 is up\nadmin state is up,\n  Description: RID\n", "loopback0", "RID", True),
        ("mgmt0 is up\nadmin state is up,\n  Description: OOB\n", "mgmt0", "OOB", True),
        ("port-channel1 is up\nadmin state is up,\n  Description: vPC peer\n", "port-channel1", "vPC peer", True),
        ("nve1 is up\nadmin state is up,  Hardware: NVE\nDescription: VTEP\n  MTU 9216 bytes\n", "nve1", "VTEP", True),
    ],
)
def test_descriptions_of_every_port_type(text: str, name: str, description: str, oper_up: bool) -> None:
    (entry,) = nxos.parse(text, "t")
    assert isinstance(entry, Interface)
    assert (entry.name, entry.description, entry.oper_up) == (name, description, oper_up)


def test_counter_line_that_lost_its_indent_stays_in_its_block() -> None:
    text = "mgmt0 is up\n  MTU 1500 bytes\n143696673 unicast packets\nVlan1 is down (Administratively down)\n"
    got = nxos.parse(text, "t")
    assert [(i.name, i.mtu) for i in got] == [("mgmt0", 1500), ("Vlan1", None)]
