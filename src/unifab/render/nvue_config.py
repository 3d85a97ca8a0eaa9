"""NVIDIA Cumulus Linux (NVUE) configuration for a set of lossless RoCE ports: ``nv set`` commands and
the ``nv config show -o yaml`` the switch prints after applying them.

The configuration is built as :mod:`unifab.parse.switch.nvue` records and printed by that module's
``dump``, so the project's parser reads it back exactly; :func:`render_nv_set` spells the same tree
as ``nv set`` commands. For profile ``NAME`` (reference switch-qos §3):

* ``qos roce mode lossless``: NVUE's RoCE mode, which sets up the lossless buffer pools (RoCE can only
  be configured through NVUE, and the pools are ASIC-specific);
* ``qos mapping NAME``: ``trust l3`` and DSCP → switch priority (the profile's ``dscp_to_priority``);
  ``qos egress-queue-mapping default-global``: switch priority → traffic class (egress queue) for
  every priority (NVUE has this one map only, so it is switch-wide);
* ``qos pfc NAME-<m>m``: the lossless switch priorities, rx and tx, and the port's cable length
  (NVUE sizes the headroom from it); one profile per cable length;
* ``qos congestion-control NAME``: ECN (RED off) with min/max thresholds in bytes and probability;
* ``qos egress-scheduler NAME``: ``strict``, or ``dwrr`` with ``bw-percent``;
* ``interface <swp> qos pfc-watchdog`` and the global ``qos pfc-watchdog polling-interval``/
  ``robustness`` whose product is the detection time (NVUE has no action or restoration time);
* ``interface <swp> link mtu``; the link speed is the port's own and is not written.

:func:`render_nvue_yaml` with ``current_yaml`` merges into the switch's configuration: the rendered
profiles, RoCE mode, egress-queue mapping and watchdog timers replace theirs; a rendered interface keeps
its non-QoS settings (description, addresses, speed) but its ``qos`` subtree is the rendered one; an
interface range key that covers rendered and other ports is split so the others keep theirs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

from unifab.errors import ParseError, RenderError, load_yaml
from unifab.parse._text import natural_key
from unifab.parse.switch import nvue
from unifab.platforms.nvue import MAX_MTU
from unifab.profile import PortSpec, QosProfile
from unifab.render.switch_qos import SwitchQos, check_name, derive, port_mtus, sorted_ports

__all__ = ["PORT_NAME", "PROFILE_NAME", "Adjust", "merged_yaml", "pfcwd_timers", "render_nv_set", "render_nvue_yaml"]

OS = "nvue"
PORT_NAME = re.compile(r"swp\d{1,6}(s\d{1,2})?")  # a spine of a 100,000-GPU fabric: swp12512
PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,55}")
MTU_RANGE = (552, MAX_MTU)  # `link mtu`: 552 up to the platform's maximum (unifab.platforms.nvue)
ROCE_MODE = "lossless"
PREFERRED_POLL_MS = nvue.DEFAULT_PFCWD_POLLING_INTERVAL_MS
# libyaml's safe dumper when PyYAML has it (20x faster on a 64-port switch), else Python's; YAML is read
# through unifab.errors.load_yaml (libyaml's parser, bounded)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_PROFILE_KINDS = ("mapping", "pfc", "congestion-control", "egress-scheduler")
_GLOBAL_KINDS = ("roce", "egress-queue-mapping", "pfc-watchdog")
# Changes to the rendered records before they are printed (a twin's deviations from its intent)
Adjust = Callable[[nvue.NvueConfig], nvue.NvueConfig]


def pfcwd_timers(detection_ms: int) -> tuple[int, int]:
    """(polling-interval ms, robustness polls) whose product is ``detection_ms``: NVUE's 100 ms poll when
    it divides, else the largest robustness of 3, 2 or 1 that does."""
    if detection_ms <= 0:
        raise RenderError(OS, f"PFC watchdog detection time must be positive, got {detection_ms} ms")
    if detection_ms % PREFERRED_POLL_MS == 0:
        return PREFERRED_POLL_MS, detection_ms // PREFERRED_POLL_MS
    robustness = next(r for r in (3, 2, 1) if detection_ms % r == 0)
    return detection_ms // robustness, robustness


def _records(
    ports: Sequence[PortSpec], profile: QosProfile, mtus: Mapping[str, int] | None = None
) -> tuple[nvue.NvueConfig, SwitchQos]:
    name = check_name(OS, "profile name", profile.name, PROFILE_NAME, "letters, digits, '_' or '-', up to 56")
    if name == nvue.DEFAULT_PROFILE:
        raise RenderError(OS, f"profile name {name!r} is NVUE's built-in profile; choose another")
    sq = derive(profile, OS, MTU_RANGE)
    specs = sorted_ports(OS, ports, PORT_NAME, "swp<n> or swp<n>s<m>")
    port_mtu = port_mtus(OS, specs, sq.mtu, mtus, MTU_RANGE)
    ecn = {
        q: nvue.NvueEcn(
            enabled=True, min_bytes=e.min_bytes, max_bytes=e.max_bytes, probability=e.max_probability, red_enabled=False
        )
        for q, e in sq.ecn.items()
    }
    schedulers = {q: nvue.NvueScheduler("strict", None) for q in sq.strict}
    schedulers |= {q: nvue.NvueScheduler("dwrr", w) for q, w in sq.weights.items()}
    interfaces: dict[str, nvue.NvueInterfaceQos] = {}
    for spec in specs:
        cable = sq.cable_m(profile, spec)
        interfaces[spec.name] = nvue.NvueInterfaceQos(
            interface=spec.name,
            mtu=port_mtu[spec.name],
            speed_mbps=spec.speed_mbps,
            trust="l3",
            dscp_to_tc=dict(sq.dscp_to_priority),
            pcp_to_tc=dict(nvue.DEFAULT_PCP_TO_SP),
            port_default_sp=0,
            tc_to_queue=dict(sq.queue_of),
            pfc_enabled=frozenset(sq.lossless),
            pfc_rx=True,
            pfc_tx=True,
            pfc_cable_length_m=cable,
            ecn=dict(sorted(ecn.items())),
            schedulers=dict(sorted(schedulers.items())),
            pfcwd=sq.pfcwd is not None,
            mapping_profile=name,
            pfc_profile=f"{name}-{cable}m",
            congestion_control_profile=name,
            egress_scheduler_profile=name,
        )
    poll, robustness = (
        (nvue.DEFAULT_PFCWD_POLLING_INTERVAL_MS, nvue.DEFAULT_PFCWD_ROBUSTNESS)
        if sq.pfcwd is None
        else pfcwd_timers(sq.pfcwd.detection_ms)
    )
    cfg = nvue.NvueConfig(
        version=None,
        hostname=None,
        roce_enabled=True,
        roce_mode=ROCE_MODE,
        pfcwd_polling_interval_ms=poll,
        pfcwd_robustness=robustness,
        interfaces=interfaces,
    )
    return cfg, sq


def _set_body(
    ports: Sequence[PortSpec],
    profile: QosProfile,
    adjust: Adjust | None = None,
    mtus: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The ``set`` tree the profile writes (link speed left out, RoCE as ``roce mode``); ``adjust``
    changes the records first, ``mtus`` gives some ports another MTU than the profile's switch MTU."""
    cfg, sq = _records(ports, profile, mtus)
    if adjust is not None:
        cfg = adjust(cfg)
    dscp_maps = {i.mapping_profile: i.dscp_to_tc for i in cfg.interfaces.values()}
    doc = load_yaml(nvue.dump(cfg), "<rendered nvue yaml>")
    body: dict[str, Any] = next((item["set"] for item in doc if "set" in item), {}) or {}
    qos = body.setdefault("qos", {})
    qos["roce"] = {"mode": ROCE_MODE}
    # every DSCP is written: the map must not depend on NVUE's default (dscp >> 3, reference §3)
    for mapping_name, mapping in qos.get("mapping", {}).items():
        dscp = dscp_maps.get(mapping_name, sq.dscp_to_priority)
        mapping["dscp"] = {str(d): {"switch-priority": p} for d, p in sorted(dscp.items())}
    # the egress-queue map is written in full: it must not depend on the mode's defaults
    qos["egress-queue-mapping"] = {
        nvue.DEFAULT_PROFILE: {"switch-priority": {str(p): {"traffic-class": q} for p, q in sq.queue_of.items()}}
    }
    if sq.pfcwd is not None:  # written even when equal to NVUE's defaults: the detection time depends on them
        qos["pfc-watchdog"] = {
            "polling-interval": cfg.pfcwd_polling_interval_ms,
            "robustness": cfg.pfcwd_robustness,
        }
    for iface in (body.get("interface") or {}).values():
        iface.get("link", {}).pop("speed", None)
        if "pfc-watchdog" in iface.get("qos", {}):
            iface["qos"]["pfc-watchdog"] = {}  # `nv set interface <if> qos pfc-watchdog` (reference §3)
    return body


