"""Render for the live fabric: the plan equals ``unifab render``'s, is kept per (fabric state, intent), and
pages by device; a bad intent is a located problem."""

from __future__ import annotations

from pathlib import Path

import pytest

import unifab
from unifab.serve.render_view import MAX_INTENT_BYTES, RenderCache, RenderError, changed_lines, device_rows


def _parts(bundle: Path) -> dict[str, dict[str, bytes]]:
    files = {p.relative_to(bundle).as_posix(): p.read_bytes() for p in bundle.rglob("*") if p.is_file()}
    return {"all": files, "hostile": {"../escape.txt": b"x", "/etc/x": b"y"}}


def test_a_cached_plan_per_state_and_intent(small_twin: Path) -> None:
    fabric = unifab.load_snapshot(small_twin).fabric
    text = (small_twin / "fabric.yaml").read_text()
    cache = RenderCache()
    made = cache.plan((1,), text, fabric, _parts(small_twin))
    expected = unifab.render_intent(unifab.parse_intent(text), fabric, small_twin)
    assert [(d.name, d.diff) for d in made.devices] == [(d.name, d.diff) for d in expected.devices]
    assert cache.plan((1,), text, fabric, {}) is made  # the same state and intent: no second render
    assert cache.plan((2,), text, fabric, _parts(small_twin)) is not made

    rows, cursor = device_rows(made, devices=[], changed_only=False, cursor=None, limit=5)
    assert [r["device"] for r in rows] == [d.name for d in made.devices[:5]] and cursor
    rest, end = device_rows(made, devices=[], changed_only=False, cursor=cursor, limit=500)
    assert [r["device"] for r in rows + rest] == [d.name for d in made.devices] and end is None
    assert [r["notes"] for r in rows + rest] == [d.notes for d in made.devices]  # why a value is not the intent's
    changed, _ = device_rows(made, devices=[], changed_only=True, cursor=None, limit=500)
    assert [r["device"] for r in changed] == [d.name for d in made.devices if changed_lines(d.diff) or d.error]
    one, _ = device_rows(made, devices=["host:gpu002", "spine01"], changed_only=False, cursor=None, limit=9)
    assert [r["device"] for r in one] == ["gpu002", "spine01"]


def test_a_bad_intent_is_a_located_problem(small_twin: Path) -> None:
    fabric = unifab.load_snapshot(small_twin).fabric
    with pytest.raises(RenderError) as bad:
        RenderCache().plan((1,), "version: 1\nqos: {roce: {dscp: 99}}\n", fabric, {})
    assert bad.value.problems and all(p.startswith("intent") for p in bad.value.problems)
    with pytest.raises(RenderError, match="larger than"):
        RenderCache().plan((1,), "#" * (MAX_INTENT_BYTES + 1), fabric, {})


def test_changed_lines_count_additions_and_removals_only() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n context\n"
    assert changed_lines(diff) == 2 and changed_lines("") == 0
