"""Tests for the upstream mlx5 debugfs ``cc_params/`` parser.

No sample of ours exists: the tree is reconstructed from the file list of kernel
``drivers/infiniband/hw/mlx5/cong.c`` (host-nic-roce.md §2.2), each file ``%u\\n``, with the firmware
defaults of §2.3 (CNP DSCP 48, CNP priority 6, ...).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.cc_params import LIMITS, PARAMS, CcParams, dump, dump_tree, parse, parse_tree

DEFAULTS = {
    "rp_clamp_tgt_rate": 0,
    "rp_clamp_tgt_rate_ati": 1,
    "rp_time_reset": 300,
    "rp_byte_reset": 32767,
    "rp_threshold": 1,
    "rp_ai_rate": 5,
    "rp_max_rate": 0,
    "rp_hai_rate": 50,
    "rp_min_dec_fac": 50,
    "rp_min_rate": 1,
    "rp_rate_to_set_on_first_cnp": 0,
    "rp_dce_tcp_g": 1019,
    "rp_dce_tcp_rtt": 1,
    "rp_rate_reduce_monitor_period": 4,
    "rp_initial_alpha_value": 1023,
    "rp_gd": 11,
    "np_min_time_between_cnps": 4,
    "np_cnp_dscp": 48,
    "np_cnp_prio_mode": 0,
    "np_cnp_prio": 6,
}
TREE = {name: f"{value}\n" for name, value in DEFAULTS.items()}


def test_tree_with_firmware_defaults() -> None:
    cc = parse_tree(TREE, "sys/kernel/debug/mlx5/0000:98:00.0/cc_params")
    assert cc.params == dict(sorted(DEFAULTS.items()))
    assert list(cc.params) == sorted(DEFAULTS)
    assert (cc.np_cnp_dscp, cc.np_cnp_prio, cc.np_cnp_prio_mode) == (48, 6, 0)
    assert set(cc.params) == set(PARAMS) - {"rtt_resp_dscp", "rtt_resp_dscp_valid"}
    assert dump_tree(cc) == dict(sorted(TREE.items()))


def test_whole_bdf_directory_and_general_cap() -> None:
    files = {f"cc_params/{name}": value for name, value in TREE.items()}
    files |= {"cc_params/rtt_resp_dscp": "26\n", "cc_params/rtt_resp_dscp_valid": "1\n"}
    files |= {"QPs/0x1fd2/state": "RTS\n", "CQs/0x10/cc": "1\n"}  # other debugfs directories are ignored
    cc = parse_tree(files)
    assert cc.params["rtt_resp_dscp"] == 26 and cc.params["rtt_resp_dscp_valid"] == 1
    assert len(cc.params) == 22


def test_prio_mode_one_and_unknown_future_parameter() -> None:
    cc = parse_tree({"np_cnp_prio_mode": "1\n", "np_new_knob": "7\n"})
    assert (cc.np_cnp_prio_mode, cc.np_cnp_prio, cc.np_cnp_dscp) == (1, None, None)
    assert cc.params == {"np_cnp_prio_mode": 1, "np_new_knob": 7}


def test_flat_form_matches_the_tree() -> None:
    flat = "".join(f"cc_params/{name}: {value}" for name, value in TREE.items())
    assert parse(flat, "flat.txt") == parse_tree(TREE)
    assert parse(dump(parse_tree(TREE))) == parse_tree(TREE)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("np_cnp_dscp", "64\n", "0..63 in np_cnp_dscp"),
        ("np_cnp_prio", "8\n", "0..7 in np_cnp_prio"),
        ("np_cnp_prio_mode", "2\n", "0..1"),
        ("rp_gd", "-1\n", "unsigned integer"),
        ("rp_gd", "\n", "unsigned integer"),
        ("rp_byte_reset", "4294967296\n", "0..4294967295"),
        ("RP GD", "1\n", "file name"),
    ],
)
def test_tree_errors_name_the_file(name: str, value: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_tree(TREE | {name: value}, "cc_params")
    assert (info.value.source, info.value.line) == (f"cc_params/{name}", 1)
    assert message in info.value.expected


def test_flat_errors_name_the_line() -> None:
    with pytest.raises(ParseError) as info:
        parse("np_cnp_dscp: 48\nnp_cnp_prio 6\n", "flat.txt")
    assert (info.value.source, info.value.line) == ("flat.txt", 2)
    with pytest.raises(ParseError) as info:
        parse("np_cnp_dscp: 48\nnp_cnp_prio: six\n", "flat.txt")
    assert (info.value.source, info.value.line) == ("flat.txt", 2) and "np_cnp_prio" in info.value.expected
    with pytest.raises(ParseError) as info:
        parse("np_cnp_dscp: 48\nnp_cnp_dscp: 46\n", "flat.txt")
    assert info.value.line == 2 and "once" in info.value.expected


@pytest.mark.parametrize("files", [{}, {"QPs/0x1/state": "RTS"}])
def test_nothing_to_read(files: dict[str, str]) -> None:
    with pytest.raises(ParseError) as info:
        parse_tree(files, "cc_params")
    assert "cc_params files" in info.value.expected
    with pytest.raises(ParseError):
        parse("", "flat.txt")


NAMES = st.sampled_from(PARAMS) | st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


@st.composite
def records(draw: st.DrawFn) -> CcParams:
    names = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
    return CcParams({name: draw(st.integers(0, LIMITS.get(name, 0xFFFFFFFF))) for name in sorted(names)})


@given(records())
def test_round_trip(cc: CcParams) -> None:
    assert parse_tree(dump_tree(cc)) == cc
    assert parse(dump(cc)) == cc


def _only_parse_errors(call: Callable[[], object], raw: str = "") -> None:
    try:
        call()
    except ParseError as exc:
        assert exc.source.startswith("fuzz") and exc.expected
        assert exc.line is None or 1 <= exc.line <= raw.count("\n") + 2


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(NAMES | st.text(max_size=15), st.text(max_size=12), max_size=6))
def test_random_trees_raise_only_parse_errors(files: dict[str, str]) -> None:
    _only_parse_errors(lambda: parse_tree(files, "fuzz"))


def test_a_bad_file_costs_that_parameter_with_a_collector() -> None:
    from unifab.errors import ParseProblems

    broken = {**TREE, "rp_gd": "many\n"}
    log = ParseProblems("cc_params")
    got = parse_tree(broken, "cc_params", log)
    (problem,) = log.problems
    assert problem.source == "cc_params/rp_gd" and problem.skipped == "rp_gd"
    assert got.params == {k: v for k, v in DEFAULTS.items() if k != "rp_gd"}
    with pytest.raises(ParseError):
        parse_tree(broken, "cc_params")  # without a collector the tree is still refused
    with pytest.raises(ParseError):
        parse_tree({"rp_gd": "x\n"}, "cc_params", ParseProblems("cc_params"))  # nothing usable
