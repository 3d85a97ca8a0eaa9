"""SONiC database parsers read past what they cannot: one bad row, reference or key costs that object only.

Each test starts from a real sample (tests/data/samples/switch/sonic/), corrupts exactly one thing, and checks
that the collector names it and that every other row reads exactly as in the unharmed file. Without a
collector the same input still raises ParseError (the strict behaviour ``unifab parse`` keeps).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import (
    sonic_appl_buffers,
    sonic_config_db,
    sonic_counters_db,
    sonic_lldp,
    sonic_qos,
    sonic_state_db,
)

DELL = "switch/sonic/sonic_config_db_dellz9264_qos_full.json"
MOCK_FLAT = "switch/sonic/sonic_config_db_mock_sn3800_qos_subset.json"
COUNTERS = "switch/sonic/sonic_counters_db_mock_pfc_queue_pg.json"
STATE = "switch/sonic/sonic_state_db_mock_buffer_port_subset.json"
LLDP = "switch/sonic/sonic_appl_db_lldp_entry_table_subset.json"
APPL_BUFFERS = "switch/sonic/sonic_appl_db_buffer_tables_subset.json"


def _load(samples: Path, rel: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((samples / rel).read_text())
    return doc


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc)


def _partial(parser: Any, doc: dict[str, Any]) -> tuple[Any, ParseProblems]:
    log = ParseProblems("sample.json")
    return parser(_text(doc), "sample.json", log), log


# --- the collector ------------------------------------------------------------------------------------------


def test_strict_collector_raises_the_first_problem_and_lenient_keeps_them() -> None:
    strict = ParseProblems.strict("f.json")
    with pytest.raises(ParseError, match=r"f.json \[T\|k\]: a thing"):
        strict.add("a thing", "row T|k", key="T|k")
    lenient = ParseProblems("f.json")
    with lenient.skipping("row T|k") as row:
        raise ParseError("f.json", "a number", key="T|k")
    assert row.failed
    (problem,) = lenient.problems
    assert (problem.key, problem.expected, problem.skipped, problem.line) == ("T|k", "a number", "row T|k", None)
    assert str(problem) == "f.json [T|k]: a number; skipped row T|k"
    with lenient.skipping("nothing") as fine:
        pass
    assert not fine.failed and len(lenient.problems) == 1


def test_skipping_lets_other_exceptions_through() -> None:
    log = ParseProblems("f")
    with pytest.raises(KeyError), log.skipping("x"):
        raise KeyError("not a ParseError: a bug, never swallowed")
    assert log.problems == []


# --- CONFIG_DB: one bad row, every other row read -------------------------------------------------------------


@pytest.mark.parametrize("rel", [DELL, MOCK_FLAT])
def test_every_single_bad_config_db_row_costs_only_that_row(samples: Path, rel: str) -> None:
    """Fuzz-like guarantee: for each row in turn, a row body that is not an object is skipped, all else kept."""
    doc = _load(samples, rel)
    whole = sonic_config_db.parse(_text(doc)).tables
    nested = [(t, k) for t, body in doc.items() if "|" not in t and isinstance(body, dict) for k in body]
    flat = [(t, None) for t in doc if "|" in t]
    for table, key in (nested + flat)[::7]:  # every 7th row keeps the test quick; each is a different table mix
        broken = copy.deepcopy(doc)
        if key is None:
            broken[table] = ["not", "an", "object"]
            path = table
        else:
            broken[table][key] = ["not", "an", "object"]
            path = f"{table}|{key}"
        got, log = _partial(sonic_config_db.parse, broken)
        (problem,) = log.problems
        assert problem.key == path and "an object of fields" in problem.expected
        t, _, k = path.partition("|")
        expected = copy.deepcopy(whole)
        del expected[t][k]
        if not expected[t]:
            del expected[t]
        assert {n: v for n, v in got.tables.items() if v} == expected
        with pytest.raises(ParseError, match=r"an object of fields"):
            sonic_config_db.parse(_text(broken), "sample.json")


def test_a_field_of_the_wrong_type_costs_its_row(samples: Path) -> None:
    doc = _load(samples, DELL)
    doc["PORT"]["Ethernet4"]["mtu"] = {"nested": "object"}
    db, log = _partial(sonic_config_db.parse, doc)
    (problem,) = log.problems
    assert problem.key == "PORT|Ethernet4" and "'mtu'" in problem.expected
    assert "Ethernet4" not in db.tables["PORT"] and "Ethernet0" in db.tables["PORT"]


def test_nothing_usable_is_still_an_error(samples: Path) -> None:
    log = ParseProblems("x")
    for text in ("", "not json", "[1, 2]", '{"PORT": [1], "QUEUE": "x"}'):
        with pytest.raises(ParseError):
            sonic_qos.parse(text, "x", log)


# --- QoS resolution: dangling references ----------------------------------------------------------------------


def _resolved(samples: Path) -> sonic_qos.SonicSwitch:
    return sonic_qos.parse((samples / DELL).read_text())


def test_a_typo_d_scheduler_in_one_queue_row_costs_that_ports_qos_only(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _load(samples, DELL)
    doc["QUEUE"]["Ethernet8|3"]["scheduler"] = "scheduler.O"
    sw, log = _partial(sonic_qos.parse, doc)
    (problem,) = log.problems
    assert problem.key == "QUEUE|Ethernet8|3"
    assert "scheduler.O" in problem.expected and "SCHEDULER" in problem.expected
    assert problem.skipped == "the QoS of Ethernet8"
    assert "Ethernet8" not in sw.port_qos and "Ethernet8" in sw.ports  # the port is there, its QoS unknown
    assert {n: q for n, q in whole.port_qos.items() if n != "Ethernet8"} == sw.port_qos
    assert sw.ports == whole.ports
    with pytest.raises(ParseError, match=r"QUEUE\|Ethernet8\|3.*scheduler\.O"):
        sonic_qos.parse(_text(doc), "sample.json")


def test_a_map_the_dump_omits_costs_the_ports_that_bind_it(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _load(samples, DELL)
    doc["PORT_QOS_MAP"]["Ethernet4"]["tc_to_pg_map"] = "MISSING"
    sw, log = _partial(sonic_qos.parse, doc)
    (problem,) = log.problems
    assert problem.key == "PORT_QOS_MAP|Ethernet4" and "'MISSING'" in problem.expected
    assert set(whole.port_qos) - set(sw.port_qos) == {"Ethernet4"}


def test_a_bad_map_entry_costs_every_port_binding_that_map(samples: Path) -> None:
    doc = _load(samples, DELL)
    bound = {p for p, f in doc["PORT_QOS_MAP"].items() if f.get("dscp_to_tc_map") == "AZURE"}
    doc["DSCP_TO_TC_MAP"]["AZURE"]["7"] = "seven"
    sw, log = _partial(sonic_qos.parse, doc)
    assert {p.key for p in log.problems} == {"DSCP_TO_TC_MAP|AZURE"}
    assert len(log.problems) == len(bound)  # one per binding row, each naming its port
    assert not (bound & set(sw.port_qos)) and len(sw.ports) == 66


def test_port_qos_map_global_naming_a_missing_map(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _load(samples, DELL)
    doc["PORT_QOS_MAP"]["global"] = {"dscp_to_tc_map": "GONE"}
    sw, log = _partial(sonic_qos.parse, doc)
    (problem,) = log.problems
    assert problem.key == "PORT_QOS_MAP|global" and "'GONE'" in problem.expected
    assert sw.port_qos == whole.port_qos  # every port binds its own DSCP map: none falls back to global
    # a port that has no DSCP map of its own would use the unreadable global one: its QoS is not read
    del doc["PORT_QOS_MAP"]["Ethernet12"]["dscp_to_tc_map"]
    sw, log = _partial(sonic_qos.parse, doc)
    assert [p.key for p in log.problems] == ["PORT_QOS_MAP|global"]
    assert set(whole.port_qos) - set(sw.port_qos) == {"Ethernet12"}


def test_a_buffer_pg_naming_a_missing_profile_and_a_bad_pg_key(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _load(samples, DELL)
    doc["BUFFER_PG"]["Ethernet16|3-4"]["profile"] = "pg_lossless_typo"
    doc["BUFFER_PG"]["Ethernet20|4-3"] = {"profile": "NULL"}  # a descending range: a bad key
    sw, log = _partial(sonic_qos.parse, doc)
    by_key = {p.key: p for p in log.problems}
    assert set(by_key) == {"BUFFER_PG|Ethernet16|3-4", "BUFFER_PG|Ethernet20|4-3"}
    assert by_key["BUFFER_PG|Ethernet20|4-3"].skipped == "row BUFFER_PG|Ethernet20|4-3"
    assert set(whole.port_qos) - set(sw.port_qos) == {"Ethernet16"}
    assert sw.port_qos["Ethernet20"] == whole.port_qos["Ethernet20"]


def test_a_bad_port_row_leaves_that_ports_mtu_unknown(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _load(samples, DELL)
    doc["PORT"]["Ethernet0"]["mtu"] = "jumbo"
    sw, log = _partial(sonic_qos.parse, doc)
    (problem,) = log.problems
    assert problem.key == "PORT|Ethernet0" and "mtu" in problem.expected
    assert "Ethernet0" not in sw.ports and sw.port_qos == whole.port_qos
    assert len(sw.ports) == len(whole.ports) - 1


# --- chassis / VOQ keys -------------------------------------------------------------------------------------


def _chassis(doc: dict[str, Any], host: str, asic: str) -> dict[str, Any]:
    """The sample as a VOQ linecard's CONFIG_DB: QUEUE and BUFFER_* keys carry ``host|asic|``, SYSTEM_PORT added."""
    out = copy.deepcopy(doc)
    for table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
        out[table] = {f"{host}|{asic}|{key}": fields for key, fields in doc[table].items()}
    out["SYSTEM_PORT"] = {
        f"{host}|{asic}|{port}": {"system_port_id": str(i + 1), "switch_id": "0", "core_index": "0",
                                  "core_port_index": str(i + 1), "speed": fields.get("speed", "100000")}
        for i, (port, fields) in enumerate(sorted(doc["PORT"].items()))
    }  # fmt: skip
    return out


