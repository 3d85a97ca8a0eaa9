"""Fix commands for a switch in its own OS's language: SONiC CONFIG_DB edits, EOS CLI, NVUE ``nv set``.

Checks ask for an intent ("enable PFC on priority 3 of this port"); :func:`for_os` picks the dialect.
EOS answers are configuration lines entered from ``configure``; NVUE ones end with ``nv config apply``.
Settings a vendor keeps platform-managed (EOS cable length) say so instead of inventing a command.
The verify commands (``lldp_neighbors``, ``link_status``) show what a port sees after a cable is fixed.

Every port name reaches a command through one gate (:class:`_Checked`): a name that is not a valid name on
the switch's platform (:func:`unifab.platforms.safe_name`) is never printed into a command; the command
becomes a comment saying why. Shell dialects (SONiC, NVUE, InfiniBand tools) also quote what they print.
An InfiniBand switch gets the infiniband-diags; a switch whose OS is not known (not collected) gets a
comment naming it, never another OS's commands; an OS no platform declares is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from unifab.model import PfcWatchdog
from unifab.platforms import Platform, platform, safe_name
from unifab.render import sonic

__all__ = [
    "DIALECTS",
    "EOS_FEC",
    "Commands",
    "EosCli",
    "IbCli",
    "NvueCli",
    "SonicCli",
    "SwitchCli",
    "UnknownOsCli",
    "for_os",
]

Commands = tuple[str, ...]


class SwitchCli(Protocol):
    def trust_dscp(self, port: str, map_name: str) -> Commands: ...
    def pfc_enable(self, port: str, priorities: Iterable[int], map_name: str | None = None) -> Commands: ...
    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands: ...
    def queue_ecn(self, port: str, queue: int, profile: str, min_bytes: int, max_bytes: int) -> Commands: ...
    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands: ...
    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands: ...
    def queue_strict(self, port: str, queue: int, scheduler: str | None) -> Commands: ...
    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands: ...
    def port_mtu(self, port: str, mtu: int) -> Commands: ...
    def port_speed(self, port: str, mbps: int) -> Commands: ...
    def port_fec(self, port: str, fec: str) -> Commands: ...
    def cable_length(self, port: str, metres: int) -> Commands: ...
    def lldp_neighbors(self, device: str, port: str) -> Commands: ...
    def link_status(self, device: str, port: str) -> Commands: ...


_w = sonic.word


def _csv(priorities: Iterable[int]) -> str:
    return ",".join(str(p) for p in sorted(priorities))


class SonicCli:
    def trust_dscp(self, port: str, map_name: str) -> Commands:
        return (sonic.hset(f"PORT_QOS_MAP|{port}", "dscp_to_tc_map", map_name),)

    def pfc_enable(self, port: str, priorities: Iterable[int], map_name: str | None = None) -> Commands:
        return (sonic.pfc_enable(port, priorities),)

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (sonic.dscp_to_tc(map_name, dscp, tc),)

    def queue_ecn(self, port: str, queue: int, profile: str, min_bytes: int, max_bytes: int) -> Commands:
        return (sonic.queue_wred(port, queue, profile),)

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return (sonic.wred_thresholds(profile, min_bytes, max_bytes),)

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (sonic.hset(f"WRED_PROFILE|{profile}", "green_drop_probability", str(percent)),)

    def queue_strict(self, port: str, queue: int, scheduler: str | None) -> Commands:
        return (sonic.queue_scheduler(port, queue, scheduler or "scheduler.strict"),)

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


EOS_FEC = {"rs": "reed-solomon", "fc": "fire-code", "none": "disabled"}


class EosCli:
    """Lines to enter in ``configure`` mode; interface lines open the interface's context first."""

    def trust_dscp(self, port: str, map_name: str) -> Commands:
        return (f"interface {port}", "qos trust dscp")

    def pfc_enable(self, port: str, priorities: Iterable[int], map_name: str | None = None) -> Commands:
        wanted = sorted(priorities)
        if not wanted:
            return (f"interface {port}", "no priority-flow-control")
        lines = [f"interface {port}", "priority-flow-control on"]
        lines += [f"priority-flow-control priority {p} {'no-drop' if p in wanted else 'drop'}" for p in range(8)]
        return tuple(lines)

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (f"qos map dscp {dscp} to traffic-class {tc}",)

    def queue_ecn(self, port: str, queue: int, profile: str, min_bytes: int, max_bytes: int) -> Commands:
        return (
            f"interface {port}",
            f"tx-queue {queue}",
            f"random-detect ecn minimum-threshold {min_bytes} bytes maximum-threshold {max_bytes} bytes "
            "max-mark-probability 100",
        )

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return (
            f"qos profile {profile}",
            f"tx-queue {queue}",
            f"random-detect ecn minimum-threshold {min_bytes} bytes maximum-threshold {max_bytes} bytes",
        )

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (f"qos profile {profile}", f"tx-queue {queue}", f"random-detect ecn max-mark-probability {percent}")

    def queue_strict(self, port: str, queue: int, scheduler: str | None) -> Commands:
        return (f"interface {port}", f"tx-queue {queue}", "priority strict")

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        lines = [f"interface {port}", "priority-flow-control pause watchdog"]
        if wd is not None and wd.action in ("drop", "errdisable", "notify-only"):
            lines.append(f"priority-flow-control pause watchdog port action {wd.action}")
        return tuple(lines)

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return (f"interface {port}", f"mtu {mtu}")

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


