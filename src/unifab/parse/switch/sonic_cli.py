"""Dell Enterprise SONiC ``sonic-cli`` (KLISH) running configuration: RoCE/DCQCN QoS, resolved per port.

Reads the text ``show running-configuration`` prints in Dell Enterprise SONiC 4.x ``sonic-cli`` (and
the same commands pasted from documentation, where the sub-command indentation is often lost; prompt
lines pasted before or after it, ``sonic# show running-configuration``, are ignored).
Blocks start at an unindented header line and run to the next one; ``!`` lines are separators. When
indentation is missing, an unindented line right after a ``!`` starts a new (possibly unknown) block,
except ``queue N`` inside ``qos scheduler-policy``. Each CLI object maps 1:1 to a CONFIG_DB table
(WRED_PROFILE, SCHEDULER, DSCP_TO_TC_MAP, ..., PORT_QOS_MAP, QUEUE, PFC_WD).

Commands read (others ignored; a known command whose arguments do not fit raises
:class:`~unifab.errors.ParseError` naming the line):

* ``qos wred-policy NAME``: ``green|yellow|red minimum-threshold X maximum-threshold Y drop-probability P``
  (only green is kept, as in the RoCE configs), ``ecn green|yellow|red|all|none|...``;
* ``qos scheduler-policy NAME`` with ``queue N`` sub-blocks: ``type strict|dwrr|wrr``, ``weight N``;
* ``qos map KIND NAME`` for the kinds in :data:`MAP_KINDS` (``dscp-tc``: ``dscp LIST traffic-class N``,
  ``dot1p-tc``, ``tc-queue``, ``tc-pg``, ``pfc-priority-queue``, ``pfc-priority-pg``); ``LIST`` is
  ``0-3,5-23,25``;
* ``interface NAME``: ``description``, ``mtu``, ``speed`` (Mb/s), ``fec``, ``shutdown``/``no shutdown``,
  ``queue N wred-policy P``, ``scheduler-policy P``, ``qos-map KIND NAME``,
  ``[no] priority-flow-control priority N``, ``priority-flow-control watchdog action A``,
  ``priority-flow-control watchdog on [detect-time MS]``, ``priority-flow-control watchdog off``,
  ``priority-flow-control watchdog restore-time MS``.

WRED thresholds are kept as configured (``green_min_threshold``); the Dell documentation sample does not
state their unit. ``green_min_bytes`` assumes KB (:data:`THRESHOLD_UNIT_BYTES` = 1024, as the CONFIG_DB
WRED_PROFILE thresholds are bytes and Dell's CLI help says KB) -- an assumption, unverified.

:func:`parse` resolves every interface into :class:`SonicCliPortQos`: bound maps expanded, queues from
the scheduler policy and the per-queue WRED policy. ``trust`` is ``dscp`` when a ``dscp-tc`` map is
bound, else ``dot1p`` when a ``dot1p-tc`` map is, else ``None``. Binding a policy or map the config does
not define raises :class:`~unifab.errors.ParseError` at the binding line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts

__all__ = [
    "MAP_KINDS",
    "THRESHOLD_UNIT_BYTES",
    "SonicCliConfig",
    "SonicCliPfcWatchdog",
    "SonicCliPortQos",
    "SonicCliQosMap",
    "SonicCliQueue",
    "SonicCliSchedulerQueue",
    "SonicCliWredPolicy",
    "expand_list",
    "parse",
]

THRESHOLD_UNIT_BYTES = 1024  # assumption: sonic-cli WRED thresholds in KB

# map kind -> (key word, value word, max key, max value)
MAP_KINDS: dict[str, tuple[str, str, int, int]] = {
    "dscp-tc": ("dscp", "traffic-class", 63, 7),
    "dot1p-tc": ("dot1p", "traffic-class", 7, 7),
    "tc-queue": ("traffic-class", "queue", 7, 7),
    "tc-pg": ("traffic-class", "priority-group", 7, 7),
    "pfc-priority-queue": ("pfc-priority", "queue", 7, 7),
    "pfc-priority-pg": ("pfc-priority", "pg", 7, 7),
}

_HEADERS = re.compile(r"(interface|qos wred-policy|qos scheduler-policy|qos map)\s")
_WRED = re.compile(r"(green|yellow|red) minimum-threshold (\d+) maximum-threshold (\d+) drop-probability (\d+)")
_QUEUE_WRED = re.compile(r"queue (\d+) wred-policy (\S+)")
_INT = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class SonicCliWredPolicy:
    name: str
    ecn: str | None  # "green" | "all" | "none" | ...
    green_min_threshold: int | None  # as configured (unit: see THRESHOLD_UNIT_BYTES)
    green_max_threshold: int | None
    green_drop_probability: int | None  # percent


@dataclass(frozen=True, slots=True)
class SonicCliSchedulerQueue:
    index: int
    type: str | None  # "strict" | "dwrr" | "wrr"
    weight: int | None


@dataclass(frozen=True, slots=True)
class SonicCliQosMap:
    kind: str  # a MAP_KINDS key
    name: str
    entries: dict[int, int]


@dataclass(frozen=True, slots=True)
class SonicCliQueue:
    """One queue of a port: scheduling from the scheduler policy, ECN/WRED from the queue's wred-policy."""

    index: int
    scheduler_type: str | None
    weight: int | None
    wred_policy: str | None
    ecn: str | None
    green_min_threshold: int | None
    green_max_threshold: int | None
    green_min_bytes: int | None
    green_max_bytes: int | None
    green_drop_probability: int | None


