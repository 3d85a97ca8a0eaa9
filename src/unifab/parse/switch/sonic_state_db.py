"""SONiC Redis database dumps (APPL_DB, STATE_DB, COUNTERS_DB, ...) and the STATE_DB port view.

:func:`read_dump` is the generic reader the other non-CONFIG_DB parsers build on. A dump is one JSON
object whose top-level keys are the Redis keys, in either of two shapes, detected per key so mixed
files work:

* ``flat``    -- sonic-utilities / sonic-snmpagent ``tests/mock_tables/<db>.json`` and the files
  :mod:`unifab.collect.sonic_redis` writes: ``{"PORT_TABLE|Ethernet0": {field: value}}``;
* ``db-dump`` -- ``sonic-db-dump -n STATE_DB``: ``{"KEY": {"type": "hash", "value": {...}, "ttl": ...,
  "expireat": ...}}``. Only ``hash`` entries are kept; ``string``/``set``/``list``/``zset`` keys are
  skipped.

With a :class:`~unifab.errors.ParseProblems` collector a key whose body or field cannot be read costs that
key only (a problem naming it), and :func:`resolve` skips a port row, a capability or the MMU size it cannot
read the same way; without one the first problem raises :class:`~unifab.errors.ParseError`. Text that is
not JSON, or not an object, always raises.

Keys are kept whole (the table separator differs per database: ``|`` in STATE_DB, ``:`` in APPL_DB
and COUNTERS_DB). Every field value becomes a string: numbers with ``str()`` (the APPL_DB mock holds
``"speed": 100000`` as a JSON number), booleans as ``"true"``/``"false"``. An object, array or null
where a field value must be is a :class:`~unifab.errors.ParseError` whose ``key`` names the Redis key.

:func:`parse` reads a STATE_DB dump (``redis-cli -n 6`` / ``sonic-db-dump -n STATE_DB``) into the
per-port operational view (``PORT_TABLE|<port>``: oper speed, MTU, FEC, link training;
``BUFFER_MAX_PARAM_TABLE|<port>``: queue and PG counts), the MMU size and the WRED/ECN counter
capabilities, and the pluggable modules xcvrd writes (``TRANSCEIVER_INFO|<port>``: type, manufacturer, model,
serial, ``vendor_rev`` or, from older xcvrd and SFF-8472 modules, ``hardware_rev``; ``TRANSCEIVER_FIRMWARE_INFO|<port>``
or older ``TRANSCEIVER_INFO``: the CMIS module's ``active_firmware`` and ``inactive_firmware``). Their text is the
module EEPROM's ASCII, space-padded by older xcvrd (stripped here); ``N/A`` is unknown; a value with other than
printable ASCII (a garbled EEPROM read) costs that port's transceiver. :func:`parse_transceivers` reads only those
tables (what the bundle reader attaches to the switch ports).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import orjson

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import type_name
from unifab.parse._text import natural_key, parse_uint, pasted

__all__ = [
    "SHAPES",
    "TRANSCEIVER_TABLES",
    "SonicDbDump",
    "SonicPortState",
    "SonicStateDb",
    "SonicTransceiver",
    "parse",
    "parse_transceivers",
    "read_dump",
    "resolve",
]

_ARRAY = "an array"  # what these readers call a JSON list in messages
SHAPES = ("flat", "db-dump")

_ENVELOPE_KEYS = frozenset({"type", "value", "ttl", "expireat"})
_REDIS_TYPES = frozenset({"hash", "string", "list", "set", "zset", "stream"})
# STATE_DB values meaning "nothing here" (sonic-utilities mock: ``"supported_fecs": "N/A"``).
_NOT_AVAILABLE = frozenset({"", "N/A", "NA"})
TRANSCEIVER_TABLES = ("TRANSCEIVER_INFO", "TRANSCEIVER_FIRMWARE_INFO")
_EEPROM_TEXT_MAX = 64  # SFF-8472/8636/CMIS name fields are 16 ASCII bytes; xcvrd pads, never this long


@dataclass(frozen=True, slots=True)
class SonicDbDump:
    """One Redis database: ``redis key -> field -> value``, all strings."""

    shape: str
    hashes: dict[str, dict[str, str]]


@dataclass(frozen=True, slots=True)
class SonicPortState:
    """Operational state of one port as STATE_DB holds it (``None`` where the DB says nothing)."""

    port: str
    state: str | None  # "ok" once the port is created in the ASIC
    admin_status: str | None
    oper_status: str | None  # netdev_oper_status
    speed_mbps: int | None
    mtu: int | None
    fec: str | None
    supported_speeds_mbps: tuple[int, ...]
    supported_fecs: tuple[str, ...]
    link_training_status: str | None
    max_queues: int | None  # BUFFER_MAX_PARAM_TABLE
    max_priority_groups: int | None


@dataclass(frozen=True, slots=True)
class SonicTransceiver:
    """One port's module as xcvrd describes it (``None`` where STATE_DB says nothing or ``N/A``)."""

    port: str
    type: str | None  # "QSFP-DD Double Density 8X Pluggable Transceiver", "RJ45"
    manufacturer: str | None
    model: str | None  # the vendor part number
    serial: str | None
    vendor_rev: str | None
    hardware_rev: str | None  # CMIS: the module hardware revision; older xcvrd / SFF-8472: the vendor revision
    cmis_rev: str | None
    active_firmware: str | None
    inactive_firmware: str | None

    @property
    def revision(self) -> str | None:
        """The vendor revision (what ``ethtool -m`` calls ``Vendor rev``): ``vendor_rev``, else ``hardware_rev``."""
        return self.vendor_rev or self.hardware_rev


