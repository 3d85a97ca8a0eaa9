"""The CONFIG_DB field rules of reference switch-qos §1.1-1.2, as one check over a whole db.

:func:`validate_config_db` is what :mod:`unifab.render.sonic_config` promises every rendered (and
applied) CONFIG_DB passes; it reads real device dumps too, in either reference form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from unifab.parse.switch.sonic_config_db import deref
from unifab.platforms.sonic import MAX_MTU

__all__ = [
    "GLOBAL_FIELDS",
    "INDEX",
    "MTU_RANGE",
    "PORT_MAP_FIELDS",
    "SONIC_NAME",
    "STANDARD_POOLS",
    "validate_config_db",
]

SONIC_NAME = re.compile(r"[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}")  # map names (sonic-types.yang)
MTU_RANGE = (68, MAX_MTU)  # PORT.mtu: 68 up to the platform's maximum (unifab.platforms.sonic)
STANDARD_POOLS = frozenset(
    {"ingress_lossless_pool", "ingress_lossy_pool", "egress_lossless_pool", "egress_lossy_pool", "ingress_zero_pool"}
)
PORT_MAP_FIELDS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
}
GLOBAL_FIELDS = frozenset({"POLL_INTERVAL", "BIG_RED_SWITCH"})

_PRIO_LIST = re.compile(r"([0-7](,[0-7])*)?")
INDEX = re.compile(r"\d+(-\d+)?")
_CABLE = re.compile(r"[0-9]+m")
_ECN_MODES = frozenset(
    {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red", "ecn_yellow_red", "ecn_all"}
)
_BOOL = frozenset({"true", "false"})
_COLOURS = ("green", "yellow", "red")
# table -> (key range, value range) of its map rows (sonic-types.yang, reference §1.2)
_MAP_RANGES = {
    "DSCP_TO_TC_MAP": ((0, 63), (0, 15)),
    "TC_TO_PRIORITY_GROUP_MAP": ((0, 15), (0, 7)),
    "TC_TO_QUEUE_MAP": ((0, 15), (0, 9)),
    "MAP_PFC_PRIORITY_TO_QUEUE": ((0, 7), (0, 9)),
}
_FIELDS: dict[str, frozenset[str]] = {
    "PORT_QOS_MAP": frozenset(
        {
            *PORT_MAP_FIELDS,
            "pfc_enable",
            "pfcwd_sw_enable",
            "pfc_to_pg_map",
            "tc_to_dscp_map",
            "dot1p_to_tc_map",
            "scheduler",
            "dscp_to_fc_map",
            "exp_to_fc_map",
        }
    ),
    "QUEUE": frozenset({"scheduler", "wred_profile"}),
    "SCHEDULER": frozenset({"type", "weight", "priority", "meter_type", "cir", "pir", "cbs", "pbs"}),
    "WRED_PROFILE": frozenset(
        {"ecn"}
        | {f"{c}_{f}" for c in _COLOURS for f in ("min_threshold", "max_threshold", "drop_probability")}
        | {f"wred_{c}_enable" for c in _COLOURS}
    ),
    "BUFFER_PG": frozenset({"profile"}),
    "BUFFER_PROFILE": frozenset(
        {
            "pool",
            "size",
            "static_th",
            "dynamic_th",
            "xon",
            "xoff",
            "xon_offset",
            "headroom_type",
            "packet_discard_action",
            "mode",  # a legacy field real configs still carry (the Dell Z9264 sample)
        }
    ),
    "PFC_WD": frozenset({"action", "detection_time", "restoration_time", "pfc_stat_history"}),
}


def validate_config_db(db: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Every violation of the CONFIG_DB field rules of reference switch-qos §1.1-1.2 in ``db``.

    Checked: table and field names of the QoS tables, string values, ``|`` key separators
    (``<port>[,<port>]|<index or range>``), map keys and values (DSCP 0-63, TC 0-15, PG 0-7, queue
    0-9, priority 0-7), ``pfc_enable``/``pfcwd_sw_enable`` lists, every reference (maps, schedulers,
    WRED and buffer profiles, pools) naming an existing entry — plain or ``[TABLE|name]`` form —
    scheduler type and weight, WRED min <= max per colour, probabilities, ECN mode, PFC watchdog
    ranges and their relation to ``POLL_INTERVAL``, cable lengths and port MTU/speed ranges.

    A pool reference resolves to ``BUFFER_POOL``; a db without that table (a rendered fragment, whose
    pools come from the platform's buffer template) may name SONiC's standard pools.
    Returns messages of the form ``TABLE|key: what is wrong``; empty when the db is clean.
    """
    v = _Validator(db)
    v.run()
    return v.errors


