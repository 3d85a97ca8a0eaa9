"""Detectors: pure functions from counter series to symptoms (what one entity shows, from when).

Every detector asks for **persistence**, not a single increment: a reboot flaps a link once, a cosmic ray costs
one CRC error, a driver reload resets every counter; none of that is an incident. Each fires on an entity only
when its counter rose in enough intervals of a sliding window (:class:`Thresholds`, defaults below), and its
symptom starts at the first of those intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from unifab.health.series import Interval, Series, SeriesStore, changes, intervals
from unifab.model import Endpoint

__all__ = [
    "DETECTORS",
    "ECN_ABSENT",
    "FEC",
    "GPU_XID",
    "LINK_FLAP",
    "LOSSLESS_DROPS",
    "NCCL_ERROR",
    "NODE_DOWN",
    "OPTICS",
    "PFC_STORM",
    "SWITCH_DOWN",
    "Symptom",
    "Thresholds",
    "detect",
]

LINK_FLAP = "HEALTH-LINK-FLAP"
FEC = "HEALTH-FEC"
LOSSLESS_DROPS = "HEALTH-LOSSLESS-DROPS"
PFC_STORM = "HEALTH-PFC-STORM"
OPTICS = "HEALTH-OPTICS"
ECN_ABSENT = "HEALTH-ECN-ABSENT"
GPU_XID = "HEALTH-GPU-XID"
NODE_DOWN = "HEALTH-NODE-DOWN"
SWITCH_DOWN = "HEALTH-SWITCH-DOWN"
NCCL_ERROR = "HEALTH-NCCL-ERROR"

FLAP_COUNTERS = ("carrier_changes", "link_down")
FEC_COUNTERS = ("fec_uncorrectable", "symbol_errors", "crc_errors")
DROP_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err")
PAUSE_COUNTERS = ("pause_tx_us",)

DETECTORS = {
    LINK_FLAP: "the link went down and up repeatedly (carrier changes, link-down counts)",
    FEC: "errors FEC could not correct (uncorrectable FEC blocks, symbol or CRC errors), interval after interval",
    LOSSLESS_DROPS: "RoCE packets lost on a lossless class (out-of-sequence, packet sequence errors, ACK timeouts)",
    PFC_STORM: "the end sent PFC pause most of the time (its receive path is stuck and stalls its peer)",
    OPTICS: "a transceiver's DOM (rx/tx power, bias, temperature, voltage) beyond its own alarm or warning levels",
    ECN_ABSENT: "a NIC paused by PFC again and again with no ECN mark or CNP: congestion control is not working",
    GPU_XID: "a GPU logged an Xid the vendor's catalog treats as a hardware or driver fault",
    NODE_DOWN: "a host or NIC went silent (its series stop) or lost every link, while the rest reports",
    SWITCH_DOWN: "a switch went silent or lost every link at once, while the rest reports",
    NCCL_ERROR: "NCCL work requests failed (completion errors) between NICs whose paths share one link",
}


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a detector fires. Windows in seconds; counts are increments within one window."""

    flap_events: int = 3  # link-down events (a carrier_changes pair is one) ...
    flap_window_s: float = 900.0  # ... within 15 minutes; one reboot is one event
    error_intervals: int = 3  # intervals with uncorrected errors ...
    error_window_s: float = 600.0  # ... within 10 minutes ...
    error_total: float = 20.0  # ... adding up to at least this many errors
    drop_intervals: int = 3
    drop_window_s: float = 600.0
    drop_total: float = 20.0
    pause_share: float = 0.5  # share of an interval the end spent sending pause ...
    pause_intervals: int = 3  # ... in this many intervals ...
    pause_window_s: float = 300.0  # ... within 5 minutes
    ecn_pause_share: float = 0.1  # share of an interval a NIC was paused (PFC received) ...
    ecn_intervals: int = 3  # ... in this many intervals ...
    ecn_window_s: float = 600.0  # ... within 10 minutes, with no ECN mark or CNP in that time
    down_after_s: float = 300.0  # a device silent (or a link down) this long while the others report: down
    nccl_peers: int = 2  # NCCL completion errors with this many distinct peers through one link, from both ends
    optics_warnings: bool = True  # DOM beyond a warning level (not only an alarm) is a symptom


@dataclass(frozen=True, slots=True)
class Symptom:
    """A detector firing on one entity: the counter, from when to when, and how much."""

    detector: str
    entity: str  # nic:... or port:...
    endpoint: Endpoint
    counter: str
    start: float  # the start of the first interval counted
    end: float  # the end of the last interval with an increment
    total: float  # increments in the firing window (events for flaps, microseconds for pause)
    intervals: int  # intervals with an increment in it
    peak: float  # the largest rate seen (per second; a share for pause)
    gaps: int = 0  # intervals of the series with missing samples
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, object]:
        return {
            "detector": self.detector,
            "entity": self.entity,
            "counter": self.counter,
            "start": self.start,
            "end": self.end,
            "total": self.total,
            "intervals": self.intervals,
            "peak": self.peak,
            "gaps": self.gaps,
            "notes": list(self.notes),
        }


