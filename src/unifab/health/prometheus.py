"""The same series from a Prometheus-compatible TSDB (Prometheus, VictoriaMetrics, Thanos, Mimir) over its HTTP API.

One ``/api/v1/query_range`` per metric of :data:`~unifab.health.series.METRICS`, asking for
``last_over_time(<metric>[<step - 1 ms>])`` at every ``step``: each point is the last raw sample of its step (the
counter's own value, not an average), and a step without a sample has no point, so a missed scrape stays a gap.
A plain selector would not do: the query engine carries the last value forward for 5 minutes (its lookback), which
would hide gaps. Values come back as float64 (a TSDB stores nothing else): counters above 2**53 lose their last
digits there, which a rate does not notice. The GPUs' Xid events come the same way, from dcgm-exporter's
``DCGM_FI_DEV_XID_ERRORS`` gauge (:func:`read_prometheus_xids`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from unifab.errors import UnifabError
from unifab.health.events import DCGM_XID, EventStore, dcgm_xids
from unifab.health.openmetrics import Sample
from unifab.health.series import METRICS, SeriesStore, build_store
from unifab.model import Fabric

__all__ = ["PrometheusError", "read_prometheus", "read_prometheus_xids"]

MAX_POINTS = 11_000  # Prometheus refuses a range query of more points per series


class PrometheusError(UnifabError):
    """The TSDB is down, slow, or answered what is not a Prometheus API answer."""


def _value(text: str) -> float:
    value = float(text)
    return int(value) if math.isfinite(value) and value == int(value) and abs(value) < 2**53 else value


def _samples(metric: str, body: Any, url: str) -> Iterator[tuple[Sample, str]]:
    if not isinstance(body, dict) or body.get("status") != "success":
        error = body.get("error") if isinstance(body, dict) else None
        raise PrometheusError(f"{url}: the query for {metric} failed: {error or 'not a Prometheus API answer'}")
    data = body.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PrometheusError(f"{url}: the query for {metric} did not answer a matrix")
    for row in data["result"]:
        labels = row.get("metric", {}) if isinstance(row, dict) else None
        values = row.get("values", []) if isinstance(row, dict) else None
        if not isinstance(labels, dict) or not isinstance(values, list):
            raise PrometheusError(f"{url}: a series of {metric} without labels or values")
        key = tuple(sorted((str(k), str(v)) for k, v in labels.items() if k != "__name__"))
        for point in values:
            try:
                t, v = float(point[0]), _value(point[1])
            except (TypeError, ValueError, IndexError):
                raise PrometheusError(f'{url}: a point of {metric} that is not [time, "value"]') from None
            yield Sample(metric, key, v, t), f"{url} {metric}"


def _answers(
    url: str, metrics: Iterable[str], start: float, end: float, step: float, timeout: float
) -> Iterator[tuple[str, Any]]:
    """``(metric, JSON answer)`` of one range query per metric over one connection (see the module doc)."""
    import httpx

    if end <= start or step <= 0:
        raise PrometheusError(f"an empty window: from {start} to {end} by {step} s")
    if (end - start) / step > MAX_POINTS:
        raise PrometheusError(
            f"{(end - start) / step:.0f} points per series: more than {MAX_POINTS}; use a larger step"
        )
    base = url.rstrip("/")
    window = f"{max(1, round(step * 1000) - 1)}ms"
    try:
        with httpx.Client(base_url=base, timeout=timeout) as client:
            for metric in metrics:
                params = {
                    "query": f"last_over_time({metric}[{window}])",
                    "start": repr(start),
                    "end": repr(end),
                    "step": repr(step),
                    # VictoriaMetrics moves start and end to multiples of the step (for its cache) when a series
                    # has more than 50 points, shifting every point; nocache=1 keeps the asked-for grid. Prometheus,
                    # Thanos and Mimir ignore a parameter they do not know.
                    "nocache": "1",
                }
                response = client.get("/api/v1/query_range", params=params)
                if response.status_code != 200 and "json" not in response.headers.get("content-type", ""):
                    raise PrometheusError(f"{base}: HTTP {response.status_code} for {metric}")
                try:
                    body = response.json()
                except ValueError:
                    raise PrometheusError(f"{base}: the answer for {metric} is not JSON") from None
                yield metric, body
    except httpx.TimeoutException:
        raise PrometheusError(f"{base}: no answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise PrometheusError(f"{base}: {exc}") from None


def read_prometheus(
    url: str, fabric: Fabric, start: float, end: float, step: float = 30.0, *, timeout: float = 10.0
) -> SeriesStore:
    """Every known metric between ``start`` and ``end`` (epoch seconds), one point per ``step`` seconds.

    Raises :class:`PrometheusError` when the server cannot be reached, is slower than ``timeout`` seconds, or
    answers an error.
    """
    store = SeriesStore()
    base = url.rstrip("/")
    for metric, body in _answers(url, METRICS, start, end, step, timeout):
        build_store(_samples(metric, body, base), fabric, store)
    return store


def read_prometheus_xids(
    url: str, fabric: Fabric, start: float, end: float, step: float = 30.0, *, timeout: float = 10.0
) -> EventStore:
    """The GPUs' Xid events from dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` gauge in the same window, as
    ``telemetry/dcgm/`` scrapes give them (:func:`unifab.health.events.dcgm_xids`); no series is an empty store."""
    store = EventStore()
    base = url.rstrip("/")
    for metric, body in _answers(url, (DCGM_XID,), start, end, step, timeout):
        dcgm_xids(store, (sample for sample, _ in _samples(metric, body, base)), f"{base} {metric}", fabric)
    return store
