"""sonic_counters_db: the COUNTERS_DB mock resolved per port, cross-checked against the CLI's golden output.

The sonic-utilities unit tests render ``show pfc counters``, ``pfcwd show stats``, ``show queue counters``
and ``show queue wredcounters`` from the very mock this parser reads; their expected text is in
``sonic_cli_outputs_pfc_pfcwd_ecn_queue.txt``. Every number those tables print must be the number the
parser resolves.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import sonic_counters_db
from unifab.parse.switch.sonic_counters_db import SonicCounters, SonicPfcWdQueue, dump, parse

SONIC = Path("switch") / "sonic"
GOLDEN = Path(__file__).parent / "golden"
MOCK = "sonic_counters_db_mock_pfc_queue_pg.json"
CLI = "sonic_cli_outputs_pfc_pfcwd_ecn_queue.txt"


@pytest.fixture(scope="module")
def mock_text(samples: Path) -> str:
    return (samples / SONIC / MOCK).read_text()


@pytest.fixture(scope="module")
def counters(mock_text: str) -> SonicCounters:
    return parse(mock_text, MOCK)


@pytest.fixture(scope="module")
def cli(samples: Path) -> str:
    return (samples / SONIC / CLI).read_text()


def cli_block(cli: str, variable: str) -> list[str]:
    """The expected output under ``# source: ... :: <variable>`` (up to the next ===== banner)."""
    lines = cli.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# source:") and ln.endswith(f":: {variable}"))
    out: list[str] = []
    for line in lines[start + 2 :]:
        if re.fullmatch(r"=+", line):
            break
        out.append(line)
    return out


def table_rows(lines: list[str]) -> list[list[str]]:
    """Data rows of tabulate tables (columns split on 2+ blanks), headers and rules dropped."""
    rows = []
    for i, line in enumerate(lines):
        if not line.strip() or re.fullmatch(r"[- ]+", line) or line.startswith(("For namespace", "...")):
            continue
        if i + 1 < len(lines) and re.fullmatch(r"[- ]+", lines[i + 1]) and "-" in lines[i + 1]:
            continue  # a header
        rows.append(re.split(r" {2,}", line.strip()))
    return rows


def num(text: str) -> int:
    return int(text.replace(",", ""))


def json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    )


# --- the mock ---------------------------------------------------------------------------------------


def test_ports_queues_pgs_and_pools(counters: SonicCounters) -> None:
    assert counters.shape == "flat"
    assert list(counters.ports) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    e0 = counters.ports["Ethernet0"]
    assert e0.oid == "oid:0x1000000000012"
    assert list(e0.queues) == list(range(30))
    assert [e0.queues[i].type for i in (0, 9, 10, 19, 20, 29)] == ["unicast"] * 2 + ["multicast"] * 2 + ["all"] * 2
    assert list(e0.priority_groups) == list(range(8))
    # the 24 SAI_QUEUE_TYPE_UNICAST_VOQ queues belong to system ports no name map knows
    assert all(len(p.queues) == 30 for p in counters.ports.values())
    assert all(q.type != "unicast_voq" for p in counters.ports.values() for q in p.queues.values())

    q3 = e0.queues[3]
    assert (q3.packets, q3.bytes, q3.dropped_packets, q3.dropped_bytes) == (52, 70, 19, 76)
    assert (q3.wred_dropped_packets, q3.wred_dropped_bytes, q3.ecn_marked_packets, q3.ecn_marked_bytes) == (
        52,
        70,
        19,
        76,
    )
    # the queue hash's own SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES (60) is not the user watermark (0)
    assert q3.counters["SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"] == 60
    assert (q3.shared_watermark_bytes, q3.persistent_shared_watermark_bytes) == (0, 0)
    assert e0.queues[0].shared_watermark_bytes == 2057328
    assert e0.queues[0].persistent_shared_watermark_bytes == 3057328
    # ALL queues have watermarks but no counters hash
    q20 = e0.queues[20]
    assert (q20.packets, q20.counters, q20.shared_watermark_bytes) == (None, {}, 1234567)
    assert q20.persistent_shared_watermark_bytes is None

    pg3 = e0.priority_groups[3]
    assert (pg3.dropped_packets, pg3.shared_watermark_bytes, pg3.headroom_watermark_bytes) == (803, 103, 103)
    assert (pg3.persistent_shared_watermark_bytes, pg3.persistent_headroom_watermark_bytes) == (203, 203)

    assert (e0.in_errors, e0.in_discards, e0.out_errors, e0.out_discards) == (10, 100, None, None)
    assert (e0.fec_correctable_frames, e0.fec_uncorrectable_frames, e0.fec_symbol_errors) == (130402, 3, 4)
    assert e0.wred_dropped_packets is None  # only Ethernet4 has the port WRED counters
    e4 = counters.ports["Ethernet4"]
    assert (
        e4.wred_green_dropped_packets,
        e4.wred_yellow_dropped_packets,
        e4.wred_red_dropped_packets,
        e4.wred_dropped_packets,
    ) == (17, 33, 51, 101)
    assert (e0.rx_bps, e0.rx_pps, e0.tx_bps, e0.tx_pps) == (2e9, 247e3, 1.5e9, 183e3)  # "2.e9", "247.e3"
    assert counters.ports["Ethernet8"].tx_bps == 13.37e6

    pool = counters.buffer_pools["ingress_lossless_pool"]
    assert (pool.watermark_bytes, pool.headroom_watermark_bytes) == (3000, 432640)
    assert (pool.persistent_watermark_bytes, pool.persistent_headroom_watermark_bytes) == (4000, 863616)
    assert counters.buffer_pools["egress_lossy_pool"].headroom_watermark_bytes is None