def _window(hits: Sequence[tuple[Interval, float]], count: int, window_s: float, total: float) -> int | None:
    """The index of the first hit that opens a window of ``window_s`` holding ``count`` hits adding up to ``total``."""
    lo, running = 0, 0.0
    for hi, (interval, amount) in enumerate(hits):
        running += amount
        # an interval longer than the window on its own (samples far apart) still counts as one hit
        while lo < hi and interval.end - hits[lo][0].start > window_s:
            running -= hits[lo][1]
            lo += 1
        if hi - lo + 1 >= count and running >= total:
            return lo
    return None


def _symptom(
    detector: str, series: Series, spans: list[Interval], hits: list[tuple[Interval, float]], first: int, peak: float
) -> Symptom:
    fired = hits[first:]
    notes = tuple(sorted({i.event for i in spans if i.event}))
    return Symptom(
        detector,
        series.entity,
        series.endpoint,
        series.counter if not series.qualifier else f"{series.counter}{{{series.qualifier}}}",
        fired[0][0].start,
        fired[-1][0].end,
        sum(a for _, a in fired),
        len(fired),
        peak,
        sum(1 for i in spans if i.gap),
        notes,
    )


def _increments(series: Series, scale: float = 1.0) -> tuple[list[Interval], list[tuple[Interval, float]], float]:
    spans = intervals(series)
    hits = [(i, i.delta * scale) for i in spans if i.delta is not None and i.delta > 0]
    rates = [r * scale for i in spans if (r := i.rate) is not None]
    return spans, hits, max(rates, default=0.0)


def link_flap(series: Series, t: Thresholds) -> Symptom | None:
    """``carrier_changes`` rises by 2 per flap (down and up); ``link_down`` by 1."""
    if series.counter not in FLAP_COUNTERS:
        return None
    spans = intervals(series)
    per = 2.0 if series.counter == "carrier_changes" else 1.0
    hits = [(i, float(math.ceil(i.delta / per))) for i in spans if i.delta is not None and i.delta > 0]
    first = _window(hits, 1, t.flap_window_s, t.flap_events)
    if first is None:
        return None
    peak = max((a / (i.end - i.start) for i, a in hits if i.end > i.start), default=0.0)
    return _symptom(LINK_FLAP, series, spans, hits, first, peak)


def fec(series: Series, t: Thresholds) -> Symptom | None:
    if series.counter not in FEC_COUNTERS:
        return None
    spans, hits, peak = _increments(series)
    first = _window(hits, t.error_intervals, t.error_window_s, t.error_total)
    return None if first is None else _symptom(FEC, series, spans, hits, first, peak)


def lossless_drops(series: Series, t: Thresholds) -> Symptom | None:
    if series.counter not in DROP_COUNTERS:
        return None
    spans, hits, peak = _increments(series)
    first = _window(hits, t.drop_intervals, t.drop_window_s, t.drop_total)
    return None if first is None else _symptom(LOSSLESS_DROPS, series, spans, hits, first, peak)


def pfc_storm(series: Series, t: Thresholds) -> Symptom | None:
    """Pause duration counts microseconds: its rate over 1e6 is the share of time spent pausing."""
    if series.counter not in PAUSE_COUNTERS:
        return None
    spans = intervals(series)
    shares = [(i, r / 1e6) for i in spans if (r := i.rate) is not None]
    hits = [(i, share) for i, share in shares if share >= t.pause_share]
    first = _window(hits, t.pause_intervals, t.pause_window_s, 0.0)
    if first is None:
        return None
    symptom = _symptom(PFC_STORM, series, spans, hits, first, max(s for _, s in shares))
    total = sum((i.delta or 0.0) for i, _ in hits[first:])
    return replace(symptom, total=total)


DETECTOR_FUNCTIONS = (link_flap, fec, lossless_drops, pfc_storm)


def detect(store: SeriesStore | Iterable[Series], thresholds: Thresholds | None = None) -> list[Symptom]:
    """Every symptom of every series, in a stable order (entity, detector, counter)."""
    t = thresholds or Thresholds()
    series = store.series.values() if isinstance(store, SeriesStore) else store
    found = [s for one in series if changes(one) for fn in DETECTOR_FUNCTIONS if (s := fn(one, t)) is not None]
    return sorted(found, key=lambda s: (s.entity, s.detector, s.counter))
