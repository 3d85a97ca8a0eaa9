"""Live reader of a SONiC switch's Redis databases (redis-py), feeding the offline parsers.

Which Redis database holds what comes from the switch's ``/var/run/redis/sonic-db/database_config.json``
(``DATABASES: {NAME: {id, separator, instance}}``, ``INSTANCES: {name: {hostname, port,
unix_socket_path}}``), read with :func:`parse_database_config`; without one the standard ids of
sonic-buildimage ``dockers/docker-database/database_config.json.j2`` apply
(:data:`DEFAULT_DATABASE_CONFIG`: APPL_DB 0, COUNTERS_DB 2, CONFIG_DB 4, STATE_DB 6, ...).

Keys are listed with ``SCAN`` (``MATCH`` on the table prefix where one table is wanted, ``COUNT`` =
batch size) and read with pipelined ``HGETALL`` in batches of at most ``batch_size`` keys; ``KEYS`` is
never sent. Keys that are not hashes (``CONFIG_DB_INITIALIZED`` is a string) are skipped. What comes
back is the ``redis key -> field -> value`` dict the offline parsers resolve:

* CONFIG_DB -> :func:`config_db_from_hashes` builds the :class:`~unifab.parse.switch.sonic_config_db.SonicConfigDb`
  that :func:`unifab.parse.switch.sonic_config_db.parse` gives for the same rows in flat form. As
  swsscommon's ``ConfigDBConnector`` does, a ``"NULL": "NULL"`` field (the placeholder of an entry
  without fields) is dropped and a leaf-list field ``"name@": "a,b"`` is read as ``name``.
* COUNTERS_DB -> :mod:`unifab.parse.switch.sonic_counters_db`; APPL_DB ``LLDP_ENTRY_TABLE`` ->
  :mod:`unifab.parse.switch.sonic_lldp`; STATE_DB ``PORT_TABLE`` & co. ->
  :mod:`unifab.parse.switch.sonic_state_db`.

:func:`dump_to_bundle` writes ``switches/<name>/sonic/config_db.json`` (nested ``config_db.json``
shape, leaf-lists as JSON arrays), ``counters_db.json``, ``appl_db.json`` and ``state_db.json`` (flat
shape) under a bundle directory, so a live switch and a bundle go through the same parsers.

Connection refused, timeouts, authentication failures, server errors and replies that are not RESP become
:class:`SonicRedisError` naming the switch and the address; nothing else escapes from redis-py. Every
socket read is bounded by the reader's :class:`~unifab.collect.limits.Budget`: ``timeout_s`` per read,
``deadline_s`` for the reader's whole life (a server that drips bytes is cut off), ``max_bytes`` for all it
receives. :func:`dump_to_bundle` writes only what the offline parsers accept: an empty CONFIG_DB, or a
table the parsers refuse, is the switch's failure (a ``SonicRedisError`` naming the database and key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
import redis.exceptions
from redis.backoff import NoBackoff
from redis.retry import Retry

from unifab.collect.limits import DEFAULT_DEADLINE_S, DEFAULT_MAX_BYTES, Budget, BudgetExceeded, BudgetSocket
from unifab.collect.staging import write_file
from unifab.errors import ParseError, ParseProblems, UnifabError
from unifab.parse.switch import sonic_counters_db, sonic_lldp, sonic_qos, sonic_state_db
from unifab.parse.switch.sonic_config_db import SonicConfigDb, deref
from unifab.parse.switch.sonic_counters_db import SonicCounters
from unifab.parse.switch.sonic_lldp import SonicLldpNeighbor
from unifab.parse.switch.sonic_state_db import SonicStateDb

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_DATABASE_CONFIG",
    "DatabaseConfig",
    "RedisDatabase",
    "RedisInstance",
    "SonicRedis",
    "SonicRedisError",
    "config_db_from_hashes",
    "dump_to_bundle",
    "parse_database_config",
]

DEFAULT_BATCH_SIZE = 500
DEFAULT_TIMEOUT_S = 5.0
NULL_FIELD = "NULL"  # swsscommon's placeholder field of a CONFIG_DB entry that has no fields
LIST_SUFFIX = "@"  # swsscommon stores a leaf-list field "ports" as "ports@": "a,b"

Hashes = dict[str, dict[str, str]]


class SonicRedisError(UnifabError):
    """A switch's Redis could not be read: connection refused, timeout, authentication, server error.

    ``kind`` is set where the reason is not the connection's: ``"unsupported"`` for content the parsers
    refuse (or bytes that are not RESP), ``"error"`` for a reply over the byte cap.
    """

    def __init__(self, switch: str, address: str, reason: str, kind: str | None = None) -> None:
        self.switch = switch
        self.address = address
        self.reason = reason
        self.kind = kind
        super().__init__(f"switch {switch}: redis at {address}: {reason}")


# --- database_config.json --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RedisInstance:
    name: str
    hostname: str
    port: int
    unix_socket_path: str | None


@dataclass(frozen=True, slots=True)
class RedisDatabase:
    name: str
    id: int
    separator: str
    instance: str


@dataclass(frozen=True, slots=True)
class DatabaseConfig:
    instances: dict[str, RedisInstance]
    databases: dict[str, RedisDatabase]


# sonic-buildimage dockers/docker-database/database_config.json.j2 (reference §1.1).
_DEFAULT_DBS = (
    ("APPL_DB", 0, ":"),
    ("ASIC_DB", 1, ":"),
    ("COUNTERS_DB", 2, ":"),
    ("LOGLEVEL_DB", 3, ":"),
    ("CONFIG_DB", 4, "|"),
    ("PFC_WD_DB", 5, ":"),
    ("FLEX_COUNTER_DB", 5, ":"),
    ("STATE_DB", 6, "|"),
    ("SNMP_OVERLAY_DB", 7, "|"),
    ("RESTAPI_DB", 8, "|"),
    ("GB_ASIC_DB", 9, ":"),
    ("GB_COUNTERS_DB", 10, ":"),
    ("CHASSIS_APP_DB", 12, "|"),
    ("CHASSIS_STATE_DB", 13, "|"),
    ("APPL_STATE_DB", 14, ":"),
)
DEFAULT_DATABASE_CONFIG = DatabaseConfig(
    instances={"redis": RedisInstance("redis", "127.0.0.1", 6379, "/var/run/redis/redis.sock")},
    databases={name: RedisDatabase(name, db_id, sep, "redis") for name, db_id, sep in _DEFAULT_DBS},
)


def parse_database_config(text: str | bytes, source: str = "<input>") -> DatabaseConfig:
    """Read ``database_config.json``; a ``ParseError`` names the JSON key that is wrong."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"a JSON document ({exc.msg})", line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise ParseError(source, "a JSON object with INSTANCES and DATABASES")
    raw_instances = doc.get("INSTANCES")
    raw_dbs = doc.get("DATABASES")
    if not isinstance(raw_instances, dict) or not raw_instances:
        raise ParseError(source, "an object of redis instances", key="INSTANCES")
    if not isinstance(raw_dbs, dict) or not raw_dbs:
        raise ParseError(source, "an object of databases", key="DATABASES")
    instances: dict[str, RedisInstance] = {}
    for name, body in raw_instances.items():
        path = f"INSTANCES.{name}"
        if not isinstance(body, dict):
            raise ParseError(source, "an object with hostname and port", key=path)
        hostname, port, sock = body.get("hostname"), body.get("port"), body.get("unix_socket_path")
        if not isinstance(hostname, str) or not hostname:
            raise ParseError(source, "a hostname string", key=f"{path}.hostname")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ParseError(source, "a TCP port number", key=f"{path}.port")
        if sock is not None and not isinstance(sock, str):
            raise ParseError(source, "a socket path string", key=f"{path}.unix_socket_path")
        instances[name] = RedisInstance(name, hostname, port, sock)
    databases: dict[str, RedisDatabase] = {}
    for name, body in raw_dbs.items():
        path = f"DATABASES.{name}"
        if not isinstance(body, dict):
            raise ParseError(source, "an object with id, separator and instance", key=path)
        db_id, sep, inst = body.get("id"), body.get("separator"), body.get("instance")
        if not isinstance(db_id, int) or isinstance(db_id, bool) or db_id < 0:
            raise ParseError(source, "a non-negative database number", key=f"{path}.id")
        if not isinstance(sep, str) or len(sep) != 1:
            raise ParseError(source, "a one-character key separator such as '|' or ':'", key=f"{path}.separator")
        if not isinstance(inst, str) or inst not in instances:
            raise ParseError(source, f"an instance named in INSTANCES ({', '.join(instances)})", key=f"{path}.instance")
        databases[name] = RedisDatabase(name, db_id, sep, inst)
    return DatabaseConfig(instances=instances, databases=databases)


