"""``fabric.yaml``: the fabric's QoS intent, validated, and resolved per device into a :class:`QosProfile`.

The file (documented with an example in ``docs/intent.md``)::

    version: 1
    preset: nvidia-spectrum-x          # optional starting point (unifab.intent_presets.PRESETS)
    qos: {...}                         # the fabric's QoS, over the preset
    overrides:                         # by device group, over the fabric's QoS
      - match: {role: leaf, su: 2}
        qos: {mtu: {switch: 9100}}

Values are layered: preset, then ``qos``, then every matching override. Overrides apply in order of
specificity -- those selecting by ``role`` or ``os`` first, then ``su`` (scalable unit), then ``rail``, then ``name``
(a glob), the most specific selector of an override deciding its rank -- and in file order within a rank;
a later layer wins. Mappings (``roce``, ``mtu``, ``dcqcn``, ``dscp_to_priority``, ...) merge key by key;
lists (``ets``, ``ecn``, ``lossless_priorities``) are replaced whole.

Every problem is reported at once, each naming the file, line, key path, the value and what is allowed
(:class:`IntentError`); nothing here raises anything else on bad input.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from unifab.errors import IntentError, YamlError, compose_yaml, construct_yaml
from unifab.intent_health import HealthSpec
from unifab.intent_presets import PRESETS
from unifab.model import VersionRule
from unifab.profile import EcnQueue, EtsWeight, QosProfile, WatchdogProfile

__all__ = [
    "DEFAULT_CABLE_M",
    "DEFAULT_PROFILE_NAME",
    "SELECTOR_RANK",
    "CableM",
    "ClassSpec",
    "DcqcnName",
    "Device",
    "Dscp",
    "EcnSpec",
    "EtsSpec",
    "FleetGroupSpec",
    "FleetMatchSpec",
    "FleetSpec",
    "HeadroomSpec",
    "Intent",
    "IntentSpec",
    "MatchSpec",
    "MtuSpec",
    "NcclSpec",
    "OverrideSpec",
    "Percent",
    "Prio",
    "QosSpec",
    "WatchdogSpec",
    "load_intent",
    "merge",
    "nccl_settings",
    "parse_intent",
    "resolve",
]

Dscp = Annotated[int, Field(ge=0, le=63)]
Prio = Annotated[int, Field(ge=0, le=7)]
Percent = Annotated[int, Field(ge=0, le=100)]
CableM = Annotated[int, Field(ge=1, le=999)]  # mlx5 ignores cable lengths >= 1000 m (host-nic-roce §5.2)
DcqcnName = Literal[
    "clamp_tgt_rate",
    "clamp_tgt_rate_after_time_inc",
    "dce_tcp_g",
    "dce_tcp_rtt",
    "initial_alpha_value",
    "rate_reduce_monitor_period",
    "rate_to_set_on_first_cnp",
    "rpg_ai_rate",
    "rpg_byte_reset",
    "rpg_gd",
    "rpg_hai_rate",
    "rpg_max_rate",
    "rpg_min_dec_fac",
    "rpg_min_rate",
    "rpg_threshold",
    "rpg_time_reset",
    "min_time_between_cnps",
]

SELECTOR_RANK = {"role": 1, "os": 1, "su": 2, "rail": 3, "name": 4}
DEFAULT_PROFILE_NAME = "ROCE"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ClassSpec(_Spec):
    """A traffic class of the fabric (RoCE data, CNP): its DSCP, 802.1p priority and switch queue/TC."""

    dscp: Dscp | None = None
    priority: Prio | None = None
    queue: Prio | None = None


class EtsSpec(_Spec):
    tc: Prio
    tsa: Literal["ets", "strict"]
    bw_percent: Percent = 0


class EcnSpec(_Spec):
    queue: Prio
    min_bytes: Annotated[int, Field(ge=1, le=1 << 32)]
    max_bytes: Annotated[int, Field(ge=1, le=1 << 32)]
    probability: Annotated[int, Field(ge=1, le=100)] = 100


class MtuSpec(_Spec):
    host: Annotated[int, Field(ge=1280, le=9978)] | None = None
    switch: Annotated[int, Field(ge=1280, le=9216)] | None = None


class WatchdogSpec(_Spec):
    """The PFC watchdog every lossless port runs (there is no 'off': QOS-PFCWD requires one)."""

    detection_ms: Annotated[int, Field(ge=100, le=5000)] | None = None  # SONiC PFC_WD range (switch-qos §1.2)
    restoration_ms: Annotated[int, Field(ge=100, le=60000)] | None = None
    action: Literal["drop", "forward", "alert"] | None = None


class HeadroomSpec(_Spec):
    """Cable lengths the PFC headroom is sized for: by link class, and per link (``device:port``)."""

    cable_m: dict[Literal["host", "fabric"], CableM] | None = None
    per_link: dict[str, CableM] | None = None

    @model_validator(mode="after")
    def _link_keys(self) -> HeadroomSpec:
        for key in self.per_link or {}:
            device, _, port = key.partition(":")
            if not device or not port:
                raise ValueError(f"per_link key {key!r} must be device:port (e.g. leaf01:Ethernet0 or gpu001:eth0)")
        return self


class NcclSpec(_Spec):
    traffic_class: Annotated[int, Field(ge=0, le=255)] | None = None  # NCCL_IB_TC, the full TOS byte
    sl: Prio | None = None  # NCCL_IB_SL (InfiniBand fabrics)
    gid_index: Annotated[int, Field(ge=0, le=255)] | None = None  # when absent, taken from the GIDs


class QosSpec(_Spec):
    """The ``qos`` section; every key optional, the layers below complete it."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")] | None = None
    roce: ClassSpec | None = None
    cnp: ClassSpec | None = None
    lossless_priorities: Annotated[list[Prio], Field(min_length=1, max_length=8)] | None = None
    dscp_to_priority: dict[Dscp, Prio] | None = None
    priority_to_tc: dict[Prio, Prio] | None = None
    ets: Annotated[list[EtsSpec], Field(min_length=1, max_length=8)] | None = None
    ecn: Annotated[list[EcnSpec], Field(max_length=8)] | None = None
    dcqcn: dict[DcqcnName, Annotated[int, Field(ge=0, le=1 << 20)]] | None = None
    mtu: MtuSpec | None = None
    pfc_watchdog: WatchdogSpec | None = None
    headroom: HeadroomSpec | None = None
    nccl: NcclSpec | None = None
    dcbx: Literal["os", "fw"] | None = None  # who owns the NICs' DCB settings (mlnx_qos -d); default "os"
    # the fabric's congestion control; default "dcqcn" (see QosProfile.congestion_control)
    congestion_control: Literal["dcqcn", "spectrum-x", "none"] | None = None


