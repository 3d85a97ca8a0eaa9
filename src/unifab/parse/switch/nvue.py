"""NVIDIA Cumulus Linux NVUE (CL 5.x) QoS: ``nv config show -o yaml`` resolved per interface, and the
``nv show`` text outputs of RoCE, PFC, PFC watchdog and ECN.

**Configuration** (:func:`parse`, :func:`render`). ``nv config show -o yaml`` (and ``/etc/nvue.d/startup.yaml``)
prints a list ``[{header: {model, nvue-api-version, rev-id, version}}, {set: {...}}]``; the NVUE REST
API (``GET /nvue_v1/?rev=applied``) returns the ``set`` object alone; both are read. Several ``set``
items are merged in order. Interface keys may be ranges and lists: ``swp1-32``, ``swp1-4,swp6``,
``swp2,6`` (a bare number continues the previous name's prefix), ``swp1s0-3``. Interfaces of ``type:
swp`` (or without a type and named ``swpN``) are resolved; ``eth0``, ``lo``, bonds and SVIs are not.

Per interface the QoS objects are looked up as NVUE does (CL 5.16 QoS and RoCE pages): the profile
named by ``interface <if> qos {mapping|pfc|congestion-control|egress-scheduler} profile`` or
``default-global``; ``egress-queue-mapping`` only exists as ``default-global``; ``interface <if> qos
pfc-watchdog`` turns the watchdog on (``state disabled`` off), ``qos pfc-watchdog polling-interval`` /
``robustness`` are global. NVUE's vocabulary is kept: a *switch priority* (SP) is the internal class,
a *traffic class* is the egress queue, so ``dscp_to_tc`` maps DSCP -> SP and ``tc_to_queue`` SP -> TC.
Trust is ``l2`` (PCP), ``l3`` (DSCP), ``both`` or ``port``.

Defaults are data in this module. A silent setting takes, in order: the value configured, NVUE's RoCE
default for the configured ``qos roce mode`` when RoCE is on (:data:`ROCE_DEFAULTS`, reference
host-nic-roce §4.1: trust pcp,dscp; DSCP -> SP = dscp >> 3 so 26 -> SP3 and 48 -> SP6; SP3 -> TC3,
SP6 -> TC6, other SPs -> TC0; TC6 strict, TC3 and TC0 DWRR 50 %; ECN on TC0 and TC3, 150000 /
1500000 B, probability 100; PFC rx+tx on SP3 with cable-length 100 in the lossless modes), and NVUE's
plain default otherwise (trust l2, identity SP -> TC, ECN on TC0 only, DWRR 12/13 %, no PFC, MTU 9216).
Maps (``dscp``, ``pcp``, ``egress-queue-mapping``) overlay the default entry by entry; the
collections of a profile (``pfc ... switch-priority``, ``congestion-control ... traffic-class``,
``egress-scheduler ... traffic-class``) replace the default set when given (the doc's example of
ECN on TC 4,5,7 shows TC0 gone), and a configured traffic class takes the per-field defaults (ECN
enable, RED disable, 150000 / 1500000 B, probability 100). A profile configured without ``rx``/
``tx``/``cable-length`` gets enable/enable/10 m.

No real ``nv config show -o yaml`` capture is in the corpus: the shape is reconstructed from the NVUE
command reference and documentation examples (see the tests' ``nvue_*_reconstructed.yaml``).

**Show outputs** (``parse_show_*``). ``nv show`` prints a key/value tree under an ``operational  applied
[description]`` header and dashed rule, then titled tables (``Title`` / ``=====`` / header / dashed rule /
rows). Columns are placed by the dashed rules. Sizes are printed in **binary** units (``146.48 KB`` =
150000 B / 1024, ``1.43 MB`` = 1500000 B / 1048576, ``25000 B``); they are converted to bytes and
rounded, so a value printed with two decimals is exact only to 0.005 of its unit (<= 6 B for KB, <=
5243 B for MB): compare with that tolerance. A leading shell prompt line is skipped; a second one is an
error (one command's output per call).

Every reader raises only :class:`~unifab.errors.ParseError` on bad input: a YAML key path (``key=``)
for the configuration, a line number for show outputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml

from unifab.errors import ParseError, UsageError
from unifab.parse.switch.sonic_state_db import natural_key

__all__ = [
    "DEFAULT_MTU",
    "ROCE_DEFAULTS",
    "ROCE_MODES",
    "NvueConfig",
    "NvueCongestionControlShow",
    "NvueEcn",
    "NvueInterfaceQos",
    "NvuePfcProfileShow",
    "NvuePfcWatchdogShow",
    "NvuePfcWdClass",
    "NvueRoceClass",
    "NvueRoceCounters",
    "NvueRocePool",
    "NvueRoceStatus",
    "NvueScheduler",
    "expand_interfaces",
    "parse",
    "parse_show_congestion_control",
    "parse_show_pfc",
    "parse_show_pfc_watchdog",
    "parse_show_roce",
    "parse_show_roce_counters",
    "render",
    "size_bytes",
]


# --- records ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NvueEcn:
    """ECN/RED on one traffic class (egress queue)."""

    enabled: bool
    min_bytes: int | None
    max_bytes: int | None
    probability: int | None  # percent
    red_enabled: bool | None  # None where a show output does not say


@dataclass(frozen=True, slots=True)
class NvueScheduler:
    mode: str  # "dwrr" | "strict"
    bw_percent: int | None


@dataclass(frozen=True, slots=True)
class NvueInterfaceQos:
    """The resolved QoS of one swp interface."""

    interface: str
    mtu: int
    speed_mbps: int | None  # None for "auto"
    trust: str  # "l2" | "l3" | "both" | "port"
    dscp_to_tc: dict[int, int]  # DSCP -> switch priority (mapping profile)
    pcp_to_tc: dict[int, int]  # PCP -> switch priority
    port_default_sp: int
    tc_to_queue: dict[int, int]  # switch priority -> traffic class (egress-queue-mapping)
    pfc_enabled: frozenset[int]  # switch priorities
    pfc_rx: bool
    pfc_tx: bool
    pfc_cable_length_m: int | None  # None when PFC is not configured at all
    ecn: dict[int, NvueEcn]  # traffic class -> ECN/RED
    schedulers: dict[int, NvueScheduler]  # traffic class -> ETS
    pfcwd: bool
    mapping_profile: str
    pfc_profile: str
    congestion_control_profile: str
    egress_scheduler_profile: str


@dataclass(frozen=True, slots=True)
class NvueConfig:
    version: str | None  # header "Cumulus Linux 5.x"
    hostname: str | None
    roce_enabled: bool
    roce_mode: str | None  # None when RoCE is off
    pfcwd_polling_interval_ms: int
    pfcwd_robustness: int
    interfaces: dict[str, NvueInterfaceQos]


@dataclass(frozen=True, slots=True)
class NvueRoceClass:
    """A labelled row (``roce``/``cnp``) of ``nv show interface <if> qos roce status``."""

    name: str
    pcp: int | None
    dscp: int | None
    switch_priority: int | None
    traffic_class: int | None
    scheduler: NvueScheduler | None


@dataclass(frozen=True, slots=True)
class NvueRocePool:
    name: str
    mode: str  # lower case: "dynamic"
    pool_id: int | None
    switch_priorities: frozenset[int]
    traffic_classes: frozenset[int]
    size_bytes: int | None
    size_percent: int | None
    size_infinite: bool
    current_usage_bytes: int | None
    max_usage_bytes: int | None


@dataclass(frozen=True, slots=True)
class NvueRoceStatus:
    """``nv show qos roce`` (global) or ``nv show interface <if> qos roce status`` (one port)."""

    enabled: bool | None  # "enable on" (5.12) / "state enabled" (5.16); absent from the port view
    mode: str | None
    trust: str | None  # config vocabulary: "pcp,dscp" -> "both"
    pfc_enabled: frozenset[int]
    pfc_rx_enabled: bool | None
    pfc_tx_enabled: bool | None
    pfc_cable_length_m: int | None
    congestion_mode: str | None  # "ECN" / "ecn, absolute"
    ecn: dict[int, NvueEcn]  # each enabled traffic class with the shared thresholds
    lldp_app_priority: int | None
    lldp_app_protocol_id: int | None
    lldp_app_selector: str | None
    dscp_to_tc: dict[int, int]  # DSCP -> switch priority
    pcp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]  # switch priority -> traffic class
    schedulers: dict[int, NvueScheduler]  # traffic class -> ETS
    classes: dict[str, NvueRoceClass]  # port view: "roce", "cnp"
    pools: tuple[NvueRocePool, ...]
    exceptions: tuple[str, ...]
    features: dict[str, str]  # "Extended Features" (packet-trim: enabled)


@dataclass(frozen=True, slots=True)
class NvuePfcProfileShow:
    """``nv show qos pfc <profile>``."""

    switch_priorities: frozenset[int]
    rx_enabled: bool | None
    tx_enabled: bool | None
    cable_length_m: int | None
    port_buffer_bytes: int | None
    xoff_threshold_bytes: int | None
    xon_threshold_bytes: int | None


@dataclass(frozen=True, slots=True)
class NvuePfcWdClass:
    status: str  # "OK" | "DEADLOCK"
    deadlock_count: int


@dataclass(frozen=True, slots=True)
class NvuePfcWatchdogShow:
    """``nv show interface <if> qos pfc-watchdog``."""

    enabled: bool | None
    traffic_classes: dict[int, NvuePfcWdClass]


@dataclass(frozen=True, slots=True)
class NvueCongestionControlShow:
    """``nv show qos congestion-control <profile>``."""

    ecn: dict[int, NvueEcn]


@dataclass(frozen=True, slots=True)
class NvueRoceCounters:
    """``nv show interface <if> qos roce counters``: ``"tx-stats.tx-ecn-stats.ecn-marked-packets" -> n``,
    sizes in bytes."""

    counters: dict[str, int]


# --- defaults (data) -------------------------------------------------------------------------------

DEFAULT_PROFILE = "default-global"
DEFAULT_MTU = 9216  # CL 5.x swp default (NVUE applied config shows link mtu 9216)
DEFAULT_TRUST = "l2"
DEFAULT_PORT_DEFAULT_SP = 0
DEFAULT_DSCP_TO_SP = {d: d >> 3 for d in range(64)}
DEFAULT_PCP_TO_SP = {p: p for p in range(8)}
DEFAULT_SP_TO_TC = {sp: sp for sp in range(8)}
DEFAULT_ECN_FIELDS = NvueEcn(enabled=True, min_bytes=150000, max_bytes=1500000, probability=100, red_enabled=False)
DEFAULT_ECN = {0: DEFAULT_ECN_FIELDS}  # default-global: ECN on egress queue 0
DEFAULT_SCHEDULERS = {tc: NvueScheduler("dwrr", 12 if tc % 2 == 0 else 13) for tc in range(8)}
DEFAULT_PFC_RX = True
DEFAULT_PFC_TX = True
DEFAULT_CABLE_LENGTH_M = 10
DEFAULT_PFCWD_POLLING_INTERVAL_MS = 100
DEFAULT_PFCWD_ROBUSTNESS = 3
DEFAULT_ROCE_MODE = "lossless"
TRUSTS = ("l2", "l3", "both", "port")
# ``nv show`` trust-mode -> config trust
TRUST_SHOW_NAMES = {"pcp,dscp": "both", "dscp,pcp": "both", "dscp": "l3", "pcp": "l2", "port": "port"}
SCHEDULER_MODES = ("dwrr", "strict")

N_PRIORITIES = 8
N_DSCP = 64
N_TRAFFIC_CLASSES = 8


@dataclass(frozen=True, slots=True)
class _Pfc:
    priorities: frozenset[int]
    rx: bool
    tx: bool
    cable_m: int | None


_PFC_NONE = _Pfc(frozenset(), False, False, None)  # no PFC configured
_PFC_SILENT = _Pfc(frozenset(), DEFAULT_PFC_RX, DEFAULT_PFC_TX, DEFAULT_CABLE_LENGTH_M)  # a profile with no fields


@dataclass(frozen=True, slots=True)
class RoceDefaults:
    """What ``nv set qos roce mode <mode>`` configures where the user says nothing."""

    trust: str
    dscp_to_tc: dict[int, int]
    pcp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc: _Pfc
    ecn: dict[int, NvueEcn]
    schedulers: dict[int, NvueScheduler]


_ROCE_SP_TO_TC = {sp: sp if sp in (3, 6) else 0 for sp in range(N_PRIORITIES)}
_ROCE_ECN = {0: DEFAULT_ECN_FIELDS, 3: DEFAULT_ECN_FIELDS}  # "enabled-tc 0,3"
_ROCE_SCHEDULERS = {0: NvueScheduler("dwrr", 50), 3: NvueScheduler("dwrr", 50), 6: NvueScheduler("strict", None)}
_ROCE_LOSSLESS = RoceDefaults(
    trust="both",
    dscp_to_tc=DEFAULT_DSCP_TO_SP,
    pcp_to_tc=DEFAULT_PCP_TO_SP,
    tc_to_queue=_ROCE_SP_TO_TC,
    pfc=_Pfc(frozenset({3}), True, True, 100),
    ecn=_ROCE_ECN,
    schedulers=_ROCE_SCHEDULERS,
)
# lossy-multi-tc: from the CL 5.16 RoCE page's `nv show qos roce` example for that mode (whose header
# still says lossless-single-ipool): its own DSCP map, identity SP -> TC, DWRR 4/8/18/22/22/22/4/0 %.
_LOSSY_MULTI_TC_DSCP = {
    0: (0, 7, 8, 9, 10, *range(51, 64)),
    1: (1, 2),
    2: (3, 4),
    3: (5, 6),
    4: tuple(range(11, 41)),
    5: tuple(range(41, 51)),
}
ROCE_DEFAULTS: dict[str, RoceDefaults] = {
    "lossless": _ROCE_LOSSLESS,
    "lossless-single-ipool": _ROCE_LOSSLESS,  # differs only in the ingress buffer pools
    "lossy": replace(_ROCE_LOSSLESS, pfc=_PFC_NONE),
    "lossy-multi-tc": replace(
        _ROCE_LOSSLESS,
        dscp_to_tc={d: sp for sp, dscps in _LOSSY_MULTI_TC_DSCP.items() for d in dscps},
        tc_to_queue=dict(DEFAULT_SP_TO_TC),
        pfc=_PFC_NONE,
        schedulers={tc: NvueScheduler("dwrr", bw) for tc, bw in enumerate((4, 8, 18, 22, 22, 22, 4, 0))},
    ),
}
ROCE_MODES = tuple(ROCE_DEFAULTS)
_PLAIN = RoceDefaults(
    trust=DEFAULT_TRUST,
    dscp_to_tc=DEFAULT_DSCP_TO_SP,
    pcp_to_tc=DEFAULT_PCP_TO_SP,
    tc_to_queue=DEFAULT_SP_TO_TC,
    pfc=_PFC_NONE,
    ecn=DEFAULT_ECN,
    schedulers=DEFAULT_SCHEDULERS,
)

_ON = frozenset({"on", "enable", "enabled", "yes", "true"})
_OFF = frozenset({"off", "disable", "disabled", "no", "false"})
_SPEED = re.compile(r"(\d+)([MGT])")
_SPEED_UNITS = {"M": 1, "G": 1000, "T": 1_000_000}
_IFACE_ITEM = re.compile(r"(.*?)(\d+)(?:-(\d+))?")
_MAX_EXPANSION = 4096
_INCLUDED_TYPES = frozenset({"swp"})
_SWP = re.compile(r"swp\d")


# --- configuration: reading ------------------------------------------------------------------------


def parse(text: str | bytes, source: str = "<input>") -> NvueConfig:
    """Read ``nv config show -o yaml`` (or the REST API's revision object) and resolve every swp port."""
    doc = _load_yaml(text, source)
    header, body = _split_document(doc, source)
    return _Resolver(body, source).run(header)


def _load_yaml(text: str | bytes, source: str) -> Any:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise ParseError(source, "an NVUE configuration (nv config show -o yaml), got empty input")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # SafeLoader / CSafeLoader only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        raise ParseError(source, f"YAML ({exc.problem or exc.context})", line=line) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise ParseError(source, f"YAML ({type(exc).__name__}: {exc})") from None


def _split_document(doc: Any, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``[{header}, {set}, ...]`` or ``{header, set}`` or the bare ``set`` object."""
    if isinstance(doc, dict) and doc.keys() and doc.keys() <= {"header", "set"}:
        doc = [{k: v} for k, v in doc.items()]
    if isinstance(doc, dict):
        return {}, _str_keys(doc, source, "")
    if not isinstance(doc, list) or not doc:
        raise ParseError(source, "a list of '- header:' / '- set:' items or a configuration object")
    header: dict[str, Any] = {}
    body: dict[str, Any] = {}
    for i, item in enumerate(doc):
        if not isinstance(item, dict) or len(item) != 1:
            raise ParseError(source, "a one-key item '- header: ...' or '- set: ...'", key=f"[{i}]")
        ((name, value),) = item.items()
        if name == "header":
            if not isinstance(value, dict):
                raise ParseError(source, "a header object", key=f"[{i}].header")
            header = _str_keys(value, source, f"[{i}].header")
        elif name == "set":
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ParseError(source, "a configuration object", key=f"[{i}].set")
            _merge(body, _str_keys(value, source, f"[{i}].set"))
        else:
            raise ParseError(source, f"'header' or 'set', got {name!r}", key=f"[{i}]")
    return header, body


_MAX_DEPTH = 64  # NVUE's tree is ~10 deep; deeper means a recursive YAML alias
_MAX_NODES = 1_000_000  # bounds what shared YAML aliases can expand to


def _str_keys(
    obj: dict[Any, Any], source: str, path: str, budget: list[int] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Keys as strings (YAML reads ``26:`` as an int), recursively; booleans/None as keys are rejected.

    A copy: YAML aliases become separate subtrees, within a depth and size budget (a self-referencing
    alias, or a "billion laughs" document, is a ParseError rather than a hang or a RecursionError).
    """
    if budget is None:
        budget = [_MAX_NODES]
    if depth >= _MAX_DEPTH:
        raise ParseError(
            source, f"a configuration at most {_MAX_DEPTH} levels deep (a recursive YAML alias?)", key=path
        )
    budget[0] -= len(obj) + 1
    if budget[0] < 0:
        raise ParseError(source, f"a configuration of at most {_MAX_NODES} entries once YAML aliases are expanded")
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if isinstance(key, bool) or key is None or not isinstance(key, str | int):
            raise ParseError(source, f"a name or number as key, got {key!r}", key=path or None)
        name = str(key)
        out[name] = _str_keys(value, source, _join(path, name), budget, depth + 1) if isinstance(value, dict) else value
    return out


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        elif isinstance(value, dict):
            into[key] = _copy(value)
        else:
            into[key] = value


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in obj.items()}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def expand_interfaces(spec: str) -> list[str]:
    """``"swp1-4,swp6"`` -> swp1..swp4, swp6; ``"swp2,6"`` -> swp2, swp6; ``"swp1s0-3"`` -> swp1s0..swp1s3.

    Raises ``ValueError`` for an empty item, a descending range or more than 4096 names.
    """
    out: list[str] = []
    prefix: str | None = None
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise ValueError(f"empty item in interface list {spec!r}")
        match = _IFACE_ITEM.fullmatch(item)
        if match is None:
            out.append(item)  # a plain name without a number ("lo", "mgmt")
            prefix = None
            continue
        head, lo, hi = match.group(1), match.group(2), match.group(3)
        if not head:
            if prefix is None:
                raise ValueError(f"{item!r} in {spec!r} continues no interface name")
            head = prefix
        prefix = head
        first, last = int(lo), int(hi) if hi is not None else int(lo)
        if last < first:
            raise ValueError(f"descending range {item!r} in {spec!r}")
        if len(out) + last - first + 1 > _MAX_EXPANSION:
            raise ValueError(f"{spec!r} names more than {_MAX_EXPANSION} interfaces")
        if hi is None:
            out.append(f"{head}{lo}")
        else:
            out.extend(f"{head}{n}" for n in range(first, last + 1))
    return out


class _Resolver:
    def __init__(self, body: dict[str, Any], source: str) -> None:
        self.body = body
        self.source = source

    # -- value helpers ------------------------------------------------------------------------------

    def _err(self, path: str, expected: str) -> ParseError:
        return ParseError(self.source, expected, key=path)

    def _obj(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._err(path, f"an object, got {_kind(value)}")
        return value

    def _get(self, obj: dict[str, Any], path: str, *keys: str) -> Any:
        """``obj[k1][k2]...`` or ``None``; every step on the way must be an object."""
        cur: Any = obj
        for key in keys:
            if cur is None:
                return None
            cur = self._obj(cur, path).get(key)
            path = _join(path, key)
        return cur

    def _uint(self, value: Any, path: str, what: str, hi: int | None = None) -> int:
        if isinstance(value, bool):
            number = None
        elif isinstance(value, int):
            number = value
        elif isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
            number = int(value.strip())
        else:
            number = None
        if number is None or number < 0 or (hi is not None and number > hi):
            limit = "" if hi is None else f" in 0..{hi}"
            raise self._err(path, f"{what} as a non-negative integer{limit}, got {value!r}")
        return number

    def _flag(self, value: Any, path: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _ON:
                return True
            if low in _OFF:
                return False
        raise self._err(path, f"on/off or enable/disable, got {value!r}")

    def _numbers(self, key: str, path: str, hi: int, what: str) -> list[int]:
        """A collection key: ``"3"``, ``"4,5,7"`` or ``"0-7"``."""
        out: list[int] = []
        for item in key.split(","):
            lo_s, dash, hi_s = item.strip().partition("-")
            lo_n = self._uint(lo_s, path, what, hi)
            hi_n = self._uint(hi_s, path, what, hi) if dash else lo_n
            if hi_n < lo_n:
                raise self._err(path, f"an ascending {what} range, got {item!r}")
            out.extend(range(lo_n, hi_n + 1))
        return out

    def _collection(self, value: Any, path: str, hi: int, what: str) -> dict[int, dict[str, Any]]:
        """``{'3': {...}, '4,5': {...}}`` (or a scalar ``3``) -> number -> merged fields."""
        if value is None:
            return {}
        if isinstance(value, int | str) and not isinstance(value, bool):
            return {n: {} for n in self._numbers(str(value), path, hi, what)}
        out: dict[int, dict[str, Any]] = {}
        for key, fields in self._obj(value, path).items():
            item_path = _join(path, key)
            for n in self._numbers(key, item_path, hi, what):
                out.setdefault(n, {}).update(self._obj(fields, item_path))
        return dict(sorted(out.items()))

    # -- profiles -------------------------------------------------------------------------------------

    def _profile(self, qos: dict[str, Any], kind: str, name: str, ref: str) -> dict[str, Any] | None:
        profiles = self._obj(qos.get(kind), f"qos.{kind}")
        body = profiles.get(name)
        if name not in profiles:
            if name != DEFAULT_PROFILE:
                raise self._err(ref, f"profile {name!r} to be defined under qos.{kind}")
            return None
        return self._obj(body, f"qos.{kind}.{name}")

    def _mapping(
        self, qos: dict[str, Any], name: str, base: RoceDefaults, ref: str
    ) -> tuple[str, dict[int, int], dict[int, int], int]:
        body = self._profile(qos, "mapping", name, ref)
        base = base if name == DEFAULT_PROFILE else _PLAIN
        if body is None:
            return base.trust, dict(base.dscp_to_tc), dict(base.pcp_to_tc), DEFAULT_PORT_DEFAULT_SP
        path = f"qos.mapping.{name}"
        trust = body.get("trust", base.trust)
        if trust not in TRUSTS:
            raise self._err(_join(path, "trust"), f"one of {', '.join(TRUSTS)}, got {trust!r}")
        dscp = dict(base.dscp_to_tc)
        for d, f in self._collection(body.get("dscp"), _join(path, "dscp"), N_DSCP - 1, "DSCP").items():
            dscp[d] = self._sp(f, _join(path, f"dscp.{d}"))
        pcp = dict(base.pcp_to_tc)
        for p, f in self._collection(body.get("pcp"), _join(path, "pcp"), N_PRIORITIES - 1, "PCP").items():
            pcp[p] = self._sp(f, _join(path, f"pcp.{p}"))
        raw_default = body.get("port-default-sp")
        default_sp = (
            DEFAULT_PORT_DEFAULT_SP
            if raw_default is None
            else self._uint(raw_default, _join(path, "port-default-sp"), "switch priority", N_PRIORITIES - 1)
        )
        return trust, dict(sorted(dscp.items())), dict(sorted(pcp.items())), default_sp

    def _sp(self, fields: dict[str, Any], path: str) -> int:
        raw = fields.get("switch-priority")
        if raw is None:
            raise self._err(path, "a 'switch-priority' field")
        return self._uint(raw, _join(path, "switch-priority"), "switch priority", N_PRIORITIES - 1)

    def _egress_queue_mapping(self, qos: dict[str, Any], base: RoceDefaults) -> dict[int, int]:
        out = dict(base.tc_to_queue)
        profiles = self._obj(qos.get("egress-queue-mapping"), "qos.egress-queue-mapping")
        for name in profiles:
            if name != DEFAULT_PROFILE:
                raise self._err(
                    f"qos.egress-queue-mapping.{name}", f"only the {DEFAULT_PROFILE} profile (NVUE has no other)"
                )
        body = self._obj(profiles.get(DEFAULT_PROFILE), f"qos.egress-queue-mapping.{DEFAULT_PROFILE}")
        path = f"qos.egress-queue-mapping.{DEFAULT_PROFILE}.switch-priority"
        for sp, f in self._collection(body.get("switch-priority"), path, N_PRIORITIES - 1, "switch priority").items():
            raw = f.get("traffic-class")
            if raw is None:
                raise self._err(_join(path, str(sp)), "a 'traffic-class' field")
            out[sp] = self._uint(raw, _join(path, f"{sp}.traffic-class"), "traffic class", N_TRAFFIC_CLASSES - 1)
        return dict(sorted(out.items()))

    def _pfc(self, qos: dict[str, Any], name: str, base: RoceDefaults, ref: str) -> _Pfc:
        body = self._profile(qos, "pfc", name, ref)
        absent = base.pfc if name == DEFAULT_PROFILE else _PFC_NONE
        if body is None:
            return absent
        silent = absent if absent != _PFC_NONE else _PFC_SILENT
        path = f"qos.pfc.{name}"
        sps = body.get("switch-priority")
        priorities = (
            silent.priorities
            if "switch-priority" not in body
            else frozenset(self._collection(sps, _join(path, "switch-priority"), N_PRIORITIES - 1, "switch priority"))
        )
        rx = silent.rx if body.get("rx") is None else self._flag(body["rx"], _join(path, "rx"))
        tx = silent.tx if body.get("tx") is None else self._flag(body["tx"], _join(path, "tx"))
        cable = body.get("cable-length")
        cable_m = (
            silent.cable_m
            if cable is None
            else self._uint(cable, _join(path, "cable-length"), "cable length in metres")
        )
        return _Pfc(priorities, rx, tx, cable_m)

    def _ecn(self, qos: dict[str, Any], name: str, base: RoceDefaults, ref: str) -> dict[int, NvueEcn]:
        body = self._profile(qos, "congestion-control", name, ref)
        absent = base.ecn if name == DEFAULT_PROFILE else {}
        if body is None or "traffic-class" not in body:
            return dict(absent)
        path = f"qos.congestion-control.{name}.traffic-class"
        out: dict[int, NvueEcn] = {}
        for tc, f in self._collection(body["traffic-class"], path, N_TRAFFIC_CLASSES - 1, "traffic class").items():
            p = _join(path, str(tc))
            d = DEFAULT_ECN_FIELDS
            out[tc] = NvueEcn(
                enabled=d.enabled if f.get("ecn") is None else self._flag(f["ecn"], _join(p, "ecn")),
                min_bytes=d.min_bytes
                if f.get("min-threshold") is None
                else self._uint(f["min-threshold"], _join(p, "min-threshold"), "bytes"),
                max_bytes=d.max_bytes
                if f.get("max-threshold") is None
                else self._uint(f["max-threshold"], _join(p, "max-threshold"), "bytes"),
                probability=d.probability
                if f.get("probability") is None
                else self._uint(f["probability"], _join(p, "probability"), "percent", 100),
                red_enabled=d.red_enabled if f.get("red") is None else self._flag(f["red"], _join(p, "red")),
            )
        return out

    def _schedulers(self, qos: dict[str, Any], name: str, base: RoceDefaults, ref: str) -> dict[int, NvueScheduler]:
        body = self._profile(qos, "egress-scheduler", name, ref)
        absent = base.schedulers if name == DEFAULT_PROFILE else {}
        if body is None or "traffic-class" not in body:
            return dict(absent)
        path = f"qos.egress-scheduler.{name}.traffic-class"
        out: dict[int, NvueScheduler] = {}
        for tc, f in self._collection(body["traffic-class"], path, N_TRAFFIC_CLASSES - 1, "traffic class").items():
            p = _join(path, str(tc))
            mode = f.get("mode", "dwrr")
            if mode not in SCHEDULER_MODES:
                raise self._err(_join(p, "mode"), f"dwrr or strict, got {mode!r}")
            bw = f.get("bw-percent")
            out[tc] = NvueScheduler(
                mode, None if bw is None else self._uint(bw, _join(p, "bw-percent"), "percent", 100)
            )
        return out

    # -- interfaces -----------------------------------------------------------------------------------

    def _interfaces(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """name -> (the key it came from, merged body) for swp ports."""
        merged: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, value in self._obj(self.body.get("interface"), "interface").items():
            path = f"interface.{key}"
            body = self._obj(value, path)
            try:
                names = expand_interfaces(key)
            except ValueError as exc:
                raise self._err(path, f"an interface name, list or range ({exc})") from None
            for name in names:
                old = merged.get(name)
                if old is None:
                    merged[name] = (path, _copy(body))
                else:
                    _merge(old[1], body)
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        for name in sorted(merged, key=natural_key):
            path, body = merged[name]
            kind = body.get("type")
            if (isinstance(kind, str) and kind in _INCLUDED_TYPES) or (kind is None and _SWP.match(name)):
                out[name] = (path, body)
        return out

    def _speed(self, value: Any, path: str) -> int | None:
        if value is None or value == "auto":
            return None
        match = _SPEED.fullmatch(str(value).strip()) if isinstance(value, str) else None
        if match is None:
            raise self._err(path, f"a link speed such as '400G' or 'auto', got {value!r}")
        return int(match.group(1)) * _SPEED_UNITS[match.group(2)]

    def run(self, header: dict[str, Any]) -> NvueConfig:
        qos = self._obj(self.body.get("qos"), "qos")
        roce = self._obj(qos.get("roce"), "qos.roce") if "roce" in qos else None
        roce_mode: str | None = None
        if roce is not None:
            enabled = True
            if roce.get("enable") is not None:
                enabled = self._flag(roce["enable"], "qos.roce.enable")
            elif roce.get("state") is not None:
                enabled = self._flag(roce["state"], "qos.roce.state")
            if enabled:
                roce_mode = roce.get("mode", DEFAULT_ROCE_MODE)
                if not isinstance(roce_mode, str) or roce_mode not in ROCE_DEFAULTS:
                    raise self._err("qos.roce.mode", f"one of {', '.join(ROCE_MODES)}, got {roce_mode!r}")
        base = _PLAIN if roce_mode is None else ROCE_DEFAULTS[roce_mode]

        wd = self._obj(qos.get("pfc-watchdog"), "qos.pfc-watchdog")
        poll = wd.get("polling-interval")
        robust = wd.get("robustness")
        tc_to_queue = self._egress_queue_mapping(qos, base)

        interfaces: dict[str, NvueInterfaceQos] = {}
        for name, (path, body) in self._interfaces().items():
            iq = self._obj(body.get("qos"), _join(path, "qos"))
            link = self._obj(body.get("link"), _join(path, "link"))
            profiles = {}
            for kind in ("mapping", "pfc", "congestion-control", "egress-scheduler"):
                raw = self._get(iq, _join(path, "qos"), kind, "profile")
                if raw is not None and not isinstance(raw, str):
                    raise self._err(_join(path, f"qos.{kind}.profile"), f"a profile name, got {raw!r}")
                profiles[kind] = raw or DEFAULT_PROFILE
            trust, dscp, pcp, default_sp = self._mapping(
                qos, profiles["mapping"], base, _join(path, "qos.mapping.profile")
            )
            pfc = self._pfc(qos, profiles["pfc"], base, _join(path, "qos.pfc.profile"))
            pfcwd = False
            if "pfc-watchdog" in iq:
                wd_obj = self._obj(iq["pfc-watchdog"], _join(path, "qos.pfc-watchdog"))
                state = wd_obj.get("state", wd_obj.get("enable"))
                pfcwd = True if state is None else self._flag(state, _join(path, "qos.pfc-watchdog.state"))
            mtu = link.get("mtu")
            interfaces[name] = NvueInterfaceQos(
                interface=name,
                mtu=DEFAULT_MTU if mtu is None else self._uint(mtu, _join(path, "link.mtu"), "MTU in bytes"),
                speed_mbps=self._speed(link.get("speed"), _join(path, "link.speed")),
                trust=trust,
                dscp_to_tc=dscp,
                pcp_to_tc=pcp,
                port_default_sp=default_sp,
                tc_to_queue=dict(tc_to_queue),
                pfc_enabled=pfc.priorities,
                pfc_rx=pfc.rx,
                pfc_tx=pfc.tx,
                pfc_cable_length_m=pfc.cable_m,
                ecn=self._ecn(qos, profiles["congestion-control"], base, _join(path, "qos.congestion-control.profile")),
                schedulers=self._schedulers(
                    qos, profiles["egress-scheduler"], base, _join(path, "qos.egress-scheduler.profile")
                ),
                pfcwd=pfcwd,
                mapping_profile=profiles["mapping"],
                pfc_profile=profiles["pfc"],
                congestion_control_profile=profiles["congestion-control"],
                egress_scheduler_profile=profiles["egress-scheduler"],
            )
        hostname = self._get(self.body, "", "system", "hostname")
        version = header.get("version")
        return NvueConfig(
            version=None if version is None else str(version),
            hostname=None if hostname is None else str(hostname),
            roce_enabled=roce_mode is not None,
            roce_mode=roce_mode,
            pfcwd_polling_interval_ms=DEFAULT_PFCWD_POLLING_INTERVAL_MS
            if poll is None
            else self._uint(poll, "qos.pfc-watchdog.polling-interval", "milliseconds"),
            pfcwd_robustness=DEFAULT_PFCWD_ROBUSTNESS
            if robust is None
            else self._uint(robust, "qos.pfc-watchdog.robustness", "polls"),
            interfaces=interfaces,
        )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a number"


# --- configuration: rendering ----------------------------------------------------------------------

RENDER_HEADER = {"nvue-api-version": "nvue_v1", "rev-id": 1.0}


def render(config: NvueConfig) -> str:
    """``nv config show -o yaml`` that :func:`parse` reads back to ``config``.

    Every profile an interface names is written out in full (maps as the entries that differ from the
    default :func:`parse` would start from), interfaces with equal settings share a range key
    (``swp1-32``). Raises :class:`~unifab.errors.UsageError` when ``config`` cannot be expressed in
    NVUE: two interfaces naming one profile with different contents, different ``tc_to_queue`` maps
    (NVUE has only ``egress-queue-mapping default-global``), or a RoCE mode NVUE does not have.
    """
    if config.roce_enabled and config.roce_mode not in ROCE_DEFAULTS:
        raise UsageError(f"RoCE mode {config.roce_mode!r} is not one of {', '.join(ROCE_MODES)}")
    base = ROCE_DEFAULTS[config.roce_mode] if config.roce_enabled and config.roce_mode else _PLAIN
    qos: dict[str, Any] = {}
    if config.roce_enabled:
        qos["roce"] = {"enable": True, "mode": config.roce_mode}

    mapping: dict[str, tuple[str, dict[int, int], dict[int, int], int]] = {}
    pfc: dict[str, _Pfc] = {}
    ecn: dict[str, dict[int, NvueEcn]] = {}
    sched: dict[str, dict[int, NvueScheduler]] = {}
    queue_maps = {tuple(sorted(i.tc_to_queue.items())) for i in config.interfaces.values()}
    if len(queue_maps) > 1:
        raise UsageError("interfaces differ in tc_to_queue; NVUE has only egress-queue-mapping default-global")
    for i in config.interfaces.values():
        _claim(mapping, i.mapping_profile, (i.trust, i.dscp_to_tc, i.pcp_to_tc, i.port_default_sp), "mapping")
        _claim(pfc, i.pfc_profile, _Pfc(i.pfc_enabled, i.pfc_rx, i.pfc_tx, i.pfc_cable_length_m), "pfc")
        _claim(ecn, i.congestion_control_profile, i.ecn, "congestion-control")
        _claim(sched, i.egress_scheduler_profile, i.schedulers, "egress-scheduler")

    if mapping:
        qos["mapping"] = {
            name: _render_mapping(value, base if name == DEFAULT_PROFILE else _PLAIN) for name, value in mapping.items()
        }
    if queue_maps:
        diff = {sp: tc for sp, tc in next(iter(queue_maps)) if base.tc_to_queue.get(sp) != tc}
        if diff:
            qos["egress-queue-mapping"] = {
                DEFAULT_PROFILE: {"switch-priority": {str(sp): {"traffic-class": tc} for sp, tc in diff.items()}}
            }
    pfc_out = {name: _render_pfc(value) for name, value in pfc.items() if value != _PFC_NONE}
    for name, value in pfc.items():
        if value == _PFC_NONE and name != DEFAULT_PROFILE:
            raise UsageError(f"pfc profile {name!r} has no PFC settings; use {DEFAULT_PROFILE}")
        if value == _PFC_NONE and base.pfc != _PFC_NONE:
            raise UsageError(f"RoCE mode {config.roce_mode} configures PFC; an interface without PFC cannot be written")
    if pfc_out:
        qos["pfc"] = pfc_out
    if ecn:
        qos["congestion-control"] = {
            name: {"traffic-class": {str(tc): _render_ecn(e) for tc, e in value.items()}} for name, value in ecn.items()
        }
    if sched:
        qos["egress-scheduler"] = {
            name: {"traffic-class": {str(tc): _render_sched(s) for tc, s in value.items()}}
            for name, value in sched.items()
        }
    wd: dict[str, Any] = {}
    if config.pfcwd_polling_interval_ms != DEFAULT_PFCWD_POLLING_INTERVAL_MS:
        wd["polling-interval"] = config.pfcwd_polling_interval_ms
    if config.pfcwd_robustness != DEFAULT_PFCWD_ROBUSTNESS:
        wd["robustness"] = config.pfcwd_robustness
    if wd:
        qos["pfc-watchdog"] = wd

    body: dict[str, Any] = {}
    interfaces = _render_interfaces(config.interfaces.values())
    if interfaces:
        body["interface"] = interfaces
    if qos:
        body["qos"] = qos
    if config.hostname is not None:
        body["system"] = {"hostname": config.hostname}
    header: dict[str, Any] = dict(RENDER_HEADER)
    if config.version is not None:
        header["version"] = config.version
    lines = ["- header:"]
    _emit(header, 4, lines)
    lines.append("- set:" if body else "- set: {}")
    _emit(body, 4, lines)
    return "\n".join(lines) + "\n"


def _claim(seen: dict[str, Any], name: str, value: Any, kind: str) -> None:
    if name in seen and seen[name] != value:
        raise UsageError(f"interfaces name {kind} profile {name!r} with different settings")
    seen[name] = value


def _render_mapping(value: tuple[str, dict[int, int], dict[int, int], int], base: RoceDefaults) -> dict[str, Any]:
    trust, dscp, pcp, default_sp = value
    if len(dscp) != N_DSCP or len(pcp) != N_PRIORITIES:
        raise UsageError("dscp_to_tc must map all 64 DSCP values and pcp_to_tc all 8 PCP values")
    out: dict[str, Any] = {"trust": trust}
    dscp_diff = {str(d): {"switch-priority": sp} for d, sp in dscp.items() if base.dscp_to_tc.get(d) != sp}
    pcp_diff = {str(p): {"switch-priority": sp} for p, sp in pcp.items() if base.pcp_to_tc.get(p) != sp}
    if dscp_diff:
        out["dscp"] = dscp_diff
    if pcp_diff:
        out["pcp"] = pcp_diff
    if default_sp != DEFAULT_PORT_DEFAULT_SP:
        out["port-default-sp"] = default_sp
    return out


def _render_pfc(value: _Pfc) -> dict[str, Any]:
    out: dict[str, Any] = {"switch-priority": {str(sp): {} for sp in sorted(value.priorities)}}
    out["rx"] = "enable" if value.rx else "disable"
    out["tx"] = "enable" if value.tx else "disable"
    if value.cable_m is None:
        raise UsageError("a PFC profile needs a cable length")
    out["cable-length"] = value.cable_m
    return out


def _render_ecn(e: NvueEcn) -> dict[str, Any]:
    out: dict[str, Any] = {"ecn": "enable" if e.enabled else "disable"}
    if e.red_enabled is not None:
        out["red"] = "enable" if e.red_enabled else "disable"
    for key, value in (("min-threshold", e.min_bytes), ("max-threshold", e.max_bytes), ("probability", e.probability)):
        if value is None:
            raise UsageError(f"ECN {key} is needed to write a congestion-control profile")
        out[key] = value
    return out


def _render_sched(s: NvueScheduler) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": s.mode}
    if s.bw_percent is not None:
        out["bw-percent"] = s.bw_percent
    return out


def _speed_text(mbps: int | None) -> str:
    if mbps is None:
        return "auto"
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


def _render_interfaces(ifaces: Iterable[NvueInterfaceQos]) -> dict[str, Any]:
    bodies: list[tuple[str, dict[str, Any]]] = []
    for i in sorted(ifaces, key=lambda x: natural_key(x.interface)):
        body: dict[str, Any] = {"link": {"mtu": i.mtu, "speed": _speed_text(i.speed_mbps)}}
        qos: dict[str, Any] = {}
        for kind, name in (
            ("mapping", i.mapping_profile),
            ("pfc", i.pfc_profile),
            ("congestion-control", i.congestion_control_profile),
            ("egress-scheduler", i.egress_scheduler_profile),
        ):
            if name != DEFAULT_PROFILE:
                qos[kind] = {"profile": name}
        if i.pfcwd:
            qos["pfc-watchdog"] = {"state": "enabled"}
        if qos:
            body["qos"] = qos
        body["type"] = "swp"
        bodies.append((i.interface, body))
    out: dict[str, Any] = {}
    group: list[tuple[str, int]] = []  # consecutive (prefix, number) sharing one body
    group_body: dict[str, Any] = {}

    def flush() -> None:
        if group:
            prefix, first = group[0]
            last = group[-1][1]
            out[f"{prefix}{first}" if first == last else f"{prefix}{first}-{last}"] = group_body

    for name, body in bodies:
        match = _NUMBERED.fullmatch(name)
        if match is None:
            flush()
            group = []
            out[name] = body
            continue
        prefix, number = match.group(1), int(match.group(2))
        if group and group_body == body and group[-1] == (prefix, number - 1):
            group.append((prefix, number))
            continue
        flush()
        group, group_body = [(prefix, number)], body
    flush()
    return out


_NUMBERED = re.compile(r"([^,\-]*[^,\-\d])(0|[1-9]\d*)")  # swp12 -> ("swp", 12); swp1s0 -> ("swp1s", 0)
_PLAIN_SCALAR = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if _PLAIN_SCALAR.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return "'" + text.replace("'", "''") + "'"


def _key(key: str) -> str:
    if _PLAIN_SCALAR.fullmatch(key) and key.lower() not in _YAML_WORDS:
        return key
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.,/-]*", key) and not key.isdigit() and key.lower() not in _YAML_WORDS:
        return key  # swp1-32, swp1,swp3
    return "'" + key.replace("'", "''") + "'"


def _emit(obj: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key in sorted(obj):  # NVUE prints keys in sorted order
        value = obj[key]
        if isinstance(value, Mapping):
            if value:
                lines.append(f"{pad}{_key(key)}:")
                _emit(value, indent + 2, lines)
            else:
                lines.append(f"{pad}{_key(key)}: {{}}")
        else:
            lines.append(f"{pad}{_key(key)}: {_scalar(value)}")


# --- show outputs: generic reader ------------------------------------------------------------------

_PROMPT = re.compile(r"\S+@\S+?:\S*\s*[$#]\s")
_TOKEN = re.compile(r"\S+(?: \S+)*")
_RULE = re.compile(r" *-+(?: +-+)* *")
_TITLE_RULE = re.compile(r" *=+ *")
_SIZE = re.compile(r"(\d+(?:\.\d+)?) ?(B|Bytes|KB|MB|GB|TB)")
_SIZE_UNITS = {"B": 1, "Bytes": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


@dataclass(slots=True)
class _KvRow:
    path: tuple[str, ...]
    values: list[str]  # operational, applied (description dropped)
    line: int


@dataclass(slots=True)
class _Table:
    title: str
    line: int
    columns: list[str]
    rows: list[tuple[int, list[str]]]


@dataclass(slots=True)
class _Show:
    rows: list[_KvRow]
    tables: dict[str, _Table]

    def value(self, *path: str) -> tuple[str | None, int]:
        for row in self.rows:
            if row.path == path:
                for v in row.values:
                    if v:
                        return v, row.line
                return None, row.line
        return None, 0


def _spans(rule: str) -> list[int]:
    return [m.start() for m in re.finditer(r"-+", rule)]


def _cells(text: str, starts: list[int]) -> list[str]:
    """Tokens (runs separated by two or more blanks) placed in the columns the rule defines."""
    cells = [""] * len(starts)
    last = -1
    for m in _TOKEN.finditer(text):
        col = 0
        for i, start in enumerate(starts):
            if m.start() >= start:
                col = i
        col = max(col, last + 1)
        if col >= len(starts):
            cells[-1] = (cells[-1] + "  " + m.group()).strip()
            continue
        cells[col] = m.group()
        last = col
    return cells


def _read_show(text: str | bytes, source: str) -> _Show:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    n = len(lines)
    i = 0
    while i < n and not lines[i].strip():
        i += 1
    if i < n and _PROMPT.match(lines[i]):
        i += 1
    for j in range(i, n):
        if _PROMPT.match(lines[j]):
            raise ParseError(source, "the output of one command (a second shell prompt starts here)", line=j + 1)
    while i < n and not lines[i].strip():
        i += 1
    if i >= n:
        raise ParseError(source, "nv show output, got empty input")
    if i + 1 >= n or not _RULE.fullmatch(lines[i + 1]) or "-" not in lines[i + 1]:
        raise ParseError(source, "an nv show header ('operational  applied') over a dashed rule", line=i + 1)
    starts = _spans(lines[i + 1])
    if len(starts) < 2:
        raise ParseError(source, "a dashed rule with a key column and a value column", line=i + 2)
    i += 2
    rows: list[_KvRow] = []
    stack: list[tuple[int, str]] = []  # (indent, key)
    tables: dict[str, _Table] = {}
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]:
            table, i = _read_table(lines, i, source)
            tables[table.title] = table
            continue
        if tables:
            raise ParseError(source, "a table title over a '=====' rule, or the end of the output", line=i + 1)
        cells = _cells(line, starts)
        indent = len(line) - len(line.lstrip(" "))
        if not cells[0] or indent >= starts[1]:
            if not rows:
                raise ParseError(source, "a key in the first column", line=i + 1)
            rows[-1].values = [a or b for a, b in zip(rows[-1].values, cells[1:3], strict=False)]
            i += 1
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, cells[0]))
        rows.append(_KvRow(tuple(k for _, k in stack), [*cells[1:3], "", ""][:2], i + 1))
        i += 1
    return _Show(rows, tables)


def _read_table(lines: list[str], i: int, source: str) -> tuple[_Table, int]:
    title, title_line = lines[i].strip(), i + 1
    n = len(lines)
    i += 2
    while i < n and not lines[i].strip():
        i += 1
    if i + 1 < n and _RULE.fullmatch(lines[i + 1]) and "-" in lines[i + 1]:
        starts = _spans(lines[i + 1])
        header = _cells(lines[i], starts)
        i += 2
        rows: list[tuple[int, list[str]]] = []
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if not line.startswith(" ") or (i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]):
                break
            rows.append((i + 1, _cells(line, starts)))
            i += 1
        return _Table(title, title_line, header, rows), i
    # a message block ("No Data") instead of a table
    text_rows: list[tuple[int, list[str]]] = []
    while i < n and lines[i].strip():
        if i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]:
            break
        text_rows.append((i + 1, [lines[i].strip()]))
        i += 1
    if not text_rows:
        raise ParseError(source, f"a header, a dashed rule and rows (or a message) under {title!r}", line=title_line)
    return _Table(title, title_line, [], text_rows), i


