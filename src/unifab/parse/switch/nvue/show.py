"""The ``nv show`` outputs of RoCE, PFC, PFC watchdog, ECN and the RoCE counters (``parse_show_*``), read
with :mod:`unifab.parse.switch.nvue.show_reader`."""

from __future__ import annotations

import re
from typing import Any

from unifab.parse.switch.nvue.defaults import N_DSCP, N_PRIORITIES, N_TRAFFIC_CLASSES, TRUST_SHOW_NAMES
from unifab.parse.switch.nvue.records import (
    NvueCongestionControlShow,
    NvueEcn,
    NvuePfcProfileShow,
    NvuePfcWatchdogShow,
    NvuePfcWdClass,
    NvueRoceClass,
    NvueRoceCounters,
    NvueRocePool,
    NvueRoceStatus,
    NvueScheduler,
)
from unifab.parse.switch.nvue.show_reader import ShowReader, read_show

__all__ = [
    "parse_show_congestion_control",
    "parse_show_pfc",
    "parse_show_pfc_watchdog",
    "parse_show_roce",
    "parse_show_roce_counters",
]


def parse_show_roce(text: str | bytes, source: str = "<input>") -> NvueRoceStatus:
    """``nv show qos roce`` or ``nv show interface <if> qos roce status``."""
    r = ShowReader(read_show(text, source), source)
    enabled = r.flag("enable")
    if enabled is None:
        enabled = r.flag("state")
    pfc_value, pfc_line = r.show.value("pfc", "pfc-priority")
    tc_value, tc_line = r.show.value("congestion-control", "enabled-tc")
    ecn_tcs = [] if tc_value is None else r.numbers(tc_value, tc_line, "enabled-tc", N_TRAFFIC_CLASSES - 1)
    shared = NvueEcn(
        enabled=True,
        min_bytes=r.size("congestion-control", "min-threshold"),
        max_bytes=r.size("congestion-control", "max-threshold"),
        probability=r.number("congestion-control", "probability"),
        red_enabled=None,
    )
    trust_raw = r.text("trust", "trust-mode")
    dscp_to_tc: dict[int, int] = {}
    pcp_to_tc: dict[int, int] = {}
    tc_to_queue: dict[int, int] = {}
    schedulers: dict[int, NvueScheduler] = {}
    labelled: dict[str, dict[str, Any]] = {}

    mapping = r.table("RoCE PCP/DSCP->SP mapping configurations")
    if mapping is not None:
        c_pcp, c_dscp = r.column(mapping, "pcp"), r.column(mapping, "dscp")
        c_sp = r.column(mapping, "switch-prio")
        for line, cells in mapping.rows:
            if not cells[c_sp].strip():
                raise r.err(line, "a switch-prio value")
            sp = r.to_int(cells[c_sp], line, "switch-prio")
            pcps = r.numbers(cells[c_pcp], line, "pcp", N_PRIORITIES - 1)
            dscps = r.numbers(cells[c_dscp], line, "dscp", N_DSCP - 1)
            for p in pcps:
                pcp_to_tc[p] = sp
            for d in dscps:
                dscp_to_tc[d] = sp
            label = cells[0].strip()
            if label and not label.isdigit():
                entry = labelled.setdefault(label, {})
                entry.update(pcp=pcps[0] if len(pcps) == 1 else None, dscp=dscps[0] if len(dscps) == 1 else None, sp=sp)
    ets = r.table("RoCE SP->TC mapping and ETS configurations")
    if ets is not None:
        c_sp, c_tc = r.column(ets, "switch-prio"), r.column(ets, "traffic-class")
        c_w = r.column(ets, "scheduler-weight")
        for line, cells in ets.rows:
            sp = r.to_int(cells[c_sp], line, "switch-prio")
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            tc_to_queue[sp] = tc
            sched = None
            if cells[c_w].strip():
                sched = r.scheduler(cells[c_w], line)
                if schedulers.setdefault(tc, sched) != sched:
                    raise r.err(line, f"one scheduler per traffic class, TC{tc} has two")
            label = cells[0].strip()
            if label and not label.isdigit():
                labelled.setdefault(label, {}).update(sp=sp, tc=tc, sched=sched)
    classes = {
        name: NvueRoceClass(
            name=name,
            pcp=v.get("pcp"),
            dscp=v.get("dscp"),
            switch_priority=v.get("sp"),
            traffic_class=v.get("tc"),
            scheduler=v.get("sched"),
        )
        for name, v in sorted(labelled.items())
    }
    exceptions: tuple[str, ...] = ()
    exc_table = r.table("Exception List")
    if exc_table is not None:
        exceptions = tuple(
            "  ".join(c for c in cells if c) for _, cells in exc_table.rows if cells != ["No Data"] and any(cells)
        )
    features: dict[str, str] = {}
    feat = r.table("Extended Features")
    if feat is not None:
        c_f, c_s = r.column(feat, "Feature"), r.column(feat, "Status")
        features = {cells[c_f]: cells[c_s] for _, cells in feat.rows}
    return NvueRoceStatus(
        enabled=enabled,
        mode=r.text("mode"),
        trust=None if trust_raw is None else TRUST_SHOW_NAMES.get(trust_raw.replace(" ", ""), trust_raw),
        pfc_enabled=frozenset(
            () if pfc_value is None else r.numbers(pfc_value, pfc_line, "pfc-priority", N_PRIORITIES - 1)
        ),
        pfc_rx_enabled=r.flag("pfc", "rx-enabled"),
        pfc_tx_enabled=r.flag("pfc", "tx-enabled"),
        pfc_cable_length_m=r.number("pfc", "cable-length"),
        congestion_mode=r.text("congestion-control", "congestion-mode"),
        ecn=dict.fromkeys(sorted(ecn_tcs), shared),
        lldp_app_priority=r.number("lldp-app-tlv", "priority"),
        lldp_app_protocol_id=r.number("lldp-app-tlv", "protocol-id"),
        lldp_app_selector=r.text("lldp-app-tlv", "selector"),
        dscp_to_tc=dict(sorted(dscp_to_tc.items())),
        pcp_to_tc=dict(sorted(pcp_to_tc.items())),
        tc_to_queue=dict(sorted(tc_to_queue.items())),
        schedulers=dict(sorted(schedulers.items())),
        classes=classes,
        pools=_pools(r),
        exceptions=exceptions,
        features=features,
    )


