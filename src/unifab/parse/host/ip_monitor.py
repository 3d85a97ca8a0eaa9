r"""``ip [-ts|-t] monitor link`` events (iproute2) plus ``/sys/class/net/<if>/carrier*`` readings.

A link-flap capture interleaves the two: the kernel's RTM_NEWLINK events as ``ip monitor`` prints them
and the carrier counters read before and after::

    /sys/class/net/ens1np0/carrier_changes = 2        (also "path:value" as `grep . <files>` prints it)
    [2026-11-30T02:15:33.607900] 6: ens1np0@if5: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state DOWN
        link/ether 02:00:00:00:01:01 brd ff:ff:ff:ff:ff:ff link-netns leaf1

- An event line is ``[<timestamp>] `` (``-ts``; ``-t`` prints a ``Timestamp: ...`` line before the event
  instead, both kept verbatim), an optional ``[LINK]`` (``ip monitor all``) and ``Deleted`` prefix, then
  the ``ip link`` header ``<ifindex>: <ifname>[@<peer>]: <FLAGS> ... mtu N ... state S ...``. Without
  ``-t``/``-ts`` the timestamp is None (an ``ip link show`` header reads the same way).
- Indented lines (``link/ether``, ``ip -s`` statistics, ``alias``) are details of the event above and are
  skipped, as are blank lines and ``#`` comment lines.
- ``/sys/class/net/<if>/{carrier,carrier_changes,carrier_up_count,carrier_down_count,operstate}`` readings
  are grouped into :class:`CarrierSnapshot`\ s: consecutive readings of one interface form one snapshot
  until an attribute repeats (so "before" and "after" dumps give two snapshots). Each flap adds 2 to
  ``carrier_changes``.

Any other line is a :class:`~unifab.errors.ParseError` naming its line.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from unifab.errors import ParseError
from unifab.parse._text import pasted

__all__ = ["CarrierSnapshot", "IpMonitor", "LinkEvent", "parse"]

COUNTERS = ("carrier", "carrier_changes", "carrier_up_count", "carrier_down_count")
_ATTRS = (*COUNTERS, "operstate")

_EVENT = re.compile(
    r"^(?:\[(?!LINK\])(?P<ts>[^\]]+)\]\s*)?(?:\[LINK\]\s*)?(?P<deleted>Deleted\s+)?"
    r"(?P<ifindex>[0-9]{1,10}):\s+(?P<ifname>[^\s:@/]+)(?:@(?P<peer>[^\s:]+))?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)$"
)
_SYSFS = re.compile(r"^/sys/class/net/(?P<ifname>[^\s/]+)/(?P<attr>[a-z_]+)\s*[=:]\s*(?P<value>\S*)$")
_TIMESTAMP = re.compile(r"^Timestamp:\s*(?P<ts>.+)$")
_FLAG = re.compile(r"^[A-Z0-9_-]+$")
_NUM = re.compile(r"^[0-9]{1,19}$")


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """One ``ip monitor link`` event (an RTM_NEWLINK/RTM_DELLINK message)."""

    timestamp: str | None  # verbatim: "2026-11-30T02:15:33.607900" (-ts) or "Mon Nov 30 ... usec" (-t)
    ifindex: int
    ifname: str
    peer: str | None  # after "@": "if5" (peer ifindex in another netns) or the lower device
    state: str | None  # operstate: "UP" | "DOWN" | "UNKNOWN" | "LOWERLAYERDOWN" | "DORMANT" | ...
    flags: tuple[str, ...]  # as printed: ("NO-CARRIER", "BROADCAST", "MULTICAST", "UP")
    mtu: int | None
    deleted: bool  # "Deleted" prefix (RTM_DELLINK)
    line: int  # 1-based line of the event in the capture

    @property
    def carrier(self) -> bool:
        """Whether the link has carrier (``LOWER_UP`` set, no ``NO-CARRIER``)."""
        return "LOWER_UP" in self.flags and "NO-CARRIER" not in self.flags


@dataclass(frozen=True, slots=True)
class CarrierSnapshot:
    """One reading of an interface's sysfs carrier attributes; None where the attribute was not read."""

    ifname: str
    carrier: int | None
    carrier_changes: int | None
    carrier_up_count: int | None
    carrier_down_count: int | None
    operstate: str | None  # "up" | "down" | ...
    line: int  # 1-based line of the snapshot's first reading


