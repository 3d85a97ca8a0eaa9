"""Arista EOS running-config: interfaces, QoS profiles and maps, and the resolved QoS view of each port.

Reads the text ``show running-config`` prints (EOS 4.2x; also AVD ``intended/configs/*.cfg`` and
hand-written CLI snippets, which use the same syntax). Blocks nest by indentation (three spaces a
level); ``!`` lines are comments; ``comment``/``banner`` bodies up to ``EOF`` are skipped.

Commands read (anything else is ignored, EOS configs are huge; a known command whose arguments do
not fit raises :class:`~unifab.errors.ParseError` naming the line):

* top level: ``hostname``, ``interface <names>`` (ranges ``Ethernet1-4``, ``Ethernet1/1-2`` and comma
  lists), ``qos profile NAME``, ``qos map dscp|cos <list> to traffic-class N [drop-precedence D]``,
  ``qos map traffic-class <list> to tx-queue|uc-tx-queue|dscp|cos N``, ``qos rewrite dscp``,
  ``qos random-detect ecn allow non-ect``, ``priority-flow-control all off``,
  ``priority-flow-control pause watchdog [default] timeout|polling-interval|recovery-time S``,
  ``priority-flow-control pause watchdog [default] action A``,
  ``priority-flow-control pause watchdog override action drop``;
* interface and ``qos profile`` bodies: ``qos trust dscp|cos|disabled`` (``no qos trust`` is
  ``disabled``, as AVD renders it), ``qos cos N``, ``qos dscp N``, ``service-policy type qos input P``,
  ``shape rate ...``, ``priority-flow-control on|off`` (also ``mode on|off``, ``no priority-flow-control``),
  ``priority-flow-control priority N no-drop|drop``, ``priority-flow-control pause watchdog``,
  ``... pause watchdog port action A``, ``... pause watchdog port timer timeout S polling-interval S|auto
  recovery-time S [forced]``, and ``tx-queue``/``uc-tx-queue``/``mc-tx-queue N`` sub-blocks;
* interface bodies only: ``description``, ``shutdown``, ``mtu``, ``speed``, ``switchport``/``no switchport``,
  ``ip address``, ``channel-group N mode M``, ``service-profile NAME``;
* queue sub-blocks: ``priority strict``/``no priority``, ``bandwidth [guaranteed] percent N``,
  ``shape rate ...``, ``random-detect ecn minimum-threshold X U maximum-threshold Y U
  [max-mark-probability P] [weight W]``, ``random-detect ecn count``, ``no random-detect ecn``.
  ``random-detect drop`` (WRED drop) is not modelled.

Times are seconds in the config and milliseconds in the records (``timeout_ms``). ECN thresholds keep
the configured number and unit; ``bytes`` is filled for ``bytes``/``kbytes``/``mbytes`` only (see
:data:`UNIT_BYTES`: the kbytes/mbytes base is an assumption) and is ``None`` for ``segments`` and time
units, whose byte size depends on the platform.

:func:`resolve` builds :class:`EosInterfaceQos` for every ``Ethernet*`` and ``Port-Channel*`` interface:
the applied ``qos profile`` first, the interface's own commands over it, the global maps over the
defaults below. Named QoS maps (``qos map dscp to traffic-class NAME`` blocks) and policy-maps are
not modelled; ``service_policy`` is reported so a check can say the maps may be overridden. A
``service-profile`` naming no profile in the config contributes nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from unifab.errors import ParseError

__all__ = [
    "DEFAULT_COS_TO_TC",
    "DEFAULT_DSCP_TO_TC",
    "DEFAULT_MTU_ROUTED",
    "DEFAULT_MTU_SWITCHED",
    "DEFAULT_PFCWD_ACTION",
    "DEFAULT_QUEUE_STRICT",
    "DEFAULT_TC_TO_QUEUE",
    "DEFAULT_TRUST_ROUTED",
    "DEFAULT_TRUST_SWITCHED",
    "UNIT_BYTES",
    "EosConfig",
    "EosInterface",
    "EosInterfaceQos",
    "EosPfcWatchdog",
    "EosPfcWatchdogGlobal",
    "EosQosMaps",
    "EosQosProfile",
    "EosQosSettings",
    "EosQueue",
    "EosQueueConfig",
    "EosThreshold",
    "EosWatchdogTimer",
    "expand_interfaces",
    "parse",
    "render",
    "resolve",
    "speed_to_mbps",
]

# --- defaults where the config is silent (reference §2.4: none of these is verified on a device) ----

# [U] "DSCP/8, with DSCP 0-7 -> TC1 and 8-15 -> TC0" (reference §2.4); confirm with `show qos maps`.
DEFAULT_DSCP_TO_TC: dict[int, int] = {d: {0: 1, 1: 0}.get(d // 8, d // 8) for d in range(64)}
# [U] the same swap for CoS (0 -> TC1, 1 -> TC0, n -> TCn); no primary source found.
DEFAULT_COS_TO_TC: dict[int, int] = {c: {0: 1, 1: 0}.get(c, c) for c in range(8)}
# [U] TC -> tx-queue is believed to be the identity (reference §2.4).
DEFAULT_TC_TO_QUEUE: dict[int, int] = {tc: tc for tc in range(8)}
# [U] "DSCP on routed ports, CoS on switchports" (reference §2.4).
DEFAULT_TRUST_ROUTED = "dscp"
DEFAULT_TRUST_SWITCHED = "cos"
# [U] An Ethernet/Port-Channel interface is a switchport unless `no switchport` (EOS default on
# most platforms; some newer ones default to routed). An interface with `ip address` and no explicit
# `switchport` is taken as routed, since a switchport cannot carry an address.
DEFAULT_SWITCHPORT = True
# [I] from the `show interfaces` samples (vEOS 4.23.5M): routed Ethernet ports report 1500 (no
# `mtu` configured, l3MtuConfigured false), bridged and port-channel members report 9214.
DEFAULT_MTU_ROUTED = 1500
DEFAULT_MTU_SWITCHED = 9214
# [U] tx-queues are strict priority until `no priority` (EOS documentation; not checked here).
DEFAULT_QUEUE_STRICT = True
# [V] the AVD schema says the default PFC watchdog stuck-queue action is error-disable.
DEFAULT_PFCWD_ACTION = "errdisable"
# [U] PFC and the PFC watchdog are off on a port until configured; watchdog timers have no known
# default (reported as None when neither the port nor the global `default` commands set them).
DEFAULT_PFC_ON = False
DEFAULT_PFCWD_ENABLED = False

# [U] ECN/WRED threshold units (reference §2.2). Byte sizes of `kbytes`/`mbytes` are NOT settled in
# any primary source; 1024-based is assumed here (buffer memory is counted in binary units) so a
# byte figure exists for comparison, but every threshold also keeps its configured value and unit.
# `segments` and the time units have no byte size without the platform's cell/segment size.
UNIT_BYTES: dict[str, int | None] = {
    "bytes": 1,
    "kbytes": 1024,
    "mbytes": 1024 * 1024,
    "segments": None,
    "microseconds": None,
    "milliseconds": None,
}
PFCWD_ACTIONS = frozenset({"drop", "no-drop", "notify-only", "errdisable"})
TRUST_MODES = frozenset({"dscp", "cos", "disabled"})
QUEUE_KINDS = ("tx-queue", "uc-tx-queue", "mc-tx-queue")
QOS_INTERFACE_PREFIXES = ("Ethernet", "Port-Channel")
MAX_RANGE = 4096  # an interface or index range wider than this is refused

# canonical spelling of interface-name prefixes (running-config always prints these)
_IF_PREFIXES = {
    p.lower(): p
    for p in ("Ethernet", "Port-Channel", "Management", "Loopback", "Vlan", "Vxlan", "Tunnel", "Recirc-Channel")
}


# --- records -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EosThreshold:
    """An ECN threshold as configured; ``bytes`` only for byte units (see :data:`UNIT_BYTES`)."""

    value: int
    unit: str
    bytes: int | None


@dataclass(frozen=True, slots=True)
class EosQueueConfig:
    """One ``tx-queue``/``uc-tx-queue``/``mc-tx-queue`` sub-block as written (``None`` = not said)."""

    index: int
    strict: bool | None = None
    bandwidth_percent: int | None = None
    bandwidth_guaranteed_percent: int | None = None
    shape_rate: str | None = None
    ecn: bool | None = None  # True: `random-detect ecn minimum-threshold ...`; False: `no random-detect ecn`
    min_threshold: EosThreshold | None = None
    max_threshold: EosThreshold | None = None
    max_mark_probability: int | None = None
    weight: int | None = None
    ecn_count: bool | None = None


@dataclass(frozen=True, slots=True)
class EosWatchdogTimer:
    """``priority-flow-control pause watchdog port timer ...`` (``polling-interval auto`` sets ``polling_auto``)."""

    timeout_ms: int | None = None
    polling_interval_ms: int | None = None
    polling_auto: bool = False
    recovery_time_ms: int | None = None
    forced: bool = False


@dataclass(frozen=True, slots=True)
class EosQosSettings:
    """The QoS commands an interface or a ``qos profile`` body holds, as written."""

    trust: str | None = None
    default_cos: int | None = None
    default_dscp: int | None = None
    service_policy: str | None = None
    shape_rate: str | None = None
    pfc_on: bool | None = None
    pfc_priorities: dict[int, bool] = field(default_factory=dict)  # priority -> no-drop
    pfcwd_enabled: bool | None = None
    pfcwd_action: str | None = None
    pfcwd_timer: EosWatchdogTimer | None = None
    tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)
    uc_tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)
    mc_tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EosQosProfile:
    name: str
    qos: EosQosSettings


@dataclass(frozen=True, slots=True)
class EosInterface:
    """An ``interface`` block as written; ``speed_mbps`` is read from ``speed`` (see :func:`speed_to_mbps`)."""

    name: str
    description: str | None = None
    shutdown: bool = False
    mtu: int | None = None
    speed: str | None = None
    speed_mbps: int | None = None
    switchport: bool | None = None
    ip_address: str | None = None
    channel_group: int | None = None
    channel_group_mode: str | None = None
    service_profile: str | None = None
    qos: EosQosSettings = field(default_factory=EosQosSettings)


@dataclass(frozen=True, slots=True)
class EosQosMaps:
    """Global ``qos map`` entries as configured (the defaults are not merged in here)."""

    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    dscp_drop_precedence: dict[int, int] = field(default_factory=dict)
    cos_to_tc: dict[int, int] = field(default_factory=dict)
    tc_to_queue: dict[int, int] = field(default_factory=dict)
    tc_to_dscp: dict[int, int] = field(default_factory=dict)
    tc_to_cos: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EosPfcWatchdogGlobal:
    """Global ``priority-flow-control pause watchdog`` settings (``default ...`` timers, action)."""

    action: str | None = None
    timeout_ms: int | None = None
    polling_interval_ms: int | None = None
    recovery_time_ms: int | None = None
    override_action_drop: bool = False


@dataclass(frozen=True, slots=True)
class EosPfcWatchdog:
    """Resolved PFC watchdog of one port: port timer over global ``default`` timers over unknown."""

    enabled: bool
    action: str
    timeout_ms: int | None
    polling_interval_ms: int | None
    polling_interval_auto: bool
    recovery_time_ms: int | None
    forced: bool


@dataclass(frozen=True, slots=True)
class EosQueue:
    """Resolved unicast egress queue (``tx-queue`` and ``uc-tx-queue`` merged; profile, then interface)."""

    index: int
    ecn_enabled: bool
    min_threshold: EosThreshold | None
    max_threshold: EosThreshold | None
    max_mark_probability: int | None
    weight: int | None
    ecn_count: bool
    bandwidth_percent: int | None
    bandwidth_guaranteed_percent: int | None
    strict: bool
    shape_rate: str | None


@dataclass(frozen=True, slots=True)
class EosInterfaceQos:
    """The QoS an Ethernet or Port-Channel interface ends up with.

    ``pfc_no_drop`` is what is configured ``no-drop``; ``pfc_enabled`` is the same set when PFC is on
    (interface/profile ``on`` and no global ``priority-flow-control all off``), else empty.
    ``assumed`` names the fields that rely, wholly or partly, on the unverified defaults above.
    """

    interface: str
    service_profile: str | None
    routed: bool
    trust: str
    dscp_to_tc: dict[int, int]
    cos_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    default_cos: int | None
    default_dscp: int | None
    service_policy: str | None
    pfc_on: bool
    pfc_no_drop: frozenset[int]
    pfc_enabled: frozenset[int]
    pfcwd: EosPfcWatchdog
    queues: dict[int, EosQueue]
    mc_queues: dict[int, EosQueue]
    shape_rate: str | None
    mtu: int
    speed_mbps: int | None
    shutdown: bool
    assumed: frozenset[str]


@dataclass(frozen=True, slots=True)
class EosConfig:
    """A parsed running-config. ``interface_qos`` is derived: build the rest, then call :func:`resolve`."""

    hostname: str | None
    interfaces: dict[str, EosInterface]
    interface_qos: dict[str, EosInterfaceQos] = field(default_factory=dict)
    qos_profiles: dict[str, EosQosProfile] = field(default_factory=dict)
    qos_maps: EosQosMaps = field(default_factory=EosQosMaps)
    qos_rewrite_dscp: bool = False
    ecn_allow_non_ect: bool = False
    pfc_all_off: bool = False
    pfc_watchdog: EosPfcWatchdogGlobal = field(default_factory=EosPfcWatchdogGlobal)


# --- small readers -------------------------------------------------------------------------------

_NATURAL = re.compile(r"(\d+)")
_SECONDS = re.compile(r"^\d{1,9}(?:\.\d{1,9})?$")
_SPEED = re.compile(r"^(\d{1,7}(?:\.\d{1,3})?)(g|m)?(?:full|half)?(?:-(\d{1,2}))?$")
_IF_ITEM = re.compile(
    r"^(?P<prefix>[A-Za-z](?:[A-Za-z-]*[A-Za-z])?)?(?P<start>\d+(?:/\d+)*)(?P<sub>\.\d+)?(?:-(?P<end>\d+(?:/\d+)*))?$"
)


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting Ethernet2 before Ethernet10."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _NATURAL.split(name) if p)


def _uint(token: str, source: str, line: int, what: str, hi: int | None = None) -> int:
    if not (token.isdigit() and token.isascii() and len(token) <= 12):
        raise ParseError(source, f"{what} as a non-negative integer, got {token!r}", line=line)
    value = int(token)
    if hi is not None and value > hi:
        raise ParseError(source, f"{what} in 0..{hi}, got {value}", line=line)
    return value


def _seconds_ms(token: str, source: str, line: int, what: str) -> int:
    """``"0.05"`` (seconds) -> 50 (ms); finer than a millisecond is refused."""
    if _SECONDS.match(token):
        ms = Decimal(token) * 1000
        if ms == ms.to_integral_value():
            return int(ms)
    raise ParseError(source, f"{what} in seconds with at most 3 decimals, got {token!r}", line=line)


def _fmt_seconds(ms: int) -> str:
    return format(Decimal(ms).scaleb(-3).normalize(), "f")


def _index_list(tokens: Iterable[str], source: str, line: int, what: str, hi: int) -> list[int]:
    """``["8", "9", "10-12"]`` or ``["8,9"]`` -> [8, 9, 10, 11, 12]."""
    out: list[int] = []
    for token in tokens:
        for part in token.split(","):
            if not part:
                continue
            lo_s, dash, hi_s = part.partition("-")
            lo = _uint(lo_s, source, line, what, hi)
            last = _uint(hi_s, source, line, what, hi) if dash else lo
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


# --- parsing -------------------------------------------------------------------------------------

Owner = tuple[str, str]  # ("if" | "profile", name)


@dataclass(slots=True)
class _Ctx:
    indent: int
    kind: str  # "interface" | "profile" | "queue" | "skip"
    owners: tuple[Owner, ...] = ()
    queue_kind: str = ""
    queue_indices: tuple[int, ...] = ()


_QUEUE_FIELD = {"tx-queue": "tx_queues", "uc-tx-queue": "uc_tx_queues", "mc-tx-queue": "mc_tx_queues"}


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.hostname: str | None = None
        self.ifaces: dict[str, EosInterface] = {}
        self.qos: dict[Owner, EosQosSettings] = {}
        self.maps: dict[str, dict[int, int]] = {f.name: {} for f in dataclasses.fields(EosQosMaps)}
        self.rewrite_dscp = False
        self.allow_non_ect = False
        self.all_off = False
        self.wd = EosPfcWatchdogGlobal()
        self.line = 0
        self.current = ""
        self.commands = 0

    def err(self, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.line)

    def uint(self, token: str, what: str, hi: int | None = None) -> int:
        return _uint(token, self.source, self.line, what, hi)

    def arg(self, words: list[str], i: int, what: str) -> str:
        if i >= len(words):
            raise self.err(f"{what} after {' '.join(words)!r}")
        return words[i]

    # -- driving ------------------------------------------------------------------------------------

    def run(self, text: str) -> EosConfig:
        stack: list[_Ctx] = []
        heredoc = False
        for self.line, raw in enumerate(text.split("\n"), 1):
            line = raw.rstrip()
            stripped = line.lstrip()
            if heredoc:
                heredoc = stripped != "EOF"
                continue
            if not stripped or stripped.startswith("!"):
                continue
            indent = len(line) - len(stripped)
            while stack and stack[-1].indent >= indent:
                stack.pop()
            words = stripped.split()
            self.current = stripped
            parent = stack[-1] if stack else None
            self.commands += 1
            if parent is None:
                ctx = self.top(words, indent) if indent == 0 else _Ctx(indent, "skip")
                heredoc = words[0] == "banner"
            elif parent.kind in ("interface", "profile"):
                heredoc = words == ["comment"]
                ctx = self.block(parent, words, indent)
            elif parent.kind == "queue":
                heredoc = words == ["comment"]
                self.queue_command(parent, words)
                ctx = _Ctx(indent, "skip")
            else:
                ctx = _Ctx(indent, "skip")
            stack.append(ctx)
        if self.commands == 0:
            self.line = 0
            raise ParseError(self.source, "an EOS running-config (found no commands)")
        return self.build()

    def build(self) -> EosConfig:
        interfaces = {
            name: dataclasses.replace(self.ifaces[name], qos=self.qos.get(("if", name), EosQosSettings()))
            for name in sorted(self.ifaces, key=_natural)
        }
        profiles = {
            owner[1]: EosQosProfile(owner[1], settings)
            for owner, settings in sorted(self.qos.items())
            if owner[0] == "profile"
        }
        maps = EosQosMaps(**{k: dict(sorted(v.items())) for k, v in self.maps.items()})
        cfg = EosConfig(
            hostname=self.hostname,
            interfaces=interfaces,
            interface_qos={},
            qos_profiles=profiles,
            qos_maps=maps,
            qos_rewrite_dscp=self.rewrite_dscp,
            ecn_allow_non_ect=self.allow_non_ect,
            pfc_all_off=self.all_off,
            pfc_watchdog=self.wd,
        )
        return resolve(cfg)

    # -- top level ------------------------------------------------------------------------------------

    def top(self, words: list[str], indent: int) -> _Ctx:
        head = words[0]
        negated = head == "no"
        body = words[1:] if negated else words
        if not body:
            return _Ctx(indent, "skip")
        if head == "hostname":
            if len(words) != 2:
                raise self.err("'hostname NAME'")
            self.hostname = words[1]
        elif head == "interface":
            names = expand_interfaces(" ".join(words[1:]), self.source, self.line)
            for name in names:
                if name not in self.ifaces:
                    self.ifaces[name] = EosInterface(name=name)
                self.qos.setdefault(("if", name), EosQosSettings())
            return _Ctx(indent, "interface", tuple(("if", n) for n in names))
        elif body[:2] == ["qos", "profile"] and not negated:
            if len(words) != 3:
                raise self.err("'qos profile NAME'")
            owner = ("profile", words[2])
            self.qos.setdefault(owner, EosQosSettings())
            return _Ctx(indent, "profile", (owner,))
        elif body[:2] == ["qos", "map"] and not negated:
            self.qos_map(words)
        elif body == ["qos", "rewrite", "dscp"]:
            self.rewrite_dscp = not negated
        elif body[:5] == ["qos", "random-detect", "ecn", "allow", "non-ect"]:
            self.allow_non_ect = not negated
        elif body[0] == "priority-flow-control":
            self.global_pfc(body, negated)
        return _Ctx(indent, "skip")

    def qos_map(self, words: list[str]) -> None:
        kind = self.arg(words, 2, "'dscp', 'cos' or 'traffic-class'")
        if kind not in ("dscp", "cos", "traffic-class"):
            return  # exp, named maps in other forms: not modelled
        if "to" not in words[3:]:
            raise self.err(f"'qos map {kind} <values> to ...'")
        to = words.index("to", 3)
        if to == 3:
            return  # `qos map dscp to traffic-class NAME`: a named map block, not modelled
        hi = {"dscp": 63, "cos": 7, "traffic-class": 7}[kind]
        keys = _index_list(words[3:to], self.source, self.line, kind, hi)
        target = self.arg(words, to + 1, "a map target")
        rest = words[to + 2 :]
        if kind in ("dscp", "cos"):
            if target != "traffic-class":
                return
            tc = self.uint(self.arg(words, to + 2, "a traffic class"), "traffic class", 7)
            dp: int | None = None
            if rest[1:]:
                if rest[1] != "drop-precedence" or len(rest) != 3:
                    raise self.err("'drop-precedence N' or the end of the line after the traffic class")
                dp = self.uint(rest[2], "drop precedence", 2)
            table = self.maps["dscp_to_tc" if kind == "dscp" else "cos_to_tc"]
            for key in keys:
                table[key] = tc
                if kind == "dscp":
                    if dp is None:
                        self.maps["dscp_drop_precedence"].pop(key, None)
                    else:
                        self.maps["dscp_drop_precedence"][key] = dp
            return
        field_name = {"tx-queue": "tc_to_queue", "uc-tx-queue": "tc_to_queue", "dscp": "tc_to_dscp", "cos": "tc_to_cos"}
        if target not in field_name:
            return  # mc-tx-queue and others: not modelled
        if len(rest) != 1:
            raise self.err(f"one value after 'to {target}'")
        hi_value = {"dscp": 63, "cos": 7}.get(target, 15)
        value = self.uint(rest[0], target, hi_value)
        for key in keys:
            self.maps[field_name[target]][key] = value

    def global_pfc(self, body: list[str], negated: bool) -> None:
        args = body[1:]
        if args == ["all", "off"]:
            self.all_off = not negated
            return
        if args[:2] != ["pause", "watchdog"] or negated:
            return
        rest = args[2:]
        if rest[:1] == ["default"] and rest[1:2] != ["action"]:
            if len(rest) != 3 or rest[1] not in ("timeout", "polling-interval", "recovery-time"):
                raise self.err("'default timeout|polling-interval|recovery-time SECONDS'")
            ms = _seconds_ms(rest[2], self.source, self.line, rest[1])
            name = {"timeout": "timeout_ms", "polling-interval": "polling_interval_ms"}.get(rest[1], "recovery_time_ms")
            changes: dict[str, Any] = {name: ms}
            self.wd = dataclasses.replace(self.wd, **changes)
        elif rest[:1] == ["action"] or rest[:2] == ["default", "action"]:
            action = rest[-1]
            if len(rest) != (2 if rest[0] == "action" else 3) or action not in PFCWD_ACTIONS:
                raise self.err(f"'action' and one of {sorted(PFCWD_ACTIONS)}")
            self.wd = dataclasses.replace(self.wd, action=action)
        elif rest[:2] == ["override", "action"]:
            if rest[2:] != ["drop"]:
                raise self.err("'override action drop'")
            self.wd = dataclasses.replace(self.wd, override_action_drop=True)

    # -- interface and profile bodies -------------------------------------------------------------------

    def set_qos(self, owners: tuple[Owner, ...], **changes: Any) -> None:
        for owner in owners:
            self.qos[owner] = dataclasses.replace(self.qos[owner], **changes)

    def _set_queues(self, owner: Owner, attr: str, queues: dict[int, EosQueueConfig]) -> None:
        changes: dict[str, Any] = {attr: queues}
        self.qos[owner] = dataclasses.replace(self.qos[owner], **changes)

    def set_iface(self, owners: tuple[Owner, ...], **changes: Any) -> None:
        for _, name in owners:
            self.ifaces[name] = dataclasses.replace(self.ifaces[name], **changes)

    def block(self, parent: _Ctx, words: list[str], indent: int) -> _Ctx:
        owners = parent.owners
        negated = words[0] == "no"
        body = words[1:] if negated else words
        if not body:
            return _Ctx(indent, "skip")
        head = body[0]
        if head in QUEUE_KINDS and not negated:
            indices = tuple(_index_list(body[1:], self.source, self.line, f"{head} number", 15))
            attr = _QUEUE_FIELD[head]
            for owner in owners:
                queues: dict[int, EosQueueConfig] = dict(getattr(self.qos[owner], attr))
                for i in indices:
                    queues.setdefault(i, EosQueueConfig(index=i))
                self._set_queues(owner, attr, queues)
            return _Ctx(indent, "queue", owners, head, indices)
        if head == "qos" and body[1:2] in (["trust"], ["cos"], ["dscp"]):
            self.qos_setting(owners, body, negated)
        elif head == "service-policy" and body[1:4] == ["type", "qos", "input"]:
            if negated:
                self.set_qos(owners, service_policy=None)
            elif len(body) != 5:
                raise self.err("'service-policy type qos input NAME'")
            else:
                self.set_qos(owners, service_policy=body[4])
        elif head == "shape" and body[1:2] == ["rate"]:
            self.set_qos(owners, shape_rate=None if negated else self.rate(body))
        elif head == "priority-flow-control":
            self.port_pfc(owners, body, negated)
        elif parent.kind == "interface":
            self.interface_command(owners, body, negated)
        return _Ctx(indent, "skip")

    def rate(self, body: list[str]) -> str:
        if len(body) < 3:
            raise self.err("a rate after 'shape rate'")
        return " ".join(body[2:])

    def qos_setting(self, owners: tuple[Owner, ...], body: list[str], negated: bool) -> None:
        what = body[1]
        if what == "trust":
            if negated:
                self.set_qos(owners, trust="disabled")  # AVD renders `trust: disabled` as `no qos trust`
                return
            if len(body) != 3 or body[2] not in TRUST_MODES:
                raise self.err("'qos trust dscp|cos|disabled'")
            self.set_qos(owners, trust=body[2])
            return
        name = "default_cos" if what == "cos" else "default_dscp"
        if negated:
            self.set_qos(owners, **{name: None})
            return
        if len(body) != 3:
            raise self.err(f"'qos {what} N'")
        self.set_qos(owners, **{name: self.uint(body[2], f"default {what}", 7 if what == "cos" else 63)})

    def port_pfc(self, owners: tuple[Owner, ...], body: list[str], negated: bool) -> None:
        args = body[1:]
        if not args:
            if not negated:
                raise self.err("'priority-flow-control on|off|priority N ...|pause watchdog'")
            self.set_qos(owners, pfc_on=False)
            return
        if args in (["on"], ["mode", "on"]):
            self.set_qos(owners, pfc_on=not negated)
            return
        if args in (["off"], ["mode", "off"]):
            self.set_qos(owners, pfc_on=False)
            return
        if args[0] == "priority":
            prio = self.uint(self.arg(body, 2, "a priority"), "PFC priority", 7)
            for owner in owners:
                prios = dict(self.qos[owner].pfc_priorities)
                if negated:
                    prios.pop(prio, None)
                else:
                    if len(args) != 3 or args[2] not in ("no-drop", "drop"):
                        raise self.err("'priority-flow-control priority N no-drop|drop'")
                    prios[prio] = args[2] == "no-drop"
                self.qos[owner] = dataclasses.replace(self.qos[owner], pfc_priorities=dict(sorted(prios.items())))
            return
        if args[:2] != ["pause", "watchdog"]:
            return
        rest = args[2:]
        if not rest:
            self.set_qos(owners, pfcwd_enabled=not negated)
        elif rest[:2] == ["port", "action"]:
            if negated:
                self.set_qos(owners, pfcwd_action=None)
            elif len(rest) != 3 or rest[2] not in PFCWD_ACTIONS:
                raise self.err(f"'pause watchdog port action' and one of {sorted(PFCWD_ACTIONS)}")
            else:
                self.set_qos(owners, pfcwd_action=rest[2])
        elif rest[:2] == ["port", "timer"]:
            self.set_qos(owners, pfcwd_timer=None if negated else self.timer(rest[2:]))

    def timer(self, args: list[str]) -> EosWatchdogTimer:
        values: dict[str, Any] = {}
        i = 0
        while i < len(args):
            key = args[i]
            if key == "forced":
                values["forced"] = True
                i += 1
                continue
            if key not in ("timeout", "polling-interval", "recovery-time") or i + 1 >= len(args):
                raise self.err("'timeout S', 'polling-interval S|auto', 'recovery-time S' or 'forced'")
            value = args[i + 1]
            if key == "polling-interval" and value == "auto":
                values["polling_auto"] = True
            else:
                ms = _seconds_ms(value, self.source, self.line, key)
                values[
                    {"timeout": "timeout_ms", "polling-interval": "polling_interval_ms"}.get(key, "recovery_time_ms")
                ] = ms
            i += 2
        return EosWatchdogTimer(**values)

    def interface_command(self, owners: tuple[Owner, ...], body: list[str], negated: bool) -> None:
        head = body[0]
        if head == "description":
            parts = self.current.split(None, 1)  # keep the text's own spacing
            text = parts[1].strip() if len(parts) == 2 and not negated else ""
            if not negated and not text:
                raise self.err("a text after 'description'")
            self.set_iface(owners, description=None if negated else text)
        elif body == ["shutdown"]:
            self.set_iface(owners, shutdown=not negated)
        elif head == "mtu":
            if negated:
                self.set_iface(owners, mtu=None)
            elif len(body) != 2:
                raise self.err("'mtu BYTES'")
            else:
                mtu = self.uint(body[1], "MTU", 65535)
                self.set_iface(owners, mtu=mtu)
        elif head == "speed":
            if negated:
                self.set_iface(owners, speed=None, speed_mbps=None)
                return
            text = " ".join(body[1:])
            if not text:
                raise self.err("a speed after 'speed'")
            try:
                mbps = speed_to_mbps(text)
            except ValueError:
                raise self.err(f"a speed such as '100g', '200g-4', 'forced 100gfull' or 'auto', got {text!r}") from None
            self.set_iface(owners, speed=text, speed_mbps=mbps)
        elif body == ["switchport"]:
            self.set_iface(owners, switchport=not negated)
        elif body[:2] == ["ip", "address"]:
            if negated:
                self.set_iface(owners, ip_address=None)
            elif len(body) == 3:
                self.set_iface(owners, ip_address=body[2])
            elif len(body) < 3:
                raise self.err("an address after 'ip address'")
        elif head == "channel-group":
            if negated:
                self.set_iface(owners, channel_group=None, channel_group_mode=None)
                return
            if len(body) not in (2, 4) or (len(body) == 4 and body[2] != "mode"):
                raise self.err("'channel-group N mode MODE'")
            group = self.uint(body[1], "channel-group number")
            self.set_iface(owners, channel_group=group, channel_group_mode=body[3] if len(body) == 4 else None)
        elif head == "service-profile":
            if negated:
                self.set_iface(owners, service_profile=None)
            elif len(body) != 2:
                raise self.err("'service-profile NAME'")
            else:
                self.set_iface(owners, service_profile=body[1])

    # -- queue sub-blocks -------------------------------------------------------------------------------

    def queue_command(self, ctx: _Ctx, words: list[str]) -> None:
        negated = words[0] == "no"
        body = words[1:] if negated else words
        if not body:
            return
        head = body[0]
        changes: dict[str, Any]
        if head == "priority":
            if negated:
                changes = {"strict": False}
            elif body == ["priority", "strict"]:
                changes = {"strict": True}
            else:
                raise self.err("'priority strict' or 'no priority'")
        elif head == "bandwidth" and not negated:
            if body[1:2] == ["percent"]:
                if len(body) != 3:
                    raise self.err("'bandwidth percent N'")
                changes = {"bandwidth_percent": self.uint(body[2], "bandwidth percent", 100)}
            elif body[1:3] == ["guaranteed", "percent"]:
                if len(body) != 4:
                    raise self.err("'bandwidth guaranteed percent N'")
                changes = {"bandwidth_guaranteed_percent": self.uint(body[3], "guaranteed bandwidth percent", 100)}
            else:
                return
        elif head == "shape" and body[1:2] == ["rate"]:
            changes = {"shape_rate": None if negated else self.rate(body)}
        elif head == "random-detect" and body[1:2] == ["ecn"]:
            rest = body[2:]
            if rest == ["count"]:
                changes = {"ecn_count": not negated}
            elif negated and not rest:
                changes = {
                    "ecn": False,
                    "min_threshold": None,
                    "max_threshold": None,
                    "max_mark_probability": None,
                    "weight": None,
                }
            elif rest[:1] == ["minimum-threshold"] and not negated:
                changes = self.ecn_thresholds(rest)
            else:
                return
        else:
            return
        attr = _QUEUE_FIELD[ctx.queue_kind]
        for owner in ctx.owners:
            queues = dict(getattr(self.qos[owner], attr))
            for i in ctx.queue_indices:
                queues[i] = dataclasses.replace(queues[i], **changes)
            self._set_queues(owner, attr, queues)

    def threshold(self, value: str, unit: str) -> EosThreshold:
        number = self.uint(value, "threshold")
        if unit not in UNIT_BYTES:
            raise self.err(f"a threshold unit ({', '.join(UNIT_BYTES)}), got {unit!r}")
        scale = UNIT_BYTES[unit]
        return EosThreshold(number, unit, None if scale is None else number * scale)

    def ecn_thresholds(self, rest: list[str]) -> dict[str, Any]:
        shape = "'minimum-threshold N UNIT maximum-threshold N UNIT [max-mark-probability P] [weight W]'"
        if len(rest) < 6 or rest[3] != "maximum-threshold":
            raise self.err(shape)
        out: dict[str, Any] = {
            "ecn": True,
            "min_threshold": self.threshold(rest[1], rest[2]),
            "max_threshold": self.threshold(rest[4], rest[5]),
            "max_mark_probability": None,
            "weight": None,
        }
        opts = rest[6:]
        if len(opts) % 2:
            raise self.err(shape)
        for key, value in zip(opts[::2], opts[1::2], strict=True):
            if key == "max-mark-probability":
                out["max_mark_probability"] = self.uint(value, "max-mark-probability", 100)
            elif key == "weight":
                out["weight"] = self.uint(value, "weight", 15)
            else:
                raise self.err(shape)
        return out


def parse(text: str, source: str = "<input>") -> EosConfig:
    """Read an EOS running-config and resolve every Ethernet/Port-Channel interface's QoS."""
    return _Parser(source).run(text)