def _pools(r: ShowReader) -> tuple[NvueRocePool, ...]:
    table = r.table("RoCE pool config", "RoCE Pool Status")
    if table is None:
        return ()
    cols = table.columns
    c_name, c_mode, c_size = r.column(table, "name"), r.column(table, "mode"), r.column(table, "size")
    c_sps, c_tcs = r.column(table, "switch-priorities"), r.column(table, "traffic-class")
    c_id = cols.index("pool-id") if "pool-id" in cols else None
    c_cur = cols.index("current-usage") if "current-usage" in cols else None
    c_max = cols.index("max-usage") if "max-usage" in cols else None
    pools: list[NvueRocePool] = []
    for line, cells in table.rows:
        size = cells[c_size].strip()
        percent = re.fullmatch(r"(\d+)%", size)
        pools.append(
            NvueRocePool(
                name=cells[c_name],
                mode=cells[c_mode].lower(),
                pool_id=None if c_id is None or not cells[c_id] else r.to_int(cells[c_id], line, "pool-id"),
                switch_priorities=frozenset(r.numbers(cells[c_sps], line, "switch-priorities", N_PRIORITIES - 1)),
                traffic_classes=frozenset(r.numbers(cells[c_tcs], line, "traffic-class", N_TRAFFIC_CLASSES - 1)),
                size_bytes=None if percent or size in ("inf", "") else r.to_bytes(size, line, "size"),
                size_percent=int(percent.group(1)) if percent else None,
                size_infinite=size == "inf",
                current_usage_bytes=None
                if c_cur is None or not cells[c_cur]
                else r.to_bytes(cells[c_cur], line, "current-usage"),
                max_usage_bytes=None
                if c_max is None or not cells[c_max]
                else r.to_bytes(cells[c_max], line, "max-usage"),
            )
        )
    return tuple(pools)


