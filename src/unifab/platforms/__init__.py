"""Device platforms as data: what each switch OS unifab knows looks like in a bundle and on the wire.

One module per platform (:mod:`.sonic`, :mod:`.eos`, :mod:`.nvue`, :mod:`.junos`, :mod:`.ib`) declares its
:class:`Platform`: the bundle directory and files that identify it, how its front-panel ports are named,
which names are valid in its commands, and how ``unifab collect`` reads it live. The layers that act on a
platform keep their part in a registry keyed by :attr:`Platform.name` — the bundle readers
(``collect.bundle.SWITCH_READERS``), the fix and verify dialects (``render.switch_cli.DIALECTS``), the twin's
writers (``twin.writer.SWITCH_WRITERS``) — and ``tests/test_platforms.py`` fails while any registry lacks a
platform. A name no platform declares is an input error naming the device (:func:`platform`), never a
silent default. ``docs/add-a-platform.md`` walks through adding one.
"""

from __future__ import annotations

from unifab.platforms import eos, ib, junos, nvue, sonic
from unifab.platforms.base import Platform, UnknownPlatformError, clamp_mtu, safe_name

__all__ = ["PLATFORMS", "Platform", "UnknownPlatformError", "clamp_mtu", "platform", "safe_name"]


PLATFORMS: dict[str, Platform] = {
    p.name: p for p in (sonic.PLATFORM, eos.PLATFORM, nvue.PLATFORM, junos.PLATFORM, ib.PLATFORM)
}


def platform(name: str, device: str | None = None) -> Platform:
    """The platform called ``name``; :class:`UnknownPlatformError` naming the device when there is none."""
    found = PLATFORMS.get(name)
    if found is None:
        who = f"{device}: " if device else ""
        raise UnknownPlatformError(f"{who}unknown switch OS {name!r}; unifab knows {', '.join(PLATFORMS)}")
    return found
