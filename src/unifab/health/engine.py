"""One health run: series and the Fabric in, incidents and the ``unifab health --format json`` document out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from unifab.health.detect import Symptom, Thresholds, detect
from unifab.health.detect_events import gpu_xid, nccl_errors, optics, ras_processes
from unifab.health.detect_state import detect_state
from unifab.health.events import EventStore
from unifab.health.localize import Incident, iso, localize
from unifab.health.series import SeriesStore, gap_count
from unifab.model import Fabric, Finding
from unifab.sources import SourcePath

__all__ = ["HealthResult", "document", "read_bundle_series", "run_health"]


@dataclass(frozen=True, slots=True)
class HealthResult:
    incidents: tuple[Incident, ...]
    symptoms: tuple[Symptom, ...]
    series: int
    samples: int
    gaps: int  # intervals with missing samples, over every series
    span: tuple[float, float] | None
    problems: tuple[str, ...]


def read_bundle_series(root: SourcePath, fabric: Fabric) -> SeriesStore:
    """Every counter series a bundle holds: ``telemetry/*.om``, the successive ``ib/perfquery/*.txt`` rounds and
    the successive snapshots of host and switch files in ``telemetry/rounds/<unix time>/`` (a series the
    telemetry and a snapshot both give is kept from the telemetry)."""
    from unifab.health.ib_series import read_ib_snapshots
    from unifab.health.series import read_bundle
    from unifab.health.snapshot_series import read_rounds

    return read_rounds(root, fabric, read_ib_snapshots(root, fabric, read_bundle(root, fabric)))


def run_health(
    fabric: Fabric,
    store: SeriesStore,
    findings: Iterable[Finding] = (),
    thresholds: Thresholds | None = None,
    events: EventStore | None = None,
) -> HealthResult:
    """Detect over every series and event, then localize through ``fabric``; ``findings``: the checks' findings.

    Evidence without a time of its own (a DOM reading, a log without wall-clock stamps) is dated by the series:
    a DOM reading at their end (when the bundle was read), a log event at their start.
    """
    t = thresholds or Thresholds()
    symptoms = detect(store, t) + detect_state(store, t)
    span = store.span()
    first, last = span if span is not None else (0.0, 0.0)
    problems = list(store.problems)
    if events is not None:
        symptoms += optics(events.modules, t, last)
        symptoms += gpu_xid(events.xids, fabric, first)
        symptoms += nccl_errors(events.nccl, fabric, t, first)
        symptoms += ras_processes(events.ras, events.ras_reports, fabric)
        problems += events.problems
    symptoms.sort(key=lambda s: (s.entity, s.detector, s.counter))
    incidents = localize(fabric, symptoms, findings)
    gaps = sum(gap_count(s) for s in store.series.values())
    return HealthResult(
        tuple(incidents),
        tuple(symptoms),
        len(store),
        sum(len(s.times) for s in store.series.values()),
        gaps,
        span,
        tuple(problems),
    )


def document(source: str, result: HealthResult) -> dict[str, object]:
    """DESIGN's incident document: scoring against a twin's truth is a set comparison of root cause ids."""
    span = result.span
    return {
        "source": source,
        "summary": {
            "incidents": len(result.incidents),
            "symptoms": len(result.symptoms),
            "series": result.series,
            "samples": result.samples,
            "gaps": result.gaps,
            "from": iso(span[0]) if span else None,
            "to": iso(span[1]) if span else None,
        },
        "problems": list(result.problems),
        "incidents": [i.as_dict() for i in result.incidents],
    }