class NvueCli:
    """``nv set`` commands; the QoS profile is the one the port's mapping uses (``default-global`` by default).

    ``nv`` runs in a shell, so interface and profile names (read from the switch's configuration) are
    shell-quoted when they are not plain words.
    """

    APPLY = "nv config apply"

    def trust_dscp(self, port: str, map_name: str) -> Commands:
        return (f"nv set qos mapping {_w(map_name)} trust l3", self.APPLY)

    def pfc_enable(self, port: str, priorities: Iterable[int], map_name: str | None = None) -> Commands:
        profile = map_name or "default-global"
        wanted = _csv(priorities)
        if not wanted:
            return (f"nv unset qos pfc {_w(profile)}", self.APPLY)
        return (
            f"nv set qos pfc {_w(profile)} switch-priority {wanted}",
            f"nv set qos pfc {_w(profile)} tx enable",
            f"nv set qos pfc {_w(profile)} rx enable",
            self.APPLY,
        )

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return (f"nv set qos mapping {_w(map_name)} dscp {dscp} switch-priority {tc}", self.APPLY)

    def queue_ecn(self, port: str, queue: int, profile: str, min_bytes: int, max_bytes: int) -> Commands:
        return (
            f"nv set qos congestion-control {_w(profile)} traffic-class {queue} min-threshold {min_bytes} "
            f"max-threshold {max_bytes} probability 100",
            self.APPLY,
        )

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return (
            f"nv set qos congestion-control {_w(profile)} traffic-class {queue} min-threshold {min_bytes} "
            f"max-threshold {max_bytes}",
            self.APPLY,
        )

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return (f"nv set qos congestion-control {_w(profile)} traffic-class {queue} probability {percent}", self.APPLY)

    def queue_strict(self, port: str, queue: int, scheduler: str | None) -> Commands:
        return (
            f"nv set qos egress-scheduler {_w(scheduler or 'default-global')} traffic-class {queue} mode strict",
            self.APPLY,
        )

    def pfc_watchdog(self, port: str, priorities: Iterable[int], wd: PfcWatchdog | None) -> Commands:
        return (f"nv set interface {_w(port)} qos pfc-watchdog", self.APPLY)

    def port_mtu(self, port: str, mtu: int) -> Commands:
        return (f"nv set interface {_w(port)} link mtu {mtu}", self.APPLY)

    def port_speed(self, port: str, mbps: int) -> Commands:
        return (f"nv set interface {_w(port)} link speed {mbps // 1000}G", self.APPLY)

    def port_fec(self, port: str, fec: str) -> Commands:
        return (f"nv set interface {_w(port)} link fec {'baser' if fec == 'fc' else fec}", self.APPLY)

    def cable_length(self, port: str, metres: int) -> Commands:
        return (f"nv set qos pfc default-global cable-length {metres}", self.APPLY)

    def lldp_neighbors(self, device: str, port: str) -> Commands:
        return (f"nv show interface {_w(port)} lldp",)

    def link_status(self, device: str, port: str) -> Commands:
        return (f"nv show interface {_w(port)} link", f"nv show interface {_w(port)} transceiver")


