"""SONiC databases in the tests' private Redis (fixture ``redis_server``, tests/support/redis_service.py).

The database_config maps CONFIG_DB/COUNTERS_DB/APPL_DB/STATE_DB to DBs 10-13 of that server; every
test starts from empty DBs (the server is ours alone, so flushing it is safe). Without
``redis-server``: ``pytest.skip``, or ``pytest.fail`` when ``UNIFAB_REQUIRE_SERVICES=1`` (CI sets it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import redis
from redis_service import HOST, RedisServer

from unifab.collect.sonic_redis import DatabaseConfig, parse_database_config

DB_RANGE = range(10, 16)
TEST_DBS = {"CONFIG_DB": (10, "|"), "COUNTERS_DB": (11, ":"), "APPL_DB": (12, ":"), "STATE_DB": (13, "|")}
SONIC = Path("switch") / "sonic"
CONFIG_SAMPLES = [
    "sonic_config_db_mock_sn3800_qos_subset.json",  # flat, [TABLE|key] refs, empty rows
    "sonic_config_db_dellz9264_qos_full.json",  # nested (written to Redis in flat form)
    "sonic_config_db_legacy_bracket_refs_3_0_1_subset.json",
]
COUNTERS = "sonic_counters_db_mock_pfc_queue_pg.json"
LLDP = "sonic_appl_db_lldp_entry_table_subset.json"
STATE = "sonic_state_db_mock_buffer_port_subset.json"


def database_config_text(port: int, host: str = HOST, dbs: dict[str, tuple[int, str]] = TEST_DBS) -> str:
    """A database_config.json whose one instance is ``host:port`` (pass ``redis_server.port``)."""
    return orjson.dumps(
        {
            "INSTANCES": {"redis": {"hostname": host, "port": port, "unix_socket_path": "/nonexistent.sock"}},
            "DATABASES": {name: {"id": db, "separator": sep, "instance": "redis"} for name, (db, sep) in dbs.items()},
            "VERSION": "1.0",
        }
    ).decode()


def database_config(port: int, host: str = HOST, dbs: dict[str, tuple[int, str]] = TEST_DBS) -> DatabaseConfig:
    return parse_database_config(database_config_text(port, host, dbs))


def open_test_dbs(server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    """Clients on DBs 10-15 of the private server (by database name), flushed before and after the test."""
    clients = {db: server.client(db) for db in DB_RANGE}
    for client in clients.values():
        client.flushdb()
    by_name = {name: clients[db] for name, (db, _) in TEST_DBS.items()}
    try:
        yield by_name
    finally:
        for client in clients.values():
            client.flushdb()
            client.close()


def flat_rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A config_db.json document (nested, flat or mixed) as Redis keys -> fields."""
    rows: dict[str, dict[str, Any]] = {}
    for top, body in doc.items():
        if "|" in top:
            rows[top] = body
        else:
            for key, fields in body.items():
                rows[f"{top}|{key}"] = fields
    return rows


def load(client: redis.Redis, rows: dict[str, dict[str, Any]]) -> None:
    """HSET every row as SONiC stores it: strings, ``NULL`` for an entry without fields, ``f@`` for lists."""
    pipe = client.pipeline(transaction=False)
    for key, fields in rows.items():
        mapping: dict[str, str] = {}
        for name, value in fields.items():
            if isinstance(value, list):
                mapping[f"{name}@"] = ",".join(str(v) for v in value)
            else:
                mapping[name] = value if isinstance(value, str) else orjson.dumps(value).decode().strip('"')
        pipe.hset(key, mapping=mapping or {"NULL": "NULL"})
    pipe.execute()
