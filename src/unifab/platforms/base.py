"""The :class:`Platform` record every platform module fills in, and the name gate commands go through."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from unifab.errors import UsageError

__all__ = ["Platform", "UnknownPlatformError", "clamp_mtu", "safe_name"]


class UnknownPlatformError(UsageError):
    """A device names an OS unifab has no platform for."""


@dataclass(frozen=True, slots=True)
class Platform:
    name: str  # the Switch.os value and the OS directory under switches/<name>/
    title: str  # for people: "SONiC"
    config_file: str | None  # relative to the switch directory; its presence says the switch runs this OS
    lldp_file: str | None  # where the switch's own LLDP neighbours are, if it has a file of its own
    port_name: Callable[[int], str]  # the i-th (0-based) front-panel port as the OS names it
    port_pattern: re.Pattern[str]  # a name that may enter one of this OS's commands
    live: str | None = None  # how ``unifab collect`` reads it: "sonic-redis", "eos-eapi"; None: not live yet
    comment: str = "#"  # how a line is commented out in this OS's command language
    max_mtu: int | None = None  # the largest interface MTU the OS accepts; None: not known to unifab


def safe_name(p: Platform, name: str) -> str | None:
    """``name`` when it is a valid port (or object) name on ``p``, else ``None``: device-provided text that
    does not look like a name never enters a command (a ``;``, a newline, an escape sequence)."""
    return name if p.port_pattern.fullmatch(name) else None


def clamp_mtu(p: Platform, mtu: int) -> tuple[int, str | None]:
    """The MTU a port of ``p`` is set to when ``mtu`` is asked, and a note when that is not ``mtu``.

    An intent or fix above the platform's maximum (a preset's 9216 on EOS, which tops out at 9214) gets the
    maximum, the jumbo MTU the asker meant, with a note saying so. The one rule of renders and fixes alike.
    """
    if p.max_mtu is None or mtu <= p.max_mtu:
        return mtu, None
    return p.max_mtu, f"{p.title} interface MTU tops out at {p.max_mtu} (asked {mtu})"