def test_golden_excerpt(counters: SonicCounters, golden: Any) -> None:
    e0 = counters.ports["Ethernet0"]
    e8 = counters.ports["Ethernet8"]
    excerpt = {
        "port_names": list(counters.ports),
        "buffer_pools": counters.buffer_pools,
        "Ethernet0": dataclasses.replace(
            e0,
            queues={i: e0.queues[i] for i in (0, 3, 10, 20)},
            priority_groups={i: e0.priority_groups[i] for i in (0, 3)},
        ),
        "Ethernet8": dataclasses.replace(e8, queues={4: e8.queues[4]}, priority_groups={}),
    }
    golden(GOLDEN / "sonic_counters_db_mock_excerpt.json", excerpt)


# --- cross-checks with the CLI's golden output ------------------------------------------------------


def test_show_pfc_counters_equals_resolved(counters: SonicCounters, cli: str) -> None:
    rows = table_rows(cli_block(cli, "show_pfc_counters_output"))
    assert len(rows) == 6
    rx, tx = rows[:3], rows[3:]
    for table, field in ((rx, "pfc_rx_pkts"), (tx, "pfc_tx_pkts")):
        for row in table:
            port = counters.ports[row[0]]
            assert getattr(port, field) == {p: num(v) for p, v in enumerate(row[1:])}, (row[0], field)


def test_show_pfc_counters_history_equals_resolved(counters: SonicCounters, cli: str) -> None:
    rows = table_rows(cli_block(cli, "show_pfc_counters_history_output"))
    assert len(rows) == 24
    for port_name, prio, transitions, total_us, recent_us, stamp in rows:
        port = counters.ports[port_name]
        p = int(prio.removeprefix("PFC"))
        assert port.pfc_rx_pause_transitions[p] == num(transitions)
        assert port.pfc_rx_pause_duration_us[p] == num(total_us)
        assert port.pfc_recent_pause_time_us[p] == num(recent_us)
        # the timestamp is microseconds since the epoch: the CLI prints it as a UTC date
        when = datetime.fromtimestamp(port.pfc_recent_pause_timestamp_us[p] / 1e6, tz=UTC)
        assert when.strftime("%m/%d/%Y, %H:%M:%S") == stamp


