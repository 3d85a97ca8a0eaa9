"""Tests for NCCL settings from a job environment, environment dumps and batch-script exports."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.sched.nccl_env import (
    NcclDevice,
    NcclDeviceList,
    device_list,
    nccl_settings,
    parse_env,
    parse_script,
)

# --- integers as NCCL reads them (strtoll base 0) -------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value", "problem"),
    [
        ("106", 106, None),
        ("0x6a", 106, None),
        ("0X6A", 106, None),
        ("0152", 106, None),  # octal: a leading zero changes the number
        ("  106", 106, None),
        ("+106", 106, None),
        ("-1", None, None),  # NCCL's "unset"
        ("", None, None),  # empty is unset
        ("106 ", 106, "ignores ' '"),
        ("106abc", 106, "ignores 'abc'"),
        ("08", 0, "ignores '8'"),
        ("abc", None, "not a number"),
        ("256", None, "outside 0..255"),
        ("-5", None, "outside 0..255"),
        ("99999999999999999999", None, "overflows"),
    ],
)
def test_ib_tc_values(raw: str, value: int | None, problem: str | None) -> None:
    s = nccl_settings({"NCCL_IB_TC": raw})
    assert s.ib_tc == value
    if problem is None:
        assert s.problems == ()
    else:
        assert len(s.problems) == 1 and problem in s.problems[0] and "NCCL_IB_TC" in s.problems[0]


def test_all_integer_variables() -> None:
    s = nccl_settings(
        {
            "NCCL_IB_TC": "106",
            "NCCL_IB_FIFO_TC": "184",
            "NCCL_IB_SL": "3",
            "NCCL_IB_GID_INDEX": "3",
            "NCCL_IB_ROCE_VERSION_NUM": "2",
            "NCCL_DEBUG": "INFO",
        }
    )
    assert (s.ib_tc, s.ib_fifo_tc, s.ib_sl, s.ib_gid_index, s.ib_roce_version_num) == (106, 184, 3, 3, 2)
    assert s.ib_dscp == 26 and s.ib_hca is None and s.socket_ifname is None and s.problems == ()


def test_unset_environment_is_all_defaults() -> None:
    s = nccl_settings({})
    assert (s.ib_tc, s.ib_sl, s.ib_gid_index, s.ib_hca, s.ib_dscp) == (None, None, None, None, None)


@pytest.mark.parametrize(("name", "raw"), [("NCCL_IB_SL", "16"), ("NCCL_IB_ROCE_VERSION_NUM", "3")])
def test_range_checks(name: str, raw: str) -> None:
    s = nccl_settings({name: raw})
    assert s.problems and "outside" in s.problems[0]


# --- NCCL_IB_HCA / NCCL_SOCKET_IFNAME -------------------------------------------------------------


def hca(raw: str) -> NcclDeviceList:
    s = nccl_settings({"NCCL_IB_HCA": raw})
    assert s.ib_hca is not None
    return s.ib_hca


def test_include_list_with_ports() -> None:
    h = hca("mlx5_0:1,mlx5_3:1,mlx5_4")
    assert (h.exclude, h.exact) == (False, False)
    assert h.devices == (NcclDevice("mlx5_0", 1), NcclDevice("mlx5_3", 1), NcclDevice("mlx5_4", None))
    assert h.selects("mlx5_0", 1) and not h.selects("mlx5_0", 2) and h.selects("mlx5_4", 2)
    assert not h.selects("mlx5_1", 1)


def test_prefix_match_catches_mlx5_10() -> None:
    h = hca("mlx5_1")
    assert h.selects("mlx5_1") and h.selects("mlx5_10") and h.selects("mlx5_17")
    exact = hca("=mlx5_1")
    assert exact.exact and exact.selects("mlx5_1") and not exact.selects("mlx5_10")


def test_exclude_and_exact_exclude() -> None:
    ex = hca("^mlx5_bond")
    assert ex.exclude and not ex.selects("mlx5_bond_0") and ex.selects("mlx5_0")
    both = hca("^=mlx5_0")
    assert both.exclude and both.exact and not both.selects("mlx5_0") and both.selects("mlx5_0x")


def test_order_of_prefix_characters_matters() -> None:
    # NCCL checks '^' first, then '='; "=^x" is an exact list whose name is "^x".
    h = hca("=^mlx5_0")
    assert h.exact and not h.exclude and h.devices == (NcclDevice("^mlx5_0", None),)
    assert any("matched literally" in p for p in nccl_settings({"NCCL_IB_HCA": "=^mlx5_0"}).problems)


def test_odd_entries_are_reported() -> None:
    problems: list[str] = []
    h = device_list("NCCL_IB_HCA", "mlx5_0, mlx5_1,,:1,mlx5_2:x,mlx5_3:1:2", problems)
    assert h.devices == (
        NcclDevice("mlx5_0", None),
        NcclDevice(" mlx5_1", None),  # the space is part of the name: it never matches
        NcclDevice("mlx5_2", 0),  # atoi("x")
        NcclDevice("mlx5_3", 1),  # the rest after the port is skipped
    )
    assert len(problems) == 2 and "' mlx5_1'" in problems[0] and "'x'" in problems[1]


def test_bare_caret_excludes_everything() -> None:
    s = nccl_settings({"NCCL_IB_HCA": "^"})
    assert s.ib_hca is not None and not s.ib_hca.selects("mlx5_0")
    assert s.problems == ("NCCL_IB_HCA='^' excludes every device",)


def test_socket_ifname() -> None:
    s = nccl_settings({"NCCL_SOCKET_IFNAME": "^docker,lo"})
    assert s.socket_ifname is not None
    assert not s.socket_ifname.selects("docker0") and not s.socket_ifname.selects("lo")
    assert s.socket_ifname.selects("eth0")


# --- environment dumps ----------------------------------------------------------------------------


def test_proc_environ_nul_separated() -> None:
    env = parse_env("SLURM_JOB_ID=1\0NCCL_IB_TC=106\0NCCL_IB_HCA==mlx5_0:1\0MULTI=a\nb\0\0")
    assert env == {"SLURM_JOB_ID": "1", "NCCL_IB_TC": "106", "NCCL_IB_HCA": "=mlx5_0:1", "MULTI": "a\nb"}


def test_proc_environ_first_wins_and_errors() -> None:
    assert parse_env("A=1\0A=2\0") == {"A": "1"}
    with pytest.raises(ParseError) as info:
        parse_env("A=1\0\nnot-an-assignment\0", "environ")
    assert info.value.line == 2 and "NAME=value" in info.value.expected


def test_newline_dump_with_sacct_header_and_multiline_value() -> None:
    text = (
        "Environment used for 1 (must be batch job)\n"
        "--------------------------------------------------------------------------------\n"
        "NCCL_IB_TC=106\n"
        "BASH_FUNC_module%%=() {  eval `/usr/bin/modulecmd bash $*`\n"
        "}\n"
        "NCCL_IB_TC=0\n"
        "continuation of the ignored duplicate\n"
        "NCCL_SOCKET_IFNAME=eth0\n"
    )
    env = parse_env(text)
    assert env == {
        "NCCL_IB_TC": "106",
        "BASH_FUNC_module%%": "() {  eval `/usr/bin/modulecmd bash $*`\n}",
        "NCCL_SOCKET_IFNAME": "eth0",
    }


def test_newline_dump_errors() -> None:
    with pytest.raises(ParseError) as info:
        parse_env("\nnot an env dump\nA=1\n", "env.txt")  # (a '# comment' line there is a pasted comment)
    assert info.value.line == 2
    assert parse_env("") == {} and parse_env("\n \n") == {}


# --- batch scripts --------------------------------------------------------------------------------

SCRIPT = """#!/bin/bash
#SBATCH --job-name=llama
#SBATCH --export=ALL,NCCL_DEBUG=INFO,NCCL_IB_HCA=mlx5_0,mlx5_1
#SBATCH -N 4
module load nccl  # comment with export NCCL_IB_TC=1
TC=106
export NCCL_IB_TC=$TC
export NCCL_IB_GID_INDEX=3 NCCL_IB_SL='3'
export NCCL_IB_HCA="=mlx5_0:1,mlx5_3:1"
NCCL_SOCKET_IFNAME=eth0   # a shell variable only: NCCL never sees it
UNSEEN=1; export UNSEEN
declare -x NCCL_IB_FIFO_TC=184
export NCCL_TOPO_FILE=${TOPO_DIR:-/etc/nccl}/topo.xml
export NCCL_NET_PLUGIN=$PLUGIN_PATH
export LONG=a\\
b
if [ -n "$X" ]; then export NCCL_DEBUG_SUBSYS=INIT; fi
NCCL_IB_QPS_PER_CONNECTION=4 srun --mpi=pmix python train.py
'echo'=1
"""


def test_script_exports() -> None:
    env = parse_script(SCRIPT)
    assert env == {
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_3:1",  # the export overrides sbatch's comma-split value
        "NCCL_IB_TC": "106",
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_SL": "3",
        "UNSEEN": "1",
        "NCCL_IB_FIFO_TC": "184",
        "NCCL_TOPO_FILE": "/etc/nccl/topo.xml",
        "NCCL_NET_PLUGIN": "$PLUGIN_PATH",  # unknown: kept verbatim
        "LONG": "ab",
        "NCCL_DEBUG_SUBSYS": "INIT",  # conditionals are not followed
        "NCCL_IB_QPS_PER_CONNECTION": "4",
    }
    s = nccl_settings(env)
    assert (s.ib_tc, s.ib_sl, s.ib_gid_index, s.ib_fifo_tc) == (106, 3, 3, 184)
    assert s.ib_hca is not None and s.ib_hca.exact and s.socket_ifname is None


def test_sbatch_export_splits_at_commas() -> None:
    # sbatch splits --export at commas: "mlx5_1" becomes a name to propagate, not part of the value.
    assert parse_script("#SBATCH --export=NCCL_IB_HCA=mlx5_0,mlx5_1\n") == {"NCCL_IB_HCA": "mlx5_0"}


def test_export_of_an_unset_name_and_quotes() -> None:
    env = parse_script('export A\nB="x y"\nexport B\nexport C="$B z" D=\'$B\'\n')
    assert env == {"B": "x y", "C": "x y z", "D": "$B"}


@pytest.mark.parametrize(("text", "line"), [("export A='x\n", 1), ('\n\nexport A="x\n', 3)])
def test_script_unclosed_quote(text: str, line: int) -> None:
    with pytest.raises(ParseError) as info:
        parse_script(text, "job.sh")
    assert info.value.line == line and "closing" in info.value.expected


# --- properties -----------------------------------------------------------------------------------


@given(st.text(max_size=200))
def test_env_dump_raises_only_parse_errors(text: str) -> None:
    try:
        env = parse_env(text, "fuzz")
    except ParseError as exc:
        assert exc.source == "fuzz" and exc.line is not None
        assert 1 <= exc.line <= text.count("\n") + 1
    else:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())


@given(st.dictionaries(st.sampled_from(["NCCL_IB_TC", "NCCL_IB_HCA", "NCCL_IB_SL", "NCCL_SOCKET_IFNAME"]), st.text()))
def test_settings_never_raise(env: dict[str, str]) -> None:
    nccl_settings(env)


@given(st.integers(0, 255), st.sampled_from(["{}", "{:#x}", "0{:o}", "{:#X}"]))
def test_every_spelling_of_a_tc(tc: int, spelling: str) -> None:
    text = spelling.format(tc)
    assert nccl_settings({"NCCL_IB_TC": text}).ib_tc == tc