# --- resolution ------------------------------------------------------------------------------------


def _over(base: dict[int, int], top: Mapping[int, int]) -> dict[int, int]:
    out = dict(base)
    out.update(top)
    return dict(sorted(out.items()))


def _merge_queue(base: EosQueueConfig | None, top: EosQueueConfig) -> EosQueueConfig:
    if base is None:
        return top
    changes: dict[str, Any] = {}
    for name in ("strict", "bandwidth_percent", "bandwidth_guaranteed_percent", "shape_rate", "ecn_count"):
        value = getattr(top, name)
        if value is not None:
            changes[name] = value
    if top.ecn is not None:  # the ECN threshold group replaces as a unit
        for name in ("ecn", "min_threshold", "max_threshold", "max_mark_probability", "weight"):
            changes[name] = getattr(top, name)
    return dataclasses.replace(base, **changes)


def _resolve_queues(layers: Iterable[Iterable[EosQueueConfig]], assumed: set[str]) -> dict[int, EosQueue]:
    merged: dict[int, EosQueueConfig] = {}
    for layer in layers:
        for q in layer:
            merged[q.index] = _merge_queue(merged.get(q.index), q)
    out: dict[int, EosQueue] = {}
    for i in sorted(merged):
        q = merged[i]
        if q.strict is None:
            assumed.add("queues.strict")
        on = q.ecn is True
        out[i] = EosQueue(
            index=i,
            ecn_enabled=on,
            min_threshold=q.min_threshold if on else None,
            max_threshold=q.max_threshold if on else None,
            max_mark_probability=q.max_mark_probability if on else None,
            weight=q.weight if on else None,
            ecn_count=bool(q.ecn_count),
            bandwidth_percent=q.bandwidth_percent,
            bandwidth_guaranteed_percent=q.bandwidth_guaranteed_percent,
            strict=DEFAULT_QUEUE_STRICT if q.strict is None else q.strict,
            shape_rate=q.shape_rate,
        )
    return out


