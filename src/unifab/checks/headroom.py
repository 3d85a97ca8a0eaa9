"""``QOS-HEADROOM``: is every lossless buffer big enough for the speed, cable length and MTU it serves?

:func:`check_headroom` applies the formulas of :mod:`unifab.qos.headroom` (the mlx5 driver's NIC rule,
SONiC's Mellanox switch formula, the 802.1Qbb lower bound where the ASIC is not known) to both ends of
every NIC↔switch link, and names the inputs and the formula it used in the evidence.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from unifab.checks.context import CheckContext, NicLink
from unifab.checks.registry import CheckSpec
from unifab.model import Finding, Fix, Headroom, Port, Severity, Switch
from unifab.qos.headroom import (
    MLX5_CELL_BYTES,
    MLX5_DEFAULT_CABLE_LEN_M,
    MLX5_MIN_MAX_MTU,
    SPECTRUM_ASICS,
    AsicParams,
    ceil1k,
    guess_asic,
    mlx5_required_buffer,
    mlx5_xoff_bytes,
    qbb_xoff_bytes,
    sonic_mellanox_xoff,
)
from unifab.render import sonic
from unifab.render.nic_cli import NicFixes

__all__ = [
    "CHECKS",
    "XOFF_TOLERANCE_BYTES",
    "check_headroom",
]

# ---------------------------------------------------------------------------------------------
# The check

XOFF_TOLERANCE_BYTES = 1024  # static tables run up to 1 KB off the formula (reference switch-qos §1.4)
SONIC_DEFAULT_PORT_MTU = 9100
SWITCH_DEFAULT_CABLE_M = 5  # assumed when neither CABLE_LENGTH nor the plan gives the port's cable
# LOSSLESS_TRAFFIC_PATTERN is not in the model: assume the sonic-buildimage template (buffers_config.j2)
# defaults. spp 50 is the smaller, current-default requirement, so static profiles built with 100 pass too.
CHECK_LOSSLESS_MTU = 1024
CHECK_SMALL_PACKET_PERCENTAGE = 50
SONIC_CABLE_LENGTH_TABLE = "AZURE"  # the CABLE_LENGTH key SONiC's templates use

_MLX5_SOURCE = "linux drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c (reference host-nic-roce.md §5.2)"
_SONIC_SOURCE = "sonic-swss cfgmgr/buffer_headroom_mellanox.lua (reference host-nic-roce.md §5.3, switch-qos §1.4)"
_QBB_SOURCE = (
    "802.1Qbb terms: 2 x MTU + cable round trip + IEEE 802.3 31B.3.7 pause quanta (reference host-nic-roce.md §5.3)"
)


@dataclass(slots=True)
class _SwitchInfo:
    """Per-switch facts the check needs once: ASIC, buffer model and who shares each profile."""

    asic: AsicParams | None
    asic_source: str
    dynamic_model: bool
    shared_headroom_pool: bool | None
    profiles: dict[str, Headroom]
    users: Counter[str]

    @classmethod
    def of(cls, switch: Switch) -> _SwitchInfo:
        name = guess_asic(switch.platform, switch.hwsku)
        source = f"guessed from platform {switch.platform!r} / hwsku {switch.hwsku!r}"
        profiles: dict[str, Headroom] = {}
        users: Counter[str] = Counter()
        dynamic = False
        for port in switch.ports.values():
            for hr in port.qos.headroom.values() if port.qos else ():
                dynamic = dynamic or hr.dynamic
                if hr.profile is not None:
                    profiles.setdefault(hr.profile, hr)
                    users[hr.profile] += 1
        static = [hr for hr in profiles.values() if not hr.dynamic and hr.xoff and hr.size is not None]
        shp = any(_uses_shp(hr) for hr in static) if static else None
        return cls(SPECTRUM_ASICS[name] if name else None, source, dynamic, shp, profiles, users)


def _uses_shp(hr: Headroom) -> bool:
    """A static lossless profile whose size is below its xoff holds only xon: the shared headroom pool holds xoff."""
    return hr.size is not None and hr.xoff is not None and hr.size < hr.xoff


def _input(value: Any, source: str) -> dict[str, Any]:
    return {"value": value, "source": source}


@dataclass(frozen=True, slots=True)
class _SwitchNeed:
    """What one lossless PG needs, how it was computed and from which inputs."""

    formula: str
    source: str
    xoff: int
    xon: int | None
    size: int | None
    shp: bool
    inputs: dict[str, dict[str, Any]]
    terms: dict[str, float]
    cable_m: float
    cable_from_config: bool

    def evidence(self) -> dict[str, Any]:
        return {
            "formula": self.formula,
            "formula_source": self.source,
            "inputs": self.inputs,
            "terms": self.terms,
            "required": {"xoff": self.xoff, "xon": self.xon, "size": self.size},
            "tolerance_bytes": XOFF_TOLERANCE_BYTES,
        }


def _switch_need(lk: NicLink, hr: Headroom | None, info: _SwitchInfo) -> _SwitchNeed | None:
    port = lk.port
    if port.speed_mbps is None or port.qos is None:
        return None
    speed = port.speed_mbps
    mtu, mtu_src = (port.mtu, f"PORT|{port.name} mtu") if port.mtu else (SONIC_DEFAULT_PORT_MTU, "SONiC default")
    cable: float
    if port.qos.cable_len_m is not None:
        cable, cable_src = port.qos.cable_len_m, f"CABLE_LENGTH {port.name}"
    elif lk.link.cable_m is not None:
        cable, cable_src = lk.link.cable_m, "plan cable_m (no CABLE_LENGTH on the port)"
    else:
        cable, cable_src = SWITCH_DEFAULT_CABLE_M, "assumed (neither CABLE_LENGTH nor the plan gives it)"
    inputs = {
        "speed_mbps": _input(speed, f"PORT|{port.name} speed"),
        "cable_m": _input(cable, cable_src),
        "port_mtu": _input(mtu, mtu_src),
    }
    cable_from_config = port.qos.cable_len_m is not None
    if info.asic is None:
        xoff = qbb_xoff_bytes(speed, cable, mtu)
        inputs["asic"] = _input(None, info.asic_source + ": unknown, using the vendor-neutral lower bound")
        return _SwitchNeed(
            "802.1Qbb lower bound", _QBB_SOURCE, xoff, None, None, False, inputs, {}, cable, cable_from_config
        )
    asic = info.asic
    if hr is not None and hr.xoff and hr.size is not None:
        shp, shp_src = _uses_shp(hr), "inferred from the profile (size < xoff means size holds xon only)"
    else:
        shp, shp_src = bool(info.shared_headroom_pool), "inferred from the switch's other lossless profiles"
    pipeline_1k = ceil1k(asic.pipeline_latency_kb * 1024)
    if hr is not None and hr.xon is not None:
        lanes, lanes_src = (8 if hr.xon >= 2 * pipeline_1k else 4), "inferred from the profile's xon"
    else:
        lanes, lanes_src = (8 if speed >= 800_000 else 4), "guessed from speed (lanes are not in the model)"
    calc = sonic_mellanox_xoff(
        speed,
        cable,
        mtu,
        asic,
        lossless_mtu=CHECK_LOSSLESS_MTU,
        small_packet_percentage=CHECK_SMALL_PACKET_PERCENTAGE,
        shared_headroom_pool=shp,
        lanes=lanes,
    )
    template = "LOSSLESS_TRAFFIC_PATTERN not collected: sonic-buildimage buffers_config.j2 default"
    inputs |= {
        "asic": _input(
            {
                "name": asic.name,
                "cell_size": asic.cell_size,
                "pipeline_latency_kb": asic.pipeline_latency_kb,
                "mac_phy_delay_kb": asic.mac_phy_delay_kb,
                "peer_response_time_kb": asic.peer_response_time_kb,
            },
            info.asic_source + "; values from sonic-buildimage platform/mellanox/asic_table.j2",
        ),
        "lossless_mtu": _input(CHECK_LOSSLESS_MTU, template),
        "small_packet_percentage": _input(CHECK_SMALL_PACKET_PERCENTAGE, template + " (since Dec 2024)"),
        "shared_headroom_pool": _input(shp, shp_src),
        "lanes": _input(lanes, lanes_src),
        "gearbox_delay": _input(0, "assumed: no gearbox"),
    }
    return _SwitchNeed(
        "sonic-mellanox",
        _SONIC_SOURCE,
        calc.xoff,
        calc.xon,
        calc.size,
        shp,
        inputs,
        calc.terms,
        cable,
        cable_from_config,
    )


def _finding(
    severity: Severity,
    lk: NicLink,
    message: str,
    nic_evidence: dict[str, Any],
    port_evidence: dict[str, Any],
    fixes: list[Fix],
    impact: dict[str, Any],
) -> Finding:
    nic, port = lk.nic, lk.port
    return Finding(
        check="QOS-HEADROOM",
        severity=severity,
        subject={"kind": "link", "a": str(nic.endpoint), "b": str(port.endpoint)},
        message=message,
        evidence={
            "a": {"device": nic.host, "nic": nic.id, "netdev": nic.netdev, **nic_evidence},
            "b": {"device": port.switch, "port": port.id, **port_evidence},
        },
        fix=tuple(fixes),
        impact=impact,
        entities=(lk.link.id,),
    )


def _nic_brief(lk: NicLink) -> dict[str, Any]:
    q = lk.nic.qos
    return {
        "mtu": lk.nic.mtu,
        "cable_len_m": q.cable_len_m if q else None,
        "pfc_enabled": sorted(q.pfc_enabled) if q else None,
    }


def _configured(hr: Headroom) -> dict[str, Any]:
    return {"profile": hr.profile, "xoff": hr.xoff, "xon": hr.xon, "size": hr.size, "dynamic": hr.dynamic}


def _cable_fix(lk: NicLink, need: _SwitchNeed) -> list[str]:
    """Set CABLE_LENGTH from the plan when the port has none, so the buffer manager sizes for the real cable."""
    if need.cable_from_config or lk.link.cable_m is None:
        return []
    # render/sonic.py has no CABLE_LENGTH builder; the value is "<metres>m" (switch-qos §1.2 CABLE_LENGTH)
    return [sonic.hset(f"CABLE_LENGTH|{SONIC_CABLE_LENGTH_TABLE}", lk.port.name, f"{math.ceil(lk.link.cable_m)}m")]


def _profile_name(port: Port, need: _SwitchNeed) -> str:
    """The name buffermgrd's traditional model gives a lossless profile (switch-qos §1.4)."""
    return f"pg_lossless_{port.speed_mbps}_{math.ceil(need.cable_m)}m_profile"


