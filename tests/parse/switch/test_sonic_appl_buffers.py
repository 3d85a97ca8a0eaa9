"""APPL_DB buffer tables (sonic-utilities db_migrator input, schema 3.0.3); variants, errors, fuzz."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import sonic_appl_buffers
from unifab.parse.switch.sonic_appl_buffers import SonicBufferAssignment, expand_indices

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
APPL = "switch/sonic/sonic_appl_db_buffer_tables_subset.json"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def test_golden_appl(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "sonic_appl_db_buffer_tables_subset.json", sonic_appl_buffers.parse(read(samples, APPL), APPL))


def test_appl_by_hand(samples: Path) -> None:
    r = sonic_appl_buffers.parse(read(samples, APPL))
    assert list(r.pools) == ["egress_lossless_pool", "ingress_lossless_pool"]
    ingress = r.pools["ingress_lossless_pool"]
    assert (ingress.type, ingress.mode, ingress.size_bytes, ingress.xoff_bytes) == (
        "ingress",
        "dynamic",
        35621248,
        7847424,
    )
    assert r.profiles["pg_lossless_10000_40m_profile"].dynamic_th == -3
    port = r.ports["Ethernet0"]
    assert sorted(port.pgs) == [0, 3, 4]
    assert port.pgs[3] == SonicBufferAssignment(
        index=3,
        profile="pg_lossless_100000_40m_profile",
        pool="ingress_lossless_pool",
        size_bytes=1248,
        xon_bytes=2288,
        xoff_bytes=177632,
        dynamic_th=None,
        static_th_bytes=None,
    )
    assert port.pgs[3].lossless and port.pgs[4].lossless and not port.pgs[0].lossless
    assert {i: q.profile for i, q in port.queues.items()} == {
        0: "egress_lossy_profile",
        1: "egress_lossy_profile",
        2: "egress_lossy_profile",
        3: "egress_lossless_profile",
        4: "egress_lossless_profile",
        5: "egress_lossy_profile",
        6: "egress_lossy_profile",
    }
    assert port.queues[3].static_th_bytes == 43468672 and port.queues[0].size_bytes == 1518


def test_appl_variants_db_dump_legacy_refs_null_and_lists() -> None:
    doc = {
        "BUFFER_POOL_TABLE:ingress_lossless_pool": {"type": "hash", "value": {"type": "ingress", "size": "100"}},
        "BUFFER_PROFILE_TABLE:p": {"type": "hash", "value": {"pool": "[BUFFER_POOL_TABLE:ingress_lossless_pool]",
                                                              "size": "0", "xon": "1", "xoff": "2"}},
        "BUFFER_PG_TABLE:Ethernet8,Ethernet4:0,3-4": {"type": "hash", "value": {"profile": "[BUFFER_PROFILE_TABLE:p]"}},
        "BUFFER_PG_TABLE:Ethernet4:6": {"type": "hash", "value": {"profile": "NULL"}},
        "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE:Ethernet4": {"type": "hash", "value": {"profile_list": "p"}},
        "PORT_TABLE:Ethernet4": {"type": "hash", "value": {"mtu": "9100"}},
    }  # fmt: skip
    r = sonic_appl_buffers.parse(json.dumps(doc))
    assert list(r.ports) == ["Ethernet4", "Ethernet8"]
    e4 = r.ports["Ethernet4"]
    assert sorted(e4.pgs) == [0, 3, 4, 6] and e4.pgs[4].xoff_bytes == 2 and e4.pgs[4].index == 4
    assert e4.pgs[6].profile is None and not e4.pgs[6].lossless
    assert e4.ingress_profiles == ("p",) and r.ports["Ethernet8"].ingress_profiles == ()
    assert r.profiles["p"].pool == "ingress_lossless_pool"


@pytest.mark.parametrize(
    ("doc", "key", "expected"),
    [
        ({"BUFFER_PG_TABLE:Ethernet0:3-4": {"profile": "missing"}}, "BUFFER_PG_TABLE:Ethernet0:3-4", "missing"),
        ({"BUFFER_PG_TABLE:Ethernet0:4-3": {"profile": "NULL"}}, "BUFFER_PG_TABLE:Ethernet0:4-3", "range"),
        ({"BUFFER_QUEUE_TABLE:Ethernet0": {"profile": "NULL"}}, "BUFFER_QUEUE_TABLE:Ethernet0", "range"),
        ({"BUFFER_PG_TABLE:Ethernet0:3": {}}, "BUFFER_PG_TABLE:Ethernet0:3", "profile"),
        ({"BUFFER_POOL_TABLE:p": {"size": "big"}}, "BUFFER_POOL_TABLE:p", "size"),
        ({"BUFFER_PROFILE_TABLE:x": {"pool": "nope"}}, "BUFFER_PROFILE_TABLE:x", "nope"),
        ({"BUFFER_PROFILE_TABLE:x": {"dynamic_th": "1.5"}}, "BUFFER_PROFILE_TABLE:x", "dynamic_th"),
    ],
)
def test_appl_errors_name_key(doc: dict[str, object], key: str, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        sonic_appl_buffers.parse(json.dumps(doc), "t")
    assert err.value.key == key and expected in err.value.expected


def test_appl_empty_is_error() -> None:
    with pytest.raises(ParseError):
        sonic_appl_buffers.parse("{}", "t")
    with pytest.raises(ParseError) as err:
        sonic_appl_buffers.parse("{\n", "t")
    assert err.value.line is not None


def test_expand_indices() -> None:
    assert expand_indices("3-4") == [3, 4] and expand_indices("0,3") == [0, 3] and expand_indices("5") == [5]
    for bad in ("", "a", "4-3", "1-", "99"):
        with pytest.raises(ValueError):
            expand_indices(bad)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=10,
)


@_SETTINGS
@given(
    st.sampled_from(["BUFFER_PG_TABLE:Ethernet0:3-4", "BUFFER_PROFILE_TABLE:p", "BUFFER_POOL_TABLE:q"]),
    _JSON,
)
def test_malformed_json_raises_only_parse_error(key: str, value: object) -> None:
    try:
        sonic_appl_buffers.parse(json.dumps({key: value}), "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
