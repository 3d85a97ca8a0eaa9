"""Tests for the ``rdma statistic show`` / ``rdma statistic mode`` parser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from unifab.errors import ParseError
from unifab.parse.host.rdma_statistic import RdmaStatistic, RdmaStatLink, parse

GOLDEN = Path(__file__).parent / "golden"
GoldenCheck = Callable[[Path, object], None]
SAMPLE = "host/rdma_statistic_optional_counters_rocep8s0f0.txt"

MLX5_COUNTERS = (
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
)


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "stat.txt")
    return info.value


def unwrapped(sample: str) -> str:
    """The sample as the tool prints it: the mail author's wrapped ``show`` line joined back into one."""
    head, show = sample.split("$ rdma statistic show link rocep8s0f0/1\n")
    lines = show.rstrip("\n").split("\n")
    return head + "$ rdma statistic show link rocep8s0f0/1\n" + " ".join(lines[:-1]) + "\n" + lines[-1] + "\n"


# --- real sample ----------------------------------------------------------------------------------


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "rdma_statistic_optional_counters_rocep8s0f0.json", parse((samples / SAMPLE).read_text()))


def test_sample_values(samples: Path) -> None:
    stat = parse((samples / SAMPLE).read_text())
    link = stat.link("rocep8s0f0")
    assert link is not None and stat.links == (link,)
    assert list(link.counters) == [*MLX5_COUNTERS, "cc_rx_ce_pkts", "cc_tx_cnp_pkts"]
    assert set(link.counters.values()) == {0}
    assert link.optional_counters == ("cc_rx_ce_pkts", "cc_tx_cnp_pkts")


def test_real_unwrapped_form_reads_the_same(samples: Path) -> None:
    raw = (samples / SAMPLE).read_text()
    one_line = unwrapped(raw)
    assert one_line.count("\nlink rocep8s0f0/1 rx_write_requests 0 ") == 1
    assert len(one_line.splitlines()) == len(raw.splitlines()) - 6
    assert parse(one_line) == parse(raw)


# --- constructed variants -------------------------------------------------------------------------


def test_show_of_two_ports_without_optional_counters() -> None:
    # `rdma statistic show` on a host with two ports and no optional counters enabled
    raw = "".join(
        f"link mlx5_{i}/1 " + " ".join(f"{name} {i * 10 + n}" for n, name in enumerate(MLX5_COUNTERS)) + "\n"
        for i in range(2)
    )
    stat = parse(raw)
    assert [(x.dev, x.port, x.optional_counters) for x in stat.links] == [("mlx5_0", 1, ()), ("mlx5_1", 1, ())]
    assert stat.links[1].counters["np_cnp_sent"] == 36


def test_pretty_output() -> None:
    # `rdma -p statistic show`: every pair on its own indented line
    raw = "link mlx5_2/1 \n    rx_write_requests 5\n    out_of_sequence 2\n    Optional-set: cc_rx_ce_pkts 7\n"
    assert parse(raw).links == (
        RdmaStatLink(
            "mlx5_2", 1, {"rx_write_requests": 5, "out_of_sequence": 2, "cc_rx_ce_pkts": 7}, ("cc_rx_ce_pkts",)
        ),
    )


def test_mode_only() -> None:
    raw = "link mlx5_0/1\n    Optional-set: cc_rx_ce_pkts cc_rx_cnp_pkts cc_tx_cnp_pkts\nlink mlx5_1/1\n"
    stat = parse(raw)
    assert stat == RdmaStatistic(
        (
            RdmaStatLink("mlx5_0", 1, {}, ("cc_rx_ce_pkts", "cc_rx_cnp_pkts", "cc_tx_cnp_pkts")),
            RdmaStatLink("mlx5_1", 1, {}, ()),
        )
    )
    assert stat.link("mlx5_1", 2) is None


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n", "$ rdma statistic show\n"])
def test_nothing_to_read(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "link <dev>/<port>" in err.expected


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        ("rx_write_requests 0\n", 1, "'link <dev>/<port> ...'"),
        ("    Optional-set: cc_rx_ce_pkts\n", 1, "before 'Optional-set:'"),
        ("link mlx5_0/1 rx_write_requests zero\n", 1, "unsigned integer after rx_write_requests"),
        ("link mlx5_0/1 rx_write_requests 0\nout_of_sequence\n", 2, "value after out_of_sequence"),
        ("link mlx5_0/1 rx_write_requests 0\n0 out_of_sequence\n", 2, "counter name"),
        ("link mlx5_0/1 a 1\nlink mlx5_0/1 a 2\n", 2, "a once for link mlx5_0/1"),
        ("link mlx5_0/1\n  Optional-set: cc_rx_ce_pkts 0 1x 2\n", 2, "optional counter name"),
    ],
)
def test_errors_name_the_line(raw: str, line: int, message: str) -> None:
    err = parse_error(raw)
    assert (err.source, err.line) == ("stat.txt", line)
    assert message in err.expected