def parse_show_pfc(text: str | bytes, source: str = "<input>") -> NvuePfcProfileShow:
    """``nv show qos pfc <profile>``."""
    r = ShowReader(read_show(text, source), source)
    sps: set[int] = set()
    for row in r.show.rows:
        if row.path == ("[switch-priority]",):
            value = next((v for v in row.values if v), "")
            sps.update(r.numbers(value, row.line, "switch-priority", N_PRIORITIES - 1))
    return NvuePfcProfileShow(
        switch_priorities=frozenset(sps),
        rx_enabled=r.flag("rx"),
        tx_enabled=r.flag("tx"),
        cable_length_m=r.number("cable-length"),
        port_buffer_bytes=r.size("port-buffer"),
        xoff_threshold_bytes=r.size("xoff-threshold"),
        xon_threshold_bytes=r.size("xon-threshold"),
    )


def parse_show_pfc_watchdog(text: str | bytes, source: str = "<input>") -> NvuePfcWatchdogShow:
    """``nv show interface <if> qos pfc-watchdog``."""
    r = ShowReader(read_show(text, source), source)
    classes: dict[int, NvuePfcWdClass] = {}
    table = r.table("PFC WD Status")
    if table is not None:
        c_tc, c_st = r.column(table, "traffic-class"), r.column(table, "status")
        c_dl = r.column(table, "deadlock-count")
        for line, cells in table.rows:
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            if not cells[c_st]:
                raise r.err(line, "a status (OK or DEADLOCK)")
            classes[tc] = NvuePfcWdClass(cells[c_st], r.to_int(cells[c_dl], line, "deadlock-count"))
    return NvuePfcWatchdogShow(enabled=r.flag("state"), traffic_classes=dict(sorted(classes.items())))


def parse_show_congestion_control(text: str | bytes, source: str = "<input>") -> NvueCongestionControlShow:
    """``nv show qos congestion-control <profile>``."""
    r = ShowReader(read_show(text, source), source)
    out: dict[int, NvueEcn] = {}
    table = r.table("ECN Configurations")
    if table is not None:
        c_tc, c_ecn, c_red = r.column(table, "traffic-class"), r.column(table, "ECN"), r.column(table, "RED")
        c_min, c_max = r.column(table, "Min Th"), r.column(table, "Max Th")
        c_p = r.column(table, "Probability")
        for line, cells in table.rows:
            tc = r.to_int(cells[c_tc], line, "traffic-class")
            out[tc] = NvueEcn(
                enabled=r.to_flag(cells[c_ecn], line, "ECN"),
                min_bytes=r.to_bytes(cells[c_min], line, "Min Th"),
                max_bytes=r.to_bytes(cells[c_max], line, "Max Th"),
                probability=r.to_int(cells[c_p], line, "Probability"),
                red_enabled=r.to_flag(cells[c_red], line, "RED"),
            )
    return NvueCongestionControlShow(ecn=dict(sorted(out.items())))


def parse_show_roce_counters(text: str | bytes, source: str = "<input>") -> NvueRoceCounters:
    """``nv show interface <if> qos roce counters``: every leaf as ``path -> int`` (sizes in bytes)."""
    r = ShowReader(read_show(text, source), source)
    paths = {row.path[:-1] for row in r.show.rows}
    out: dict[str, int] = {}
    for row in r.show.rows:
        value = next((v for v in row.values if v), None)
        if value is None:
            if row.path in paths:
                continue  # a group heading
            raise r.err(row.line, f"a value for {'.'.join(row.path)}")
        out[".".join(row.path)] = r.to_bytes(value, row.line, ".".join(row.path))
    return NvueRoceCounters(counters=out)
