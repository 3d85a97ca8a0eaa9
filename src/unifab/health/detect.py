"""Detectors: pure functions from counter series to symptoms (what one entity shows, from when).

Every detector asks for **persistence**, not a single increment: a reboot flaps a link once, a cosmic ray costs
one CRC error, a driver reload resets every counter; none of that is an incident. Each fires on an entity only
when its counter rose in enough intervals of a sliding window (:class:`Thresholds`, defaults below), and its
symptom starts at the first of those intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from unifab.health.detect_ib import ib_congestion
from unifab.health.series import Interval, Series, SeriesStore, changes, intervals
from unifab.health.symptom import Symptom, Thresholds
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
    "pre_fec_ber",
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
FEC_COUNTERS = ("fec_uncorrectable", "symbol_errors", "crc_errors", "rcv_errors", "link_error_recovery")
# InfiniBand's LinkErrorRecoveryCounter counts retrains (the link recovered without going down): each one is an
# event like a flap, not one of many bit errors, so it is judged with the flap thresholds (HEALTH-FEC: a marginal
# link). PortRcvRemotePhysicalErrors is not judged: the packet was marked bad upstream, another link's fault.
RECOVERY_COUNTERS = ("link_error_recovery",)
BER_COUNTERS = ("corrected_bits", "rx_bits")  # the pre-FEC BER's numerator and denominator, one entity
# RDMA's own loss counters at a NIC, and a switch port's drops in a lossless egress queue or ingress PG
DROP_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "queue_drops", "pg_drops")
PAUSE_COUNTERS = ("pause_tx_us",)
WATCHDOG_COUNTERS = ("pfcwd_storms",)  # a switch queue's PFC watchdog storms: evidence of its *peer's* storm

DETECTORS = {
    LINK_FLAP: "the link went down and up repeatedly (carrier changes, link-down counts)",
    FEC: (
        "errors FEC could not correct (uncorrectable FEC blocks, symbol or CRC errors), interval after interval; or"
        " a pre-FEC bit error ratio (bits FEC corrected per bit received) at the warning level before FEC fails"
    ),
    LOSSLESS_DROPS: (
        "RoCE packets lost on a lossless class (out-of-sequence, packet sequence errors, ACK timeouts at a NIC;"
        " drops in a switch port's egress queue of a PFC-enabled priority)"
    ),
    PFC_STORM: (
        "the end's receive path is stuck and stalls its peer: it sent PFC pause most of the time (Ethernet), or its"
        " InfiniBand peer waited for credits (XmitWait) interval after interval, the end furthest downstream"
    ),
    OPTICS: "a transceiver's DOM (rx/tx power, bias, temperature, voltage) beyond its own alarm or warning levels",
    ECN_ABSENT: "a NIC paused by PFC again and again with no ECN mark or CNP: congestion control is not working",
    GPU_XID: "a GPU logged an Xid the vendor's catalog treats as a hardware or driver fault",
    NODE_DOWN: "a host or NIC went silent (its series stop) or lost every link, while the rest reports",
    SWITCH_DOWN: "a switch went silent or lost every link at once, while the rest reports",
    NCCL_ERROR: (
        "NCCL work requests failed (completion errors) between NICs whose paths share one link; or NCCL RAS keeps"
        " naming a job process it gets no answer from (missing in queries in a row, or declared dead)"
    ),
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
    if series.counter in RECOVERY_COUNTERS:  # retrains: events, with the flap thresholds
        first = _window(hits, 1, t.flap_window_s, t.flap_events)
    else:
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


def pfcwd_storm(series: Series, t: Thresholds) -> Symptom | None:
    """A switch queue's PFC watchdog found it paused past its detection time, acted and restored it, and found it
    again: ``pfcwd_storms`` storms within ``pause_window_s``. One storm is the watchdog doing its job on a
    transient; storms that return mean the peer keeps sending pause, a stuck receiver. The symptom is on the
    port; localization puts it on the port's peer, the end that sends the pauses (rule 6)."""
    if series.counter not in WATCHDOG_COUNTERS:
        return None
    spans, hits, peak = _increments(series)
    first = _window(hits, 1, t.pause_window_s, float(t.pfcwd_storms))
    if first is None:
        return None
    symptom = _symptom(PFC_STORM, series, spans, hits, first, peak)
    return replace(symptom, notes=(watchdog_note(series.endpoint, series.qualifier), *symptom.notes))


def watchdog_note(port: Endpoint, queue: str) -> str:
    """What a watchdog symptom says once it is on the port's peer: whose watchdog, on which queue."""
    return (
        f"{port.node} {port.port} queue {queue}: its PFC watchdog keeps detecting storms (paused past its detection "
        "time, restored, paused again)"
    )


def pre_fec_ber(series: Iterable[Series], t: Thresholds) -> list[Symptom]:
    """A warning before uncorrectable errors: the bits FEC corrected per bit received (``corrected_bits`` over
    ``rx_bits`` of the same entity and interval) at or above ``ber_warn`` in ``error_intervals`` intervals within
    ``error_window_s``. FEC still delivers every frame; the margin is going (a dirty connector, a failing laser),
    and uncorrectable errors follow when the ratio reaches the code's limit. An interval whose bits are unknown (a
    reset, a gap) or zero counts as nothing."""
    by_entity: dict[str, dict[str, Series]] = {}
    for s in series:
        if s.counter in BER_COUNTERS:
            by_entity.setdefault(s.entity, {})[s.counter] = s
    out: list[Symptom] = []
    for _entity, pair in sorted(by_entity.items()):
        corrected, bits = pair.get("corrected_bits"), pair.get("rx_bits")
        if corrected is None or bits is None or not changes(corrected):
            continue
        received = {(i.start, i.end): i.delta for i in intervals(bits) if i.delta}
        spans = intervals(corrected)
        ratios = [(i, i.delta / received[(i.start, i.end)]) for i in spans if i.delta and (i.start, i.end) in received]
        hits = [(i, ber) for i, ber in ratios if ber >= t.ber_warn]
        first = _window(hits, t.error_intervals, t.error_window_s, 0.0)
        if first is None:
            continue
        peak = max(ber for _, ber in ratios)
        symptom = _symptom(FEC, corrected, spans, hits, first, peak)
        note = f"pre-FEC BER up to {peak:.1e} (warning at {t.ber_warn:.1e}): FEC still corrects, its margin is going"
        out.append(
            replace(
                symptom,
                counter="pre_fec_ber",
                total=sum(i.delta or 0.0 for i, _ in hits[first:]),
                notes=(note, *symptom.notes),
            )
        )
    return out


DETECTOR_FUNCTIONS = (link_flap, fec, lossless_drops, pfc_storm, pfcwd_storm)


def detect(store: SeriesStore | Iterable[Series], thresholds: Thresholds | None = None) -> list[Symptom]:
    """Every symptom of every series, in a stable order (entity, detector, counter); with InfiniBand credit
    starvation over the perfquery series (:func:`unifab.health.detect_ib.ib_congestion`, which judges all ports
    at once: batch only, the stream has no such rule)."""
    t = thresholds or Thresholds()
    series = list(store.series.values() if isinstance(store, SeriesStore) else store)
    found = [s for one in series if changes(one) for fn in DETECTOR_FUNCTIONS if (s := fn(one, t)) is not None]
    found += ib_congestion(series, t)
    found += pre_fec_ber(series, t)
    return sorted(found, key=lambda s: (s.entity, s.detector, s.counter))