class _Validator:
    def __init__(self, db: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
        self.db = db
        self.errors: list[str] = []

    def err(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def rows(self, table: str) -> Iterator[tuple[str, str, dict[str, str]]]:
        """(path, key, fields) with string values; a non-string value is reported and skipped."""
        body = self.db.get(table)
        if body is None:
            return
        if not isinstance(body, Mapping):
            self.err(table, "a table must be an object of keys")
            return
        for key, fields in body.items():
            path = f"{table}|{key}"
            if not isinstance(fields, Mapping):
                self.err(path, "an entry must be an object of fields")
                continue
            clean: dict[str, str] = {}
            for f, value in fields.items():
                if isinstance(value, str):
                    clean[f] = deref(value)
                else:
                    self.err(path, f"field {f!r} must be a string, got {type(value).__name__}")
            allowed = _FIELDS.get(table)
            if allowed is not None:
                extra = sorted(
                    set(clean) - allowed - ({"POLL_INTERVAL", "BIG_RED_SWITCH"} if table == "PFC_WD" else set())
                )
                if extra:
                    self.err(path, f"unknown field(s) {', '.join(extra)}")
            yield path, key, clean

    def uint(self, path: str, what: str, value: str, lo: int, hi: int | None = None) -> int | None:
        text = value[1:] if value.startswith("-") and lo < 0 else value
        if not (text.isdigit() and text.isascii()):
            self.err(path, f"{what} must be an integer, got {value!r}")
            return None
        n = int(value)
        if n < lo or (hi is not None and n > hi):
            self.err(path, f"{what} {n} is outside {lo}..{hi if hi is not None else 'max'}")
            return None
        return n

    def ref(self, path: str, field: str, table: str, name: str) -> None:
        if name not in (self.db.get(table) or {}):
            self.err(path, f"{field} {name!r} names no {table} entry")

    def ports(self, path: str, text: str) -> None:
        for port in text.split(","):
            if not port or port != port.strip() or "|" in port or ":" in port:
                self.err(path, f"port list {text!r} must be port names joined by ',' (CONFIG_DB separator is '|')")
                return

    def port_index(self, path: str, key: str, hi: int) -> None:
        ports, sep, index = key.partition("|")
        if not sep or "|" in index:
            self.err(path, "key must be '<port>|<index or range>' joined with '|'")
            return
        self.ports(path, ports)
        if not INDEX.fullmatch(index):
            self.err(path, f"index {index!r} must be a number or an ascending range such as 3-4")
            return
        lo_s, _, hi_s = index.partition("-")
        lo_n, hi_n = int(lo_s), int(hi_s or lo_s)
        if lo_n > hi_n or hi_n > hi:
            self.err(path, f"index {index!r} must be an ascending range within 0..{hi}")

    def run(self) -> None:
        self.maps()
        self.port_qos_map()
        self.schedulers()
        self.wred()
        self.queues()
        self.buffers()
        self.pfc_wd()
        self.cable_length()
        self.port()

    def maps(self) -> None:
        for table, ((klo, khi), (vlo, vhi)) in _MAP_RANGES.items():
            for path, key, fields in self.rows(table):
                if SONIC_NAME.fullmatch(key) is None:
                    self.err(path, "map name must match [a-zA-Z0-9][-a-zA-Z0-9_]{0,31}")
                for k, value in fields.items():
                    self.uint(path, f"map key {k!r}", k, klo, khi)
                    self.uint(path, f"value of {k!r}", value, vlo, vhi)

    def port_qos_map(self) -> None:
        for path, key, fields in self.rows("PORT_QOS_MAP"):
            if key != "global":
                self.ports(path, key)
            for field, table in PORT_MAP_FIELDS.items():
                if field in fields:
                    self.ref(path, field, table, fields[field])
            for field in ("pfc_enable", "pfcwd_sw_enable"):
                if field in fields and not _PRIO_LIST.fullmatch(fields[field]):
                    self.err(path, f"{field} {fields[field]!r} must be priorities 0-7 joined by ','")

    def schedulers(self) -> None:
        for path, _, fields in self.rows("SCHEDULER"):
            kind = fields.get("type", "WRR")
            if kind not in ("DWRR", "WRR", "STRICT"):
                self.err(path, f"type must be DWRR, WRR or STRICT, got {kind!r}")
            if "weight" in fields:
                self.uint(path, "weight", fields["weight"], 1, 100)
            if "priority" in fields:
                self.uint(path, "priority", fields["priority"], 0, 9)
            if fields.get("meter_type", "bytes") not in ("packets", "bytes"):
                self.err(path, f"meter_type must be packets or bytes, got {fields['meter_type']!r}")

    def wred(self) -> None:
        for path, _, fields in self.rows("WRED_PROFILE"):
            if fields.get("ecn", "ecn_none") not in _ECN_MODES:
                self.err(path, f"ecn {fields['ecn']!r} is not one of {', '.join(sorted(_ECN_MODES))}")
            for colour in _COLOURS:
                low = fields.get(f"{colour}_min_threshold")
                high = fields.get(f"{colour}_max_threshold")
                lo_n = None if low is None else self.uint(path, f"{colour}_min_threshold", low, 0)
                hi_n = None if high is None else self.uint(path, f"{colour}_max_threshold", high, 0)
                if lo_n is not None and hi_n is not None and hi_n < lo_n:
                    self.err(path, f"{colour}_max_threshold {hi_n} is below {colour}_min_threshold {lo_n}")
                prob = fields.get(f"{colour}_drop_probability")
                if prob is not None:
                    self.uint(path, f"{colour}_drop_probability", prob, 0, 100)
                enable = fields.get(f"wred_{colour}_enable")
                if enable is not None and enable not in _BOOL:
                    self.err(path, f"wred_{colour}_enable must be true or false, got {enable!r}")

    def queues(self) -> None:
        for path, key, fields in self.rows("QUEUE"):
            self.port_index(path, key, 15)
            if "scheduler" in fields:
                self.ref(path, "scheduler", "SCHEDULER", fields["scheduler"])
            if "wred_profile" in fields:
                self.ref(path, "wred_profile", "WRED_PROFILE", fields["wred_profile"])

    def buffers(self) -> None:
        pools = self.db.get("BUFFER_POOL")
        for path, _, fields in self.rows("BUFFER_PROFILE"):
            pool = fields.get("pool")
            if pool is None:
                self.err(path, "pool is mandatory")
            elif pools is not None:
                self.ref(path, "pool", "BUFFER_POOL", pool)
            elif pool not in STANDARD_POOLS:
                self.err(path, f"pool {pool!r} is not a standard SONiC pool and there is no BUFFER_POOL table")
            for field in ("size", "xon", "xoff", "xon_offset", "static_th"):
                if field in fields:
                    self.uint(path, field, fields[field], 0)
            if "dynamic_th" in fields:
                self.uint(path, "dynamic_th", fields["dynamic_th"], -8, 7)
            if fields.get("headroom_type", "static") not in ("static", "dynamic"):
                self.err(path, f"headroom_type must be static or dynamic, got {fields['headroom_type']!r}")
        for table, hi in (("BUFFER_PG", 7), ("BUFFER_QUEUE", 15)):
            for path, key, fields in self.rows(table):
                self.port_index(path, key, hi)
                profile = fields.get("profile")
                if profile is None:
                    self.err(path, "profile is mandatory (a BUFFER_PROFILE name or NULL)")
                elif profile != "NULL":
                    self.ref(path, "profile", "BUFFER_PROFILE", profile)

    def pfc_wd(self) -> None:
        rows = list(self.rows("PFC_WD"))
        poll: int | None = None
        for path, key, fields in rows:
            if key == "GLOBAL":
                extra = sorted(set(fields) - {"POLL_INTERVAL", "BIG_RED_SWITCH"})
                if extra:
                    self.err(path, f"port field(s) {', '.join(extra)} are not allowed on GLOBAL")
                if "POLL_INTERVAL" in fields:
                    poll = self.uint(path, "POLL_INTERVAL", fields["POLL_INTERVAL"], 100, 1000)
        for path, key, fields in rows:
            if key == "GLOBAL":
                continue
            self.ports(path, key)
            if "POLL_INTERVAL" in fields:
                self.err(path, "POLL_INTERVAL is only allowed on PFC_WD|GLOBAL")
            if fields.get("action", "drop") not in ("drop", "forward", "alert"):
                self.err(path, f"action must be drop, forward or alert, got {fields['action']!r}")
            for field, hi in (("detection_time", 5000), ("restoration_time", 60000)):
                if field in fields:
                    ms = self.uint(path, field, fields[field], 100, hi)
                    if ms is not None and poll is not None and ms < poll:
                        self.err(path, f"{field} {ms} ms is below PFC_WD|GLOBAL POLL_INTERVAL {poll} ms")
            if fields.get("pfc_stat_history", "disable") not in ("enable", "disable"):
                self.err(path, f"pfc_stat_history must be enable or disable, got {fields['pfc_stat_history']!r}")

    def cable_length(self) -> None:
        for path, _, fields in self.rows("CABLE_LENGTH"):
            for ports, value in fields.items():
                self.ports(path, ports)
                if not _CABLE.fullmatch(value):
                    self.err(path, f"cable length of {ports} must look like '40m', got {value!r}")

    def port(self) -> None:
        for path, _, fields in self.rows("PORT"):
            if "mtu" in fields:
                self.uint(path, "mtu", fields["mtu"], *MTU_RANGE)
            if "speed" in fields:
                self.uint(path, "speed", fields["speed"], 1, 1_600_000)
