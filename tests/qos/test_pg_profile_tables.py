"""The shipped pg_profile_lookup.ini tables and the SONiC headroom requirement by buffer model."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.qos.headroom import (
    COMMON_CABLE_BUCKETS_M,
    SPECTRUM_ASICS,
    sonic_mellanox_xoff,
    sonic_requirement,
)
from unifab.qos.pg_profile_tables import (
    PG_PROFILE_TABLES,
    SOURCES,
    cable_bucket,
    parse_lookup,
    table_for,
)

SN5600_INI = Path("switch") / "sonic" / "sonic_mellanox_sn5600_pg_profile_lookup.ini"
SPECTRUM_4 = SPECTRUM_ASICS["Spectrum-4"]
SPECTRUM_3 = SPECTRUM_ASICS["Spectrum-3"]
# rows whose xoff is 1 KB off the current Lua (switch-qos-sonic-eos-nvue.md §1.4: 15 of 24 rows match exactly)
SN5600_ROUNDED = 9


def test_shipped_sn5600_table_is_the_real_file(samples: Path) -> None:
    """The data module's ACS-SN5600 rows equal sonic-buildimage's file (the copy in tests/data/samples)."""
    real = parse_lookup((samples / SN5600_INI).read_text(), "ACS-SN5600")
    assert real.rows == PG_PROFILE_TABLES["ACS-SN5600"].rows
    assert len(real.rows) == 24 and real.cable_buckets == (5, 40, 300)


def test_every_sn5600_row_through_the_headroom_model(samples: Path) -> None:
    """Each row of the real table is what sonic_requirement asks of a traditional ACS-SN5600 port, exactly;
    the Lua at small-packet 100 % (the fallback when a SKU has no table) lands within ±1 KB of each row."""
    rows = parse_lookup((samples / SN5600_INI).read_text()).rows
    exact = 0
    for row in rows:
        req = sonic_requirement(
            row.speed_mbps, row.cable_m, 9100, SPECTRUM_4, buffer_model="traditional", hwsku="ACS-SN5600"
        )
        assert req.method == "pg_profile_lookup.ini" and req.row == row
        assert (req.xoff, req.xon, req.size) == (row.xoff, row.xon, row.size)
        assert req.cable_bucket_m == row.cable_m and not req.shared_headroom_pool
        lanes = 8 if row.xon == 38_912 else 4  # the 800G rows carry the 8-lane xon
        lua = sonic_mellanox_xoff(
            row.speed_mbps, row.cable_m, 9100, SPECTRUM_4, small_packet_percentage=100, lanes=lanes
        )
        assert abs(lua.xoff - row.xoff) <= 1024, row
        assert lua.xon == row.xon and abs(lua.size - row.size) <= 1024, row
        exact += lua.xoff == row.xoff
    assert exact == len(rows) - SN5600_ROUNDED


@pytest.mark.parametrize(
    ("cable", "bucket", "xoff"),
    [(0, 5, 231_424), (3, 5, 231_424), (5, 5, 231_424), (5.5, 40, 283_648), (41, 300, 677_888), (300, 300, 677_888)],
)
def test_cable_rounds_up_to_the_tables_bucket(cable: float, bucket: int, xoff: int) -> None:
    req = sonic_requirement(400_000, cable, 9100, SPECTRUM_4, hwsku="ACS-SN5600")
    assert (req.cable_bucket_m, req.xoff, req.method) == (bucket, xoff, "pg_profile_lookup.ini")


def test_past_the_last_bucket_falls_back_to_the_lua_at_spp_100() -> None:
    req = sonic_requirement(400_000, 500, 9100, SPECTRUM_4, hwsku="ACS-SN5600")
    assert req.method == "buffer_headroom_mellanox.lua" and req.cable_bucket_m is None
    assert req.small_packet_percentage == 100
    assert req.xoff == sonic_mellanox_xoff(400_000, 500, 9100, SPECTRUM_4, small_packet_percentage=100, lanes=4).xoff


def test_unknown_sku_and_missing_speed_use_the_lua_at_spp_100() -> None:
    unknown = sonic_requirement(400_000, 3, 9100, SPECTRUM_4, hwsku="Mellanox-SN5600-V256")
    assert unknown.method == "buffer_headroom_mellanox.lua" and unknown.table is None
    assert (unknown.small_packet_percentage, unknown.lossless_mtu) == (100, 1024)
    assert unknown.cable_bucket_m == 5 and COMMON_CABLE_BUCKETS_M == (5, 40, 300)
    # the Lua at spp 100 over the real 3 m (the switch's own table would round up to its bucket)
    assert unknown.xoff == sonic_mellanox_xoff(400_000, 3, 9100, SPECTRUM_4, small_packet_percentage=100).xoff
    no_speed = sonic_requirement(800_000, 5, 9100, SPECTRUM_3, hwsku="ACS-MSN4700", lanes=8)  # no 800G rows
    assert no_speed.method == "buffer_headroom_mellanox.lua" and no_speed.table is not None


def test_older_sku_tables_are_the_requirement_even_below_the_formula() -> None:
    """Static tables of older SKUs were generated with earlier inputs: buffermgrd still writes them verbatim."""
    req = sonic_requirement(400_000, 3, 9100, SPECTRUM_3, hwsku="ACS-MSN4700")
    assert (req.size, req.xon, req.xoff) == (86_016, 37_888, 38_912)
    shp = sonic_requirement(100_000, 40, 9100, SPECTRUM_ASICS["Spectrum-2"], hwsku="Mellanox-SN3800-D112C8")
    assert (shp.size, shp.xon, shp.xoff) == (19_456, 19_456, 48_128) and shp.shared_headroom_pool


def test_dynamic_model_uses_the_collected_traffic_pattern_else_100() -> None:
    collected = sonic_requirement(
        400_000, 3, 9100, SPECTRUM_4, buffer_model="dynamic", hwsku="ACS-SN5600", small_packet_percentage=50
    )
    assert collected.method == "buffer_headroom_mellanox.lua" and collected.row is None
    assert collected.small_packet_percentage == 50 and collected.xoff == 94_208 + 2048  # with the 2 KB compensation
    assert collected.cable_bucket_m == 3  # the dynamic buffermgrd takes any length
    missing = sonic_requirement(400_000, 3, 9100, SPECTRUM_4, buffer_model="dynamic", hwsku="ACS-SN5600")
    assert missing.small_packet_percentage == 100 and missing.lossless_mtu == 1024
    assert missing.xoff == sonic_mellanox_xoff(400_000, 3, 9100, SPECTRUM_4, small_packet_percentage=100).xoff
    assert missing.xoff > 2 * collected.xoff


@pytest.mark.parametrize(
    ("hwsku", "table"),
    [
        ("ACS-SN5600", "ACS-SN5600"),
        ("acs-sn5600", "ACS-SN5600"),
        ("ACS-MSN2700", "ACS-MSN2700"),
        ("Mellanox-SN2700-D48C8", "Mellanox-SN2700-D48C8"),
        ("ACS-MSN3800", "ACS-MSN3800"),
        ("Mellanox-SN4600C-D48C40", "Mellanox-SN4600C-D48C40"),
        ("ACS-MSN4700", "ACS-MSN4700"),
        ("Mellanox-SN5600-O128", None),  # a sibling SKU: no neighbour's table
        ("Arista-7060X6-64PE", None),
        (None, None),
    ],
)
def test_table_for(hwsku: str | None, table: str | None) -> None:
    found = table_for(hwsku)
    assert (found.hwsku if found else None) == table


@pytest.mark.parametrize("sku", sorted(PG_PROFILE_TABLES))
def test_shipped_tables_are_well_formed(sku: str) -> None:
    table = PG_PROFILE_TABLES[sku]
    assert sku in SOURCES and table.source.startswith("sonic-net/sonic-buildimage device/mellanox/")
    keys = [(r.speed_mbps, r.cable_m) for r in table.rows]
    assert len(keys) == len(set(keys)) and keys == sorted(keys, key=lambda k: (k[1], k[0]))
    for r in table.rows:
        assert r.xon <= r.size and r.xoff > 0 and r.cable == f"{r.cable_m}m"
        # shared headroom pool (size holds xon), or size holds both, to the table's 1 KB rounding
        assert r.size == r.xon if r.shared_headroom_pool else r.size >= r.xoff + r.xon - 1024


def test_cable_bucket_and_parse_errors() -> None:
    assert cable_bucket((5, 40, 300), 40) == 40 and cable_bucket((5, 40, 300), 301) is None
    with pytest.raises(ValueError, match="speed cable size xon xoff threshold"):
        parse_lookup("100000 5 1 2 3 0\n", "X")