@dataclass(frozen=True, slots=True)
class IpMonitor:
    events: tuple[LinkEvent, ...]
    carrier: tuple[CarrierSnapshot, ...]  # in capture order


@dataclass(slots=True)
class _Snapshot:
    ifname: str
    line: int
    values: dict[str, int | str] = field(default_factory=dict)

    def freeze(self) -> CarrierSnapshot:
        def count(name: str) -> int | None:
            value = self.values.get(name)
            return value if isinstance(value, int) else None

        state = self.values.get("operstate")
        return CarrierSnapshot(
            ifname=self.ifname,
            carrier=count("carrier"),
            carrier_changes=count("carrier_changes"),
            carrier_up_count=count("carrier_up_count"),
            carrier_down_count=count("carrier_down_count"),
            operstate=state if isinstance(state, str) else None,
            line=self.line,
        )


def _event(m: re.Match[str], timestamp: str | None, number: int, source: str) -> LinkEvent:
    flags = tuple(f for f in m["flags"].split(",") if f)
    if not all(_FLAG.match(f) for f in flags):
        raise ParseError(
            source, f"expected link flags such as <BROADCAST,UP,LOWER_UP>, got <{m['flags']}>", line=number
        )
    tokens = m["rest"].split()
    values: dict[str, str] = {}
    for key, value in itertools.pairwise(tokens):
        if key in ("mtu", "state") and key not in values:
            values[key] = value
    mtu = values.get("mtu")
    if mtu is not None and not _NUM.match(mtu):
        raise ParseError(source, f"expected a number after 'mtu', got {mtu!r}", line=number)
    return LinkEvent(
        timestamp=m["ts"] if m["ts"] is not None else timestamp,
        ifindex=int(m["ifindex"]),
        ifname=m["ifname"],
        peer=m["peer"],
        state=values.get("state"),
        flags=flags,
        mtu=None if mtu is None else int(mtu),
        deleted=m["deleted"] is not None,
        line=number,
    )


@pasted
def parse(text: str, source: str = "<input>") -> IpMonitor:
    """Read ``ip -ts monitor link`` events and sysfs carrier readings; raise :class:`ParseError` otherwise."""
    if not text.strip():
        raise ParseError(source, "expected `ip monitor link` events or sysfs carrier readings, got empty text", line=1)
    events: list[LinkEvent] = []
    snapshots: list[_Snapshot] = []
    pending_ts: tuple[str, int] | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t":
            continue  # details of the event above (link/ether, statistics, ...)
        if m := _TIMESTAMP.match(stripped):
            if pending_ts is not None:
                raise ParseError(source, "expected an event after the 'Timestamp:' line", line=number)
            pending_ts = (m["ts"], number)
        elif m := _EVENT.match(stripped):
            events.append(_event(m, None if pending_ts is None else pending_ts[0], number, source))
            pending_ts = None
        elif m := _SYSFS.match(stripped):
            attr, value = m["attr"], m["value"]
            if attr not in _ATTRS:
                raise ParseError(
                    source, f"expected a sysfs attribute in {', '.join(_ATTRS)}, got {attr!r}", line=number
                )
            if attr != "operstate" and not _NUM.match(value):
                raise ParseError(source, f"expected a number for {attr}, got {value!r}", line=number)
            if not value:
                raise ParseError(source, "expected an operstate value", line=number)
            last = snapshots[-1] if snapshots else None
            if last is None or last.ifname != m["ifname"] or attr in last.values:
                last = _Snapshot(m["ifname"], number)
                snapshots.append(last)
            last.values[attr] = value if attr == "operstate" else int(value)
        else:
            raise ParseError(
                source,
                f"expected an `ip monitor link` event or a /sys/class/net/<if>/carrier* reading, got {stripped[:60]!r}",
                line=number,
            )
    if pending_ts is not None:
        raise ParseError(source, "expected an event after the 'Timestamp:' line", line=pending_ts[1])
    return IpMonitor(events=tuple(events), carrier=tuple(s.freeze() for s in snapshots))
