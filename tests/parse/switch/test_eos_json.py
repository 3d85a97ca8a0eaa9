"""eos_json: EOS eAPI JSON replies (show interfaces, lldp, PFC/ECN/queue counters, version) and SuzieQ gathers.

The ANTA samples wrap several device replies as ``{command, eapi_revision, fixtures{case: reply}}``;
that wrapper is the corpus's, not the device's, so the tests unwrap it and parse each reply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import eos_json
from unifab.parse.switch.eos_json import (
    EosEcnCounters,
    EosInterfaces,
    EosLldpNeighbors,
    EosPfcCounters,
    EosQueueCounters,
    EosVersion,
    SuzieqGather,
    merge_gathers,
    parse,
    parse_ecn_counters,
    parse_lldp_neighbors_detail,
    parse_pfc_counters,
    parse_queue_counters_detail,
    parse_show_interfaces,
    parse_show_version,
    parse_suzieq_gather,
)

GoldenCheck = Callable[[Path, object], None]
EOS = Path("switch") / "eos"
GATHER = EOS / "suzieq_gather_eos"
GOLDEN = Path(__file__).parent / "golden"

VEOS_INTERFACES = "eos_show_interfaces_vEOS.json"
LLDP_NAPALM = "eos_show_lldp_neighbors_detail.json"
PFC = "eos_show_priority_flow_control_counters.json"
ECN = "eos_show_qos_interfaces_ecn_counters_queue.json"
QUEUE = "eos_show_interfaces_counters_queue_detail.json"
ANTA = (PFC, ECN, QUEUE)
SUZIEQ_INTERFACES = [f"eos-4.23.5M_{h}_show_interfaces.json" for h in ("exit01", "leaf01", "spine01")]
SUZIEQ_LLDP = [f"eos-4.23.5M_{h}_show_lldp_neighbors_detail.json" for h in ("exit01", "leaf01", "spine01")]


def _text(samples: Path, name: str) -> str:
    return (samples / EOS / name).read_text()


def _fixtures(samples: Path, name: str) -> dict[str, Any]:
    wrapper = orjson.loads(_text(samples, name))
    fixtures: dict[str, Any] = wrapper["fixtures"]
    return fixtures


def _stem(name: str) -> str:
    return name.removesuffix(".json").replace(".", "_")


def test_every_json_sample_is_covered(samples: Path) -> None:
    names = {p.name for p in (samples / EOS).glob("*.json")}
    assert names == {VEOS_INTERFACES, LLDP_NAPALM, *ANTA, *SUZIEQ_INTERFACES, *SUZIEQ_LLDP}


# --- show interfaces -------------------------------------------------------------------------------


def test_veos_show_interfaces(samples: Path, golden: GoldenCheck) -> None:
    got = parse(_text(samples, VEOS_INTERFACES), VEOS_INTERFACES)
    assert got.command == "show interfaces"
    data = got.data
    assert isinstance(data, EosInterfaces)
    golden(GOLDEN / f"eos_json_{_stem(VEOS_INTERFACES)}.json", data)
    assert list(data.interfaces) == ["Management1", "Ethernet2", "Ethernet3", "Ethernet1", "Ethernet4", "Ethernet5"]
    m = data.interfaces["Management1"]
    assert (m.mtu, m.bandwidth_bps, m.speed_mbps, m.forwarding_model) == (1500, 10**9, 1000, "routed")
    assert m.ipv4_addresses == ("10.0.2.15/24",)
    assert m.description is None  # "" on the device
    e2 = data.interfaces["Ethernet2"]
    assert (e2.mtu, e2.bandwidth_bps, e2.speed_mbps) == (9214, 0, None)  # vEOS reports bandwidth 0
    assert (e2.rx_pause, e2.tx_pause, e2.counters["inMulticastPkts"]) == (0, 0, 1429)
    assert (e2.line_protocol_status, e2.interface_status, e2.duplex) == ("up", "connected", "duplexFull")
    # the fixture files Ethernet5 under a "name" of Ethernet1 and a 2.5 Mb/s bandwidth: the key wins,
    # and a bandwidth that is not whole Mb/s has no speed_mbps
    e5 = data.interfaces["Ethernet5"]
    assert (e5.name, e5.bandwidth_bps, e5.speed_mbps) == ("Ethernet5", 2500000, None)
    assert parse_show_interfaces(_text(samples, VEOS_INTERFACES)) == data


def test_suzieq_extracted_show_interfaces(samples: Path, golden: GoldenCheck) -> None:
    leaf = parse_show_interfaces(_text(samples, SUZIEQ_INTERFACES[1]))
    assert sorted(leaf.interfaces) == [
        "Ethernet1",
        "Ethernet2",
        "Ethernet3",
        "Ethernet4",
        "Ethernet5",
        "Ethernet6",
        "Loopback0",
        "Loopback1",
        "Management1",
        "Port-Channel1",
        "Port-Channel3",
        "Port-Channel4",
        "Vlan10",
        "Vlan1006",
        "Vlan30",
        "Vlan4094",
        "Vxlan1",
    ]
    i = leaf.interfaces
    assert {n: x.mtu for n, x in i.items() if n.startswith("Ethernet")} == {
        "Ethernet1": 1500,
        "Ethernet2": 1500,
        "Ethernet3": 9214,
        "Ethernet4": 9214,
        "Ethernet5": 9214,
        "Ethernet6": 9214,
    }
    assert (i["Ethernet3"].member_of, i["Ethernet3"].forwarding_model) == ("Port-Channel3", "dataLink")
    assert i["Port-Channel3"].members == ("Ethernet3", "PeerEthernet3")
    assert (i["Vxlan1"].mtu, i["Loopback0"].mtu, i["Loopback0"].physical_address) == (0, 65535, None)
    assert i["Vlan10"].ipv4_addresses == ()  # only a virtual address
    assert i["Ethernet1"].counters["inTotalPkts"] > 0
    excerpt = {
        name: dataclasses.replace(
            parse_show_interfaces(_text(samples, name)),
            interfaces={
                k: v
                for k, v in parse_show_interfaces(_text(samples, name)).interfaces.items()
                if k in ("Ethernet1", "Ethernet3", "Port-Channel3", "Vxlan1", "Ethernet3.2")
            },
        )
        for name in SUZIEQ_INTERFACES
    }
    golden(GOLDEN / "eos_json_suzieq_show_interfaces_excerpt.json", excerpt)
    exit01 = parse_show_interfaces(_text(samples, SUZIEQ_INTERFACES[0]))
    assert exit01.interfaces["Ethernet3.2"].hardware == "subinterface"
    spine = parse_show_interfaces(_text(samples, SUZIEQ_INTERFACES[2]))
    assert all(x.mtu == 1500 for n, x in spine.interfaces.items() if n.startswith("Ethernet"))


# --- LLDP ------------------------------------------------------------------------------------------


def test_napalm_lldp_neighbors_detail(samples: Path, golden: GoldenCheck) -> None:
    got = parse(_text(samples, LLDP_NAPALM), LLDP_NAPALM)
    assert got.command == "show lldp neighbors detail"
    data = got.data
    assert isinstance(data, EosLldpNeighbors)
    golden(GOLDEN / f"eos_json_{_stem(LLDP_NAPALM)}.json", data)
    with_neighbors = {k: v for k, v in data.interfaces.items() if v}
    assert sorted(with_neighbors) == ["Ethernet1/1", "Ethernet26/1", "Ethernet27/1"]
    assert len(data.interfaces) == 29
    server = with_neighbors["Ethernet1/1"][0]
    assert (server.system_name, server.chassis_id, server.port_id, server.port_id_type) == (
        "some-server",
        "1ce7.1003.5413",
        "1ce7.1003.5413",
        "macAddress",
    )
    assert server.max_frame_size is None  # Linux lldpd sends no MFS TLV
    assert server.management_addresses == ("10.0.0.1", "fe80::1")
    juniper = with_neighbors["Ethernet27/1"][0]
    assert (juniper.port_id, juniper.port_description, juniper.max_frame_size) == ("et-0/0/20", "et-0/0/20", 9192)
    assert juniper.capabilities == ("bridge", "router")
    assert parse_lldp_neighbors_detail(_text(samples, LLDP_NAPALM)) == data


@pytest.mark.parametrize("name", SUZIEQ_LLDP)
def test_suzieq_extracted_lldp(samples: Path, golden: GoldenCheck, name: str) -> None:
    data = parse_lldp_neighbors_detail(_text(samples, name), name)
    golden(GOLDEN / f"eos_json_{_stem(name)}.json", data)
    summary = {k: [(n.system_name, n.port_id, n.max_frame_size) for n in v] for k, v in data.interfaces.items()}
    expected = {
        SUZIEQ_LLDP[0]: {
            "Management1": [],
            "Ethernet2": [("spine02", "Ethernet5", 9236)],
            "Ethernet3": [],
            "Ethernet1": [("spine01", "Ethernet5", 9236)],
            "Ethernet4": [("dcedge01", "516", 1514)],  # vQFX: interfaceIdType local
        },
        SUZIEQ_LLDP[1]: {
            "Management1": [],
            "Ethernet2": [("spine02", "Ethernet1", 9236)],
            "Ethernet3": [],
            "Ethernet1": [("spine01", "Ethernet1", 9236)],
            "Ethernet6": [("leaf02", "Ethernet6", 9236)],
            "Ethernet4": [],
            "Ethernet5": [("leaf02", "Ethernet5", 9236)],
        },
    }
    if name in expected:
        assert summary == expected[name]
    else:
        assert [n for v in summary.values() for n, _, _ in v] == [
            "leaf02",
            "leaf03",
            "leaf01",
            "exit02",
            "leaf04",
            "exit01",
        ]


# --- counters (ANTA fixtures) ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ANTA)
def test_anta_fixture_golden(samples: Path, golden: GoldenCheck, name: str) -> None:
    wrapper = orjson.loads(_text(samples, name))
    out: dict[str, Any] = {}
    for case, reply in wrapper["fixtures"].items():
        got = parse(orjson.dumps(reply).decode(), f"{name}:{case}")
        assert got.command == wrapper["command"]
        out[case] = got.data
    golden(GOLDEN / f"eos_json_{_stem(name)}.json", out)


def test_pfc_counters(samples: Path) -> None:
    fx = _fixtures(samples, PFC)
    got = parse_pfc_counters(orjson.dumps(fx["failure"]))
    assert isinstance(got, EosPfcCounters)
    assert got.detail is False
    assert {k: (v.rx_frames, v.tx_frames) for k, v in got.interfaces.items()} == {
        "Ethernet3/1/1": (1, 0),
        "Ethernet3/2/1": (0, 2),
        "Ethernet3/3/1": (2, 0),
        "Ethernet3/4/1": (0, 1),
    }
    assert got.interfaces["Ethernet3/1/1"].rx_frames_by_priority == {}


def test_pfc_counters_detail_shape() -> None:
    """Inferred shape (no captured sample): interfaces.<if>.priorities.<n>.{rxFrames, txFrames}."""
    reply = {
        "interfaces": {
            "Ethernet1/1": {"priorities": {"3": {"rxFrames": 10, "txFrames": 2}, "0": {"rxFrames": 0, "txFrames": 0}}},
            "Ethernet1/2": {"priorities": {}},
        }
    }
    got = parse(orjson.dumps(reply))
    assert got.command == "show priority-flow-control counters detail"
    data = got.data
    assert isinstance(data, EosPfcCounters)
    assert data.detail is True
    e = data.interfaces["Ethernet1/1"]
    assert (e.rx_frames, e.rx_frames_by_priority, e.tx_frames_by_priority) == (None, {0: 0, 3: 10}, {0: 0, 3: 2})
    assert data.interfaces["Ethernet1/2"].rx_frames_by_priority == {}


def test_ecn_counters(samples: Path) -> None:
    got = parse_ecn_counters(orjson.dumps(_fixtures(samples, ECN)["failure"]))
    assert isinstance(got, EosEcnCounters)
    assert {k: v.queues for k, v in got.interfaces.items()} == {
        "Ethernet10/28/1": {0: None, 1: 0, 2: 0},
        "Ethernet10/20/1": {0: 0, 1: 2, 2: 0},
        "Ethernet10/16/1": {0: 0, 1: 0, 2: None},
        "Ethernet10/3/1": {0: 0, 1: 0, 2: 2},
    }


def test_queue_counters_detail(samples: Path) -> None:
    got = parse_queue_counters_detail(orjson.dumps(_fixtures(samples, QUEUE)["failure"]))
    assert isinstance(got, EosQueueCounters)
    e1, e2 = got.interfaces["Ethernet1"], got.interfaces["Ethernet2"]
    assert (e1.unicast_dropped, e1.multicast_dropped) == ({0: 2, 1: 0}, {0: 0, 1: 3})
    assert (e2.unicast_dropped, e2.multicast_dropped) == ({0: 0, 1: 2}, {0: 3, 1: 0})
    assert [(x.queue_type, x.traffic_class, x.drop_precedence, x.dropped_packets) for x in e1.entries] == [
        ("unicast", 0, 0, 2),
        ("unicast", 1, 0, 0),
        ("multicast", 0, 0, 0),
        ("multicast", 1, 0, 3),
    ]
    modular = parse_queue_counters_detail(orjson.dumps(_fixtures(samples, QUEUE)["success-all-modular"]))
    assert sorted(modular.interfaces) == ["Ethernet1/1", "Ethernet2/1"]


# --- show version and SuzieQ gathers ----------------------------------------------------------------


def _gather(samples: Path) -> SuzieqGather:
    return merge_gathers(
        *(
            parse_suzieq_gather((samples / GATHER / f).read_text(), f)
            for f in ("device.output", "interfaces.output", "lldp.output")
        )
    )


def test_suzieq_gather_summary(samples: Path, golden: GoldenCheck) -> None:
    g = _gather(samples)
    assert sorted(g.hosts) == ["exit01", "exit02", "leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"]
    assert g.other_hosts == {
        "dcedge01": "junos-qfx",
        "firewall01": "linux",
        "server101": "linux",
        "server102": "linux",
        "server301": "linux",
        "server302": "linux",
    }
    leaf01 = g.hosts["leaf01"]
    assert leaf01.version is not None
    assert (leaf01.version.model_name, leaf01.version.version, leaf01.version.serial_number) == (
        "vEOS",
        "4.23.5M",
        None,
    )
    assert leaf01.other_commands == ("show ip virtual-router", "show vrf")
    assert leaf01.failed_commands == ()
    # the gather holds the same replies as the per-host extracts in the corpus
    assert leaf01.interfaces == parse_show_interfaces(_text(samples, SUZIEQ_INTERFACES[1]))
    assert leaf01.lldp == parse_lldp_neighbors_detail(_text(samples, SUZIEQ_LLDP[1]))
    summary = {
        name: {
            "address": h.address,
            "version": h.version.version if h.version else None,
            "model": h.version.model_name if h.version else None,
            "interfaces": {
                n: [i.mtu, i.line_protocol_status, i.forwarding_model]
                for n, i in sorted(h.interfaces.interfaces.items())
            }
            if h.interfaces
            else None,
            "neighbors": {
                local: [f"{n.system_name}:{n.port_id}" for n in nbs]
                for local, nbs in sorted(h.lldp.interfaces.items())
                if nbs
            }
            if h.lldp
            else None,
        }
        for name, h in g.hosts.items()
    }
    golden(GOLDEN / "eos_json_suzieq_gather_summary.json", summary)
    links = {
        (a, local, n.system_name, n.port_id)
        for a, h in g.hosts.items()
        if h.lldp
        for local, nbs in h.lldp.interfaces.items()
        for n in nbs
    }
    # every spine<->leaf LLDP adjacency is seen from both ends
    for a, local, b, port in links:
        if b in g.hosts and b.startswith(("spine", "leaf")) and a.startswith(("spine", "leaf")):
            assert (b, port, a, local) in links


def test_gather_through_parse_and_show_version(samples: Path) -> None:
    got = parse((samples / GATHER / "device.output").read_text(), "device.output")
    assert got.command == "suzieq gather"
    assert isinstance(got.data, SuzieqGather)
    spine01 = got.data.hosts["spine01"].version
    assert spine01 is not None
    fields = {"modelName": "vEOS", "version": "4.23.5M", "internalVersion": "x", "memTotal": 2014432}
    reply = orjson.dumps({**fields, "uptime": 2348354.91})
    version = parse_show_version(reply)
    assert isinstance(version, EosVersion)
    assert (version.mem_total_kb, version.uptime_s, version.serial_number) == (2014432, 2348354.91, None)
    assert (spine01.model_name, spine01.system_mac_address, spine01.architecture) == (
        "vEOS",
        "44:38:39:ba:d2:34",
        "x86_64",
    )
    assert parse(reply).command == "show version"


def test_gather_records_and_status() -> None:
    version = '{"modelName": "DCS-7060X6", "version": "4.33.1F"}'
    records = [
        {"hostname": "sw1", "devtype": "eos", "cmd": "show version", "status": 200, "data": version},
        {"hostname": "sw1", "devtype": "eos", "cmd": "show lldp neighbors detail | json", "status": 500, "data": "x"},
        {"hostname": "h1", "devtype": "linux", "cmd": "hostnamectl", "status": 0, "data": "..."},
    ]
    g = parse_suzieq_gather(orjson.dumps(records[:2]).decode() + "\n" + orjson.dumps(records[2:]).decode())
    sw1 = g.hosts["sw1"]
    assert sw1.version is not None
    assert sw1.version.model_name == "DCS-7060X6"
    assert (sw1.lldp, sw1.interfaces) == (None, None)
    assert sw1.failed_commands == ("show lldp neighbors detail",)
    assert g.other_hosts == {"h1": "linux"}


# --- envelopes and errors ------------------------------------------------------------------------------


def test_json_rpc_response_is_unwrapped(samples: Path) -> None:
    bare = orjson.loads(_text(samples, LLDP_NAPALM))
    rpc = {"jsonrpc": "2.0", "id": "1", "result": [bare, {"interfaces": {}}]}
    assert parse(orjson.dumps(rpc)) == parse(_text(samples, LLDP_NAPALM))
    with pytest.raises(ParseError) as info:
        parse_lldp_neighbors_detail(orjson.dumps({"jsonrpc": "2.0", "id": "1", "result": [{"oops": {}}]}), "r.json")
    assert info.value.key == "result[0]"
    assert "lldpNeighbors" in info.value.expected


def test_json_rpc_error_is_a_parse_error() -> None:
    rpc = {"jsonrpc": "2.0", "id": 1, "error": {"code": 1002, "message": "invalid command"}}
    with pytest.raises(ParseError) as info:
        parse(orjson.dumps(rpc), "err.json")
    assert info.value.key == "error"
    assert "1002" in info.value.expected
    with pytest.raises(ParseError, match="at least one result"):
        parse('{"jsonrpc": "2.0", "id": 1, "result": []}')


@pytest.mark.parametrize(
    ("doc", "key", "needle"),
    [
        ({"interfaces": {"Ethernet1": {"mtu": "9214"}}}, "interfaces.Ethernet1.mtu", "an integer"),
        ({"interfaces": {"Ethernet1": []}}, "interfaces.Ethernet1", "an object"),
        ({"interfaces": {"Ethernet1": {"interfaceCounters": {"inputErrorsDetail": 3}}}}, "interfaces.Ethernet1.interfaceCounters.inputErrorsDetail", "object"),  # noqa: E501
        ({"lldpNeighbors": {"Et1": {"lldpNeighborInfo": {}}}}, "lldpNeighbors.Et1.lldpNeighborInfo", "a list"),
        ({"lldpNeighbors": {"Et1": {"lldpNeighborInfo": [{"systemName": 7}]}}}, "lldpNeighbors.Et1.lldpNeighborInfo[0].systemName", "a string"),  # noqa: E501
        ({"lldpNeighbors": {"Et1": {"lldpNeighborInfo": [{"systemCapabilities": {"router": "yes"}}]}}}, "lldpNeighbors.Et1.lldpNeighborInfo[0].systemCapabilities.router", "a boolean"),  # noqa: E501
        ({"intfQueueCounters": {"Et1": {"queueCounters": {"0": "many"}}}}, "intfQueueCounters.Et1.queueCounters.0", "'-'"),  # noqa: E501
        ({"intfQueueCounters": {"Et1": {"queueCounters": {"q0": "1"}}}}, "intfQueueCounters.Et1.queueCounters.q0", "key such as"),  # noqa: E501
        ({"interfaceCounters": {"Et1": {"rxFrames": True}}}, "interfaceCounters.Et1.rxFrames", "an integer"),
        ({"egressQueueCounters": {"interfaces": {"Et1": {"ucastQueues": {"trafficClasses": {"Q0": {}}}}}}}, "egressQueueCounters.interfaces.Et1.ucastQueues.trafficClasses.Q0", "TC0"),  # noqa: E501
        ({"egressQueueCounters": {}}, "egressQueueCounters", "'interfaces'"),
        ({"modelName": 4}, "modelName", "a string"),
        ({"something": {}}, "<root>", "show interfaces"),
        ([1, 2], "[0][0]", "SuzieQ record"),
        ([{"hostname": "x"}], "[0][0]", "'devtype'"),
    ],
)  # fmt: skip
def test_bad_values_name_their_key(doc: object, key: str, needle: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(orjson.dumps(doc), "bad.json")
    assert info.value.source == "bad.json"
    assert info.value.key == key, info.value
    assert needle in info.value.expected, info.value


@pytest.mark.parametrize("text", ["", "{", '{"interfaces": ', "[", "[] x", "null", "42", '"s"'])
def test_not_json_or_not_an_object(text: str) -> None:
    with pytest.raises(ParseError):
        parse(text, "x.json")


def test_deep_nesting_in_gather() -> None:
    with pytest.raises(ParseError, match="nested"):
        parse_suzieq_gather("[" * 100000, "deep.json")


# --- fuzzing ---------------------------------------------------------------------------------------

_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-5, 10**12)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "-", "0", "TC1", "DP0", '"Ethernet1"', "up"])
)
_KEYS = st.sampled_from([
    "interfaces", "lldpNeighbors", "lldpNeighborInfo", "interfaceCounters", "intfQueueCounters", "queueCounters",
    "egressQueueCounters", "ucastQueues", "mcastQueues", "trafficClasses", "dropPrecedences", "TC0", "DP1",
    "droppedPackets", "rxFrames", "txFrames", "priorities", "3", "Ethernet1", "mtu", "bandwidth",
    "neighborInterfaceInfo", "maxFrameSize", "managementAddresses", "address", "systemCapabilities",
    "interfaceAddress", "primaryIp", "maskLen", "memberInterfaces", "inputErrorsDetail", "modelName", "version",
    "jsonrpc", "result", "error", "hostname", "devtype", "cmd", "status", "data",
])  # fmt: skip
_JSON = st.recursive(
    _LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=25
)


def _only_parse_errors(text: str | bytes) -> None:
    for fn in (parse, parse_show_interfaces, parse_lldp_neighbors_detail, parse_pfc_counters, parse_suzieq_gather):
        try:
            fn(text, "fuzz.json")
        except ParseError as err:
            assert err.source == "fuzz.json"
            assert err.expected


@settings(_SETTINGS, max_examples=400)
@given(_JSON)
def test_random_json_raises_only_parse_error(doc: object) -> None:
    _only_parse_errors(orjson.dumps(doc))


@settings(_SETTINGS, max_examples=200)
@given(st.text(max_size=200))
def test_random_text_raises_only_parse_error(text: str) -> None:
    _only_parse_errors(text)


@settings(_SETTINGS, max_examples=150)
@given(st.data())
def test_truncated_samples_raise_only_parse_error(samples: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from([VEOS_INTERFACES, LLDP_NAPALM, SUZIEQ_LLDP[0], "suzieq_gather_eos/lldp.output"]))
    text = (samples / EOS / name).read_text()
    _only_parse_errors(text[: data.draw(st.integers(0, len(text)))])


def test_public_names() -> None:
    assert set(eos_json.__all__) <= set(dir(eos_json))


def test_gather_with_an_absurd_number() -> None:
    text = '[{"hostname": "a", "devtype": "eos", "cmd": "x", "status": ' + "1" * 5000 + "}]"
    with pytest.raises(ParseError) as info:
        parse(text, "big.json")
    assert info.value.line == 1
