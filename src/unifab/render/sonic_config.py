"""SONiC CONFIG_DB for a set of lossless RoCE ports, as pure data: render, validate, apply, patch.

:func:`render_config_db` writes the tables a lossless RoCE port needs (reference switch-qos §1.2-1.4),
in the nested ``config_db.json`` shape (``{"TABLE": {"key": {field: "string"}}}``), keys joined
with ``|``, one key per port (and per port and queue), every value a string. References are **plain
names** (schema version_3_0_3 and later, after ``db_migrator`` rewrote ``[TABLE|name]``), which is
what current SONiC releases store; :func:`validate_config_db` (:mod:`unifab.render.sonic_validate`,
re-exported here) accepts both forms when it reads.

What is rendered, for profile ``NAME`` (the profile's name, a SONiC map name):

* ``DSCP_TO_TC_MAP|NAME`` (all 64 DSCPs → priority), ``TC_TO_PRIORITY_GROUP_MAP|NAME`` (each lossless
  class to the PG of the same number — buffermgrd takes PG ids from ``pfc_enable`` — others to PG 0),
  ``TC_TO_QUEUE_MAP|NAME`` and ``MAP_PFC_PRIORITY_TO_QUEUE|NAME`` (both priority → egress queue, so a
  PFC frame pauses the queue its class uses);
* ``PORT_QOS_MAP|<port>``: the four maps, ``pfc_enable`` and ``pfcwd_sw_enable`` (the lossless
  priorities; the latter only with a watchdog);
* ``QUEUE|<port>|<q>`` for every queue the ETS or ECN settings name: ``scheduler`` and, on ECN
  queues, ``wred_profile``; ``SCHEDULER|NAME_STRICT`` and ``SCHEDULER|NAME_DWRR_<weight>`` (weight
  1..100: a 0 % share becomes 1, SONiC's minimum); ``WRED_PROFILE|NAME_Q<q>`` with ``ecn_all``, all
  colours enabled at the profile's thresholds and ``*_drop_probability`` = its marking probability;
* ``PFC_WD|<port>`` (action, detection/restoration ms) and ``PFC_WD|GLOBAL`` ``POLL_INTERVAL``
  (200 ms, never above the detection or restoration time, within 100..1000);
* ``CABLE_LENGTH|AZURE`` (``<m>m`` per port), ``BUFFER_PROFILE|pg_lossless_<speed>_<cable>m[_mtu<mtu>]_profile``
  (static headroom from :func:`unifab.render.switch_qos.headroom`, pool ``ingress_lossless_pool``) and
  ``BUFFER_PG|<port>|<pg or range>`` for the lossless PGs (consecutive ones as a range, ``3-4``);
* ``PORT|<port>`` ``mtu`` only: speed, FEC and lanes are the port's own, not the QoS intent's.

Buffer pools are platform data (sonic-cfggen's buffers template sizes them per SKU), so they are not
rendered: the profiles name SONiC's standard ``ingress_lossless_pool``.

:func:`apply_to_config_db` is what CONFIG_DB holds after the rendered rows are written: a rendered
row replaces the rendered fields and drops the fields of that row the renderer manages but did not
write (:data:`MANAGED_FIELDS`); a rendered port's queues 0-7 and watchdog row that the render does
not write are removed (:data:`OWNED_ROWS`); a current key that covers a rendered port or index together
with others (``"Ethernet0,Ethernet4|0-2"``) is split so the others keep their settings. BUFFER_PG
entries of PGs the profile no longer makes lossless, and objects nothing references any more, are left
as they are. :func:`json_patch` is the
RFC 6902 patch from the current CONFIG_DB to that result, in the form ``config apply-patch`` takes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from unifab.errors import ParseError, RenderError
from unifab.parse._text import natural_key
from unifab.profile import PortSpec, QosProfile
from unifab.qos.headroom import sonic_cable_length_m
from unifab.render.sonic_validate import (
    INDEX,
    MTU_RANGE,
    PORT_MAP_FIELDS,
    SONIC_NAME,
    STANDARD_POOLS,
    validate_config_db,
)
from unifab.render.switch_qos import SwitchQos, derive, headroom, port_mtus, sorted_ports

__all__ = [
    "CABLE_LENGTH_KEY",
    "MANAGED_FIELDS",
    "OWNED_ROWS",
    "PORT_NAME",
    "SONIC_NAME",
    "STANDARD_POOLS",
    "apply_to_config_db",
    "json_patch",
    "pg_ranges",
    "render_config_db",
    "validate_config_db",
]

Db = dict[str, dict[str, dict[str, str]]]

OS = "sonic"
CURRENT = "<current CONFIG_DB>"
PORT_NAME = re.compile(r"Ethernet\d{1,6}")  # a spine of a 100,000-GPU fabric: Ethernet100088
CABLE_LENGTH_KEY = "AZURE"
LOSSLESS_POOL = "ingress_lossless_pool"
SONIC_DEFAULT_MTU = 9100
POLL_INTERVAL_MS = 200
# Fields of a row the renderer owns: a rendered row drops these when it does not write them.
# ``None`` means every field of the row (the whole row is the renderer's).
MANAGED_FIELDS: dict[str, frozenset[str] | None] = {
    "PORT": frozenset({"mtu"}),
    "PORT_QOS_MAP": frozenset({*PORT_MAP_FIELDS, "pfc_enable", "pfcwd_sw_enable"}),
    "CABLE_LENGTH": frozenset(),  # per-port fields: only the rendered ports change
    "PFC_WD": None,
}
# Rows a rendered port owns even where the render writes nothing: unicast queues 0-7, the watchdog row.
OWNED_ROWS: dict[str, range | None] = {"QUEUE": range(8), "PFC_WD": None}
_GLOBAL_POLL = frozenset({"POLL_INTERVAL"})
# Tables keyed by port (list) and index (range), or by port (list) alone: keys that overlap are split.
_PORT_INDEX_TABLES = frozenset({"QUEUE", "BUFFER_PG", "BUFFER_QUEUE"})
_PORT_TABLES = frozenset(
    {"PORT_QOS_MAP", "PFC_WD", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"}
)


# --- render ---------------------------------------------------------------------------------------


def render_config_db(
    ports: Sequence[PortSpec],
    profile: QosProfile,
    *,
    hwsku: str | None = None,
    platform: str | None = None,
    mtus: Mapping[str, int] | None = None,
) -> Db:
    """The CONFIG_DB tables that make ``ports`` lossless RoCE ports running ``profile``.

    ``hwsku``/``platform`` pick the ASIC whose headroom formula sizes the lossless PGs (unknown: the
    largest over the Spectrum generations). ``mtus`` gives some ports another MTU than the profile's switch
    MTU (a link to a switch whose platform takes less), their PG headroom sized for it. Raises
    :class:`~unifab.errors.RenderError` for a port name that is not ``Ethernet<n>``, a profile name that is not
    a SONiC map name, or a profile a switch cannot run (see :func:`unifab.render.switch_qos.derive`).
    """
    name = _name(profile.name)
    sq = derive(profile, OS, MTU_RANGE)
    specs = sorted_ports(OS, ports, PORT_NAME, "Ethernet<n>")
    port_mtu = port_mtus(OS, specs, sq.mtu, mtus, MTU_RANGE)
    db: Db = {
        "DSCP_TO_TC_MAP": {name: {str(d): str(p) for d, p in sq.dscp_to_priority.items()}},
        "TC_TO_PRIORITY_GROUP_MAP": {name: {str(t): str(t if t in sq.lossless else 0) for t in range(8)}},
        "TC_TO_QUEUE_MAP": {name: {str(p): str(q) for p, q in sq.queue_of.items()}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {name: {str(p): str(q) for p, q in sq.queue_of.items()}},
    }
    schedulers = _schedulers(sq, name)
    if schedulers:
        db["SCHEDULER"] = _scheduler_rows(sq, name)
    if sq.ecn:
        db["WRED_PROFILE"] = {_wred_name(name, q): _wred(sq, q) for q in sq.ecn}
    tables: dict[str, dict[str, dict[str, str]]] = {
        t: {} for t in ("PORT", "PORT_QOS_MAP", "QUEUE", "BUFFER_PROFILE", "BUFFER_PG", "PFC_WD")
    }
    cable: dict[str, str] = {}
    pfc = ",".join(str(p) for p in sq.lossless)
    for spec in specs:
        port = spec.name
        mtu = port_mtu[port]
        tables["PORT"][port] = {"mtu": str(mtu)}
        qos_map = dict.fromkeys(PORT_MAP_FIELDS, name) | {"pfc_enable": pfc}
        if sq.pfcwd is not None:
            qos_map["pfcwd_sw_enable"] = pfc
        tables["PORT_QOS_MAP"][port] = qos_map
        for q in sorted({*schedulers, *sq.ecn}):
            row: dict[str, str] = {}
            if q in schedulers:
                row["scheduler"] = schedulers[q]
            if q in sq.ecn:
                row["wred_profile"] = _wred_name(name, q)
            tables["QUEUE"][f"{port}|{q}"] = row
        metres = sq.cable_m(profile, spec)
        # traditional buffermgrd finds a lossless profile only for its table's cable buckets (5m, 40m, 300m):
        # the port is configured for the bucket, and its headroom is sized for that length
        setting = sonic_cable_length_m(metres, hwsku)
        cable[port] = f"{setting}m"
        hr = headroom(spec.speed_mbps, setting, mtu, hwsku=hwsku, platform=platform)
        mtu_part = "" if mtu == SONIC_DEFAULT_MTU else f"_mtu{mtu}"
        pg_profile = f"pg_lossless_{spec.speed_mbps}_{setting}m{mtu_part}_profile"
        tables["BUFFER_PROFILE"][pg_profile] = {
            "dynamic_th": "0",
            "pool": LOSSLESS_POOL,
            "size": str(hr.size),
            "xoff": str(hr.xoff),
            "xon": str(hr.xon),
        }
        for pgs in pg_ranges(sq.lossless):
            tables["BUFFER_PG"][f"{port}|{pgs}"] = {"profile": pg_profile}
        if sq.pfcwd is not None:
            tables["PFC_WD"][port] = {
                "action": sq.pfcwd.action,
                "detection_time": str(sq.pfcwd.detection_ms),
                "restoration_time": str(sq.pfcwd.restoration_ms),
            }
    if sq.pfcwd is not None:
        wd = sq.pfcwd
        for what, ms, hi in (("detection", wd.detection_ms, 5000), ("restoration", wd.restoration_ms, 60000)):
            if not 100 <= ms <= hi:
                raise RenderError(OS, f"PFC watchdog {what} time must be 100..{hi} ms, got {ms}")
        poll = max(100, min(POLL_INTERVAL_MS, wd.detection_ms, wd.restoration_ms))
        tables["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": str(poll)}
    db.update({t: rows for t, rows in tables.items() if rows})
    if cable:
        db["CABLE_LENGTH"] = {CABLE_LENGTH_KEY: cable}
    return {t: db[t] for t in sorted(db)}


def pg_ranges(indices: Sequence[int]) -> list[str]:
    """``[2, 3, 4, 6]`` -> ``["2-4", "6"]``: consecutive PGs share one key, as buffermgrd writes them."""
    out: list[list[int]] = []
    for i in sorted(indices):
        if out and out[-1][-1] == i - 1:
            out[-1].append(i)
        else:
            out.append([i])
    return [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in out]


def _name(value: str) -> str:
    if not isinstance(value, str) or SONIC_NAME.fullmatch(value) is None:
        raise RenderError(
            OS, f"profile name {value!r} is not a SONiC map name (expected [a-zA-Z0-9][-a-zA-Z0-9_]{{0,31}})"
        )
    if len(value) > 24:  # room for the _STRICT / _DWRR_100 / _Q7 suffixes within 32 characters
        raise RenderError(OS, f"profile name {value!r} is longer than 24 characters")
    return value


def _schedulers(sq: SwitchQos, name: str) -> dict[int, str]:
    """Egress queue -> SCHEDULER name."""
    out = dict.fromkeys(sq.strict, f"{name}_STRICT")
    out |= {q: f"{name}_DWRR_{max(1, w)}" for q, w in sq.weights.items()}
    return dict(sorted(out.items()))


def _scheduler_rows(sq: SwitchQos, name: str) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    if sq.strict:
        rows[f"{name}_STRICT"] = {"type": "STRICT"}
    for w in sorted({max(1, w) for w in sq.weights.values()}):
        rows[f"{name}_DWRR_{w}"] = {"type": "DWRR", "weight": str(w)}
    return rows


def _wred_name(name: str, queue: int) -> str:
    return f"{name}_Q{queue}"


def _wred(sq: SwitchQos, queue: int) -> dict[str, str]:
    e = sq.ecn[queue]
    row = {"ecn": "ecn_all"}
    for colour in ("green", "yellow", "red"):
        row |= {
            f"wred_{colour}_enable": "true",
            f"{colour}_min_threshold": str(e.min_bytes),
            f"{colour}_max_threshold": str(e.max_bytes),
            f"{colour}_drop_probability": str(e.max_probability),
        }
    return dict(sorted(row.items()))


# --- apply and patch --------------------------------------------------------------------------------


def apply_to_config_db(current: Mapping[str, Any], rendered: Mapping[str, Any]) -> dict[str, Any]:
    """CONFIG_DB (nested shape) after writing ``rendered`` into ``current``; neither is modified.

    Rendered rows replace the fields the renderer manages (:data:`MANAGED_FIELDS`; whole rows for
    maps, queues, schedulers, WRED and buffer profiles, PGs and watchdog rows) and keep the row's other
    fields (a port's speed and lanes, a PORT_QOS_MAP's ``dot1p_to_tc_map``). A rendered port (a
    ``PORT_QOS_MAP`` key of ``rendered``) owns its unicast queues 0-7 and its ``PFC_WD`` row
    (:data:`OWNED_ROWS`): the ones the render does not write are removed, so a queue the profile leaves
    without ECN stops marking and a port without watchdog loses it. A current key that covers a
    rendered port or index together with others is split into per-port (per-index) keys first, so a
    port the render does not touch keeps exactly what it had.
    """
    _check_shape(current)
    out: dict[str, Any] = copy.deepcopy(dict(current))
    ports = {p for key in rendered.get("PORT_QOS_MAP", {}) if key != "global" for p in key.split(",")}
    owned_tables = {t for t in OWNED_ROWS if ports and isinstance(out.get(t), dict)}
    for table in [*rendered, *sorted(owned_tables - set(rendered))]:
        rows: Mapping[str, Any] = rendered.get(table, {})
        if table not in out and not rows:
            continue
        target = out.setdefault(table, {})
        if table in _PORT_INDEX_TABLES or table in _PORT_TABLES:
            _split_overlaps(table, target, rows, _owned(table, ports))
        if table == "CABLE_LENGTH" and target and len(rows) == 1 and not set(rows) & set(target):
            # the device keeps its lengths under another name than AZURE: write into that entry
            rows = {next(iter(target)): dict(next(iter(rows.values())))}
        for key, fields in rows.items():
            old = target.get(key)
            managed = MANAGED_FIELDS.get(table)
            if table == "PFC_WD" and key == "GLOBAL":
                managed = _GLOBAL_POLL
            if old is None or managed is None:
                target[key] = dict(fields)
                continue
            kept = {f: v for f, v in old.items() if f not in managed}
            target[key] = kept | dict(fields)
    _fit_poll_interval(out, rendered)
    return out


def _fit_poll_interval(out: dict[str, Any], rendered: Mapping[str, Any]) -> None:
    """Keep ``PFC_WD|GLOBAL POLL_INTERVAL`` at or below every port's detection and restoration time.

    The rendered poll interval fits the rendered watchdog; ports the render does not touch may run
    shorter timers, and YANG requires each of them to be >= the poll interval.
    """
    wd = out.get("PFC_WD")
    new_global = rendered.get("PFC_WD", {}).get("GLOBAL", {})
    if not isinstance(wd, dict) or "POLL_INTERVAL" not in new_global:
        return
    times = [
        int(v)
        for key, row in wd.items()
        if key != "GLOBAL" and isinstance(row, Mapping)
        for f in ("detection_time", "restoration_time")
        if isinstance(v := row.get(f), str) and v.isdigit() and int(v) >= 100
    ]
    poll = min([int(new_global["POLL_INTERVAL"]), *times])
    wd["GLOBAL"] = {**wd.get("GLOBAL", {}), "POLL_INTERVAL": str(poll)}


def _check_shape(current: Mapping[str, Any]) -> None:
    """The nested ``config_db.json`` shape, or a :class:`ParseError` naming the first key that is not."""
    if not isinstance(current, Mapping):
        raise ParseError(CURRENT, "a JSON object of CONFIG_DB tables")
    for table, rows in current.items():
        if not isinstance(rows, Mapping):
            raise ParseError(CURRENT, "a table object of keys (the nested config_db.json shape)", key=str(table))
        for key, fields in rows.items():
            if not isinstance(fields, Mapping):
                raise ParseError(CURRENT, "an object of fields", key=f"{table}|{key}")


def _owned(table: str, ports: set[str]) -> set[tuple[str, int | None]]:
    if table not in OWNED_ROWS:
        return set()
    indices = OWNED_ROWS[table]
    if indices is None:
        return {(p, None) for p in ports}
    return {(p, i) for p in ports for i in indices}


def _cells(table: str, key: str) -> list[tuple[str, int | None]] | None:
    """The (port, index) cells a key covers; ``None`` for a key that is not in the table's key shape."""
    if table in _PORT_INDEX_TABLES:
        ports, sep, index = key.partition("|")
        if not sep or not INDEX.fullmatch(index):
            return None
        lo_s, _, hi_s = index.partition("-")
        lo, hi = int(lo_s), int(hi_s or lo_s)
        if hi < lo or hi - lo > 64:
            return None
        return [(p, i) for p in ports.split(",") for i in range(lo, hi + 1)]
    if key in ("GLOBAL", "global"):
        return None
    return [(p, None) for p in key.split(",")]


