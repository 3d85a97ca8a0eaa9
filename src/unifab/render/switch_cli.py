"""Fix commands for a switch in its own OS's language: SONiC CONFIG_DB edits, EOS CLI, NVUE ``nv set``.

Checks ask for an intent ("enable PFC on priority 3 of this port"); :func:`for_os` picks the dialect and
binds it to the switch (:class:`SwitchObjects`), so that every object a command names is one THAT switch
has: the DSCP map, WRED / congestion-control profile or scheduler its own ports use, never a name taken
from other switches. When the switch has none, the commands create the object first, then bind it.

A safe procedure: every fix group ends with the platform's save step (:meth:`finish`): SONiC
``sudo config save -y``; EOS lines are entered in ``configure`` mode and end with ``end`` and
``write memory``; NVUE commands are staged and end with one ``nv config apply -y`` and ``nv config save``.

NVUE edits the port's own objects: a port is bound (``nv set interface <if> qos <kind> profile <p>``) to a
profile of its switch that already holds what the fix wants, or to one the fix creates with the whole
content the port needs (``unifab-pfc-3-5m``: PFC on 3, rx and tx, a 5 m cable; ``unifab-ecn-<digest>``,
``unifab-ets-<digest>``: the port's current ECN / scheduling with the fix applied), so that nothing else
of the port changes and no other port is touched. A created PFC profile starts from ``nv unset`` of its
priorities, so it holds exactly the ones wanted.

Settings a vendor keeps platform-managed (EOS cable length) say so instead of inventing a command.
The verify commands (``lldp_neighbors``, ``link_status``) show what a port sees after a cable is fixed.

Every port name reaches a command through one gate (:class:`_Checked`): a name that is not a valid name on
the switch's platform (:func:`unifab.platforms.safe_name`) is never printed into a command; the command
becomes a comment saying why. Object names read from the switch pass the same gate. Shell dialects
(SONiC, NVUE, InfiniBand tools) also quote what they print. An InfiniBand switch gets the
infiniband-diags; a switch whose OS is not known (not collected) gets a comment naming it, never another
OS's commands; an OS no platform declares is an error.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, cast

from unifab.model import PfcWatchdog, Port, PortQos, QueueQos, Switch
from unifab.platforms import Platform, clamp_mtu, platform, safe_name
from unifab.platforms import eos as eos_platform
from unifab.platforms.junos import MEDIA_MTU_OVERHEAD
from unifab.render import sonic

__all__ = [
    "DIALECTS",
    "EOS_FEC",
    "EOS_MAX_MTU",
    "Commands",
    "EosCli",
    "IbCli",
    "JunosCli",
    "NvueCli",
    "SonicCli",
    "SwitchCli",
    "SwitchObjects",
    "UnknownOsCli",
    "finish",
    "for_os",
]

Commands = tuple[str, ...]
EOS_MAX_MTU = eos_platform.MAX_MTU  # 9214, from the platform table (the one place it is written)


class SwitchCli(Protocol):
    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands: ...
    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands: ...
    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands: ...
    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands: ...
    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands: ...
    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands: ...
    def ecn_mark_mode(self, profile: str, queue: int, mode: str) -> Commands: ...
    def queue_strict(self, port: str, queue: int) -> Commands: ...
    def queue_weight(self, port: str, queue: int, percent: int) -> Commands: ...
    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands: ...
    def port_mtu(self, port: str, mtu: int) -> Commands: ...
    def port_speed(self, port: str, mbps: int) -> Commands: ...
    def port_fec(self, port: str, fec: str) -> Commands: ...
    def cable_length(self, port: str, metres: int) -> Commands: ...
    def lldp_neighbors(self, device: str, port: str) -> Commands: ...
    def link_status(self, device: str, port: str) -> Commands: ...
    def finish(self, commands: Iterable[str]) -> Commands: ...


_w = sonic.word
_OBJECT_NAME = re.compile(r"[A-Za-z0-9_.:@+-]{1,64}")


class _Unsafe(Exception):
    """A name read from the switch that may not enter a command."""


def _name(value: str) -> str:
    if not _OBJECT_NAME.fullmatch(value):
        raise _Unsafe(value)
    return value


def _csv(priorities: Iterable[int]) -> str:
    return ",".join(str(p) for p in sorted(priorities))


def _digest(content: object) -> str:
    return hashlib.sha256(repr(content).encode()).hexdigest()[:8]


def _ranked(counts: Counter[str], rank: Callable[[str], tuple[bool, ...]]) -> str | None:
    """The best name by ``rank`` (higher first), then the most used, then the first seen."""
    if not counts:
        return None
    order = {name: i for i, name in enumerate(counts)}
    return max(counts, key=lambda n: (rank(n), counts[n], -order[n]))


QueueShape = tuple[tuple[int, object], ...]


class SwitchObjects:
    """The QoS objects one switch's ports are bound to, by the names that switch gives them.

    The model keeps the names a port uses (its DSCP map, the WRED / congestion-control profile of a
    marking queue, each queue's scheduler), so "exists on this switch" means "bound on one of its ports".
    """

    def __init__(self, switch: Switch | None = None) -> None:
        self.ports: Mapping[str, Port] = switch.ports if switch is not None else {}  # read, never written

    def qos(self, port: str) -> PortQos | None:
        found = self.ports.get(port)
        return found.qos if found is not None else None

    def _others(self, port: str) -> Iterable[tuple[str, PortQos]]:
        return ((name, p.qos) for name, p in self.ports.items() if name != port and p.qos is not None)

    def dscp_map(self, port: str = "") -> str | None:
        """The DSCP map most of this switch's DSCP-trusting ports use."""
        names = Counter(q.dscp_map_name for _, q in self._others(port) if q.trust == "dscp" and q.dscp_map_name)
        return _ranked(names, lambda _: ())

    def marking_profile(self, port: str, queue: int, want: tuple[int, int] | None) -> str | None:
        """A WRED / congestion-control profile that ECN-marks ``queue`` on another port of this switch: one with
        the wanted (min, max) and the port's other queues' marking first, then one on the same queue, then any."""
        own = _ecn_shape(self.qos(port), queue)
        counts: Counter[str] = Counter()
        shape: dict[str, tuple[bool, bool, bool]] = {}
        for _, q in self._others(port):
            for index, qq in q.queues.items():
                if not (qq.ecn_enabled and qq.wred_profile and _usable(qq)):
                    continue
                counts[qq.wred_profile] += 1
                key = (index == queue, (qq.ecn_min_bytes, qq.ecn_max_bytes) == want, _ecn_shape(q, queue) == own)
                shape[qq.wred_profile] = max(shape.get(qq.wred_profile, key), key)
        return _ranked(counts, lambda n: shape[n])

    def strict_scheduler(self, port: str, queue: int) -> str | None:
        """A strict scheduler another port of this switch uses: on ``queue`` with the port's other queues
        scheduled as now first, then on ``queue``, then on any queue."""
        own = _sched_shape(self.qos(port), queue)
        counts: Counter[str] = Counter()
        shape: dict[str, tuple[bool, bool]] = {}
        for _, q in self._others(port):
            for index, qq in q.queues.items():
                if qq.scheduler_type != "STRICT" or not qq.scheduler:
                    continue
                counts[qq.scheduler] += 1
                key = (index == queue, index == queue and _sched_shape(q, queue) == own)
                shape[qq.scheduler] = max(shape.get(qq.scheduler, key), key)
        return _ranked(counts, lambda n: shape[n])

    def weighted_scheduler(self, port: str, queue: int, weight: int) -> str | None:
        """A DWRR scheduler of that ``weight`` another port of this switch uses (on ``queue`` first)."""
        counts: Counter[str] = Counter()
        shape: dict[str, tuple[bool]] = {}
        for _, q in self._others(port):
            for index, qq in q.queues.items():
                if qq.scheduler_type not in ("DWRR", "WRR") or qq.weight != weight or not qq.scheduler:
                    continue
                counts[qq.scheduler] += 1
                shape[qq.scheduler] = max(shape.get(qq.scheduler, (False,)), (index == queue,))
        return _ranked(counts, lambda n: shape[n])

    def bound(self, attr: str) -> set[str]:
        """Every name of queue attribute ``attr`` (``wred_profile``, ``scheduler``) bound on this switch."""
        return {v for p in self.ports.values() if p.qos for qq in p.qos.queues.values() if (v := getattr(qq, attr))}


def _usable(q: QueueQos) -> bool:
    low, high, prob = q.ecn_min_bytes, q.ecn_max_bytes, q.ecn_max_probability
    return not (low is not None and high is not None and low >= high) and prob != 0


def _ecn_shape(q: PortQos | None, skip: int) -> QueueShape:
    if q is None:
        return ()
    return tuple(
        (i, (qq.ecn_min_bytes, qq.ecn_max_bytes, qq.ecn_max_probability))
        for i, qq in sorted(q.queues.items())
        if i != skip and qq.ecn_enabled
    )


def _sched_shape(q: PortQos | None, skip: int) -> QueueShape:
    if q is None:
        return ()
    return tuple((i, (qq.scheduler_type, qq.weight)) for i, qq in sorted(q.queues.items()) if i != skip)


class _Dialect:
    """A dialect bound to one switch's objects (none: a bare dialect, as in :data:`DIALECTS`)."""

    def __init__(self, switch: Switch | None = None) -> None:
        self.objects = SwitchObjects(switch)

    def on(self, switch: Switch | None) -> Any:
        return type(self)(switch)

    def finish(self, commands: Iterable[str]) -> Commands:
        return tuple(commands)

    def ecn_mark_mode(self, profile: str, queue: int, mode: str) -> Commands:
        """SAI's ECN mark mode (which colours are marked) is a SONiC WRED_PROFILE field; elsewhere: nothing."""
        return ()


SONIC_SAVE = "sudo config save -y"
SONIC_DSCP_MAP = "AZURE"  # the map SONiC's own QoS templates create
SONIC_WRED = ("AZURE_LOSSLESS", "UNIFAB_ROCE_ECN")  # a created WRED profile: SONiC's name unless it is taken
SONIC_STRICT = "scheduler.strict"


class SonicCli(_Dialect):
    """CONFIG_DB edits with ``sonic-db-cli``; orchagent applies them live, ``config save`` keeps them."""

    def finish(self, commands: Iterable[str]) -> Commands:
        body = [c for c in commands if c != SONIC_SAVE]
        changes = any(
            c.startswith(("sonic-db-cli CONFIG_DB hset", "sonic-db-cli CONFIG_DB hdel", "sudo config ")) for c in body
        )
        return (*body, SONIC_SAVE) if changes else tuple(body)

    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands:
        bound = self.objects.dscp_map(port)
        create: Commands = ()
        if bound is None:
            bound = SONIC_DSCP_MAP
            pairs = [(str(d), str(tc)) for d, tc in sorted(dscp_to_tc.items())]
            if pairs:
                create = (sonic.hset(f"DSCP_TO_TC_MAP|{bound}", *pairs[0], *pairs[1:]),)
        return (*create, sonic.hset(f"PORT_QOS_MAP|{port}", "dscp_to_tc_map", _name(bound)))

    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands:
        return (sonic.pfc_enable(port, priorities),)

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (sonic.dscp_to_tc(map_name, dscp, tc),)

    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands:
        profile = self.objects.marking_profile(port, queue, (min_bytes, max_bytes))
        create: Commands = ()
        if profile is None:
            taken = self.objects.bound("wred_profile")
            profile = next(n for n in SONIC_WRED if n not in taken) if SONIC_WRED[0] in taken else SONIC_WRED[0]
            create = (_sonic_wred(profile, min_bytes, max_bytes, probability),)
        return (*create, sonic.queue_wred(port, queue, _name(profile)))

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return (sonic.wred_thresholds(profile, min_bytes, max_bytes),)

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (sonic.hset(f"WRED_PROFILE|{profile}", "green_drop_probability", str(percent)),)

    def ecn_mark_mode(self, profile: str, queue: int, mode: str) -> Commands:
        return (sonic.hset(f"WRED_PROFILE|{profile}", "ecn", _name(mode)),)

    def queue_strict(self, port: str, queue: int) -> Commands:
        scheduler = self.objects.strict_scheduler(port, queue)
        create: Commands = ()
        if scheduler is None:
            scheduler = SONIC_STRICT
            create = (sonic.hset(f"SCHEDULER|{scheduler}", "type", "STRICT"),)
        return (*create, sonic.queue_scheduler(port, queue, _name(scheduler)))

    def queue_weight(self, port: str, queue: int, percent: int) -> Commands:
        """The queue bound to a DWRR scheduler of that weight (one the switch has, else ``unifab_dwrr_<w>``):
        its current scheduler may be shared by other ports or queues, so it is left as it is."""
        scheduler = self.objects.weighted_scheduler(port, queue, percent)
        create: Commands = ()
        if scheduler is None:
            scheduler = f"unifab_dwrr_{percent}"
            create = (sonic.hset(f"SCHEDULER|{scheduler}", "type", "DWRR", ("weight", str(percent))),)
        return (*create, sonic.queue_scheduler(port, queue, _name(scheduler)))

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        commands = [sonic.hset(f"PORT_QOS_MAP|{port}", "pfcwd_sw_enable", _csv(priorities))]
        if wd is not None:
            commands.append(sonic.pfc_watchdog(port, wd))
        return tuple(commands)

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return (sonic.port_mtu(port, mtu),)

    def port_speed(self, port: str, mbps: int) -> Commands:
        return (sonic.port_speed(port, mbps),)

    def port_fec(self, port: str, fec: str) -> Commands:
        return (sonic.port_fec(port, fec),)

    def cable_length(self, port: str, metres: int) -> Commands:
        return (sonic.cable_length(port, metres),)

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        return (f"show lldp neighbors {_w(port)}",)

    def link_status(self, device: str, port: str) -> Commands:
        return (f"show interfaces status {_w(port)}", f"show interfaces transceiver eeprom {_w(port)}")


def _sonic_wred(profile: str, min_bytes: int, max_bytes: int, probability: int) -> str:
    """A WRED profile that ECN-marks green (RoCE) packets, as SONiC's own QoS templates write it."""
    return sonic.hset(
        f"WRED_PROFILE|{profile}",
        "ecn",
        "ecn_all",
        ("wred_green_enable", "true"),
        ("green_min_threshold", str(min_bytes)),
        ("green_max_threshold", str(max_bytes)),
        ("green_drop_probability", str(probability)),
    )


EOS_FEC = {"rs": "reed-solomon", "fc": "fire-code", "none": "disabled"}
EOS_CONFIGURE = "configure"
EOS_SAVE = ("end", "write memory")


class EosCli(_Dialect):
    """Lines pasted at the enable prompt: ``configure`` opens configuration mode, interface lines open the
    interface's context first, ``end`` and ``write memory`` close every group. EOS keeps no named objects for
    these settings (maps are global, ECN and schedulers are set on the interface's tx-queue)."""

    def finish(self, commands: Iterable[str]) -> Commands:
        body = [c for c in commands if c not in EOS_SAVE and c != EOS_CONFIGURE]
        changes = any(not c.startswith(("!", "show ")) for c in body)
        return (EOS_CONFIGURE, *body, *EOS_SAVE) if changes else tuple(body)

    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands:
        return (f"interface {port}", "qos trust dscp")

    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands:
        wanted = sorted(priorities)
        if not wanted:
            return (f"interface {port}", "no priority-flow-control")
        lines = [f"interface {port}", "priority-flow-control on"]
        lines += [f"priority-flow-control priority {p} {'no-drop' if p in wanted else 'drop'}" for p in range(8)]
        return tuple(lines)

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (f"qos map dscp {dscp} to traffic-class {tc}",)

    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands:
        return (
            f"interface {port}",
            f"tx-queue {queue}",
            f"random-detect ecn minimum-threshold {min_bytes} bytes maximum-threshold {max_bytes} bytes "
            f"max-mark-probability {probability}",
        )

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return (
            f"qos profile {profile}",
            f"tx-queue {queue}",
            f"random-detect ecn minimum-threshold {min_bytes} bytes maximum-threshold {max_bytes} bytes",
        )

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (f"qos profile {profile}", f"tx-queue {queue}", f"random-detect ecn max-mark-probability {percent}")

    def queue_strict(self, port: str, queue: int) -> Commands:
        return (f"interface {port}", f"tx-queue {queue}", "priority strict")

    def queue_weight(self, port: str, queue: int, percent: int) -> Commands:
        return (f"interface {port}", f"tx-queue {queue}", f"bandwidth percent {percent}")

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        lines = [f"interface {port}", "priority-flow-control pause watchdog"]
        if wd is not None and wd.action in ("drop", "errdisable", "notify-only"):
            lines.append(f"priority-flow-control pause watchdog port action {wd.action}")
        return tuple(lines)

    def port_mtu(self, port: str, mtu: int) -> Commands:
        set_mtu, note = clamp_mtu(eos_platform.PLATFORM, mtu)  # the rule unifab render follows (render.eos_config)
        return (*((f"! {note}",) if note else ()), f"interface {port}", f"mtu {set_mtu}")

    def port_speed(self, port: str, mbps: int) -> Commands:
        return (f"interface {port}", f"speed {mbps // 1000}g")

    def port_fec(self, port: str, fec: str) -> Commands:
        return (f"interface {port}", f"error-correction encoding {EOS_FEC.get(fec, fec)}")

    def cable_length(self, port: str, metres: int) -> Commands:
        return (f"! EOS sizes PFC headroom itself: check the platform's PFC buffer profile for {metres} m on {port}",)

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        return (f"show lldp neighbors {port} detail",)

    def link_status(self, device: str, port: str) -> Commands:
        return (f"show interfaces {port} status", f"show interfaces {port} transceiver")


NVUE_APPLY = "nv config apply -y"
NVUE_SAVE = "nv config save"
NVUE_DSCP_MAP = "unifab-dscp"
NVUE_MODES = {"STRICT": "strict", "DWRR": "dwrr"}


class NvueCli(_Dialect):
    """``nv set`` / ``nv unset`` staged, then one ``nv config apply -y`` and ``nv config save``.

    A port's QoS is whatever its bound profiles say (``interface <if> qos {mapping|pfc|congestion-control|
    egress-scheduler} profile``, ``default-global`` when unbound), and a profile is shared by every port bound
    to it. So a per-port fix binds the port to a profile holding the wanted content (see the module
    docstring); only settings the finding says are the shared profile's (a DSCP map entry, ECN thresholds)
    edit that profile. ``nv`` runs in a shell, so interface and profile names are shell-quoted when they are
    not plain words.
    """

    def finish(self, commands: Iterable[str]) -> Commands:
        body = [c for c in commands if not c.startswith("nv config apply") and c != NVUE_SAVE]
        changes = any(c.startswith(("nv set ", "nv unset ")) for c in body)
        return (*body, NVUE_APPLY, NVUE_SAVE) if changes else tuple(body)

    def _bind(self, port: str, kind: str, profile: str) -> str:
        return f"nv set interface {_w(port)} qos {kind} profile {_w(_name(profile))}"

    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands:
        bound = self.objects.dscp_map(port)
        if bound is not None:
            return (self._bind(port, "mapping", bound),)
        lines = [f"nv set qos mapping {NVUE_DSCP_MAP} trust l3"]
        lines += [
            f"nv set qos mapping {NVUE_DSCP_MAP} dscp {d} switch-priority {tc}" for d, tc in sorted(dscp_to_tc.items())
        ]
        return (*lines, self._bind(port, "mapping", NVUE_DSCP_MAP))

    def _pfc_profile(self, port: str, priorities: Iterable[int], cable_m: int | None) -> Commands:
        wanted = sorted(set(priorities))
        name = (
            "unifab-pfc-"
            + ("-".join(str(p) for p in wanted) or "off")
            + (f"-{cable_m}m" if cable_m is not None else "")
        )
        state = "enable" if wanted else "disable"
        lines = [
            f"# {port} gets PFC profile {name}; NVUE reprograms the port's buffers: expect momentary packet loss",
            f"nv unset qos pfc {name} switch-priority",
        ]
        if wanted:
            lines.append(f"nv set qos pfc {name} switch-priority {_csv(wanted)}")
        lines += [f"nv set qos pfc {name} tx {state}", f"nv set qos pfc {name} rx {state}"]
        if cable_m is not None:
            lines.append(f"nv set qos pfc {name} cable-length {cable_m}")
        return (*lines, self._bind(port, "pfc", name))

    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands:
        q = self.objects.qos(port)
        return self._pfc_profile(port, priorities, q.cable_len_m if q is not None else None)

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (f"nv set qos mapping {_w(map_name)} dscp {dscp} switch-priority {tc}",)

    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands:
        profile = self.objects.marking_profile(port, queue, (min_bytes, max_bytes))
        if profile is not None:
            return (self._bind(port, "congestion-control", profile),)
        marking = dict(_ecn_shape(self.objects.qos(port), queue))
        marking[queue] = (min_bytes, max_bytes, probability)
        name = f"unifab-ecn-{_digest(sorted(marking.items()))}"
        lines = []
        for tc, values in sorted(marking.items()):
            low, high, prob = cast(tuple[int | None, int | None, int | None], values)
            base = f"nv set qos congestion-control {name} traffic-class {tc}"
            lines.append(f"{base} ecn enable")
            lines += [
                f"{base} {field} {v}"
                for field, v in (("min-threshold", low), ("max-threshold", high), ("probability", prob))
                if v is not None
            ]
        return (*lines, self._bind(port, "congestion-control", name))

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        base = f"nv set qos congestion-control {_w(profile)} traffic-class {queue}"
        return (f"{base} min-threshold {min_bytes}", f"{base} max-threshold {max_bytes}")

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (f"nv set qos congestion-control {_w(profile)} traffic-class {queue} probability {percent}",)

    def queue_strict(self, port: str, queue: int) -> Commands:
        scheduler = self.objects.strict_scheduler(port, queue)
        if scheduler is not None:
            return (self._bind(port, "egress-scheduler", scheduler),)
        return self._scheduler_copy(port, queue, "STRICT", None)

    def queue_weight(self, port: str, queue: int, percent: int) -> Commands:
        return self._scheduler_copy(port, queue, "DWRR", percent)

    def _scheduler_copy(self, port: str, queue: int, kind: str, percent: int | None) -> Commands:
        """The port bound to an egress-scheduler profile like its own with ``queue`` scheduled ``kind`` (at DWRR
        ``percent``): the bound profile may be shared, so a copy (``unifab-ets-<digest>``) takes the change."""
        shape = dict(_sched_shape(self.objects.qos(port), queue))
        shape[queue] = (kind, percent)
        kept = {tc: v for tc, v in sorted(shape.items()) if cast(tuple[str | None, int | None], v)[0] in NVUE_MODES}
        name = f"unifab-ets-{_digest(sorted(kept.items()))}"
        lines = []
        for tc, values in kept.items():
            mode, weight = cast(tuple[str, int | None], values)
            lines.append(f"nv set qos egress-scheduler {name} traffic-class {tc} mode {NVUE_MODES[mode]}")
            if mode == "DWRR" and weight is not None:
                lines.append(f"nv set qos egress-scheduler {name} traffic-class {tc} bw-percent {weight}")
        return (*lines, self._bind(port, "egress-scheduler", name))

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        return (f"nv set interface {_w(port)} qos pfc-watchdog",)

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return (f"nv set interface {_w(port)} link mtu {mtu}",)

    def port_speed(self, port: str, mbps: int) -> Commands:
        return (f"nv set interface {_w(port)} link speed {mbps // 1000}G",)

    def port_fec(self, port: str, fec: str) -> Commands:
        return (f"nv set interface {_w(port)} link fec {'baser' if fec == 'fc' else fec}",)

    def cable_length(self, port: str, metres: int) -> Commands:
        """NVUE sizes headroom from the PFC profile's cable length: the port gets a profile of its own PFC
        priorities for ``metres``."""
        q = self.objects.qos(port)
        if q is None:
            return (f"# {port} is not in the switch's collected configuration: its PFC profile is unknown",)
        return self._pfc_profile(port, q.pfc_enabled, int(metres))

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        return (f"nv show interface {_w(port)} lldp",)

    def link_status(self, device: str, port: str) -> Commands:
        return (f"nv show interface {_w(port)} link", f"nv show interface {_w(port)} transceiver")


JUNOS_CONFIGURE = "configure"
JUNOS_COMMIT = "commit and-quit"


class JunosCli(_Dialect):
    """``set`` lines for Junos configuration mode, opened by ``configure``; ``commit and-quit`` activates and keeps
    each group (a Junos commit is persistent: there is no separate save) and returns to operational mode.

    unifab does not read Junos class-of-service yet, so no QoS finding arises on a Junos port; the QoS methods
    other than PFC answer with a comment saying what to set by hand rather than guess forwarding-class names.
    """

    def finish(self, commands: Iterable[str]) -> Commands:
        body = [c for c in commands if c not in (JUNOS_COMMIT, JUNOS_CONFIGURE)]
        changes = any(c.startswith(("set ", "delete ")) for c in body)
        return (JUNOS_CONFIGURE, *body, JUNOS_COMMIT) if changes else tuple(body)

    def _not_read(self, what: str) -> Commands:
        return (f"# {what}: unifab does not read Junos class-of-service yet; set it under [edit class-of-service]",)

    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands:
        return self._not_read(f"a DSCP classifier on {port} (classifiers dscp on its unit 0)")

    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands:
        wanted = sorted(priorities)
        if not wanted:
            return (f"delete class-of-service interfaces {port} congestion-notification-profile",)
        profile = "unifab-pfc-" + "-".join(str(p) for p in wanted)
        return (
            f"# the forwarding classes of priorities {_csv(wanted)} must be no-loss "
            "(set class-of-service forwarding-classes class NAME queue-num N no-loss)",
            *(
                f"set class-of-service congestion-notification-profile {profile} input ieee-802.1 code-point "
                f"{p:03b} pfc"
                for p in wanted
            ),
            f"set class-of-service interfaces {port} congestion-notification-profile {profile}",
        )

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return self._not_read(f"DSCP {dscp} to the forwarding class of queue {tc} in classifier {map_name}")

    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands:
        return self._not_read(f"explicit-congestion-notification on the scheduler of queue {queue} of {port}")

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return self._not_read(f"the drop-profile fill levels of queue {queue} ({min_bytes}..{max_bytes} B)")

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return self._not_read(f"the drop-profile probability of queue {queue} ({percent} %)")

    def queue_strict(self, port: str, queue: int) -> Commands:
        return self._not_read(f"priority strict-high on the scheduler of queue {queue} of {port}")

    def queue_weight(self, port: str, queue: int, percent: int) -> Commands:
        return self._not_read(f"transmit-rate percent {percent} on the scheduler of queue {queue} of {port}")

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        return self._not_read(f"the PFC watchdog of {port} (pfc-watchdog under its congestion-notification-profile)")

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return (f"set interfaces {port} mtu {mtu + MEDIA_MTU_OVERHEAD}",)

    def port_speed(self, port: str, mbps: int) -> Commands:
        if mbps % 1000:
            return (f"# {port}: {mbps} Mb/s is not a Junos speed",)
        return (
            "# on QFX5k/PTX channelized ports the speed is set per port under [edit chassis fpc N pic N port N]",
            f"set interfaces {port} speed {mbps // 1000}g",
        )

    def port_fec(self, port: str, fec: str) -> Commands:
        modes = {"none": "none", "fc": "fec74"}
        if fec in modes:
            return (f"set interfaces {port} gigether-options fec {modes[fec]}",)
        return (
            f"# {port}: RS-FEC is fec91 (RS-528) at 100G and fec119 (RS-544) at 200G/400G: "
            f"set interfaces {port} gigether-options fec fec91|fec119",
        )

    def cable_length(self, port: str, metres: int) -> Commands:
        return self._not_read(f"input cable-length {metres} of the congestion-notification-profile bound to {port}")

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        return (f"show lldp neighbors interface {port}",)

    def link_status(self, device: str, port: str) -> Commands:
        return (f"show interfaces {port} terse",)


class IbCli(_Dialect):
    """InfiniBand: no RoCE QoS to set; links are checked with infiniband-diags from a host on the fabric.

    The switch is found by its name inside its node description; ``iblinkinfo -l`` prints one line per port
    with the peer at its other end, width, speed and state.
    """

    def _na(self, what: str) -> Commands:
        return (f"# {what} does not apply to an InfiniBand switch (the subnet manager sets SLs and VLs)",)

    def trust_dscp(self, port: str, dscp_to_tc: Mapping[int, int]) -> Commands:
        return self._na("DSCP trust")

    def pfc_enable(self, port: str, priorities: Iterable[int]) -> Commands:
        return self._na("PFC")

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return self._na("a DSCP map")

    def queue_ecn(self, port: str, queue: int, min_bytes: int, max_bytes: int, probability: int = 100) -> Commands:
        return self._na("ECN marking")

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return self._na("ECN marking")

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return self._na("ECN marking")

    def queue_strict(self, port: str, queue: int) -> Commands:
        return self._na("a queue scheduler")

    def queue_weight(self, port: str, queue: int, percent: int) -> Commands:
        return self._na("a queue scheduler")

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        return self._na("the PFC watchdog")

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return self._na("a port MTU")

    def port_speed(self, port: str, mbps: int) -> Commands:
        return self._na("a fixed port speed")

    def port_fec(self, port: str, fec: str) -> Commands:
        return self._na("a FEC mode")

    def cable_length(self, port: str, metres: int) -> Commands:
        return self._na("a cable length")

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        # the node description holds the name unifab shows ("MF0;ib-leaf-r1:MQM8700/U1"): match it as a substring
        return (f"iblinkinfo -l --switches-only | grep -F -- {_w(device)}  # the lines of port {port}",)

    def link_status(self, device: str, port: str) -> Commands:
        return self.lldp_neighbors(device, port)


class UnknownOsCli:
    """A switch that was not collected: its OS is unknown, so no command is guessed."""

    def __init__(self, device: str) -> None:
        self.device = device

    def finish(self, commands: Iterable[str]) -> Commands:
        return tuple(commands)

    def __getattr__(self, name: str) -> Callable[..., Commands]:
        if name.startswith("__"):
            raise AttributeError(name)

        def explain(*_args: object, **_kwargs: object) -> Commands:
            return (f"# {self.device} was not collected, so its OS is unknown: collect it to get its commands",)

        return explain


class _Checked:
    """Every dialect call goes through here: a port name must be valid on the platform and every other name
    (map, profile, scheduler) a plain object name, also those the dialect reads from the switch; otherwise
    the command becomes a comment saying why. A setting's commands end with the platform's save step."""

    def __init__(self, inner: SwitchCli, p: Platform) -> None:
        self.inner, self.platform = inner, p

    def __getattr__(self, name: str) -> Callable[..., Commands]:
        method = getattr(self.inner, name)
        if name == "finish":
            return cast(Callable[..., Commands], method)

        def call(*args: Any) -> Commands:
            names = args[1:] if name in _DEVICE_FIRST else args  # the device name is only ever shell-quoted
            for i, value in enumerate(names):
                if not isinstance(value, str):
                    continue
                is_port = i == 0 and name not in _PORTLESS
                ok = safe_name(self.platform, value) if is_port else _OBJECT_NAME.fullmatch(value)
                if not ok:
                    return (self._refused(value, is_port),)
            try:
                result: Commands = method(*args)
            except _Unsafe as e:
                return (self._refused(str(e), False),)
            return result if name in _DEVICE_FIRST else self.inner.finish(result)

        return call

    def _refused(self, value: str, is_port: bool) -> str:
        shown = value.encode("unicode_escape").decode()[:80]
        what = f"{self.platform.title} port name" if is_port else "name for a QoS object"
        return f"{self.platform.comment} not printed: {shown!r} is not a valid {what}"


_DEVICE_FIRST = frozenset({"lldp_neighbors", "link_status"})  # verify commands: nothing to save
_PORTLESS = frozenset(
    {"dscp_to_tc", "ecn_thresholds", "ecn_probability", "ecn_mark_mode"}
)  # their first name is a map/profile


DIALECTS: dict[str, SwitchCli] = {
    "sonic": SonicCli(),
    "eos": EosCli(),
    "nvue": NvueCli(),
    "junos": JunosCli(),
    "ib": IbCli(),
}


def for_os(os_name: str | None, device: str = "", switch: Switch | None = None) -> SwitchCli:
    """The dialect of a switch's platform, bound to ``switch``'s objects when given; :class:`UnknownOsCli`
    when the OS is not known (``None``).

    Raises :class:`~unifab.platforms.UnknownPlatformError` for an OS no platform declares.
    """
    if os_name is None:
        return cast(SwitchCli, UnknownOsCli(device))
    p = platform(os_name, device or None)
    inner = cast(_Dialect, DIALECTS[p.name]).on(switch)
    return cast(SwitchCli, _Checked(inner, p))


def finish(os_name: str | None, commands: Iterable[str]) -> Commands:
    """``commands`` closed with the platform's save step (idempotent; unchanged for an unknown OS)."""
    if os_name is None:
        return tuple(commands)
    return DIALECTS[platform(os_name).name].finish(commands)
