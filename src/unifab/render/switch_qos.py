"""What every switch renderer derives from a :class:`~unifab.profile.QosProfile`, once.

The three switch languages (SONiC CONFIG_DB, EOS CLI, NVUE) say the same things in different words;
this module decides *what* they say so they cannot drift apart:

* the switch class of a packet is its 802.1p **priority**: DSCP → priority is the profile's
  ``dscp_to_priority``, and PFC priority *p* pauses class *p* (SONiC buffermgrd takes the lossless PG
  ids from ``pfc_enable``, EOS ties PFC priority *n* to traffic class *n*, NVUE runs PFC on switch
  priorities; reference switch-qos §1.4, §2.4, §3);
* the egress **queue** of priority *p* is ``priority_to_tc[p]``; RoCE and CNP must land in the
  profile's ``roce_queue``/``cnp_queue`` (a profile where they disagree is refused, not guessed);
* ETS entries and ECN queues are keyed by that egress queue.

Names are checked here against each OS's pattern before any renderer quotes them into a command.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from unifab.errors import RenderError
from unifab.parse._text import natural_key
from unifab.profile import EcnQueue, PortSpec, QosProfile, WatchdogProfile
from unifab.qos.headroom import (
    SPECTRUM_ASICS,
    HeadroomCalc,
    guess_asic,
    qbb_xoff_bytes,
    sonic_requirement,
)

__all__ = [
    "SwitchQos",
    "check_name",
    "derive",
    "headroom",
    "port_mtus",
    "sorted_ports",
]

N_PRIORITIES = 8
N_DSCP = 64
SCHEDULER_TSAS = ("ets", "strict")
WATCHDOG_ACTIONS = ("drop", "forward", "alert")
PORT_ROLES = ("host", "fabric")


def check_name(device_os: str, what: str, value: str, pattern: re.Pattern[str], shape: str) -> str:
    """``value`` when it fully matches ``pattern``; otherwise a :class:`RenderError` naming both."""
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise RenderError(device_os, f"{what} {value!r} is not a valid name (expected {shape})")
    return value


def sorted_ports(device_os: str, ports: Sequence[PortSpec], pattern: re.Pattern[str], shape: str) -> list[PortSpec]:
    """The ports in natural order, each name checked, no name twice, speeds and lengths sane."""
    seen: set[str] = set()
    for p in ports:
        check_name(device_os, "port", p.name, pattern, shape)
        if p.name in seen:
            raise RenderError(device_os, f"port {p.name} is listed twice")
        seen.add(p.name)
        if p.speed_mbps <= 0:
            raise RenderError(device_os, f"port {p.name}: speed must be positive Mb/s, got {p.speed_mbps}")
        if p.role not in PORT_ROLES:
            raise RenderError(device_os, f"port {p.name}: role must be one of {', '.join(PORT_ROLES)}, got {p.role!r}")
        if p.cable_m is not None and p.cable_m < 0:
            raise RenderError(device_os, f"port {p.name}: cable length must be >= 0 m, got {p.cable_m}")
    return sorted(ports, key=lambda p: natural_key(p.name))


@dataclass(frozen=True, slots=True)
class SwitchQos:
    """The profile as a switch runs it: classes are priorities, queues are egress queues."""

    name: str
    dscp_to_priority: dict[int, int]  # all 64 DSCPs
    lossless: tuple[int, ...]  # PFC (no-drop) priorities, ascending
    queue_of: dict[int, int]  # priority -> egress queue, all 8
    strict: frozenset[int]  # egress queues scheduled strict priority
    weights: dict[int, int]  # egress queue -> DWRR share (percent) for the "ets" queues
    ecn: dict[int, EcnQueue]  # egress queue -> ECN marking
    pfcwd: WatchdogProfile | None
    mtu: int
    roce_queue: int
    cnp_queue: int

    def cable_m(self, profile: QosProfile, port: PortSpec) -> int:
        return port.cable_m if port.cable_m is not None else profile.cable_m(port.name)


def _in(device_os: str, what: str, value: int, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise RenderError(device_os, f"{what} must be an integer in {lo}..{hi}, got {value!r}")
    return value


def derive(profile: QosProfile, device_os: str, mtu_range: tuple[int, int]) -> SwitchQos:
    """Check the profile is one a switch can run and derive the switch view of it.

    Refused with :class:`RenderError`: maps that do not cover every DSCP (0-63) and priority (0-7),
    values out of range, a RoCE DSCP that does not map to the RoCE priority (same for CNP), a RoCE
    priority that is not lossless, RoCE/CNP queues that ``priority_to_tc`` contradicts, ECN with
    min >= max or a probability outside 1-100, a switch MTU outside ``mtu_range``.
    """
    os_ = device_os
    if set(profile.dscp_to_priority) != set(range(N_DSCP)):
        raise RenderError(os_, "dscp_to_priority must map every DSCP 0..63")
    dscp = {d: _in(os_, f"priority of DSCP {d}", profile.dscp_to_priority[d], 0, 7) for d in range(N_DSCP)}
    if set(profile.priority_to_tc) != set(range(N_PRIORITIES)):
        raise RenderError(os_, "priority_to_tc must map every priority 0..7")
    queue_of = {p: _in(os_, f"traffic class of priority {p}", profile.priority_to_tc[p], 0, 7) for p in range(8)}
    lossless = tuple(sorted(_in(os_, "lossless priority", p, 0, 7) for p in profile.lossless_priorities))
    roce_dscp = _in(os_, "RoCE DSCP", profile.roce_dscp, 0, 63)
    cnp_dscp = _in(os_, "CNP DSCP", profile.cnp_dscp, 0, 63)
    roce_prio = _in(os_, "RoCE priority", profile.roce_priority, 0, 7)
    cnp_prio = _in(os_, "CNP priority", profile.cnp_priority, 0, 7)
    if dscp[roce_dscp] != roce_prio:
        raise RenderError(os_, f"RoCE DSCP {roce_dscp} maps to priority {dscp[roce_dscp]}, not {roce_prio}")
    if dscp[cnp_dscp] != cnp_prio:
        raise RenderError(os_, f"CNP DSCP {cnp_dscp} maps to priority {dscp[cnp_dscp]}, not {cnp_prio}")
    if roce_prio not in lossless:
        raise RenderError(os_, f"RoCE priority {roce_prio} is not among the lossless priorities {list(lossless)}")
    for what, prio, queue in (("RoCE", roce_prio, profile.roce_queue), ("CNP", cnp_prio, profile.cnp_queue)):
        if queue_of[prio] != queue:
            raise RenderError(os_, f"{what} queue {queue} contradicts priority_to_tc[{prio}] = {queue_of[prio]}")
    strict: set[int] = set()
    weights: dict[int, int] = {}
    for e in profile.ets:
        q = _in(os_, "ETS traffic class", e.tc, 0, 7)
        if q in strict or q in weights:
            raise RenderError(os_, f"ETS lists traffic class {q} twice")
        if e.tsa == "strict":
            strict.add(q)
        elif e.tsa == "ets":
            weights[q] = _in(os_, f"ETS share of traffic class {q}", e.bw_percent, 0, 100)
        else:
            raise RenderError(
                os_, f"ETS traffic class {q}: tsa must be one of {', '.join(SCHEDULER_TSAS)}, got {e.tsa!r}"
            )
    ecn: dict[int, EcnQueue] = {}
    for x in profile.ecn:
        q = _in(os_, "ECN queue", x.queue, 0, 7)
        if q in ecn:
            raise RenderError(os_, f"ECN lists queue {q} twice")
        if not 0 < x.min_bytes < x.max_bytes:
            raise RenderError(os_, f"ECN queue {q}: need 0 < min < max bytes, got {x.min_bytes}, {x.max_bytes}")
        _in(os_, f"ECN queue {q} max probability", x.max_probability, 1, 100)
        ecn[q] = x
    wd = profile.pfcwd
    if wd is not None and wd.action not in WATCHDOG_ACTIONS:
        raise RenderError(os_, f"PFC watchdog action must be one of {', '.join(WATCHDOG_ACTIONS)}, got {wd.action!r}")
    mtu = _in(os_, "switch MTU", profile.switch_mtu, *mtu_range)
    return SwitchQos(
        name=profile.name,
        dscp_to_priority=dscp,
        lossless=lossless,
        queue_of=queue_of,
        strict=frozenset(strict),
        weights=dict(sorted(weights.items())),
        ecn=dict(sorted(ecn.items())),
        pfcwd=wd,
        mtu=mtu,
        roce_queue=profile.roce_queue,
        cnp_queue=profile.cnp_queue,
    )


def port_mtus(
    device_os: str,
    ports: Sequence[PortSpec],
    mtu: int,
    mtus: Mapping[str, int] | None,
    mtu_range: tuple[int, int],
) -> dict[str, int]:
    """Each port's MTU: the switch's ``mtu``, or the one ``mtus`` gives the port (a switch↔switch link set to what
    its other end takes too, :mod:`unifab.fabric_plan`). A name in ``mtus`` that is none of ``ports``, or an MTU
    outside ``mtu_range``, is a :class:`RenderError`."""
    out = {p.name: mtu for p in ports}
    for name, value in (mtus or {}).items():
        if name not in out:
            raise RenderError(device_os, f"an MTU is given for port {name!r}, which is not among the rendered ports")
        out[name] = _in(device_os, f"MTU of port {name}", value, *mtu_range)
    return out


@functools.lru_cache(maxsize=4096)
def headroom(
    speed_mbps: int, cable_m: int, port_mtu: int, hwsku: str | None = None, platform: str | None = None
) -> HeadroomCalc:
    """Lossless PG headroom (xoff, xon, size in bytes) for a port: what QOS-HEADROOM requires.

    A known Spectrum ASIC (from ``platform``/``hwsku``) takes :func:`~unifab.qos.headroom.sonic_requirement`
    of the traditional buffer model: the HwSKU's ``pg_profile_lookup.ini`` row for the speed and the cable
    rounded up to the table's bucket, else SONiC's Mellanox formula at small packets 100 % (what the tables
    follow), no shared headroom pool (``size`` holds xoff + xon) and the lane count QOS-HEADROOM infers
    (8 lanes from 800G). An unknown ASIC takes the largest result over every Spectrum generation, never
    below the vendor-neutral 802.1Qbb bound: more buffer than some ASIC needs, never less than any asks.
    """
    name = guess_asic(platform, hwsku)
    asics = [SPECTRUM_ASICS[name]] if name else list(SPECTRUM_ASICS.values())
    lanes = 8 if speed_mbps >= 800_000 else 4
    calcs: list[HeadroomCalc] = []
    for asic in asics:
        need = sonic_requirement(speed_mbps, cable_m, port_mtu, asic, hwsku=hwsku if name else None, lanes=lanes)
        calcs.append(need.calc or HeadroomCalc(xoff=need.xoff, xon=need.xon, size=need.size, terms={}))
    best = max(calcs, key=lambda c: (c.xoff, c.size))
    floor = qbb_xoff_bytes(speed_mbps, cable_m, port_mtu)
    if best.xoff >= floor:
        return best
    extra = floor - best.xoff
    return HeadroomCalc(xoff=floor, xon=best.xon, size=best.size + extra, terms=best.terms)
