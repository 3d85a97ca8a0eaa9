"""What the InfiniBand diag parsers share: GUID tokens, link width and speed names, port-state names, and the
line loop that skips the blank and pasted-prompt lines of a capture."""

from __future__ import annotations

from collections.abc import Iterator

from unifab.errors import ParseError
from unifab.parse._text import is_prompt

__all__ = [
    "LANE_GBPS",
    "PHYS_STATES",
    "PORT_STATES",
    "SIGNAL_SPEEDS",
    "WIDTHS",
    "content_lines",
    "lanes",
    "parse_guid",
    "parse_hex",
    "rate_gbps",
    "skippable",
]

# Data rate of one lane in Gb/s by the IBTA speed name (encoding included: FDR 14.0625 Gbaud 64b/66b ≈ 14 Gb/s).
LANE_GBPS: dict[str, float] = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}

# The per-lane signalling rate libibmad prints (iblinkinfo, ibportstate) -> speed name.
SIGNAL_SPEEDS: dict[str, str] = {
    "2.5 Gbps": "SDR",
    "5.0 Gbps": "DDR",
    "10.0 Gbps": "QDR",
    "10.0 Gbps (FDR10)": "FDR10",
    "14.0625 Gbps": "FDR",
    "25.78125 Gbps": "EDR",
    "53.125 Gbps": "HDR",
    "106.25 Gbps": "NDR",
    "212.5 Gbps": "XDR",
}

# Link widths as the tools print them (``4X``; ibnetdiscover writes ``4x``) -> lanes.
WIDTHS: dict[str, int] = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}

# PortInfo PortState / PortPhysicalState values as libibmad names them (index = the numeric value).
PORT_STATES = ("NoChange", "Down", "Initialize", "Armed", "Active")
PHYS_STATES = (
    "NoChange",
    "Sleep",
    "Polling",
    "Disabled",
    "PortConfigurationTraining",
    "LinkUp",
    "LinkErrorRecovery",
    "PhyTest",
)


def lanes(width: str | None) -> int | None:
    """``4X`` (or ``4x``) -> 4; ``None`` for an unknown width."""
    return None if width is None else WIDTHS.get(width.upper())


def rate_gbps(width: str | None, speed: str | None) -> float | None:
    """Lanes times the lane data rate (``4X`` ``HDR`` -> 200.0); ``None`` when either is unknown."""
    n = lanes(width)
    lane = LANE_GBPS.get(speed or "")
    return None if n is None or lane is None else n * lane


def parse_guid(token: str, source: str, line: int | None, what: str = "a GUID") -> int:
    """``0xa088c20300b10013`` (or bare hex, as ibnetdiscover prints port GUIDs) as an int, at most 64 bits."""
    text = token[2:] if token[:2].lower() == "0x" else token
    if not text or len(text) > 16 or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ParseError(source, f"expected {what} (hex, at most 16 digits), got {token!r}", line=line)
    return int(text, 16)


def parse_hex(token: str, source: str, line: int | None, what: str) -> int:
    """A ``0x``-prefixed hex number (capability masks, CounterSelect)."""
    if token[:2].lower() != "0x" or not token[2:] or any(c not in "0123456789abcdefABCDEF" for c in token[2:]):
        raise ParseError(source, f"expected {what} as 0x<hex>, got {token!r}", line=line)
    return int(token[2:], 16)


def content_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line without its end)`` for every line that is not blank; the caller decides about
    prompt lines (:func:`skippable`)."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if line.strip():
            yield number, line


def skippable(line: str) -> bool:
    """A line a person pasted with the output (``$ perfquery 3 2``, ``root@h:~# sminfo``, a fence)."""
    return is_prompt(line)
