"""sonic_config_db: the three CONFIG_DB shapes normalize to one table view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from unifab.errors import ParseError
from unifab.parse.switch import sonic_config_db
from unifab.parse.switch.sonic_config_db import deref, parse

SONIC = Path("switch") / "sonic"


def _text(samples: Path, name: str) -> str:
    return (samples / SONIC / name).read_text()


def to_db_dump(nested: dict[str, Any]) -> dict[str, Any]:
    """Convert a nested config_db.json document to the ``sonic-db-dump -n CONFIG_DB -y`` shape.

    The shape is RECONSTRUCTED from knowledge of sonic-db-dump (swsscommon / sonic-py-swsssdk
    ``scripts/sonic-db-dump``), not copied from a capture: no db-dump sample exists in the corpus.
    Each redis key becomes ``{"expireat": <float epoch>, "ttl": <pttl / 1000, -0.001 for no
    expiry>, "type": "hash", "value": {fields}}``; non-hash keys keep their redis type.
    """
    out: dict[str, Any] = {}
    for table, body in nested.items():
        name, _, flat_key = table.partition("|")
        rows = {flat_key: body} if flat_key else body
        for key, fields in rows.items():
            out[f"{name}|{key}"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": fields}
    return out


# --- samples ------------------------------------------------------------------------------------


def test_nested_dell_sample(samples: Path) -> None:
    db = parse(_text(samples, "sonic_config_db_dellz9264_qos_full.json"), "dell.json")
    assert db.shape == "nested"
    assert db.tables["PORT_QOS_MAP"]["Ethernet0"] == {
        "dscp_to_tc_map": "AZURE",
        "pfc_enable": "3,4",
        "pfc_to_queue_map": "AZURE",
        "tc_to_pg_map": "AZURE",
        "tc_to_queue_map": "AZURE",
    }
    assert db.tables["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "pg_lossless_100000_40m_profile"}
    assert len(db.tables["QUEUE"]) == 462
    # the db_migrator fixture mixes one flat key into the nested document
    assert db.tables["VERSIONS"] == {"DATABASE": {"VERSION": "version_3_0_3"}}
    assert "VERSIONS|DATABASE" not in db.tables


def test_legacy_bracket_refs_are_dereferenced(samples: Path) -> None:
    legacy = parse(_text(samples, "sonic_config_db_legacy_bracket_refs_3_0_1_subset.json"))
    dell = parse(_text(samples, "sonic_config_db_dellz9264_qos_full.json"))
    assert legacy.shape == "nested"
    assert legacy.tables["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] == "AZURE"
    assert legacy.tables["QUEUE"]["Ethernet0|3"] == {
        "scheduler": "scheduler.1",
        "wred_profile": "AZURE_LOSSLESS",
    }
    assert legacy.tables["BUFFER_PROFILE"]["egress_lossy_profile"]["pool"] == "egress_lossless_pool"
    # every table in the subset equals the 3_0_3 file on the rows present in both
    for table, rows in legacy.tables.items():
        if table == "VERSIONS":
            continue
        for key, fields in rows.items():
            assert dell.tables[table][key] == fields, f"{table}|{key}"


def test_flat_mock_sample(samples: Path) -> None:
    db = parse(_text(samples, "sonic_config_db_mock_sn3800_qos_subset.json"))
    assert db.shape == "flat"
    assert db.tables["QUEUE"]["Ethernet0|0"] == {"scheduler": "scheduler.0"}  # was "[SCHEDULER|scheduler.0]"
    assert db.tables["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "NULL"}
    assert db.tables["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "600"}
    assert db.tables["PORT_QOS_MAP"]["Ethernet8"] == {}
    assert db.tables["FLEX_COUNTER_TABLE"]["WRED_ECN_QUEUE"]["FLEX_COUNTER_STATUS"] == "enable"


@pytest.mark.parametrize(
    "name",
    [
        "sonic_qos_rendered_mellanox4600c_d48c40_t0.json",
        "sonic_qos_rendered_arista7060x6_th5.json",
        "sonic_buffers_rendered_mellanox4600c_t0_static.json",
        "sonic_buffers_rendered_mellanox4600c_t0_dynamic.json",
    ],
)
def test_rendered_partial_configs_are_nested(samples: Path, name: str) -> None:
    raw = orjson.loads(_text(samples, name))
    db = parse(_text(samples, name))
    assert db.shape == "nested"
    assert set(db.tables) == set(raw)
    assert {t: len(rows) for t, rows in db.tables.items()} == {t: len(rows) for t, rows in raw.items()}


def test_db_dump_equals_nested(samples: Path) -> None:
    raw = orjson.loads(_text(samples, "sonic_config_db_dellz9264_qos_full.json"))
    dump = to_db_dump(raw)
    dump["CONFIG_DB_INITIALIZED"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "string", "value": "1"}
    db = parse(orjson.dumps(dump).decode())
    assert db.shape == "db-dump"
    assert db.tables == parse(_text(samples, "sonic_config_db_dellz9264_qos_full.json")).tables


# --- shapes and values --------------------------------------------------------------------------


DB_DUMP_TEXT = """{
    "BUFFER_POOL|ingress_lossless_pool": {
        "expireat": 1700000000.1,
        "ttl": -0.001,
        "type": "hash",
        "value": {"mode": "dynamic", "size": "35621248", "type": "ingress", "xoff": "7847424"}
    },
    "CONFIG_DB_INITIALIZED": {"expireat": 1700000000.1, "ttl": -0.001, "type": "string", "value": "1"},
    "SOME_SET|x": {"expireat": 1700000000.1, "ttl": -0.001, "type": "set", "value": ["a", "b"]},
    "SOME_LIST|y": {"expireat": 1700000000.1, "ttl": 12.5, "type": "list", "value": ["a"]},
    "BUFFER_PORT_EGRESS_PROFILE_LIST|Ethernet0": {
        "expireat": 1700000000.1,
        "ttl": -0.001,
        "type": "hash",
        "value": {
            "profile_list": "[BUFFER_PROFILE|egress_lossless_profile],[BUFFER_PROFILE|egress_lossy_profile]"
        }
    }
}"""


def test_db_dump_skips_non_hash_and_derefs_lists() -> None:
    db = parse(DB_DUMP_TEXT)
    assert db.shape == "db-dump"
    assert set(db.tables) == {"BUFFER_POOL", "BUFFER_PORT_EGRESS_PROFILE_LIST"}
    # the pool's own "type" field is not mistaken for an envelope
    assert db.tables["BUFFER_POOL"]["ingress_lossless_pool"]["type"] == "ingress"
    assert db.tables["BUFFER_PORT_EGRESS_PROFILE_LIST"]["Ethernet0"] == {
        "profile_list": "egress_lossless_profile,egress_lossy_profile"
    }


def test_flat_buffer_pool_with_type_field_is_not_an_envelope() -> None:
    db = parse('{"BUFFER_POOL|p": {"type": "ingress", "mode": "static", "size": "10"}}')
    assert db.shape == "flat"
    assert db.tables == {"BUFFER_POOL": {"p": {"type": "ingress", "mode": "static", "size": "10"}}}


def test_non_string_values_are_stringified() -> None:
    db = parse('{"PORT": {"Ethernet0": {"mtu": 9000, "speed": 100000, "x": true, "members": ["a", "[T|b]"]}}}')
    assert db.tables["PORT"]["Ethernet0"] == {"mtu": "9000", "speed": "100000", "x": "true", "members": "a,b"}


def test_flat_and_nested_rows_merge() -> None:
    db = parse('{"PORT": {"Ethernet0": {"mtu": "9100"}}, "PORT|Ethernet0": {"speed": "400000"}}')
    assert db.shape == "nested"
    assert db.tables["PORT"]["Ethernet0"] == {"mtu": "9100", "speed": "400000"}


def test_empty_document() -> None:
    assert parse("{}") == sonic_config_db.SonicConfigDb(shape="nested", tables={})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[DSCP_TO_TC_MAP|AZURE]", "AZURE"),
        ("AZURE", "AZURE"),
        ("[SCHEDULER|scheduler.0]", "scheduler.0"),
        ("[BUFFER_PROFILE|a],[BUFFER_PROFILE|b]", "a,b"),
        ("a,[BUFFER_PROFILE|b]", "a,b"),
        ("NULL", "NULL"),
        ("[fe80::1]", "[fe80::1]"),
        ("", ""),
    ],
)
def test_deref(value: str, expected: str) -> None:
    assert deref(value) == expected


# --- errors -------------------------------------------------------------------------------------


def test_invalid_json() -> None:
    with pytest.raises(ParseError) as info:
        parse('{\n  "PORT": {\n    "Ethernet0": {"mtu": "9100",}\n  }\n}', "bad.json")
    assert info.value.source == "bad.json"
    assert info.value.line == 3
    assert "JSON" in info.value.expected


def test_top_level_not_object() -> None:
    with pytest.raises(ParseError, match="JSON object"):
        parse("[1, 2]")


def test_non_object_table() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"PORT": ["Ethernet0"]}')
    assert info.value.key == "PORT"
    assert "table object" in info.value.expected


def test_non_object_row_nested() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"PORT": {"Ethernet0": "up"}}')
    assert info.value.key == "PORT|Ethernet0"


def test_non_object_row_flat() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"PORT|Ethernet0": 5}')
    assert info.value.key == "PORT|Ethernet0"


def test_db_dump_hash_with_non_object_value() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"PORT|Ethernet0": {"type": "hash", "value": ["mtu", "9100"], "ttl": -0.001}}')
    assert info.value.key == "PORT|Ethernet0"
    assert "hash value object" in info.value.expected


def test_object_field_value() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"PORT": {"Ethernet0": {"mtu": {"v": 1}}}}')
    assert info.value.key == "PORT|Ethernet0"
    assert "'mtu'" in info.value.expected


def test_flat_row_with_type_and_value_fields_is_not_an_envelope() -> None:
    db = parse('{"SOME_TABLE|k": {"type": "custom", "value": "7"}}')
    assert db.shape == "flat"
    assert db.tables == {"SOME_TABLE": {"k": {"type": "custom", "value": "7"}}}