@dataclass(frozen=True, slots=True)
class SonicStateDb:
    shape: str
    ports: dict[str, SonicPortState]
    mmu_size_bytes: int | None  # BUFFER_MAX_PARAM_TABLE|global
    # "<TABLE>|<name>" -> isSupported, for QUEUE_/PORT_COUNTER_CAPABILITIES entries; entries without
    # ``isSupported`` (e.g. ``PORT_COUNTER_CAPABILITIES|LLR``) give one item per field, "<key>.<field>".
    counter_capabilities: dict[str, bool]
    transceivers: dict[str, SonicTransceiver] = dc_field(default_factory=dict)  # by port, natural order


# --- generic dump reader ---------------------------------------------------------------------------


def read_dump(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicDbDump:
    """Read any Redis-database dump in :data:`SHAPES` into ``key -> field -> value`` strings."""
    log = problems if problems is not None else ParseProblems.strict(source)
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"a JSON document ({exc.msg})", line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise ParseError(source, f"a JSON object of Redis keys, got {type_name(doc, list_name=_ARRAY)}")
    hashes: dict[str, dict[str, str]] = {}
    n_dump = 0
    for key, body in doc.items():
        if is_envelope(body):
            n_dump += 1
            if body["type"] != "hash":
                continue
            value = body["value"]
            if not isinstance(value, dict):
                log.add(f"a hash value object, got {type_name(value, list_name=_ARRAY)}", f"key {key}", key=key)
                continue
            fields = value
        elif isinstance(body, dict):
            fields = body
        else:
            log.add(f"an object of hash fields, got {type_name(body, list_name=_ARRAY)}", f"key {key}", key=key)
            continue
        with log.skipping(f"key {key}"):
            row = {name: scalar(raw, source, key, name) for name, raw in fields.items()}
            hashes.setdefault(key, {}).update(row)
    return SonicDbDump(shape="db-dump" if n_dump else "flat", hashes=hashes)


def is_envelope(body: Any) -> bool:
    """A sonic-db-dump entry: exactly ``{"type": <redis type>, "value": ..., ["ttl"], ["expireat"]}``."""
    return (
        isinstance(body, dict)
        and "value" in body
        and body.get("type") in _REDIS_TYPES
        and body.keys() <= _ENVELOPE_KEYS
    )


def scalar(raw: Any, source: str, key: str, field: str) -> str:
    """A hash field value as Redis stores it: always a string."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float):
        return str(raw)
    raise ParseError(
        source, f"field {field!r} to be a string or number, got {type_name(raw, list_name=_ARRAY)}", key=key
    )


# --- STATE_DB -------------------------------------------------------------------------------------


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicStateDb:
    """Read a STATE_DB dump and resolve the per-port view (ports in natural order)."""
    dump = read_dump(text, source, problems)
    return resolve(dump, source, problems)


def parse_transceivers(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> dict[str, SonicTransceiver]:
    """Only the ``TRANSCEIVER_INFO`` / ``TRANSCEIVER_FIRMWARE_INFO`` rows of a STATE_DB dump, by port: a bad key of
    another table is no problem of theirs (the bundle reader reads nothing else of the file)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lenient = ParseProblems(source)
    dump = read_dump(text, source, lenient)
    for problem in lenient.problems:
        if (problem.key or "").partition("|")[0] in TRANSCEIVER_TABLES:
            log.add(problem.expected, problem.skipped, key=problem.key, line=problem.line)
    return _transceivers(dump.hashes, source, log)


def _transceivers(hashes: dict[str, dict[str, str]], source: str, log: ParseProblems) -> dict[str, SonicTransceiver]:
    info: dict[str, dict[str, str]] = {}
    firmware: dict[str, dict[str, str]] = {}
    for key, fields in hashes.items():
        table, sep, name = key.partition("|")
        if sep and table == "TRANSCEIVER_INFO":
            info[name] = fields
        elif sep and table == "TRANSCEIVER_FIRMWARE_INFO":
            firmware[name] = fields
    out: dict[str, SonicTransceiver] = {}
    for name in sorted(info, key=natural_key):  # firmware of a port without TRANSCEIVER_INFO: no module known
        with log.skipping(f"the transceiver of port {name}"):
            out[name] = _transceiver(name, info[name], firmware.get(name, {}), source)
    return out


def _transceiver(name: str, info: dict[str, str], fw: dict[str, str], source: str) -> SonicTransceiver:
    def text(fields: dict[str, str], table: str, field: str) -> str | None:
        value = fields.get(field)
        if value is None or value.strip() in _NOT_AVAILABLE:
            return None
        value = value.strip()
        if len(value) > _EEPROM_TEXT_MAX or not all(" " <= c <= "~" for c in value):
            raise ParseError(
                source,
                f"field {field!r} to be the module's ASCII text (at most {_EEPROM_TEXT_MAX} printable characters), "
                f"got {value[:_EEPROM_TEXT_MAX]!r}",
                key=f"{table}|{name}",
            )
        return value

    def firmware(field: str) -> str | None:
        return text(fw, "TRANSCEIVER_FIRMWARE_INFO", field) if field in fw else text(info, "TRANSCEIVER_INFO", field)

    def get(field: str) -> str | None:
        return text(info, "TRANSCEIVER_INFO", field)

    return SonicTransceiver(
        port=name,
        type=get("type"),
        manufacturer=get("manufacturer"),
        model=get("model"),
        serial=get("serial"),
        vendor_rev=get("vendor_rev"),
        hardware_rev=get("hardware_rev"),
        cmis_rev=get("cmis_rev"),
        active_firmware=firmware("active_firmware"),
        inactive_firmware=firmware("inactive_firmware"),
    )


def resolve(dump: SonicDbDump, source: str = "<input>", problems: ParseProblems | None = None) -> SonicStateDb:
    log = problems if problems is not None else ParseProblems.strict(source)
    ports: dict[str, dict[str, str]] = {}
    buffer_max: dict[str, dict[str, str]] = {}
    mmu: int | None = None
    caps: dict[str, bool] = {}
    for key, fields in dump.hashes.items():
        table, sep, name = key.partition("|")
        if not sep:
            continue
        if table == "PORT_TABLE":
            ports[name] = fields
        elif table == "BUFFER_MAX_PARAM_TABLE":
            if name == "global":
                size = fields.get("mmu_size")
                with log.skipping("the MMU size (unknown)"):
                    mmu = None if size is None else parse_uint(size, source, "mmu_size", key=key, strip=True)
            else:
                buffer_max[name] = fields
        elif table in ("QUEUE_COUNTER_CAPABILITIES", "PORT_COUNTER_CAPABILITIES"):
            if "isSupported" in fields:
                with log.skipping(f"capability {key} (unknown)"):
                    caps[key] = _bool(fields["isSupported"], source, key, "isSupported")
            else:
                for field, value in fields.items():
                    with log.skipping(f"capability {key}.{field} (unknown)"):
                        caps[f"{key}.{field}"] = _bool(value, source, key, field)

    out: dict[str, SonicPortState] = {}
    for name in sorted(set(ports) | set(buffer_max), key=natural_key):
        f = ports.get(name, {})
        b = buffer_max.get(name, {})
        key = f"PORT_TABLE|{name}"
        with log.skipping(f"the state of port {name}"):
            out[name] = _port_state(name, f, b, source, key)
    return SonicStateDb(
        shape=dump.shape,
        ports=out,
        mmu_size_bytes=mmu,
        counter_capabilities=dict(sorted(caps.items())),
        transceivers=_transceivers(dump.hashes, source, log),
    )


def _port_state(name: str, f: dict[str, str], b: dict[str, str], source: str, key: str) -> SonicPortState:
    return SonicPortState(
        port=name,
        state=f.get("state"),
        admin_status=f.get("admin_status"),
        oper_status=f.get("netdev_oper_status", f.get("oper_status")),
        speed_mbps=_opt_uint(f.get("speed"), source, key, "speed"),
        mtu=_opt_uint(f.get("mtu"), source, key, "mtu"),
        fec=f.get("fec"),
        supported_speeds_mbps=tuple(
            parse_uint(s, source, "supported_speeds item", key=key, strip=True)
            for s in _items(f.get("supported_speeds"))
        ),
        supported_fecs=tuple(_items(f.get("supported_fecs"))),
        link_training_status=f.get("link_training_status"),
        max_queues=_opt_uint(b.get("max_queues"), source, f"BUFFER_MAX_PARAM_TABLE|{name}", "max_queues"),
        max_priority_groups=_opt_uint(
            b.get("max_priority_groups"), source, f"BUFFER_MAX_PARAM_TABLE|{name}", "max_priority_groups"
        ),
    )


def _opt_uint(value: str | None, source: str, key: str, what: str) -> int | None:
    if value is None or value.strip() in _NOT_AVAILABLE:
        return None
    return parse_uint(value, source, what, key=key, strip=True)


def _items(value: str | None) -> list[str]:
    if value is None or value.strip() in _NOT_AVAILABLE:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def _bool(value: str, source: str, key: str, field: str) -> bool:
    low = value.strip().lower()
    if low == "true":
        return True
    if low == "false":
        return False
    raise ParseError(source, f"{field} to be 'true' or 'false', got {value!r}", key=key)