class MatchSpec(_Spec):
    role: str | list[str] | None = None  # host, leaf, spine, ... (any word the inventory uses)
    os: Literal["sonic", "eos", "nvue", "mlx5", "bnxt"] | None = None  # switch OS, or host NIC driver
    su: Annotated[int, Field(ge=1)] | None = None
    rail: Prio | None = None
    name: str | None = None  # shell glob over device names

    @model_validator(mode="after")
    def _some(self) -> MatchSpec:
        if not self.model_fields_set:
            raise ValueError("match needs at least one of role, os, su, rail, name")
        return self


class OverrideSpec(_Spec):
    match: MatchSpec
    qos: QosSpec


VersionPatterns = str | Annotated[list[str], Field(min_length=1, max_length=64)]


def _pattern_list(value: VersionPatterns | None) -> tuple[str, ...] | None:
    return None if value is None else (value,) if isinstance(value, str) else tuple(value)


class FleetMatchSpec(_Spec):
    """Which devices a fleet group selects; each a glob or ``re:<regex>``, all given must match."""

    kind: str | None = None  # host | switch
    role: str | None = None  # host | leaf | spine
    name: str | None = None
    os: str | None = None  # a switch's OS (sonic, eos, nvue); for nic_driver the driver module (mlx5_core)
    platform: str | None = None  # a switch's platform or model
    nic_model: str | None = None  # ConnectX-7, or the part id 4129
    psid: str | None = None  # MT_0000000838
    gpu_model: str | None = None  # "NVIDIA H100 80GB HBM3"

    @field_validator("kind", "role", "name", "os", "platform", "nic_model", "psid", "gpu_model")
    @classmethod
    def _selector(cls, value: str | None) -> str | None:
        from unifab.checks.fleet_versions import selector_problem

        problem = None if value is None else selector_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class FleetGroupSpec(_Spec):
    """One baseline group: the devices it selects and the versions it allows per field."""

    match: FleetMatchSpec = FleetMatchSpec()
    nic_firmware: VersionPatterns | None = None
    nic_driver: VersionPatterns | None = None
    gpu_driver: VersionPatterns | None = None
    cuda: VersionPatterns | None = None
    nccl: VersionPatterns | None = None
    switch_os: VersionPatterns | None = None
    transceiver_part: VersionPatterns | None = None
    transceiver_revision: VersionPatterns | None = None
    transceiver_firmware: VersionPatterns | None = None

    @field_validator(*("nic_firmware", "nic_driver", "gpu_driver", "cuda", "nccl", "switch_os"))
    @classmethod
    def _versions(cls, value: VersionPatterns | None) -> VersionPatterns | None:
        return _checked_patterns(value)

    @field_validator("transceiver_part", "transceiver_revision", "transceiver_firmware")
    @classmethod
    def _optics(cls, value: VersionPatterns | None) -> VersionPatterns | None:
        return _checked_patterns(value)

    @model_validator(mode="after")
    def _some(self) -> FleetGroupSpec:
        if not any(getattr(self, k) is not None for k in FLEET_FIELDS):
            raise ValueError("a fleet group needs at least one of " + ", ".join(FLEET_FIELDS))
        return self


