"""Cumulus Linux (3.x/4.x, NCLU era) LLDP neighbors and interface state.

Shapes (:func:`parse` tells them apart):

* ``net show lldp json`` (NCLU): lldpd's ``-f json0`` tree, printed by lldpd itself
  (``{"lldp": [{"interface": [{"name": "swp1", "via": "LLDP", "chassis": [...], "port": [...]}]}]}``);
  read with :func:`unifab.parse.host.lldpcli.parse_json`, which also takes the ``-f json`` shape.
  -> :func:`parse_lldp_json`.
* ``lldpctl`` plain text (``sudo lldpctl``, also SONiC ``show lldp neighbors``): see
  :mod:`unifab.parse.host.lldpctl_text`. -> :func:`parse_lldp_text`.
* FRR/zebra ``vtysh -c "show interface [vrf all]"`` text, optionally followed by ``ip [-d] address show``
  in the same capture (SuzieQ runs ``sudo vtysh -c "show int vrf all"; ip -d address show``).
  -> :func:`parse_interfaces_text`.

zebra's block per interface::

    Interface swp51 is up, line protocol is up
      vrf: default
      Description: to Spine01
      index 12 metric 0 mtu 9216 speed 1000
      flags: <UP,BROADCAST,RUNNING,MULTICAST>
      Type: Ethernet
      HWaddr: 44:38:39:00:00:53
      Interface Type Other

``is up``/``is down`` is the admin (IFF_UP) state; ``line protocol is up|down`` is the running state
(``line protocol detection is disabled`` falls back to the RUNNING flag; ``is down`` alone means both
down). ``speed`` 0 and 4294967295 (ethtool's SPEED_UNKNOWN as u32) mean unknown. zebra's ``Interface
Type`` names only what it manages specially (Vlan, Bridge, Vxlan, VRF, Bond, Macvlan, Veth, GRE; "Other"
is everything else, including front-panel ports and, on 3.x, bonds) and ``Type: Loopback`` marks lo.

Combined capture: each link's state, MTU, MAC and kind come from the ``ip`` part (the kernel's view,
``ip -d`` knows the exact kind), its speed from zebra (ip does not print one), its description from
zebra's ``Description`` or else ip's ``alias``. Output order is the ``ip`` part's order, then links only
zebra listed, in zebra's order. A name listed twice in one part is an error.

With a :class:`~unifab.errors.ParseProblems` collector an interface whose zebra header line cannot be read
is skipped with its indented lines (an indented line starting with no word or number is named and skipped with
the lines after it), an ``ip`` link likewise (:mod:`unifab.parse.host.ip_link`), and a bad
LLDP neighbour entry costs that neighbour; a capture with nothing read still raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts
from unifab.parse.host import ip_link, lldpcli, lldpctl_text
from unifab.parse.netdev import Interface, Neighbor, neighbor_from_lldpd, normalize_mac

__all__ = [
    "ZEBRA_KINDS",
    "parse",
    "parse_interfaces_text",
    "parse_lldp_json",
    "parse_lldp_text",
    "parse_vtysh_interfaces",
]

_ZEBRA_HEADER = re.compile(
    r"Interface (?P<name>\S+) is (?P<admin>up|down)"
    r"(?:, line protocol (?:is (?P<proto>up|down)|(?P<nodetect>detection is disabled)))?\s*"
)
_IP_HEADER = re.compile(r"\d+: ")
_MTU = re.compile(r"\bmtu (\d+)\b")
_SPEED = re.compile(r"\bspeed (\d+)\b")
_FLAGS = re.compile(r"flags: <([^>]*)>")

# zebra "Interface Type <X>" (zebra_ziftype_2str) -> kind; "Other" tells nothing.
ZEBRA_KINDS = {
    "Vlan": "vlan",
    "Bridge": "bridge",
    "Vxlan": "vxlan",
    "VXLAN": "vxlan",
    "VRF": "vrf",
    "Bond": "bond",
    "Macvlan": "macvlan",
    "Veth": "veth",
    "GRE": "gre",
    "Other": None,
}
# Speeds zebra prints for "unknown": 0 (no ethtool speed) and SPEED_UNKNOWN (-1) as an unsigned 32-bit.
_UNKNOWN_SPEEDS = frozenset({0, 0xFFFFFFFF})

_SHAPES = (
    "`net show lldp json` (lldpd json0/json)",
    "`lldpctl` text (`LLDP neighbors:`)",
    "`vtysh -c 'show interface'` text, optionally followed by `ip [-d] address show`",
)


@dataclass(slots=True)
class _Zebra:
    name: str
    line: int
    admin_up: bool
    proto: bool | None
    flags: frozenset[str] | None = None
    mtu: int | None = None
    speed_mbps: int | None = None
    mac: str | None = None
    description: str | None = None
    kind: str | None = None

    def finish(self) -> Interface:
        if not self.admin_up:
            oper_up: bool | None = False
        elif self.proto is not None:
            oper_up = self.proto
        else:
            oper_up = None if self.flags is None else "RUNNING" in self.flags
        return Interface(
            name=self.name,
            admin_up=self.admin_up,
            oper_up=oper_up,
            mtu=self.mtu,
            speed_mbps=self.speed_mbps,
            mac=self.mac,
            description=self.description,
            kind=self.kind,
        )


def _zebra_line(entry: _Zebra, text: str) -> None:
    if text.startswith("index ") and " metric " in text:
        mtu = _MTU.search(text)
        speed = _SPEED.search(text)
        entry.mtu = int(mtu.group(1)) if mtu else None
        if speed:
            value = int(speed.group(1))
            entry.speed_mbps = None if value in _UNKNOWN_SPEEDS else value
    elif text.startswith("Description:"):
        entry.description = text[len("Description:") :].strip() or None
    elif text.startswith("HWaddr:"):
        entry.mac = normalize_mac(text[len("HWaddr:") :])
    elif text.startswith("flags:"):
        flags = _FLAGS.match(text)
        entry.flags = frozenset(flag for flag in flags.group(1).split(",") if flag) if flags else frozenset()
    elif text == "Type: Loopback":
        entry.kind = "loopback"
    elif text.startswith("Interface Type ") and entry.kind is None:
        zebra_type = text[len("Interface Type ") :].strip()
        entry.kind = ZEBRA_KINDS.get(zebra_type, zebra_type.lower() or None)


_WORD_START = re.compile(r"\w")  # every indented zebra line starts with a word or a number


def _zebra_entries(lines: list[str], source: str, first_line: int, log: ParseProblems) -> list[_Zebra]:
    entries: list[_Zebra] = []
    dropped = False  # inside a block whose header could not be read
    for number, raw in enumerate(lines, start=first_line):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if not line[0].isspace():
            match = _ZEBRA_HEADER.fullmatch(line)
            dropped = match is None
            if match is None:
                expected = f"expected `Interface <ifname> is up|down[, line protocol ...]`, got {line[:60]!r}"
                log.add(expected, f"the interface of line {number} and its indented lines", line=number)
                continue
            entries.append(
                _Zebra(
                    name=match.group("name"),
                    line=number,
                    admin_up=match.group("admin") == "up",
                    proto=None if match.group("proto") is None else match.group("proto") == "up",
                )
            )
            continue
        if dropped:
            continue
        if not entries:
            raise ParseError(source, "expected `Interface <ifname> is up|down` before indented lines", line=number)
        if not _WORD_START.match(line.strip()):  # garbage, maybe a garbled header: its lines are not this block's
            expected = "expected an indented `<field> ...` line of the interface above"
            log.add(expected, f"line {number} and the indented lines after it", line=number)
            dropped = True
            continue
        _zebra_line(entries[-1], line.strip())
    return entries


def parse_vtysh_interfaces(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse zebra's ``show interface [vrf all]`` text alone (no ``ip`` part)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    entries = _zebra_entries(text.splitlines(), source, 1, log)
    if not entries and log.problems:
        raise log.problems[0].error()
    if not entries:
        raise ParseError(source, "expected `Interface <ifname> is up|down ...`", line=1)
    return tuple(entry.finish() for entry in entries)


def _unique(names: list[tuple[str, int]], what: str, source: str) -> None:
    seen: dict[str, int] = {}
    for name, line in names:
        if name in seen:
            raise ParseError(
                source, f"expected each {what} interface once, {name!r} is also on line {seen[name]}", line=line
            )
        seen[name] = line


def parse_interfaces_text(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse a zebra ``show interface`` capture, an ``ip [-d] address show`` capture, or both concatenated
    (prompt/command lines pasted before, between or after them are ignored)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lines = blank_prompts(text, anywhere=True).splitlines()
    split = next((i for i, line in enumerate(lines) if _IP_HEADER.match(line)), len(lines))
    zebra = _zebra_entries(lines[:split], source, 1, log)
    linux = ip_link.parse_lines(lines[split:], source, split + 1, log) if split < len(lines) else ()
    if not zebra and not linux:
        if log.problems:
            raise log.problems[0].error()
        raise ParseError(source, f"expected {_SHAPES[2]}", line=1)
    _unique([(entry.name, entry.line) for entry in zebra], "zebra", source)
    # ip_link has validated every header line: "<index>: <name>[@<link>]: <FLAGS> ..."
    ip_names = [
        (raw.split(":", 2)[1].strip().split("@")[0], number)
        for number, raw in enumerate(lines[split:], start=split + 1)
        if _IP_HEADER.match(raw)
    ]
    _unique(ip_names, "ip", source)
    by_name = {entry.name: entry.finish() for entry in zebra}
    merged: list[Interface] = []
    for kernel in linux:
        z = by_name.pop(kernel.name, None)
        if z is None:
            merged.append(kernel)
            continue
        merged.append(
            Interface(
                name=kernel.name,
                admin_up=kernel.admin_up,
                oper_up=kernel.oper_up,
                mtu=kernel.mtu,
                speed_mbps=z.speed_mbps,
                mac=kernel.mac if kernel.mac is not None else z.mac,
                description=z.description if z.description is not None else kernel.description,
                kind=kernel.kind if kernel.kind is not None else z.kind,
            )
        )
    merged.extend(by_name.values())
    return tuple(merged)


def parse_lldp_json(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse ``net show lldp json`` (lldpd ``-f json0``; the ``-f json`` shape is accepted too)."""
    return tuple(neighbor_from_lldpd(nb) for nb in lldpcli.parse_json(text, source, problems))


def parse_lldp_text(text: str, source: str = "<input>") -> tuple[Neighbor, ...]:
    """Parse ``lldpctl`` plain text (see :mod:`unifab.parse.host.lldpctl_text`)."""
    return lldpctl_text.parse(text, source)


def parse(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Neighbor, ...] | tuple[Interface, ...]:
    """Auto-detect the shape: JSON is ``net show lldp json``, ``LLDP neighbors:`` text is lldpctl, text
    starting with ``Interface <x> is`` or ``<n>: <ifname>:`` is the interface capture."""
    text = blank_prompts(text)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return parse_lldp_json(text, source, problems)
    first = next((line for line in text.splitlines() if line.strip()), "")
    if first.startswith(("-----", "LLDP ")):
        return parse_lldp_text(text, source)
    if first.startswith("Interface ") and not first.startswith("Interface:"):
        return parse_interfaces_text(text, source, problems)
    if _IP_HEADER.match(first):
        return parse_interfaces_text(text, source, problems)
    raise ParseError(source, "expected one of: " + "; ".join(_SHAPES), line=1)
