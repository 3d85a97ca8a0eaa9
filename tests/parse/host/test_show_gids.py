"""Tests for the ``show_gids`` parser: the real husky capture, constructed variants, errors, round trip."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.show_gids import DASHES, HEADER, Gid, dump, parse

GOLDEN = Path(__file__).parent / "golden"
GoldenCheck = Callable[[Path, object], None]
HUSKY = "host/show_gids_husky.txt"


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "gids.txt")
    return info.value


# --- real sample ----------------------------------------------------------------------------------


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "show_gids_husky.json", parse((samples / HUSKY).read_text(), HUSKY))


def test_husky_values(samples: Path) -> None:
    gids = parse((samples / HUSKY).read_text())
    assert [(g.index, g.version, g.ipv4) for g in gids] == [
        (0, "v1", None),
        (1, "v2", None),
        (2, "v1", "192.168.211.242"),
        (3, "v2", "192.168.211.242"),
    ]
    assert {(g.dev, g.port, g.netdev) for g in gids} == {("mlx5_0", 1, "rdma0")}
    assert gids[0].is_link_local and not gids[3].is_link_local
    # the usual NCCL_IB_GID_INDEX=3: RoCE v2 with an IPv4-mapped GID
    assert [g.index for g in gids if g.version == "v2" and g.ipv4] == [3]


def test_render_reproduces_the_sample_byte_for_byte(samples: Path) -> None:
    raw = (samples / HUSKY).read_text()
    assert dump(parse(raw)) == raw


def test_tabs_expanded_to_spaces_read_the_same(samples: Path) -> None:
    raw = (samples / HUSKY).read_text()
    assert parse(raw.expandtabs(8)) == parse(raw)
    assert parse(raw.replace("\t", " ")) == parse(raw)


# --- constructed variants -------------------------------------------------------------------------

# Built from the script's printf formats (mlnx-tools sbin/show_gids): a host whose mlx5_1 port has no IPv4
# address (only its link-local and a global IPv6 GID) and an InfiniBand HCA (no netdev).
NO_IPV4 = text(
    HEADER,
    DASHES,
    "mlx5_0\t1\t0\tfe80:0000:0000:0000:e61d:2dff:fe72:3b40\t\t\tv1\tens1f0np0",
    "mlx5_0\t1\t1\tfe80:0000:0000:0000:e61d:2dff:fe72:3b40\t\t\tv2\tens1f0np0",
    "mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv1\tens1f0np0",
    "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\tens1f0np0",
    "mlx5_1\t1\t0\tfe80:0000:0000:0000:e61d:2dff:fe72:3b41\t\t\tv1\tens1f1np1",
    "mlx5_1\t1\t1\tfe80:0000:0000:0000:e61d:2dff:fe72:3b41\t\t\tv2\tens1f1np1",
    "mlx5_1\t1\t2\t2001:0db8:0000:0001:e61d:2dff:fe72:3b41\t\t\tv1\tens1f1np1",
    "mlx5_1\t1\t3\t2001:0db8:0000:0001:e61d:2dff:fe72:3b41\t\t\tv2\tens1f1np1",
    "mlx5_2\t1\t0\tfe80:0000:0000:0000:b83f:d203:00a1:b2c4\t\t\tv1\t",
    "n_gids_found=9",
)


def test_port_without_ipv4_gids() -> None:
    gids = parse(NO_IPV4)
    mlx5_1 = [g for g in gids if g.dev == "mlx5_1"]
    assert [g.ipv4 for g in mlx5_1] == [None] * 4
    assert [g.gid[:4] for g in mlx5_1] == ["fe80", "fe80", "2001", "2001"]
    assert not any(g.version == "v2" and g.ipv4 for g in mlx5_1)  # NCCL would stay on index 0 here
    assert gids[-1] == Gid("mlx5_2", 1, 0, "fe80:0000:0000:0000:b83f:d203:00a1:b2c4", None, "v1", None)
    assert dump(gids) == NO_IPV4


def test_spaces_instead_of_tabs() -> None:
    # what a blog copy looks like: TABs turned into runs of spaces, trailing space dropped
    spaced = "\n".join(" ".join(line.split()) for line in NO_IPV4.splitlines()) + "\n"
    assert parse(spaced) == parse(NO_IPV4)
    assert parse(NO_IPV4.expandtabs(4).replace("\n", "\r\n")) == parse(NO_IPV4)


def test_old_kernel_without_gid_types() -> None:
    # no gid_attrs/types: the VER column is empty
    raw = text(HEADER, DASHES, "mlx4_0\t1\t0\tfe80:0000:0000:0000:0202:c9ff:fe00:0001\t\t\t\teth2", "n_gids_found=1")
    (gid,) = parse(raw)
    assert (gid.version, gid.netdev) == (None, "eth2")
    assert dump((gid,)) == raw


def test_dash_line_is_optional_and_empty_table_reads() -> None:
    assert parse(text(HEADER, "n_gids_found=0")) == ()
    assert parse(dump(())) == ()


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n\n", " \t\n"])
def test_empty_text(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


def test_missing_header() -> None:
    err = parse_error(text("mlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe21:03da\t\t\tv1\trdma0"))
    assert err.line == 1 and "header" in err.expected


def test_truncated_capture_has_no_footer(samples: Path) -> None:
    raw = (samples / HUSKY).read_text()
    err = parse_error(raw[: raw.index("n_gids_found")])
    assert "n_gids_found" in err.expected


def test_footer_counts_the_rows() -> None:
    err = parse_error(NO_IPV4.replace("n_gids_found=9", "n_gids_found=10"))
    assert err.line == 12 and "n_gids_found=9" in err.expected


def test_row_after_footer() -> None:
    err = parse_error(NO_IPV4 + "mlx5_3\t1\t0\tfe80:0000:0000:0000:0000:0000:0000:0001\t\t\tv1\teth3\n")
    assert err.line == 13 and "nothing after" in err.expected


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("fe80:0000:0000:0000:e61d:2dff:fe72:3b41", "fe80::e61d:2dff:fe72:3b41", 7, "8 groups"),
        ("10.0.0.1  \tv1", "10.0.0.2  \tv1", 5, "last 32 bits"),
        ("10.0.0.1  \tv1", "\tv1", 5, "IPv4 address"),
        ("mlx5_1\t1\t1", "mlx5_1\tone\t1", 8, "port and a GID index"),
    ],
)
def test_bad_rows_name_the_line(old: str, new: str, line: int, message: str) -> None:
    err = parse_error(NO_IPV4.replace(old, new, 1))
    assert (err.line, err.source) == (line, "gids.txt")
    assert message in err.expected


def test_extra_columns() -> None:
    err = parse_error(text(HEADER, "mlx5_0 1 0 fe80:0000:0000:0000:0ac0:ebff:fe21:03da v1 rdma0 extra"))
    assert err.line == 2 and "'extra'" in err.expected


# --- round trip -----------------------------------------------------------------------------------

HEX4 = st.text("0123456789abcdef", min_size=4, max_size=4)
NAME = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True).filter(lambda s: s not in ("v1", "v2"))


@st.composite
def gids(draw: st.DrawFn) -> Gid:
    mapped = draw(st.booleans())
    if mapped:
        octets = draw(st.tuples(*[st.integers(0, 255)] * 4))
        gid = "0000:0000:0000:0000:0000:ffff:" + "{:02x}{:02x}:{:02x}{:02x}".format(*octets)
        ipv4 = ".".join(map(str, octets))
    else:
        first = draw(HEX4.filter(lambda h: h != "0000"))
        gid = ":".join([first, *draw(st.lists(HEX4, min_size=7, max_size=7))])
        ipv4 = None
    return Gid(
        dev=draw(NAME),
        port=draw(st.integers(1, 4)),
        index=draw(st.integers(0, 255)),
        gid=gid,
        ipv4=ipv4,
        version=draw(st.sampled_from([None, "v1", "v2"])),
        netdev=draw(st.none() | NAME),
    )


@given(st.lists(gids(), max_size=6).map(tuple))
def test_round_trip(rows: tuple[Gid, ...]) -> None:
    out = dump(rows)
    assert parse(out) == rows
    assert parse(out.expandtabs(8)) == rows
