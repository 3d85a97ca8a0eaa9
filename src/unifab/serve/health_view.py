"""The live fabric's health: incidents from the telemetry its snapshot carries, for the API and the web UI.

An upload may carry ``telemetry/`` (the bundle layout's counter series, logs and rounds: docs/health.md); the
server keeps it as one part, replaced whole by the next upload that carries one. :func:`build` runs the same
engine as ``unifab health`` over the live files (``health:`` thresholds from the bundle's ``fabric.yaml``, the
checks' current findings as the configuration evidence) and keeps the series, so each symptom of an incident
can be drawn as the rate its detector judged. The server keeps the newest view and rebuilds it only when the
live fabric's state key changes, as it does the fabric index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from unifab import layout
from unifab.errors import IntentError
from unifab.health.detect import Symptom, Thresholds
from unifab.health.engine import HealthResult, document, read_bundle_series, run_health
from unifab.health.events import read_events
from unifab.health.localize import Incident, iso
from unifab.health.series import Series, SeriesStore, intervals
from unifab.health.thresholds import from_text
from unifab.model import Fabric, Finding
from unifab.sources import SourcePath

__all__ = ["PLOT_HEIGHT", "PLOT_WIDTH", "HealthView", "Plot", "build"]

PLOT_WIDTH, PLOT_HEIGHT = 320, 56  # the sparkline's viewBox, in SVG user units


@dataclass(frozen=True, slots=True)
class Plot:
    """One symptom's series drawn as its rate per interval: ``points`` for an SVG polyline (numbers only), the
    detector's firing window as ``band`` (x from, x to), and the axis texts."""

    entity: str
    counter: str
    points: str
    band: tuple[float, float]
    peak: str
    span: str


@dataclass(frozen=True, slots=True)
class HealthView:
    key: tuple[int, ...]
    result: HealthResult
    store: SeriesStore
    problems: tuple[str, ...]  # what the view itself could not use (a bad health: section)

    def document(self) -> dict[str, Any]:
        doc = document("unifab-serve", self.result)
        doc["problems"] = [*self.problems, *doc["problems"]]  # type: ignore[misc]
        return doc

    def plots(self, incident: Incident) -> list[Plot]:
        """A plot per symptom whose counter is a series (events, such as an Xid, have none)."""
        out = []
        for symptom in incident.symptoms:
            series = self.store.series.get(_series_key(symptom))
            if series is not None and (plot := _plot(series, symptom)) is not None:
                out.append(plot)
        return out


def _series_key(symptom: Symptom) -> tuple[str, str, str]:
    """``pause_tx_us{3}`` -> (entity, ``pause_tx_us``, ``3``)."""
    name, _, rest = symptom.counter.partition("{")
    return symptom.entity, name, rest.rstrip("}")


def _plot(series: Series, symptom: Symptom) -> Plot | None:
    rates = [(i.end, r) for i in intervals(series) if (r := i.rate) is not None]
    if len(rates) < 2:
        return None
    t0, t1 = series.times[0], series.times[-1]
    top = max(r for _, r in rates) or 1.0
    width = (t1 - t0) or 1.0

    def x(t: float) -> float:
        return round((t - t0) / width * PLOT_WIDTH, 1)

    points = " ".join(f"{x(t)},{round(PLOT_HEIGHT - 2 - r / top * (PLOT_HEIGHT - 4), 1)}" for t, r in rates)
    return Plot(
        symptom.entity,
        symptom.counter,
        points,
        (x(symptom.start), max(x(symptom.end), x(symptom.start) + 1.0)),
        f"peak {top:.3g}/s",
        f"{iso(t0)} – {iso(t1)}",
    )


def build(key: tuple[int, ...], root: SourcePath, fabric: Fabric, findings: Sequence[Finding]) -> HealthView:
    """Health over the live files (``root``), as ``unifab health`` computes it for a bundle."""
    thresholds, problems = _thresholds(root)
    store = read_bundle_series(root, fabric)
    span = store.span()
    year = datetime.fromtimestamp(span[1] if span else datetime.now(UTC).timestamp(), UTC).year
    events = read_events(root, fabric, year)
    result = run_health(fabric, store, findings, thresholds, events)
    return HealthView(key, result, store, problems)


def _thresholds(root: SourcePath) -> tuple[Thresholds, tuple[str, ...]]:
    path = root / layout.INTENT
    if not path.is_file():
        return Thresholds(), ()
    try:
        return from_text(path.read_text(encoding="utf-8"), layout.INTENT), ()
    except (OSError, UnicodeDecodeError) as exc:
        return Thresholds(), (f"{layout.INTENT}: cannot read it ({exc}); default health thresholds used",)
    except IntentError as exc:
        return Thresholds(), tuple(f"{p}; default health thresholds used" for p in exc.problems)