def _last(layers: Iterable[EosQosSettings], name: str) -> Any:
    value = None
    for layer in layers:
        v = getattr(layer, name)
        if v is not None:
            value = v
    return value


def _is_routed(iface: EosInterface) -> bool:
    if "." in iface.name:
        return True  # subinterfaces are routed
    if iface.switchport is not None:
        return not iface.switchport
    return iface.ip_address is not None or not DEFAULT_SWITCHPORT


def _interface_qos(cfg: EosConfig, iface: EosInterface) -> EosInterfaceQos:
    assumed: set[str] = set()
    profile = cfg.qos_profiles.get(iface.service_profile) if iface.service_profile else None
    layers = ([profile.qos] if profile else []) + [iface.qos]
    routed = _is_routed(iface)

    trust = _last(layers, "trust")
    if trust is None:
        assumed.add("trust")
        trust = DEFAULT_TRUST_ROUTED if routed else DEFAULT_TRUST_SWITCHED
    maps = cfg.qos_maps
    if len(maps.dscp_to_tc) < len(DEFAULT_DSCP_TO_TC):
        assumed.add("dscp_to_tc")
    if len(maps.cos_to_tc) < len(DEFAULT_COS_TO_TC):
        assumed.add("cos_to_tc")
    if len(maps.tc_to_queue) < len(DEFAULT_TC_TO_QUEUE):
        assumed.add("tc_to_queue")

    pfc_on_cfg = _last(layers, "pfc_on")
    pfc_on = (DEFAULT_PFC_ON if pfc_on_cfg is None else pfc_on_cfg) and not cfg.pfc_all_off
    prios: dict[int, bool] = {}
    for layer in layers:
        prios.update(layer.pfc_priorities)
    no_drop = frozenset(p for p, nd in prios.items() if nd)

    wd_enabled = _last(layers, "pfcwd_enabled")
    action = _last(layers, "pfcwd_action") or cfg.pfc_watchdog.action
    if action is None:
        assumed.add("pfcwd.action")
        action = DEFAULT_PFCWD_ACTION
    timer: EosWatchdogTimer = _last(layers, "pfcwd_timer") or EosWatchdogTimer()
    gwd = cfg.pfc_watchdog
    pfcwd = EosPfcWatchdog(
        enabled=DEFAULT_PFCWD_ENABLED if wd_enabled is None else wd_enabled,
        action=action,
        timeout_ms=gwd.timeout_ms if timer.timeout_ms is None else timer.timeout_ms,
        polling_interval_ms=(
            None
            if timer.polling_auto
            else gwd.polling_interval_ms
            if timer.polling_interval_ms is None
            else timer.polling_interval_ms
        ),
        polling_interval_auto=timer.polling_auto,
        recovery_time_ms=gwd.recovery_time_ms if timer.recovery_time_ms is None else timer.recovery_time_ms,
        forced=timer.forced,
    )

    queues = _resolve_queues(((*layer.tx_queues.values(), *layer.uc_tx_queues.values()) for layer in layers), assumed)
    mc_queues = _resolve_queues((layer.mc_tx_queues.values() for layer in layers), assumed)

    mtu = iface.mtu
    if mtu is None:
        assumed.add("mtu")
        mtu = DEFAULT_MTU_ROUTED if routed else DEFAULT_MTU_SWITCHED
    return EosInterfaceQos(
        interface=iface.name,
        service_profile=iface.service_profile,
        routed=routed,
        trust=trust,
        dscp_to_tc=_over(DEFAULT_DSCP_TO_TC, maps.dscp_to_tc),
        cos_to_tc=_over(DEFAULT_COS_TO_TC, maps.cos_to_tc),
        tc_to_queue=_over(DEFAULT_TC_TO_QUEUE, maps.tc_to_queue),
        default_cos=_last(layers, "default_cos"),
        default_dscp=_last(layers, "default_dscp"),
        service_policy=_last(layers, "service_policy"),
        pfc_on=pfc_on,
        pfc_no_drop=no_drop,
        pfc_enabled=no_drop if pfc_on else frozenset(),
        pfcwd=pfcwd,
        queues=queues,
        mc_queues=mc_queues,
        shape_rate=_last(layers, "shape_rate"),
        mtu=mtu,
        speed_mbps=iface.speed_mbps,
        shutdown=iface.shutdown,
        assumed=frozenset(assumed),
    )


