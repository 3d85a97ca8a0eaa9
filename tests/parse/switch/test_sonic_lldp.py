"""sonic_lldp (APPL_DB LLDP_ENTRY_TABLE) and the generic APPL_DB/STATE_DB readers of sonic_state_db."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import sonic_lldp, sonic_state_db
from unifab.parse.switch.sonic_lldp import CAPABILITIES, SonicLldpNeighbor, dump, parse
from unifab.parse.switch.sonic_state_db import SonicDbDump, SonicPortState, read_dump

SONIC = Path("switch") / "sonic"
GOLDEN = Path(__file__).parent / "golden"
LLDP = "sonic_appl_db_lldp_entry_table_subset.json"
STATE = "sonic_state_db_mock_buffer_port_subset.json"
APPL_BUFFERS = "sonic_appl_db_buffer_tables_subset.json"


def text(samples: Path, name: str) -> str:
    return (samples / SONIC / name).read_text()


def neighbor(**fields: Any) -> SonicLldpNeighbor:
    base: dict[str, Any] = {
        "local_port": "Ethernet0",
        "system_name": None,
        "chassis_id": None,
        "chassis_id_subtype": None,
        "port_id": None,
        "port_id_subtype": None,
        "port_descr": None,
        "system_descr": None,
        "mgmt_address": None,
        "mgmt_addresses": (),
        "capabilities_supported": (),
        "capabilities_enabled": (),
    }
    base.update(fields)
    return SonicLldpNeighbor(**base)


def json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    )


# --- LLDP sample ------------------------------------------------------------------------------------


def test_lldp_sample(samples: Path, golden: Any) -> None:
    neighbors = parse(text(samples, LLDP), LLDP)
    assert [n.local_port for n in neighbors] == ["Ethernet0", "Ethernet4", "Ethernet8"]  # PORT_TABLE:* ignored
    assert neighbors[0] == neighbor(
        local_port="Ethernet0",
        system_name="switch13",
        chassis_id="00:11:22:33:44:55",
        chassis_id_subtype="mac",  # 4
        port_id="Ethernet1",
        port_id_subtype="ifname",  # 5
        port_descr=None,  # the mock publishes " "
        system_descr="I'm a little teapot.",
        capabilities_supported=("Bridge", "Router"),  # "28 00"
        capabilities_enabled=("Bridge", "Router"),
    )
    assert [n.port_id for n in neighbors] == ["Ethernet1", "Ethernet2", "Ethernet3"]
    golden(GOLDEN / "sonic_appl_db_lldp_entry_table.json", neighbors)


def test_lldp_from_db_dump_equals_flat(samples: Path) -> None:
    flat = orjson.loads(text(samples, LLDP))
    dump = {k: {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": v} for k, v in flat.items()}
    dump["LLDP_LOC_CHASSIS"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": {"x": "1"}}
    assert parse(orjson.dumps(dump)) == parse(text(samples, LLDP))


@pytest.mark.parametrize(
    ("port_subtype", "chassis_subtype", "port_name", "chassis_name"),
    [
        ("5", "4", "ifname", "mac"),
        ("3", "4", "mac", "mac"),
        ("7", "7", "local", "local"),
        ("1", "6", "ifalias", "ifname"),
        ("4", "5", "ip", "ip"),
        ("2", "1", "port-component", "chassis-component"),
        ("6", "3", "agent-circuit-id", "port-component"),
        ("9", "0", "unknown", "unknown"),
    ],
)
def test_subtypes_are_named(port_subtype: str, chassis_subtype: str, port_name: str, chassis_name: str) -> None:
    doc = {
        "LLDP_ENTRY_TABLE:Ethernet8": {
            "lldp_rem_port_id_subtype": port_subtype,
            "lldp_rem_chassis_id_subtype": chassis_subtype,
        }
    }
    (nb,) = parse(orjson.dumps(doc))
    assert (nb.port_id_subtype, nb.chassis_id_subtype) == (port_name, chassis_name)


def test_mgmt_addresses_and_capability_bits() -> None:
    doc = {
        "LLDP_ENTRY_TABLE:Ethernet10": {"lldp_rem_man_addr": "10.0.0.1, fc00::1", "lldp_rem_sys_cap_enabled": "A4 80"},
        "LLDP_ENTRY_TABLE:Ethernet2": {"lldp_rem_sys_name": "host01"},
    }
    nb2, nb10 = parse(orjson.dumps(doc))
    assert nb2 == neighbor(local_port="Ethernet2", system_name="host01")  # natural port order
    assert nb10.mgmt_address == "10.0.0.1"
    assert nb10.mgmt_addresses == ("10.0.0.1", "fc00::1")
    # 0xA4 = bits 0, 2, 5 (Other, Bridge, Tel); 0x80 of the 2nd octet = bit 8 (CVLAN)
    assert nb10.capabilities_enabled == ("Other", "Bridge", "Tel", "CVLAN")


def test_no_entries() -> None:
    assert parse("{}") == ()
    assert parse('{"PORT_TABLE:Ethernet0": {"speed": 100000}}') == ()


@pytest.mark.parametrize(
    ("doc", "key", "expected"),
    [
        (
            {"LLDP_ENTRY_TABLE:Ethernet0": {"lldp_rem_port_id_subtype": "ifname"}},
            "LLDP_ENTRY_TABLE:Ethernet0",
            "subtype number",
        ),
        (
            {"LLDP_ENTRY_TABLE:Ethernet0": {"lldp_rem_sys_cap_enabled": "bridge, router"}},
            "LLDP_ENTRY_TABLE:Ethernet0",
            "hex octets",
        ),
        ({"LLDP_ENTRY_TABLE:": {}}, "LLDP_ENTRY_TABLE:", "local port"),
        ({"LLDP_ENTRY_TABLE:Ethernet0": "switch13"}, "LLDP_ENTRY_TABLE:Ethernet0", "object"),
        ({"LLDP_ENTRY_TABLE:Ethernet0": {"lldp_rem_index": [1]}}, "LLDP_ENTRY_TABLE:Ethernet0", "string or number"),
    ],
)
def test_lldp_errors(doc: dict[str, Any], key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(orjson.dumps(doc), "appl_db.json")
    assert info.value.source == "appl_db.json"
    assert info.value.key == key
    assert expected in info.value.expected


def test_lldp_render_round_trip(samples: Path) -> None:
    neighbors = parse(text(samples, LLDP))
    assert parse(dump(neighbors)) == neighbors


SUBTYPE_NAMES = st.sampled_from([None, "ifname", "mac", "local", "ifalias", "ip", "unknown"])
CHASSIS_NAMES = st.sampled_from([None, "mac", "ifname", "local", "ip", "chassis-component", "unknown"])
TEXTS = st.none() | st.text(min_size=1, max_size=12).filter(str.strip)


@st.composite
def neighbors(draw: st.DrawFn) -> tuple[SonicLldpNeighbor, ...]:
    ports = draw(st.lists(st.integers(0, 512), unique=True, max_size=5))
    out = []
    for p in sorted(ports):
        addrs = tuple(draw(st.lists(st.from_regex(r"10\.0\.[0-9]\.[1-9]", fullmatch=True), max_size=2)))
        out.append(
            neighbor(
                local_port=f"Ethernet{p}",
                system_name=draw(TEXTS),
                chassis_id=draw(TEXTS),
                chassis_id_subtype=draw(CHASSIS_NAMES),
                port_id=draw(TEXTS),
                port_id_subtype=draw(SUBTYPE_NAMES),
                port_descr=draw(TEXTS),
                system_descr=draw(TEXTS),
                mgmt_address=addrs[0] if addrs else None,
                mgmt_addresses=addrs,
                capabilities_supported=tuple(c for c in CAPABILITIES if draw(st.booleans())),
                capabilities_enabled=tuple(c for c in CAPABILITIES if draw(st.booleans())),
            )
        )
    return tuple(out)


@given(neighbors())
def test_lldp_render_round_trip_property(nbs: tuple[SonicLldpNeighbor, ...]) -> None:
    assert parse(dump(nbs)) == nbs


LLDP_FIELDS = st.sampled_from(
    [
        "lldp_rem_port_id_subtype",
        "lldp_rem_chassis_id_subtype",
        "lldp_rem_sys_cap_enabled",
        "lldp_rem_sys_cap_supported",
        "lldp_rem_man_addr",
        "lldp_rem_port_desc",
        "lldp_rem_sys_name",
    ]
)


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["LLDP_ENTRY_TABLE:Ethernet0", "LLDP_ENTRY_TABLE:", "PORT_TABLE:Ethernet0", "X"]),
        st.one_of(
            st.dictionaries(LLDP_FIELDS, st.one_of(st.sampled_from(["5", "28 00", "ZZ", " ", ""]), json_values())),
            json_values(),
        ),
        max_size=4,
    )
)
def test_lldp_random_dumps_raise_only_parse_error(doc: dict[str, Any]) -> None:
    try:
        result = parse(json.dumps(doc))
    except ParseError:
        return
    assert parse(dump(result)) == result


# --- generic dump reader and STATE_DB --------------------------------------------------------------


def test_read_dump_stringifies_values(samples: Path) -> None:
    dump = read_dump(text(samples, LLDP))
    assert dump.shape == "flat"
    assert dump.hashes["PORT_TABLE:Ethernet0"] == {"description": "snowflake", "speed": "100000"}  # a JSON number


def test_read_dump_appl_buffer_tables(samples: Path) -> None:
    dump = read_dump(text(samples, APPL_BUFFERS))
    assert dump.hashes["BUFFER_PG_TABLE:Ethernet0:3-4"] == {"profile": "pg_lossless_100000_40m_profile"}
    assert len(dump.hashes) == 12


def test_read_dump_mixed_shapes() -> None:
    dump = read_dump(
        '{"A|1": {"x": true, "y": 1.5}, "B|2": {"type": "hash", "value": {"z": "1"}},'
        ' "C": {"type": "string", "value": "1"}}'
    )
    assert dump == SonicDbDump(shape="db-dump", hashes={"A|1": {"x": "true", "y": "1.5"}, "B|2": {"z": "1"}})


def test_state_db_sample(samples: Path, golden: Any) -> None:
    state = sonic_state_db.parse(text(samples, STATE), STATE)
    assert list(state.ports) == [
        "Ethernet0",
        "Ethernet16",
        "Ethernet24",
        "Ethernet32",
        "Ethernet36",
        "Ethernet112",
        "Ethernet124",
    ]
    assert state.ports["Ethernet0"] == SonicPortState(
        port="Ethernet0",
        state=None,
        admin_status=None,
        oper_status=None,
        speed_mbps=100000,
        mtu=None,
        fec="rs",
        supported_speeds_mbps=(10000, 25000, 40000, 100000),
        supported_fecs=("rs", "none", "test"),
        link_training_status="not_trained",
        max_queues=20,
        max_priority_groups=8,
    )
    e16 = state.ports["Ethernet16"]
    assert (e16.state, e16.admin_status, e16.oper_status, e16.mtu, e16.speed_mbps) == ("ok", "up", "up", 9100, 100)
    assert state.ports["Ethernet112"].supported_fecs == ()  # "N/A"
    assert state.mmu_size_bytes == 13945824
    assert state.counter_capabilities["QUEUE_COUNTER_CAPABILITIES|WRED_ECN_QUEUE_ECN_MARKED_PKT_COUNTER"] is True
    assert state.counter_capabilities["PORT_COUNTER_CAPABILITIES|LLR.LLR_TX_OK"] is True
    golden(GOLDEN / "sonic_state_db_mock.json", state)


@pytest.mark.parametrize(
    ("doc", "key", "expected"),
    [
        ({"PORT_TABLE|Ethernet0": {"speed": "fast"}}, "PORT_TABLE|Ethernet0", "speed"),
        ({"PORT_TABLE|Ethernet0": {"supported_speeds": "10G"}}, "PORT_TABLE|Ethernet0", "supported_speeds"),
        ({"BUFFER_MAX_PARAM_TABLE|global": {"mmu_size": "-1"}}, "BUFFER_MAX_PARAM_TABLE|global", "mmu_size"),
        ({"QUEUE_COUNTER_CAPABILITIES|X": {"isSupported": "maybe"}}, "QUEUE_COUNTER_CAPABILITIES|X", "isSupported"),
        ({"PORT_TABLE|Ethernet0": {"type": "hash", "value": [1]}}, "PORT_TABLE|Ethernet0", "hash value object"),
    ],
)
def test_state_db_errors(doc: dict[str, Any], key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        sonic_state_db.parse(orjson.dumps(doc), "state_db.json")
    assert info.value.key == key
    assert expected in info.value.expected


def test_module_exports() -> None:
    assert set(sonic_lldp.__all__) <= set(dir(sonic_lldp))
    assert set(sonic_state_db.__all__) <= set(dir(sonic_state_db))
