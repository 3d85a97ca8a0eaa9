"""Tests for the RDMA-CM default TOS / RoCE mode parser (configfs tree and cma_roce_tos/cma_roce_mode output).

No sample of ours exists: the files and script outputs are reconstructed from host-nic-roce.md §1.3/§2.4,
mlnx-tools ``sbin/cma_roce_tos``/``cma_roce_mode`` (they ``cat`` the file) and the kernel's
``cma_configfs.c`` formats (``%u\\n``; ``IB/RoCE v1`` / ``RoCE v2``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.roce_tos import MODES, RoceDefaults, RoceTos, dump, dump_tree, parse, parse_tree

TREE = {"ports/1/default_roce_tos": "106\n", "ports/1/default_roce_mode": "RoCE v2\n"}


def test_tree() -> None:
    tos = parse_tree(TREE, "sys/kernel/config/rdma_cm/mlx5_0")
    assert tos == RoceTos((RoceDefaults(1, 106, "RoCE v2"),))
    (port,) = tos.ports
    assert (port.dscp, port.ecn) == (26, 2)
    assert dump_tree(tos) == TREE


def test_two_ports_one_file_each_and_other_files_ignored() -> None:
    files = {
        "ports/2/default_roce_mode": "IB/RoCE v1\n",
        "ports/1/default_roce_tos": "96\n",
        "ports/1/other": "x\n",
        "README": "?\n",
    }
    assert parse_tree(files).ports == (RoceDefaults(1, 96, None), RoceDefaults(2, None, "IB/RoCE v1"))


@pytest.mark.parametrize(
    ("raw", "record"),
    [
        ("106\n", RoceDefaults(None, 106, None)),  # cma_roce_tos -d mlx5_0 -t 106
        ("0\n", RoceDefaults(None, 0, None)),  # cma_roce_tos on a port never set
        ("RoCE v2\n", RoceDefaults(None, None, "RoCE v2")),  # cma_roce_mode -m 2
        ("IB/RoCE v1", RoceDefaults(None, None, "IB/RoCE v1")),
    ],
)
def test_script_output(raw: str, record: RoceDefaults) -> None:
    parsed = parse(raw, "cma_roce_tos.txt")
    assert parsed == RoceTos((record,))
    assert dump(parsed) == raw.rstrip("\n") + "\n"


def test_flat_form_matches_the_tree() -> None:
    flat = "ports/1/default_roce_tos: 106\nports/1/default_roce_mode: RoCE v2\n"
    assert parse(flat) == parse_tree(TREE)
    assert dump(parse_tree(TREE)) == flat


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("ports/1/default_roce_tos", "256\n", "TOS byte 0..255"),
        ("ports/1/default_roce_tos", "0x6a\n", "TOS byte"),
        ("ports/1/default_roce_mode", "RoCE v3\n", "'IB/RoCE v1' or 'RoCE v2'"),
        ("ports/1/default_roce_mode", "\n", "'IB/RoCE v1' or 'RoCE v2'"),
    ],
)
def test_tree_errors_name_the_file(path: str, value: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_tree(TREE | {path: value}, "rdma_cm/mlx5_0")
    assert (info.value.source, info.value.line) == (f"rdma_cm/mlx5_0/{path}", 1)
    assert message in info.value.expected


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        ("", 1, "a TOS, a RoCE mode"),
        ("Module rdma_cm is not loaded or does not support configfs\n", 1, "ports/<p>/default_roce_tos"),
        ("300\n", 1, "TOS byte 0..255"),
        ("106\n106\n", 1, "ports/<p>/default_roce_tos"),
        ("ports/1/default_roce_tos: 106\nports/1/default_roce_mode: v2\n", 2, "'IB/RoCE v1' or 'RoCE v2'"),
        ("ports/1/default_roce_tos: 106\nports/1/default_roce_tos: 96\n", 2, "once"),
    ],
)
def test_text_errors_name_the_line(raw: str, line: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(raw, "out.txt")
    assert (info.value.source, info.value.line) == ("out.txt", line)
    assert message in info.value.expected


def test_tree_with_nothing_to_read() -> None:
    with pytest.raises(ParseError) as info:
        parse_tree({"ports/1/other": "1\n"}, "rdma_cm/mlx5_0")
    assert "default_roce_tos" in info.value.expected


@st.composite
def records(draw: st.DrawFn) -> RoceTos:
    if draw(st.booleans()):
        tos = draw(st.none() | st.integers(0, 255))
        return RoceTos((RoceDefaults(None, tos, None if tos is not None else draw(st.sampled_from(MODES))),))
    ports = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3, unique=True).map(sorted))
    out = []
    for p in ports:
        tos, mode = draw(st.none() | st.integers(0, 255)), draw(st.none() | st.sampled_from(MODES))
        out.append(RoceDefaults(p, tos, mode if tos is not None or mode is not None else "RoCE v2"))
    return RoceTos(tuple(out))


@given(records())
def test_round_trip(record: RoceTos) -> None:
    assert parse(dump(record)) == record
    if record.ports[0].port is not None:
        assert parse_tree(dump_tree(record)) == record


def _only_parse_errors(call: Callable[[], object], raw: str = "") -> None:
    try:
        call()
    except ParseError as exc:
        assert exc.source.startswith("fuzz") and exc.expected
        assert exc.line is None or 1 <= exc.line <= raw.count("\n") + 2


PATHS = st.sampled_from(["ports/1/default_roce_tos", "ports/2/default_roce_mode", "ports/x/default_roce_tos"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(PATHS | st.text(max_size=15), st.text(max_size=12), max_size=4))
def test_random_trees_raise_only_parse_errors(files: dict[str, str]) -> None:
    _only_parse_errors(lambda: parse_tree(files, "fuzz"))


def test_a_bad_file_costs_that_default_with_a_collector() -> None:
    from unifab.errors import ParseProblems

    broken = {**TREE, "ports/1/default_roce_mode": "RoCE v3\n"}
    log = ParseProblems("rdma_cm/mlx5_0")
    got = parse_tree(broken, "rdma_cm/mlx5_0", log)
    (problem,) = log.problems
    assert problem.source == "rdma_cm/mlx5_0/ports/1/default_roce_mode"
    assert got.ports == (RoceDefaults(1, 106, None),)  # the TOS still reads; the mode is unknown, not a default
    with pytest.raises(ParseError):
        parse_tree(broken, "rdma_cm/mlx5_0")