class IbCli:
    """InfiniBand: no RoCE QoS to set; links are checked with infiniband-diags from a host on the fabric.

    The switch is found by its name inside its node description; ``iblinkinfo -l`` prints one line per port
    with the peer at its other end, width, speed and state.
    """

    def _na(self, what: str) -> Commands:
        return (f"# {what} does not apply to an InfiniBand switch (the subnet manager sets SLs and VLs)",)

    def trust_dscp(self, port: str, map_name: str) -> Commands:
        return self._na("DSCP trust")

    def pfc_enable(self, port: str, priorities: Iterable[int], map_name: str | None = None) -> Commands:
        return self._na("PFC")

    def dscp_to_tc(self, map_name: str, dscp: int, tc: int) -> Commands:
        return self._na("a DSCP map")

    def queue_ecn(self, port: str, queue: int, profile: str, min_bytes: int, max_bytes: int) -> Commands:
        return self._na("ECN marking")

    def ecn_thresholds(self, profile: str, queue: int, min_bytes: int, max_bytes: int) -> Commands:
        return self._na("ECN marking")

    def ecn_probability(self, profile: str, queue: int, percent: int) -> Commands:
        return self._na("ECN marking")

    def queue_strict(self, port: str, queue: int, scheduler: str | None) -> Commands:
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

    def __getattr__(self, name: str) -> Callable[..., Commands]:
        if name.startswith("__"):
            raise AttributeError(name)

        def explain(*_args: object, **_kwargs: object) -> Commands:
            return (f"# {self.device} was not collected, so its OS is unknown: collect it to get its commands",)

        return explain


class _Checked:
    """Every dialect call goes through here: a port name must be valid on the platform and every other name
    (map, profile, scheduler) a plain object name; otherwise the command becomes a comment saying why."""

    def __init__(self, inner: SwitchCli, p: Platform) -> None:
        self.inner, self.platform = inner, p

    def __getattr__(self, name: str) -> Callable[..., Commands]:
        method = getattr(self.inner, name)

        def call(*args: Any) -> Commands:
            names = args[1:] if name in _DEVICE_FIRST else args  # the device name is only ever shell-quoted
            for i, value in enumerate(names):
                if not isinstance(value, str):
                    continue
                is_port = i == 0 and name not in _PORTLESS
                ok = safe_name(self.platform, value) if is_port else _OBJECT_NAME.fullmatch(value)
                if not ok:
                    shown = value.encode("unicode_escape").decode()[:80]
                    what = f"{self.platform.title} port name" if is_port else "name for a QoS object"
                    return (f"{self.platform.comment} not printed: {shown!r} is not a valid {what}",)
            result: Commands = method(*args)
            return result

        return call


_DEVICE_FIRST = frozenset({"lldp_neighbors", "link_status"})
_PORTLESS = frozenset({"dscp_to_tc", "ecn_thresholds", "ecn_probability"})  # their first name is a map/profile
_OBJECT_NAME = re.compile(r"[A-Za-z0-9_.:@+-]{1,64}")


DIALECTS: dict[str, SwitchCli] = {"sonic": SonicCli(), "eos": EosCli(), "nvue": NvueCli(), "ib": IbCli()}


def for_os(os_name: str | None, device: str = "") -> SwitchCli:
    """The dialect of a switch's platform; :class:`UnknownOsCli` when the OS is not known (``None``).

    Raises :class:`~unifab.platforms.UnknownPlatformError` for an OS no platform declares.
    """
    if os_name is None:
        return cast(SwitchCli, UnknownOsCli(device))
    p = platform(os_name, device or None)
    return cast(SwitchCli, _Checked(DIALECTS[p.name], p))
