"""Each detector fires on a persistent fault and stays quiet on a single transient increment."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from unifab.health.detect import FEC, LINK_FLAP, LOSSLESS_DROPS, PFC_STORM, Thresholds, detect
from unifab.health.series import Series

MakeSeries = Callable[..., Series]


def cumulative(start: float, increments: list[float]) -> list[float]:
    out = [start]
    for inc in increments:
        out.append(out[-1] + inc)
    return out


def fired(series: Series) -> list[str]:
    return [s.detector for s in detect([series])]


def test_link_flap_fires_on_repeated_flaps_from_the_first(make_series: MakeSeries) -> None:
    # carrier_changes: +2 per flap, a flap every 2 minutes from interval 10
    inc = [0.0] * 10 + [2.0 if i % 4 == 0 else 0.0 for i in range(30)]
    s = make_series("node_network_carrier_changes_total", cumulative(6, inc))
    [symptom] = detect([s])
    assert symptom.detector == LINK_FLAP and symptom.start == 1000 + 10 * 30
    assert symptom.total >= 3


@pytest.mark.parametrize("metric", ["node_network_carrier_changes_total", "unifab_port_link_down_total"])
def test_one_flap_a_reboot_is_not_an_incident(make_series: MakeSeries, metric: str) -> None:
    inc = [0.0] * 40
    inc[12] = 2.0 if "carrier" in metric else 1.0
    assert fired(make_series(metric, cumulative(4, inc))) == []


def test_link_flap_on_an_8_bit_ib_counter(make_series: MakeSeries) -> None:
    assert fired(make_series("node_infiniband_link_downed_total", [250, 251, 253, 255, 255, 255])) == [LINK_FLAP]


def test_fec_fires_on_persistent_uncorrected_errors(make_series: MakeSeries) -> None:
    inc = [0.0] * 5 + [12.0] * 20
    assert fired(make_series("unifab_port_fec_uncorrectable_total", cumulative(0, inc))) == [FEC]


@pytest.mark.parametrize("metric", ["unifab_port_fec_uncorrectable_total", "unifab_nic_rx_symbol_errors_total"])
def test_fec_ignores_a_single_burst_and_rare_singles(make_series: MakeSeries, metric: str) -> None:
    single = [0.0] * 40
    single[7] = 5.0
    rare = [1.0 if i % 25 == 0 else 0.0 for i in range(100)]  # one error every 12.5 minutes
    assert fired(make_series(metric, cumulative(10, single))) == []
    assert fired(make_series(metric, cumulative(10, rare))) == []


def test_fec_not_fooled_by_a_reset_or_a_wrap(make_series: MakeSeries) -> None:
    values = [500.0, 500.0, 0.0, 0.0, 0.0]  # the driver reloaded: the counter restarts, nothing was counted
    assert fired(make_series("unifab_nic_rx_crc_errors_total", values)) == []
    values = [2.0**64 - 2, 2.0**64 - 2, 1.0]  # a wrap counts 3, once
    assert fired(make_series("unifab_nic_rx_crc_errors_total", values)) == []


def test_lossless_drops(make_series: MakeSeries) -> None:
    inc = [0.0] * 3 + [40.0, 0.0, 35.0, 60.0, 20.0]
    assert fired(make_series("unifab_rdma_packet_seq_err_total", cumulative(100, inc))) == [LOSSLESS_DROPS]
    blip = [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]
    assert fired(make_series("unifab_rdma_out_of_sequence_total", cumulative(100, blip))) == []


def test_pfc_storm_is_a_share_of_time(make_series: MakeSeries) -> None:
    busy = [0.8 * 30e6] * 6  # 80 % of every 30 s spent sending pause
    benign = [0.03 * 30e6] * 40
    spike = [0.03 * 30e6] * 10 + [0.9 * 30e6] + [0.03 * 30e6] * 10  # one congested interval
    assert fired(make_series("unifab_nic_tx_pause_duration_us_total", cumulative(0, benign + busy))) == [PFC_STORM]
    assert fired(make_series("unifab_nic_tx_pause_duration_us_total", cumulative(0, benign))) == []
    assert fired(make_series("unifab_nic_tx_pause_duration_us_total", cumulative(0, spike))) == []


def test_thresholds_are_settings(make_series: MakeSeries) -> None:
    inc = [0.0] * 5 + [2.0]
    s = make_series("node_network_carrier_changes_total", cumulative(0, inc))
    assert detect([s], Thresholds(flap_events=1)) != [] and detect([s]) == []