def _checked_patterns(value: VersionPatterns | None) -> VersionPatterns | None:
    from unifab.checks.fleet_versions import pattern_problem

    for pattern in _pattern_list(value) or ():
        problem = pattern_problem(pattern)
        if problem is not None:
            raise ValueError(problem)
    return value


FLEET_FIELDS = (
    "nic_firmware",
    "nic_driver",
    "gpu_driver",
    "cuda",
    "nccl",
    "switch_os",
    "transceiver_part",
    "transceiver_revision",
    "transceiver_firmware",
)


class FleetSpec(_Spec):
    """The ``fleet`` section: the versions each device group may run (docs: fleet baseline)."""

    groups: Annotated[list[FleetGroupSpec], Field(min_length=1, max_length=256)]


class IntentSpec(_Spec):
    version: Literal[1] = 1
    preset: Literal[tuple(PRESETS)] | None = None  # type: ignore[valid-type]
    qos: QosSpec = QosSpec()
    overrides: list[OverrideSpec] = []
    fleet: FleetSpec | None = None
    health: HealthSpec | None = None  # detector thresholds (unifab.intent_health)


@dataclass(frozen=True, slots=True)
class Device:
    """What overrides select on: a device's name, role and, where known, rail and scalable unit."""

    name: str
    role: str  # "host" | "leaf" | "spine" | ...
    rail: int | None = None
    su: int | None = None
    os: str | None = None  # a switch's OS; a host's NIC driver (mlx5, bnxt)

    def matches(self, m: MatchSpec) -> bool:
        roles = [m.role] if isinstance(m.role, str) else m.role
        return (
            (roles is None or self.role in roles)
            and (m.os is None or m.os == self.os)
            and (m.su is None or m.su == self.su)
            and (m.rail is None or m.rail == self.rail)
            and (m.name is None or fnmatch.fnmatchcase(self.name, m.name))
        )


@dataclass(frozen=True, slots=True)
class Intent:
    """A validated intent file: the spec, the fabric-wide settings (preset + ``qos``) and overrides by rank."""

    source: str
    text: str  # the file as written (a preview bundle carries it as its fabric.yaml)
    spec: IntentSpec
    base: dict[str, Any]
    ordered: tuple[tuple[MatchSpec, dict[str, Any]], ...]  # overrides' (match, qos), in application order
    fleet: tuple[VersionRule, ...] = ()  # the fleet baseline's groups, in file order
    has_qos: bool = True  # False: a file with only a fleet: section (no preset, qos or overrides)

    def settings(self, device: Device) -> dict[str, Any]:
        merged = self.base
        for match, qos in self.ordered:
            if device.matches(match):
                merged = merge(merged, qos)
        return merged

    def base_profile(self) -> QosProfile:
        """The fabric-wide profile (preset + ``qos``, no group override): the checks' baseline."""
        return _must(self.base, f"{self.source}: qos")

    def qos_profile(self) -> QosProfile | None:
        """:meth:`base_profile`, or ``None`` for a file that says only what versions the fleet runs."""
        return self.base_profile() if self.has_qos else None

    def cable_m(self, settings: Mapping[str, Any], link_class: str) -> int:
        return int(settings.get("headroom", {}).get("cable_m", {}).get(link_class, DEFAULT_CABLE_M[link_class]))

    def per_link_cable_m(self, settings: Mapping[str, Any]) -> dict[str, int]:
        return dict(settings.get("headroom", {}).get("per_link", {}))


