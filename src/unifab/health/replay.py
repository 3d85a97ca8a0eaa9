"""A bundle's telemetry replayed poll by poll through :class:`~unifab.health.stream.Stream`: when each incident
(by root cause) would first have been raised, had unifab been watching live.

After every poll whose symptoms changed (a symptom fired, grew a start, or was withdrawn; an Xid or NCCL error
became due), the symptoms so far are localized, exactly as ``unifab health`` would at that moment. An incident
appears when its root-cause rule holds: a dead host only once its silence lasts ``down_after_s``, a host whose
every NIC errs only once the last of them fires. Log events count from their own time stamp, a round's DOM reading
from its round's time; the bundle's own DOM reading (which has none) from the end of the series, as in
:func:`~unifab.health.engine.run_health`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass

from unifab.health.detect import Thresholds
from unifab.health.detect_events import gpu_xid, nccl_errors, optics, ras_processes
from unifab.health.events import EventStore
from unifab.health.localize import localize
from unifab.health.series import SeriesStore
from unifab.health.stream import Stream
from unifab.model import Fabric, Finding

__all__ = ["Timeline", "replay"]


@dataclass(frozen=True, slots=True)
class Timeline:
    first_seen: dict[str, float]  # root cause id -> the poll time it was first an incident
    final: tuple[str, ...]  # the root causes at the last poll
    polls: int
    localized: int  # polls after which the symptoms were localized again


def replay(
    fabric: Fabric,
    store: SeriesStore,
    events: EventStore | None = None,
    findings: Iterable[Finding] = (),
    thresholds: Thresholds | None = None,
    step_s: float = 30.0,
) -> Timeline:
    t = thresholds or Thresholds()
    known = list(findings)
    stream = Stream(t, step_s)
    by_time: dict[float, list[tuple[int, float]]] = {}
    for s in store.series.values():
        i = stream.track(s)
        for when, v in zip(s.times, s.values, strict=True):
            by_time.setdefault(when, []).append((i, v))
    span = store.span()
    first, last = span if span is not None else (0.0, 0.0)
    xids = sorted(events.xids if events else [], key=lambda r: r.time if r.time is not None else first)
    nccl = sorted(events.nccl if events else [], key=lambda r: r.time if r.time is not None else first)
    # DOM readings of the rounds come due at their round's time; the bundle's own reading at the last poll
    modules = sorted(events.modules if events else [], key=lambda r: r.time if r.time is not None else math.inf)
    xid_times = [r.time if r.time is not None else first for r in xids]  # sorted, as their records
    nccl_times = [r.time if r.time is not None else first for r in nccl]
    module_times = [r.time if r.time is not None else math.inf for r in modules]
    ras = sorted(events.ras if events else [], key=lambda r: r.time)  # RAS reports come due at their own time
    ras_reports = sorted(events.ras_reports if events else [], key=lambda r: r.time)
    ras_times, report_times = [r.time for r in ras], [r.time for r in ras_reports]
    polls = sorted(by_time)
    seen: dict[str, float] = {}
    roots: list[str] = []
    done = -1
    localized = 0
    event_count = (0, 0, 0, 0, 0)
    for n, now in enumerate(polls):
        for i, v in by_time[now]:
            stream.push(i, now, v)
        stream.tick(now)
        final = n == len(polls) - 1
        due = (
            bisect.bisect_right(xid_times, now),
            bisect.bisect_right(nccl_times, now),
            len(modules) if final else bisect.bisect_right(module_times, now),
            bisect.bisect_right(ras_times, now),
            bisect.bisect_right(report_times, now),
        )
        if stream.version == done and due == event_count and not final:
            continue
        done, event_count = stream.version, due
        symptoms = stream.symptoms()
        symptoms += gpu_xid(xids[: due[0]], fabric, first)
        symptoms += nccl_errors(nccl[: due[1]], fabric, t, first)
        symptoms += optics(modules[: due[2]], t, last)
        symptoms += ras_processes(ras[: due[3]], ras_reports[: due[4]], fabric)
        localized += 1
        roots = [i.root for i in localize(fabric, symptoms, known)]
        for root in roots:
            seen.setdefault(root, now)
    return Timeline(seen, tuple(sorted(roots)), len(polls), localized)
