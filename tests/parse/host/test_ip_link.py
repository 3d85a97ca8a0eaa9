"""iproute2 `ip link show` / `ip -d address show`: real samples, kinds and states, errors, fuzz."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host import ip_link
from unifab.parse.netdev import Interface

GOLDEN = Path(__file__).parent / "golden"
NTC = "host/ntc_linux_ip_link_show.raw"
EDGE01 = "host/ubuntu-16.04_edge01_ip_-d_address_show.txt"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)

# iproute2-6.1.0 (Debian bookworm) `ip -d address show` in a user network namespace with a bridge,
# a veth pair (one end enslaved, the other with an alias and mtu 9000) and a vxlan left down; the long
# bridge/bridge_slave option lists are shortened, the trailing spaces are iproute2's.
IPROUTE2_61_DETAILS = "".join(
    line + "\n"
    for line in (
        "1: lo: <LOOPBACK> mtu 65536 qdisc noop state DOWN group default qlen 1000",
        (
            "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0  allmulti 0 "
            "minmtu 0 maxmtu 0 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535 "
            "tso_max_size 524280 tso_max_segs 65535 gro_max_size 65536 "
        ),
        "2: br0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000",
        "    link/ether 6e:e4:79:37:7a:bf brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535 ",
        (
            "    bridge forward_delay 1500 hello_time 200 max_age 2000 ageing_time 30000 stp_state 0 "
            "priority 32768 vlan_filtering 0 bridge_id 8000.6e:e4:79:37:7a:bf designated_root "
            "8000.6e:e4:79:37:7a:bf root_port 0 numtxqueues 1 numrxqueues 1 gso_max_size 65536 "
            "gso_max_segs 65535 tso_max_size 524280 tso_max_segs 65535 gro_max_size 65536 "
        ),
        "    inet6 fe80::6ce4:79ff:fe37:7abf/64 scope link tentative ",
        "       valid_lft forever preferred_lft forever",
        "3: veth1@veth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP group default qlen 1000",
        "    link/ether 5e:eb:37:f8:5a:4b brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535 ",
        (
            "    veth numtxqueues 2 numrxqueues 2 gso_max_size 65536 gso_max_segs 65535 tso_max_size "
            "524280 tso_max_segs 65535 gro_max_size 65536 "
        ),
        "    alias to leaf 7",
        "    inet6 fe80::5ceb:37ff:fef8:5a4b/64 scope link tentative ",
        "       valid_lft forever preferred_lft forever",
        (
            "4: veth0@veth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master br0 state "
            "UP group default qlen 1000"
        ),
        "    link/ether 6e:e4:79:37:7a:bf brd ff:ff:ff:ff:ff:ff promiscuity 1  allmulti 1 minmtu 68 maxmtu 65535 ",
        "    veth ",
        (
            "    bridge_slave state forwarding priority 32 cost 2 hairpin off guard off root_block off "
            "fastleave off learning on flood on port_id 0x8001 port_no 0x1 numtxqueues 2 numrxqueues 2 "
            "gso_max_size 65536 gso_max_segs 65535 tso_max_size 524280 tso_max_segs 65535 gro_max_size "
            "65536 "
        ),
        "    inet6 fe80::6ce4:79ff:fe37:7abf/64 scope link tentative ",
        "       valid_lft forever preferred_lft forever",
        "5: vx0: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default qlen 1000",
        "    link/ether 7a:84:a1:31:d6:1f brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535 ",
        (
            "    vxlan id 42 srcport 0 0 dstport 4789 ttl auto ageing 300 udpcsum noudp6zerocsumtx "
            "noudp6zerocsumrx numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535 "
            "tso_max_size 65536 tso_max_segs 65535 gro_max_size 65536 "
        ),
    )
)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [(NTC, "ntc_linux_ip_link_show.json"), (EDGE01, "ubuntu-16.04_edge01_ip_-d_address_show.json")],
)
def test_golden(samples: Path, golden: object, sample: str, golden_name: str) -> None:
    assert callable(golden)
    golden(GOLDEN / golden_name, ip_link.parse(read(samples, sample), sample))


def test_plain_link_show_by_hand(samples: Path) -> None:
    links = {i.name: i for i in ip_link.parse(read(samples, NTC))}
    assert list(links) == ["lo", "ens32", "gpd0", "br-218f5e637867", "vrf-blue", "vrf-red", "brblue", "brred"]
    # without -d only the loopback's kind is known
    assert links["lo"] == Interface("lo", True, True, 65536, None, None, None, "loopback")
    assert links["ens32"] == Interface("ens32", True, True, 1500, None, "00:0c:29:56:07:1b", None, None)
    # NO-CARRIER bridge: admin up, state DOWN
    assert (links["br-218f5e637867"].admin_up, links["br-218f5e637867"].oper_up) == (True, False)
    # link/none point-to-point tunnel, state UNKNOWN with LOWER_UP
    assert (links["gpd0"].mtu, links["gpd0"].mac, links["gpd0"].oper_up) == (1400, None, True)
    assert links["vrf-blue"].mtu == 65575


def test_details_by_hand(samples: Path) -> None:
    links = ip_link.parse(read(samples, EDGE01))
    assert [(i.name, i.kind, i.mtu) for i in links] == [
        ("lo", "loopback", 65536),
        ("eth0", "ethernet", 1500),
        ("eth1", "ethernet", 1500),
        ("eth2", "ethernet", 1500),
        ("eth1.2", "vlan", 1500),  # "eth1.2@eth1": the name stops at '@'
        ("eth2.2", "vlan", 1500),
        ("eth1.4", "vlan", 1500),
        ("eth2.4", "vlan", 1500),
    ]
    assert links[2] == Interface("eth1", True, True, 1500, None, "52:54:00:a8:38:3d", None, "ethernet")


def test_iproute2_61_kinds_states_alias() -> None:
    assert ip_link.parse(IPROUTE2_61_DETAILS) == (
        Interface("lo", False, False, 65536, None, None, None, "loopback"),
        Interface("br0", True, True, 1500, None, "6e:e4:79:37:7a:bf", None, "bridge"),
        Interface("veth1", True, True, 9000, None, "5e:eb:37:f8:5a:4b", "to leaf 7", "veth"),
        Interface("veth0", True, True, 1500, None, "6e:e4:79:37:7a:bf", None, "veth"),  # not bridge_slave
        Interface("vx0", False, False, 1500, None, "7a:84:a1:31:d6:1f", None, "vxlan"),
    )


def test_bond_slave_and_kindless_ethernet() -> None:
    raw = (
        "4: swp1: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 9000 qdisc pfifo_fast master bond01 state UP qlen 1000\n"
        "    link/ether 44:38:39:00:00:15 brd ff:ff:ff:ff:ff:ff promiscuity 2\n"
        "    bond_slave state ACTIVE mii_status UP link_failure_count 0 perm_hwaddr 44:38:39:00:00:15 queue_id 0\n"
        "    altname enp1s0f0\n"
        "15: bond01: <BROADCAST,MULTICAST,MASTER,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP group default\n"
        "    link/ether 44:38:39:00:00:15 brd ff:ff:ff:ff:ff:ff promiscuity 1\n"
        "    bond mode 802.3ad miimon 100 updelay 0 downdelay 0\n"
        "16: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP group default qlen 256\n"
        "    link/infiniband 00:00:10:29:fe:80:00:00:00:00:00:00:00:00 brd 00:ff:ff:ff promiscuity 0\n"
        "17: tun0: <POINTOPOINT,MULTICAST,NOARP,UP> mtu 1500 qdisc fq_codel state UNKNOWN group default qlen 500\n"
        "    link/none  promiscuity 0\n"
        "    tun type tun pi off vnet_hdr off persist off\n"
    )
    assert [(i.name, i.kind, i.oper_up, i.mac) for i in ip_link.parse(raw)] == [
        ("swp1", "ethernet", True, "44:38:39:00:00:15"),
        ("bond01", "bond", True, "44:38:39:00:00:15"),
        ("ib0", "infiniband", True, None),
        ("tun0", "tun", False, None),  # UNKNOWN without LOWER_UP
    ]


@pytest.mark.parametrize(
    ("state", "flags", "oper"),
    [
        ("UP", "UP,LOWER_UP", True),
        ("DOWN", "UP", False),
        ("LOWERLAYERDOWN", "UP", False),
        ("DORMANT", "UP,LOWER_UP", False),
        ("UNKNOWN", "UP,LOWER_UP", True),
        ("UNKNOWN", "UP", False),
    ],
)
def test_oper_state(state: str, flags: str, oper: bool) -> None:
    (link,) = ip_link.parse(
        f"2: e0: <{flags}> mtu 1500 qdisc mq state {state} mode DEFAULT\n    link/ether 02:00:00:00:00:01\n"
    )
    assert (link.admin_up, link.oper_up) == ("UP" in flags.split(","), oper)


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("", 1, "<index>: <ifname>"),
        ("    link/ether 02:00:00:00:00:01\n", 1, "before indented lines"),
        ("1: lo: <LOOPBACK,UP> mtu 65536\nInterface lo is up\n", 2, "<index>: <ifname>"),
        ("1: lo: <LOOPBACK,UP> qdisc noop state DOWN\n", 1, "`mtu <n>`"),
        ("lo: <LOOPBACK,UP> mtu 65536\n", 1, "<index>: <ifname>"),
    ],
)
def test_errors_name_the_line(raw: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        ip_link.parse(raw, "t")
    assert (info.value.source, info.value.line) == ("t", line)
    assert expected in info.value.expected


@_SETTINGS
@given(st.text(max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    for prefix in ("", "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n"):
        try:
            result = ip_link.parse(prefix + text, "t")
        except ParseError as err:
            assert err.source == "t" and err.expected
            continue
        assert all(isinstance(i, Interface) for i in result)