def _split_overlaps(
    table: str, target: dict[str, Any], rendered: Mapping[str, Any], owned: set[tuple[str, int | None]]
) -> None:
    """Remove current keys covering rendered or owned cells; re-add their other cells one key each."""
    covered = set(owned)
    for key in rendered:
        covered.update(_cells(table, key) or ())
    for key in [k for k in target if k not in rendered]:
        cells = _cells(table, key)
        if cells is None or not covered.intersection(cells):
            continue
        fields = target.pop(key)
        for port, index in cells:
            if (port, index) in covered:
                continue
            part = port if index is None else f"{port}|{index}"
            target.setdefault(part, dict(fields))


def json_patch(current: Mapping[str, Any], rendered: Mapping[str, Any]) -> list[dict[str, Any]]:
    """RFC 6902 operations turning ``current`` into :func:`apply_to_config_db` of it, for ``config apply-patch``.

    Only what changes: a table the device lacks is added whole, a new key whole, changed fields are
    ``replace``d, new fields ``add``ed, dropped fields and split keys ``remove``d. Paths are
    ``/TABLE/key/field`` with ``~`` and ``/`` in keys escaped as ``~0`` and ``~1`` (RFC 6901). An
    unchanged device gives ``[]``.
    """
    after = apply_to_config_db(current, rendered)
    ops: list[dict[str, Any]] = []
    for table in sorted(after, key=str):
        new_rows = after[table]
        old_rows = current.get(table)
        if old_rows is None:
            if new_rows:
                ops.append({"op": "add", "path": _path(table), "value": copy.deepcopy(new_rows)})
            continue
        for key in sorted(old_rows, key=natural_key):
            if key not in new_rows:
                ops.append({"op": "remove", "path": _path(table, key)})
        for key in sorted(new_rows, key=natural_key):
            new = new_rows[key]
            old = old_rows.get(key)
            if old is None:
                ops.append({"op": "add", "path": _path(table, key), "value": copy.deepcopy(new)})
                continue
            for field in sorted(old):
                if field not in new:
                    ops.append({"op": "remove", "path": _path(table, key, field)})
            for field in sorted(new):
                if field not in old:
                    ops.append({"op": "add", "path": _path(table, key, field), "value": new[field]})
                elif old[field] != new[field]:
                    ops.append({"op": "replace", "path": _path(table, key, field), "value": new[field]})
    return ops


def _path(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)