def test_a_voq_linecard_config_db_reads_its_own_ports_by_plain_name(samples: Path) -> None:
    whole = _resolved(samples)
    doc = _chassis(_load(samples, DELL), "sonic", "Asic0")
    doc["DEVICE_METADATA"]["localhost"].update({"asic_name": "asic0", "switch_type": "voq"})
    sw = sonic_qos.parse(_text(doc), "chassis.json")  # strict: nothing in it is a problem
    assert sw.port_qos == whole.port_qos and sw.ports == whole.ports
    # the same rows as redis keys (QUEUE|sonic|Asic0|Ethernet0|3), the shape the live collector reads
    flat = {f"{t}|{k}": f for t, body in doc.items() if "|" not in t for k, f in body.items()}
    assert "QUEUE|sonic|Asic0|Ethernet0|3" in flat and "SYSTEM_PORT|sonic|Asic0|Ethernet0" in flat
    assert sonic_qos.parse(_text(flat)).port_qos == whole.port_qos


def test_remote_system_ports_are_qualified_with_host_and_asic(samples: Path) -> None:
    whole = _resolved(samples)
    base = _load(samples, DELL)
    doc = _chassis(base, "sonic", "Asic0")
    remote = _chassis(base, "Linecard2", "Asic1")
    for table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
        doc[table].update({k: v for k, v in remote[table].items() if "|Ethernet0|" in k})
    doc["DEVICE_METADATA"]["localhost"]["asic_name"] = "Asic0"
    sw, log = _partial(sonic_qos.parse, doc)
    assert log.problems == []
    assert set(sw.port_qos) == set(whole.port_qos) | {"Linecard2|Asic1|Ethernet0"}
    assert sw.port_qos["Linecard2|Asic1|Ethernet0"].queues == whole.port_qos["Ethernet0"].queues
    # without a hostname in DEVICE_METADATA, one host/asic in the file is this switch's own
    del doc["DEVICE_METADATA"]["localhost"]["hostname"]
    single = _chassis(base, "Linecard1", "Asic0")
    del single["DEVICE_METADATA"]["localhost"]["hostname"]
    assert set(sonic_qos.parse(_text(single)).port_qos) == set(whole.port_qos)
    assert "Linecard2|Asic1|Ethernet0" in sonic_qos.parse(_text(doc)).port_qos