@dataclass(frozen=True, slots=True)
class SonicCliPfcWatchdog:
    enabled: bool | None
    action: str | None
    detect_time_ms: int | None
    restore_time_ms: int | None


@dataclass(frozen=True, slots=True)
class SonicCliPortQos:
    port: str
    description: str | None
    admin_up: bool | None
    mtu: int | None
    speed_mbps: int | None
    fec: str | None
    trust: str | None  # "dscp" | "dot1p" | None
    maps: dict[str, str]  # kind -> bound map name
    dscp_to_tc: dict[int, int]
    dot1p_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    tc_to_pg: dict[int, int]
    pfc_priority_to_queue: dict[int, int]
    pfc_priority_to_pg: dict[int, int]
    pfc_enabled: frozenset[int]
    scheduler_policy: str | None
    queues: dict[int, SonicCliQueue]
    pfc_watchdog: SonicCliPfcWatchdog


@dataclass(frozen=True, slots=True)
class SonicCliConfig:
    wred_policies: dict[str, SonicCliWredPolicy]
    scheduler_policies: dict[str, tuple[SonicCliSchedulerQueue, ...]]
    maps: tuple[SonicCliQosMap, ...]
    ports: dict[str, SonicCliPortQos]


def expand_list(text: str, maximum: int) -> list[int]:
    """``"0-3,5,7"`` -> [0, 1, 2, 3, 5, 7]; raises ``ValueError`` for anything else or a value above ``maximum``."""
    out: list[int] = []
    for item in text.split(","):
        lo, sep, hi = item.partition("-")
        if not _INT.fullmatch(lo) or (sep and not _INT.fullmatch(hi)):
            raise ValueError(text)
        first, last = int(lo), int(hi) if sep else int(lo)
        if first > last or last > maximum:
            raise ValueError(text)
        out.extend(range(first, last + 1))
    return out


# --- reading --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Iface:
    name: str
    line: int
    description: str | None = None
    admin_up: bool | None = None
    mtu: int | None = None
    speed_mbps: int | None = None
    fec: str | None = None
    maps: dict[str, tuple[str, int]] = field(default_factory=dict)
    queue_wred: dict[int, tuple[str, int]] = field(default_factory=dict)
    scheduler: tuple[str, int] | None = None
    pfc: set[int] = field(default_factory=set)
    wd_enabled: bool | None = None
    wd_action: str | None = None
    wd_detect_ms: int | None = None
    wd_restore_ms: int | None = None


