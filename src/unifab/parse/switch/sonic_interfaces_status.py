"""SONiC ``show interfaces status`` (sonic-utilities ``intfutil -c status``, 201911 .. 202411): the port table.

``intfutil`` prints a ``tabulate`` table (``tablefmt="simple"``): a header, a rule of dashes under each column,
then one right-aligned row per port and port channel::

      Interface            Lanes    Speed    MTU    FEC      Alias             Vlan    Oper    Admin  ...
    ---------------  ---------------  -------  -----  -----  ---------  ---------------  ------  -------  ...
          Ethernet0                0      25G   9100     rs  Ethernet0           routed    down       up  ...
    PortChannel0001              N/A       0M   9100    N/A        N/A           routed    down       up  ...

The column set changed over releases (older images lack ``FEC`` and ``Vlan``; newer ones add ``Oper Speed``
and print ``Type`` values with blanks such as ``QSFP28 or later``), so columns are found by name in the
header (``Asym PFC`` and ``Oper Speed`` are two-word names). A row is cut at the dashed rule's column spans;
when the padding was collapsed in a paste (the cells no longer line up under the rule) the row is read by
tokens, the extra tokens going to ``Type``, the one column whose values hold blanks.

* ``speed_mbps`` / ``oper_speed_mbps``: ``25G`` -> 25000, ``100M`` -> 100, ``2.5G`` -> 2500; ``N/A`` and
  ``0M`` (a port channel with no member up) read as ``None``.
* ``lanes``: the hardware lanes (``N/A`` on port channels: empty); ``mtu`` in bytes; ``fec`` as printed
  (``rs``, ``fc``, ``none``, ``auto``; ``None`` for ``N/A``).
* ``admin_up`` / ``oper_up``: ``up`` / ``down``, ``None`` for ``N/A``.

Leading prompt lines (``admin@sonic:~$ show interfaces status``) are ignored. With a
:class:`~unifab.errors.ParseProblems` collector a row that cannot be read costs that port; the header and
the rule are required, and a table with no row read raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts, parse_uint

__all__ = ["COLUMNS", "SonicInterfaceStatus", "dump", "parse", "speed_to_mbps"]

# header name -> field; "Interface" is required, the rest are read when printed
COLUMNS = (
    "Interface",
    "Lanes",
    "Speed",
    "MTU",
    "FEC",
    "Alias",
    "Vlan",
    "Oper",
    "Admin",
    "Type",
    "Asym PFC",
    "Oper Speed",
)
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)([MG])$")
_RULE = re.compile(r"-+")
_NA = "N/A"


@dataclass(frozen=True, slots=True)
class SonicInterfaceStatus:
    name: str
    lanes: tuple[int, ...]
    speed_mbps: int | None
    mtu: int | None
    fec: str | None
    alias: str | None
    vlan: str | None  # "routed", "trunk", a VLAN id, or the port channel the port is a member of
    oper_up: bool | None
    admin_up: bool | None
    type: str | None  # transceiver type, e.g. "QSFP28 or later"
    asym_pfc: str | None  # "on" | "off"
    oper_speed_mbps: int | None = None


def speed_to_mbps(text: str) -> int | None:
    """``25G`` -> 25000, ``100M`` -> 100; ``N/A`` and ``0M`` -> ``None``; ``ValueError`` for anything else."""
    if text == _NA:
        return None
    m = _SPEED.fullmatch(text)
    if m is None:
        raise ValueError(text)
    value = float(m[1]) * (1000 if m[2] == "G" else 1)
    return round(value) or None


def _header_columns(header: str) -> list[str]:
    names = [c.strip() for c in re.split(r"\s{2,}", header.strip()) if c.strip()]
    return names


def _spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _RULE.finditer(rule)]


def _cells_fixed(line: str, spans: list[tuple[int, int]]) -> list[str] | None:
    """The row cut at the rule's spans, or ``None`` when a cell spills out of its column."""
    cells = []
    for i, (start, end) in enumerate(spans):
        if start > 0 and start <= len(line) and not line[start - 1].isspace():
            return None
        nxt = spans[i + 1][0] if i + 1 < len(spans) else None
        if nxt is not None and end < len(line) and end < nxt and line[end:nxt].strip():
            return None
        cells.append(line[start : nxt if nxt is not None else len(line)].strip())
    if len(line) > spans[-1][1] and line[spans[-1][1] :].strip():
        return None
    return cells if all(cells) else None


def _cells_tokens(line: str, columns: list[str]) -> list[str] | None:
    tokens = line.split()
    extra = len(tokens) - len(columns)
    if extra < 0 or (extra > 0 and "Type" not in columns):
        return None
    at = columns.index("Type") if extra else len(tokens)
    return [*tokens[:at], " ".join(tokens[at : at + extra + 1]), *tokens[at + extra + 1 :]] if extra else tokens


