r"""``show_gids [dev]`` (mlnx-tools ``sbin/show_gids``, MLNX_OFED / DOCA-OFED, every version since 2016).

The script prints a TAB-separated table of the non-zero GIDs of every port, skipping the bare
``fe80:0000:...:0000`` GID::

    DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
    ---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
    mlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe21:03da\t\t\tv1\trdma0
    mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:d3f2\t192.168.211.242  \tv2\trdma0
    n_gids_found=2

Column rules (from the script): a GID whose first group is ``0000`` gets an IPv4 column, computed
from its last 32 bits and followed by two spaces; other GIDs get two empty columns instead. ``VER``
is what ``grep -o "[Vv].*"`` leaves of ``gid_attrs/types/<i>`` (``IB/RoCE v1`` -> ``v1``,
``RoCE v2`` -> ``v2``; empty when the file is missing on old kernels). The last ``DEV`` is
``gid_attrs/ndevs/<i>``, empty on InfiniBand ports.

Rows are read by whitespace tokens, so captures whose TABs were expanded to spaces parse the same.
The header is required and the ``n_gids_found=N`` footer must count the rows: a missing footer or a
wrong count means a truncated or spliced capture.

With a :class:`~unifab.errors.ParseProblems` collector a row that cannot be read costs that GID only (the
footer then counts it too); the header and footer are still required, and a table of only bad rows raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["DASHES", "HEADER", "VERSIONS", "Gid", "dump", "parse"]

HEADER = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV"
DASHES = "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"
VERSIONS = ("v1", "v2")

_HEADER_TOKENS = ["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV"]
_GID = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
_IPV4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_FOOTER = re.compile(r"^n_gids_found=(\d+)$")
_NUM = re.compile(r"^\d+$")


@dataclass(frozen=True, slots=True)
class Gid:
    dev: str
    port: int
    index: int
    gid: str  # as printed: 8 groups of 4 hex digits
    ipv4: str | None  # None when the GID is not IPv4-mapped
    version: str | None  # "v1" | "v2"; None when gid_attrs/types is missing
    netdev: str | None  # None on InfiniBand ports (no gid_attrs/ndevs)

    @property
    def is_link_local(self) -> bool:
        return self.gid.lower().startswith("fe80:")


def _mapped_ipv4(gid: str) -> str:
    """The dotted quad show_gids derives from the last 32 bits of the GID."""
    tail = gid.replace(":", "")[-8:]
    return ".".join(str(int(tail[i : i + 2], 16)) for i in range(0, 8, 2))


def _row(tokens: list[str], number: int, source: str) -> Gid:
    def fail(expected: str) -> ParseError:
        return ParseError(source, expected, line=number)

    if len(tokens) < 4:
        raise fail("expected 'DEV PORT INDEX GID [IPv4] [VER] [DEV]'")
    dev, port, index, gid, *rest = tokens
    if not _NUM.match(port) or not _NUM.match(index):
        raise fail(f"expected a port and a GID index number, got {port!r} and {index!r}")
    if not _GID.match(gid):
        raise fail(f"expected a GID of 8 groups of 4 hex digits, got {gid!r}")
    ipv4 = None
    if gid.startswith("0000:"):  # show_gids prints the IPv4 column for these and only these
        m = _IPV4.match(rest[0]) if rest else None
        if m is None or any(int(octet) > 255 for octet in m.groups()):
            raise fail(f"expected the IPv4 address of GID {gid}")
        ipv4 = rest.pop(0)
        if ipv4 != _mapped_ipv4(gid):
            raise fail(f"expected IPv4 {_mapped_ipv4(gid)} (the last 32 bits of the GID), got {ipv4}")
    version = rest.pop(0) if rest and rest[0] in VERSIONS else None
    netdev = rest.pop(0) if rest else None
    if rest:
        raise fail(f"expected at most 'VER DEV' after the GID, got {' '.join(rest)!r}")
    return Gid(dev, int(port), int(index), gid, ipv4, version, netdev)


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Gid, ...]:
    """Read ``show_gids`` output (TAB-separated, or with TABs expanded to spaces)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    rows: list[Gid] = []
    skipped = 0
    state = "header"  # header -> dashes -> rows -> done
    for number, raw in enumerate(text.split("\n"), start=1):
        tokens = raw.split()
        if not tokens:
            continue
        if state == "header":
            if tokens != _HEADER_TOKENS:
                raise ParseError(source, "expected the header 'DEV PORT INDEX GID IPv4 VER DEV'", line=number)
            state = "dashes"
            continue
        if state == "dashes":
            state = "rows"
            if all(set(t) == {"-"} for t in tokens):
                continue
        if state == "done":
            raise ParseError(source, "expected nothing after 'n_gids_found=N'", line=number)
        if m := _FOOTER.match(raw.strip()):
            if int(m[1]) != len(rows) + skipped:
                counted = len(rows) + skipped
                raise ParseError(source, f"expected n_gids_found={counted} (the rows above), got {m[1]}", line=number)
            state = "done"
            continue
        with log.skipping(f"the GID row of line {number}") as row:
            rows.append(_row(tokens, number, source))
        skipped += row.failed
    if skipped and not rows:
        raise log.problems[0].error()
    if state != "done":
        if state == "header":
            raise ParseError(source, "expected show_gids output, got empty text", line=1)
        raise ParseError(source, "expected the footer 'n_gids_found=N'", line=max(1, text.count("\n")))
    return tuple(rows)


def dump(gids: tuple[Gid, ...]) -> str:
    """Write ``gids`` the way show_gids prints them (TABs, two spaces after the IPv4 address)."""
    out = [HEADER, DASHES]
    for g in gids:
        ipv4 = f"{g.ipv4}  \t" if g.ipv4 is not None else "\t\t"
        out.append(f"{g.dev}\t{g.port}\t{g.index}\t{g.gid}\t{ipv4}{g.version or ''}\t{g.netdev or ''}")
    out.append(f"n_gids_found={len(gids)}")
    return "".join(line + "\n" for line in out)