@dataclass(slots=True)
class _Wred:
    name: str
    ecn: str | None = None
    green: tuple[int, int, int] | None = None


@dataclass(slots=True)
class _Reader:
    source: str
    wred: dict[str, _Wred] = field(default_factory=dict)
    sched: dict[str, dict[int, list[str | int | None]]] = field(default_factory=dict)
    maps: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    ifaces: dict[str, _Iface] = field(default_factory=dict)
    broken: dict[str, int] = field(default_factory=dict)  # object dropped for a bad line -> that line

    def fail(self, n: int, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=n)

    def int_arg(self, words: list[str], i: int, n: int, what: str) -> int:
        if len(words) <= i or not _INT.fullmatch(words[i]):
            raise self.fail(n, f"expected {what} as an integer")
        return int(words[i])


def _header(r: _Reader, body: str, n: int) -> tuple[str, str, str] | None:
    """(kind, name, extra) for a block header line."""
    words = body.split()
    if words[0] == "interface":
        if len(words) != 2:
            raise r.fail(n, "expected 'interface NAME'")
        r.ifaces.setdefault(words[1], _Iface(words[1], n))
        return ("interface", words[1], "")
    if words[:2] == ["qos", "wred-policy"]:
        if len(words) != 3:
            raise r.fail(n, "expected 'qos wred-policy NAME'")
        r.wred.setdefault(words[2], _Wred(words[2]))
        return ("wred", words[2], "")
    if words[:2] == ["qos", "scheduler-policy"]:
        if len(words) != 3:
            raise r.fail(n, "expected 'qos scheduler-policy NAME'")
        r.sched.setdefault(words[2], {})
        return ("sched", words[2], "")
    if words[:2] == ["qos", "map"]:
        if len(words) != 4:
            raise r.fail(n, "expected 'qos map KIND NAME'")
        if words[2] not in MAP_KINDS:
            return ("other", "", "")
        r.maps.setdefault((words[2], words[3]), {})
        return ("map", words[3], words[2])
    return None


def _wred_line(r: _Reader, w: _Wred, body: str, n: int) -> None:
    words = body.split()
    if words[0] in ("green", "yellow", "red") and len(words) > 1 and words[1] == "minimum-threshold":
        m = _WRED.fullmatch(body)
        if m is None:
            raise r.fail(n, "expected 'COLOR minimum-threshold N maximum-threshold N drop-probability P'")
        lo, hi, prob = int(m.group(2)), int(m.group(3)), int(m.group(4))
        if lo > hi or prob > 100:
            raise r.fail(n, "expected minimum <= maximum threshold and a drop probability of 0-100")
        if m.group(1) == "green":
            w.green = (lo, hi, prob)
    elif words[0] == "ecn":
        if len(words) != 2:
            raise r.fail(n, "expected 'ecn MODE'")
        w.ecn = words[1]


def _sched_line(
    r: _Reader, queues: dict[int, list[str | int | None]], current: int | None, body: str, n: int
) -> int | None:
    words = body.split()
    if words[0] == "queue":
        if len(words) != 2 or not _INT.fullmatch(words[1]) or int(words[1]) > 63:
            raise r.fail(n, "expected 'queue N' (0-63)")
        index = int(words[1])
        queues.setdefault(index, [None, None])
        return index
    if words[0] in ("type", "weight"):
        if current is None:
            raise r.fail(n, f"expected '{words[0]}' inside a 'queue N' block")
        if words[0] == "type":
            if len(words) != 2:
                raise r.fail(n, "expected 'type strict|dwrr|wrr'")
            queues[current][0] = words[1]
        else:
            if len(words) != 2:
                raise r.fail(n, "expected 'weight N'")
            queues[current][1] = r.int_arg(words, 1, n, "the weight")
    return current


