"""sonic_qos: per-port QoS view resolved from CONFIG_DB, checked against the real samples.

Golden files hold ``unifab.jsonify.to_jsonable`` of the records. Regenerate them with
``UNIFAB_UPDATE_GOLDEN=1 pytest tests/parse/switch`` and review the diff; the explicit assertions
below are the hand-checked values from the samples.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from unifab.errors import ParseError
from unifab.jsonify import to_jsonable
from unifab.parse.switch import sonic_config_db, sonic_qos
from unifab.parse.switch.sonic_qos import SonicPort, SonicQueue, SonicSwitch

SONIC = Path("switch") / "sonic"
GOLDEN = Path(__file__).parent / "golden"

DELL = "sonic_config_db_dellz9264_qos_full.json"
LEGACY = "sonic_config_db_legacy_bracket_refs_3_0_1_subset.json"
MOCK = "sonic_config_db_mock_sn3800_qos_subset.json"
QOS_4600C = "sonic_qos_rendered_mellanox4600c_d48c40_t0.json"
QOS_7060X6 = "sonic_qos_rendered_arista7060x6_th5.json"
BUF_STATIC = "sonic_buffers_rendered_mellanox4600c_t0_static.json"
BUF_DYNAMIC = "sonic_buffers_rendered_mellanox4600c_t0_dynamic.json"

AZURE_DSCP_NON_DEFAULT = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}  # every other DSCP -> TC1
AZURE_TC_TO_PG = {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 0, 6: 0, 7: 7}
IDENTITY8 = {i: i for i in range(8)}


def _load(samples: Path, name: str) -> SonicSwitch:
    return sonic_qos.parse((samples / SONIC / name).read_text(), name)


def _golden(name: str, value: Any) -> None:
    path = GOLDEN / f"{name}.json"
    actual = to_jsonable(value)
    if os.environ.get("UNIFAB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(actual, option=orjson.OPT_INDENT_2) + b"\n")
    assert path.is_file(), f"golden file {path} missing (run with UNIFAB_UPDATE_GOLDEN=1)"
    assert actual == orjson.loads(path.read_bytes())


def _excerpt(sw: SonicSwitch, ports: list[str]) -> dict[str, Any]:
    """Switch-level fields plus a few ports, so goldens of big samples stay small."""
    return {
        "port_names": list(sw.port_qos),
        "switch": dataclasses.replace(
            sw,
            ports={p: sw.ports[p] for p in ports if p in sw.ports},
            port_qos={p: sw.port_qos[p] for p in ports},
        ),
    }


def _q(index: int, sched: str, s_type: str, weight: int, wred: str | None = None, **green: int) -> SonicQueue:
    return SonicQueue(
        index=index,
        scheduler=sched,
        scheduler_type=s_type,
        weight=weight,
        wred_profile=wred,
        ecn="ecn_all" if wred else None,
        green_min_threshold=green.get("gmin"),
        green_max_threshold=green.get("gmax"),
        green_drop_probability=green.get("gprob"),
        wred_green_enable=True if wred else None,  # every sample's AZURE_LOSSLESS sets wred_green_enable true
    )


# --- samples ------------------------------------------------------------------------------------


def test_dell_nested(samples: Path) -> None:
    sw = _load(samples, DELL)
    assert (sw.hostname, sw.hwsku, sw.platform, sw.device_type, sw.buffer_model) == (
        "sonic",
        "DellEMC-Z9264f-C64",
        "x86_64-dellemc_z9264f_c3538-r0",
        "LeafRouter",
        "traditional",
    )
    assert len(sw.ports) == 66
    assert list(sw.port_qos) == list(sw.ports)  # natural order, Ethernet0 .. Ethernet257
    assert list(sw.ports)[:3] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert sw.ports["Ethernet0"] == SonicPort(
        name="Ethernet0",
        mtu=9100,
        speed_mbps=100000,
        admin_status="up",
        fec=None,
        alias="hundredGigE1/1",
        description=None,
    )
    assert sw.ports["Ethernet256"].speed_mbps == 10000

    e0 = sw.port_qos["Ethernet0"]
    assert e0.dscp_to_tc_map == "AZURE"
    assert len(e0.dscp_to_tc) == 64
    assert {d: tc for d, tc in e0.dscp_to_tc.items() if tc != 1} == AZURE_DSCP_NON_DEFAULT
    assert e0.dscp_to_tc[26] == 1  # ConnectX default RoCE DSCP lands in a lossy TC
    assert e0.tc_to_pg == AZURE_TC_TO_PG
    assert e0.tc_to_queue == IDENTITY8
    assert e0.pfc_to_queue == IDENTITY8
    assert e0.pfc_enable == frozenset({3, 4})
    assert e0.pfcwd_sw_enable == frozenset()  # this fixture has no pfcwd_sw_enable
    lossless = {"gmin": 1048576, "gmax": 2097152, "gprob": 5}
    assert e0.queues == {
        0: _q(0, "scheduler.0", "DWRR", 14),
        1: _q(1, "scheduler.0", "DWRR", 14),
        2: _q(2, "scheduler.0", "DWRR", 14),
        3: _q(3, "scheduler.1", "DWRR", 15, "AZURE_LOSSLESS", **lossless),
        4: _q(4, "scheduler.1", "DWRR", 15, "AZURE_LOSSLESS", **lossless),
        5: _q(5, "scheduler.0", "DWRR", 14),
        6: _q(6, "scheduler.0", "DWRR", 14),
    }
    assert e0.buffer_pg == {
        0: "ingress_lossy_profile",
        3: "pg_lossless_100000_40m_profile",
        4: "pg_lossless_100000_40m_profile",
    }
    assert e0.buffer_queue == {
        0: "egress_lossy_profile",
        1: "egress_lossy_profile",
        2: "egress_lossy_profile",
        3: "egress_lossless_profile",
        4: "egress_lossless_profile",
        5: "egress_lossy_profile",
        6: "egress_lossy_profile",
    }
    assert e0.cable_length_m is None  # no CABLE_LENGTH table in this fixture
    assert sw.port_qos["Ethernet256"].buffer_pg[3] == "pg_lossless_10000_40m_profile"
    assert sw.buffer_pools["ingress_lossless_pool"] == {
        "mode": "dynamic",
        "size": "35621248",
        "type": "ingress",
        "xoff": "7847424",
    }
    assert sw.buffer_profiles["pg_lossless_100000_40m_profile"]["xoff"] == "177632"
    assert sw.pfc_wd == {}
    assert sw.neighbors == {}
    _golden("sonic_dell_z9264_excerpt", _excerpt(sw, ["Ethernet0", "Ethernet256"]))


def test_legacy_brackets_resolve_like_dell(samples: Path) -> None:
    legacy = _load(samples, LEGACY)
    dell = _load(samples, DELL)
    assert legacy.ports == {}  # the subset has no PORT table
    assert list(legacy.port_qos) == ["Ethernet0"]
    for port, qos in legacy.port_qos.items():
        assert qos == dell.port_qos[port]
    assert legacy.buffer_profiles == dell.buffer_profiles
    assert legacy.buffer_pools == dell.buffer_pools
    assert (legacy.hostname, legacy.hwsku, legacy.buffer_model) == (
        dell.hostname,
        dell.hwsku,
        dell.buffer_model,
    )
    _golden("sonic_legacy_bracket_refs", legacy)


def test_flat_mock(samples: Path) -> None:
    sw = _load(samples, MOCK)
    assert (sw.hostname, sw.hwsku, sw.device_type) == ("sonic-switch", "Mellanox-SN3800-D112C8", "ToRRouter")
    assert sw.buffer_model == "traditional"  # not set in the mock, despite its dynamic-model rows
    assert list(sw.ports) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    e0 = sw.ports["Ethernet0"]
    assert (e0.admin_status, e0.mtu, e0.speed_mbps, e0.alias, e0.description) == (
        "down",
        9100,
        40000,
        "etp1",
        "etp1",
    )
    assert sw.ports["Ethernet4"].description == "Servers0:eth0"
    q0 = sw.port_qos["Ethernet0"]
    assert q0.dscp_to_tc_map is None
    assert q0.dscp_to_tc == {}
    assert q0.pfc_enable == frozenset({3, 4})
    assert q0.queues[0] == _q(0, "scheduler.0", "DWRR", 14)  # from "[SCHEDULER|scheduler.0]"
    assert q0.queues[3] == _q(3, "scheduler.1", "DWRR", 15, "AZURE_LOSSLESS", gmin=1048576, gmax=2097152, gprob=5)
    assert q0.buffer_pg == {0: "ingress_lossy_profile", 3: "NULL", 4: "NULL"}
    assert q0.buffer_queue == {3: "egress_lossless_profile", 4: "egress_lossless_profile"}
    assert sw.port_qos["Ethernet8"].pfc_enable == frozenset()  # PORT_QOS_MAP|Ethernet8 is {}
    assert sw.port_qos["Ethernet8"].queues == {}
    assert sw.pfc_wd["GLOBAL"] == {"POLL_INTERVAL": "600"}
    assert sw.pfc_wd["Ethernet4"]["action"] == "drop"
    assert sw.buffer_profiles["alpha_profile"]["headroom_type"] == "dynamic"
    _golden("sonic_mock_sn3800_flat", sw)


def test_rendered_qos_mellanox4600c(samples: Path) -> None:
    sw = _load(samples, QOS_4600C)
    assert sw.ports == {}
    assert len(sw.port_qos) == 24
    assert "global" not in sw.port_qos
    e2 = sw.port_qos["Ethernet2"]
    assert e2.dscp_to_tc_map == "AZURE"
    assert {d: tc for d, tc in e2.dscp_to_tc.items() if tc != 1} == {3: 3, 4: 4, 8: 0, 33: 8, 46: 5, 48: 7}
    assert e2.tc_to_pg == {0: 0, 1: 0, 2: 2, 3: 3, 4: 4, 5: 0, 6: 6, 7: 0, 8: 0}
    assert e2.tc_to_queue[8] == 1
    assert e2.pfc_enable == e2.pfcwd_sw_enable == frozenset({3, 4})
    assert e2.queues[3] == _q(3, "scheduler.1", "DWRR", 15, "AZURE_LOSSLESS", gmin=2000000, gmax=10000000, gprob=5)
    up = sw.port_qos["Ethernet248"]  # dual-ToR uplink
    assert up.dscp_to_tc_map == "AZURE_UPLINK"
    assert {d: tc for d, tc in up.dscp_to_tc.items() if tc != 1} == {
        2: 2,
        3: 3,
        4: 4,
        6: 6,
        8: 0,
        33: 8,
        46: 5,
        48: 7,
    }
    assert up.pfc_enable == frozenset({2, 3, 4, 6})
    assert up.pfcwd_sw_enable == frozenset({3, 4})
    assert sorted(i for i, q in up.queues.items() if q.wred_profile) == [2, 3, 4, 6]
    _golden("sonic_rendered_qos_mellanox4600c_excerpt", _excerpt(sw, ["Ethernet2", "Ethernet248"]))


def test_rendered_qos_arista7060x6(samples: Path) -> None:
    sw = _load(samples, QOS_7060X6)
    assert len(sw.port_qos) == 130
    e0 = sw.port_qos["Ethernet0"]
    assert {d: tc for d, tc in e0.dscp_to_tc.items() if tc != 0} == {3: 3, 4: 4, 44: 6, 46: 5, 47: 1}
    assert e0.pfc_enable == e0.pfcwd_sw_enable == frozenset({3, 4})
    q3 = _q(3, "SCHEDULER_Q3", "DWRR", 20, "WRED_LOSSLESS_Q3", gmin=131072, gmax=262144, gprob=5)
    assert e0.queues[3] == q3
    assert e0.queues[4] == _q(4, "SCHEDULER_Q4", "DWRR", 10, "WRED_LOSSLESS_Q4", gmin=131072, gmax=262144, gprob=5)
    assert e0.queues[6] == _q(6, "SCHEDULER_Q6", "DWRR", 70)
    assert len(e0.queues) == 8
    e512 = sw.port_qos["Ethernet512"]  # no PFC, but the lossless queues still carry WRED/ECN
    assert e512.pfc_enable == frozenset()
    assert e512.pfc_to_queue == {}
    assert e512.queues[3] == q3
    _golden("sonic_rendered_qos_arista7060x6_excerpt", _excerpt(sw, ["Ethernet0", "Ethernet512"]))


def test_rendered_buffers_static_and_dynamic(samples: Path) -> None:
    static = _load(samples, BUF_STATIC)
    dynamic = _load(samples, BUF_DYNAMIC)
    assert len(static.port_qos) == len(dynamic.port_qos) == 88
    assert static.port_qos["Ethernet0"].buffer_pg == {0: "ingress_lossy_pg_zero_profile"}  # inactive port
    assert static.port_qos["Ethernet2"].buffer_pg == {0: "ingress_lossy_profile"}  # lossless PGs come at runtime
    assert dynamic.port_qos["Ethernet2"].buffer_pg == {0: "ingress_lossy_profile", 3: "NULL", 4: "NULL"}
    assert dynamic.port_qos["Ethernet248"].buffer_pg == {
        0: "ingress_lossy_profile",
        2: "NULL",
        3: "NULL",
        4: "NULL",
        6: "NULL",
    }
    assert dynamic.port_qos["Ethernet248"].buffer_queue[6] == "egress_lossless_profile"
    assert dynamic.port_qos["Ethernet248"].cable_length_m == 40
    assert dynamic.port_qos["Ethernet2"].cable_length_m == 5
    assert static.buffer_pools["ingress_lossless_pool"]["xoff"] == "1712128"
    assert "size" not in dynamic.buffer_pools["ingress_lossless_pool"]
    _golden("sonic_buffers_static_excerpt", _excerpt(static, ["Ethernet0", "Ethernet248"]))
    _golden("sonic_buffers_dynamic_excerpt", _excerpt(dynamic, ["Ethernet2", "Ethernet248"]))


def _to_db_dump(nested: dict[str, Any], ports: set[str]) -> dict[str, Any]:
    """Part of a nested config_db.json in the ``sonic-db-dump -n CONFIG_DB -y`` shape.

    RECONSTRUCTED, not captured: no sonic-db-dump output exists in the corpus. The envelope follows
    swsscommon/sonic-py-swsssdk ``scripts/sonic-db-dump``: per redis key ``{"expireat": epoch float,
    "ttl": pttl/1000 (-0.001 = no expiry), "type": redis type, "value": hash fields}``.
    """
    out: dict[str, Any] = {}
    for top, body in nested.items():
        table, _, flat_key = top.partition("|")
        rows = {flat_key: body} if flat_key else body
        for key, fields in rows.items():
            if key.split("|")[0] in ports or not key.startswith("Ethernet"):
                envelope = {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": fields}
                out[f"{table}|{key}"] = envelope
    out["CONFIG_DB_INITIALIZED"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "string", "value": "1"}
    return out


def test_db_dump_constructed_from_dell(samples: Path) -> None:
    dell_text = (samples / SONIC / DELL).read_text()
    dump = _to_db_dump(orjson.loads(dell_text), {"Ethernet0", "Ethernet256"})
    db = sonic_config_db.parse(orjson.dumps(dump, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
    assert db.shape == "db-dump"
    sw = sonic_qos.resolve(db)
    dell = sonic_qos.parse(dell_text)
    assert list(sw.port_qos) == ["Ethernet0", "Ethernet256"]
    for port in sw.port_qos:
        assert sw.port_qos[port] == dell.port_qos[port]
        assert sw.ports[port] == dell.ports[port]
    assert sw.buffer_profiles == dell.buffer_profiles
    _golden("sonic_db_dump_dell_subset", sw)


# --- variants -----------------------------------------------------------------------------------

MAPS: dict[str, Any] = {
    "DSCP_TO_TC_MAP": {"AZURE": {"3": "3", "26": "3", "0": "1"}, "OTHER": {"26": "4"}},
    "TC_TO_PRIORITY_GROUP_MAP": {"AZURE": {"3": "3", "4": "4"}},
    "TC_TO_QUEUE_MAP": {"AZURE": {"3": "3", "4": "4"}},
    "MAP_PFC_PRIORITY_TO_QUEUE": {"AZURE": {"3": "3", "4": "4"}},
    "SCHEDULER": {"s0": {"type": "DWRR", "weight": "14"}, "s1": {"type": "STRICT"}},
    "WRED_PROFILE": {"W": {"green_min_threshold": "100", "green_max_threshold": "200"}},
    "BUFFER_PROFILE": {"lossless": {"pool": "p", "size": "0"}, "lossy": {"pool": "p", "size": "0"}},
}


def _resolve(doc: dict[str, Any]) -> SonicSwitch:
    return sonic_qos.parse(orjson.dumps(doc).decode(), "variant.json")


def _with(**tables: Any) -> dict[str, Any]:
    doc = dict(MAPS)
    doc.update(tables)
    return doc


def test_comma_port_lists_and_ranges() -> None:
    sw = _resolve(
        _with(
            PORT_QOS_MAP={"Ethernet50,Ethernet52": {"tc_to_pg_map": "AZURE", "pfc_enable": "3,4"}},
            QUEUE={"Ethernet50,Ethernet52|3-4": {"scheduler": "s0", "wred_profile": "W"}, "Ethernet52|0": {}},
            BUFFER_PG={"Ethernet50,Ethernet52,Ethernet54|3-4": {"profile": "lossless"}},
            BUFFER_QUEUE={"Ethernet50|0-2": {"profile": "lossy"}, "Ethernet50|5-5": {"profile": "lossy"}},
            CABLE_LENGTH={"AZURE": {"Ethernet50": "40m", "Ethernet52": "300m"}},
        )
    )
    assert list(sw.port_qos) == ["Ethernet50", "Ethernet52", "Ethernet54"]
    e50, e52, e54 = (sw.port_qos[p] for p in ("Ethernet50", "Ethernet52", "Ethernet54"))
    assert e50.tc_to_pg == e52.tc_to_pg == {3: 3, 4: 4}
    assert e50.pfc_enable == e52.pfc_enable == frozenset({3, 4})
    assert e54.pfc_enable == frozenset()
    assert e54.tc_to_pg == {}
    assert sorted(e50.queues) == [3, 4]
    assert sorted(e52.queues) == [0, 3, 4]
    assert e52.queues[4] == SonicQueue(4, "s0", "DWRR", 14, "W", "ecn_none", 100, 200, None)
    assert e52.queues[0] == SonicQueue(0, None, None, None, None, None, None, None, None)
    assert e50.buffer_pg == e52.buffer_pg == e54.buffer_pg == {3: "lossless", 4: "lossless"}
    assert e50.buffer_queue == {0: "lossy", 1: "lossy", 2: "lossy", 5: "lossy"}
    assert (e50.cable_length_m, e52.cable_length_m, e54.cable_length_m) == (40, 300, None)
    # the dict of one port is not shared with another
    assert e50.tc_to_pg is not e52.tc_to_pg


def test_global_dscp_map_binding() -> None:
    sw = _resolve(
        _with(
            PORT={"Ethernet0": {"speed": "400000"}, "Ethernet4": {"speed": "400000"}},
            PORT_QOS_MAP={
                "global": {"dscp_to_tc_map": "AZURE"},
                "Ethernet0": {"pfc_enable": "3"},
                "Ethernet4": {"dscp_to_tc_map": "OTHER"},
            },
        )
    )
    assert "global" not in sw.port_qos
    assert sw.port_qos["Ethernet0"].dscp_to_tc_map == "AZURE"
    assert sw.port_qos["Ethernet0"].dscp_to_tc == {0: 1, 3: 3, 26: 3}
    assert sw.port_qos["Ethernet4"].dscp_to_tc_map == "OTHER"
    assert sw.port_qos["Ethernet4"].dscp_to_tc == {26: 4}


def test_port_list_and_single_key_merge() -> None:
    sw = _resolve(
        _with(
            PORT_QOS_MAP={
                "Ethernet0,Ethernet4": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"},
                "Ethernet4": {"pfc_enable": ""},
            }
        )
    )
    assert sw.port_qos["Ethernet0"].pfc_enable == frozenset({3, 4})
    assert sw.port_qos["Ethernet4"].pfc_enable == frozenset()  # empty string disables PFC
    assert sw.port_qos["Ethernet4"].dscp_to_tc_map == "AZURE"


def test_port_defaults() -> None:
    sw = _resolve({"PORT": {"Ethernet0": {"speed": "100000", "fec": "rs"}, "Ethernet4": {"mtu": "4200"}}})
    assert sw.ports["Ethernet0"] == SonicPort("Ethernet0", 9100, 100000, "down", "rs", None, None)
    assert sw.ports["Ethernet4"].mtu == 4200
    assert sw.ports["Ethernet4"].speed_mbps is None
    assert sw.buffer_model == "traditional"
    assert sw.hostname is None
    # every PORT gets a QoS view, empty when nothing is bound
    assert sw.port_qos["Ethernet4"].queues == {}
    assert sw.port_qos["Ethernet4"].dscp_to_tc_map is None


def test_metadata_and_neighbors() -> None:
    sw = _resolve(
        {
            "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "buffer_model": "dynamic", "type": "LeafRouter"}},
            "DEVICE_NEIGHBOR": {"Ethernet0": {"name": "spine1", "port": "Ethernet8"}},
            "PFC_WD": {"Ethernet0": {"action": "drop"}, "GLOBAL": {"POLL_INTERVAL": "200"}},
        }
    )
    assert (sw.hostname, sw.buffer_model, sw.device_type) == ("leaf1", "dynamic", "LeafRouter")
    assert sw.neighbors == {"Ethernet0": ("spine1", "Ethernet8")}
    assert sw.pfc_wd == {"Ethernet0": {"action": "drop"}, "GLOBAL": {"POLL_INTERVAL": "200"}}
    assert list(sw.port_qos) == ["Ethernet0"]


def test_three_shapes_resolve_identically() -> None:
    nested = _with(
        PORT={"Ethernet0": {"mtu": "9100", "speed": "400000", "admin_status": "up"}},
        PORT_QOS_MAP={"Ethernet0": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3,4"}},
        QUEUE={"Ethernet0|3": {"scheduler": "[SCHEDULER|s0]", "wred_profile": "W"}},
        BUFFER_PG={"Ethernet0|3-4": {"profile": "[BUFFER_PROFILE|lossless]"}},
    )
    flat = {f"{t}|{k}": f for t, rows in nested.items() for k, f in rows.items()}
    dump = {k: {"expireat": 1.5, "ttl": -0.001, "type": "hash", "value": f} for k, f in flat.items()}
    results = [_resolve(d) for d in (nested, flat, dump)]
    assert results[0] == results[1] == results[2]
    assert results[0].port_qos["Ethernet0"].buffer_pg == {3: "lossless", 4: "lossless"}


# --- errors -------------------------------------------------------------------------------------


def _error(doc: dict[str, Any]) -> ParseError:
    with pytest.raises(ParseError) as info:
        _resolve(doc)
    assert info.value.source == "variant.json"
    return info.value


def test_dangling_map_reference() -> None:
    err = _error(_with(PORT_QOS_MAP={"Ethernet0": {"dscp_to_tc_map": "FOO"}}))
    assert err.key == "PORT_QOS_MAP|Ethernet0"
    assert "'FOO'" in err.expected
    assert "DSCP_TO_TC_MAP" in err.expected
    assert "PORT_QOS_MAP|Ethernet0" in str(err)


def test_dangling_map_reference_in_port_list_and_global() -> None:
    err = _error(_with(PORT_QOS_MAP={"Ethernet0,Ethernet4": {"tc_to_queue_map": "[TC_TO_QUEUE_MAP|NOPE]"}}))
    assert err.key == "PORT_QOS_MAP|Ethernet0,Ethernet4"
    assert "'NOPE'" in err.expected
    assert "TC_TO_QUEUE_MAP" in err.expected
    err = _error(_with(PORT_QOS_MAP={"global": {"dscp_to_tc_map": "GONE"}}))
    assert err.key == "PORT_QOS_MAP|global"


def test_dangling_map_when_map_table_absent() -> None:
    err = _error({"PORT_QOS_MAP": {"Ethernet0": {"pfc_to_queue_map": "AZURE"}}})
    assert err.key == "PORT_QOS_MAP|Ethernet0"
    assert "MAP_PFC_PRIORITY_TO_QUEUE" in err.expected


@pytest.mark.parametrize(
    ("tables", "key", "needle"),
    [
        ({"QUEUE": {"Ethernet0|3": {"scheduler": "nope"}}}, "QUEUE|Ethernet0|3", "SCHEDULER"),
        ({"QUEUE": {"Ethernet0|3": {"wred_profile": "nope"}}}, "QUEUE|Ethernet0|3", "WRED_PROFILE"),
        ({"BUFFER_PG": {"Ethernet0|3-4": {"profile": "nope"}}}, "BUFFER_PG|Ethernet0|3-4", "BUFFER_PROFILE"),
        (
            {"BUFFER_QUEUE": {"Ethernet0|0": {"profile": "nope"}}},
            "BUFFER_QUEUE|Ethernet0|0",
            "BUFFER_PROFILE",
        ),
        ({"BUFFER_QUEUE": {"Ethernet0|0": {}}}, "BUFFER_QUEUE|Ethernet0|0", "'profile'"),
    ],
)
def test_dangling_queue_and_buffer_references(tables: dict[str, Any], key: str, needle: str) -> None:
    err = _error(_with(**tables))
    assert err.key == key
    assert needle in err.expected


@pytest.mark.parametrize(
    ("tables", "key", "needle"),
    [
        ({"PORT": {"Ethernet0": {"mtu": "jumbo"}}}, "PORT|Ethernet0", "mtu"),
        ({"PORT": {"Ethernet0": {"speed": "100G"}}}, "PORT|Ethernet0", "speed"),
        ({"DSCP_TO_TC_MAP": {"AZURE": {"3": "three"}}}, "DSCP_TO_TC_MAP|AZURE", "'three'"),
        ({"DSCP_TO_TC_MAP": {"AZURE": {"x": "3"}}}, "DSCP_TO_TC_MAP|AZURE", "map key"),
        (
            {"SCHEDULER": {"s0": {"weight": "heavy"}}, "QUEUE": {"Ethernet0|1": {"scheduler": "s0"}}},
            "SCHEDULER|s0",
            "weight",
        ),
        (
            {
                "WRED_PROFILE": {"W": {"green_max_threshold": "2M"}},
                "QUEUE": {"Ethernet0|3": {"wred_profile": "W"}},
            },
            "WRED_PROFILE|W",
            "green_max_threshold",
        ),
        ({"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3;4"}}}, "PORT_QOS_MAP|Ethernet0", "pfc_enable"),
        ({"QUEUE": {"Ethernet0|4-3": {"scheduler": "s0"}}}, "QUEUE|Ethernet0|4-3", "range"),
        ({"QUEUE": {"Ethernet0|x": {"scheduler": "s0"}}}, "QUEUE|Ethernet0|x", "range"),
        ({"QUEUE": {"Ethernet0": {"scheduler": "s0"}}}, "QUEUE|Ethernet0", "<port>|<index"),
        ({"BUFFER_PG": {"Ethernet0,|3": {"profile": "NULL"}}}, "BUFFER_PG|Ethernet0,|3", "port list"),
        ({"CABLE_LENGTH": {"AZURE": {"Ethernet0": "40 meters"}}}, "CABLE_LENGTH|AZURE", "'40 meters'"),
        ({"DEVICE_NEIGHBOR": {"Ethernet0": {"name": "x"}}}, "DEVICE_NEIGHBOR|Ethernet0", "'port'"),
    ],
)
def test_unparseable_values(tables: dict[str, Any], key: str, needle: str) -> None:
    doc = _with(**tables)
    doc.setdefault("PORT_QOS_MAP", {"Ethernet0": {"dscp_to_tc_map": "AZURE"}})
    err = _error(doc)
    assert err.key == key
    assert needle in err.expected


def test_invalid_json_through_qos_parse() -> None:
    with pytest.raises(ParseError) as info:
        sonic_qos.parse('{"PORT": {', "broken.json")
    assert info.value.source == "broken.json"
    assert info.value.line == 1


def test_non_object_table_through_qos_parse() -> None:
    with pytest.raises(ParseError) as info:
        sonic_qos.parse('{"PORT_QOS_MAP": "Ethernet0"}', "x.json")
    assert info.value.key == "PORT_QOS_MAP"
