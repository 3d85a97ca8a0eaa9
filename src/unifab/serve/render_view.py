"""``POST /api/v1/render``: an intent rendered for the live fabric's devices, as ``unifab render`` does.

The library's renderer (:func:`unifab.api.render_intent`) diffs each device against its current files
on disk, so the server writes its current bundle (the parts uploads delivered) to a private temporary
directory, renders, and keeps the :class:`~unifab.api.FabricPlan` for that intent and that state of the
fabric (a few of them, newest first): paging through the devices of one render costs one render.

A device row is the one ``unifab render --format json`` prints (kind, device, os, files, changed_lines, notes,
error), with the rendered files' text (``outputs``) and the unified diff (``diff``) added.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path, PurePosixPath
from typing import Any

from unifab.api import Fabric as FabricModel
from unifab.api import FabricPlan, IntentError, UnifabError, parse_intent, render_intent
from unifab.serve.store import decode_cursor, encode_cursor

__all__ = ["MAX_INTENT_BYTES", "RenderCache", "RenderError", "changed_lines", "device_rows"]

MAX_INTENT_BYTES = 256 * 1024
KEEP = 4


class RenderError(Exception):
    """An intent that cannot be rendered: ``problems`` holds one located line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def changed_lines(diff: str) -> int:
    """Lines a diff adds or removes (what ``unifab render`` counts)."""
    return sum(1 for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


class RenderCache:
    """The last few plans, by (fabric state, intent digest)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: OrderedDict[tuple[tuple[int, ...], str], FabricPlan] = OrderedDict()

    def plan(
        self, state: tuple[int, ...], intent_text: str, fabric: FabricModel, parts: dict[str, dict[str, bytes]]
    ) -> FabricPlan:
        if len(intent_text.encode()) > MAX_INTENT_BYTES:
            raise RenderError([f"intent: larger than {MAX_INTENT_BYTES:,} bytes"])
        key = (state, hashlib.sha256(intent_text.encode()).hexdigest())
        with self._lock:
            hit = self._plans.get(key)
            if hit is not None:
                self._plans.move_to_end(key)
                return hit
        try:
            intent = parse_intent(intent_text, "intent")
        except IntentError as exc:
            raise RenderError(list(exc.problems)) from None
        with tempfile.TemporaryDirectory(prefix="unifab-serve-render-") as scratch:
            root = Path(scratch)
            _write_parts(root, parts)
            try:
                made = render_intent(intent, fabric, root)
            except UnifabError as exc:
                raise RenderError([f"intent: {exc}"]) from None
        with self._lock:
            self._plans[key] = made
            while len(self._plans) > KEEP:
                self._plans.popitem(last=False)
        return made


def _write_parts(root: Path, parts: dict[str, dict[str, bytes]]) -> None:
    """The bundle's files under ``root`` (their names were checked at ingest; checked again here)."""
    for files in parts.values():
        for rel, body in files.items():
            pure = PurePosixPath(rel)
            if pure.is_absolute() or ".." in pure.parts:
                continue
            target = root.joinpath(*pure.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)


def device_rows(
    made: FabricPlan, *, devices: list[str], changed_only: bool, cursor: str | None, limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the plan's devices (host rows, then switch rows, by name); ``devices`` filters by name
    (``host:<h>``, ``switch:<s>`` or a bare name)."""
    wanted = {d.partition(":")[2] if d.startswith(("host:", "switch:")) else d for d in devices}
    after: tuple[str, str] | None = None
    if cursor:
        kind, name = decode_cursor(cursor, 2)
        after = (str(kind), str(name))
    order = {"host": 0, "switch": 1}
    rows: list[dict[str, Any]] = []
    for d in made.devices:
        if after is not None and (order.get(d.kind, 2), d.name) <= (order.get(after[0], 2), after[1]):
            continue
        if wanted and d.name not in wanted:
            continue
        lines = changed_lines(d.diff)
        if changed_only and not lines and not d.error:
            continue
        if len(rows) == limit:
            last = rows[-1]
            return rows, encode_cursor([last["kind"], last["device"]])
        rows.append(
            {
                "kind": d.kind,
                "device": d.name,
                "os": d.os,
                "files": sorted(d.outputs),
                "changed_lines": lines,
                "error": d.error,
                "notes": list(d.notes),
                "outputs": dict(sorted(d.outputs.items())),
                "diff": d.diff,
            }
        )
    return rows, None
