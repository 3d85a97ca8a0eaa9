"""Cumulus Linux NVUE ``nv show system`` (text; Cumulus Linux 5.2 and later).

NVUE prints a table of attributes with an ``operational`` and an ``applied`` column (NVIDIA's command
reference, Cumulus Linux 5.5)::

              operational          applied
    --------  -------------------  -------
    hostname  leaf01               leaf01
    build     Cumulus Linux 5.5.0
    uptime    3 days, 18:40:31
    timezone  Etc/UTC

Columns are found from the dashes under the header, so values with spaces (``Cumulus Linux 5.5.0``,
``3 days, 18:40:31``) are read whole. The running release is the operational ``build``; releases that print
``product-name`` and ``product-release`` instead are read as ``"<product-name> <product-release>"``. One of the
two is required. The bundle file is ``switches/<switch>/nvue/nv-show-system.txt``. ``nv show platform``
(hardware, ASIC) is not read: no real output of it was available to test a parser against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError

__all__ = ["NvueSystem", "dump", "parse"]

_RULE = re.compile(r"^-+(\s+-+)*\s*$")


@dataclass(frozen=True, slots=True)
class NvueSystem:
    build: str  # "Cumulus Linux 5.5.0"
    hostname: str | None = None
    uptime: str | None = None
    timezone: str | None = None

    @property
    def release(self) -> str:
        """The release number alone (``5.5.0``), as image file names and ``nv action install`` use it."""
        return self.build.rsplit(" ", 1)[-1]


def parse(text: str, source: str = "<input>") -> NvueSystem:
    lines = text.splitlines()
    rule = next((i for i, line in enumerate(lines) if _RULE.match(line)), None)
    if rule is None:
        raise ParseError(source, "an 'nv show system' table: a header and a line of dashes under it", line=1)
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    if len(spans) < 2:
        raise ParseError(source, "at least an attribute and an 'operational' column", line=rule + 1)
    header = lines[rule - 1] if rule > 0 else ""
    names = [
        header[start : (spans[i + 1][0] if i + 1 < len(spans) else len(header))].strip()
        for i, (start, _) in enumerate(spans)
    ]
    column = names.index("operational") if "operational" in names else 1
    values: dict[str, str] = {}
    for number, line in enumerate(lines[rule + 1 :], rule + 2):
        if not line.strip() or line.startswith(" "):
            continue  # nested attributes are indented; nv show system has none worth reading
        key = line[: spans[1][0]].strip()
        start = spans[column][0]
        end = spans[column + 1][0] if column + 1 < len(spans) else len(line)
        value = line[start:end].strip()
        if any(ord(c) < 32 for c in line):
            raise ParseError(source, "printable text", line=number)
        if key in values:
            raise ParseError(source, f"one {key!r} row (it repeats)", line=number)
        values[key] = value
    build = values.get("build") or " ".join(v for v in (values.get("product-name"), values.get("product-release")) if v)
    if not build:
        raise ParseError(source, "a 'build' row (or 'product-name' and 'product-release') with the release")
    return NvueSystem(
        build=build,
        hostname=values.get("hostname") or None,
        uptime=values.get("uptime") or None,
        timezone=values.get("timezone") or None,
    )


def dump(record: NvueSystem) -> str:
    """The record as ``nv show system`` prints it (operational column only filled, applied for the hostname)."""
    rows = [("hostname", record.hostname, record.hostname), ("build", record.build, None)]
    rows += [("uptime", record.uptime, None), ("timezone", record.timezone, None)]
    shown = [(k, v, a) for k, v, a in rows if v is not None]
    width = max(len(k) for k, _, _ in shown)
    op = max(len("operational"), *(len(v or "") for _, v, _ in shown))
    out = [f"{'':<{width}}  {'operational':<{op}}  applied", f"{'-' * width}  {'-' * op}  -------"]
    out += [f"{k:<{width}}  {v or '':<{op}}  {a or ''}".rstrip() for k, v, a in shown]
    return "\n".join(out) + "\n"