def _no_headroom(lk: NicLink, pg: int, tcs: list[int], hr: Headroom | None, info: _SwitchInfo) -> Finding:
    """A lossless priority whose PG has no BUFFER_PG entry, or one bound to a profile without xoff."""
    port = lk.port
    need = _switch_need(lk, hr, info)
    commands: list[str] = []
    if info.dynamic_model:
        commands.append(sonic.hset(f"BUFFER_PG|{port.name}|{pg}", "profile", "NULL"))
    elif need is not None and need.size is not None and need.xon is not None:
        name = _profile_name(port, need)
        known = info.profiles.get(name)
        commands += _cable_fix(lk, need)
        if known is None or not known.xoff or known.xoff < need.xoff - XOFF_TOLERANCE_BYTES:
            key = f"BUFFER_PROFILE|{name}"
            fields = {"pool": "ingress_lossless_pool", "xon": need.xon, "xoff": need.xoff, "size": need.size}
            commands += [sonic.hset(key, f, str(v)) for f, v in (fields | {"dynamic_th": 0}).items()]
        commands.append(sonic.hset(f"BUFFER_PG|{port.name}|{pg}", "profile", name))
    what = "no BUFFER_PG entry" if hr is None else f"profile {hr.profile} with no xoff (lossy)"
    port_ev: dict[str, Any] = {
        "pg": pg,
        "lossless_tcs": tcs,
        "pfc_enabled": sorted(port.qos.pfc_enabled) if port.qos else None,
        "tc_to_pg": {tc: port.qos.tc_to_pg.get(tc) for tc in tcs} if port.qos else None,
        "configured": _configured(hr) if hr is not None else None,
        "buffer_pgs": sorted(port.qos.headroom) if port.qos else [],
    }
    if need is not None:
        port_ev |= need.evidence()
    return _finding(
        Severity.CRITICAL,
        lk,
        f"{port.endpoint} PG {pg} carries lossless TC {','.join(map(str, tcs))} but has {what}: no PFC headroom",
        _nic_brief(lk),
        port_ev,
        [Fix(port.switch, tuple(commands))] if commands else [],
        {
            "summary": f"PG {pg} has no headroom: packets arriving after XOFF is sent overflow the PG and are "
            f"dropped on lossless class {','.join(map(str, tcs))}, so RoCE retransmits (go-back-N)",
            "priorities": tcs,
        },
    )