# --- COUNTERS_DB, STATE_DB, LLDP, APPL_DB buffers ----------------------------------------------------------


def test_one_odd_pg_name_map_entry_costs_that_pg(samples: Path) -> None:
    whole = sonic_counters_db.parse((samples / COUNTERS).read_text())
    doc = _load(samples, COUNTERS)
    oid = doc["COUNTERS_PG_NAME_MAP"].pop("Ethernet4:2")
    doc["COUNTERS_PG_NAME_MAP"]["Ethernet4-2"] = oid
    got, log = _partial(sonic_counters_db.parse, doc)
    (problem,) = log.problems
    assert problem.key == "COUNTERS_PG_NAME_MAP" and "'Ethernet4-2'" in problem.expected
    assert set(whole.ports["Ethernet4"].priority_groups) - set(got.ports["Ethernet4"].priority_groups) == {2}
    assert got.ports["Ethernet0"] == whole.ports["Ethernet0"] and got.ports["Ethernet8"] == whole.ports["Ethernet8"]
    assert got.buffer_pools == whole.buffer_pools
    with pytest.raises(ParseError, match="COUNTERS_PG_NAME_MAP"):
        sonic_counters_db.parse(_text(doc))


def test_a_queue_counter_that_is_not_a_number_costs_that_queue(samples: Path) -> None:
    whole = sonic_counters_db.parse((samples / COUNTERS).read_text())
    doc = _load(samples, COUNTERS)
    oid = doc["COUNTERS_QUEUE_NAME_MAP"]["Ethernet8:3"]
    doc[f"COUNTERS:{oid}"]["SAI_QUEUE_STAT_PACKETS"] = "lots"
    got, log = _partial(sonic_counters_db.parse, doc)
    (problem,) = log.problems
    assert problem.key == f"COUNTERS:{oid}" and problem.skipped == "the counters of queue Ethernet8:3"
    assert set(whole.ports["Ethernet8"].queues) - set(got.ports["Ethernet8"].queues) == {3}
    assert got.ports["Ethernet8"].pfc_rx_pkts == whole.ports["Ethernet8"].pfc_rx_pkts


