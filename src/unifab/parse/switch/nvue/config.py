"""``nv config show -o yaml`` (and ``/etc/nvue.d/startup.yaml``, the REST API's ``set`` object)
resolved per swp interface: :func:`parse`.

Several ``set`` items are merged in order. Interface keys may be ranges and lists: ``swp1-32``,
``swp1-4,swp6``, ``swp2,6`` (a bare number continues the previous name's prefix), ``swp1s0-3``.
Interfaces of ``type: swp`` (or without a type and named ``swpN``) are resolved; ``eth0``, ``lo``, bonds
and SVIs are not.

Per interface the QoS objects are looked up as NVUE does (CL 5.16 QoS and RoCE pages): the profile
named by ``interface <if> qos {mapping|pfc|congestion-control|egress-scheduler} profile`` or
``default-global``; ``egress-queue-mapping`` only exists as ``default-global``; ``interface <if> qos
pfc-watchdog`` turns the watchdog on (``state disabled`` off), ``qos pfc-watchdog polling-interval`` /
``robustness`` are global. Silent settings take the defaults of
:mod:`unifab.parse.switch.nvue.defaults`. Maps (``dscp``, ``pcp``, ``egress-queue-mapping``) overlay
the default entry by entry; the collections of a profile (``pfc ... switch-priority``,
``congestion-control ... traffic-class``, ``egress-scheduler ... traffic-class``) replace the default
set when given (the doc's example of ECN on TC 4,5,7 shows TC0 gone), and a configured traffic class
takes the per-field defaults (ECN enable, RED disable, 150000 / 1500000 B, probability 100). A profile
configured without ``rx``/``tx``/``cable-length`` gets enable/enable/10 m.

Bad input raises :class:`~unifab.errors.ParseError` with the YAML key path (``key=``). With a
:class:`~unifab.errors.ParseProblems` collector an interface that cannot be resolved (a profile the document
does not define, a bad MTU or speed, an interface key that is no name, list or range) costs that interface (or
the interfaces of that key): it is left out, so no check judges it; what every interface needs (``qos``
itself, the global watchdog settings, ``qos roce mode``) still raises, as does a document whose every
interface is bad.
"""

from __future__ import annotations

import re
from typing import Any

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, pasted
from unifab.parse.switch.nvue.defaults import (
    _OFF,
    _ON,
    _PFC_NONE,
    _PFC_SILENT,
    _PLAIN,
    DEFAULT_ECN_FIELDS,
    DEFAULT_MTU,
    DEFAULT_PFCWD_POLLING_INTERVAL_MS,
    DEFAULT_PFCWD_ROBUSTNESS,
    DEFAULT_PORT_DEFAULT_SP,
    DEFAULT_PROFILE,
    DEFAULT_ROCE_MODE,
    N_DSCP,
    N_PRIORITIES,
    N_TRAFFIC_CLASSES,
    ROCE_DEFAULTS,
    ROCE_MODES,
    SCHEDULER_MODES,
    TRUSTS,
    RoceDefaults,
    _Pfc,
)
from unifab.parse.switch.nvue.document import copy_tree, join, load_yaml, merge, split_document
from unifab.parse.switch.nvue.records import NvueConfig, NvueEcn, NvueInterfaceQos, NvueScheduler

__all__ = ["expand_interfaces", "parse"]