def _xoff_too_small(lk: NicLink, pg: int, tcs: list[int], hr: Headroom, info: _SwitchInfo) -> Finding | None:
    port = lk.port
    need = _switch_need(lk, hr, info)
    if need is None or hr.xoff is None or hr.xoff >= need.xoff - XOFF_TOLERANCE_BYTES:
        return None
    new_xoff = ceil1k(need.xoff)
    profile = hr.profile or _profile_name(port, need)
    key = f"BUFFER_PROFILE|{profile}"
    commands = [*_cable_fix(lk, need), sonic.hset(key, "xoff", str(new_xoff))]
    if not need.shp:
        new_size = hr.size + (new_xoff - hr.xoff) if hr.size is not None else need.size
        if new_size is not None:
            commands.append(sonic.hset(key, "size", str(new_size)))
    shared = info.users.get(profile, 1)
    short = need.xoff - hr.xoff
    port_ev: dict[str, Any] = {
        "pg": pg,
        "lossless_tcs": tcs,
        "configured": _configured(hr),
        "profile_ports": shared,
        "shortfall_bytes": short,
        "plan_cable_m": lk.link.cable_m,
        **need.evidence(),
    }
    bound = " (a lower bound: the ASIC is unknown)" if need.formula != "sonic-mellanox" else ""
    return _finding(
        Severity.ERROR,
        lk,
        f"{port.endpoint} PG {pg} xoff {hr.xoff} B is {short} B below the {need.xoff} B that "
        f"{port.speed_mbps // 1000 if port.speed_mbps else '?'}G over {need.cable_m:g} m needs{bound}",
        _nic_brief(lk),
        port_ev,
        [Fix(port.switch, tuple(commands))],
        {
            "summary": f"packets arriving after XOFF is sent overflow PG {pg} ({short} B short) and are dropped "
            f"on lossless class {','.join(map(str, tcs))}; RoCE then retransmits (go-back-N)"
            + (f"; profile {profile} is shared by {shared} ports" if shared > 1 else ""),
            "priorities": tcs,
            "shortfall_bytes": short,
        },
    )