def _map_line(r: _Reader, kind: str, name: str, body: str, n: int) -> None:
    key_word, value_word, max_key, max_value = MAP_KINDS[kind]
    words = body.split()
    if words[0] != key_word:
        return
    if len(words) != 4 or words[2] != value_word:
        raise r.fail(n, f"expected '{key_word} LIST {value_word} N'")
    try:
        keys = expand_list(words[1], max_key)
    except ValueError:
        raise r.fail(n, f"expected a list of {key_word} values 0-{max_key} such as 0-3,5") from None
    value = r.int_arg(words, 3, n, f"the {value_word}")
    if value > max_value:
        raise r.fail(n, f"expected a {value_word} of 0-{max_value}")
    entries = r.maps[(kind, name)]
    for k in keys:
        entries[k] = value


def _iface_line(r: _Reader, it: _Iface, body: str, n: int) -> None:
    words = body.split()
    head = words[0]
    if head == "description":
        it.description = body.partition(" ")[2].strip() or None
    elif head in ("mtu", "speed") and len(words) >= 1:
        if len(words) != 2:
            raise r.fail(n, f"expected '{head} N'")
        value = r.int_arg(words, 1, n, f"the {head}")
        if head == "mtu":
            it.mtu = value
        else:
            it.speed_mbps = value or None
    elif head == "fec":
        if len(words) != 2:
            raise r.fail(n, "expected 'fec MODE'")
        it.fec = words[1]
    elif head == "shutdown" and len(words) == 1:
        it.admin_up = False
    elif words == ["no", "shutdown"]:
        it.admin_up = True
    elif head == "queue" and len(words) > 2 and words[2] == "wred-policy":
        m = _QUEUE_WRED.fullmatch(body)
        if m is None or int(m.group(1)) > 63:
            raise r.fail(n, "expected 'queue N wred-policy NAME'")
        it.queue_wred[int(m.group(1))] = (m.group(2), n)
    elif head == "scheduler-policy":
        if len(words) != 2:
            raise r.fail(n, "expected 'scheduler-policy NAME'")
        it.scheduler = (words[1], n)
    elif head == "qos-map":
        if len(words) != 3:
            raise r.fail(n, "expected 'qos-map KIND NAME'")
        if words[1] in MAP_KINDS:
            it.maps[words[1]] = (words[2], n)
    elif head == "priority-flow-control" or words[:2] == ["no", "priority-flow-control"]:
        _pfc_line(r, it, words, n)


def _pfc_line(r: _Reader, it: _Iface, words: list[str], n: int) -> None:
    negate = words[0] == "no"
    args = words[2:] if negate else words[1:]
    if args[:1] == ["priority"]:
        if len(args) != 2 or not _INT.fullmatch(args[1]) or int(args[1]) > 7:
            raise r.fail(n, "expected 'priority-flow-control priority N' (0-7)")
        (it.pfc.discard if negate else it.pfc.add)(int(args[1]))
    elif args[:1] == ["watchdog"]:
        rest = args[1:]
        if negate:
            it.wd_enabled = False
        elif rest[:1] == ["action"]:
            if len(rest) != 2:
                raise r.fail(n, "expected 'priority-flow-control watchdog action ACTION'")
            it.wd_action = rest[1]
        elif rest[:1] in (["on"], ["off"]):
            it.wd_enabled = rest[0] == "on"
            tail = rest[1:]
            if tail:
                if len(tail) != 2 or tail[0] != "detect-time":
                    raise r.fail(n, "expected 'priority-flow-control watchdog on [detect-time MS]'")
                it.wd_detect_ms = r.int_arg(tail, 1, n, "the detect time (ms)")
        elif rest[:1] == ["restore-time"]:
            if len(rest) != 2:
                raise r.fail(n, "expected 'priority-flow-control watchdog restore-time MS'")
            it.wd_restore_ms = r.int_arg(rest, 1, n, "the restore time (ms)")