def test_pfcwd_show_stats_equals_resolved(counters: SonicCounters, cli: str) -> None:
    rows = table_rows(cli_block(cli, "pfcwd_show_stats_output"))
    stormy = {
        (name, q.index): q.pfcwd
        for name, port in counters.ports.items()
        for q in port.queues.values()
        if q.pfcwd is not None
    }
    assert set(stormy) == {("Ethernet0", 3), ("Ethernet4", 3), ("Ethernet8", 4)}
    assert len(rows) == 3
    for queue, status, storm, tx, rx, tx_last, rx_last in rows:
        port, index = queue.split(":")
        wd = stormy[(port, int(index))]
        assert wd is not None
        assert wd.status == status
        assert f"{wd.deadlock_detected}/{wd.deadlock_restored}" == storm
        assert f"{wd.tx_packets}/{wd.tx_dropped_packets}" == tx
        assert f"{wd.rx_packets}/{wd.rx_dropped_packets}" == rx
        assert f"{wd.tx_packets_last}/{wd.tx_dropped_packets_last}" == tx_last
        assert f"{wd.rx_packets_last}/{wd.rx_dropped_packets_last}" == rx_last


def test_pfcwd_times_are_microseconds(counters: SonicCounters, cli: str) -> None:
    # `pfcwd show config` prints the CONFIG_DB milliseconds; COUNTERS_DB holds them x 1000
    config = {row[0]: row for row in table_rows(cli_block(cli, "pfcwd_show_config_output"))[1:]}
    wd = counters.ports["Ethernet0"].queues[3].pfcwd
    assert wd == SonicPfcWdQueue(
        status="stormed",
        action="drop",
        detection_time_us=600000,
        restoration_time_us=600000,
        detection_time_left_us=600000,
        restoration_time_left_us=600000,
        deadlock_detected=1,
        deadlock_restored=0,
        tx_packets=100,
        tx_dropped_packets=300,
        rx_packets=100,
        rx_dropped_packets=300,
        tx_packets_last=0,
        tx_dropped_packets_last=200,
        rx_packets_last=0,
        rx_dropped_packets_last=200,
    )
    assert config["Ethernet0"][1:4] == ["drop", "600", "600"]
    assert wd.detection_time_us == int(config["Ethernet0"][2]) * 1000


QUEUE_PREFIX = {"unicast": "UC", "multicast": "MC", "all": "ALL"}


@pytest.mark.parametrize(
    ("variable", "fields"),
    [
        ("show_queue_counters", ("packets", "bytes", "dropped_packets", "dropped_bytes")),
        (
            "show_wred_queue_counters",
            ("wred_dropped_packets", "wred_dropped_bytes", "ecn_marked_packets", "ecn_marked_bytes"),
        ),
    ],
)
def test_show_queue_counters_equal_resolved(
    counters: SonicCounters, cli: str, variable: str, fields: tuple[str, ...]
) -> None:
    rows = table_rows(cli_block(cli, variable))
    assert len(rows) >= 33  # Ethernet0's 30 queues, then the truncated Ethernet4 table
    for port_name, txq, *values in rows:
        queue = next(
            q
            for q in counters.ports[port_name].queues.values()
            if q.type is not None and f"{QUEUE_PREFIX[q.type]}{q.index}" == txq
        )
        expected = [None if v == "N/A" else int(v) for v in values]
        assert [getattr(queue, f) for f in fields] == expected, (port_name, txq)


# --- shapes and variants ----------------------------------------------------------------------------