def _switch_side(lk: NicLink, info: _SwitchInfo) -> Iterator[Finding]:
    q = lk.port.qos
    if q is None or not q.pfc_enabled:
        return
    lossless: dict[int, list[int]] = {}
    for tc in sorted(q.pfc_enabled):
        # buffermgrd takes PG ids from pfc_enable (priority == PG) when no TC→PG map says otherwise
        lossless.setdefault(q.tc_to_pg.get(tc, tc), []).append(tc)
    for pg, tcs in sorted(lossless.items()):
        hr = q.headroom.get(pg)
        if hr is None:
            if q.headroom:  # no BUFFER_PG rows at all means buffers were not collected: unknown, not absent
                yield _no_headroom(lk, pg, tcs, None, info)
        elif hr.dynamic:
            continue  # the switch computes it (SONiC dynamic model)
        elif not hr.xoff:
            yield _no_headroom(lk, pg, tcs, hr, info)
        elif (finding := _xoff_too_small(lk, pg, tcs, hr, info)) is not None:
            yield finding


def _nic_side(lk: NicLink) -> Iterator[Finding]:
    nic, port = lk.nic, lk.port
    q = nic.qos
    if q is None or q.rx_buffer_sizes is None or q.prio2buffer is None or not q.pfc_enabled:
        return
    if port.speed_mbps is None or nic.mtu is None:
        return
    sizes = q.rx_buffer_sizes
    holding: dict[int, list[int]] = {}
    for prio in sorted(q.pfc_enabled):
        if prio < len(q.prio2buffer) and q.prio2buffer[prio] < len(sizes):
            holding.setdefault(q.prio2buffer[prio], []).append(prio)
    if q.cable_len_m is not None:
        cable, cable_src = q.cable_len_m, f"mlnx_qos -i {nic.netdev} 'Cable len' (what the driver computes with)"
    else:
        cable, cable_src = MLX5_DEFAULT_CABLE_LEN_M, "mlx5 driver default MLX5E_DEFAULT_CABLE_LEN"
    xoff = mlx5_xoff_bytes(port.speed_mbps, cable, nic.mtu)
    required = mlx5_required_buffer(port.speed_mbps, cable, nic.mtu)
    short = [(b, prios, sizes[b]) for b, prios in sorted(holding.items()) if sizes[b] < required]
    if not short:
        return
    new_sizes = list(sizes)
    for b, _, _ in short:
        new_sizes[b] = math.ceil(required / MLX5_CELL_BYTES) * MLX5_CELL_BYTES
    empty = any(size == 0 for _, _, size in short)
    prios = sorted(p for _, ps, _ in short for p in ps)
    buffers = [
        {
            "buffer": b,
            "priorities": ps,
            "configured_size": size,
            "required_size": required,
            "shortfall_bytes": required - size,
        }
        for b, ps, size in short
    ]
    worst = min(size for _, _, size in short)
    yield _finding(
        Severity.CRITICAL if empty else Severity.ERROR,
        lk,
        f"{nic.endpoint} lossless receive buffer {','.join(str(b) for b, _, _ in short)} "
        f"({worst} B) is below the {required} B mlx5 needs for {port.speed_mbps // 1000}G, {cable} m, MTU {nic.mtu}",
        {
            "mtu": nic.mtu,
            "pfc_enabled": sorted(q.pfc_enabled),
            "rx_buffer_sizes": list(sizes),
            "prio2buffer": list(q.prio2buffer),
            "buffers": buffers,
            "formula": "mlx5 calculate_xoff + max_mtu + cell",
            "formula_source": _MLX5_SOURCE,
            "inputs": {
                "speed_mbps": _input(
                    port.speed_mbps, f"PORT|{port.name} speed (the link's speed; the NIC's is not collected)"
                ),
                "cable_m": _input(cable, cable_src),
                "mtu": _input(nic.mtu, f"/sys/class/net/{nic.netdev}/mtu"),
                "max_mtu": _input(MLX5_MIN_MAX_MTU, "driver floor max(netdev max_mtu, 9216)"),
                "cell_bytes": _input(MLX5_CELL_BYTES, "driver default when SBCAM gives no cell size"),
            },
            "xoff": xoff,
            "required": {"size": required},
        },
        {"speed_mbps": port.speed_mbps, "cable_len_m": port.qos.cable_len_m if port.qos else None},
        [NicFixes(nic).buffer_size(new_sizes)],
        {
            "summary": f"packets arriving after XOFF is sent overflow receive buffer "
            f"{','.join(str(b) for b, _, _ in short)} and are dropped on lossless priority "
            f"{','.join(map(str, prios))}; RoCE then retransmits (go-back-N)",
            "priorities": prios,
            "shortfall_bytes": required - worst,
        },
    )


