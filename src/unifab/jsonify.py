"""Turn typed records into plain JSON values, with stable key order and string keys."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["JsonValue", "dumps", "to_jsonable"]

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def to_jsonable(value: Any) -> JsonValue:
    """Convert dataclasses, enums, mappings (int keys become strings), sets and tuples to JSON values.

    Sets are emitted sorted so output is deterministic; dataclass fields keep declaration order.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return [to_jsonable(v) for v in sorted(value)]
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


def dumps(value: Any, *, indent: bool = True) -> str:
    """Serialize any record to a JSON string (2-space indent by default)."""
    option = orjson.OPT_INDENT_2 if indent else 0
    return orjson.dumps(to_jsonable(value), option=option).decode()
