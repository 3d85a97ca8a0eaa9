"""EOS CLI text (ntc-templates captures): show interfaces [status], show lldp neighbors [detail]."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.netdev import Interface, Neighbor
from unifab.parse.switch import eos_cli_text
from unifab.parse.switch.eos_cli_text import detect, parse, speed_column_to_mbps

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
D = "switch/eos/"
INTERFACES = D + "ntc_arista_eos_show_interfaces.raw"
STATUS = D + "ntc_arista_eos_show_interfaces_status.raw"
LLDP = D + "ntc_arista_eos_show_lldp_neighbors.raw"
DETAIL = D + "ntc_arista_eos_show_lldp_neighbors_detail.raw"
ALL = [INTERFACES, STATUS, LLDP, DETAIL]
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


@pytest.mark.parametrize("sample", ALL)
def test_golden(samples: Path, golden: GoldenCheck, sample: str) -> None:
    golden(GOLDEN / (Path(sample).stem + ".json"), parse(read(samples, sample), sample))


def test_detect(samples: Path) -> None:
    assert [detect(read(samples, s)) for s in ALL] == [
        "show interfaces",
        "show interfaces status",
        "show lldp neighbors",
        "show lldp neighbors detail",
    ]


def test_show_interfaces_by_hand(samples: Path) -> None:
    by_name = {i.name: i for i in eos_cli_text.parse_show_interfaces(read(samples, INTERFACES))}
    assert list(by_name) == [
        "Ethernet1",
        "Ethernet2",
        "Ethernet49/1",
        "Loopback0",
        "Port-Channel1",
        "Management1",
        "Vlan10",
    ]
    assert by_name["Ethernet49/1"] == Interface(
        name="Ethernet49/1",
        admin_up=False,
        oper_up=False,
        mtu=9214,
        speed_mbps=100000,
        mac="fc:bd:67:e2:b9:22",
        description=None,
        kind="ethernet",
    )
    assert by_name["Ethernet2"].description == "Connects to Ethernet1 on localhost"
    assert by_name["Ethernet1"].mtu == 1500 and by_name["Ethernet1"].speed_mbps == 10000
    # "down" (not administratively): admin up, oper down; all-zero MAC and "Unconfigured" speed are unknown
    pc = by_name["Port-Channel1"]
    assert (pc.admin_up, pc.oper_up, pc.mac, pc.speed_mbps, pc.kind) == (True, False, None, None, "bond")
    assert by_name["Loopback0"].mtu == 65535 and by_name["Loopback0"].speed_mbps is None


def test_status_by_hand(samples: Path) -> None:
    rows = eos_cli_text.parse_show_interfaces_status(read(samples, STATUS))
    assert rows[0] == Interface(
        name="Ethernet3/1/1",
        admin_up=True,
        oper_up=True,
        mtu=None,
        speed_mbps=40000,
        mac=None,
        description="I am a 40G port !! Hi",
        kind=None,
    )
    assert [(r.name, r.admin_up, r.oper_up, r.speed_mbps) for r in rows[1:]] == [
        ("Ethernet3/1/4", None, False, None),  # inactive: admin state not shown
        ("Ethernet3/2/1", True, False, 10000),
        ("Ethernet3/2/2", True, False, 10000),
        ("Ethernet3/2/4", False, False, 10000),
        ("Ethernet3/2/5", False, False, 10000),
    ]
    assert rows[4].description == "- DISABLED routed ("  # truncated by EOS to the column width


@pytest.mark.parametrize(
    ("word", "mbps"),
    [("a-40G", 40000), ("100G", 100000), ("10G", 10000), ("1G", 1000), ("100M", 100), ("2.5G", 2500),
     ("400G-8", 400000), ("auto", None), ("unconf", None)],
)  # fmt: skip
def test_speed_column(word: str, mbps: int | None) -> None:
    assert speed_column_to_mbps(word) == mbps


@pytest.mark.parametrize("word", ["fast", "0G", "a-", "1.25M"])
def test_speed_column_rejects(word: str) -> None:
    with pytest.raises(ValueError):
        speed_column_to_mbps(word)


def test_status_variant_speeds() -> None:
    text = (
        "Port       Name   Status       Vlan     Duplex Speed  Type         Flags Encapsulation\n"
        "Et1/1      gpu1   connected    routed   full   400G   400GBASE-CR8\n"
        "Et2        -      notconnect   1        auto   auto   Not Present\n"
    )
    rows = parse(text)
    assert [(r.name, r.speed_mbps, r.oper_up, r.description) for r in rows] == [
        ("Ethernet1/1", 400000, True, "gpu1"),
        ("Ethernet2", None, False, "-"),
    ]


def test_lldp_table_by_hand(samples: Path) -> None:
    rows = eos_cli_text.parse_lldp_neighbors(read(samples, LLDP))
    assert rows[2] == Neighbor(
        local_port="Ethernet3/1",
        system_name="tg104.sjc.aristanetworks.com",
        chassis_id=None,
        port_id="Ethernet3/2",
        port_id_type=None,
        port_descr=None,
        mgmt_ip=None,
        mfs=None,
    )
    assert [(r.local_port, r.port_id) for r in rows] == [
        ("Ethernet1", "Ethernet1"),
        ("Ethernet2", "Ethernet2"),
        ("Ethernet3/1", "Ethernet3/2"),
        ("Management1/1", "1/1"),
    ]


def test_lldp_detail_by_hand(samples: Path) -> None:
    rows = eos_cli_text.parse_lldp_neighbors_detail(read(samples, DETAIL))
    assert len(rows) == 20
    assert rows[0] == Neighbor(
        local_port="Ethernet1",
        system_name="spine2.company.com",
        chassis_id="2c:c2:60:81:ea:f9",
        port_id="Ethernet1",
        port_id_type="ifname",
        port_descr=None,
        mgmt_ip=None,  # the management address is a MAC (subtype Ethernet), not an IP
        mfs=9236,
    )
    by_port = {(r.local_port, r.port_id): r for r in rows}
    vmx = by_port[("Management1", "fxp0")]
    assert (vmx.system_name, vmx.mgmt_ip, vmx.mfs, vmx.port_descr) == ("vmx1", "10.0.0.31", 1514, "fxp0")
    aci = by_port[("Ethernet9", "Eth1/23")]
    assert (aci.port_id_type, aci.mfs, aci.mgmt_ip) == ("local", None, None)
    # port id subtype MAC -> normalised; first management address (IPv4 before IPv6)
    host = by_port[("Ethernet33", "00:50:56:ac:4c:d9")]
    assert (host.port_id_type, host.mgmt_ip) == ("mac", "172.16.2.222")
    # the peer's description itself contains quotes; only the outer pair is EOS's
    assert by_port[("Ethernet49/1", "Ethernet49/1")].port_descr == '" To R4-Arista-L2-SDNLAB -DC1"'
    # the Link Aggregation TLV's "Port ID : 0" is not the neighbor port id
    assert all(r.port_id != "0" for r in rows)
    assert [r.mfs for r in rows].count(9236) == 9


def test_detail_count_mismatch_names_header_line() -> None:
    text = 'Interface Ethernet1 detected 2 LLDP neighbors:\n\n  Neighbor 0011.2233.4455/"Et1", age 3 seconds\n'
    with pytest.raises(ParseError) as err:
        parse(text, "t")
    assert err.value.line == 1 and "2 neighbor blocks" in err.value.expected


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "expected EOS"),
        ("hello\n", 1, "expected EOS"),
        ("Ethernet1 is up, line protocol is up (connected)\n  IP MTU x bytes\n", 2, "MTU"),
        ("Ethernet1 is up, line protocol is up (connected)\n  Full-duplex, fastGb/s, x\n", 2, "speed"),
        ("Ethernet1 is up, line protocol is up (connected)\nfoo\n", 2, "NAME is STATE"),
        ("Port Name Status Vlan Duplex Speed Type\nEt1  x    connected 1 full 9Q t\n", 2, "speed"),
        ("Port Neighbor Device ID Port ID TTL\nEt1 peer\n", 2, "PORT DEVICE-ID"),
        (
            "Interface Ethernet1 detected 1 LLDP neighbors:\n  Neighbor a/b, age 1 seconds\n"
            "  - IEEE802.3 Maximum Frame Size: big\n",
            3,
            "Maximum Frame Size",
        ),
    ],
)
def test_errors_name_line(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        parse(text, "t")
    assert err.value.line == line and expected in err.value.expected and err.value.source == "t"


@_SETTINGS
@given(st.text(max_size=300), st.sampled_from(["", "Port Name Status Vlan Duplex Speed Type\n",
       "Interface Et1 detected 1 LLDP neighbors:\n", "Et1 is up, line protocol is up\n",
       "Port Neighbor Device ID Neighbor Port ID TTL\n"]))  # fmt: skip
def test_random_text_raises_only_parse_error(text: str, prefix: str) -> None:
    try:
        parse(prefix + text, "t")
    except ParseError as err:
        assert err.source == "t" and err.expected


@_SETTINGS
@given(st.data())
def test_truncated_and_shuffled_samples_raise_only_parse_error(samples: Path, data: st.DataObject) -> None:
    raw = read(samples, data.draw(st.sampled_from(ALL)))
    lines = raw.splitlines(keepends=True)
    mutated = data.draw(
        st.one_of(
            st.integers(0, len(raw)).map(lambda n: raw[:n]),
            st.permutations(lines).map("".join),
            st.integers(0, len(lines) - 1).map(lambda i: "".join(lines[:i] + lines[i + 1 :])),
        )
    )
    try:
        result = parse(mutated, "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
        return
    assert all(isinstance(r, Interface | Neighbor) for r in result)


# --- pasted and routed-port deviations -------------------------------------------------------------


def test_ip_mtu_default_and_port_channel_member_lines() -> None:
    text = (
        "leaf1#show interfaces\n"
        "Ethernet51 is down, line protocol is down (notconnect)\n"
        "  Hardware is Ethernet, address is 985d.82b8.faf5\n"
        "  IP MTU 1500 bytes (default), BW 1000000 kbit\n"
        "  Full-duplex, 1Gb/s, auto negotiation: off, uni-link: n/a\n"
        "Ethernet47 is up, line protocol is up (connected)\n"
        "  Member of Port-Channel2\n"
        "  Ethernet MTU 9214 bytes, BW 1000000 kbit\n"
        "Port-Channel2 is up, line protocol is up (connected)\n"
        "  Hardware is Port-Channel, address is 985d.82b8.fb24\n"
        "  Ethernet MTU 9214 bytes, BW 2000000 kbit\n"
        "  Full-duplex, 2Gb/s\n"
        "  Active members in this channel: 2\n"
        "  ... Ethernet47 , Full-duplex, 1Gb/s\n"
        "Vlan16 is up, line protocol is up (connected)\n"
        "  IP MTU 1500 bytes (default)\n"
        "leaf1#\n"
    )
    got = {i.name: i for i in parse(text, "t")}
    assert isinstance(got["Ethernet51"], Interface)
    assert (got["Ethernet51"].mtu, got["Ethernet51"].speed_mbps) == (1500, 1000)
    assert got["Ethernet47"].mtu == 9214
    assert (got["Port-Channel2"].speed_mbps, got["Port-Channel2"].kind) == (2000, "bond")
    assert got["Vlan16"].mtu == 1500


def test_lldp_table_with_dashed_rule_and_prompt() -> None:
    text = (
        "$ ssh leaf1 show lldp neighbors\n"
        "Port          Neighbor Device ID       Neighbor Port ID    TTL\n"
        "---------- ------------------------ ---------------------- ---\n"
        "Et2           arista2                  Ethernet2           120\n"
    )
    (nb,) = parse(text, "t")
    assert isinstance(nb, Neighbor)
    assert (nb.local_port, nb.system_name, nb.port_id) == ("Ethernet2", "arista2", "Ethernet2")


def test_status_table_with_collapsed_padding_reads_by_tokens() -> None:
    text = (
        "Port Name Status Vlan Duplex Speed Type Flags\n"
        "Et1 Cust: (SERV-XXXXX disabled 1 auto auto 1000BASE-T\n"
        "Et49 Core: drxx.yul01 notconnect in Po49 full 10G Not Present\n"
        "Ma1 notconnect routed a-half a-10M 10/100/1000\n"
    )
    rows = parse(text, "t")
    assert [(r.name, r.description, r.admin_up, r.oper_up, r.speed_mbps) for r in rows] == [
        ("Ethernet1", "Cust: (SERV-XXXXX", False, False, None),
        ("Ethernet49", "Core: drxx.yul01", True, False, 10000),
        ("Management1", None, True, False, 10),
    ]


def test_status_row_without_status_run_is_located() -> None:
    with pytest.raises(ParseError) as err:
        parse("Port Name Status Vlan Duplex Speed Type\nEt1 only words here\n", "t")
    assert err.value.line == 2 and "PORT NAME STATUS" in err.value.expected