def to_db_dump(flat: dict[str, Any]) -> dict[str, Any]:
    """``sonic-db-dump -n COUNTERS_DB`` shape (RECONSTRUCTED from the tool's output format)."""
    out: dict[str, Any] = {
        k: {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": v} for k, v in flat.items()
    }
    out["COUNTERS_LAG_NAME_MAP"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": {}}
    out["SOME_SET"] = {"expireat": 1700000000.1, "ttl": -0.001, "type": "set", "value": ["a"]}
    return out


def test_db_dump_equals_flat(mock_text: str, counters: SonicCounters) -> None:
    dumped = parse(orjson.dumps(to_db_dump(orjson.loads(mock_text))))
    assert dumped.shape == "db-dump"
    assert dataclasses.replace(dumped, shape="flat") == counters


def test_render_round_trip(counters: SonicCounters) -> None:
    assert parse(dump(counters)) == counters


def doc(**hashes: dict[str, Any]) -> str:
    return orjson.dumps({k.replace("__", ":"): v for k, v in hashes.items()}).decode()


PORTS = {"COUNTERS_PORT_NAME_MAP": {"Ethernet0": "oid:0x1"}}


def test_native_sai_pause_counters_win_over_estimates() -> None:
    text = orjson.dumps(
        {
            **PORTS,
            "COUNTERS:oid:0x1": {
                "SAI_PORT_STAT_PFC_3_ON2OFF_RX_PKTS": "7",
                "EST_PORT_STAT_PFC_3_ON2OFF_RX_PKTS": "99",
                "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "1500",
                "EST_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "9999",
                "SAI_PORT_STAT_PFC_4_RX_PAUSE_DURATION": "42",  # Marvell/Barefoot: not microseconds
                "EST_PORT_STAT_PFC_3_RECENT_PAUSE_TIMESTAMP": "1700000000.25",  # HLD: float seconds
            },
        }
    )
    port = parse(text).ports["Ethernet0"]
    assert port.pfc_rx_pause_transitions == {3: 7}
    assert port.pfc_rx_pause_duration_us == {3: 1500}
    assert port.pfc_recent_pause_timestamp_us == {3: 1700000000250000}
    assert port.counters["SAI_PORT_STAT_PFC_4_RX_PAUSE_DURATION"] == 42
    assert "EST_PORT_STAT_PFC_3_RECENT_PAUSE_TIMESTAMP" not in port.counters


def test_queues_from_index_and_port_maps_alone() -> None:
    text = orjson.dumps(
        {
            **PORTS,
            "COUNTERS_QUEUE_INDEX_MAP": {"oid:0xa": "3", "oid:0xb": "0"},
            "COUNTERS_QUEUE_PORT_MAP": {"oid:0xa": "oid:0x1", "oid:0xb": "oid:0x99"},
            "COUNTERS:oid:0xa": {"SAI_QUEUE_STAT_PACKETS": "5"},
        }
    )
    port = parse(text).ports["Ethernet0"]
    assert list(port.queues) == [3]  # oid:0xb's port is unknown: left out
    assert port.queues[3].packets == 5
    assert port.queues[3].type is None


def test_port_known_only_from_a_queue_name() -> None:
    text = orjson.dumps({"COUNTERS_QUEUE_NAME_MAP": {"Ethernet12:3": "oid:0xa"}})
    port = parse(text).ports["Ethernet12"]
    assert port.oid is None
    assert list(port.queues) == [3]


def test_empty_document() -> None:
    assert parse("{}") == SonicCounters(shape="flat", ports={}, buffer_pools={})


@pytest.mark.parametrize(
    ("hashes", "key", "expected"),
    [
        ({**PORTS, "COUNTERS:oid:0x1": {"SAI_PORT_STAT_PFC_3_RX_PKTS": "many"}}, "COUNTERS:oid:0x1", "RX_PKTS"),
        ({**PORTS, "RATES:oid:0x1": {"RX_BPS": "fast"}}, "RATES:oid:0x1", "RX_BPS"),
        ({**PORTS, "RATES:oid:0x1": {"RX_BPS": "inf"}}, "RATES:oid:0x1", "RX_BPS"),
        (
            {"COUNTERS_PORT_NAME_MAP": {"Ethernet0": "oid:0x1", "Ethernet4": "oid:0x1"}},
            "COUNTERS_PORT_NAME_MAP",
            "one port per oid",
        ),
        ({"COUNTERS_QUEUE_NAME_MAP": {"Ethernet0": "oid:0xa"}}, "COUNTERS_QUEUE_NAME_MAP", "<port>:<index>"),
        (
            {
                **PORTS,
                "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:3": "oid:0xa"},
                "COUNTERS_QUEUE_INDEX_MAP": {"oid:0xa": "4"},
            },
            "COUNTERS_QUEUE_INDEX_MAP",
            "index 3",
        ),
        (
            {
                "COUNTERS_PORT_NAME_MAP": {"Ethernet0": "oid:0x1", "Ethernet4": "oid:0x2"},
                "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:3": "oid:0xa"},
                "COUNTERS_QUEUE_PORT_MAP": {"oid:0xa": "oid:0x2"},
            },
            "COUNTERS_QUEUE_PORT_MAP",
            "belong to Ethernet0",
        ),
        (
            {
                **PORTS,
                "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:3": "oid:0xa"},
                "COUNTERS_QUEUE_TYPE_MAP": {"oid:0xa": "UC"},
            },
            "COUNTERS_QUEUE_TYPE_MAP",
            "SAI_QUEUE_TYPE_",
        ),
        (
            {
                **PORTS,
                "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:3": "oid:0xa"},
                "COUNTERS:oid:0xa": {"PFC_WD_DETECTION_TIME": "soon"},
            },
            "COUNTERS:oid:0xa",
            "PFC_WD_DETECTION_TIME",
        ),
        ({"COUNTERS_PG_NAME_MAP": {"Ethernet0:x": "oid:0xa"}}, "COUNTERS_PG_NAME_MAP", "<port>:<index>"),
        ({"COUNTERS:oid:0x1": ["SAI_PORT_STAT_IF_IN_ERRORS", "1"]}, "COUNTERS:oid:0x1", "object"),
        ({"COUNTERS:oid:0x1": {"SAI_PORT_STAT_IF_IN_ERRORS": None}}, "COUNTERS:oid:0x1", "string or number"),
    ],
)
def test_errors_name_the_key(hashes: dict[str, Any], key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(orjson.dumps(hashes), "c.json")
    assert info.value.source == "c.json"
    assert info.value.key == key
    assert expected in info.value.expected


def test_invalid_json_names_the_line() -> None:
    with pytest.raises(ParseError) as info:
        parse('{\n "COUNTERS_PORT_NAME_MAP": {\n  "Ethernet0": "oid:0x1",\n }\n}')
    assert info.value.line == 3  # orjson reports the trailing comma's line


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(ParseError, match="JSON object"):
        parse("[]")


# --- fuzzing ------------------------------------------------------------------------------------------


KEYS = st.sampled_from(
    [
        "COUNTERS_PORT_NAME_MAP",
        "COUNTERS_QUEUE_NAME_MAP",
        "COUNTERS_QUEUE_INDEX_MAP",
        "COUNTERS_QUEUE_PORT_MAP",
        "COUNTERS_QUEUE_TYPE_MAP",
        "COUNTERS_PG_NAME_MAP",
        "COUNTERS_PG_INDEX_MAP",
        "COUNTERS_PG_PORT_MAP",
        "COUNTERS_BUFFER_POOL_NAME_MAP",
        "COUNTERS:oid:0x1",
        "COUNTERS:oid:0xa",
        "USER_WATERMARKS:oid:0xa",
        "RATES:oid:0x1",
    ]
)
FIELDS = st.sampled_from(
    [
        "Ethernet0",
        "Ethernet0:3",
        "oid:0x1",
        "oid:0xa",
        "SAI_PORT_STAT_PFC_3_RX_PKTS",
        "SAI_QUEUE_STAT_PACKETS",
        "PFC_WD_STATUS",
        "PFC_WD_DETECTION_TIME",
        "EST_PORT_STAT_PFC_3_RECENT_PAUSE_TIMESTAMP",
        "RX_BPS",
        "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
    ]
)
VALUES = st.one_of(
    st.sampled_from(["0", "3", "-1", "oid:0x1", "oid:0xa", "SAI_QUEUE_TYPE_UNICAST", "2.e9", "nan", "", "x"]),
    json_values(),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, st.one_of(st.dictionaries(FIELDS, VALUES, max_size=6), json_values()), max_size=8))
def test_random_dumps_raise_only_parse_error(hashes: dict[str, Any]) -> None:
    try:
        result = parse(json.dumps(hashes))
    except ParseError:
        return
    assert parse(dump(result)) == result


def test_module_exports() -> None:
    assert set(sonic_counters_db.__all__) <= set(dir(sonic_counters_db))
