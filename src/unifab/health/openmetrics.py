"""OpenMetrics text with timestamps: the telemetry files of a bundle (``telemetry/<device>.om``) and the input of
``promtool tsdb create-blocks-from openmetrics``.

Why not ``prometheus_client.openmetrics.parser``: it is exact but pure-Python slow (about 100 µs a line, so a
day of one rack's counters takes minutes). :func:`parse` reads the subset exporters and backfill files use
(``# TYPE``/``# HELP``/``# UNIT`` lines, samples ``name{label="value",...} value [timestamp]``, an optional
exemplar after `` # ``, ``# EOF``) at a few µs a line, refusing anything else with the line number; the tests
check it gives the same samples as prometheus_client on the twin's files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

from unifab.errors import ParseError

__all__ = ["Sample", "dump", "parse"]

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*(,|\})')
_UNESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "\\": "\\", '"': '"'}


class Sample(NamedTuple):
    """One sample line (a tuple: a file holds hundreds of thousands)."""

    name: str  # the sample's name as written (``..._total`` for a counter)
    labels: tuple[tuple[str, str], ...]  # sorted by label name
    value: float  # an int when the text is one, so that 64-bit counters keep every digit
    timestamp: float | None  # seconds since the epoch


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _UNESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def _number(text: str, source: str, line: int, what: str) -> float:
    if "_" in text:  # Python reads 1_000; an exposition does not
        raise ParseError(source, f"a number as the {what}, not {text[:40]!r}", line=line)
    try:
        return float(text)
    except ValueError:
        raise ParseError(source, f"a number as the {what}, not {text[:40]!r}", line=line) from None


def parse(text: str, source: str) -> list[Sample]:
    """Every sample of an OpenMetrics (or Prometheus text) exposition, in file order.

    Raises :class:`~unifab.errors.ParseError` naming the line for what is not a comment, a sample or ``# EOF``,
    and for anything after ``# EOF``. The series part of a line (name and labels) is parsed once per distinct
    text: a file repeats it for every timestamp.
    """
    samples: list[Sample] = []
    heads: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}
    ended = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace():
            continue
        if ended:
            raise ParseError(source, "nothing after '# EOF'", line=number)
        if line[0] == "#":
            if line.strip() == "# EOF":
                ended = True
            continue
        cut = line.find(" # ")  # an exemplar, or a ' # ' inside a label value (then the slow path)
        close = line.rfind("}", 0, cut if cut >= 0 else len(line))
        split = close + 1 if close >= 0 else line.find(" ")
        if split <= 0 or (cut >= 0 and '"' in line[cut:]):
            samples.append(_slow(line, source, number))
            continue
        head, rest = line[:split], (line[split:cut] if cut >= 0 else line[split:])
        known = heads.get(head)
        if known is None:
            known = heads[head] = _head(head, source, number)
        fields = rest.split()
        if not rest[:1].isspace() or not 1 <= len(fields) <= 2:
            raise ParseError(source, "a space, a value and at most a timestamp after the metric", line=number)
        samples.append(_finish(known, fields, source, number))
    return samples


def _finish(head: tuple[str, tuple[tuple[str, str], ...]], fields: list[str], source: str, number: int) -> Sample:
    text = fields[0]
    try:
        value: float = int(text) if "_" not in text else _number(text, source, number, "value")
    except ValueError:
        value = _number(text, source, number, "value")
    timestamp = _number(fields[1], source, number, "timestamp") if len(fields) == 2 else None
    return Sample(head[0], head[1], value, timestamp)


def _head(text: str, source: str, number: int) -> tuple[str, tuple[tuple[str, str], ...]]:
    name, labels, pos = _series(text, source, number)
    if pos != len(text):
        raise ParseError(source, "a space between the metric and its value", line=number)
    return name, labels


def _series(line: str, source: str, number: int) -> tuple[str, tuple[tuple[str, str], ...], int]:
    """The metric name and labels at the start of ``line``, and where they end."""
    m = _NAME.match(line)
    if m is None:
        raise ParseError(source, "a metric name at the start of a sample line", line=number)
    name, pos = m.group(), m.end()
    labels: dict[str, str] = {}
    if pos < len(line) and line[pos] == "{":
        pos += 1
        if line[pos : pos + 1] == "}":
            pos += 1
        else:
            while True:
                lm = _LABEL.match(line, pos)
                if lm is None:
                    raise ParseError(source, 'labels as name="value" pairs closed by }', line=number)
                if lm.group(1) in labels:
                    raise ParseError(source, f"label {lm.group(1)!r} once per sample", line=number)
                labels[lm.group(1)] = _unescape(lm.group(2))
                pos = lm.end()
                if lm.group(3) == "}":
                    break
                if line[pos : pos + 1] == "}":  # a trailing comma
                    pos += 1
                    break
    return name, tuple(sorted(labels.items())), pos


def _slow(line: str, source: str, number: int) -> Sample:
    name, labels, pos = _series(line, source, number)
    rest = line[pos:]
    if not rest[:1].isspace():
        raise ParseError(source, "a space between the metric and its value", line=number)
    fields = rest.split(" # ", 1)[0].split()
    if not 1 <= len(fields) <= 2:
        raise ParseError(source, "a value and at most a timestamp after the metric", line=number)
    return _finish((name, labels), fields, source, number)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _format(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value == int(value) and abs(value) < 2**53 else repr(value)


def dump(samples: Iterable[Sample], counters: Iterable[str] = ()) -> str:
    """OpenMetrics text: samples grouped by family and within it by series (order of first appearance, file order
    within a series, as promtool wants them), each family declared once, ``# EOF`` at the end.

    ``counters``: family names declared ``counter`` (their samples are named ``<family>_total``); every other
    family is declared ``unknown``.
    """
    counter_families = set(counters)
    families: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], list[Sample]]] = {}
    for s in samples:
        family = s.name.removesuffix("_total") if s.name.removesuffix("_total") in counter_families else s.name
        families.setdefault(family, {}).setdefault((s.name, s.labels), []).append(s)
    out: list[str] = []
    for family, by_series in families.items():
        out.append(f"# TYPE {family} {'counter' if family in counter_families else 'unknown'}\n")
        for s in (s for members in by_series.values() for s in members):
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels)
            ts = "" if s.timestamp is None else f" {_format(s.timestamp)}"
            out.append(
                f"{s.name}{{{labels}}} {_format(s.value)}{ts}\n" if labels else f"{s.name} {_format(s.value)}{ts}\n"
            )
    out.append("# EOF\n")
    return "".join(out)