def render_nv_set(
    ports: Sequence[PortSpec], profile: QosProfile, *, mtus: Mapping[str, int] | None = None
) -> list[str]:
    """``nv set`` commands that make ``ports`` lossless RoCE ports running ``profile``, then ``nv config apply``.

    Raises :class:`~unifab.errors.RenderError` for a port that is not ``swp<n>[s<m>]``, a profile
    name NVUE would not take, or a profile a switch cannot run. ``mtus`` gives some ports another MTU (a link
    to a switch whose platform takes less).
    """
    commands: list[str] = []
    _flatten(_set_body(ports, profile, mtus=mtus), [], commands)
    return [*commands, "nv config apply"]


def _flatten(node: Mapping[str, Any], path: list[str], out: list[str]) -> None:
    for key in sorted(node, key=lambda k: natural_key(str(k))):
        value = node[key]
        here = [*path, str(key)]
        if isinstance(value, Mapping):
            if value:
                _flatten(value, here, out)
            else:
                out.append("nv set " + " ".join(here))
        else:
            out.append("nv set " + " ".join([*here, _word(value)]))


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def render_nvue_yaml(
    ports: Sequence[PortSpec],
    profile: QosProfile,
    current_yaml: str | None = None,
    *,
    mtus: Mapping[str, int] | None = None,
) -> str:
    """What ``nv config show -o yaml`` prints after :func:`render_nv_set` (with the same ``mtus``) is applied to
    ``current_yaml`` (an empty configuration when ``None``). A ``current_yaml`` that is not an NVUE configuration
    raises :class:`~unifab.errors.ParseError`."""
    header: dict[str, Any] = dict(nvue.DUMP_HEADER)
    body: dict[str, Any] = {}
    if current_yaml is not None:
        header, body = _load(current_yaml)
    return merged_yaml(ports, profile, header, body, mtus=mtus)


