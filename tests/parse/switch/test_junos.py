"""Junos LLDP and interfaces: vQFX/vMX `| display json` captures and ntc CLI text; variants, errors, fuzz."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.netdev import Interface, Neighbor
from unifab.parse.switch import junos

GOLDEN = Path(__file__).parent / "golden"
D = "switch/junos/"
VMX_LLDP = D + "junos-mx-18.2R1.9_CRP-DIS-SW01_show_lldp_neighbors.json"
DCEDGE_LLDP = D + "junos-qfx-19.4R1.10_dcedge01_show_lldp_neighbors_detail.json"
LEAF_LLDP = D + "junos-qfx-19.4R1.10_leaf01_show_lldp_neighbors_detail.json"
DCEDGE_IF = D + "junos-qfx-19.4R1.10_dcedge01_show_interface.json"
NTC_IF = D + "ntc_juniper_junos_show_interfaces.raw"
NTC_LLDP = D + "ntc_juniper_junos_show_lldp_neighbors.raw"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def j(value: str) -> list[dict[str, str]]:
    """A Junos JSON element."""
    return [{"data": value}]


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [
        (VMX_LLDP, "junos-mx-18.2R1.9_CRP-DIS-SW01_show_lldp_neighbors.json"),
        (DCEDGE_LLDP, "junos-qfx-19.4R1.10_dcedge01_show_lldp_neighbors_detail.json"),
        (LEAF_LLDP, "junos-qfx-19.4R1.10_leaf01_show_lldp_neighbors_detail.json"),
        (NTC_IF, "ntc_juniper_junos_show_interfaces.json"),
        (NTC_LLDP, "ntc_juniper_junos_show_lldp_neighbors.json"),
    ],
)
def test_golden(samples: Path, golden: object, sample: str, golden_name: str) -> None:
    assert callable(golden)
    golden(GOLDEN / golden_name, junos.parse(read(samples, sample), sample))


def test_vqfx_interfaces_excerpt_and_counts(samples: Path, golden: object) -> None:
    assert callable(golden)
    interfaces = junos.parse_interfaces_json(read(samples, DCEDGE_IF), DCEDGE_IF)
    raw = json.loads(read(samples, DCEDGE_IF))["interface-information"][0]["physical-interface"]
    units = sum(len(p.get("logical-interface", [])) for p in raw)
    assert (len(raw), units, len(interfaces)) == (38, 23, 61)
    by_name = {i.name: i for i in interfaces}
    assert len(by_name) == 61
    excerpt = ["xe-0/0/0", "xe-0/0/0.0", "em0", "gr-0/0/0", "irb", "lo0", "lo0.0", "vme", "esi", "bme0.0", "jsrv.1"]
    golden(GOLDEN / "junos-qfx-19.4R1.10_dcedge01_show_interface_excerpt.json", [by_name[n] for n in excerpt])
    assert Counter(i.kind for i in interfaces) == Counter(
        {
            "ethernet": 18,  # xe-0/0/0..11, em0..4, bme0
            "subinterface": 17,  # xe-*.0 (12), em0/1/2/4 units, bme0.0
            None: 16,
            "tunnel": 5,  # gr-0/0/0, fti0, gre, ipip, mtun
            "loopback": 3,
            "vlan": 1,  # irb
            "vxlan": 1,  # vtep
        }
    )
    # speeds: "10Gbps" x12, "1000mbps" x5, "800mbps" x3; "Unlimited" and absent -> None
    assert Counter(i.speed_mbps for i in interfaces if i.speed_mbps) == Counter({10000: 12, 1000: 5, 800: 3})
    # MTU "Unlimited" -> None; physical ethernet 1514 (L2), its unit 1500 (inet, L3)
    assert (by_name["xe-0/0/11"].mtu, by_name["xe-0/0/11.0"].mtu, by_name["lo0"].mtu) == (1514, 1500, None)
    assert [i.name for i in interfaces if i.oper_up is False] == ["vme"]


def test_lldp_values_by_hand(samples: Path) -> None:
    # detail (19.4): local port from lldp-local-interface, not lldp-local-port-id (an SNMP index)
    first = junos.parse_lldp_json(read(samples, DCEDGE_LLDP))[0]
    assert first == Neighbor(
        local_port="xe-0/0/0",
        system_name="exit01",
        chassis_id="44:38:39:33:d8:43",
        port_id="Ethernet4",
        port_id_type="ifname",
        port_descr=None,
        mgmt_ip="10.0.0.31",
        mfs=9236,  # lldp-remote-subtype-mtu-size
    )
    # Junos peers: port id = SNMP ifIndex ("Locally assigned"), the ifname is the port description
    spine = junos.parse_lldp_json(read(samples, LEAF_LLDP))[0]
    assert (spine.port_id, spine.port_id_type, spine.port_descr, spine.mfs) == ("517", "local", "xe-0/0/0", 9214)
    # brief (vMX 18.2): lldp-local-port-id is the interface name; no mgmt address, no TLVs
    vmx = junos.parse_lldp_json(read(samples, VMX_LLDP))
    assert [(n.local_port, n.port_id, n.port_id_type) for n in vmx] == [
        ("ge-0/0/4", "526", "local"),
        ("ge-0/0/5", "527", "local"),
        ("ge-0/0/2", "526", "local"),
        ("ge-0/0/3", "527", "local"),
        ("ge-0/0/0", "ethernet1/1", "ifname"),
    ]


def test_text_values_by_hand(samples: Path) -> None:
    ge0, ge0_unit, *_ = junos.parse_interfaces_text(read(samples, NTC_IF))
    assert ge0 == Interface("ge-0/0/0", True, True, 1514, 1000, "00:0c:29:5e:2c:1a", "Test", "ethernet")
    assert ge0_unit == Interface("ge-0/0/0.2036", True, True, 1500, None, None, None, "subinterface")
    assert [(n.local_port, n.system_name, n.port_descr) for n in junos.parse_lldp_text(read(samples, NTC_LLDP))] == [
        ("ge-0/0/1", "vmx2", "ge-0/0/1"),
        ("ge-0/0/0", "vmx3", "ge-0/0/0"),
    ]


# --- constructed variants -------------------------------------------------------------------------


def test_json_variants() -> None:
    doc = {
        "interface-information": [
            {
                "physical-interface": [
                    {
                        "name": j("et-0/0/1"),
                        "admin-status": [{"data": "down", "attributes": {"junos:format": "Disabled"}}],
                        "oper-status": j("down"),
                        "description": j("to gpu-node-001 ens1np0"),
                        "mtu": j("9216"),
                        "speed": j("100Gbps"),
                        "current-physical-address": j("2C:6B:F5:00:00:01"),
                        "logical-interface": [
                            {
                                "name": j("et-0/0/1.0"),
                                "if-config-flags": [{"iff-down": [{"data": [None]}], "iff-device-down": [{}]}],
                                "description": j("unit zero"),
                                "address-family": [
                                    {"address-family-name": j("mpls"), "mtu": j("9190")},
                                    {"address-family-name": j("inet6"), "mtu": j("9194")},
                                ],
                            },
                            {
                                "name": j("et-0/0/1.5"),
                                "if-config-flags": [{"iff-device-down": [{}]}],
                                "address-family": [{"address-family-name": j("inet"), "mtu": j("Unlimited")}],
                            },
                        ],
                    },
                    {"name": j("ae3"), "admin-status": j("up"), "oper-status": j("up"), "speed": j("Auto")},
                    {"name": j("xe-0/0/2:1"), "admin-status": j("up"), "oper-status": j("up"), "speed": j("2.5Gbps")},
                ]
            }
        ]
    }
    assert junos.parse(json.dumps(doc) + "\n\n{master:0}\n") == (
        Interface("et-0/0/1", False, False, 9216, 100000, "2c:6b:f5:00:00:01", "to gpu-node-001 ens1np0", "ethernet"),
        Interface("et-0/0/1.0", False, False, 9190, None, None, "unit zero", "subinterface"),  # first numeric family
        Interface("et-0/0/1.5", None, False, None, None, None, None, "subinterface"),
        Interface("ae3", True, True, None, None, None, None, "bond"),
        Interface("xe-0/0/2:1", True, True, None, 2500, None, None, "ethernet"),
    )


def test_no_lldp_neighbors() -> None:
    raw = '{"lldp-neighbors-information": [{"attributes": {"junos:style": "brief"}}]}'
    assert junos.parse(raw) == ()


def test_text_variants() -> None:
    raw = (
        "{master:0}\n"
        "Physical interface: et-0/0/48, Administratively down, Physical link is Down\n"
        "  Interface index: 700, SNMP ifIndex: 800\n"
        "  Description: spare\n"
        "  Link-level type: Ethernet, MTU: 9216, MRU: 9224, Speed: 100Gbps, BPDU Error: None,\n"
        "  Current address: 2c:6b:f5:00:00:30, Hardware address: 2c:6b:f5:00:00:30\n"
        "\n"
        "  Logical interface et-0/0/48.0 (Index 600) (SNMP ifIndex 900)\n"
        "    Description: unit 0\n"
        "    Flags: Down Device-Down SNMP-Traps 0x4000 Encapsulation: ENET2\n"
        "    Protocol inet6, MTU: 9194\n"
        "    Protocol inet, MTU: 9198\n"
    )
    assert junos.parse(raw) == (
        Interface("et-0/0/48", False, False, 9216, 100000, "2c:6b:f5:00:00:30", "spare", "ethernet"),
        Interface("et-0/0/48.0", False, False, 9198, None, None, "unit 0", "subinterface"),  # inet preferred
    )
    lldp = (
        "Local Interface    Chassis Id          Port info          System Name\n"
        "xe-0/0/0           00:11:22:33:44:55   to leaf 7 port 1   leaf-7\n"
        "xe-0/0/1           00:11:22:33:44:56   Ethernet1/1\n"
        "xe-0/0/2           local-chassis                          no-port-info\n"
    )
    assert [(n.local_port, n.chassis_id, n.port_descr, n.system_name) for n in junos.parse(lldp)] == [
        ("xe-0/0/0", "00:11:22:33:44:55", "to leaf 7 port 1", "leaf-7"),
        ("xe-0/0/1", "00:11:22:33:44:56", "Ethernet1/1", None),
        ("xe-0/0/2", "local-chassis", None, "no-port-info"),
    ]


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        ("[]", "<root>", "top-level 'lldp-neighbors-information'"),
        ('{"foo": 1}', "<root>", "got foo"),
        ('{"lldp-neighbors-information": {}}', "lldp-neighbors-information", "expected a list"),
        (
            '{"lldp-neighbors-information": [{"lldp-neighbor-information": '
            '[{"lldp-remote-system-name": [{"data": "x"}]}]}]}',
            "lldp-neighbors-information[0].lldp-neighbor-information[0]",
            "local port",
        ),
        (
            '{"lldp-neighbors-information": [{"lldp-neighbor-information": '
            '[{"lldp-local-interface": [{"data": 5}]}]}]}',
            "lldp-neighbors-information[0].lldp-neighbor-information[0].lldp-local-interface[0].data",
            "a string",
        ),
        (
            '{"interface-information": [{"physical-interface": [{"name": [{"data": "xe-0/0/0"}], '
            '"speed": [{"data": "10Gbs"}]}]}]}',
            "interface-information[0].physical-interface[0].speed",
            "'10Gbps'",
        ),
        (
            '{"interface-information": [{"physical-interface": [{"name": [{"data": "xe-0/0/0"}], '
            '"oper-status": [{"data": "testing"}]}]}]}',
            "interface-information[0].physical-interface[0].oper-status",
            "'up' or 'down'",
        ),
        (
            '{"interface-information": [{"physical-interface": [{"name": [{"data": "xe-0/0/0"}], '
            '"mtu": [{"data": "-1"}]}]}]}',
            "interface-information[0].physical-interface[0].mtu",
            "an MTU",
        ),
    ],
)
def test_json_errors_name_the_key(raw: str, key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        junos.parse(raw, "t")
    assert (info.value.source, info.value.key, info.value.line) == ("t", key, None)
    assert expected in info.value.expected


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("", 1, "one of:"),
        ('{"lldp-neighbors-information": [\n', 2, "expected JSON"),
        ("Physical interface: ge-0/0/0, Enabled, Physical link is Up\nbogus\n", 2, "Physical interface:"),
        ("Physical interface: ge-0/0/0, Sleeping, Physical link is Up\n", 1, "'Enabled'"),
        ("Physical interface: ge-0/0/0, Enabled, Physical link is Up\n  Link-level type: x, MTU: big\n", 1, "an MTU"),
        ("Local Interface    Parent Interface    Chassis Id   Port info   System Name\nge-0/0/0  -\n", 2, "columns"),
    ],
)
def test_text_errors_name_the_line(raw: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        junos.parse(raw, "t")
    assert (info.value.source, info.value.line) == ("t", line)
    assert expected in info.value.expected


# --- fuzz -----------------------------------------------------------------------------------------


@_SETTINGS
@given(st.text(max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    for prefix in (
        "",
        "Physical interface: ge-0/0/0, Enabled, Physical link is Up\n",
        "Local Interface    Chassis Id          Port info          System Name\n",
    ):
        try:
            junos.parse(prefix + text, "t")
        except ParseError as err:
            assert err.source == "t" and err.expected


_JUNOS_KEYS = ["name", "data", "lldp-local-interface", "lldp-local-port-id", "lldp-org-specific-tlv", "mtu", "speed"]
_JUNOS_KEYS += ["lldp-remote-subtype-mtu-size", "admin-status", "oper-status", "logical-interface", "address-family"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "up", "10Gbps", "Unlimited", "xe-0/0/0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_JUNOS_KEYS), inner, max_size=4),
    max_leaves=16,
)


@_SETTINGS
@given(_JSON, st.sampled_from(["lldp-neighbor-information", "physical-interface"]))
def test_malformed_json_raises_only_parse_error(doc: object, where: str) -> None:
    top = "lldp-neighbors-information" if where.startswith("lldp") else "interface-information"
    raw = json.dumps({top: [{where: doc}]})
    try:
        result = junos.parse(raw, "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
        return
    assert all(isinstance(r, Neighbor | Interface) for r in result)


def test_logical_unit_alone_with_prompt_and_banner() -> None:
    text = (
        "{master:0}\n"
        "netops@qfx> show interfaces et-0/0/10.0\n"
        "  Logical interface et-0/0/10.0 (Index 557) (SNMP ifIndex 540)\n"
        "    Description: to-gpu07\n"
        "    Flags: Up SNMP-Traps 0x4004000 Encapsulation: ENET2\n"
        "    Protocol inet, MTU: 9000\n"
        "\n"
        "{master:0}\n"
        "netops@qfx>\n"
    )
    (unit,) = junos.parse(text, "t")
    assert isinstance(unit, Interface)
    assert (unit.name, unit.mtu, unit.oper_up, unit.description, unit.kind) == (
        "et-0/0/10.0",
        9000,
        True,
        "to-gpu07",
        "subinterface",
    )


def test_detail_line_before_any_block_is_located() -> None:
    with pytest.raises(ParseError) as err:
        junos.parse_interfaces_text("    Flags: Up\n", "t")
    assert err.value.line == 1 and "Logical interface" in err.value.expected
