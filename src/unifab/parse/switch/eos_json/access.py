"""Typed access to a decoded eAPI reply: every error is a :class:`~unifab.errors.ParseError` whose
``key`` is the JSON path of the bad value."""

from __future__ import annotations

import orjson

from unifab.errors import ParseError
from unifab.parse._json import child, type_name
from unifab.parse._text import blank_prompts, decode_utf8

__all__ = [
    "as_int",
    "as_list",
    "as_object",
    "first_result",
    "load_reply",
    "member",
    "numbered",
    "opt_float",
    "opt_int",
    "opt_str",
]


def as_object(value: object, path: str, source: str, what: str = "an object") -> dict[str, object]:
    """``value`` if it is a JSON object; otherwise ``what``, got its type, at ``path``."""
    if not isinstance(value, dict):
        raise ParseError(source, f"{what}, got {type_name(value)}", key=path or "<root>")
    return value


def as_list(value: object, path: str, source: str) -> list[object]:
    """``value`` if it is a JSON list."""
    if not isinstance(value, list):
        raise ParseError(source, f"a list, got {type_name(value)}", key=path)
    return value


def opt_str(obj: dict[str, object], key: str, path: str, source: str) -> str | None:
    """``obj[key]`` as a string, ``None`` when absent, null or empty."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError(source, f"a string, got {type_name(value)}", key=child(path, key))
    return value or None


def as_int(value: object, path: str, source: str) -> int:
    """``value`` as an integer (an integral float is accepted)."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        raise ParseError(source, f"an integer, got {type_name(value)}", key=path)
    return value


def opt_int(obj: dict[str, object], key: str, path: str, source: str) -> int | None:
    """``obj[key]`` as an integer, ``None`` when absent or null."""
    value = obj.get(key)
    return None if value is None else as_int(value, child(path, key), source)


def opt_float(obj: dict[str, object], key: str, path: str, source: str) -> float | None:
    """``obj[key]`` as a float, ``None`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(source, f"a number, got {type_name(value)}", key=child(path, key))
    return float(value)


def numbered(key: str, prefix: str, path: str, source: str) -> int:
    """``"TC3"`` -> 3 (``prefix="TC"``); ``"3"`` -> 3 (``prefix=""``)."""
    digits = key[len(prefix) :] if key.startswith(prefix) else ""
    if not (digits.isdigit() and digits.isascii() and len(digits) <= 6):
        raise ParseError(source, f"a key such as '{prefix}0', got {key!r}", key=child(path, key))
    return int(digits)


def load_reply(text: str | bytes, source: str) -> object:
    """Decode the JSON text of a reply.

    A ``show ... | json`` pasted from a session carries its prompt lines (``leaf1#show interfaces | json``
    before, a bare ``leaf1#`` after; :func:`unifab.parse._text.blank_prompts`): they are dropped, line
    numbers kept, when the text is not JSON as it stands.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        error = ParseError(source, f"a JSON document ({exc.msg})", line=exc.lineno)
    try:
        raw = decode_utf8(text, source)
    except ParseError:
        raise error from None
    cleaned = blank_prompts(raw)
    if cleaned != raw and cleaned.strip():
        try:
            return orjson.loads(cleaned)
        except orjson.JSONDecodeError:
            pass
    raise error from None


def first_result(doc: object, source: str) -> tuple[dict[str, object], str]:
    """A bare eAPI result, or the first result of a JSON-RPC response, and its key path."""
    root = as_object(doc, "", source, "a JSON object (an eAPI result or JSON-RPC response)")
    if "jsonrpc" not in root:
        return root, ""
    error = root.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {}
        raise ParseError(
            source,
            f"a JSON-RPC result, got error {err.get('code')!r}: {err.get('message')!r}",
            key="error",
        )
    results = as_list(root.get("result"), "result", source)
    if not results:
        raise ParseError(source, "at least one result", key="result")
    return as_object(results[0], "result[0]", source), "result[0]"


def member(obj: dict[str, object], key: str, path: str, source: str, command: str) -> dict[str, object]:
    """``obj[key]``, an object that must be there (the ``command`` reply names it)."""
    if key not in obj:
        raise ParseError(source, f"'{key}' (the {command!r} reply)", key=path or "<root>")
    return as_object(obj[key], child(path, key), source)
