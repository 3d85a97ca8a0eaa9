"""SONiC CONFIG_DB reader: one normalized ``TABLE -> key -> field -> value`` view of any dump shape.

Three shapes are accepted, detected per top-level key so mixed files work (the db_migrator fixtures
are nested but carry a flat ``"VERSIONS|DATABASE"`` entry):

* ``nested``  -- ``config_db.json``: ``{"TABLE": {"key": {field: value}}}``;
* ``flat``    -- redis-style mock files: ``{"TABLE|key": {field: value}}``;
* ``db-dump`` -- ``sonic-db-dump -n CONFIG_DB``: ``{"TABLE|key": {"type": "hash", "value": {...},
  "ttl": ..., "expireat": ...}}``. Only ``hash`` entries carry CONFIG_DB rows; ``string``/``set``/
  ``list``/``zset`` entries (e.g. ``CONFIG_DB_INITIALIZED``) are skipped silently.

Multi-part keys stay joined with ``|`` (``"Ethernet0|3-4"``); ranges and port lists are expanded by
the consumers (:mod:`unifab.parse.switch.sonic_qos`). Every value becomes a string and every
``[TABLE|name]`` reference of schema version_3_0_1 and earlier becomes the plain ``name`` of
version_3_0_3, including inside comma-separated lists such as ``profile_list``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import type_name
from unifab.parse._text import pasted

__all__ = ["SHAPES", "SonicConfigDb", "deref", "parse"]

SHAPES = ("nested", "flat", "db-dump")

_ENVELOPE_KEYS = frozenset({"type", "value", "ttl", "expireat"})
_REDIS_TYPES = frozenset({"hash", "string", "list", "set", "zset", "stream"})
_ARRAY = "an array"  # what these readers call a JSON list in messages
_REF = re.compile(r"\[[A-Za-z0-9_]+\|([^\]]*)\]")


@dataclass(frozen=True, slots=True)
class SonicConfigDb:
    """CONFIG_DB tables with plain-string values and plain-name references."""

    shape: str
    tables: dict[str, dict[str, dict[str, str]]]


def deref(value: str) -> str:
    """``"[DSCP_TO_TC_MAP|AZURE]"`` -> ``"AZURE"``; comma lists are dereferenced item by item.

    Anything that is not entirely a bracket reference (a plain name, ``"NULL"``, ``"[fe80::1]"``) is
    returned unchanged.
    """
    if "[" not in value:
        return value
    if "," in value:
        return ",".join(_deref_one(item) for item in value.split(","))
    return _deref_one(value)


def _deref_one(item: str) -> str:
    match = _REF.fullmatch(item.strip())
    return match.group(1) if match else item


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicConfigDb:
    """Read a CONFIG_DB JSON document in any of :data:`SHAPES`.

    Raises :class:`~unifab.errors.ParseError` for text that is not JSON or not an object. A non-object where
    a table, an entry or a hash value must be an object, or a field value that is neither string, number
    nor list, costs that table or row: a problem in ``problems`` (``key`` names the offending path), or a
    ``ParseError`` when no collector is given.
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    already = len(log.problems)
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"a JSON document ({exc.msg})", line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise ParseError(source, f"a JSON object of CONFIG_DB tables, got {type_name(doc, list_name=_ARRAY)}")

    tables: dict[str, dict[str, dict[str, str]]] = {}
    n_nested = n_flat = n_dump = 0
    for top, body in doc.items():
        if _is_envelope(body):
            n_dump += 1
            if body["type"] != "hash":
                continue  # string/set/list/zset keys hold no CONFIG_DB rows
            table, _, key = top.partition("|")
            value = body["value"]
            with log.skipping(f"row {top}"):
                if not isinstance(value, dict):
                    raise ParseError(source, f"a hash value object, got {type_name(value, list_name=_ARRAY)}", key=top)
                _store(tables, table, key, value, source)
        elif "|" in top:
            n_flat += 1
            table, _, key = top.partition("|")
            with log.skipping(f"row {top}"):
                if not isinstance(body, dict):
                    raise ParseError(source, f"an object of fields, got {type_name(body, list_name=_ARRAY)}", key=top)
                _store(tables, table, key, body, source)
        else:
            n_nested += 1
            if not isinstance(body, dict):
                log.add(f"a table object of keys, got {type_name(body, list_name=_ARRAY)}", f"table {top}", key=top)
                continue
            for key, fields in body.items():
                path = f"{top}|{key}"
                with log.skipping(f"row {path}"):
                    if not isinstance(fields, dict):
                        raise ParseError(
                            source, f"an object of fields, got {type_name(fields, list_name=_ARRAY)}", key=path
                        )
                    _store(tables, top, key, fields, source)

    if not tables and len(log.problems) > already:
        raise log.problems[already].error()  # every row was bad: nothing in the file is usable
    if n_dump:
        shape = "db-dump"
    elif n_flat and not n_nested:
        shape = "flat"
    else:
        shape = "nested"
    return SonicConfigDb(shape=shape, tables=tables)


def _is_envelope(body: Any) -> bool:
    """A sonic-db-dump entry: ``{"type": <redis type>, "value": ..., ["ttl", "expireat"]}`` only.

    A flat ``BUFFER_POOL|x`` row also has a ``type`` field, but with a value such as ``ingress``
    and with other fields beside it, so the two cannot be confused.
    """
    return (
        isinstance(body, dict)
        and "value" in body
        and body.get("type") in _REDIS_TYPES
        and body.keys() <= _ENVELOPE_KEYS
    )


def _store(
    tables: dict[str, dict[str, dict[str, str]]],
    table: str,
    key: str,
    fields: dict[str, Any],
    source: str,
) -> None:
    """Add one row; a field that cannot be read raises before anything is stored (the row is skipped whole)."""
    row: dict[str, str] = {}
    for name, raw in fields.items():
        if isinstance(raw, str):
            row[name] = deref(raw) if "[" in raw else raw
        else:
            row[name] = deref(_stringify(raw, source, f"{table}|{key}", name))
    existing = tables.setdefault(table, {}).get(key)
    if existing is None:
        tables[table][key] = row
    else:
        existing.update(row)


def _stringify(raw: Any, source: str, path: str, field: str) -> str:
    """A hand-edited or YANG-typed value: numbers -> ``str()``, booleans -> ``"true"``/``"false"``,
    lists (leaf-lists in ``config_db.json``) -> the comma-joined redis form."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float):
        return str(raw)
    if isinstance(raw, list) and all(isinstance(x, str | int | float) for x in raw):
        return ",".join(x if isinstance(x, str) else str(x) for x in raw)
    raise ParseError(
        source, f"field {field!r} to be a string, number or list, got {type_name(raw, list_name=_ARRAY)}", key=path
    )
