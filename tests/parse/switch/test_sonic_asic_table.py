"""Spectrum ASIC_TABLE parameters (derived from sonic-buildimage platform/mellanox/asic_table.j2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import sonic_asic_table
from unifab.qos.headroom import SPECTRUM_ASICS, guess_asic

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
ASIC = "switch/sonic/sonic_mellanox_asic_table_params.json"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def test_golden_asic(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "sonic_mellanox_asic_table_params.json", sonic_asic_table.parse(read(samples, ASIC), ASIC))


def test_asic_table_equals_headroom_constants(samples: Path) -> None:
    table = sonic_asic_table.parse(read(samples, ASIC))
    assert set(table.asics) == {a.asic_table_key for a in SPECTRUM_ASICS.values()}
    for a in SPECTRUM_ASICS.values():
        entry = table.asics[a.asic_table_key]
        assert entry.cell_size_bytes == a.cell_size
        assert entry.pipeline_latency_kb == a.pipeline_latency_kb
        assert entry.mac_phy_delay_kb == a.mac_phy_delay_kb
        assert entry.peer_response_time_kb == a.peer_response_time_kb
    key_to_name = {a.asic_table_key: a.name for a in SPECTRUM_ASICS.values()}
    for platform, asic in table.platform_to_asic.items():
        if asic == "vs":
            continue
        assert guess_asic(platform) == key_to_name[asic], platform


def test_asic_by_hand(samples: Path) -> None:
    table = sonic_asic_table.parse(read(samples, ASIC))
    sp5 = table.asics["MELLANOX-SPECTRUM-5"]
    assert (sp5.cell_size_bytes, sp5.port_reserved_shp, sp5.port_max_shp) == (192, 20, 6144)
    assert table.platform_to_asic["x86_64-nvidia_sn5600-r0"] == "MELLANOX-SPECTRUM-4"
    assert table.platform_to_asic["vs-platform"] == "vs"  # an ASIC with no ASIC_TABLE entry
    entry = {"cell_size": 96, "pipeline_latency": "19", "mac_phy_delay": "0.8", "peer_response_time": "3.8"}
    flat = sonic_asic_table.parse(json.dumps({"ASIC_TABLE|X": entry}))
    assert flat.asics["X"].cell_size_bytes == 96 and flat.asics["X"].port_max_shp is None and not flat.platform_to_asic


@pytest.mark.parametrize(
    ("doc", "key"),
    [
        ({"ASIC_TABLE": {"ASIC_TABLE:A": {"cell_size": "x"}}}, "ASIC_TABLE.ASIC_TABLE:A.cell_size"),
        ({"ASIC_TABLE": {"ASIC_TABLE:A": {"cell_size": "1"}}}, "ASIC_TABLE.ASIC_TABLE:A"),
        ({"ASIC_TABLE": {"A": {}}}, "ASIC_TABLE.A"),
        ({"ASIC_TABLE": []}, "ASIC_TABLE"),
        ({"ASIC_TABLE": {}}, "ASIC_TABLE"),
    ],
)
def test_asic_errors_name_key(doc: object, key: str) -> None:
    with pytest.raises(ParseError) as err:
        sonic_asic_table.parse(json.dumps(doc), "t")
    assert err.value.key == key


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=10,
)


@_SETTINGS
@given(st.sampled_from(["ASIC_TABLE", "ASIC_TABLE:X", "platform_to_asic"]), _JSON)
def test_malformed_json_raises_only_parse_error(key: str, value: object) -> None:
    try:
        sonic_asic_table.parse(json.dumps({key: value}), "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
