"""The streaming detectors agree with the batch ones: sample by sample on hand-made series, and over a whole twin
with faults and noise; the replay of a twin ends with the batch engine's incidents, each first raised no earlier
than its fault began."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.health.conftest import series

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.health.detect import Symptom, Thresholds, detect
from unifab.health.detect_state import detect_state
from unifab.health.engine import run_health
from unifab.health.events import read_events
from unifab.health.replay import replay
from unifab.health.score import epoch
from unifab.health.series import Series, SeriesStore, read_bundle
from unifab.health.stream import Stream
from unifab.sources import as_source_path
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate

KINDS = ("link-flap", "optic-dirty", "lossless-drops", "host-dead", "leaf-down", "nic-down", "ecn-absent", "pfc-storm")


def key(s: Symptom) -> tuple[str, str, str, float]:
    return (s.detector, s.entity, s.counter, s.start)


def batch(store: SeriesStore, t: Thresholds | None = None) -> list[Symptom]:
    return detect(store, t) + detect_state(store, t)


def streamed(store: SeriesStore, t: Thresholds | None = None) -> list[Symptom]:
    stream = Stream(t)
    stream.feed(store.series.values())
    return stream.symptoms()


def store_of(*many: Series) -> SeriesStore:
    store = SeriesStore()
    for s in many:
        store.series[s.key] = s
    return store


@pytest.mark.parametrize(
    ("metric", "values"),
    [
        ("unifab_port_fec_uncorrectable_total", [0, 0, 10, 25, 25, 40, 41]),  # fires at the third interval
        ("unifab_port_fec_uncorrectable_total", [0, 5, 5, 5, 5, 5, 9]),  # two blips far apart: never
        ("unifab_nic_rx_symbol_errors_total", [2**64 - 10, 2**64 - 2, 5, 30, 60]),  # a wrap counted across the top
        ("unifab_rdma_out_of_sequence_total", [100, 130, 3, 40, 80]),  # a reset counts the new value
        ("node_network_carrier_changes_total", [4, 6, 8, 8, 10, 12]),  # flaps
        ("node_infiniband_symbol_error_total", [65000, 65535, 65535, 65535]),  # saturated: unknown
        ("unifab_port_tx_pause_duration_us_total", [0, 2e7, 4e7, 6e7, 6.1e7]),  # 67 % of three intervals
    ],
)
def test_one_series_streamed_gives_the_batch_symptom(metric: str, values: list[float]) -> None:
    store = store_of(series(metric, [float(v) for v in values]))
    want, got = batch(store), streamed(store)
    assert [key(s) for s in got] == [key(s) for s in want]
    for a, b in zip(want, got, strict=True):
        assert (a.total, a.intervals, a.end) == (b.total, b.intervals, b.end)


def test_the_thresholds_apply_to_the_stream_too() -> None:
    store = store_of(series("unifab_port_fec_uncorrectable_total", [0.0, 0.0, 10.0, 20.0, 20.0]))
    assert streamed(store) == [] == batch(store)
    looser = Thresholds(error_intervals=2)
    assert [key(s) for s in streamed(store, looser)] == [key(s) for s in batch(store, looser)] != []


def test_a_link_state_that_comes_back_is_withdrawn() -> None:
    up = series("node_network_up", [1.0] + [0.0] * 12)
    stream = Stream()
    i = stream.track(up)
    for t, v in zip(up.times, up.values, strict=True):
        stream.push(i, t, v)
    [down] = stream.symptoms()
    assert down.start == up.times[1] and stream.version == 1
    stream.push(i, up.times[-1] + 30, 1.0)
    assert stream.symptoms() == [] and stream.version == 2


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("stream") / "b"
    generate(out, 128, 2, su_hosts=4)
    return out, write_faults(out, len(KINDS), 2, kinds=KINDS)


def test_a_stream_over_a_twin_ends_with_the_batch_symptoms(twin: tuple[Path, list[dict[str, Any]]]) -> None:
    bundle, _ = twin
    fabric = load_bundle(bundle)
    store = read_bundle(as_source_path(bundle), fabric)
    want, got = batch(store), streamed(store)
    assert {s.detector for s in want} >= {"HEALTH-FEC", "HEALTH-LINK-FLAP", "HEALTH-NODE-DOWN", "HEALTH-ECN-ABSENT"}
    assert sorted(map(key, got)) == sorted(map(key, want))


def test_the_replay_raises_each_fault_after_it_starts_and_ends_where_batch_does(
    twin: tuple[Path, list[dict[str, Any]]],
) -> None:
    bundle, faults = twin
    fabric = load_bundle(bundle)
    root = as_source_path(bundle)
    store, events, findings = read_bundle(root, fabric), read_events(root, fabric, 2026), run_checks(fabric)
    result = run_health(fabric, store, findings, events=events)
    timeline = replay(fabric, store, events, findings)
    assert list(timeline.final) == sorted(i.root for i in result.incidents)
    assert timeline.polls == len({t for s in store.series.values() for t in s.times})
    assert 0 < timeline.localized < timeline.polls  # only polls whose symptoms changed are localized again
    t = Thresholds()
    for fault in faults:
        began = epoch(fault["start"])
        raised = timeline.first_seen[fault["root_cause"]["id"]]
        assert raised >= began, fault
        if fault["kind"] in ("leaf-down", "nic-down"):
            assert raised - began >= t.down_after_s - 30.0, fault  # silence must last before it is a death
        if fault["kind"] == "lossless-drops":
            assert raised - began >= (t.drop_intervals - 1) * 30.0, fault
        if fault["kind"] == "pfc-storm":  # three intervals of pause before a storm
            assert raised - began >= (t.pause_intervals - 1) * 30.0, fault
