"""Fix commands for a switch in its own OS's language: SONiC CONFIG_DB edits, EOS CLI, NVUE ``nv set``.

Checks ask for an intent ("enable PFC on priority 3 of this port"); :func:`for_os` picks the dialect.
EOS answers are configuration lines entered from ``configure``; NVUE ones end with ``nv config apply``.
Settings a vendor keeps platform-managed (EOS cable length) say so instead of inventing a command.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from unifab.model import PfcWatchdog
from unifab.render import sonic

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


_DIALECTS: dict[str, SwitchCli] = {"sonic": SonicCli(), "eos": EosCli(), "nvue": NvueCli()}


def for_os(os_name: str) -> SwitchCli:
    """The dialect of a switch OS; SONiC's for an OS unifab cannot yet speak (the finding still names the key)."""
    return _DIALECTS.get(os_name, _DIALECTS["sonic"])
