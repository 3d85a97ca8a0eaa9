"""A real Redis holding SONiC databases for tests: DBs 10-15 of 127.0.0.1:6379, flushed around each use.

The database_config maps CONFIG_DB/COUNTERS_DB/APPL_DB/STATE_DB to 10-13, far from the DBs a
developer's own Redis uses. Without a Redis: ``pytest.skip``, or ``pytest.fail`` when
``UNIFAB_REQUIRE_SERVICES=1`` (CI sets it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis

from unifab.collect.sonic_redis import parse_database_config

HOST, PORT = "127.0.0.1", 6379
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


def database_config_text(host: str = HOST, port: int = PORT, dbs: dict[str, tuple[int, str]] = TEST_DBS) -> str:
    return orjson.dumps(
        {
            "INSTANCES": {"redis": {"hostname": host, "port": port, "unix_socket_path": "/nonexistent.sock"}},
            "DATABASES": {name: {"id": db, "separator": sep, "instance": "redis"} for name, (db, sep) in dbs.items()},
            "VERSION": "1.0",
        }
    ).decode()


TEST_CONFIG = parse_database_config(database_config_text())


def open_test_dbs() -> Iterator[dict[str, redis.Redis]]:
    """Clients on DBs 10-15, flushed before and after the test."""
    clients = {
        db: redis.Redis(host=HOST, port=PORT, db=db, socket_connect_timeout=2, socket_timeout=5) for db in DB_RANGE
    }
    try:
        clients[DB_RANGE[0]].ping()
    except redis.exceptions.RedisError as exc:
        reason = f"no Redis at {HOST}:{PORT} ({exc})"
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    for client in clients.values():
        client.flushdb()
    by_name = {name: clients[db] for name, (db, _) in TEST_DBS.items()}
    yield by_name
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
