"""Reading the NVUE YAML document: ``[{header}, {set}, ...]``, ``{header, set}`` or the bare ``set``
object, with string keys, merged ``set`` items and a bound on what YAML aliases expand to."""

from __future__ import annotations

from typing import Any

from unifab.errors import ParseError
from unifab.errors import load_yaml as load_bounded_yaml
from unifab.parse._text import decode_utf8

__all__ = ["copy_tree", "join", "load_yaml", "merge", "split_document"]


def load_yaml(text: str | bytes, source: str) -> Any:
    """The YAML document (safe loader only); empty input and YAML errors are a ParseError."""
    text = decode_utf8(text, source)
    if not text.strip():
        raise ParseError(source, "an NVUE configuration (nv config show -o yaml), got empty input")
    return load_bounded_yaml(text, source)  # the safe loader, bounded (YamlError is a ParseError)


def split_document(doc: Any, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``[{header}, {set}, ...]`` or ``{header, set}`` or the bare ``set`` object."""
    if isinstance(doc, dict) and doc.keys() and doc.keys() <= {"header", "set"}:
        doc = [{k: v} for k, v in doc.items()]
    if isinstance(doc, dict):
        return {}, _str_keys(doc, source, "")
    if not isinstance(doc, list) or not doc:
        raise ParseError(source, "a list of '- header:' / '- set:' items or a configuration object")
    header: dict[str, Any] = {}
    body: dict[str, Any] = {}
    for i, item in enumerate(doc):
        if not isinstance(item, dict) or len(item) != 1:
            raise ParseError(source, "a one-key item '- header: ...' or '- set: ...'", key=f"[{i}]")
        ((name, value),) = item.items()
        if name == "header":
            if not isinstance(value, dict):
                raise ParseError(source, "a header object", key=f"[{i}].header")
            header = _str_keys(value, source, f"[{i}].header")
        elif name == "set":
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ParseError(source, "a configuration object", key=f"[{i}].set")
            merge(body, _str_keys(value, source, f"[{i}].set"))
        else:
            raise ParseError(source, f"'header' or 'set', got {name!r}", key=f"[{i}]")
    return header, body


_MAX_DEPTH = 64  # NVUE's tree is ~10 deep; deeper means a recursive YAML alias
_MAX_NODES = 1_000_000  # bounds what shared YAML aliases can expand to


def _str_keys(
    obj: dict[Any, Any], source: str, path: str, budget: list[int] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Keys as strings (YAML reads ``26:`` as an int), recursively; booleans/None as keys are rejected.

    A copy: YAML aliases become separate subtrees, within a depth and size budget (a self-referencing
    alias, or a "billion laughs" document, is a ParseError rather than a hang or a RecursionError).
    """
    if budget is None:
        budget = [_MAX_NODES]
    if depth >= _MAX_DEPTH:
        raise ParseError(
            source, f"a configuration at most {_MAX_DEPTH} levels deep (a recursive YAML alias?)", key=path
        )
    budget[0] -= len(obj) + 1
    if budget[0] < 0:
        raise ParseError(source, f"a configuration of at most {_MAX_NODES} entries once YAML aliases are expanded")
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if isinstance(key, bool) or key is None or not isinstance(key, str | int):
            raise ParseError(source, f"a name or number as key, got {key!r}", key=path or None)
        name = str(key)
        out[name] = _str_keys(value, source, join(path, name), budget, depth + 1) if isinstance(value, dict) else value
    return out


def merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    """``more`` merged into ``into`` in place, objects key by key (later values win)."""
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        elif isinstance(value, dict):
            into[key] = copy_tree(value)
        else:
            into[key] = value


def copy_tree(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of the nested objects of ``obj`` (leaves shared)."""
    return {k: copy_tree(v) if isinstance(v, dict) else v for k, v in obj.items()}


def join(path: str, key: str) -> str:
    """``path.key`` (``key`` at the top)."""
    return f"{path}.{key}" if path else key
