"""Detectors that look at several series at once: congestion control without ECN, and devices that are down.

* **HEALTH-ECN-ABSENT**: a NIC receives PFC pause for a real share of several intervals (``pause_rx_us``) while
  none of its congestion-control counters moves (``ecn_marked``, ``cnp_sent``, ``cnp_handled``). With ECN and
  DCQCN working, congestion shows as marks and CNPs first and pauses stay rare; pauses alone mean the switch queue
  does not mark or the NICs do not react. Only NICs that export at least one of those counters are judged.
* **HEALTH-NODE-DOWN / HEALTH-SWITCH-DOWN**: a device (``host:``/``switch:``) whose every series stops (or pauses)
  for :attr:`~unifab.health.detect.Thresholds.down_after_s` while other devices keep reporting; a NIC whose series
  stop while its host's others continue (``nic:``); and an end whose link-state gauge (``oper_up``) drops to 0 and
  stays there that long (``nic:`` for hosts, ``port:`` for switches). Localization turns "every link of a device"
  into the device, and the far ends of a dead device into its incident.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from unifab.health.detect import ECN_ABSENT, NODE_DOWN, SWITCH_DOWN, Symptom, Thresholds, _window
from unifab.health.series import Interval, Series, SeriesStore, intervals
from unifab.model import Endpoint

__all__ = ["CC_COUNTERS", "detect_state", "device_down", "ecn_absent"]

CC_COUNTERS = ("ecn_marked", "cnp_sent", "cnp_handled")


def ecn_absent(store: SeriesStore, t: Thresholds) -> list[Symptom]:
    by_entity: dict[str, list[Series]] = {}
    for s in store.series.values():
        if s.counter == "pause_rx_us" or s.counter in CC_COUNTERS:
            by_entity.setdefault(s.entity, []).append(s)
    out: list[Symptom] = []
    for entity, group in sorted(by_entity.items()):
        cc = [s for s in group if s.counter in CC_COUNTERS]
        if not cc:
            continue
        for pause in (s for s in group if s.counter == "pause_rx_us"):
            spans = intervals(pause)
            shares = [(i, r / 1e6) for i in spans if (r := i.rate) is not None]
            hits = [(i, share) for i, share in shares if share >= t.ecn_pause_share]
            first = _window(hits, t.ecn_intervals, t.ecn_window_s, 0.0)
            if first is None:
                continue
            start, end = hits[first][0].start, hits[-1][0].end
            marks = sum(
                i.delta for s in cc for i in intervals(s) if i.delta and i.end > start and i.start < end and i.delta > 0
            )
            if marks:
                continue
            fired = hits[first:]
            out.append(
                Symptom(
                    ECN_ABSENT,
                    entity,
                    pause.endpoint,
                    f"pause_rx_us{{{pause.qualifier}}}" if pause.qualifier else "pause_rx_us",
                    start,
                    end,
                    sum((i.delta or 0.0) for i, _ in fired),
                    len(fired),
                    max(s for _, s in shares),
                    sum(1 for i in spans if i.gap),
                    (f"no {', '.join(sorted({s.counter for s in cc}))} increment while paused",),
                )
            )
    return out


@dataclass(slots=True)
class _Device:
    node: str
    kind: str  # "host" | "switch"
    times: set[float]
    step: float
    last: float


def _devices(store: SeriesStore) -> dict[str, _Device]:
    out: dict[str, _Device] = {}
    for s in store.series.values():
        if not s.times:
            continue
        kind = "switch" if s.entity.startswith("port:") else "host"
        d = out.setdefault(s.endpoint.node, _Device(s.endpoint.node, kind, set(), 0.0, s.times[-1]))
        d.times.update(s.times)
        d.step = max(d.step, s.step())
        d.last = max(d.last, s.times[-1])
    return out


def _silences(times: Iterable[float], step: float, until: float, after: float) -> list[tuple[float, float]]:
    """(first missed sample, resumed or ``until``) for every silence of at least ``after`` seconds."""
    ordered = sorted(times)
    points = [*ordered, until + step] if ordered and until - ordered[-1] >= after else ordered
    return [(a + step, b) for a, b in itertools.pairwise(points) if b - a - step >= after - step / 2]


def device_down(store: SeriesStore, t: Thresholds) -> list[Symptom]:
    span = store.span()
    if span is None:
        return []
    devices = _devices(store)
    if len(devices) < 2:
        return []  # nobody else reports: a short file, not a dead device
    out: list[Symptom] = []
    for node, d in sorted(devices.items()):
        others = max((o.last for n, o in devices.items() if n != node), default=span[0])
        for start, resumed in _silences(d.times, d.step, others, t.down_after_s):
            detector, entity = (SWITCH_DOWN, f"switch:{node}") if d.kind == "switch" else (NODE_DOWN, f"host:{node}")
            note = "every series stops" if resumed > others else f"silent until {resumed:.0f} (restarted?)"
            out.append(Symptom(detector, entity, Endpoint(node, ""), "series", start, resumed, 0.0, 0, 0.0, 0, (note,)))
    out.extend(_nics_silent(store, devices, t))
    out.extend(_links_down(store, t))
    return out


def _nics_silent(store: SeriesStore, devices: dict[str, _Device], t: Thresholds) -> list[Symptom]:
    last: dict[str, tuple[float, Series]] = {}
    for s in store.series.values():
        if s.times and s.entity.startswith("nic:"):
            seen = last.get(s.entity)
            if seen is None or s.times[-1] > seen[0]:
                last[s.entity] = (s.times[-1], s)
    out = []
    for entity, (when, s) in sorted(last.items()):
        host = devices.get(s.endpoint.node)
        if host is None or host.last - when < t.down_after_s:
            continue
        step = s.step()
        out.append(
            Symptom(
                NODE_DOWN,
                entity,
                s.endpoint,
                "series",
                when + step,
                host.last,
                0.0,
                0,
                0.0,
                0,
                (f"its series stop while {s.endpoint.node}'s others report",),
            )
        )
    return out


def _links_down(store: SeriesStore, t: Thresholds) -> list[Symptom]:
    """An end whose oper_up gauge fell to 0 and stayed there for ``down_after_s`` (up to its last sample)."""
    out = []
    for s in sorted(store.series.values(), key=lambda x: x.key):
        if not s.spec.gauge or s.counter != "oper_up" or not s.values or s.values[-1] != 0:
            continue
        k = len(s.values) - 1
        while k > 0 and s.values[k - 1] == 0:
            k -= 1
        if k == 0 or s.times[-1] - s.times[k] < t.down_after_s:
            continue  # down from the first sample: not something that happened here
        drop = Interval(s.times[k - 1], s.times[k], None)
        detector = SWITCH_DOWN if s.entity.startswith("port:") else NODE_DOWN
        out.append(
            Symptom(detector, s.entity, s.endpoint, "oper_up", drop.end, s.times[-1], 1.0, 1, 0.0, 0, ("link down",))
        )
    return out


def detect_state(store: SeriesStore, thresholds: Thresholds | None = None) -> list[Symptom]:
    t = thresholds or Thresholds()
    return ecn_absent(store, t) + device_down(store, t)
