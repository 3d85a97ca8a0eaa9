"""The detectors as a stream: one new sample of a series at a time, symptoms as soon as a threshold is met.

:class:`Stream` keeps, per series, only its last sample and the increments inside its detector's window, so one
poll (a sample of every series) costs a few microseconds per series whatever the history; this is what runs at
every scrape on a large fabric, and what tells when an incident would have been raised. It applies the same
rules as the batch detectors (:mod:`~unifab.health.detect`, :mod:`~unifab.health.detect_state`): the same
increments (a reset counts the new value, a wrap across the top, a drop across a gap is unknown, a saturated
counter unknown), the same windows, the same start of a symptom; once fired a symptom grows (its end, total,
intervals) and, for a link state or pauses without ECN, is withdrawn when its condition stops holding. A test
checks that a stream over a whole twin ends with the batch detectors' symptoms.

The gap rule needs the scrape interval (``step_s``): the batch detectors take each series' median step, which
a stream cannot know in advance, and a live collector knows its own poll interval.

InfiniBand credit starvation (:mod:`~unifab.health.detect_ib`) is not streamed: it judges every port's XmitWait
at once and names the port at the bottom of the congestion tree, which no one series can tell; it runs with the
batch detectors (``unifab health``) only.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from unifab.health.detect import (
    ECN_ABSENT,
    FEC,
    LINK_FLAP,
    LOSSLESS_DROPS,
    NODE_DOWN,
    PFC_STORM,
    SWITCH_DOWN,
    Symptom,
    Thresholds,
    watchdog_note,
)
from unifab.health.detect_state import CC_COUNTERS
from unifab.health.series import GAP_FACTOR, Series
from unifab.model import Endpoint

__all__ = ["Stream"]

_FLAP, _FEC, _DROP, _PAUSE, _PAUSE_RX, _CC, _GAUGE, _OTHER, _RECOVERY, _WATCHDOG = range(10)
_KIND = {
    "carrier_changes": _FLAP,
    "link_down": _FLAP,
    "fec_uncorrectable": _FEC,
    "symbol_errors": _FEC,
    "crc_errors": _FEC,
    "rcv_errors": _FEC,
    "link_error_recovery": _RECOVERY,  # retrains: HEALTH-FEC with the flap thresholds (detect.RECOVERY_COUNTERS)
    "out_of_sequence": _DROP,
    "packet_seq_err": _DROP,
    "local_ack_timeout_err": _DROP,
    "queue_drops": _DROP,  # a switch port's lossless egress queue (detect.DROP_COUNTERS)
    "pg_drops": _DROP,  # and its lossless ingress priority group
    "pause_tx_us": _PAUSE,
    "pause_rx_us": _PAUSE_RX,
    "pfcwd_storms": _WATCHDOG,  # a switch queue's PFC watchdog storms (detect.pfcwd_storm)
    **dict.fromkeys(CC_COUNTERS, _CC),
}
_WRAP_SHARE = 0.25


@dataclass(slots=True)
class _State:
    entity: str
    endpoint: Endpoint
    counter: str  # as a symptom names it (with its qualifier)
    kind: int
    modulus: int
    saturates: bool
    last_t: float = math.nan
    last_v: float = math.nan
    hits: deque[tuple[float, float, float, float]] = field(default_factory=deque)  # (start, end, amount, total)
    running: float = 0.0
    peak: float = 0.0
    gaps: int = 0
    fired: Symptom | None = None
    dead: bool = False  # pauses without ECN withdrawn for good: marks came (the batch rule judges the first window)
    fell: float | None = None  # a link-state gauge: when it fell to 0
    up_seen: bool = False


@dataclass(slots=True)
class _Device:
    kind: str  # host | switch
    last: float
    step: float
    fired: Symptom | None = None


class Stream:
    """Push samples (:meth:`push`), then :meth:`tick` once per poll; :meth:`symptoms` are the live symptoms."""

    def __init__(self, thresholds: Thresholds | None = None, step_s: float = 30.0) -> None:
        self.t = thresholds or Thresholds()
        self.step = step_s
        self.states: list[_State] = []
        self.index: dict[tuple[str, str, str], int] = {}
        self.devices: dict[str, _Device] = {}
        self.nic_last: dict[str, tuple[float, Endpoint]] = {}
        self.nic_down: dict[str, Symptom] = {}
        self.cc_entities: set[str] = set()
        self.cc_last: dict[str, float] = {}  # entity -> end of its latest CC-counter increment
        self.ecn_fired: dict[int, _State] = {}  # pauses without ECN that fired, by id
        self.now = -math.inf
        self.version = 0  # bumped whenever the set of symptoms or a symptom's start changes

    # ------------------------------------------------------------------ series

    def track(self, series: Series) -> int:
        """Register a series (its samples are not read); returns the index :meth:`push` takes."""
        key = series.key
        if key in self.index:
            return self.index[key]
        kind = _GAUGE if series.spec.gauge else _KIND.get(series.counter, _OTHER)
        counter = series.counter if not series.qualifier else f"{series.counter}{{{series.qualifier}}}"
        state = _State(series.entity, series.endpoint, counter, kind, 2**series.spec.width, series.spec.saturates)
        self.states.append(state)
        self.index[key] = len(self.states) - 1
        if kind == _CC:
            self.cc_entities.add(series.entity)
        return len(self.states) - 1

    def push(self, i: int, t: float, v: float) -> None:
        """One new sample of series ``i`` (in time order per series)."""
        s = self.states[i]
        t0, v0 = s.last_t, s.last_v
        s.last_t, s.last_v = t, v
        self._seen(s, t)
        if s.kind == _GAUGE:
            self._gauge(s, t, v)
            return
        if math.isnan(t0):  # the first sample: nothing to compare with
            return
        gap = t - t0 >= GAP_FACTOR * self.step
        if gap:
            s.gaps += 1
        top = s.modulus - 1
        if s.saturates and v0 >= top and v >= top:
            return
        if v >= v0:
            delta = v - v0
        elif gap:
            return
        elif not s.saturates and v0 >= s.modulus * (1 - _WRAP_SHARE) and v < s.modulus * _WRAP_SHARE:
            delta = v + s.modulus - v0
        else:
            delta = v
        if t > t0:
            rate = delta / (t - t0)
        else:
            return
        kind = s.kind
        if kind in (_PAUSE, _PAUSE_RX):
            share = rate / 1e6
            s.peak = max(s.peak, share)
            need = self.t.pause_share if kind == _PAUSE else self.t.ecn_pause_share
            if share >= need:
                self._hit(s, t0, t, share, delta)
            return
        if delta <= 0:
            return
        if kind == _CC:
            self.cc_last[s.entity] = t
            return
        if kind == _FLAP:
            amount = float(math.ceil(delta / (2.0 if s.counter == "carrier_changes" else 1.0)))
            s.peak = max(s.peak, amount / (t - t0))
            self._hit(s, t0, t, amount, amount)
        elif kind in (_FEC, _DROP, _RECOVERY, _WATCHDOG):
            s.peak = max(s.peak, rate)
            self._hit(s, t0, t, delta, delta)

    def _seen(self, s: _State, t: float) -> None:
        node = s.endpoint.node
        d = self.devices.get(node)
        if d is None:
            kind = "switch" if s.entity.startswith("port:") else "host"
            d = self.devices[node] = _Device(kind, t, self.step)
        elif t > d.last:
            d.last = t
        if s.entity.startswith("nic:"):
            seen = self.nic_last.get(s.entity)
            if seen is None or t > seen[0]:
                self.nic_last[s.entity] = (t, s.endpoint)
        self.now = max(self.now, t)

    def _hit(self, s: _State, start: float, end: float, amount: float, total: float) -> None:
        """An interval with an increment: grow a fired symptom, or slide the window and see if it fires now."""
        if s.fired is not None:
            f = s.fired
            s.fired = Symptom(
                f.detector, f.entity, f.endpoint, f.counter, f.start, end, f.total + total, f.intervals + 1,
                s.peak, s.gaps, f.notes,
            )  # fmt: skip
            return
        if s.dead:
            return
        t = self.t
        detector, count, window, need = {
            _FLAP: (LINK_FLAP, 1, t.flap_window_s, float(t.flap_events)),
            _FEC: (FEC, t.error_intervals, t.error_window_s, t.error_total),
            _RECOVERY: (FEC, 1, t.flap_window_s, float(t.flap_events)),
            _DROP: (LOSSLESS_DROPS, t.drop_intervals, t.drop_window_s, t.drop_total),
            _PAUSE: (PFC_STORM, t.pause_intervals, t.pause_window_s, 0.0),
            _PAUSE_RX: (ECN_ABSENT, t.ecn_intervals, t.ecn_window_s, 0.0),
            _WATCHDOG: (PFC_STORM, 1, t.pause_window_s, float(t.pfcwd_storms)),
        }[s.kind]
        hits = s.hits
        hits.append((start, end, amount, total))
        s.running += amount
        while end - hits[0][0] > window:
            s.running -= hits.popleft()[2]
        if len(hits) < count or s.running < need:
            return
        if s.kind == _PAUSE_RX:
            if s.entity not in self.cc_entities:
                return
            if self.cc_last.get(s.entity, -math.inf) > hits[0][0]:
                s.dead = True
                return
        totals = sum(h[3] for h in hits)
        notes: tuple[str, ...] = ()
        if s.kind == _PAUSE_RX:
            notes = ("no ECN mark or CNP increment while paused",)
            self.ecn_fired[id(s)] = s
        elif s.kind == _WATCHDOG:
            notes = (watchdog_note(s.endpoint, s.counter.partition("{")[2].rstrip("}")),)
        s.fired = Symptom(
            detector, s.entity, s.endpoint, s.counter, hits[0][0], end, totals, len(hits), s.peak, s.gaps, notes
        )
        hits.clear()
        self.version += 1

    def _gauge(self, s: _State, t: float, v: float) -> None:
        if v != 0:
            s.up_seen = True
            s.fell = None
            if s.fired is not None:
                s.fired = None
                self.version += 1
            return
        if s.fell is None and s.up_seen:
            s.fell = t
        if s.fell is not None and s.fired is None and t - s.fell >= self.t.down_after_s:
            detector = SWITCH_DOWN if s.entity.startswith("port:") else NODE_DOWN
            s.fired = Symptom(detector, s.entity, s.endpoint, "oper_up", s.fell, t, 1.0, 1, 0.0, 0, ("link down",))
            self.version += 1
        elif s.fired is not None:
            f = s.fired
            s.fired = Symptom(f.detector, f.entity, f.endpoint, f.counter, f.start, t, 1.0, 1, 0.0, 0, f.notes)

    # ------------------------------------------------------------------ polls

    def tick(self, now: float | None = None) -> None:
        """After a poll's samples: devices and NICs silent for ``down_after_s`` while the others report, and
        pauses without ECN whose window has seen a mark since."""
        when = self.now if now is None else now
        after = self.t.down_after_s
        if len(self.devices) >= 2:
            latest = max(d.last for d in self.devices.values())
            for node, d in self.devices.items():
                if d.fired is None and min(when, latest) - d.last >= after:
                    detector, entity = (
                        (SWITCH_DOWN, f"switch:{node}") if d.kind == "switch" else (NODE_DOWN, f"host:{node}")
                    )
                    d.fired = Symptom(
                        detector, entity, Endpoint(node, ""), "series", d.last + d.step, when, 0.0, 0, 0.0, 0,
                        ("every series stops",),
                    )  # fmt: skip
                    self.version += 1
        for entity, (last, end) in self.nic_last.items():
            host = self.devices.get(end.node)
            if host is not None and entity not in self.nic_down and host.last - last >= after:
                self.nic_down[entity] = Symptom(
                    NODE_DOWN, entity, end, "series", last + self.step, host.last, 0.0, 0, 0.0, 0,
                    (f"its series stop while {end.node}'s others report",),
                )  # fmt: skip
                self.version += 1
        for key, s in list(self.ecn_fired.items()):
            if s.fired is not None and self.cc_last.get(s.entity, -math.inf) > s.fired.start:
                s.fired, s.dead = None, True
                del self.ecn_fired[key]
                self.version += 1

    def symptoms(self) -> list[Symptom]:
        out = [s.fired for s in self.states if s.fired is not None]
        out += [d.fired for d in self.devices.values() if d.fired is not None]
        out += self.nic_down.values()
        return sorted(out, key=lambda s: (s.entity, s.detector, s.counter))

    def feed(self, series: Iterable[Series]) -> None:
        """Every sample of ``series`` in time order, one :meth:`tick` per distinct time: a replay."""
        by_time: dict[float, list[tuple[int, float]]] = {}
        for s in series:
            i = self.track(s)
            for t, v in zip(s.times, s.values, strict=True):
                by_time.setdefault(t, []).append((i, v))
        for t in sorted(by_time):
            for i, v in by_time[t]:
                self.push(i, t, v)
            self.tick(t)