def check_headroom(ctx: CheckContext) -> Iterator[Finding]:
    """Every lossless PG and NIC receive buffer on a NIC↔switch link must hold the PFC headroom it needs.

    Switch side: each PG a PFC-enabled TC maps to must exist and, when static, have an xoff within
    1 KB of the Mellanox formula (Spectrum switches) or above the 802.1Qbb lower bound (others).
    NIC side: each lossless receive buffer must be at least the mlx5 driver's ``xoff + max_mtu + cell``.
    """
    infos: dict[str, _SwitchInfo] = {}
    for lk in ctx.nic_links:
        switch = ctx.fabric.switches[lk.port.switch]
        info = infos.get(switch.name)
        if info is None:
            info = infos[switch.name] = _SwitchInfo.of(switch)
        yield from _switch_side(lk, info)
        yield from _nic_side(lk)


CHECKS = (
    CheckSpec(
        "QOS-HEADROOM",
        "A lossless PG or NIC receive buffer lacks the PFC headroom its speed, cable length and MTU need",
        "Bytes keep arriving for a cable round trip and the peer's response time after XOFF is sent; without "
        "that headroom the lossless class drops them and RoCE falls back to go-back-N retransmission.",
        "Raise the switch BUFFER_PROFILE xoff/size (or set the port's real CABLE_LENGTH so the buffer manager "
        "recomputes it), give every lossless PG a BUFFER_PG entry, and size the NIC's lossless buffer with "
        "mlnx_qos --buffer_size (dcb buffer on upstream mlx5).",
        check_headroom,
    ),
)