DEFAULT_CABLE_M = {"host": 7, "fabric": 100}  # mlx5 driver default / NVUE default (host-nic-roce §2.9, §4.1)


def resolve(intent: Intent, device: Device) -> QosProfile:
    """The QoS ``device`` must run: preset, fabric ``qos``, then the overrides that select it, in rank order.

    Per-link cable lengths of this device (``device:port`` keys) become the profile's ``port_cable_m``.
    """
    settings = intent.settings(device)
    profile = _must(settings, f"{intent.source}: {device.name}")
    prefix = device.name + ":"
    ports = {k.removeprefix(prefix): v for k, v in intent.per_link_cable_m(settings).items() if k.startswith(prefix)}
    return replace(profile, cable_length_m=intent.cable_m(settings, "host"), port_cable_m=ports)


# --- reading ----------------------------------------------------------------------------------------


def load_intent(path: Path) -> Intent:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IntentError(str(path), [f"{path}: cannot read: {exc}"]) from None
    return parse_intent(text, str(path))


def parse_intent(text: str, source: str = "fabric.yaml") -> Intent:
    try:
        node = compose_yaml(text, source)  # bounded: a recursive alias or an alias bomb is an error here
        raw = None if node is None else construct_yaml(node, source)
    except YamlError as exc:
        where = f"{source}:{exc.line}" if exc.line is not None else source
        raise IntentError(source, [f"{where}: not valid YAML: {exc.problem}"]) from None
    lines = _key_lines(node) if node is not None else {}
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise IntentError(source, [f"{source}:1: expected a mapping with version, preset, qos, overrides"])
    try:
        spec = IntentSpec.model_validate(raw)
    except ValidationError as exc:
        messages = [_message(source, lines, e) for e in exc.errors()]
        raise IntentError(source, sorted(messages, key=lambda m: _line_of(source, m))) from None
    problems: list[str] = []
    base = merge(PRESETS[spec.preset] if spec.preset else {}, _dump(spec.qos))
    only_other_sections = spec.fleet is not None or spec.health is not None
    has_qos = not (only_other_sections and spec.preset is None and "qos" not in raw and not spec.overrides)
    base_problems = _problems(base) if has_qos else []
    problems += [_where(source, lines, ("qos", *path), msg) for path, msg in base_problems]
    for i, ov in enumerate(spec.overrides):
        known = {msg for _, msg in base_problems}
        for path, msg in _problems(merge(base, _dump(ov.qos))):
            if msg not in known:
                problems.append(_where(source, lines, ("overrides", i, "qos", *path), msg))
    if problems:
        raise IntentError(source, problems)
    ordered = sorted(enumerate(spec.overrides), key=lambda item: (_rank(item[1].match), item[0]))
    fleet = _fleet_rules(spec.fleet, source, lines) if spec.fleet is not None else ()
    overrides = tuple((ov.match, _dump(ov.qos)) for _, ov in ordered)
    return Intent(source, text, spec, base, overrides, fleet, has_qos)


def _fleet_rules(fleet: FleetSpec, source: str, lines: Mapping[tuple[str, ...], int]) -> tuple[VersionRule, ...]:
    """The ``fleet`` groups as the model's :class:`VersionRule`, each naming its file line."""
    rules = []
    for i, group in enumerate(fleet.groups):
        line = lines.get(("fleet", "groups", str(i)))
        where = f"{source}{f':{line}' if line else ''}: fleet.groups[{i}]"
        select = tuple((k, str(getattr(group.match, k))) for k in sorted(group.match.model_fields_set))
        allowed = tuple(
            (k, patterns) for k in FLEET_FIELDS if (patterns := _pattern_list(getattr(group, k))) is not None
        )
        rules.append(VersionRule(where, select, allowed))
    return tuple(rules)


def _line_of(source: str, message: str) -> int:
    """The line a message names (0 when none), to list problems in file order."""
    head = message.removeprefix(f"{source}:").partition(":")[0]
    return int(head) if head.isdigit() else 0


def _rank(m: MatchSpec) -> int:
    return max(SELECTOR_RANK[k] for k in m.model_fields_set)


def _dump(spec: QosSpec) -> dict[str, Any]:
    return spec.model_dump(exclude_none=True, exclude_unset=True)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on ``base``: mappings merge key by key, anything else (lists, scalars) is replaced."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = merge(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return out