def resolve(cfg: EosConfig) -> EosConfig:
    """``cfg`` with ``interface_qos`` recomputed from its interfaces, profiles, maps and PFC settings."""
    qos = {
        name: _interface_qos(cfg, iface)
        for name, iface in cfg.interfaces.items()
        if name.startswith(QOS_INTERFACE_PREFIXES)
    }
    return dataclasses.replace(cfg, interface_qos=qos)


# --- rendering -------------------------------------------------------------------------------------


def _group(
    mapping: Mapping[int, int], extra: Mapping[int, int] | None = None
) -> Iterator[tuple[list[int], int, int | None]]:
    """``{8: 1, 9: 1, 46: 5}`` -> ([8, 9], 1, None), ([46], 5, None), grouped by value (and ``extra``)."""
    groups: dict[tuple[int, int | None], list[int]] = {}
    for key in sorted(mapping):
        groups.setdefault((mapping[key], extra.get(key) if extra else None), []).append(key)
    for (value, ext), keys in groups.items():
        yield keys, value, ext


def _join(keys: Iterable[int]) -> str:
    return " ".join(str(k) for k in keys)


def _render_queue(kind: str, q: EosQueueConfig, out: list[str]) -> None:
    out += ["   !", f"   {kind} {q.index}"]
    if q.strict is not None:
        out.append("      priority strict" if q.strict else "      no priority")
    if q.bandwidth_percent is not None:
        out.append(f"      bandwidth percent {q.bandwidth_percent}")
    if q.bandwidth_guaranteed_percent is not None:
        out.append(f"      bandwidth guaranteed percent {q.bandwidth_guaranteed_percent}")
    if q.shape_rate is not None:
        out.append(f"      shape rate {q.shape_rate}")
    if q.ecn is True:
        if q.min_threshold is None or q.max_threshold is None:
            raise ValueError(f"{kind} {q.index}: ECN on needs both thresholds")
        line = (
            f"      random-detect ecn minimum-threshold {q.min_threshold.value} {q.min_threshold.unit}"
            f" maximum-threshold {q.max_threshold.value} {q.max_threshold.unit}"
        )
        if q.max_mark_probability is not None:
            line += f" max-mark-probability {q.max_mark_probability}"
        if q.weight is not None:
            line += f" weight {q.weight}"
        out.append(line)
    elif q.ecn is False:
        out.append("      no random-detect ecn")
    if q.ecn_count is not None:
        out.append("      random-detect ecn count" if q.ecn_count else "      no random-detect ecn count")


