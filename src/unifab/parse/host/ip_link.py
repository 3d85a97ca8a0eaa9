"""iproute2 ``ip link show``, ``ip address show`` and their ``-d`` (details) forms, text output.

Every link starts with an unindented header, then indented lines::

    5: eth1.2@eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000
        link/ether 52:54:00:a8:38:3d brd ff:ff:ff:ff:ff:ff promiscuity 0
        vlan protocol 802.1Q id 2 <REORDER_HDR>
        bond_slave state ACTIVE mii_status UP ...          (-d: slave info, "<kind>_slave ...")
        alias to Spine01                                    (ifalias, when set)
        altname enp1s0                                      (newer iproute2)
        inet 169.254.254.2/30 brd 169.254.254.3 scope global eth1.2
           valid_lft forever preferred_lft forever

* ``name@link``: the part after ``@`` is the lower device (VLAN parent, veth peer ``if5``); the name is
  the part before it.
* ``admin_up`` is the ``UP`` flag. ``oper_up`` is ``state UP`` (True) or DOWN / LOWERLAYERDOWN /
  NOTPRESENT / DORMANT / TESTING (False); for ``state UNKNOWN`` (loopback, tun, some virtual links) and
  when no state is printed it is ``UP`` and ``LOWER_UP`` both set.
* ``-d`` output is recognised by ``promiscuity`` on the ``link/`` line. Its first detail line names the
  link kind (``vlan``, ``bond``, ``bridge``, ``veth``, ``vxlan``, ``vrf``, ``macvlan``, ``tun`` ...,
  see :data:`LINK_KINDS`); ``<kind>_slave`` lines describe the master's view and are not the kind.
  With ``-d`` and no kind, ``link/ether`` is ``ethernet``; without ``-d`` only ``link/loopback`` tells
  the kind (``loopback``), other links get ``None``.
* ``mac`` is the ``link/ether`` address (``None`` for other link types); ``description`` is the
  ``alias``; ``speed_mbps`` is always ``None`` (ip does not print it: use ethtool or sysfs).
* ``-d`` output of iproute2 ≥ 4.15 prints ``minmtu N maxmtu N`` on the ``link/`` line: the netdev's
  ``max_mtu`` (9978 on ConnectX mlx5 netdevs), which the mlx5 driver sizes lossless receive buffers with.
  :func:`max_mtus` returns it per link (``maxmtu 0``, loopback and tunnels without a limit, is left out).
* :func:`link_facts` returns, per link, that ``max_mtu``, the ``state`` word as printed (``operstate``:
  ``UP``, ``DOWN``, ``LOWERLAYERDOWN``, ``UNKNOWN``...; ``None`` when not printed) and ``carrier``: the
  ``LOWER_UP`` flag (the physical link is up), ``False`` when the link is admin up without it (``NO-CARRIER``)
  or is admin down and says ``NO-CARRIER``; ``None`` when the flags cannot tell (admin down, nothing said).

With a :class:`~unifab.errors.ParseProblems` collector a link header that cannot be read costs that link
(its indented lines are skipped with it); an indented line that does not start with a keyword or a number is
named and skipped with the indented lines after it (it may be a garbled header, whose lines must not be read
into the link above); a text with no link read raises.

Captures glued from several hosts (interface indexes restarting) are read as one list in file order;
names are not checked for uniqueness here. Indentation is not fixed (some captures use 3 spaces).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted
from unifab.parse.netdev import Interface, normalize_mac

__all__ = ["LINK_KINDS", "LinkFacts", "link_facts", "max_mtus", "parse", "parse_lines"]

_HEADER = re.compile(r"(?P<index>\d+):\s+(?P<name>[^\s:@]+)(?:@(?P<link>[^\s:]+))?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)")
_MTU = re.compile(r"\bmtu (\d+)\b")
_MAX_MTU = re.compile(r"\bmaxmtu (\d+)\b")
_STATE = re.compile(r"\bstate (\S+)")

# `ip link help` TYPE list (iproute2 6.x) plus kinds seen in `-d` output; "_slave" variants excluded.
LINK_KINDS = frozenset(
    {
        "amt", "bareudp", "batadv", "bond", "bridge", "can", "dsa", "dummy", "erspan", "geneve", "gre",
        "gretap", "gtp", "hsr", "ifb", "ip6erspan", "ip6gre", "ip6gretap", "ip6tnl", "ipip", "ipoib",
        "ipvlan", "ipvtap", "macsec", "macvlan", "macvtap", "netdevsim", "netkit", "nlmon", "openvswitch",
        "rmnet", "sit", "team", "tun", "vcan", "veth", "virt_wifi", "vlan", "vrf", "vti", "vti6", "vxcan",
        "vxlan", "wireguard", "xfrm",
    }
)  # fmt: skip

_DOWN_STATES = frozenset({"DOWN", "LOWERLAYERDOWN", "NOTPRESENT", "DORMANT", "TESTING"})
_LINK_KIND = {"loopback": "loopback", "ether": "ethernet", "infiniband": "infiniband"}
_EXPECTED_HEADER = "`<index>: <ifname>: <FLAGS> mtu <n> ...` (ip link / ip address output)"
# An indented line starts with a keyword or a number (``link/ether``, ``inet6``, ``RX:``, ``-s`` counters).
_DETAIL_WORD = re.compile(r"\w[\w/.:@-]*")
_EXPECTED_DETAIL = f"an indented `<keyword> ...` line of the link above, or {_EXPECTED_HEADER}"


@dataclass(slots=True)
class _Draft:
    name: str
    flags: frozenset[str]
    mtu: int
    state: str | None
    link_type: str | None = None
    mac: str | None = None
    details: bool = False
    kind: str | None = None
    detail_lines: int = 0
    alias: str | None = None
    max_mtu: int | None = None

    def finish(self) -> Interface:
        admin_up = "UP" in self.flags
        if self.state == "UP":
            oper_up = True
        elif self.state in _DOWN_STATES:
            oper_up = False
        else:  # UNKNOWN or not printed
            oper_up = admin_up and "LOWER_UP" in self.flags
        if self.kind is not None:
            kind: str | None = self.kind
        elif self.link_type == "loopback" or self.details:
            kind = _LINK_KIND.get(self.link_type or "")
        else:
            kind = None
        return Interface(
            name=self.name,
            admin_up=admin_up,
            oper_up=oper_up,
            mtu=self.mtu,
            speed_mbps=None,
            mac=self.mac,
            description=self.alias,
            kind=kind,
        )


def _header(line: str, number: int, source: str) -> _Draft:
    match = _HEADER.fullmatch(line.rstrip())
    if match is None:
        raise ParseError(source, f"expected {_EXPECTED_HEADER}, got {line.strip()!r}", line=number)
    rest = match.group("rest")
    mtu = _MTU.search(rest)
    if mtu is None:
        raise ParseError(source, "expected `mtu <n>` after the flags", line=number)
    state = _STATE.search(rest)
    return _Draft(
        name=match.group("name"),
        flags=frozenset(flag for flag in match.group("flags").split(",") if flag),
        mtu=int(mtu.group(1)),
        state=state.group(1) if state else None,
    )


def _detail(draft: _Draft, words: list[str]) -> None:
    """An indented line of one link."""
    head = words[0]
    if head.startswith("link/"):
        draft.link_type = head[len("link/") :]
        if draft.link_type == "ether" and len(words) > 1:
            draft.mac = normalize_mac(words[1])
        draft.details = draft.details or "promiscuity" in words
        if (m := _MAX_MTU.search(" ".join(words))) is not None and int(m.group(1)) > 0:
            draft.max_mtu = int(m.group(1))
        return
    if head == "alias":
        draft.alias = " ".join(words[1:]) or None
        return
    if head in ("inet", "inet6", "valid_lft", "altname") or draft.link_type is None:
        return
    # -d detail lines come right after the link/ line: "<kind> ...", then "<kind>_slave ..."
    draft.detail_lines += 1
    if draft.details and draft.kind is None and draft.detail_lines == 1 and head in LINK_KINDS:
        draft.kind = head


def _drafts(lines: Sequence[str], source: str, first_line: int, problems: ParseProblems | None = None) -> list[_Draft]:
    log = problems if problems is not None else ParseProblems.strict(source)
    drafts: list[_Draft] = []
    skipping = False  # inside a link whose header could not be read
    for number, raw in enumerate(lines, start=first_line):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if not line[0].isspace():
            with log.skipping(f"the link of line {number} and its indented lines") as row:
                drafts.append(_header(line, number, source))
            skipping = row.failed
            continue
        if skipping:
            continue
        if not drafts:
            raise ParseError(source, f"expected {_EXPECTED_HEADER} before indented lines", line=number)
        words = line.split()
        if _DETAIL_WORD.fullmatch(words[0]) is None:  # garbage, maybe a garbled header: skip to the next one
            log.add(_EXPECTED_DETAIL, f"line {number} and the indented lines after it", line=number)
            skipping = True
            continue
        _detail(drafts[-1], words)
    if not drafts:
        if log.problems:
            raise log.problems[0].error()
        raise ParseError(source, f"expected {_EXPECTED_HEADER}", line=first_line)
    return drafts


def parse_lines(
    lines: Sequence[str], source: str = "<input>", first_line: int = 1, problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse ip output given as lines; ``first_line`` is the number of ``lines[0]`` in the source."""
    return tuple(draft.finish() for draft in _drafts(lines, source, first_line, problems))


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Interface, ...]:
    """Parse ``ip [-d] link show`` or ``ip [-d] address show`` text, one record per link in file order."""
    return parse_lines(text.splitlines(), source, problems=problems)


