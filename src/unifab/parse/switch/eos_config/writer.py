"""EOS records back to running-config text: :func:`dump`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from unifab.parse._text import natural_key
from unifab.parse.switch.eos_config.records import EosConfig, EosQosSettings, EosQueueConfig
from unifab.parse.switch.eos_config.tokens import format_seconds

__all__ = ["dump"]


def _group(
    mapping: Mapping[int, int], extra: Mapping[int, int] | None = None
) -> Iterator[tuple[list[int], int, int | None]]:
    """``{8: 1, 9: 1, 46: 5}`` -> ([8, 9], 1, None), ([46], 5, None), grouped by value (and ``extra``)."""
    groups: dict[tuple[int, int | None], list[int]] = {}
    for key in sorted(mapping):
        groups.setdefault((mapping[key], extra.get(key) if extra else None), []).append(key)
    for (value, ext), keys in groups.items():
        yield keys, value, ext


def _join(keys: Iterable[int]) -> str:
    return " ".join(str(k) for k in keys)


def _dump_queue(kind: str, q: EosQueueConfig, out: list[str]) -> None:
    out += ["   !", f"   {kind} {q.index}"]
    if q.strict is not None:
        out.append("      priority strict" if q.strict else "      no priority")
    if q.bandwidth_percent is not None:
        out.append(f"      bandwidth percent {q.bandwidth_percent}")
    if q.bandwidth_guaranteed_percent is not None:
        out.append(f"      bandwidth guaranteed percent {q.bandwidth_guaranteed_percent}")
    if q.shape_rate is not None:
        out.append(f"      shape rate {q.shape_rate}")
    if q.ecn is True:
        if q.min_threshold is None or q.max_threshold is None:
            raise ValueError(f"{kind} {q.index}: ECN on needs both thresholds")
        line = (
            f"      random-detect ecn minimum-threshold {q.min_threshold.value} {q.min_threshold.unit}"
            f" maximum-threshold {q.max_threshold.value} {q.max_threshold.unit}"
        )
        if q.max_mark_probability is not None:
            line += f" max-mark-probability {q.max_mark_probability}"
        if q.weight is not None:
            line += f" weight {q.weight}"
        out.append(line)
    elif q.ecn is False:
        out.append("      no random-detect ecn")
    if q.ecn_count is not None:
        out.append("      random-detect ecn count" if q.ecn_count else "      no random-detect ecn count")


def _dump_qos(s: EosQosSettings, out: list[str]) -> None:
    if s.trust == "disabled":
        out.append("   no qos trust")
    elif s.trust is not None:
        out.append(f"   qos trust {s.trust}")
    if s.default_cos is not None:
        out.append(f"   qos cos {s.default_cos}")
    if s.default_dscp is not None:
        out.append(f"   qos dscp {s.default_dscp}")
    if s.service_policy is not None:
        out.append(f"   service-policy type qos input {s.service_policy}")
    if s.shape_rate is not None:
        out.append(f"   shape rate {s.shape_rate}")
    if s.pfc_on is not None:
        out.append("   priority-flow-control on" if s.pfc_on else "   no priority-flow-control")
    for prio, no_drop in sorted(s.pfc_priorities.items()):
        out.append(f"   priority-flow-control priority {prio} {'no-drop' if no_drop else 'drop'}")
    if s.pfcwd_enabled is not None:
        out.append(("   " if s.pfcwd_enabled else "   no ") + "priority-flow-control pause watchdog")
    if s.pfcwd_action is not None:
        out.append(f"   priority-flow-control pause watchdog port action {s.pfcwd_action}")
    if s.pfcwd_timer is not None:
        t = s.pfcwd_timer
        line = "   priority-flow-control pause watchdog port timer"
        if t.timeout_ms is not None:
            line += f" timeout {format_seconds(t.timeout_ms)}"
        if t.polling_auto:
            line += " polling-interval auto"
        elif t.polling_interval_ms is not None:
            line += f" polling-interval {format_seconds(t.polling_interval_ms)}"
        if t.recovery_time_ms is not None:
            line += f" recovery-time {format_seconds(t.recovery_time_ms)}"
        if t.forced:
            line += " forced"
        out.append(line)
    for kind, queues in (("tx-queue", s.tx_queues), ("uc-tx-queue", s.uc_tx_queues), ("mc-tx-queue", s.mc_tx_queues)):
        for i in sorted(queues):
            _dump_queue(kind, queues[i], out)


def dump(cfg: EosConfig) -> str:
    """A running-config section that :func:`parse` reads back to ``cfg`` (``interface_qos`` is recomputed).

    ``speed_mbps`` is not written: it is read from ``speed``, so build interfaces with a ``speed`` string.
    Raises ``ValueError`` for a record the config cannot express (ECN on without both thresholds).
    """
    out: list[str] = []
    if cfg.hostname is not None:
        out += [f"hostname {cfg.hostname}", "!"]
    m = cfg.qos_maps
    for keys, tc, dp in _group(m.dscp_to_tc, m.dscp_drop_precedence):
        out.append(
            f"qos map dscp {_join(keys)} to traffic-class {tc}" + (f" drop-precedence {dp}" if dp is not None else "")
        )
    for keys, tc, _ in _group(m.cos_to_tc):
        out.append(f"qos map cos {_join(keys)} to traffic-class {tc}")
    for keys, q, _ in _group(m.tc_to_queue):
        out.append(f"qos map traffic-class {_join(keys)} to tx-queue {q}")
    for keys, d, _ in _group(m.tc_to_dscp):
        out.append(f"qos map traffic-class {_join(keys)} to dscp {d}")
    for keys, c, _ in _group(m.tc_to_cos):
        out.append(f"qos map traffic-class {_join(keys)} to cos {c}")
    if cfg.qos_rewrite_dscp:
        out.append("qos rewrite dscp")
    if cfg.ecn_allow_non_ect:
        out.append("qos random-detect ecn allow non-ect")
    if out and out[-1] != "!":
        out.append("!")
    for name in sorted(cfg.qos_profiles):
        out.append(f"qos profile {name}")
        _dump_qos(cfg.qos_profiles[name].qos, out)
        out.append("!")
    for name in sorted(cfg.interfaces, key=natural_key):
        i = cfg.interfaces[name]
        out.append(f"interface {name}")
        if i.description is not None:
            out.append(f"   description {i.description}")
        if i.shutdown:
            out.append("   shutdown")
        if i.mtu is not None:
            out.append(f"   mtu {i.mtu}")
        if i.speed is not None:
            out.append(f"   speed {i.speed}")
        if i.switchport is not None:
            out.append("   switchport" if i.switchport else "   no switchport")
        if i.ip_address is not None:
            out.append(f"   ip address {i.ip_address}")
        if i.channel_group is not None:
            mode = f" mode {i.channel_group_mode}" if i.channel_group_mode else ""
            out.append(f"   channel-group {i.channel_group}{mode}")
        if i.service_profile is not None:
            out.append(f"   service-profile {i.service_profile}")
        _dump_qos(i.qos, out)
        out.append("!")
    if cfg.pfc_all_off:
        out.append("priority-flow-control all off")
    wd = cfg.pfc_watchdog
    for word, ms in (
        ("timeout", wd.timeout_ms),
        ("polling-interval", wd.polling_interval_ms),
        ("recovery-time", wd.recovery_time_ms),
    ):
        if ms is not None:
            out.append(f"priority-flow-control pause watchdog default {word} {format_seconds(ms)}")
    if wd.action is not None:
        out.append(f"priority-flow-control pause watchdog action {wd.action}")
    if wd.override_action_drop:
        out.append("priority-flow-control pause watchdog override action drop")
    out.append("end")
    return "\n".join(out) + "\n"