# --- hashes -> records -----------------------------------------------------------------------------


def config_db_from_hashes(hashes: Mapping[str, Mapping[str, str]], separator: str = "|") -> SonicConfigDb:
    """The :class:`SonicConfigDb` of CONFIG_DB rows read from Redis (``"TABLE|key" -> fields``).

    Equal to ``sonic_config_db.parse`` of the same rows written as a flat JSON file: references are
    dereferenced, multi-part keys stay joined. Keys without the separator hold no table row and are
    skipped; the ``NULL`` placeholder field is dropped and ``field@`` leaf-lists are named ``field``.
    """
    tables: dict[str, dict[str, dict[str, str]]] = {}
    for redis_key, raw in hashes.items():
        table, sep, key = redis_key.partition(separator)
        if not sep:
            continue
        row: dict[str, str] = {}
        for name, value in _typed_fields(raw):
            row[name] = deref(value) if "[" in value else value
        existing = tables.setdefault(table, {}).get(key)
        if existing is None:
            tables[table][key] = row
        else:
            existing.update(row)
    return SonicConfigDb(shape="flat", tables=tables)


def _typed_fields(raw: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    for name, value in raw.items():
        if name == NULL_FIELD and value == NULL_FIELD:
            continue
        yield (name[:-1] if name.endswith(LIST_SUFFIX) and len(name) > 1 else name), value


def config_db_document(hashes: Mapping[str, Mapping[str, str]], separator: str = "|") -> dict[str, Any]:
    """The nested ``config_db.json`` document of CONFIG_DB rows (what ``sonic-cfggen -d --print-data``
    prints): leaf-list fields as JSON arrays, raw (not dereferenced) values, sorted."""
    doc: dict[str, dict[str, dict[str, Any]]] = {}
    for redis_key in sorted(hashes):
        table, sep, key = redis_key.partition(separator)
        if not sep:
            continue
        row: dict[str, Any] = doc.setdefault(table, {}).setdefault(key, {})
        for name, value in hashes[redis_key].items():
            if name == NULL_FIELD and value == NULL_FIELD:
                continue
            if name.endswith(LIST_SUFFIX) and len(name) > 1:
                row[name[:-1]] = value.split(",") if value else []
            else:
                row[name] = value
    return doc


# --- the reader ------------------------------------------------------------------------------------


@dataclass
class SonicRedis:
    """Reads one switch's databases. ``host``/``port`` replace every instance's address (the switch's
    management address, a tunnel); otherwise the database config's own address is used.

    Use as a context manager (or call :meth:`close`) to release the connections.
    """

    switch: str
    host: str | None = None
    port: int | None = None
    database_config: DatabaseConfig = DEFAULT_DATABASE_CONFIG
    username: str | None = None
    password: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    batch_size: int = DEFAULT_BATCH_SIZE
    deadline_s: float | None = DEFAULT_DEADLINE_S  # the reader's whole life, every database
    max_bytes: int | None = DEFAULT_MAX_BYTES  # all it may receive
    _clients: dict[tuple[str, int, int], redis.Redis] = field(default_factory=dict, init=False, repr=False)
    budget: Budget = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.budget = Budget(self.deadline_s, self.max_bytes)

    def __enter__(self) -> SonicRedis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        self.budget.close()

    # -- addressing ---------------------------------------------------------------------------------

    def database(self, name: str) -> RedisDatabase:
        db = self.database_config.databases.get(name)
        if db is None:
            raise SonicRedisError(self.switch, "-", f"{name} is not in the database config")
        return db

    def address(self, name: str) -> str:
        """``host:port/db`` of a database, as error messages name it."""
        db = self.database(name)
        host, port = self._endpoint(db)
        return f"{host}:{port}/{db.id}"

    def _endpoint(self, db: RedisDatabase) -> tuple[str, int]:
        inst = self.database_config.instances[db.instance]
        return (self.host or inst.hostname, self.port or inst.port)

    def _client(self, db: RedisDatabase) -> redis.Redis:
        host, port = self._endpoint(db)
        ck = (host, port, db.id)
        client = self._clients.get(ck)
        if client is None:
            pool = redis.ConnectionPool(
                connection_class=_BudgetConnection,
                budget=self.budget,
                host=host,
                port=port,
                db=db.id,
                username=self.username,
                password=self.password,
                socket_timeout=self.timeout_s,
                socket_connect_timeout=self.timeout_s,
                decode_responses=False,
                retry=Retry(NoBackoff(), 0),  # fail fast: the caller decides whether to try again
            )
            client = redis.Redis(connection_pool=pool)
            client.auto_close_connection_pool = True  # close() releases the pool we made
            self._clients[ck] = client
        return client

    # -- raw hashes ---------------------------------------------------------------------------------

    def hashes(self, name: str, match: str = "*", keep: Callable[[str], bool] | None = None) -> Hashes:
        """Every hash of database ``name`` whose key matches the SCAN ``match`` pattern (and ``keep``)."""
        db = self.database(name)
        try:
            self.budget.check()
            return self._scan_hashes(self._client(db), match, keep)
        except BudgetExceeded as exc:
            kind = "unreachable" if exc.deadline else "error"
            raise SonicRedisError(self.switch, self.address(name), exc.reason, kind) from None
        except redis.exceptions.AuthenticationError as exc:
            raise SonicRedisError(self.switch, self.address(name), f"authentication failed: {exc}") from None
        except (redis.exceptions.TimeoutError, redis.exceptions.ConnectionError) as exc:
            tripped = self.budget.tripped
            if tripped is not None:
                kind = "unreachable" if tripped.deadline else "error"
                raise SonicRedisError(self.switch, self.address(name), tripped.reason, kind) from None
            if isinstance(exc, redis.exceptions.TimeoutError):
                reason = f"timed out after {self.timeout_s} s: {exc}"
            else:
                reason = f"cannot connect: {exc}"
            raise SonicRedisError(self.switch, self.address(name), reason) from None
        except (
            redis.exceptions.InvalidResponse,
            ValueError,
            IndexError,
            TypeError,
            AttributeError,
            UnicodeError,
        ) as exc:
            # what redis-py's RESP parser raises on bytes that are not RESP: InvalidResponse from redis-py 8, a
            # bare ValueError before it (b"$x\r\n" is int("x"))
            reason = f"answered something that is not a Redis reply ({type(exc).__name__}: {exc})"
            raise SonicRedisError(self.switch, self.address(name), reason, "unsupported") from None
        except (redis.exceptions.RedisError, OSError) as exc:
            raise SonicRedisError(self.switch, self.address(name), f"{type(exc).__name__}: {exc}") from None

    def _scan_hashes(self, client: redis.Redis, match: str, keep: Callable[[str], bool] | None) -> Hashes:
        out: Hashes = {}
        pending: list[bytes] = []
        cursor = 0
        while True:
            cursor, keys = client.scan(cursor=cursor, match=match, count=self.batch_size)
            for raw in keys:
                if keep is None or keep(_text(raw)):
                    pending.append(raw if isinstance(raw, bytes) else raw.encode())
            while len(pending) >= self.batch_size:
                self._fetch(client, pending[: self.batch_size], out)
                del pending[: self.batch_size]
            if cursor == 0:
                break
        if pending:
            self._fetch(client, pending, out)
        return dict(sorted(out.items()))

    def _fetch(self, client: redis.Redis, keys: list[bytes], out: Hashes) -> None:
        pipe = client.pipeline(transaction=False)
        for key in keys:
            pipe.hgetall(key)
        for key, result in zip(keys, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(result, redis.exceptions.ResponseError) and str(result).startswith("WRONGTYPE"):
                continue  # a string/set/list key: no table row
            if isinstance(result, Exception):
                raise result
            if result:  # empty: the key expired or was deleted between SCAN and HGETALL
                out[_text(key)] = {_text(k): _text(v) for k, v in result.items()}

    def config_db_hashes(self) -> Hashes:
        return self.hashes("CONFIG_DB")

    def counters_db_hashes(self) -> Hashes:
        prefixes = sonic_counters_db.KEY_PREFIXES
        return self.hashes("COUNTERS_DB", keep=lambda key: key.startswith(prefixes))

    def appl_db_hashes(self) -> Hashes:
        """APPL_DB ``LLDP_ENTRY_TABLE`` entries (APPL_DB also holds routes: only that table is scanned)."""
        sep = self.database("APPL_DB").separator
        return self.hashes("APPL_DB", match=f"{sonic_lldp.TABLE}{sep}*")

    def state_db_hashes(self) -> Hashes:
        sep = self.database("STATE_DB").separator
        out: Hashes = {}
        for table in STATE_TABLES:
            out.update(self.hashes("STATE_DB", match=f"{table}{sep}*"))
        return dict(sorted(out.items()))

    # -- records -----------------------------------------------------------------------------------

    def config_db(self) -> SonicConfigDb:
        return config_db_from_hashes(self.config_db_hashes(), self.database("CONFIG_DB").separator)

    # With ``problems`` (a ParseProblems collector), what the parser cannot read costs that object only.

    def counters(self, problems: ParseProblems | None = None) -> SonicCounters:
        return sonic_counters_db.resolve(self.counters_db_hashes(), self._label("COUNTERS_DB"), problems=problems)

    def lldp_neighbors(self, problems: ParseProblems | None = None) -> tuple[SonicLldpNeighbor, ...]:
        return sonic_lldp.resolve(self.appl_db_hashes(), self._label("APPL_DB"), problems)

    def state(self, problems: ParseProblems | None = None) -> SonicStateDb:
        dump = sonic_state_db.SonicDbDump(shape="flat", hashes=self.state_db_hashes())
        return sonic_state_db.resolve(dump, self._label("STATE_DB"), problems)

    def _label(self, name: str) -> str:
        return f"redis://{self.address(name)} ({self.switch} {name})"


# STATE_DB tables sonic_state_db reads.
STATE_TABLES = (
    "PORT_TABLE",
    "BUFFER_MAX_PARAM_TABLE",
    "QUEUE_COUNTER_CAPABILITIES",
    "PORT_COUNTER_CAPABILITIES",
    *sonic_state_db.TRANSCEIVER_TABLES,
)


class _BudgetConnection(redis.Connection):
    """A redis-py TCP connection whose socket is a :class:`BudgetSocket`: every read and write is bounded by
    the reader's budget (time left, bytes received), whatever the server sends."""

    def __init__(self, *, budget: Budget, **kwargs: Any) -> None:
        self._budget = budget
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]

    def _connect(self) -> Any:
        """Connect under the budget: the name looked up within the deadline (:meth:`Budget.resolve`), then
        redis-py's own connect to the address found, with at most the time that is left."""
        nominal, name = self.socket_connect_timeout, self.host
        self.host = self._budget.resolve(name, self.port)
        self.socket_connect_timeout = self._budget.timeout(nominal)
        try:
            sock = super()._connect()  # type: ignore[no-untyped-call]
        finally:
            self.socket_connect_timeout, self.host = nominal, name
        return BudgetSocket(sock, self._budget)


def dump_to_bundle(reader: SonicRedis, out_dir: Path, name: str | None = None) -> Path:
    """Write the switch's databases as bundle files under ``out_dir/switches/<name>/sonic/``.

    ``name`` defaults to ``reader.switch``. Returns the ``sonic`` directory. Files are written only
    after every database was read, so a failed read leaves no partial switch behind.
    """
    switch = name or reader.switch
    config = config_db_document(reader.config_db_hashes(), reader.database("CONFIG_DB").separator)
    if not config:
        raise SonicRedisError(
            reader.switch,
            reader.address("CONFIG_DB"),
            "CONFIG_DB holds no table rows: there is nothing to check",
            "unsupported",
        )
    files = {
        "config_db.json": config,
        "counters_db.json": reader.counters_db_hashes(),
        "appl_db.json": reader.appl_db_hashes(),
        "state_db.json": reader.state_db_hashes(),
    }
    data = {
        name: orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        for name, doc in files.items()
    }
    for filename, (db, parser) in _VALIDATE.items():
        try:  # a bad row is the reader's INPUT-PARTIAL, not a failed collect: only a file with nothing usable fails
            parser(data[filename], f"{filename} ({db})", ParseProblems(f"{filename} ({db})"))
        except ParseError as exc:
            reason = f"{db} content not understood: {exc}"
            raise SonicRedisError(reader.switch, reader.address(db), reason, "unsupported") from None
    sonic_dir = out_dir / "switches" / switch / "sonic"
    sonic_dir.mkdir(parents=True, exist_ok=True)
    for filename, body in data.items():
        write_file(sonic_dir / filename, body)
    return sonic_dir


# Each file dump_to_bundle writes, its database, and the parser that must accept it (what `check` reads).
_VALIDATE: dict[str, tuple[str, Callable[[bytes, str, ParseProblems], object]]] = {
    "config_db.json": ("CONFIG_DB", sonic_qos.parse),
    "counters_db.json": ("COUNTERS_DB", sonic_counters_db.parse),
    "appl_db.json": ("APPL_DB", sonic_lldp.parse),
    "state_db.json": ("STATE_DB", sonic_state_db.parse),
}


def _text(raw: bytes | str) -> str:
    return raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")
