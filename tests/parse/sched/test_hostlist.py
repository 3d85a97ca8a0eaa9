"""Tests for Slurm hostlist expansion and compression: every case of the real transcript, variants, errors."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.sched.hostlist import MAX_HOSTS, compress, expand, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
SAMPLE = "scheduler/slurm_hostlist_expansion.txt"
_COMMAND = re.compile(r'^\$ scontrol show (hostnames|hostlist|hostlistsorted) "?([^"]*)"?$')


def transcript(text: str) -> list[tuple[str, str, list[str]]]:
    """(command, argument, output lines) for each ``$ scontrol show ...`` of the sample."""
    cases: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        m = _COMMAND.match(line)
        if m is not None:
            cases.append((m[1], m[2], []))
        elif line.strip():
            cases[-1][2].append(line)
    return cases


def outcome(command: str, argument: str) -> object:
    if command == "hostnames":
        try:
            return list(expand(argument))
        except ParseError as exc:
            return f"ParseError: {exc.expected}"
    return compress(argument.split(","), sort=command == "hostlistsorted")


def test_sample_has_the_six_cases(samples: Path) -> None:
    cases = transcript((samples / SAMPLE).read_text())
    assert [c[0] for c in cases] == ["hostnames"] * 4 + ["hostlist", "hostlistsorted"]


def test_every_sample_case(samples: Path) -> None:
    for command, argument, output in transcript((samples / SAMPLE).read_text()):
        if output == [f"Invalid hostlist: {argument}"]:
            with pytest.raises(ParseError) as info:
                expand(argument, "t")
            assert "suffix 'b'" in info.value.expected and "Invalid hostlist" in info.value.expected
        elif command == "hostnames":
            assert list(expand(argument)) == output, argument
        else:
            assert [compress(argument.split(","), sort=command == "hostlistsorted")] == output, argument


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    cases = transcript((samples / SAMPLE).read_text())
    golden(GOLDEN / "slurm_hostlist_expansion.json", {f"{c} {a}": outcome(c, a) for c, a, _ in cases})


def test_sample_values_by_hand() -> None:
    assert expand("gpu-[001-004,010]") == ("gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-010")
    assert expand("rack[1-2]-n[1-2]") == ("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2")
    assert compress(["dgx-h100-004", "dgx-h100-001", "dgx-h100-002"], sort=True) == "dgx-h100-[001-002,004]"


# --- variants -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("", ()),
        ("  ", ()),
        ("gpu1", ("gpu1",)),
        ("n[9-11]", ("n9", "n10", "n11")),  # padding comes from the low bound only
        ("n[098-100]", ("n098", "n099", "n100")),
        ("n[1,1]", ("n1", "n1")),  # duplicates kept, like scontrol show hostnames
        ("a,,b", ("a", "b")),
        ("a b\tc\nd", ("a", "b", "c", "d")),
        ("n[ 1 - 2 ]".replace(" - ", "-"), ("n1", "n2")),
        ("[1-2]", ("1", "2")),
        ("r[1-2]c[01-02]n[1]", ("r1c01n1", "r1c02n1", "r2c01n1", "r2c02n1")),
        ("x[3,1-2],y", ("x3", "x1", "x2", "y")),
    ],
)
def test_expand_variants(expr: str, hosts: tuple[str, ...]) -> None:
    assert expand(expr) == hosts


@pytest.mark.parametrize(
    ("names", "expr"),
    [
        (["n1", "n2", "n3"], "n[1-3]"),
        (["n3", "n1", "n2"], "n[3,1-2]"),  # unsorted: written order
        (["n9", "n10"], "n[9-10]"),
        (["n09", "n10"], "n[09-10]"),
        (["n9", "n010"], "n[9,010]"),
        (["login", "n1", "n2", "m1"], "login,n[1-2],m1"),
        (["a1", "b1", "a2"], "a1,b1,a2"),
        ([], ""),
    ],
)
def test_compress_variants(names: list[str], expr: str) -> None:
    assert compress(names) == expr
    assert list(expand(expr)) == names


def test_sorted_compress_drops_duplicates() -> None:
    assert compress(["n2", "n1", "n2", "m5"], sort=True) == "m5,n[1-2]"


def test_compress_rejects_non_names() -> None:
    with pytest.raises(ValueError, match="not a host name"):
        compress(["n[1-2]"])


def test_parse_entry_point_reads_a_file() -> None:
    assert parse("dgx-h100-[001-002]\ndgx-h100-006\n") == ("dgx-h100-001", "dgx-h100-002", "dgx-h100-006")


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("node-a[01-02]b", "suffix 'b'"),
        ("n[1-2", "']' closing the '[' at character 2"),
        ("n1-2]", "'[' before ']' at character 5"),
        ("n[1-[2]]", "brackets do not nest"),
        ("n[]", "inside '[]'"),
        ("n[a-b]", "got 'a-b'"),
        ("n[5-3]", "lo <= hi"),
        ("n[1--2]", "got '1--2'"),
        ("n[0-99999]", f"at most {MAX_HOSTS} hosts"),
        ("a[0-999]b[0-999]", f"at most {MAX_HOSTS} hosts"),
    ],
)
def test_errors(expr: str, needle: str) -> None:
    with pytest.raises(ParseError) as info:
        expand(expr, "t.txt")
    assert needle in info.value.expected
    assert info.value.source == "t.txt" and info.value.line == 1


def test_error_line_in_a_file() -> None:
    with pytest.raises(ParseError) as info:
        parse("n[1-2]\nm[3-1]\n", "hosts.txt")
    assert info.value.line == 2 and str(info.value).startswith("hosts.txt:2: ")


def test_empty_file_is_an_error() -> None:
    with pytest.raises(ParseError) as info:
        parse(" \n", "t")
    assert "empty" in info.value.expected


# --- properties -----------------------------------------------------------------------------------

NAME = st.builds(
    lambda prefix, digits: prefix + digits,
    st.from_regex(r"[a-z][a-z\-]{0,4}", fullmatch=True),
    st.from_regex(r"[0-9]{0,4}", fullmatch=True),
)


@given(st.lists(NAME, max_size=30))
def test_compress_round_trip(names: list[str]) -> None:
    assert list(expand(compress(names))) == names


@given(st.lists(NAME, max_size=30))
def test_sorted_compress_is_a_sorted_set(names: list[str]) -> None:
    hosts = expand(compress(names, sort=True))
    assert sorted(hosts) == sorted(set(names)) and len(hosts) == len(set(names))


@given(st.text(max_size=60))
def test_random_text_raises_only_parse_errors(text: str) -> None:
    try:
        hosts = expand(text, "fuzz")
    except ParseError as exc:
        assert exc.source == "fuzz" and exc.expected
        assert exc.line is not None and 1 <= exc.line <= text.count("\n") + 1
    else:
        assert len(hosts) <= MAX_HOSTS


@given(st.text(alphabet="ab01-[],", max_size=30))
def test_bracket_soup_raises_only_parse_errors(text: str) -> None:
    with contextlib.suppress(ParseError):
        expand(text)