_SPEED = re.compile(r"(\d+)([MGT])")
_SPEED_UNITS = {"M": 1, "G": 1000, "T": 1_000_000}
_IFACE_ITEM = re.compile(r"(.*?)(\d+)(?:-(\d+))?")
_MAX_EXPANSION = 4096
_INCLUDED_TYPES = frozenset({"swp"})
_SWP = re.compile(r"swp\d")


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> NvueConfig:
    """Read ``nv config show -o yaml`` (or the REST API's revision object) and resolve every swp port."""
    doc = load_yaml(text, source)
    header, body = split_document(doc, source)
    log = problems if problems is not None else ParseProblems.strict(source)
    return _Resolver(body, source, log).run(header)


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
    def __init__(self, body: dict[str, Any], source: str, log: ParseProblems) -> None:
        self.body = body
        self.source = source
        self.log = log

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
            path = join(path, key)
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
            item_path = join(path, key)
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
            raise self._err(join(path, "trust"), f"one of {', '.join(TRUSTS)}, got {trust!r}")
        dscp = dict(base.dscp_to_tc)
        for d, f in self._collection(body.get("dscp"), join(path, "dscp"), N_DSCP - 1, "DSCP").items():
            dscp[d] = self._sp(f, join(path, f"dscp.{d}"))
        pcp = dict(base.pcp_to_tc)
        for p, f in self._collection(body.get("pcp"), join(path, "pcp"), N_PRIORITIES - 1, "PCP").items():
            pcp[p] = self._sp(f, join(path, f"pcp.{p}"))
        raw_default = body.get("port-default-sp")
        default_sp = (
            DEFAULT_PORT_DEFAULT_SP
            if raw_default is None
            else self._uint(raw_default, join(path, "port-default-sp"), "switch priority", N_PRIORITIES - 1)
        )
        return trust, dict(sorted(dscp.items())), dict(sorted(pcp.items())), default_sp

    def _sp(self, fields: dict[str, Any], path: str) -> int:
        raw = fields.get("switch-priority")
        if raw is None:
            raise self._err(path, "a 'switch-priority' field")
        return self._uint(raw, join(path, "switch-priority"), "switch priority", N_PRIORITIES - 1)

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
                raise self._err(join(path, str(sp)), "a 'traffic-class' field")
            out[sp] = self._uint(raw, join(path, f"{sp}.traffic-class"), "traffic class", N_TRAFFIC_CLASSES - 1)
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
            else frozenset(self._collection(sps, join(path, "switch-priority"), N_PRIORITIES - 1, "switch priority"))
        )
        rx = silent.rx if body.get("rx") is None else self._flag(body["rx"], join(path, "rx"))
        tx = silent.tx if body.get("tx") is None else self._flag(body["tx"], join(path, "tx"))
        cable = body.get("cable-length")
        cable_m = (
            silent.cable_m if cable is None else self._uint(cable, join(path, "cable-length"), "cable length in metres")
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
            p = join(path, str(tc))
            d = DEFAULT_ECN_FIELDS
            out[tc] = NvueEcn(
                enabled=d.enabled if f.get("ecn") is None else self._flag(f["ecn"], join(p, "ecn")),
                min_bytes=d.min_bytes
                if f.get("min-threshold") is None
                else self._uint(f["min-threshold"], join(p, "min-threshold"), "bytes"),
                max_bytes=d.max_bytes
                if f.get("max-threshold") is None
                else self._uint(f["max-threshold"], join(p, "max-threshold"), "bytes"),
                probability=d.probability
                if f.get("probability") is None
                else self._uint(f["probability"], join(p, "probability"), "percent", 100),
                red_enabled=d.red_enabled if f.get("red") is None else self._flag(f["red"], join(p, "red")),
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
            p = join(path, str(tc))
            mode = f.get("mode", "dwrr")
            if mode not in SCHEDULER_MODES:
                raise self._err(join(p, "mode"), f"dwrr or strict, got {mode!r}")
            bw = f.get("bw-percent")
            out[tc] = NvueScheduler(mode, None if bw is None else self._uint(bw, join(p, "bw-percent"), "percent", 100))
        return out

    # -- interfaces -----------------------------------------------------------------------------------

    def _interfaces(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """name -> (the key it came from, merged body) for swp ports."""
        merged: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, value in self._obj(self.body.get("interface"), "interface").items():
            path = f"interface.{key}"
            with self.log.skipping(f"the interface(s) {key}") as row:
                body = self._obj(value, path)
                try:
                    names = expand_interfaces(key)
                except ValueError as exc:
                    raise self._err(path, f"an interface name, list or range ({exc})") from None
            if row.failed:
                continue
            for name in names:
                old = merged.get(name)
                if old is None:
                    merged[name] = (path, copy_tree(body))
                else:
                    merge(old[1], body)
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

    def _interface(
        self,
        qos: dict[str, Any],
        base: RoceDefaults,
        tc_to_queue: dict[int, int],
        name: str,
        path: str,
        body: dict[str, Any],
    ) -> NvueInterfaceQos:
        """One swp port's QoS, resolved through its profiles (a problem raises: the caller skips the port)."""
        iq = self._obj(body.get("qos"), join(path, "qos"))
        link = self._obj(body.get("link"), join(path, "link"))
        profiles = {}
        for kind in ("mapping", "pfc", "congestion-control", "egress-scheduler"):
            raw = self._get(iq, join(path, "qos"), kind, "profile")
            if raw is not None and not isinstance(raw, str):
                raise self._err(join(path, f"qos.{kind}.profile"), f"a profile name, got {raw!r}")
            profiles[kind] = raw or DEFAULT_PROFILE
        trust, dscp, pcp, default_sp = self._mapping(qos, profiles["mapping"], base, join(path, "qos.mapping.profile"))
        pfc = self._pfc(qos, profiles["pfc"], base, join(path, "qos.pfc.profile"))
        pfcwd = False
        if "pfc-watchdog" in iq:
            wd_obj = self._obj(iq["pfc-watchdog"], join(path, "qos.pfc-watchdog"))
            state = wd_obj.get("state", wd_obj.get("enable"))
            pfcwd = True if state is None else self._flag(state, join(path, "qos.pfc-watchdog.state"))
        mtu = link.get("mtu")
        return NvueInterfaceQos(
            interface=name,
            mtu=DEFAULT_MTU if mtu is None else self._uint(mtu, join(path, "link.mtu"), "MTU in bytes"),
            speed_mbps=self._speed(link.get("speed"), join(path, "link.speed")),
            trust=trust,
            dscp_to_tc=dscp,
            pcp_to_tc=pcp,
            port_default_sp=default_sp,
            tc_to_queue=dict(tc_to_queue),
            pfc_enabled=pfc.priorities,
            pfc_rx=pfc.rx,
            pfc_tx=pfc.tx,
            pfc_cable_length_m=pfc.cable_m,
            ecn=self._ecn(qos, profiles["congestion-control"], base, join(path, "qos.congestion-control.profile")),
            schedulers=self._schedulers(
                qos, profiles["egress-scheduler"], base, join(path, "qos.egress-scheduler.profile")
            ),
            pfcwd=pfcwd,
            mapping_profile=profiles["mapping"],
            pfc_profile=profiles["pfc"],
            congestion_control_profile=profiles["congestion-control"],
            egress_scheduler_profile=profiles["egress-scheduler"],
        )

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
        resolved = self._interfaces()
        failed: dict[tuple[str | None, str], tuple[ParseError, list[str]]] = {}  # one problem per cause
        for name, (path, body) in resolved.items():
            try:
                interfaces[name] = self._interface(qos, base, tc_to_queue, name, path, body)
            except ParseError as exc:
                if self.log.is_strict:
                    raise
                failed.setdefault((exc.key, exc.expected), (exc, []))[1].append(name)
        for error, names in failed.values():
            self.log.record(error, f"interface {names[0]}" if len(names) == 1 else f"interfaces {', '.join(names)}")
        if resolved and not interfaces and self.log.problems:
            raise self.log.problems[0].error()
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
