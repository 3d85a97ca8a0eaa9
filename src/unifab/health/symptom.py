"""What a detector reports (:class:`Symptom`) and when it fires (:class:`Thresholds`, every default).

Their own module so that detectors in modules of their own (:mod:`unifab.health.detect_ib`) and
:mod:`unifab.health.detect`, which runs them, import them without importing each other;
:mod:`unifab.health.detect` re-exports both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from unifab.model import Endpoint

__all__ = ["Symptom", "Thresholds"]


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a detector fires. Windows in seconds; counts are increments within one window."""

    flap_events: int = 3  # link-down events (a carrier_changes pair is one) ...
    flap_window_s: float = 900.0  # ... within 15 minutes; one reboot is one event
    error_intervals: int = 3  # intervals with uncorrected errors ...
    error_window_s: float = 600.0  # ... within 10 minutes ...
    error_total: float = 20.0  # ... adding up to at least this many errors
    ber_warn: float = 1e-5  # pre-FEC BER (corrected bits / bits received) in error_intervals within error_window_s
    drop_intervals: int = 3
    drop_window_s: float = 600.0
    drop_total: float = 20.0
    pause_share: float = 0.5  # share of an interval the end spent sending pause ...
    pause_intervals: int = 3  # ... in this many intervals ...
    pause_window_s: float = 300.0  # ... within 5 minutes
    pfcwd_storms: int = 2  # PFC watchdog storms detected on one queue within pause_window_s: a storm that returns
    ecn_pause_share: float = 0.1  # share of an interval a NIC was paused (PFC received) ...
    ecn_intervals: int = 3  # ... in this many intervals ...
    ecn_window_s: float = 600.0  # ... within 10 minutes, with no ECN mark or CNP in that time
    down_after_s: float = 300.0  # a device silent (or a link down) this long while the others report: down
    nccl_peers: int = 2  # NCCL completion errors with this many distinct peers through one link, from both ends
    optics_warnings: bool = True  # DOM beyond a warning level (not only an alarm) is a symptom
    ib_wait_share: float = 0.5  # InfiniBand XmitWait share (wait ticks / (wait ticks + words sent)) ...
    ib_wait_intervals: int = 3  # ... at or above it in this many consecutive perfquery intervals: starved


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