def _render_qos(s: EosQosSettings, out: list[str]) -> None:
    if s.trust == "disabled":
        out.append("   no qos trust")
    elif s.trust is not None:
        out.append(f"   qos trust {s.trust}")
    if s.default_cos is not None:
        out.append(f"   qos cos {s.default_cos}")
    if s.default_dscp is not None:
        out.append(f"   qos dscp {s.default_dscp}")
    if s.service_policy is not None:
        out.append(f"   service-policy type qos input {s.service_policy}")
    if s.shape_rate is not None:
        out.append(f"   shape rate {s.shape_rate}")
    if s.pfc_on is not None:
        out.append("   priority-flow-control on" if s.pfc_on else "   no priority-flow-control")
    for prio, no_drop in sorted(s.pfc_priorities.items()):
        out.append(f"   priority-flow-control priority {prio} {'no-drop' if no_drop else 'drop'}")
    if s.pfcwd_enabled is not None:
        out.append(("   " if s.pfcwd_enabled else "   no ") + "priority-flow-control pause watchdog")
    if s.pfcwd_action is not None:
        out.append(f"   priority-flow-control pause watchdog port action {s.pfcwd_action}")
    if s.pfcwd_timer is not None:
        t = s.pfcwd_timer
        line = "   priority-flow-control pause watchdog port timer"
        if t.timeout_ms is not None:
            line += f" timeout {_fmt_seconds(t.timeout_ms)}"
        if t.polling_auto:
            line += " polling-interval auto"
        elif t.polling_interval_ms is not None:
            line += f" polling-interval {_fmt_seconds(t.polling_interval_ms)}"
        if t.recovery_time_ms is not None:
            line += f" recovery-time {_fmt_seconds(t.recovery_time_ms)}"
        if t.forced:
            line += " forced"
        out.append(line)
    for kind, queues in (("tx-queue", s.tx_queues), ("uc-tx-queue", s.uc_tx_queues), ("mc-tx-queue", s.mc_tx_queues)):
        for i in sorted(queues):
            _render_queue(kind, queues[i], out)


