"""The pre-FEC BER warning: bits FEC corrected per bit received (mlx5 ``rx_corrected_bits_phy`` over
``rx_bits_phy``), from successive ``ethtool -S`` snapshots, warns before any uncorrected error: an optic incident
that replaces the module and drains nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.health.conftest import small_fabric

from unifab.errors import IntentError
from unifab.health.detect import FEC, Thresholds, detect, pre_fec_ber
from unifab.health.localize import localize
from unifab.health.series import METRICS, SeriesStore
from unifab.health.snapshot_series import ROUNDS_DIR, read_rounds
from unifab.health.thresholds import from_text
from unifab.sources import as_source_path

SAMPLE = Path(__file__).parents[1] / "data" / "health" / "ethtool_S_mlx5_phy_statistical.txt"
T0 = 1764547200
STEP = 60
BITS = int(400e9 * STEP)  # a 400G link's bits in one round


def rounds(tmp_path: Path, bers: list[float]) -> SeriesStore:
    """One round per BER after the first: gpu001's eth0 received BITS bits and FEC corrected BITS * ber of them."""
    text = SAMPLE.read_text()
    assert "rx_bits_phy: " in text and "rx_corrected_bits_phy: 17\n" in text
    bits, corrected = 98304000000000, 17
    for k, ber in enumerate([0.0, *bers]):
        bits += BITS if k else 0
        corrected += int(BITS * ber)
        body = text.replace("rx_bits_phy: 98304000000000", f"rx_bits_phy: {bits}").replace(
            "rx_corrected_bits_phy: 17\n", f"rx_corrected_bits_phy: {corrected}\n"
        )
        path = tmp_path / "b" / ROUNDS_DIR / str(T0 + k * STEP) / "hosts" / "gpu001" / "cmd" / "ethtool-S" / "eth0.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    store = read_rounds(as_source_path(tmp_path / "b"), small_fabric())
    assert store.problems == []
    return store


def test_the_sample_counters_become_series() -> None:
    assert METRICS["unifab_nic_rx_corrected_bits_total"].counter == "corrected_bits"
    assert METRICS["unifab_nic_rx_bits_total"].counter == "rx_bits"


def test_a_healthy_link_corrects_a_few_bits_and_is_no_symptom(tmp_path: Path) -> None:
    store = rounds(tmp_path, [1e-8] * 10)
    assert store.series[("nic:gpu001:mlx5_0", "corrected_bits", "")].values[-1] > 10_000
    assert detect(store) == []


def test_a_rising_pre_fec_ber_warns_before_any_uncorrected_error(tmp_path: Path) -> None:
    store = rounds(tmp_path, [1e-8] * 5 + [2e-6, 3e-5, 4e-5, 6e-5, 8e-5])
    [s] = detect(store)
    assert (s.detector, s.entity, s.counter) == (FEC, "nic:gpu001:mlx5_0", "pre_fec_ber")
    assert s.start == T0 + 6 * STEP and s.intervals == 4  # 2e-6 is under the warning level
    assert s.peak == pytest.approx(8e-5) and "pre-FEC BER up to 8.0e-05" in s.notes[0]
    assert not [x for x in store.series.values() if x.counter == "symbol_errors" and max(x.values) > 0]
    [incident] = localize(small_fabric(), [s])
    assert (incident.kind, incident.root, incident.confidence) == ("optic", "optic:gpu001:eth0", 0.5)
    assert "no uncorrected error yet" in incident.summary and incident.jobs == ("job:slurm:7",)
    assert [a.kind for a in incident.actions] == ["replace"]  # a warning: replace in a window, drain nothing


def test_the_warning_level_comes_from_the_intent(tmp_path: Path) -> None:
    store = rounds(tmp_path, [5e-5] * 6)
    assert len(pre_fec_ber(store.series.values(), Thresholds())) == 1
    looser = from_text("version: 1\nhealth:\n  fec: {ber_warn: 1.0e-4}\n", "fabric.yaml")
    assert looser.ber_warn == 1e-4 and pre_fec_ber(store.series.values(), looser) == []


def test_bits_unknown_is_no_ratio(tmp_path: Path) -> None:
    store = rounds(tmp_path, [5e-5] * 6)
    del store.series[("nic:gpu001:mlx5_0", "rx_bits", "")]  # an older kernel: no rx_bits_phy
    assert pre_fec_ber(store.series.values(), Thresholds()) == []


def test_a_ber_written_without_a_dot_is_the_number_and_a_word_is_named() -> None:
    """PyYAML reads ``1e-5`` as a string (YAML 1.1 wants ``1.0e-5``): it still means 1e-5; a word is an error."""
    assert from_text("version: 1\nhealth:\n  fec: {ber_warn: 1e-5}\n", "fabric.yaml").ber_warn == 1e-5
    with pytest.raises(IntentError, match=r"fabric.yaml:3: health.fec.ber_warn: Input should be a valid number"):
        from_text("version: 1\nhealth:\n  fec: {ber_warn: often}\n", "fabric.yaml")
