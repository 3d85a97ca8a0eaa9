"""Counter arithmetic (resets, 32/64-bit wraps, saturation, gaps) and reading the bundle's OpenMetrics files."""

from __future__ import annotations

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from unifab.errors import ParseError
from unifab.health.openmetrics import Sample, dump, parse
from unifab.health.series import METRICS, Series, build_store, intervals
from unifab.model import Endpoint, Fabric


def series(metric: str, values: list[float], times: list[float] | None = None) -> Series:
    spec = METRICS[metric]
    ts = times if times is not None else [1000.0 + i * 30.0 for i in range(len(values))]
    return Series("nic:h:mlx5_0", Endpoint("h", "eth0"), spec.counter, "", spec, metric, list(ts), list(values))


def deltas(metric: str, values: list[float], times: list[float] | None = None) -> list[float | None]:
    return [i.delta for i in intervals(series(metric, values, times))]


def test_plain_increments_and_rate() -> None:
    spans = intervals(series("unifab_nic_rx_crc_errors_total", [5, 5, 8, 20]))
    assert [i.delta for i in spans] == [0, 3, 12]
    assert spans[2].rate == pytest.approx(12 / 30)
    assert not any(i.gap or i.event for i in spans)


def test_reset_counts_from_zero_never_negative() -> None:
    spans = intervals(series("unifab_rdma_out_of_sequence_total", [1000, 1010, 4, 9]))
    assert [i.delta for i in spans] == [10, 4, 5]
    assert spans[1].event == "reset"


def test_32_bit_wrap() -> None:
    top = 2**32
    spans = intervals(series("node_network_carrier_changes_total", [top - 4, top - 2, 2]))
    assert [i.delta for i in spans] == [2, 4]
    assert spans[1].event == "wrap"


def test_64_bit_wrap_keeps_every_digit() -> None:
    top = 2**64
    assert deltas("unifab_nic_tx_pause_duration_us_total", [top - 1000, top - 10, 990]) == [990, 1000]


def test_a_low_value_dropping_is_a_reset_not_a_wrap() -> None:
    # a 64-bit counter at 5e9 cannot wrap to 100: the driver reloaded
    assert deltas("unifab_nic_rx_symbol_errors_total", [5_000_000_000, 100]) == [100]


def test_saturating_16_bit_counter_is_a_lower_bound_then_unknown() -> None:
    spans = intervals(series("node_infiniband_symbol_error_total", [65000, 65535, 65535, 65535]))
    assert [i.delta for i in spans] == [535, None, None]
    assert [i.event for i in spans] == ["saturated"] * 3


def test_saturated_8_bit_counter_cleared_by_perfquery_reset() -> None:
    assert deltas("node_infiniband_link_downed_total", [255, 255, 3]) == [None, 3]


def test_gap_is_marked_and_not_filled_in() -> None:
    times = [0.0, 30.0, 60.0, 180.0, 210.0]  # two scrapes missed between 60 and 180
    spans = intervals(series("unifab_nic_rx_crc_errors_total", [0, 1, 2, 14, 15], times))
    assert len(spans) == 4  # no invented samples
    assert [i.gap for i in spans] == [False, False, True, False]
    assert spans[2].delta == 12 and spans[2].rate == pytest.approx(12 / 120)


def test_a_drop_across_a_gap_is_unknown() -> None:
    times = [0.0, 30.0, 60.0, 300.0]
    spans = intervals(series("unifab_nic_rx_crc_errors_total", [0, 10, 20, 5], times))
    assert spans[2].delta is None and spans[2].gap and spans[2].event == "reset"


def _om(lines: list[str]) -> str:
    return "\n".join(lines) + "\n# EOF\n"


def test_parse_matches_prometheus_client_on_a_dump() -> None:
    samples = [
        Sample("unifab_port_in_errors_total", (("instance", "leaf0"), ("interface", "Ethernet0")), v, 1000.0 + 30 * i)
        for i, v in enumerate([0, 2, 5, 2**64 - 1])
    ] + [Sample("node_network_carrier_changes_total", (("device", "eth0"), ("instance", 'g"1\\')), 4, 1000.5)]
    text = dump(samples, {"unifab_port_in_errors", "node_network_carrier_changes"})
    ours = [(s.name, dict(s.labels), float(s.value), s.timestamp) for s in parse(text, "x.om")]
    theirs = [
        (s.name, s.labels, float(s.value), float(s.timestamp.sec + s.timestamp.nsec / 1e9) if s.timestamp else None)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]
    assert ours == theirs
    assert parse(text, "x.om")[3].value == 2**64 - 1  # an int: exact


def test_parse_exemplar_and_no_labels() -> None:
    text = _om(["# TYPE a counter", 'a_total{x="1"} 3 10 # {trace_id="k"} 1', "b 2.5"])
    assert [(s.name, s.value, s.timestamp) for s in parse(text, "f")] == [("a_total", 3, 10.0), ("b", 2.5, None)]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (_om(["a_total{x=1} 3 10"]), 1),
        (_om(["# TYPE a counter", 'a_total{x="1"} three 10']), 2),
        ("a 1 1\n# EOF\na 2 2\n", 3),
        (_om(["a 1 1 1"]), 1),
        (_om(['a{x="1",x="2"} 1']), 1),
    ],
)
def test_parse_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(ParseError) as err:
        parse(text, "telemetry/x.om")
    assert err.value.line == line


def test_store_puts_samples_on_the_fabrics_entities(fabric: Fabric) -> None:
    text = _om(
        [
            'unifab_rdma_out_of_sequence_total{instance="gpu001:9100",device="mlx5_1",port="1"} 3 20',
            'unifab_rdma_out_of_sequence_total{instance="gpu001:9100",device="mlx5_1",port="1"} 1 10',
            'node_network_carrier_changes_total{instance="gpu002",device="eth0"} 2 10',
            'unifab_port_in_errors_total{instance="leaf0",interface="Ethernet8"} 0 10',
            'unifab_port_in_errors_total{interface="Ethernet8"} 0 10',
            'unknown_metric_total{instance="leaf0"} 0 10',
        ]
    )
    store = build_store(((s, "t.om") for s in parse(text, "t.om")), fabric)
    oos = store.series[("nic:gpu001:mlx5_1", "out_of_sequence", "")]
    assert (oos.endpoint.node, oos.endpoint.port) == ("gpu001", "eth1")
    assert oos.times == [10.0, 20.0] and oos.values == [1, 3]  # sorted by time
    assert ("nic:gpu002:mlx5_0", "carrier_changes", "") in store.series
    assert ("port:leaf0:Ethernet8", "crc_errors", "") in store.series
    assert store.problems == [
        "t.om: unifab_port_in_errors_total samples without a device label cannot be put on a series"
    ]