def max_mtus(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> dict[str, int]:
    """``maxmtu`` of each link of ``ip -d link show`` / ``ip -d address show`` text, by interface name.

    Links whose output has no ``maxmtu`` (no ``-d``, iproute2 before 4.15) or ``maxmtu 0`` are left out;
    a name printed twice (captures glued from several hosts) keeps its last value. Errors as :func:`parse`.
    """
    drafts = _drafts(text.splitlines(), source, 1, problems)
    return {d.name: d.max_mtu for d in drafts if d.max_mtu is not None}


@dataclass(frozen=True, slots=True)
class LinkFacts:
    """What ``ip -d link`` says of one netdev beyond :class:`~unifab.parse.netdev.Interface`."""

    max_mtu: int | None  # ``maxmtu`` (None when absent or 0)
    operstate: str | None  # the ``state`` word as printed: UP, DOWN, LOWERLAYERDOWN, UNKNOWN...
    carrier: bool | None  # LOWER_UP set; False on NO-CARRIER or admin up without LOWER_UP; None: cannot tell


def link_facts(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> dict[str, LinkFacts]:
    """:class:`LinkFacts` of each link by interface name (a name printed twice keeps its last). Errors as
    :func:`parse`."""
    return {
        d.name: LinkFacts(d.max_mtu, d.state, _carrier(d.flags))
        for d in _drafts(text.splitlines(), source, 1, problems)
    }


def _carrier(flags: frozenset[str]) -> bool | None:
    if "LOWER_UP" in flags:
        return True
    if "NO-CARRIER" in flags or "UP" in flags:  # an admin-up link without LOWER_UP has no carrier
        return False
    return None  # admin down: the kernel does not say whether a cable would give carrier
