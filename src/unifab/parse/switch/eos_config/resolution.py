"""The QoS each Ethernet and Port-Channel interface ends up with: :func:`resolve`.

The applied ``qos profile`` first, the interface's own commands over it, the global maps over the
defaults of :mod:`~unifab.parse.switch.eos_config.defaults`; ``assumed`` names what rests on those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from unifab.parse.switch.eos_config.defaults import (
    DEFAULT_COS_TO_TC,
    DEFAULT_DSCP_TO_TC,
    DEFAULT_MTU_ROUTED,
    DEFAULT_MTU_SWITCHED,
    DEFAULT_PFC_ON,
    DEFAULT_PFCWD_ACTION,
    DEFAULT_PFCWD_ENABLED,
    DEFAULT_QUEUE_STRICT,
    DEFAULT_SWITCHPORT,
    DEFAULT_TC_TO_QUEUE,
    DEFAULT_TRUST_ROUTED,
    DEFAULT_TRUST_SWITCHED,
    QOS_INTERFACE_PREFIXES,
)
from unifab.parse.switch.eos_config.records import (
    EosConfig,
    EosInterface,
    EosInterfaceQos,
    EosPfcWatchdog,
    EosQosSettings,
    EosQueue,
    EosQueueConfig,
    EosWatchdogTimer,
)

__all__ = ["resolve"]


def _over(base: dict[int, int], top: Mapping[int, int]) -> dict[int, int]:
    out = dict(base)
    out.update(top)
    return dict(sorted(out.items()))


def _merge_queue(base: EosQueueConfig | None, top: EosQueueConfig) -> EosQueueConfig:
    if base is None:
        return top
    changes: dict[str, Any] = {}
    for name in ("strict", "bandwidth_percent", "bandwidth_guaranteed_percent", "shape_rate", "ecn_count"):
        value = getattr(top, name)
        if value is not None:
            changes[name] = value
    if top.ecn is not None:  # the ECN threshold group replaces as a unit
        for name in ("ecn", "min_threshold", "max_threshold", "max_mark_probability", "weight"):
            changes[name] = getattr(top, name)
    return dataclasses.replace(base, **changes)


def _resolve_queues(layers: Iterable[Iterable[EosQueueConfig]], assumed: set[str]) -> dict[int, EosQueue]:
    merged: dict[int, EosQueueConfig] = {}
    for layer in layers:
        for q in layer:
            merged[q.index] = _merge_queue(merged.get(q.index), q)
    out: dict[int, EosQueue] = {}
    for i in sorted(merged):
        q = merged[i]
        if q.strict is None:
            assumed.add("queues.strict")
        on = q.ecn is True
        out[i] = EosQueue(
            index=i,
            ecn_enabled=on,
            min_threshold=q.min_threshold if on else None,
            max_threshold=q.max_threshold if on else None,
            max_mark_probability=q.max_mark_probability if on else None,
            weight=q.weight if on else None,
            ecn_count=bool(q.ecn_count),
            bandwidth_percent=q.bandwidth_percent,
            bandwidth_guaranteed_percent=q.bandwidth_guaranteed_percent,
            strict=DEFAULT_QUEUE_STRICT if q.strict is None else q.strict,
            shape_rate=q.shape_rate,
        )
    return out


def _last(layers: Iterable[EosQosSettings], name: str) -> Any:
    value = None
    for layer in layers:
        v = getattr(layer, name)
        if v is not None:
            value = v
    return value


def _is_routed(iface: EosInterface) -> bool:
    if "." in iface.name:
        return True  # subinterfaces are routed
    if iface.switchport is not None:
        return not iface.switchport
    return iface.ip_address is not None or not DEFAULT_SWITCHPORT


def _interface_qos(cfg: EosConfig, iface: EosInterface) -> EosInterfaceQos:
    assumed: set[str] = set()
    profile = cfg.qos_profiles.get(iface.service_profile) if iface.service_profile else None
    layers = ([profile.qos] if profile else []) + [iface.qos]
    routed = _is_routed(iface)

    trust = _last(layers, "trust")
    if trust is None:
        assumed.add("trust")
        trust = DEFAULT_TRUST_ROUTED if routed else DEFAULT_TRUST_SWITCHED
    maps = cfg.qos_maps
    if len(maps.dscp_to_tc) < len(DEFAULT_DSCP_TO_TC):
        assumed.add("dscp_to_tc")
    if len(maps.cos_to_tc) < len(DEFAULT_COS_TO_TC):
        assumed.add("cos_to_tc")
    if len(maps.tc_to_queue) < len(DEFAULT_TC_TO_QUEUE):
        assumed.add("tc_to_queue")

    pfc_on_cfg = _last(layers, "pfc_on")
    pfc_on = (DEFAULT_PFC_ON if pfc_on_cfg is None else pfc_on_cfg) and not cfg.pfc_all_off
    prios: dict[int, bool] = {}
    for layer in layers:
        prios.update(layer.pfc_priorities)
    no_drop = frozenset(p for p, nd in prios.items() if nd)

    wd_enabled = _last(layers, "pfcwd_enabled")
    action = _last(layers, "pfcwd_action") or cfg.pfc_watchdog.action
    if action is None:
        assumed.add("pfcwd.action")
        action = DEFAULT_PFCWD_ACTION
    timer: EosWatchdogTimer = _last(layers, "pfcwd_timer") or EosWatchdogTimer()
    gwd = cfg.pfc_watchdog
    pfcwd = EosPfcWatchdog(
        enabled=DEFAULT_PFCWD_ENABLED if wd_enabled is None else wd_enabled,
        action=action,
        timeout_ms=gwd.timeout_ms if timer.timeout_ms is None else timer.timeout_ms,
        polling_interval_ms=(
            None
            if timer.polling_auto
            else gwd.polling_interval_ms
            if timer.polling_interval_ms is None
            else timer.polling_interval_ms
        ),
        polling_interval_auto=timer.polling_auto,
        recovery_time_ms=gwd.recovery_time_ms if timer.recovery_time_ms is None else timer.recovery_time_ms,
        forced=timer.forced,
    )

    queues = _resolve_queues(((*layer.tx_queues.values(), *layer.uc_tx_queues.values()) for layer in layers), assumed)
    mc_queues = _resolve_queues((layer.mc_tx_queues.values() for layer in layers), assumed)

    mtu = iface.mtu
    if mtu is None:
        assumed.add("mtu")
        mtu = DEFAULT_MTU_ROUTED if routed else DEFAULT_MTU_SWITCHED
    return EosInterfaceQos(
        interface=iface.name,
        service_profile=iface.service_profile,
        routed=routed,
        trust=trust,
        dscp_to_tc=_over(DEFAULT_DSCP_TO_TC, maps.dscp_to_tc),
        cos_to_tc=_over(DEFAULT_COS_TO_TC, maps.cos_to_tc),
        tc_to_queue=_over(DEFAULT_TC_TO_QUEUE, maps.tc_to_queue),
        default_cos=_last(layers, "default_cos"),
        default_dscp=_last(layers, "default_dscp"),
        service_policy=_last(layers, "service_policy"),
        pfc_on=pfc_on,
        pfc_no_drop=no_drop,
        pfc_enabled=no_drop if pfc_on else frozenset(),
        pfcwd=pfcwd,
        queues=queues,
        mc_queues=mc_queues,
        shape_rate=_last(layers, "shape_rate"),
        mtu=mtu,
        speed_mbps=iface.speed_mbps,
        shutdown=iface.shutdown,
        assumed=frozenset(assumed),
    )


def resolve(cfg: EosConfig) -> EosConfig:
    """``cfg`` with ``interface_qos`` recomputed from its interfaces, profiles, maps and PFC settings."""
    qos = {
        name: _interface_qos(cfg, iface)
        for name, iface in cfg.interfaces.items()
        if name.startswith(QOS_INTERFACE_PREFIXES)
    }
    return dataclasses.replace(cfg, interface_qos=qos)
