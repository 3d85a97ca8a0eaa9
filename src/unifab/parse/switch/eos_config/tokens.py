"""Reading the arguments of EOS commands: numbers, seconds, index lists, ``speed`` and interface ranges."""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from unifab.errors import ParseError
from unifab.parse._text import parse_uint
from unifab.parse.switch.eos_config.defaults import MAX_RANGE

__all__ = ["MAX_DIGITS", "expand_interfaces", "format_seconds", "index_list", "seconds_ms", "speed_to_mbps"]

MAX_DIGITS = 12  # a longer number is refused

_SECONDS = re.compile(r"^\d{1,9}(?:\.\d{1,9})?$")
_SPEED = re.compile(r"^(\d{1,7}(?:\.\d{1,3})?)(g|m)?(?:full|half)?(?:-(\d{1,2}))?$")
_IF_ITEM = re.compile(
    r"^(?P<prefix>[A-Za-z](?:[A-Za-z-]*[A-Za-z])?)?(?P<start>\d+(?:/\d+)*)(?P<sub>\.\d+)?(?:-(?P<end>\d+(?:/\d+)*))?$"
)


# canonical spelling of interface-name prefixes (running-config always prints these)
_IF_PREFIXES = {
    p.lower(): p
    for p in ("Ethernet", "Port-Channel", "Management", "Loopback", "Vlan", "Vxlan", "Tunnel", "Recirc-Channel")
}


def seconds_ms(token: str, source: str, line: int, what: str) -> int:
    """``"0.05"`` (seconds) -> 50 (ms); finer than a millisecond is refused."""
    if _SECONDS.match(token):
        ms = Decimal(token) * 1000
        if ms == ms.to_integral_value():
            return int(ms)
    raise ParseError(source, f"{what} in seconds with at most 3 decimals, got {token!r}", line=line)


def format_seconds(ms: int) -> str:
    """``50`` (ms) -> ``"0.05"`` (seconds), as EOS prints it."""
    return format(Decimal(ms).scaleb(-3).normalize(), "f")


def index_list(tokens: Iterable[str], source: str, line: int, what: str, hi: int) -> list[int]:
    """``["8", "9", "10-12"]`` or ``["8,9"]`` -> [8, 9, 10, 11, 12]."""
    out: list[int] = []
    for token in tokens:
        for part in token.split(","):
            if not part:
                continue
            lo_s, dash, hi_s = part.partition("-")
            lo = parse_uint(lo_s, source, what, line=line, hi=hi, max_digits=MAX_DIGITS)
            last = parse_uint(hi_s, source, what, line=line, hi=hi, max_digits=MAX_DIGITS) if dash else lo
            if last < lo:
                raise ParseError(source, f"an ascending {what} range, got {part!r}", line=line)
            out.extend(range(lo, last + 1))
    if not out:
        raise ParseError(source, f"at least one {what}", line=line)
    return out


def speed_to_mbps(speed: str) -> int | None:
    """The rate of an interface ``speed`` argument: ``"forced 100gfull"`` -> 100000, ``"200g-4"`` -> 200000,
    ``"1000full"`` -> 1000, ``"auto"`` -> None. Raises ``ValueError`` for an argument it cannot read."""
    words = speed.split()
    if words and words[0].startswith("sfp-"):
        words = words[1:]
    if words and words[0] in ("forced", "auto"):
        words = words[1:]
    if not words:
        return None
    m = _SPEED.match(words[0]) if len(words) == 1 else None
    if m is None:
        raise ValueError(speed)
    rate = Decimal(m.group(1)) * (1000 if m.group(2) == "g" else 1)
    if rate != rate.to_integral_value() or rate == 0:
        raise ValueError(speed)
    return int(rate)


def expand_interfaces(spec: str, source: str = "<input>", line: int | None = None) -> list[str]:
    """``"Ethernet1-3,5"`` -> Ethernet1, Ethernet2, Ethernet3, Ethernet5; ``"Ethernet1/1-2"`` ->
    Ethernet1/1, Ethernet1/2. Spaces are ignored; an item without a prefix takes the previous one's."""
    names: list[str] = []
    prefix: str | None = None
    for item in spec.replace(" ", "").split(","):
        if not item:
            continue
        m = _IF_ITEM.match(item)
        if m is None:
            raise ParseError(source, f"an interface name or range such as 'Ethernet1/1-4', got {item!r}", line=line)
        if m.group("prefix"):
            prefix = _IF_PREFIXES.get(m.group("prefix").lower(), m.group("prefix"))
        if prefix is None:
            raise ParseError(source, f"an interface name with a type such as 'Ethernet', got {item!r}", line=line)
        start = m.group("start")
        end = m.group("end")
        if end is None:
            names.append(f"{prefix}{start}{m.group('sub') or ''}")
            continue
        head, _, first = start.rpartition("/")
        end_head, _, last = end.rpartition("/")
        if m.group("sub") or (end_head and end_head != head) or len(first) > 6 or len(last) > 6:
            raise ParseError(
                source,
                f"a range whose ends differ only in the last number (e.g. 'Ethernet1/1-4'), got {item!r}",
                line=line,
            )
        lo, hi = int(first), int(last)
        if hi < lo or hi - lo >= MAX_RANGE:
            raise ParseError(source, f"an ascending interface range of at most {MAX_RANGE}, got {item!r}", line=line)
        base = f"{prefix}{head}/" if head else prefix
        names.extend(f"{base}{n}" for n in range(lo, hi + 1))
    if not names:
        raise ParseError(source, "an interface name after 'interface'", line=line)
    return names