@pytest.mark.parametrize("rel", [COUNTERS, STATE, LLDP, APPL_BUFFERS])
def test_every_single_bad_redis_key_costs_only_that_key(samples: Path, rel: str) -> None:
    doc = _load(samples, rel)
    whole = sonic_state_db.read_dump(_text(doc)).hashes
    for key in list(doc)[::5]:
        broken = copy.deepcopy(doc)
        broken[key] = [1, 2, 3]
        got, log = _partial(sonic_state_db.read_dump, broken)
        assert [p.key for p in log.problems] == [key]
        assert got.hashes == {k: v for k, v in whole.items() if k != key}


def test_one_bad_state_db_port_costs_that_port(samples: Path) -> None:
    whole = sonic_state_db.parse((samples / STATE).read_text())
    doc = _load(samples, STATE)
    doc["PORT_TABLE|Ethernet32"]["speed"] = "fast"
    got, log = _partial(sonic_state_db.parse, doc)
    (problem,) = log.problems
    assert problem.key == "PORT_TABLE|Ethernet32" and "speed" in problem.expected
    assert got.ports == {p: s for p, s in whole.ports.items() if p != "Ethernet32"}
    assert got.counter_capabilities == whole.counter_capabilities and got.mmu_size_bytes == whole.mmu_size_bytes


def test_one_bad_lldp_entry_costs_that_neighbour(samples: Path) -> None:
    whole = sonic_lldp.parse((samples / LLDP).read_text())
    doc = _load(samples, LLDP)
    doc["LLDP_ENTRY_TABLE:Ethernet4"]["lldp_rem_sys_cap_enabled"] = "bridge"
    got, log = _partial(sonic_lldp.parse, doc)
    (problem,) = log.problems
    assert problem.key == "LLDP_ENTRY_TABLE:Ethernet4" and problem.skipped == "the LLDP neighbour of Ethernet4"
    assert got == tuple(n for n in whole if n.local_port != "Ethernet4")


def test_a_buffer_profile_naming_a_missing_pool(samples: Path) -> None:
    whole = sonic_appl_buffers.parse((samples / APPL_BUFFERS).read_text())
    doc = _load(samples, APPL_BUFFERS)
    doc["BUFFER_PROFILE_TABLE:egress_lossy_profile"]["pool"] = "no_such_pool"
    got, log = _partial(sonic_appl_buffers.parse, doc)
    keys = [p.key for p in log.problems]
    assert keys[0] == "BUFFER_PROFILE_TABLE:egress_lossy_profile" and "'no_such_pool'" in log.problems[0].expected
    assert set(whole.profiles) - set(got.profiles) == {"egress_lossy_profile"}
    assert got.pools == whole.pools
    # the queue rows bound to the skipped profile are skipped too, each named; the other rows are all there
    bound = [
        k for k, v in doc.items() if k.startswith("BUFFER_QUEUE_TABLE:") and "egress_lossy" in v.get("profile", "")
    ]
    assert sorted(keys[1:]) == sorted(bound)
    assert got.ports["Ethernet0"].pgs == whole.ports["Ethernet0"].pgs