def _state(value: str, column: str, source: str, line: int) -> bool | None:
    if value == _NA:
        return None
    if value not in ("up", "down"):
        raise ParseError(source, f"expected up, down or N/A in column {column}, got {value!r}", line=line)
    return value == "up"


def _speed(value: str, column: str, source: str, line: int) -> int | None:
    try:
        return speed_to_mbps(value)
    except ValueError:
        raise ParseError(
            source, f"expected a speed such as 25G or 100M in {column}, got {value!r}", line=line
        ) from None


def _row(cells: dict[str, str], source: str, line: int) -> SonicInterfaceStatus:
    def opt(column: str) -> str | None:
        value = cells.get(column)
        return None if value in (None, _NA) else value

    lanes_text = cells.get("Lanes", _NA)
    lanes = (
        ()
        if lanes_text == _NA
        else tuple(parse_uint(x, source, "a lane number", line=line) for x in lanes_text.split(","))
    )
    mtu_text = cells.get("MTU", _NA)
    return SonicInterfaceStatus(
        name=cells["Interface"],
        lanes=lanes,
        speed_mbps=_speed(cells.get("Speed", _NA), "Speed", source, line),
        mtu=None if mtu_text == _NA else parse_uint(mtu_text, source, "an MTU in bytes", line=line, hi=65535),
        fec=opt("FEC"),
        alias=opt("Alias"),
        vlan=opt("Vlan"),
        oper_up=_state(cells.get("Oper", _NA), "Oper", source, line),
        admin_up=_state(cells.get("Admin", _NA), "Admin", source, line),
        type=opt("Type"),
        asym_pfc=opt("Asym PFC"),
        oper_speed_mbps=_speed(cells.get("Oper Speed", _NA), "Oper Speed", source, line),
    )


def parse(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[SonicInterfaceStatus, ...]:
    """The rows of ``show interfaces status``, in printed order."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lines = [(n, raw.rstrip()) for n, raw in enumerate(blank_prompts(text).splitlines(), start=1) if raw.strip()]
    expected_header = "expected the header 'Interface  Lanes  Speed  MTU ...' of show interfaces status"
    if not lines:
        raise ParseError(source, expected_header + ", got empty text", line=1)
    n0, header = lines[0]
    columns = _header_columns(header)
    if (
        not columns
        or columns[0] != "Interface"
        or not set(columns) <= set(COLUMNS)
        or len(set(columns)) != len(columns)
    ):
        raise ParseError(source, expected_header, line=n0)
    if len(lines) < 2 or not all(_RULE.fullmatch(w) for w in lines[1][1].split()):
        raise ParseError(
            source, "expected the dashed rule under the header", line=lines[1][0] if len(lines) > 1 else n0
        )
    n1, rule = lines[1]
    spans = _spans(rule)
    if len(spans) != len(columns):
        raise ParseError(source, f"expected one dashed rule per column ({len(columns)}), got {len(spans)}", line=n1)
    rows: list[SonicInterfaceStatus] = []
    for n, line in lines[2:]:
        name = line.split()[0]
        with log.skipping(f"port {name[:40]}"):
            cells = _cells_fixed(line, spans) or _cells_tokens(line, columns)
            if cells is None:
                raise ParseError(source, f"expected {len(columns)} cells ({'  '.join(columns)})", line=n)
            rows.append(_row(dict(zip(columns, cells, strict=True)), source, n))
    if not rows and log.problems:
        raise log.problems[0].error()
    return tuple(rows)


def _speed_text(mbps: int | None) -> str:
    if mbps is None:
        return _NA
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


def dump(rows: tuple[SonicInterfaceStatus, ...]) -> str:
    """The table as ``intfutil`` prints it (every column, right-aligned, two blanks between columns)."""
    body = [
        [
            r.name,
            ",".join(str(x) for x in r.lanes) or _NA,
            _speed_text(r.speed_mbps),
            str(r.mtu) if r.mtu is not None else _NA,
            r.fec or _NA,
            r.alias or _NA,
            r.vlan or _NA,
            _NA if r.oper_up is None else ("up" if r.oper_up else "down"),
            _NA if r.admin_up is None else ("up" if r.admin_up else "down"),
            r.type or _NA,
            r.asym_pfc or _NA,
            _speed_text(r.oper_speed_mbps),
        ]
        for r in rows
    ]
    widths = [max([len(c), *(len(row[i]) for row in body)]) for i, c in enumerate(COLUMNS)]
    out = ["  ".join(c.rjust(w) for c, w in zip(COLUMNS, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "".join(line + "\n" for line in out)