def render(cfg: EosConfig) -> str:
    """A running-config section that :func:`parse` reads back to ``cfg`` (``interface_qos`` is recomputed).

    ``speed_mbps`` is not rendered: it is read from ``speed``, so build interfaces with a ``speed`` string.
    Raises ``ValueError`` for a record the config cannot express (ECN on without both thresholds).
    """
    out: list[str] = []
    if cfg.hostname is not None:
        out += [f"hostname {cfg.hostname}", "!"]
    m = cfg.qos_maps
    for keys, tc, dp in _group(m.dscp_to_tc, m.dscp_drop_precedence):
        out.append(
            f"qos map dscp {_join(keys)} to traffic-class {tc}" + (f" drop-precedence {dp}" if dp is not None else "")
        )
    for keys, tc, _ in _group(m.cos_to_tc):
        out.append(f"qos map cos {_join(keys)} to traffic-class {tc}")
    for keys, q, _ in _group(m.tc_to_queue):
        out.append(f"qos map traffic-class {_join(keys)} to tx-queue {q}")
    for keys, d, _ in _group(m.tc_to_dscp):
        out.append(f"qos map traffic-class {_join(keys)} to dscp {d}")
    for keys, c, _ in _group(m.tc_to_cos):
        out.append(f"qos map traffic-class {_join(keys)} to cos {c}")
    if cfg.qos_rewrite_dscp:
        out.append("qos rewrite dscp")
    if cfg.ecn_allow_non_ect:
        out.append("qos random-detect ecn allow non-ect")
    if out and out[-1] != "!":
        out.append("!")
    for name in sorted(cfg.qos_profiles):
        out.append(f"qos profile {name}")
        _render_qos(cfg.qos_profiles[name].qos, out)
        out.append("!")
    for name in sorted(cfg.interfaces, key=_natural):
        i = cfg.interfaces[name]
        out.append(f"interface {name}")
        if i.description is not None:
            out.append(f"   description {i.description}")
        if i.shutdown:
            out.append("   shutdown")
        if i.mtu is not None:
            out.append(f"   mtu {i.mtu}")
        if i.speed is not None:
            out.append(f"   speed {i.speed}")
        if i.switchport is not None:
            out.append("   switchport" if i.switchport else "   no switchport")
        if i.ip_address is not None:
            out.append(f"   ip address {i.ip_address}")
        if i.channel_group is not None:
            mode = f" mode {i.channel_group_mode}" if i.channel_group_mode else ""
            out.append(f"   channel-group {i.channel_group}{mode}")
        if i.service_profile is not None:
            out.append(f"   service-profile {i.service_profile}")
        _render_qos(i.qos, out)
        out.append("!")
    if cfg.pfc_all_off:
        out.append("priority-flow-control all off")
    wd = cfg.pfc_watchdog
    for word, ms in (
        ("timeout", wd.timeout_ms),
        ("polling-interval", wd.polling_interval_ms),
        ("recovery-time", wd.recovery_time_ms),
    ):
        if ms is not None:
            out.append(f"priority-flow-control pause watchdog default {word} {_fmt_seconds(ms)}")
    if wd.action is not None:
        out.append(f"priority-flow-control pause watchdog action {wd.action}")
    if wd.override_action_drop:
        out.append("priority-flow-control pause watchdog override action drop")
    out.append("end")
    return "\n".join(out) + "\n"