def size_bytes(text: str) -> int | None:
    """``"146.48 KB"`` -> 149996, ``"25000 B"`` -> 25000, ``"0 Bytes"`` -> 0 (binary units, rounded);
    ``None`` when ``text`` is not a size."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        return None
    try:
        value = Decimal(match.group(1)) * _SIZE_UNITS[match.group(2)]
    except InvalidOperation:
        return None
    return int(value.to_integral_value())


class _ShowReader:
    def __init__(self, show: _Show, source: str) -> None:
        self.show = show
        self.source = source

    def err(self, line: int, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=line or None)

    def text(self, *path: str) -> str | None:
        return self.show.value(*path)[0]

    def number(self, *path: str) -> int | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_int(value, line, "/".join(path))

    def to_int(self, value: str, line: int, what: str) -> int:
        text = value.strip()
        if not (text.isdigit() and text.isascii()):
            raise self.err(line, f"{what} as a number, got {value!r}")
        return int(text)

    def size(self, *path: str) -> int | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_bytes(value, line, "/".join(path))

    def to_bytes(self, value: str, line: int, what: str) -> int:
        text = value.strip()
        if text.isdigit() and text.isascii():
            return int(text)
        size = size_bytes(text)
        if size is None:
            raise self.err(line, f"{what} as a size such as '146.48 KB' or '25000 B', got {value!r}")
        return size

    def flag(self, *path: str) -> bool | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_flag(value, line, "/".join(path))

    def to_flag(self, value: str, line: int, what: str) -> bool:
        low = value.strip().lower()
        if low in _ON:
            return True
        if low in _OFF:
            return False
        raise self.err(line, f"{what} as enabled/disabled, got {value!r}")

    def numbers(self, value: str, line: int, what: str, hi: int) -> list[int]:
        text = value.strip()
        if text in ("", "-"):
            return []
        out: list[int] = []
        for item in text.split(","):
            lo_s, dash, hi_s = item.strip().partition("-")
            lo_n = self.to_int(lo_s, line, what)
            hi_n = self.to_int(hi_s, line, what) if dash else lo_n
            if hi_n < lo_n or hi_n > hi:
                raise self.err(line, f"{what} in 0..{hi}, got {item!r}")
            out.extend(range(lo_n, hi_n + 1))
        return out

    def table(self, *titles: str) -> _Table | None:
        for title in titles:
            table = self.show.tables.get(title)
            if table is not None:
                return table
        return None

    def column(self, table: _Table, *names: str) -> int:
        for name in names:
            if name in table.columns:
                return table.columns.index(name)
        raise self.err(table.line, f"a column {' or '.join(repr(n) for n in names)} in table {table.title!r}")

    def scheduler(self, value: str, line: int) -> NvueScheduler:
        low = value.strip().lower()
        if low.startswith("strict"):
            return NvueScheduler("strict", None)
        match = re.fullmatch(r"dwrr-(\d+)%", low)
        if match is None:
            raise self.err(line, f"a scheduler weight such as 'DWRR-50%' or 'strict-priority', got {value!r}")
        return NvueScheduler("dwrr", int(match.group(1)))


# --- show outputs: commands ------------------------------------------------------------------------


def parse_show_roce(text: str | bytes, source: str = "<input>") -> NvueRoceStatus:
    """``nv show qos roce`` or ``nv show interface <if> qos roce status``."""
    r = _ShowReader(_read_show(text, source), source)
    enabled = r.flag("enable")
    if enabled is None:
        enabled = r.flag("state")
    pfc_value, pfc_line = r.show.value("pfc", "pfc-priority")
    tc_value, tc_line = r.show.value("congestion-control", "enabled-tc")
    ecn_tcs = [] if tc_value is None else r.numbers(tc_value, tc_line, "enabled-tc", N_TRAFFIC_CLASSES - 1)
    shared = NvueEcn(
        enabled=True,
        min_bytes=r.size("congestion-control", "min-threshold"),
        max_bytes=r.size("congestion-control", "max-threshold"),
        probability=r.number("congestion-control", "probability"),
        red_enabled=None,
    )
    trust_raw = r.text("trust", "trust-mode")
    dscp_to_tc: dict[int, int] = {}
    pcp_to_tc: dict[int, int] = {}
    tc_to_queue: dict[int, int] = {}
    schedulers: dict[int, NvueScheduler] = {}
    labelled: dict[str, dict[str, Any]] = {}

    mapping = r.table("RoCE PCP/DSCP->SP mapping configurations")
    if mapping is not None:
        c_pcp, c_dscp = r.column(mapping, "pcp"), r.column(mapping, "dscp")
        c_sp = r.column(mapping, "switch-prio")
        for line, cells in mapping.rows:
            if not cells[c_sp].strip():
                raise r.err(line, "a switch-prio value")
            sp = r.to_int(cells[c_sp], line, "switch-prio")
            pcps = r.numbers(cells[c_pcp], line, "pcp", N_PRIORITIES - 1)
            dscps = r.numbers(cells[c_dscp], line, "dscp", N_DSCP - 1)
            for p in pcps:
                pcp_to_tc[p] = sp
            for d in dscps:
                dscp_to_tc[d] = sp
            label = cells[0].strip()
            if label and not label.isdigit():
                entry = labelled.setdefault(label, {})
                entry.update(pcp=pcps[0] if len(pcps) == 1 else None, dscp=dscps[0] if len(dscps) == 1 else None, sp=sp)
    ets = r.table("RoCE SP->TC mapping and ETS configurations")
    if ets is not None:
        c_sp, c_tc = r.column(ets, "switch-prio"), r.column(ets, "traffic-class")
        c_w = r.column(ets, "scheduler-weight")
        for line, cells in ets.rows:
            sp = r.to_int(cells[c_sp], line, "switch-prio")
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            tc_to_queue[sp] = tc
            sched = None
            if cells[c_w].strip():
                sched = r.scheduler(cells[c_w], line)
                if schedulers.setdefault(tc, sched) != sched:
                    raise r.err(line, f"one scheduler per traffic class, TC{tc} has two")
            label = cells[0].strip()
            if label and not label.isdigit():
                labelled.setdefault(label, {}).update(sp=sp, tc=tc, sched=sched)
    classes = {
        name: NvueRoceClass(
            name=name,
            pcp=v.get("pcp"),
            dscp=v.get("dscp"),
            switch_priority=v.get("sp"),
            traffic_class=v.get("tc"),
            scheduler=v.get("sched"),
        )
        for name, v in sorted(labelled.items())
    }
    exceptions: tuple[str, ...] = ()
    exc_table = r.table("Exception List")
    if exc_table is not None:
        exceptions = tuple(
            "  ".join(c for c in cells if c) for _, cells in exc_table.rows if cells != ["No Data"] and any(cells)
        )
    features: dict[str, str] = {}
    feat = r.table("Extended Features")
    if feat is not None:
        c_f, c_s = r.column(feat, "Feature"), r.column(feat, "Status")
        features = {cells[c_f]: cells[c_s] for _, cells in feat.rows}
    return NvueRoceStatus(
        enabled=enabled,
        mode=r.text("mode"),
        trust=None if trust_raw is None else TRUST_SHOW_NAMES.get(trust_raw.replace(" ", ""), trust_raw),
        pfc_enabled=frozenset(
            () if pfc_value is None else r.numbers(pfc_value, pfc_line, "pfc-priority", N_PRIORITIES - 1)
        ),
        pfc_rx_enabled=r.flag("pfc", "rx-enabled"),
        pfc_tx_enabled=r.flag("pfc", "tx-enabled"),
        pfc_cable_length_m=r.number("pfc", "cable-length"),
        congestion_mode=r.text("congestion-control", "congestion-mode"),
        ecn=dict.fromkeys(sorted(ecn_tcs), shared),
        lldp_app_priority=r.number("lldp-app-tlv", "priority"),
        lldp_app_protocol_id=r.number("lldp-app-tlv", "protocol-id"),
        lldp_app_selector=r.text("lldp-app-tlv", "selector"),
        dscp_to_tc=dict(sorted(dscp_to_tc.items())),
        pcp_to_tc=dict(sorted(pcp_to_tc.items())),
        tc_to_queue=dict(sorted(tc_to_queue.items())),
        schedulers=dict(sorted(schedulers.items())),
        classes=classes,
        pools=_pools(r),
        exceptions=exceptions,
        features=features,
    )


def _pools(r: _ShowReader) -> tuple[NvueRocePool, ...]:
    table = r.table("RoCE pool config", "RoCE Pool Status")
    if table is None:
        return ()
    cols = table.columns
    c_name, c_mode, c_size = r.column(table, "name"), r.column(table, "mode"), r.column(table, "size")
    c_sps, c_tcs = r.column(table, "switch-priorities"), r.column(table, "traffic-class")
    c_id = cols.index("pool-id") if "pool-id" in cols else None
    c_cur = cols.index("current-usage") if "current-usage" in cols else None
    c_max = cols.index("max-usage") if "max-usage" in cols else None
    pools: list[NvueRocePool] = []
    for line, cells in table.rows:
        size = cells[c_size].strip()
        percent = re.fullmatch(r"(\d+)%", size)
        pools.append(
            NvueRocePool(
                name=cells[c_name],
                mode=cells[c_mode].lower(),
                pool_id=None if c_id is None or not cells[c_id] else r.to_int(cells[c_id], line, "pool-id"),
                switch_priorities=frozenset(r.numbers(cells[c_sps], line, "switch-priorities", N_PRIORITIES - 1)),
                traffic_classes=frozenset(r.numbers(cells[c_tcs], line, "traffic-class", N_TRAFFIC_CLASSES - 1)),
                size_bytes=None if percent or size in ("inf", "") else r.to_bytes(size, line, "size"),
                size_percent=int(percent.group(1)) if percent else None,
                size_infinite=size == "inf",
                current_usage_bytes=None
                if c_cur is None or not cells[c_cur]
                else r.to_bytes(cells[c_cur], line, "current-usage"),
                max_usage_bytes=None
                if c_max is None or not cells[c_max]
                else r.to_bytes(cells[c_max], line, "max-usage"),
            )
        )
    return tuple(pools)


def parse_show_pfc(text: str | bytes, source: str = "<input>") -> NvuePfcProfileShow:
    """``nv show qos pfc <profile>``."""
    r = _ShowReader(_read_show(text, source), source)
    sps: set[int] = set()
    for row in r.show.rows:
        if row.path == ("[switch-priority]",):
            value = next((v for v in row.values if v), "")
            sps.update(r.numbers(value, row.line, "switch-priority", N_PRIORITIES - 1))
    return NvuePfcProfileShow(
        switch_priorities=frozenset(sps),
        rx_enabled=r.flag("rx"),
        tx_enabled=r.flag("tx"),
        cable_length_m=r.number("cable-length"),
        port_buffer_bytes=r.size("port-buffer"),
        xoff_threshold_bytes=r.size("xoff-threshold"),
        xon_threshold_bytes=r.size("xon-threshold"),
    )


def parse_show_pfc_watchdog(text: str | bytes, source: str = "<input>") -> NvuePfcWatchdogShow:
    """``nv show interface <if> qos pfc-watchdog``."""
    r = _ShowReader(_read_show(text, source), source)
    classes: dict[int, NvuePfcWdClass] = {}
    table = r.table("PFC WD Status")
    if table is not None:
        c_tc, c_st = r.column(table, "traffic-class"), r.column(table, "status")
        c_dl = r.column(table, "deadlock-count")
        for line, cells in table.rows:
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            if not cells[c_st]:
                raise r.err(line, "a status (OK or DEADLOCK)")
            classes[tc] = NvuePfcWdClass(cells[c_st], r.to_int(cells[c_dl], line, "deadlock-count"))
    return NvuePfcWatchdogShow(enabled=r.flag("state"), traffic_classes=dict(sorted(classes.items())))


def parse_show_congestion_control(text: str | bytes, source: str = "<input>") -> NvueCongestionControlShow:
    """``nv show qos congestion-control <profile>``."""
    r = _ShowReader(_read_show(text, source), source)
    out: dict[int, NvueEcn] = {}
    table = r.table("ECN Configurations")
    if table is not None:
        c_tc, c_ecn, c_red = r.column(table, "traffic-class"), r.column(table, "ECN"), r.column(table, "RED")
        c_min, c_max = r.column(table, "Min Th"), r.column(table, "Max Th")
        c_p = r.column(table, "Probability")
        for line, cells in table.rows:
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            out[tc] = NvueEcn(
                enabled=r.to_flag(cells[c_ecn], line, "ECN"),
                min_bytes=r.to_bytes(cells[c_min], line, "Min Th"),
                max_bytes=r.to_bytes(cells[c_max], line, "Max Th"),
                probability=r.to_int(cells[c_p], line, "Probability"),
                red_enabled=r.to_flag(cells[c_red], line, "RED"),
            )
    return NvueCongestionControlShow(ecn=dict(sorted(out.items())))


def parse_show_roce_counters(text: str | bytes, source: str = "<input>") -> NvueRoceCounters:
    """``nv show interface <if> qos roce counters``: every leaf as ``path -> int`` (sizes in bytes)."""
    r = _ShowReader(_read_show(text, source), source)
    paths = {row.path[:-1] for row in r.show.rows}
    out: dict[str, int] = {}
    for row in r.show.rows:
        value = next((v for v in row.values if v), None)
        if value is None:
            if row.path in paths:
                continue  # a group heading
            raise r.err(row.line, f"a value for {'.'.join(row.path)}")
        out[".".join(row.path)] = r.to_bytes(value, row.line, ".".join(row.path))
    return NvueRoceCounters(counters=out)
