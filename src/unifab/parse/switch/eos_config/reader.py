"""Reading the text of ``show running-config``: :func:`parse` (see the package docstring for the
commands read).

With a :class:`~unifab.errors.ParseProblems` collector a command inside an ``interface`` block that cannot be
read (a bad ``mtu``, ``speed``, ``qos`` or ``priority-flow-control`` line, or a bad ``interface`` range) costs
the interfaces of that block: they are left out, since a half-read interface would read as configured with
defaults. A bad command inside a ``qos profile`` costs that profile and every interface applying it
(``service-profile``). Global commands (``qos map``, ``priority-flow-control`` defaults) are every port's,
so a bad one still makes the file unreadable.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, parse_uint
from unifab.parse.switch.eos_config.defaults import PFCWD_ACTIONS, QUEUE_KINDS, TRUST_MODES, UNIT_BYTES
from unifab.parse.switch.eos_config.records import (
    EosConfig,
    EosInterface,
    EosPfcWatchdogGlobal,
    EosQosMaps,
    EosQosProfile,
    EosQosSettings,
    EosQueueConfig,
    EosThreshold,
    EosWatchdogTimer,
)
from unifab.parse.switch.eos_config.resolution import resolve
from unifab.parse.switch.eos_config.tokens import MAX_DIGITS, expand_interfaces, index_list, seconds_ms, speed_to_mbps

__all__ = ["Owner", "parse"]

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
    def __init__(self, source: str, log: ParseProblems | None = None) -> None:
        self.source = source
        self.log = log if log is not None else ParseProblems.strict(source)
        self.bad: set[Owner] = set()  # interfaces and profiles a bad command left half-read
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
        return parse_uint(token, self.source, what, line=self.line, hi=hi, max_digits=MAX_DIGITS)

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
                heredoc = words[0] == "banner"
                if indent == 0 and words[0] == "interface":
                    with self.log.skipping(f"the block {stripped[:60]!r}") as row:
                        ctx = self.top(words, indent)
                    if row.failed:
                        ctx = _Ctx(indent, "skip")
                else:
                    ctx = self.top(words, indent) if indent == 0 else _Ctx(indent, "skip")
            elif parent.kind in ("interface", "profile", "queue"):
                heredoc = words == ["comment"]
                ctx = self.in_block(parent, words, indent)
            else:
                ctx = _Ctx(indent, "skip")
            stack.append(ctx)
        if self.commands == 0:
            self.line = 0
            raise ParseError(self.source, "an EOS running-config (found no commands)")
        return self.build()

    def in_block(self, parent: _Ctx, words: list[str], indent: int) -> _Ctx:
        """One command inside an interface, profile or queue block; a bad one costs the block's owners."""
        if any(owner in self.bad for owner in parent.owners):
            return _Ctx(indent, "skip")
        names = ", ".join(f"{'interface' if kind == 'if' else 'qos profile'} {name}" for kind, name in parent.owners)
        with self.log.skipping(names or "the block") as row:
            if parent.kind == "queue":
                self.queue_command(parent, words)
                return _Ctx(indent, "skip")
            return self.block(parent, words, indent)
        if row.failed:
            self.bad.update(parent.owners)
        return _Ctx(indent, "skip")

    def build(self) -> EosConfig:
        bad_profiles = {name for kind, name in self.bad if kind == "profile"}
        dropped = {
            name
            for name, iface in self.ifaces.items()
            if ("if", name) in self.bad or (iface.service_profile is not None and iface.service_profile in bad_profiles)
        }
        for name in sorted(dropped - {n for k, n in self.bad if k == "if"}, key=natural_key):
            profile = self.ifaces[name].service_profile
            expected = f"qos profile {profile} readable (a command in it is not)"
            self.log.add(expected, f"interface {name}, which applies that profile")
        interfaces = {
            name: dataclasses.replace(self.ifaces[name], qos=self.qos.get(("if", name), EosQosSettings()))
            for name in sorted(self.ifaces, key=natural_key)
            if name not in dropped
        }
        if self.ifaces and not interfaces:
            raise self.log.problems[0].error()
        profiles = {
            owner[1]: EosQosProfile(owner[1], settings)
            for owner, settings in sorted(self.qos.items())
            if owner[0] == "profile" and owner[1] not in bad_profiles
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
        keys = index_list(words[3:to], self.source, self.line, kind, hi)
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
            ms = seconds_ms(rest[2], self.source, self.line, rest[1])
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
            indices = tuple(index_list(body[1:], self.source, self.line, f"{head} number", 15))
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
                ms = seconds_ms(value, self.source, self.line, key)
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


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> EosConfig:
    """Read an EOS running-config and resolve every Ethernet/Port-Channel interface's QoS."""
    return _Parser(source, problems).run(text)
