"""sonic_redis against a real Redis: the real samples are loaded into DBs 10-15 of the tests' private
``redis-server`` (fixture ``redis_server``), read back through the adapter, and must resolve to what
the offline parsers make of the same files.

The database_config used here maps CONFIG_DB/COUNTERS_DB/APPL_DB/STATE_DB to 10-13 of that server.
Without ``redis-server``: ``pytest.skip``, or ``pytest.fail`` when ``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st
from redis_service import RedisServer
from redis_sonic import (
    CONFIG_SAMPLES,
    COUNTERS,
    HOST,
    LLDP,
    SONIC,
    STATE,
    database_config,
    flat_rows,
    load,
    open_test_dbs,
)

from unifab.collect import sonic_redis
from unifab.collect.bundle import load_bundle
from unifab.collect.sonic_redis import (
    DEFAULT_DATABASE_CONFIG,
    DatabaseConfig,
    SonicRedis,
    SonicRedisError,
    config_db_from_hashes,
    dump_to_bundle,
    parse_database_config,
)
from unifab.errors import ParseError, UnifabError
from unifab.parse.switch import sonic_config_db, sonic_counters_db, sonic_lldp, sonic_qos, sonic_state_db


@pytest.fixture
def dbs(redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    yield from open_test_dbs(redis_server)


@pytest.fixture
def sonic_config(redis_server: RedisServer) -> DatabaseConfig:
    """The test database_config, pointing at the private server."""
    return database_config(redis_server.port)


def sample(samples: Path, name: str) -> str:
    return (samples / SONIC / name).read_text()


# --- database_config.json ----------------------------------------------------------------------------


def test_database_config_sample(samples: Path) -> None:
    cfg = parse_database_config(sample(samples, "sonic_database_config_mock.json"))
    assert cfg.instances["redis"].hostname == "227.0.0.1"  # the mock's test artifact
    assert cfg.instances["redis_bmp"].port == 6400
    ids = {name: (db.id, db.separator) for name, db in cfg.databases.items()}
    assert ids["CONFIG_DB"] == (4, "|") and ids["COUNTERS_DB"] == (2, ":") and ids["STATE_DB"] == (6, "|")
    assert ids["APPL_DB"] == (0, ":") and ids["GB_COUNTERS_DB"] == (8, ":")  # the real template says 10
    assert cfg.databases["BMP_STATE_DB"].instance == "redis_bmp"


def test_default_ids_are_the_template_ids() -> None:
    ids = {name: db.id for name, db in DEFAULT_DATABASE_CONFIG.databases.items()}
    assert ids == {
        "APPL_DB": 0,
        "ASIC_DB": 1,
        "COUNTERS_DB": 2,
        "LOGLEVEL_DB": 3,
        "CONFIG_DB": 4,
        "PFC_WD_DB": 5,
        "FLEX_COUNTER_DB": 5,
        "STATE_DB": 6,
        "SNMP_OVERLAY_DB": 7,
        "RESTAPI_DB": 8,
        "GB_ASIC_DB": 9,
        "GB_COUNTERS_DB": 10,
        "CHASSIS_APP_DB": 12,
        "CHASSIS_STATE_DB": 13,
        "APPL_STATE_DB": 14,
    }
    reader = SonicRedis("leaf1", host="10.0.0.9")
    assert reader.address("CONFIG_DB") == "10.0.0.9:6379/4"  # no-connect: the template's port, only formatted


@pytest.mark.parametrize(
    ("doc", "key"),
    [
        ({"DATABASES": {}}, "INSTANCES"),
        ({"INSTANCES": {"redis": {"hostname": "h", "port": 1}}}, "DATABASES"),
        ({"INSTANCES": {"redis": {"hostname": "", "port": 1}}, "DATABASES": {"A": {}}}, "INSTANCES.redis.hostname"),
        ({"INSTANCES": {"redis": {"hostname": "h", "port": True}}, "DATABASES": {"A": {}}}, "INSTANCES.redis.port"),
        ({"INSTANCES": {"redis": {"hostname": "h", "port": 70000}}, "DATABASES": {"A": {}}}, "INSTANCES.redis.port"),
        (
            {
                "INSTANCES": {"redis": {"hostname": "h", "port": 1}},
                "DATABASES": {"A": {"id": "4", "separator": "|", "instance": "redis"}},
            },
            "DATABASES.A.id",
        ),
        (
            {
                "INSTANCES": {"redis": {"hostname": "h", "port": 1}},
                "DATABASES": {"A": {"id": 4, "separator": "||", "instance": "redis"}},
            },
            "DATABASES.A.separator",
        ),
        (
            {
                "INSTANCES": {"redis": {"hostname": "h", "port": 1}},
                "DATABASES": {"A": {"id": 4, "separator": "|", "instance": "x"}},
            },
            "DATABASES.A.instance",
        ),
    ],
)
def test_database_config_errors(doc: dict[str, Any], key: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_database_config(orjson.dumps(doc), "database_config.json")
    assert info.value.key == key


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300)
@given(
    st.one_of(
        JSON_VALUES,
        st.fixed_dictionaries({"INSTANCES": JSON_VALUES, "DATABASES": JSON_VALUES}),
        st.fixed_dictionaries(
            {
                "INSTANCES": st.dictionaries(st.just("redis"), JSON_VALUES, max_size=1),
                "DATABASES": st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=2),
            }
        ),
    ),
    st.integers(0, 400),
)
def test_database_config_raises_only_parse_error(doc: Any, cut: int) -> None:
    text = json.dumps(doc)
    for candidate in (text, text[:cut]):
        with contextlib.suppress(ParseError):
            parse_database_config(candidate)


def test_database_config_not_json() -> None:
    with pytest.raises(ParseError) as info:
        parse_database_config("{\n  INSTANCES\n}")
    assert info.value.line == 2


# --- reading real data back ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIG_SAMPLES)
def test_config_db_read_back_equals_offline_parse(
    samples: Path, dbs: dict[str, redis.Redis], sonic_config: DatabaseConfig, name: str
) -> None:
    text = sample(samples, name)
    load(dbs["CONFIG_DB"], flat_rows(orjson.loads(text)))
    dbs["CONFIG_DB"].set("CONFIG_DB_INITIALIZED", "1")  # a string key: skipped
    offline = sonic_config_db.parse(text, name)
    with SonicRedis("leaf1", database_config=sonic_config, batch_size=37) as reader:
        live = reader.config_db()
    assert live.shape == "flat"
    assert live.tables == offline.tables
    assert sonic_qos.resolve(live) == sonic_qos.parse(text, name)


def test_counters_lldp_state_read_back_equal_offline_parse(
    samples: Path, dbs: dict[str, redis.Redis], sonic_config: DatabaseConfig
) -> None:
    load(dbs["COUNTERS_DB"], orjson.loads(sample(samples, COUNTERS)))
    load(dbs["APPL_DB"], orjson.loads(sample(samples, LLDP)))
    dbs["APPL_DB"].hset("ROUTE_TABLE:10.0.0.0/24", mapping={"nexthop": "10.0.0.1"})  # not scanned
    load(dbs["STATE_DB"], orjson.loads(sample(samples, STATE)))
    with SonicRedis("leaf1", database_config=sonic_config, batch_size=7) as reader:  # many small pipelines
        counters = reader.counters()
        neighbors = reader.lldp_neighbors()
        state = reader.state()
        appl = reader.appl_db_hashes()
    assert counters == sonic_counters_db.parse(sample(samples, COUNTERS))
    assert neighbors == sonic_lldp.parse(sample(samples, LLDP))
    assert state == sonic_state_db.parse(sample(samples, STATE))
    assert all(key.startswith("LLDP_ENTRY_TABLE:") for key in appl)
    assert counters.ports["Ethernet0"].pfc_rx_pkts[3] == 203


def test_leaf_lists_and_null_placeholder(dbs: dict[str, redis.Redis], sonic_config: DatabaseConfig) -> None:
    dbs["CONFIG_DB"].hset("VLAN|Vlan1000", mapping={"members@": "Ethernet0,Ethernet4", "vlanid": "1000"})
    dbs["CONFIG_DB"].hset("PORT_QOS_MAP|Ethernet8", mapping={"NULL": "NULL"})
    with SonicRedis("leaf1", database_config=sonic_config) as reader:
        db = reader.config_db()
    assert db.tables["VLAN"]["Vlan1000"] == {"members": "Ethernet0,Ethernet4", "vlanid": "1000"}
    assert db.tables["PORT_QOS_MAP"]["Ethernet8"] == {}
    # what the same rows give in config_db.json form, where a leaf-list is a JSON array
    nested = sonic_config_db.parse(
        '{"VLAN": {"Vlan1000": {"members": ["Ethernet0", "Ethernet4"], "vlanid": "1000"}},'
        ' "PORT_QOS_MAP": {"Ethernet8": {}}}'
    )
    assert db.tables == nested.tables


def test_config_db_from_hashes_matches_flat_parse(samples: Path) -> None:
    text = sample(samples, CONFIG_SAMPLES[0])
    rows = {k: {f: str(v) for f, v in fields.items()} for k, fields in orjson.loads(text).items()}
    rows["NO_SEPARATOR"] = {"x": "1"}
    assert config_db_from_hashes(rows) == sonic_config_db.parse(text)


def test_dump_to_bundle(
    samples: Path, dbs: dict[str, redis.Redis], sonic_config: DatabaseConfig, tmp_path: Path
) -> None:
    dell = sample(samples, CONFIG_SAMPLES[1])
    load(dbs["CONFIG_DB"], flat_rows(orjson.loads(dell)))
    dbs["CONFIG_DB"].hset("VLAN|Vlan1000", mapping={"members@": "Ethernet0,Ethernet4"})
    load(dbs["COUNTERS_DB"], orjson.loads(sample(samples, COUNTERS)))
    load(dbs["APPL_DB"], orjson.loads(sample(samples, LLDP)))
    load(dbs["STATE_DB"], orjson.loads(sample(samples, STATE)))
    with SonicRedis("leaf07", database_config=sonic_config) as reader:
        out = dump_to_bundle(reader, tmp_path)
    assert out == tmp_path / "switches" / "leaf07" / "sonic"
    assert sorted(p.name for p in out.iterdir()) == [
        "appl_db.json",
        "config_db.json",
        "counters_db.json",
        "state_db.json",
    ]
    config = orjson.loads((out / "config_db.json").read_bytes())
    assert config["VLAN"]["Vlan1000"] == {"members": ["Ethernet0", "Ethernet4"]}  # the config_db.json leaf-list form
    del config["VLAN"]
    assert sonic_config_db.parse(orjson.dumps(config)).tables == sonic_config_db.parse(dell).tables
    assert sonic_qos.parse((out / "config_db.json").read_text()).port_qos == sonic_qos.parse(dell).port_qos
    assert sonic_counters_db.parse((out / "counters_db.json").read_text()) == sonic_counters_db.parse(
        sample(samples, COUNTERS)
    )
    assert sonic_lldp.parse((out / "appl_db.json").read_text()) == sonic_lldp.parse(sample(samples, LLDP))
    assert sonic_state_db.parse((out / "state_db.json").read_text()) == sonic_state_db.parse(sample(samples, STATE))
    fabric = load_bundle(tmp_path)  # the bundle reader takes the dump as it takes the twin's files
    assert fabric.input_findings == []
    assert fabric.switches["leaf07"].hwsku == "DellEMC-Z9264f-C64"


# --- failures become the narrow error ----------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def test_connection_refused_names_switch_and_address() -> None:
    port = closed_port()
    reader = SonicRedis("leaf1", port=port, database_config=database_config(port), timeout_s=2)
    with pytest.raises(SonicRedisError) as info:
        reader.config_db()
    err = info.value
    assert isinstance(err, UnifabError)
    assert (err.switch, err.address) == ("leaf1", f"{HOST}:{port}/10")
    assert "leaf1" in str(err) and f"{HOST}:{port}/10" in str(err)
    assert "connect" in err.reason


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers."""
    server = socket.socket()
    server.bind((HOST, 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def test_timeout_is_the_narrow_error(silent_server: int) -> None:
    reader = SonicRedis("leaf1", port=silent_server, database_config=database_config(silent_server), timeout_s=0.3)
    with pytest.raises(SonicRedisError, match="timed out") as info:
        reader.counters()
    assert info.value.address == f"{HOST}:{silent_server}/11"


def test_authentication_failure_is_the_narrow_error(redis_server: RedisServer, sonic_config: DatabaseConfig) -> None:
    reader = SonicRedis("leaf1", database_config=sonic_config, username="nobody", password="wrong", timeout_s=2)
    with pytest.raises(SonicRedisError) as info:
        reader.lldp_neighbors()
    assert info.value.switch == "leaf1"
    assert info.value.address == f"{HOST}:{redis_server.port}/12"


def test_database_out_of_range_is_the_narrow_error(redis_server: RedisServer) -> None:
    cfg = database_config(redis_server.port, dbs={"CONFIG_DB": (4096, "|")})
    with pytest.raises(SonicRedisError, match="4096"):
        SonicRedis("leaf1", database_config=cfg).config_db()


def test_database_missing_from_config() -> None:
    cfg = database_config(closed_port(), dbs={"CONFIG_DB": (10, "|")})  # raises before connecting
    with pytest.raises(SonicRedisError, match="COUNTERS_DB"):
        SonicRedis("leaf1", database_config=cfg).counters()


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        SonicRedis("leaf1", batch_size=0)


def test_module_exports() -> None:
    assert set(sonic_redis.__all__) <= set(dir(sonic_redis))
