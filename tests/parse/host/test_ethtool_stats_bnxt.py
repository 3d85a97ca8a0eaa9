"""``ethtool -S`` of Broadcom bnxt_en: ring-prefixed and port counter names, and their mlx5 equivalents."""

from __future__ import annotations

from unifab.parse.host import ethtool_stats

BNXT = """NIC statistics:
     [0]: rx_ucast_packets: 1200
     [0]: rx_discards: 3
     [0]: tx_discards: 0
     [1]: rx_discards: 4
     rx_total_discard_pkts: 7
     rx_good_frames: 5000
     rx_fcs_err_frames: 2
     rx_pause_frames: 0
     tx_pause_frames: 0
     rx_pfc_ena_frames_pri3: 41
     tx_pfc_ena_frames_pri3: 9
     rx_bytes: 640000
     rx_stat_discard: 11
     link_down_events: 1
     pfc_pri3_rx_duration_us: 820
     pfc_pri3_rx_transitions: 6
     rx_bytes_pri3: 512000
"""


def test_bnxt_names_parse_as_printed() -> None:
    stats = ethtool_stats.parse(BNXT, "eth0")
    assert stats["[0]: rx_discards"] == 3 and stats["[1]: rx_discards"] == 4
    assert stats["rx_pfc_ena_frames_pri3"] == 41
    assert ethtool_stats.parse(ethtool_stats.dump(stats), "again") == stats


def test_bnxt_names_map_to_mlx5_names() -> None:
    current = ethtool_stats.canonical(ethtool_stats.parse(BNXT, "eth0"))
    assert (current["rx_packets_phy"], current["rx_crc_errors_phy"], current["rx_discards_phy"]) == (5000, 2, 11)
    assert (current["rx_pause_ctrl_phy"], current["tx_pause_ctrl_phy"], current["link_down_events_phy"]) == (0, 0, 1)
    assert (current["rx_prio3_pause"], current["tx_prio3_pause"]) == (41, 9)
    assert (current["rx_prio3_pause_duration"], current["rx_prio3_pause_transition"]) == (820, 6)
    assert current["rx_prio3_bytes"] == 512000
    # names both drivers print, with different scopes, and ring counters stay as printed
    assert current["rx_bytes"] == 640000 and current["[0]: rx_discards"] == 3
    assert ethtool_stats.per_priority(current, "rx_prio{p}_pause") == {3: 41}


def test_an_mlx5_name_printed_too_wins() -> None:
    stats = {"rx_pause_frames": 5, "rx_pause_ctrl_phy": 7}
    assert ethtool_stats.canonical(stats) == {"rx_pause_ctrl_phy": 7}