def merged_yaml(
    ports: Sequence[PortSpec],
    profile: QosProfile,
    header: Mapping[str, Any],
    body: dict[str, Any],
    adjust: Adjust | None = None,
    mtus: Mapping[str, int] | None = None,
) -> str:
    """:func:`render_nvue_yaml` over a configuration given as its ``header`` and ``set`` body (not
    modified), with the rendered records changed by ``adjust`` before they are merged."""
    merged = _merge(body, _set_body(ports, profile, adjust, mtus))
    doc = [{"header": dict(header)}, {"set": merged}]
    try:
        return "".join(_block(item, 0) for item in doc)
    except _NotPlain:  # lists, nulls or other keys than strings: PyYAML's dumper handles any document
        return yaml.dump(doc, Dumper=_Dumper, sort_keys=True, default_flow_style=False)


class _NotPlain(Exception):
    """A value the block emitter does not write."""


# A string PyYAML's safe loader reads back as that string when written unquoted
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.,/()+-]*(?: [A-Za-z0-9_.,/()+-]+)*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def _text(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return "'" + value.replace("'", "''") + "'"


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _text(value)
    raise _NotPlain


def _block(item: Mapping[str, Any], indent: int) -> str:
    """One ``- key:`` list item of ``nv config show -o yaml`` in block style, keys sorted, as
    ``yaml.dump(..., sort_keys=True, default_flow_style=False)`` writes it but without PyYAML's
    representer (the slow part on a switch with hundreds of ports)."""
    lines: list[str] = []
    for n, key in enumerate(sorted(item)):
        prefix = "- " if n == 0 else "  "
        _mapping_entry(key, item[key], indent, prefix, lines)
    return "".join(line + "\n" for line in lines)


def _mapping_entry(key: Any, value: Any, indent: int, prefix: str, lines: list[str]) -> None:
    if not isinstance(key, str):
        raise _NotPlain
    head = " " * indent + prefix + _text(key) + ":"
    if isinstance(value, Mapping):
        if not value:
            lines.append(head + " {}")
            return
        lines.append(head)
        if any(not isinstance(k, str) for k in value):
            raise _NotPlain
        for k in sorted(value):
            _mapping_entry(k, value[k], indent + len(prefix) + 2, "", lines)
        return
    lines.append(head + " " + _scalar(value))


def _load(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    doc = load_yaml(text, "<current nvue yaml>")  # the safe loader, bounded (YamlError is a ParseError)
    if doc is None:
        return dict(nvue.DUMP_HEADER), {}
    if isinstance(doc, dict):  # the REST API's revision object: the set tree alone
        return dict(nvue.DUMP_HEADER), copy.deepcopy(doc)
    if not isinstance(doc, list) or not all(isinstance(item, dict) for item in doc):
        raise ParseError("<current nvue yaml>", "a list of {header: ...} and {set: ...} items, or a set object")
    header: dict[str, Any] = dict(nvue.DUMP_HEADER)
    body: dict[str, Any] = {}
    for item in doc:
        if isinstance(item.get("header"), dict):
            header = dict(item["header"])
        if isinstance(item.get("set"), dict):
            _deep_merge(body, copy.deepcopy(item["set"]))
    return header, body


def _clone(value: Any) -> Any:
    """A deep copy of a YAML document's nodes (dicts, lists, scalars), several times faster than
    :func:`copy.deepcopy`; anything else is deep-copied."""
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if value is None or isinstance(value, str | int | float):
        return value
    return copy.deepcopy(value)


def _deep_merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = _clone(value)


def _merge(current: dict[str, Any], rendered: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = _clone(current)
    qos = out.get("qos")
    if not isinstance(qos, dict):
        qos = out["qos"] = {}
    new_qos = rendered.get("qos", {})
    for kind in _PROFILE_KINDS:
        for name, value in (new_qos.get(kind) or {}).items():
            profiles = qos.get(kind)
            if not isinstance(profiles, dict):
                profiles = qos[kind] = {}
            profiles[name] = _clone(value)
    for kind in _GLOBAL_KINDS:
        if kind in new_qos:
            qos[kind] = _clone(new_qos[kind])
    new_ifaces: Mapping[str, Any] = rendered.get("interface") or {}
    wanted: dict[str, Mapping[str, Any]] = {}
    for key, body in new_ifaces.items():
        for name in nvue.expand_interfaces(key):
            wanted[name] = body
    ifaces = out.get("interface")
    if not isinstance(ifaces, dict):
        ifaces = out["interface"] = {}
    existing: dict[str, Any] = {}
    for key in list(ifaces):
        try:
            names = nvue.expand_interfaces(str(key))
        except ValueError:
            continue
        if not set(names) & set(wanted):
            continue
        body = ifaces.pop(key)
        for name in names:
            if name in wanted:
                if isinstance(body, dict):
                    _deep_merge(existing.setdefault(name, {}), body)
            else:
                ifaces.setdefault(name, _clone(body))
    for name, body in wanted.items():
        merged = existing.get(name, {})
        merged.pop("qos", None)  # the interface's QoS is the rendered one
        _deep_merge(merged, body)
        ifaces[name] = merged
    out["interface"] = dict(sorted(ifaces.items(), key=lambda kv: natural_key(str(kv[0]))))
    return out