_WHAT = {"interface": "interface {}", "wred": "qos wred-policy {}", "sched": "qos scheduler-policy {}"}


def _object(kind: str, name: str, extra: str) -> str:
    """How the config names a block: ``interface Eth1/1``, ``qos map dscp-tc ROCE``, ..."""
    return f"qos map {extra} {name}" if kind == "map" else _WHAT[kind].format(name)


def _line(r: _Reader, block: tuple[str, str, str], sched_queue: int | None, body: str, n: int) -> int | None:
    kind, name, extra = block
    if kind == "interface":
        _iface_line(r, r.ifaces[name], body, n)
    elif kind == "wred":
        _wred_line(r, r.wred[name], body, n)
    elif kind == "sched":
        return _sched_line(r, r.sched[name], sched_queue, body, n)
    elif kind == "map":
        _map_line(r, extra, name, body, n)
    return sched_queue


def _give_up(r: _Reader, block: tuple[str, str, str], exc: ParseError, log: ParseProblems) -> None:
    """A bad line in ``block``: the whole object is dropped (a half-read map or policy would read as set)."""
    kind, name, extra = block
    what = _object(kind, name, extra)
    if kind == "interface":
        r.ifaces.pop(name, None)
        log.record(exc, what)
    else:
        if kind == "wred":
            r.wred.pop(name, None)
        elif kind == "sched":
            r.sched.pop(name, None)
        else:
            r.maps.pop((extra, name), None)
        log.record(exc, f"{what} and every interface binding it")
    r.broken[what] = exc.line or 0


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> SonicCliConfig:
    """Read a sonic-cli running configuration and resolve each interface's QoS.

    With a collector a bad line costs its block: an interface, or a policy or map and every interface
    binding it (a dangling binding costs that interface); a bad header line the lines of its block.
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    r = _Reader(source)
    block: tuple[str, str, str] = ("none", "", "")
    sched_queue: int | None = None
    after_bang = False
    seen = False
    for n, raw in enumerate(blank_prompts(text, anywhere=True).splitlines(), 1):
        body = raw.strip()
        if not body:
            continue
        seen = True
        if body.startswith("!"):
            after_bang = True
            continue
        indented = raw[:1].isspace()
        if not indented and _HEADERS.match(body + " "):
            try:
                header = _header(r, body, n)
            except ParseError as exc:
                log.record(exc, f"line {n} and the lines of its block")
                block, sched_queue, after_bang = ("other", "", ""), None, False
                continue
            if header is not None:
                if header[0] != "other" and _object(*header) in r.broken:
                    header = ("other", "", "")  # the object is dropped already: its later lines too
                block, sched_queue, after_bang = header, None, False
                continue
        if not indented and after_bang and not (block[0] == "sched" and body.split()[0] == "queue"):
            block = ("other", "", "")
        after_bang = False
        try:
            sched_queue = _line(r, block, sched_queue, body, n)
        except ParseError as exc:
            if log.is_strict:
                raise
            _give_up(r, block, exc, log)
            block = ("other", "", "")
    if not seen:
        raise ParseError(source, "expected a sonic-cli running configuration, got empty input", line=1)
    return _resolve(r, log)


def _resolve(r: _Reader, log: ParseProblems) -> SonicCliConfig:
    wred = {
        name: SonicCliWredPolicy(
            name=name,
            ecn=w.ecn,
            green_min_threshold=w.green[0] if w.green else None,
            green_max_threshold=w.green[1] if w.green else None,
            green_drop_probability=w.green[2] if w.green else None,
        )
        for name, w in r.wred.items()
    }
    sched = {
        name: tuple(
            SonicCliSchedulerQueue(i, q[0] if isinstance(q[0], str) else None, q[1] if isinstance(q[1], int) else None)
            for i, q in sorted(queues.items())
        )
        for name, queues in r.sched.items()
    }
    ports: dict[str, SonicCliPortQos] = {}
    for name, it in r.ifaces.items():
        with log.skipping(f"interface {name}"):
            ports[name] = _port(r, it, wred, sched)
    if log.problems and not (ports or r.wred or r.sched or r.maps):  # nothing usable was read
        raise log.problems[0].error()
    maps = tuple(SonicCliQosMap(kind, name, dict(sorted(e.items()))) for (kind, name), e in r.maps.items())
    return SonicCliConfig(wred_policies=wred, scheduler_policies=sched, maps=maps, ports=ports)


def _undefined(r: _Reader, what: str) -> str:
    if what in r.broken:
        return f"expected {what!r} to be readable (its line {r.broken[what]} is not)"
    return f"expected {what!r} to be defined"


def _port(
    r: _Reader,
    it: _Iface,
    wred: dict[str, SonicCliWredPolicy],
    sched: dict[str, tuple[SonicCliSchedulerQueue, ...]],
) -> SonicCliPortQos:
    bound: dict[str, dict[int, int]] = {}
    for kind, (map_name, n) in it.maps.items():
        if (kind, map_name) not in r.maps:
            raise r.fail(n, _undefined(r, f"qos map {kind} {map_name}"))
        bound[kind] = dict(sorted(r.maps[(kind, map_name)].items()))
    sched_queues: dict[int, SonicCliSchedulerQueue] = {}
    if it.scheduler is not None:
        if it.scheduler[0] not in sched:
            raise r.fail(it.scheduler[1], _undefined(r, f"qos scheduler-policy {it.scheduler[0]}"))
        sched_queues = {q.index: q for q in sched[it.scheduler[0]]}
    for policy, n in it.queue_wred.values():
        if policy not in wred:
            raise r.fail(n, _undefined(r, f"qos wred-policy {policy}"))
    queues: dict[int, SonicCliQueue] = {}
    for index in sorted({*sched_queues, *it.queue_wred}):
        sq = sched_queues.get(index)
        wp = wred[it.queue_wred[index][0]] if index in it.queue_wred else None
        lo = wp.green_min_threshold if wp else None
        hi = wp.green_max_threshold if wp else None
        queues[index] = SonicCliQueue(
            index=index,
            scheduler_type=sq.type if sq else None,
            weight=sq.weight if sq else None,
            wred_policy=wp.name if wp else None,
            ecn=wp.ecn if wp else None,
            green_min_threshold=lo,
            green_max_threshold=hi,
            green_min_bytes=lo * THRESHOLD_UNIT_BYTES if lo is not None else None,
            green_max_bytes=hi * THRESHOLD_UNIT_BYTES if hi is not None else None,
            green_drop_probability=wp.green_drop_probability if wp else None,
        )
    trust = "dscp" if "dscp-tc" in bound else "dot1p" if "dot1p-tc" in bound else None
    return SonicCliPortQos(
        port=it.name,
        description=it.description,
        admin_up=it.admin_up,
        mtu=it.mtu,
        speed_mbps=it.speed_mbps,
        fec=it.fec,
        trust=trust,
        maps={kind: name for kind, (name, _n) in sorted(it.maps.items())},
        dscp_to_tc=bound.get("dscp-tc", {}),
        dot1p_to_tc=bound.get("dot1p-tc", {}),
        tc_to_queue=bound.get("tc-queue", {}),
        tc_to_pg=bound.get("tc-pg", {}),
        pfc_priority_to_queue=bound.get("pfc-priority-queue", {}),
        pfc_priority_to_pg=bound.get("pfc-priority-pg", {}),
        pfc_enabled=frozenset(it.pfc),
        scheduler_policy=it.scheduler[0] if it.scheduler else None,
        queues=queues,
        pfc_watchdog=SonicCliPfcWatchdog(it.wd_enabled, it.wd_action, it.wd_detect_ms, it.wd_restore_ms),
    )
