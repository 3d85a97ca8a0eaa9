"""Helpers shared by the JSON (and YAML) readers: naming a value's type, key paths, typed access.

Every error is a :class:`~unifab.errors.ParseError` whose ``key`` is the path of the bad value
(``interfaces.Ethernet1.mtu``, ``lldp[0]``; ``<root>`` for the document itself).
"""

from __future__ import annotations

import orjson

from unifab.errors import ParseError

__all__ = ["child", "json_list", "json_object", "json_string", "load_json", "type_name"]


def type_name(value: object, *, list_name: str = "a list") -> str:
    """How a decoded JSON value is named in error messages: ``null``, ``a boolean``, ``a number``,
    ``a string``, ``a list`` (``list_name``: SONiC's readers say ``an array``) or ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return list_name
    return "an object"


def child(path: str, key: str | int) -> str:
    """``path.key``, or ``path[i]`` for a list index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def load_json(text: str | bytes, source: str) -> object:
    """Decode JSON, raising :class:`ParseError` with the line of the syntax error."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"expected JSON: {exc.msg}", line=exc.lineno) from None


def json_object(value: object, path: str, source: str) -> dict[str, object]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise ParseError(source, f"expected an object, got {type_name(value)}", key=path or "<root>")
    return value


def json_list(value: object, path: str, source: str) -> list[object]:
    """``value`` if it is a JSON list."""
    if not isinstance(value, list):
        raise ParseError(source, f"expected a list, got {type_name(value)}", key=path or "<root>")
    return value


def json_string(value: object, path: str, source: str) -> str:
    """``value`` if it is a JSON string."""
    if not isinstance(value, str):
        raise ParseError(source, f"expected a string, got {type_name(value)}", key=path)
    return value
