"""Work shared by several checks within one run, computed once.

Five topology checks (TOPO-MISSING, -UNVERIFIED, -UNEXPECTED, -MISWIRED, -RAIL) read the same cabling diff.
A memo kept on the :class:`~unifab.checks.context.CheckContext` would outlive the run: the incremental
session derives contexts with ``dataclasses.replace`` (which shares every field) and changes the fabric
between runs. So the memo lives only inside :func:`run_scope`, which the runner opens around one pass over
the checks; outside a scope (a check called on its own) every call computes afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["run_memo", "run_scope"]

T = TypeVar("T")

# (what, id of the object it was computed from) -> (that object, the result). The object is held so that
# its id cannot be reused by another object while the scope lives.
_Memo = dict[tuple[str, int], tuple[object, object]]
_current: ContextVar[_Memo | None] = ContextVar("unifab_check_run_memo", default=None)


@contextmanager
def run_scope() -> Iterator[None]:
    """One pass over the checks: results memoized inside are dropped when it ends."""
    token = _current.set({})
    try:
        yield
    finally:
        _current.reset(token)


def run_memo(what: str, source: object, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``what`` and ``source`` object within the current :func:`run_scope`."""
    memo = _current.get()
    if memo is None:
        return compute()
    key = (what, id(source))
    hit = memo.get(key)
    if hit is not None and hit[0] is source:
        return hit[1]  # type: ignore[return-value]
    value = compute()
    memo[key] = (source, value)
    return value
