"""``rdma_statistic.render``: ``rdma statistic show`` text written from records reads back the same."""

from __future__ import annotations

from pathlib import Path

from unifab.parse.host.rdma_statistic import RdmaStatistic, RdmaStatLink, dump, parse

SAMPLE = "host/rdma_statistic_optional_counters_rocep8s0f0.txt"


def test_real_sample_round_trips(samples: Path) -> None:
    record = parse((samples / SAMPLE).read_text(), SAMPLE)
    text = dump(record)
    assert parse(text, "rendered") == record
    assert text.split("\n")[1] == "    Optional-set: cc_rx_ce_pkts 0 cc_tx_cnp_pkts 0"


def test_links_and_mode_shape_round_trip() -> None:
    record = RdmaStatistic(
        (
            RdmaStatLink(
                "mlx5_0", 1, {"rx_write_requests": 12, "np_cnp_sent": 7, "cc_rx_ce_pkts": 5}, ("cc_rx_ce_pkts",)
            ),
            RdmaStatLink("mlx5_1", 1, {"rp_cnp_handled": 3}, ("cc_rx_ce_pkts", "cc_tx_cnp_pkts")),
            RdmaStatLink("bnxt_re0", 2, {}, ()),
        )
    )
    text = dump(record)
    assert text.split("\n")[:2] == [
        "link mlx5_0/1 rx_write_requests 12 np_cnp_sent 7",
        "    Optional-set: cc_rx_ce_pkts 5",
    ]
    assert "    Optional-set: cc_rx_ce_pkts cc_tx_cnp_pkts" in text
    assert parse(text, "rendered") == record
