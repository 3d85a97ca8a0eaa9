"""NetBox / Nautobot ``GET /api/dcim/cables/`` JSON: the source of truth's planned cabling.

Accepts a list page (``{"count", "next", "previous", "results": [...]}``), a bare list of cables, or
one cable. Two shapes of a cable's ends exist:

* NetBox ≥ 3.3: ``a_terminations`` / ``b_terminations``, lists of
  ``{"object_type": "dcim.interface", "object_id": 1, "object": {"name": "eth0", "device": {"name": ...}}}``.
* NetBox ≤ 3.2 and Nautobot: ``termination_a_type`` + ``termination_a`` (``{"name", "device": {"name"}}``)
  and the same for ``b``.

An end counts when it names a device and the device's component (interface, console or power port,
front/rear port); circuit terminations and power feeds have no device and are skipped, with the reason.
When both sides list several terminations (an MPO trunk, NetBox ≥ 3.3) they pair in order; unequal
counts (a breakout drawn as 1:N) cannot be read as point-to-point cables and are skipped. Cables whose
status is ``decommissioning`` are not part of the plan. ``length`` is converted to metres.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from unifab.errors import ParseError
from unifab.parse._text import pasted
from unifab.parse.plan.cabling import PlannedCable

__all__ = ["CablesPage", "NetboxCable", "Skipped", "Termination", "parse", "planned"]

# Metres per unit of NetBox's CableLengthUnitChoices.
_METRES = {"m": 1.0, "cm": 0.01, "km": 1000.0, "ft": 0.3048, "in": 0.0254, "mi": 1609.344}


@dataclass(frozen=True, slots=True)
class Termination:
    object_type: str | None  # "dcim.interface", "dcim.consoleport", ...
    device: str | None
    name: str | None  # the component's name on the device ("Ethernet0", "Console")


@dataclass(frozen=True, slots=True)
class NetboxCable:
    id: str
    a: tuple[Termination, ...]
    b: tuple[Termination, ...]
    status: str | None  # "connected" | "planned" | "decommissioning"; legacy pages say True for connected
    label: str | None
    length_m: float | None


@dataclass(frozen=True, slots=True)
class CablesPage:
    count: int | None
    next: str | None
    cables: tuple[NetboxCable, ...]


@dataclass(frozen=True, slots=True)
class Skipped:
    cable: str
    reason: str


@pasted
def parse(text: str, source: str = "<input>") -> CablesPage:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(source, f"expected JSON ({exc.msg})", line=exc.lineno) from None
    except RecursionError:
        raise ParseError(source, "expected JSON nested less deeply", line=1) from None
    if isinstance(doc, dict) and "results" in doc:
        results, key = doc["results"], "results"
        count = doc.get("count")
        nxt = doc.get("next")
        if not isinstance(results, list):
            raise ParseError(source, "expected 'results' to be a list of cables", key="results")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise ParseError(source, "expected 'count' to be an integer", key="count")
        if nxt is not None and not isinstance(nxt, str):
            raise ParseError(source, "expected 'next' to be a URL or null", key="next")
        return CablesPage(count, nxt, tuple(_cable(c, f"{key}[{i}]", source) for i, c in enumerate(results)))
    if isinstance(doc, list):
        return CablesPage(None, None, tuple(_cable(c, f"[{i}]", source) for i, c in enumerate(doc)))
    if isinstance(doc, dict) and "id" in doc:
        return CablesPage(None, None, (_cable(doc, "", source),))
    raise ParseError(source, "expected a cables page {'results': [...]}, a list of cables or one cable", line=1)


def _cable(raw: Any, key: str, source: str) -> NetboxCable:
    if not isinstance(raw, dict):
        raise ParseError(source, "expected a cable object", key=key or None)
    if "id" not in raw or not isinstance(raw["id"], (int, str)) or isinstance(raw["id"], bool):
        raise ParseError(source, "expected the cable's 'id' (integer or UUID)", key=f"{key}.id".lstrip("."))
    if "a_terminations" in raw or "b_terminations" in raw:
        a = _terminations(raw.get("a_terminations"), f"{key}.a_terminations", source)
        b = _terminations(raw.get("b_terminations"), f"{key}.b_terminations", source)
    else:
        a = _legacy(raw, "a", key, source)
        b = _legacy(raw, "b", key, source)
    return NetboxCable(str(raw["id"]), a, b, _choice(raw.get("status")), _text(raw.get("label")), _length(raw))


def _terminations(raw: Any, key: str, source: str) -> tuple[Termination, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ParseError(source, "expected a list of terminations", key=key.lstrip("."))
    out = []
    for i, term in enumerate(raw):
        if not isinstance(term, dict):
            raise ParseError(source, "expected a termination object", key=f"{key}[{i}]".lstrip("."))
        obj = term.get("object")
        out.append(_end(_text(term.get("object_type")), obj if isinstance(obj, dict) else None))
    return tuple(out)


def _legacy(raw: dict[str, Any], side: str, key: str, source: str) -> tuple[Termination, ...]:
    obj = raw.get(f"termination_{side}")
    if obj is None:
        return ()
    if not isinstance(obj, dict):
        raise ParseError(source, "expected a termination object", key=f"{key}.termination_{side}".lstrip("."))
    return (_end(_text(raw.get(f"termination_{side}_type")), obj),)


def _end(object_type: str | None, obj: dict[str, Any] | None) -> Termination:
    if obj is None:
        return Termination(object_type, None, None)
    device = obj.get("device")
    name = device.get("name") if isinstance(device, dict) else None
    return Termination(object_type, _text(name), _text(obj.get("name")))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _choice(value: Any) -> str | None:
    """A choice field: ``"connected"`` (3.x write form), ``{"value": ..., "label": ...}``, legacy ``True``."""
    if isinstance(value, dict):
        value = value.get("value")
    if value is True:
        return "connected"
    if value is False:
        return "planned"
    return _text(value)


def _length(raw: dict[str, Any]) -> float | None:
    length = raw.get("length")
    if not isinstance(length, (int, float)) or isinstance(length, bool):
        return None
    unit = _choice(raw.get("length_unit")) or "m"
    factor = _METRES.get(unit)
    return None if factor is None else round(float(length) * factor, 3)


def planned(cables: tuple[NetboxCable, ...]) -> tuple[tuple[PlannedCable, ...], tuple[Skipped, ...]]:
    """Point-to-point planned cables, and the cables that cannot be one (with why)."""
    out: list[PlannedCable] = []
    skipped: list[Skipped] = []
    for cable in cables:
        if cable.status == "decommissioning":
            skipped.append(Skipped(cable.id, "status decommissioning: not part of the plan"))
            continue
        if not cable.a or not cable.b:
            skipped.append(Skipped(cable.id, "one side has no termination"))
            continue
        if len(cable.a) != len(cable.b):
            skipped.append(Skipped(cable.id, f"{len(cable.a)}:{len(cable.b)} terminations (a breakout), not 1:1"))
            continue
        ends = list(zip(cable.a, cable.b, strict=True))
        bad = next((t for pair in ends for t in pair if t.device is None or t.name is None), None)
        if bad is not None:
            what = bad.object_type or "termination"
            skipped.append(Skipped(cable.id, f"a {what} end without a device and component name"))
            continue
        for a, b in ends:
            assert a.device and a.name and b.device and b.name
            out.append(PlannedCable(a.device, a.name, b.device, b.name, cable.length_m))
    return tuple(out), tuple(skipped)
