"""``ethtool -a <if>``: 802.3x link-level (global) pause settings.

::

    Pause parameters for eth3:
    Autonegotiate:  off
    RX:             on
    TX:             on
    RX negotiated:  on      # only printed by newer ethtool when autonegotiation is on
    TX negotiated:  on

Global pause stops every priority of the link at once; on a RoCE fabric it must be off wherever PFC
is on (mlx5 refuses to run both, and a switch honouring both pauses lossy traffic too).

With a :class:`~unifab.errors.ParseProblems` collector an unknown line is skipped (a problem naming it); a
bad value of a required setting still makes the file unreadable, since the record has no "unknown" for it,
and a bad ``RX/TX negotiated`` value leaves that field ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["PauseParams", "dump", "parse"]

_FIELDS = {
    "Autonegotiate": "autoneg",
    "RX": "rx",
    "TX": "tx",
    "RX negotiated": "rx_negotiated",
    "TX negotiated": "tx_negotiated",
}


@dataclass(frozen=True, slots=True)
class PauseParams:
    interface: str | None
    autoneg: bool
    rx: bool
    tx: bool
    rx_negotiated: bool | None = None
    tx_negotiated: bool | None = None


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> PauseParams:
    log = problems if problems is not None else ParseProblems.strict(source)
    interface: str | None = None
    values: dict[str, bool] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Pause parameters for "):
            interface = line.removeprefix("Pause parameters for ").rstrip(":").strip() or None
            continue
        key, sep, value = line.partition(":")
        field = _FIELDS.get(key.strip())
        if not sep or field is None:
            expected = "expected 'Pause parameters for <if>:' or 'Autonegotiate|RX|TX: on|off'"
            log.add(expected, f"line {number} ({line[:40]!r})", line=number)
            continue
        word = value.strip()
        if word not in ("on", "off"):
            expected = f"expected 'on' or 'off' after '{key.strip()}:', got {word!r}"
            if field in ("autoneg", "rx", "tx"):
                raise ParseError(source, expected, line=number)
            log.add(expected, f"the {key.strip()} setting", line=number)
            continue
        values[field] = word == "on"
    missing = [k for k in ("autoneg", "rx", "tx") if k not in values]
    if missing:
        raise ParseError(source, f"expected the {', '.join(missing)} setting(s) of 'ethtool -a'")
    return PauseParams(
        interface,
        values["autoneg"],
        values["rx"],
        values["tx"],
        values.get("rx_negotiated"),
        values.get("tx_negotiated"),
    )


def dump(p: PauseParams) -> str:
    def word(flag: bool) -> str:
        return "on" if flag else "off"

    lines = [
        f"Pause parameters for {p.interface}:",
        f"Autonegotiate:\t{word(p.autoneg)}",
        f"RX:\t\t{word(p.rx)}",
        f"TX:\t\t{word(p.tx)}",
    ]
    if p.rx_negotiated is not None:
        lines.append(f"RX negotiated:\t{word(p.rx_negotiated)}")
    if p.tx_negotiated is not None:
        lines.append(f"TX negotiated:\t{word(p.tx_negotiated)}")
    return "\n".join(lines) + "\n"
