"""Tests for the ``ethtool -S`` parser (mlx5 names of old and new kernels).

No full capture of ours exists (host-nic-roce.md §6: no public modern ``ethtool -S`` with per-priority PFC
counters). The inputs are reconstructed: names from the kernel's mlx5 ``counters.rst`` (§2.6) and, for
the old kernel, from the counter list of isc-projects/ethq ``tests/mlx5_core`` plus the ``prio<p>_<name>``
per-priority names of kernels <= 4.7; values are made up.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.ethtool_stats import canonical, canonical_name, dump, parse, per_priority

# Current mlx5 (kernel 5.x/6.x), PFC on priority 3 only: the per-priority pause counters exist for prio 3.
NEW_KERNEL = (
    "NIC statistics:\n"
    "     rx_packets: 9182736455\n"
    "     rx_bytes: 37187364099812\n"
    "     tx_packets: 9011223344\n"
    "     tx_bytes: 36501928374650\n"
    "     rx_out_of_buffer: 12\n"
    "     rx_vport_rdma_unicast_packets: 8812736455\n"
    "     rx_vport_rdma_unicast_bytes: 36187364099812\n"
    "     tx_vport_rdma_unicast_packets: 8611223344\n"
    "     tx_vport_rdma_unicast_bytes: 35501928374650\n"
    "     rx_packets_phy: 9182736500\n"
    "     rx_crc_errors_phy: 0\n"
    "     rx_oversize_pkts_phy: 0\n"
    "     rx_symbol_err_phy: 0\n"
    "     rx_pause_ctrl_phy: 120033\n"
    "     tx_pause_ctrl_phy: 98765\n"
    "     rx_discards_phy: 4\n"
    "     tx_discards_phy: 0\n"
    "     rx_buffer_passed_thres_phy: 88\n"
    "     rx_corrected_bits_phy: 17\n"
    "     rx_err_lane_0_phy: 0\n"
    "     link_down_events_phy: 1\n"
    "     tx_pause_storm_warning_events: 0\n"
    "     tx_pause_storm_error_events: 0\n"
    + "".join(
        f"     rx_prio{p}_bytes: {p * 1000}\n"
        f"     rx_prio{p}_packets: {p * 10}\n"
        f"     rx_prio{p}_discards: 0\n"
        f"     tx_prio{p}_bytes: {p * 2000}\n"
        f"     tx_prio{p}_packets: {p * 20}\n"
        for p in range(8)
    )
    + "     rx_prio3_pause: 120033\n"
    "     rx_prio3_pause_duration: 5400210\n"
    "     rx_prio3_pause_transition: 60011\n"
    "     tx_prio3_pause: 98765\n"
    "     tx_prio3_pause_duration: 4100500\n"
    "     rx_prio3_buf_discard: 0\n"
    "     rx_prio3_cong_discard: 0\n"
    "     rx_prio3_marked: 30211\n"
    "     ch0_events: 4242\n"
    "     rx0_packets: 5511\n"
    "     rx0_ecn_mark: 3\n"
    "     tx0_packets: 6622\n"
    "     tx0_nop: 2\n"
)

# Old mlx5 (kernel 4.5-4.7): IEEE 802.3 / RFC 2863 block names and prio<p>_<name> per-priority counters.
OLD_KERNEL = (
    "NIC statistics:\n"
    "     rx_packets: 5487361\n"
    "     frames_rx: 5487361\n"
    "     check_seq_err: 0\n"
    "     symbol_err: 0\n"
    "     pause_ctrl_rx: 310\n"
    "     pause_ctrl_tx: 290\n"
    "     in_discards: 6\n"
    "     out_discards: 0\n"
    "     p64octets: 497933\n"
    "     prio3_rx_octets: 1084993260\n"
    "     prio3_rx_frames: 5487361\n"
    "     prio3_rx_pause: 310\n"
    "     prio3_rx_pause_duration: 14001\n"
    "     prio3_tx_pause: 290\n"
    "     prio3_tx_pause_duration: 12020\n"
    "     prio3_rx_pause_transition: 155\n"
    "     rx0_packets: 393312\n"
    "     tx0_0_packets: 10253\n"
)


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "ethtool_S.txt")
    return info.value


def test_new_kernel_counters() -> None:
    stats = parse(NEW_KERNEL)
    assert len(stats) == 23 + 40 + 8 + 5
    assert next(iter(stats)) == "rx_packets"  # printed order is kept
    assert (stats["rx_prio3_pause"], stats["tx_prio3_pause"], stats["rx_prio3_pause_duration"]) == (
        120033,
        98765,
        5400210,
    )
    assert (stats["rx_pause_ctrl_phy"], stats["rx_discards_phy"], stats["rx_out_of_buffer"]) == (120033, 4, 12)
    assert stats["rx0_ecn_mark"] == 3 and stats["ch0_events"] == 4242
    assert per_priority(stats, "rx_prio{p}_pause") == {3: 120033}  # pause counters only where PFC is on
    assert per_priority(stats, "rx_prio{p}_packets") == {p: p * 10 for p in range(8)}
    assert canonical(stats) == stats


def test_render_reproduces_the_output() -> None:
    assert dump(parse(NEW_KERNEL)) == NEW_KERNEL
    assert dump(parse(OLD_KERNEL)) == OLD_KERNEL


def test_old_kernel_names_map_onto_the_new_ones() -> None:
    stats = parse(OLD_KERNEL)
    assert stats["pause_ctrl_rx"] == 310 and "rx_pause_ctrl_phy" not in stats  # the record keeps printed names
    current = canonical(stats)
    assert (current["rx_pause_ctrl_phy"], current["tx_pause_ctrl_phy"], current["rx_discards_phy"]) == (310, 290, 6)
    assert (current["rx_packets_phy"], current["rx_crc_errors_phy"], current["rx_symbol_err_phy"]) == (5487361, 0, 0)
    assert per_priority(stats, "rx_prio{p}_pause") == {3: 310}
    assert per_priority(stats, "tx_prio{p}_pause_duration") == {3: 12020}
    assert per_priority(stats, "rx_prio{p}_bytes") == {3: 1084993260}
    assert current["p64octets"] == 497933 and current["rx0_packets"] == 393312  # no new twin: unchanged
    assert canonical_name("prio9_rx_pause") == "prio9_rx_pause" and canonical_name("prio3_rx_other") == "prio3_rx_other"


def test_current_name_wins_over_its_old_twin() -> None:
    assert canonical({"pause_ctrl_rx": 1, "rx_pause_ctrl_phy": 2}) == {"rx_pause_ctrl_phy": 2}


def test_header_may_be_missing_and_whitespace_is_free() -> None:
    body = OLD_KERNEL.removeprefix("NIC statistics:\n")
    assert parse(body) == parse(OLD_KERNEL)
    assert parse(OLD_KERNEL.replace("     ", "\t").replace("\n", "\r\n")) == parse(OLD_KERNEL)


def test_per_queue_prefixed_names() -> None:
    # bnxt_en prints per-ring counters as "[0]: rx_ucast_packets: 5"; the name is all before the last colon
    assert parse("NIC statistics:\n     [0]: rx_ucast_packets: 5\n     [1]: rx_ucast_packets: 6\n") == {
        "[0]: rx_ucast_packets": 5,
        "[1]: rx_ucast_packets": 6,
    }


def test_header_only_is_an_empty_map() -> None:
    assert parse("NIC statistics:\n") == {}


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        ("", 1, "empty"),
        ("NIC statistics:\n     rx_packets 5\n", 2, "'<counter>: <value>'"),
        ("NIC statistics:\n     rx_packets: -5\n", 2, "unsigned integer for rx_packets"),
        ("NIC statistics:\n     rx_packets: 5\n     rx_packets: 6\n", 3, "rx_packets once"),
        ("NIC statistics:\n     rx_packets: 5\nNIC statistics:\n", 3, "once, before the counters"),
        ("no stats available\n", 1, "'<counter>: <value>'"),
    ],
)
def test_errors_name_the_line(raw: str, line: int, message: str) -> None:
    err = parse_error(raw)
    assert (err.source, err.line) == ("ethtool_S.txt", line)
    assert message in err.expected


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,30}", fullmatch=True)


@given(st.dictionaries(NAMES, st.integers(0, 2**64 - 1), max_size=20))
def test_round_trip(stats: dict[str, int]) -> None:
    assert parse(dump(stats)) == stats
    assert list(parse(dump(stats))) == list(stats)


def test_pasted_prompts_comments_and_blocks_are_skipped() -> None:
    text = (
        "```\n"
        "# ethtool -S eth3 | grep pause\n"
        "     rx_prio3_pause: 41927\n"
        "     tx_prio3_pause: 1290\n"
        "\n"
        "[root@h1 ~]# ethtool -S eth3 | grep discard\n"
        "     rx_discards_phy: 7\n"
        "$ ethtool -S eth3\n"
        "NIC statistics:\n"
        "     rx_out_of_buffer: 0\n"
        "# note\n"
        "```\n"
    )
    assert parse(text, "t") == {
        "rx_prio3_pause": 41927,
        "tx_prio3_pause": 1290,
        "rx_discards_phy": 7,
        "rx_out_of_buffer": 0,
    }


def test_header_inside_a_block_is_still_an_error() -> None:
    with pytest.raises(ParseError) as err:
        parse("# ethtool -S eth3\n     a: 1\nNIC statistics:\n     b: 2\n", "t")
    assert err.value.line == 3