def _key_lines(node: yaml.Node, path: tuple[Any, ...] = ()) -> dict[tuple[str, ...], int]:
    """1-based line of every key (and list item) in the document, by its path of strings."""
    lines: dict[tuple[str, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = (*path, str(key.value))
            lines[sub] = key.start_mark.line + 1
            lines.update(_key_lines(value, sub))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            sub = (*path, str(i))
            lines[sub] = item.start_mark.line + 1
            lines.update(_key_lines(item, sub))
    return lines


def _where(source: str, lines: Mapping[tuple[str, ...], int], path: Iterable[Any], message: str) -> str:
    parts = tuple(str(p) for p in path)
    line = None
    for n in range(len(parts), 0, -1):  # the deepest key the file has (merged-in keys may come from a preset)
        line = lines.get(parts[:n])
        if line is not None:
            break
    dotted = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in parts).lstrip(".")
    return f"{source}{f':{line}' if line else ''}: {dotted}: {message}"


def _message(source: str, lines: Mapping[tuple[str, ...], int], err: Any) -> str:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and (p.startswith(("function-", "literal[")))))
    loc = tuple(p for p in loc if p not in ("int", "str", "list[str]", "constrained-int", "constrained-str"))
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        text = f"unknown key {loc[-1]!r}; allowed: {', '.join(allowed)}" if allowed else f"unknown key {loc[-1]!r}"
    elif kind == "missing":
        text = "required key is missing"
    else:
        msg = str(err["msg"]).removeprefix("Value error, ")
        text = f"{msg}; got {value!r}"
    return _where(source, lines, loc, text)


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the schema allows at ``loc`` (for 'unknown key' messages)."""
    model: Any = IntentSpec
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        model = _model_of(field.annotation)
    return list(model.model_fields) if model is not None else []


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


# --- settings -> profile ------------------------------------------------------------------------------


def _must(settings: Mapping[str, Any], where: str) -> QosProfile:
    problems = _problems(settings)
    if problems:
        raise IntentError(where, [f"{where}: {'.'.join(map(str, p))}: {m}" for p, m in problems])
    return _profile(settings)


_REQUIRED = (
    ("roce", "dscp"),
    ("roce", "priority"),
    ("cnp", "dscp"),
    ("cnp", "priority"),
    ("lossless_priorities",),
    ("ets",),
    ("mtu", "host"),
    ("mtu", "switch"),
    ("pfc_watchdog", "detection_ms"),
    ("pfc_watchdog", "restoration_ms"),
    ("pfc_watchdog", "action"),
)


def _get(settings: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = settings
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _problems(s: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """What is missing or inconsistent in merged settings, as (key path, message)."""
    out: list[tuple[tuple[str, ...], str]] = []
    for path in _REQUIRED:
        if _get(s, path) is None:
            out.append((path, "required (no preset sets it); name a preset or give the value"))
    if out:
        return out
    roce, cnp = s["roce"], s["cnp"]
    lossless = set(s["lossless_priorities"])
    if roce["priority"] == cnp["priority"]:
        out.append((("cnp", "priority"), f"{cnp['priority']} is also the RoCE priority; CNPs need their own"))
    if roce["dscp"] == cnp["dscp"]:
        out.append((("cnp", "dscp"), f"{cnp['dscp']} is also the RoCE DSCP; CNPs need their own DSCP"))
    if roce["priority"] not in lossless:
        out.append(
            (
                ("lossless_priorities",),
                f"{sorted(lossless)} does not contain the RoCE priority {roce['priority']}; RoCE would be lossy",
            )
        )
    p2tc = _priority_to_tc(s)
    if p2tc[roce["priority"]] == p2tc[cnp["priority"]]:
        out.append((("cnp", "queue"), f"CNP shares RoCE's traffic class {p2tc[roce['priority']]}; give it its own"))
    tcs = [e["tc"] for e in s["ets"]]
    if len(set(tcs)) != len(tcs):
        out.append((("ets",), f"traffic classes {tcs} repeat; list each TC once"))
    for i, e in enumerate(s["ets"]):
        if e["tsa"] == "strict" and e.get("bw_percent", 0):
            out.append((("ets", str(i), "bw_percent"), f"{e['bw_percent']} on a strict TC; strict TCs take 0"))
    shares = sum(e.get("bw_percent", 0) for e in s["ets"] if e["tsa"] == "ets")
    if any(e["tsa"] == "ets" for e in s["ets"]) and shares != 100:
        out.append((("ets",), f"ETS bandwidth adds up to {shares}%; the ets classes must add up to 100%"))
    queues = [e["queue"] for e in s.get("ecn", [])]
    if len(set(queues)) != len(queues):
        out.append((("ecn",), f"queues {queues} repeat; list each queue once"))
    for i, e in enumerate(s.get("ecn", [])):
        if e["min_bytes"] >= e["max_bytes"]:
            out.append((("ecn", str(i), "min_bytes"), f"{e['min_bytes']} is not below max_bytes {e['max_bytes']}"))
    if p2tc[roce["priority"]] not in queues:
        out.append((("ecn",), f"no ECN on the RoCE queue {p2tc[roce['priority']]}; DCQCN would never slow a sender"))
    if s["mtu"]["host"] > s["mtu"]["switch"]:
        out.append((("mtu", "host"), f"{s['mtu']['host']} is above the switch MTU {s['mtu']['switch']}"))
    tclass = _get(s, ("nccl", "traffic_class"))
    if tclass is not None and tclass >> 2 != roce["dscp"]:
        out.append(
            (
                ("nccl", "traffic_class"),
                f"{tclass} carries DSCP {tclass >> 2}, not the RoCE DSCP {roce['dscp']}; allowed: "
                f"{roce['dscp'] << 2} to {(roce['dscp'] << 2) | 3}",
            )
        )
    return out


def _priority_to_tc(s: Mapping[str, Any]) -> dict[int, int]:
    p2tc = {p: p for p in range(8)} | {int(k): v for k, v in (s.get("priority_to_tc") or {}).items()}
    for cls in ("roce", "cnp"):
        if s[cls].get("queue") is not None:
            p2tc[s[cls]["priority"]] = s[cls]["queue"]
    return p2tc


def _profile(s: Mapping[str, Any]) -> QosProfile:
    roce, cnp = s["roce"], s["cnp"]
    dscp = {d: d >> 3 for d in range(64)} | {int(k): v for k, v in (s.get("dscp_to_priority") or {}).items()}
    dscp[roce["dscp"]] = roce["priority"]  # the RoCE and CNP DSCPs always map to their priorities
    dscp[cnp["dscp"]] = cnp["priority"]
    p2tc = _priority_to_tc(s)
    tclass = _get(s, ("nccl", "traffic_class"))  # 0 is a valid TOS: compare with None, not falsiness
    wd = s["pfc_watchdog"]
    watchdog = WatchdogProfile(wd["detection_ms"], wd["restoration_ms"], wd["action"])
    return QosProfile(
        name=s.get("name", DEFAULT_PROFILE_NAME),
        roce_dscp=roce["dscp"],
        roce_priority=roce["priority"],
        lossless_priorities=frozenset(s["lossless_priorities"]),
        roce_queue=p2tc[roce["priority"]],
        cnp_dscp=cnp["dscp"],
        cnp_priority=cnp["priority"],
        cnp_queue=p2tc[cnp["priority"]],
        dscp_to_priority=dscp,
        priority_to_tc=p2tc,
        ets=tuple(
            EtsWeight(e["tc"], e["tsa"], e.get("bw_percent", 0)) for e in sorted(s["ets"], key=lambda e: e["tc"])
        ),
        ecn=tuple(
            EcnQueue(e["queue"], e["min_bytes"], e["max_bytes"], e.get("probability", 100))
            for e in sorted(s.get("ecn", []), key=lambda e: e["queue"])
        ),
        dcqcn=dict(s.get("dcqcn") or {}),
        host_mtu=s["mtu"]["host"],
        switch_mtu=s["mtu"]["switch"],
        pfcwd=watchdog,
        cable_length_m=int(_get(s, ("headroom", "cable_m", "host")) or DEFAULT_CABLE_M["host"]),
        nccl_ib_tc=(roce["dscp"] << 2) | 0b10 if tclass is None else tclass,
        dcbx=s.get("dcbx") or "os",
        congestion_control=s.get("congestion_control") or "dcqcn",
    )


def nccl_settings(settings: Mapping[str, Any]) -> dict[str, int]:
    """The ``nccl`` section's explicit SL and GID index (absent keys are left out)."""
    return {k: v for k, v in (settings.get("nccl") or {}).items() if k in ("sl", "gid_index") and v is not None}
