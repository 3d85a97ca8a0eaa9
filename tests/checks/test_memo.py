"""The run memo: the five cabling checks share one diff per run, and nothing survives the run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from unifab.checks import topology
from unifab.checks.memo import run_memo, run_scope
from unifab.checks.runner import run_checks
from unifab.model import Endpoint, Fabric, Link

FabricFactory = Callable[..., Fabric]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = topology.cabling_diff

    def counted(fabric: Fabric) -> Any:
        calls[0] += 1
        return real(fabric)

    monkeypatch.setattr(topology, "cabling_diff", counted)
    return calls


def test_outside_a_scope_every_call_computes() -> None:
    source = object()
    values = iter(range(10))
    assert [run_memo("x", source, lambda: next(values)) for _ in range(3)] == [0, 1, 2]


def test_inside_a_scope_once_per_object_and_what() -> None:
    a, b = object(), object()
    values = iter(range(10))
    with run_scope():
        first = [run_memo("x", a, lambda: next(values)) for _ in range(3)]
        other = run_memo("x", b, lambda: next(values))
        kind = run_memo("y", a, lambda: next(values))
    assert first == [0, 0, 0] and other == 1 and kind == 2
    with run_scope():
        assert run_memo("x", a, lambda: next(values)) == 3  # a new run computes afresh


def test_one_cabling_diff_per_run_and_none_kept_between_runs(
    make_fabric: FabricFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    fabric = make_fabric()
    fabric.links.append(Link(Endpoint("gpu001", "eth1"), Endpoint("leaf1", "Ethernet99"), frozenset({"plan"})))
    first = [f.check for f in run_checks(fabric)]
    assert calls[0] == 1 and "TOPO-MISSING" in first
    fabric.links.pop()  # the same fabric object, changed: the next run must not reuse the first run's diff
    second = [f.check for f in run_checks(fabric)]
    assert calls[0] == 2 and "TOPO-MISSING" not in second
