"""The QoS view of every SONiC port, resolved from normalized CONFIG_DB tables.

:func:`resolve` walks each table once: per-port tables are indexed by port while they are read
(keys such as ``"Ethernet50,Ethernet52|3-4"`` are expanded to ports and indices), map tables,
schedulers, WRED and buffer profiles are looked up by name once and cached.

A binding to a name that does not exist, or a number that is not one, is a problem whose ``key`` is the
``TABLE|key`` that holds the bad value. With a :class:`~unifab.errors.ParseProblems` collector it costs
only what it touches: a row of a per-port table (PORT_QOS_MAP, QUEUE, BUFFER_PG, BUFFER_QUEUE) that
cannot be read leaves **the QoS of the ports it names unread** (they stay in ``ports`` but get no
``port_qos`` entry, so no check judges a half-known port), a bad PORT row leaves that port's MTU and
speed unknown, a bad CABLE_LENGTH entry that port's cable length; every other port is read. Without a
collector the first problem raises :class:`~unifab.errors.ParseError`.

Chassis (VOQ) keys name the port with its linecard host and ASIC: ``QUEUE|<host>|<asic>|Ethernet0|3``,
``BUFFER_PG|<host>|<asic>|Ethernet0|3-4`` (and ``<host>|Ethernet0|3`` on a fixed VOQ system). The port
is ``Ethernet0`` when the host and ASIC are this switch's (``DEVICE_METADATA|localhost`` ``hostname`` and
``asic_name``, compared without case), or when the metadata names no hostname and the file holds one
host/ASIC only; any other port (a remote linecard's system port, whose VOQs this ASIC holds) is named as
SONiC's SYSTEM_PORT table names it, ``<host>|<asic>|Ethernet0``.

``port_qos`` covers every port named in PORT, PORT_QOS_MAP (except ``global``), QUEUE, BUFFER_PG,
BUFFER_QUEUE, BUFFER_PORT_{INGRESS,EGRESS}_PROFILE_LIST, CABLE_LENGTH and PFC_WD (except
``GLOBAL``); a ``QUEUE|CPU|<q>`` row would therefore give a ``CPU`` entry. Only
``dscp_to_tc_map`` falls back to ``PORT_QOS_MAP|global`` (orchagent applies only that one
switch-wide). Schedulers and WRED profiles are resolved when a queue names them, so a malformed
entry nobody references is not an error; the port-level ``PORT_QOS_MAP.scheduler`` is not resolved.

Partial configs (a rendered ``qos.json`` without PORT, a ``buffers.json`` without maps) resolve: a
table that is absent contributes nothing. Defaults applied: PORT ``mtu`` 9100 and ``admin_status``
``down``, DEVICE_METADATA ``buffer_model`` ``traditional``, WRED ``ecn`` ``ecn_none`` when a profile
is bound but has no ``ecn`` field (``wred_green_enable`` stays ``None`` when unset). Scheduler
``type``/``weight`` and WRED thresholds are reported as configured (``None`` when absent).
``buffer_inputs`` keeps the headroom calculation's switch-wide inputs as configured, without defaults
(``LOSSLESS_TRAFFIC_PATTERN|AZURE``, ``DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE``,
``BUFFER_POOL|ingress_lossless_pool``).
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, parse_uint, pasted
from unifab.parse.switch import sonic_config_db
from unifab.parse.switch.sonic_config_db import SonicConfigDb

__all__ = [
    "DEFAULT_MTU",
    "SonicBufferInputs",
    "SonicPort",
    "SonicPortQos",
    "SonicQueue",
    "SonicSwitch",
    "parse",
    "resolve",
]

DEFAULT_MTU = 9100
DEFAULT_ADMIN_STATUS = "down"
DEFAULT_BUFFER_MODEL = "traditional"
DEFAULT_ECN = "ecn_none"

Fields = dict[str, str]
Table = dict[str, Fields]

# PORT_QOS_MAP field -> map table it names
_MAP_FIELDS = (
    ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
    ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
    ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
    ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
)
# Per-port tables keyed by port (list) alone; their ports get a SonicPortQos entry.
_PORT_KEYED = ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST")


@dataclass(frozen=True, slots=True)
class SonicQueue:
    index: int
    scheduler: str | None
    scheduler_type: str | None
    weight: int | None
    wred_profile: str | None
    ecn: str | None
    green_min_threshold: int | None
    green_max_threshold: int | None
    green_drop_probability: int | None
    # WRED_PROFILE wred_green_enable ("true"/"false"), None when the profile does not set it or no profile is bound
    wred_green_enable: bool | None = None


@dataclass(frozen=True, slots=True)
class SonicBufferInputs:
    """The switch-wide inputs of SONiC's headroom calculation, as configured (None: the table or field is absent)."""

    buffer_model: str | None  # DEVICE_METADATA|localhost buffer_model, as configured (no default applied)
    device_metadata: bool  # DEVICE_METADATA|localhost exists (a full CONFIG_DB, not a rendered fragment)
    lossless_mtu: int | None  # LOSSLESS_TRAFFIC_PATTERN|AZURE mtu
    small_packet_percentage: int | None  # LOSSLESS_TRAFFIC_PATTERN|AZURE small_packet_percentage
    traffic_pattern: bool  # LOSSLESS_TRAFFIC_PATTERN|AZURE exists (rendered only in the dynamic model)
    over_subscribe_ratio: int | None  # DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE over_subscribe_ratio
    lossless_pool_size: int | None  # BUFFER_POOL|ingress_lossless_pool size, bytes
    lossless_pool_xoff: int | None  # BUFFER_POOL|ingress_lossless_pool xoff (shared headroom pool), bytes


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    mtu: int
    speed_mbps: int | None
    admin_status: str
    fec: str | None
    alias: str | None
    description: str | None


@dataclass(frozen=True, slots=True)
class SonicPortQos:
    port: str
    dscp_to_tc_map: str | None
    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc_to_queue: dict[int, int]
    pfc_enable: frozenset[int]
    pfcwd_sw_enable: frozenset[int]
    queues: dict[int, SonicQueue]
    buffer_pg: dict[int, str]
    buffer_queue: dict[int, str]
    cable_length_m: int | None


@dataclass(frozen=True, slots=True)
class SonicSwitch:
    hostname: str | None
    hwsku: str | None
    platform: str | None
    device_type: str | None
    buffer_model: str
    ports: dict[str, SonicPort]
    port_qos: dict[str, SonicPortQos]
    buffer_profiles: dict[str, dict[str, str]]
    buffer_pools: dict[str, dict[str, str]]
    pfc_wd: dict[str, dict[str, str]]
    neighbors: dict[str, tuple[str, str]]
    buffer_inputs: SonicBufferInputs | None = None
    default_pfcwd_status: str | None = None  # DEVICE_METADATA|localhost default_pfcwd_status, as configured


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicSwitch:
    """Read CONFIG_DB JSON in any shape and resolve it (see :func:`resolve`)."""
    return resolve(sonic_config_db.parse(text, source, problems), source=source, problems=problems)


def resolve(db: SonicConfigDb, source: str = "<input>", problems: ParseProblems | None = None) -> SonicSwitch:
    """Resolve every port's QoS view; ``source`` only labels problems (see the module docstring)."""
    return _Resolver(db.tables, source, problems).run()


_QUALIFIED_TABLES = ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE")  # tables whose chassis keys carry host|asic
_LISTED = 3  # ports named in a problem before "and N more"


def _listing(ports: list[str]) -> str:
    shown = ", ".join(ports[:_LISTED])
    return shown if len(ports) <= _LISTED else f"{shown} and {len(ports) - _LISTED} more"


# --------------------------------------------------------------------------------------------------


class _PortAcc:
    """What the tables say about one port, collected while each table is read once."""

    __slots__ = (
        "buffer_pg",
        "buffer_queue",
        "cable",
        "maps",
        "pfc_enable",
        "pfcwd_sw_enable",
        "queues",
    )

    def __init__(self) -> None:
        self.maps: dict[str, str] = {}  # PORT_QOS_MAP field -> bound map name
        self.pfc_enable: frozenset[int] = frozenset()
        self.pfcwd_sw_enable: frozenset[int] = frozenset()
        self.queues: dict[int, SonicQueue] = {}
        self.buffer_pg: dict[int, str] = {}
        self.buffer_queue: dict[int, str] = {}
        self.cable: int | None = None


_EMPTY: Table = {}
# a WRED profile's ecn mark mode, green min/max thresholds and drop probability, wred_green_enable
_Wred = tuple[str | None, int | None, int | None, int | None, bool | None]
_NO_WRED: _Wred = (None, None, None, None, None)


class _Resolver:
    def __init__(self, tables: dict[str, Table], source: str, problems: ParseProblems | None = None) -> None:
        self.t = tables
        self.source = source
        self.log = problems if problems is not None else ParseProblems.strict(source)
        self.acc: dict[str, _PortAcc] = {}
        self.unread: set[str] = set()  # ports whose QoS a skipped row or reference leaves unknown
        self._maps: dict[tuple[str, str], dict[int, int]] = {}
        self._bad_maps: dict[tuple[str, str], ParseError] = {}
        self._global_dscp_unread = False
        self._local = self._local_qualifier()
        self._queue_cache: dict[tuple[int, str | None, str | None], SonicQueue] = {}
        self._sched: dict[str, tuple[str | None, int | None]] = {}
        self._wred: dict[str, _Wred] = {}
        self._split_cache: dict[str, list[str]] = {}
        self._range_cache: dict[str, range] = {}
        self._prio_cache: dict[str, frozenset[int]] = {}

    # -- helpers ------------------------------------------------------------------------------------

    def _err(self, path: str, expected: str) -> ParseError:
        return ParseError(self.source, expected, key=path)

    def _uint(self, value: str, path: str, what: str) -> int:
        return parse_uint(value, self.source, what, key=path)

    def _port(self, name: str) -> _PortAcc:
        acc = self.acc.get(name)
        if acc is None:
            acc = self.acc[name] = _PortAcc()
        return acc

    def _ports(self, ports: str, path: str) -> list[str]:
        """``"Ethernet50,Ethernet52"`` -> its ports (cached: the same lists repeat across tables)."""
        cached = self._split_cache.get(ports)
        if cached is None:
            cached = [p.strip() for p in ports.split(",")] if "," in ports else [ports]
            if not all(cached):
                raise self._err(path, f"a port name or comma-separated port list, got {ports!r}")
            self._split_cache[ports] = cached
        return cached

    def _indices(self, text: str, path: str) -> range:
        """``"3"`` -> 3; ``"3-4"`` -> 3, 4 (cached: a file repeats the same few)."""
        cached = self._range_cache.get(text)
        if cached is not None:
            return cached
        lo, dash, hi = text.partition("-")
        if lo.isdigit() and lo.isascii() and (not dash or (hi.isdigit() and hi.isascii())):
            first = int(lo)
            last = int(hi) if dash else first
            if first <= last:
                cached = self._range_cache[text] = range(first, last + 1)
                return cached
        raise self._err(path, f"an index or ascending index range such as '3-4', got {text!r}")

    def _port_index_key(self, table: str, key: str) -> tuple[list[str], range, str]:
        path = f"{table}|{key}"
        parts = key.split("|")
        if len(parts) == 2:
            return self._ports(parts[0], path), self._indices(parts[1], path), path
        if len(parts) in (3, 4) and all(parts):
            host, asic = parts[0], parts[1] if len(parts) == 4 else ""
            ports = [self._qualify(host, asic, p) for p in self._ports(parts[-2], path)]
            return ports, self._indices(parts[-1], path), path
        raise self._err(path, "a key '<port>|<index or range>' (or '<host>|<asic>|<port>|<index or range>')")

    def _local_qualifier(self) -> tuple[str, str] | None:
        """The (host, asic) whose chassis-keyed ports are this switch's own, named without qualifier."""
        meta = self.t.get("DEVICE_METADATA", _EMPTY).get("localhost", {})
        host = meta.get("hostname")
        if host:
            return host.lower(), meta.get("asic_name", "").lower()
        seen: set[tuple[str, str]] = set()
        for table in _QUALIFIED_TABLES:
            for key in self.t.get(table, _EMPTY):
                parts = key.split("|")
                if len(parts) in (3, 4):
                    seen.add((parts[0].lower(), parts[1].lower() if len(parts) == 4 else ""))
                    if len(seen) > 1:
                        return None
        return next(iter(seen), None)

    def _qualify(self, host: str, asic: str, port: str) -> str:
        local = self._local
        if local is not None and host.lower() == local[0] and (not local[1] or asic.lower() == local[1]):
            return port
        return f"{host}|{asic}|{port}" if asic else f"{host}|{port}"

    def _row_ports(self, table: str, key: str) -> tuple[list[str], range, str] | None:
        """A per-port row's ports and indices; ``None`` (a problem: the row is skipped) when its key is bad."""
        with self.log.skipping(f"row {table}|{key}"):
            return self._port_index_key(table, key)
        return None

    def _prio_list(self, value: str, path: str, field: str) -> frozenset[int]:
        """``pfc_enable``/``pfcwd_sw_enable``: ``"3,4"``; empty means none."""
        cached = self._prio_cache.get(value)
        if cached is None:
            out: set[int] = set()
            for raw in value.split(","):
                token = raw.strip()
                if token:
                    out.add(self._uint(token, path, f"{field} priority"))
            cached = self._prio_cache[value] = frozenset(out)
        return cached

    def _map(self, table: str, name: str, ref_path: str, field: str) -> dict[int, int]:
        cached = self._maps.get((table, name))
        if cached is not None:
            return cached
        rows = self.t.get(table, _EMPTY).get(name)
        if rows is None:
            raise self._err(ref_path, f"{field} {name!r} to name an existing {table} entry")
        bad = self._bad_maps.get((table, name))
        if bad is not None:
            raise bad
        path = f"{table}|{name}"
        out: dict[int, int] = {}
        try:
            for k, v in rows.items():
                out[self._uint(k, path, "map key")] = self._uint(v, path, f"map value for {k!r}")
        except ParseError as exc:
            self._bad_maps[(table, name)] = exc
            raise
        resolved = dict(sorted(out.items()))
        self._maps[(table, name)] = resolved
        return resolved

    # -- tables -------------------------------------------------------------------------------------

    def _read_ports(self) -> dict[str, SonicPort]:
        ports: dict[str, SonicPort] = {}
        for name, f in self.t.get("PORT", _EMPTY).items():
            path = f"PORT|{name}"
            mtu = f.get("mtu")
            speed = f.get("speed")
            self._port(name)
            with self.log.skipping(f"{path} (the port's MTU, speed and admin status are unknown)"):
                ports[name] = SonicPort(
                    name=name,
                    mtu=DEFAULT_MTU if mtu is None else self._uint(mtu, path, "mtu"),
                    speed_mbps=None if speed is None else self._uint(speed, path, "speed in Mb/s"),
                    admin_status=f.get("admin_status", DEFAULT_ADMIN_STATUS),
                    fec=f.get("fec"),
                    alias=f.get("alias"),
                    description=f.get("description"),
                )
        return ports

    def _read_port_qos_map(self) -> str | None:
        """Bind maps and PFC lists to ports; returns the ``PORT_QOS_MAP|global`` DSCP map name."""
        global_dscp: str | None = None
        for key, f in self.t.get("PORT_QOS_MAP", _EMPTY).items():
            path = f"PORT_QOS_MAP|{key}"
            if key == "global":
                name = f.get("dscp_to_tc_map")
                if name:
                    global_dscp = name
                    skipped = f"{path}: the switch-wide DSCP map (ports without their own dscp_to_tc_map are not read)"
                    with self.log.skipping(skipped) as row:
                        self._map("DSCP_TO_TC_MAP", name, path, "dscp_to_tc_map")
                    self._global_dscp_unread = row.failed
                continue
            ports: list[str] = []
            with self.log.skipping(f"row {path}"):
                ports = self._ports(key, path)
            if not ports:
                continue
            for port in ports:
                self._port(port)
            with self.log.skipping(f"the QoS of {_listing(ports)}") as row:
                bound: dict[str, str] = {}
                for field, table in _MAP_FIELDS:
                    name = f.get(field)
                    if name:
                        self._map(table, name, path, field)  # fails here on a dangling name
                        bound[field] = name
                pfc = f.get("pfc_enable")
                pfc_set = None if pfc is None else self._prio_list(pfc, path, "pfc_enable")
                wd = f.get("pfcwd_sw_enable")
                wd_set = None if wd is None else self._prio_list(wd, path, "pfcwd_sw_enable")
                for port in ports:
                    acc = self._port(port)
                    acc.maps.update(bound)
                    if pfc_set is not None:
                        acc.pfc_enable = pfc_set
                    if wd_set is not None:
                        acc.pfcwd_sw_enable = wd_set
            if row.failed:
                self.unread.update(ports)
        return global_dscp

    def _scheduler(self, name: str, ref_path: str) -> tuple[str | None, int | None]:
        cached = self._sched.get(name)
        if cached is None:
            f = self.t.get("SCHEDULER", _EMPTY).get(name)
            if f is None:
                raise self._err(ref_path, f"scheduler {name!r} to name an existing SCHEDULER entry")
            weight = f.get("weight")
            path = f"SCHEDULER|{name}"
            cached = (f.get("type"), None if weight is None else self._uint(weight, path, "weight"))
            self._sched[name] = cached
        return cached

    def _wred_profile(self, name: str, ref_path: str) -> _Wred:
        cached = self._wred.get(name)
        if cached is None:
            f = self.t.get("WRED_PROFILE", _EMPTY).get(name)
            if f is None:
                raise self._err(ref_path, f"wred_profile {name!r} to name an existing WRED_PROFILE entry")
            path = f"WRED_PROFILE|{name}"
            nums = [
                None if (v := f.get(field)) is None else self._uint(v, path, field)
                for field in ("green_min_threshold", "green_max_threshold", "green_drop_probability")
            ]
            green = f.get("wred_green_enable")
            if green is not None and green.lower() not in ("true", "false"):
                raise self._err(path, f"wred_green_enable 'true' or 'false', got {green!r}")
            cached = (
                f.get("ecn", DEFAULT_ECN),
                nums[0],
                nums[1],
                nums[2],
                None if green is None else green.lower() == "true",
            )
            self._wred[name] = cached
        return cached

    def _queue(self, index: int, sched: str | None, wred: str | None, path: str) -> SonicQueue:
        ck = (index, sched, wred)
        q = self._queue_cache.get(ck)
        if q is None:
            s_type, weight = (None, None) if sched is None else self._scheduler(sched, path)
            ecn, gmin, gmax, gprob, green = _NO_WRED if wred is None else self._wred_profile(wred, path)
            q = SonicQueue(
                index=index,
                scheduler=sched,
                scheduler_type=s_type,
                weight=weight,
                wred_profile=wred,
                ecn=ecn,
                green_min_threshold=gmin,
                green_max_threshold=gmax,
                green_drop_probability=gprob,
                wred_green_enable=green,
            )
            self._queue_cache[ck] = q
        return q

    def _read_queues(self) -> None:
        for key, f in self.t.get("QUEUE", _EMPTY).items():
            located = self._row_ports("QUEUE", key)
            if located is None:
                continue
            ports, indices, path = located
            sched = f.get("scheduler") or None
            wred = f.get("wred_profile") or None
            built: list[SonicQueue] = []
            with self.log.skipping(f"the QoS of {_listing(ports)}") as row:
                built = [self._queue(i, sched, wred, path) for i in indices]
            if row.failed:
                self.unread.update(ports)
            for port in ports:
                queues = self._port(port).queues
                for q in built:
                    queues[q.index] = q

    def _read_buffer_table(self, table: str, is_pg: bool) -> None:
        profiles = self.t.get("BUFFER_PROFILE", _EMPTY)
        for key, f in self.t.get(table, _EMPTY).items():
            located = self._row_ports(table, key)
            if located is None:
                continue
            ports, indices, path = located
            profile = f.get("profile")
            with self.log.skipping(f"the QoS of {_listing(ports)}") as row:
                if profile is None:
                    raise self._err(path, "a 'profile' field (a BUFFER_PROFILE name or NULL)")
                if profile != "NULL" and profile not in profiles:
                    raise self._err(path, f"profile {profile!r} to name an existing BUFFER_PROFILE entry")
            if row.failed or profile is None:
                self.unread.update(ports)
                continue
            for port in ports:
                acc = self._port(port)
                target = acc.buffer_pg if is_pg else acc.buffer_queue
                for i in indices:
                    target[i] = profile

    def _read_cable_lengths(self) -> None:
        for name, f in self.t.get("CABLE_LENGTH", _EMPTY).items():
            path = f"CABLE_LENGTH|{name}"
            for ports, value in f.items():
                with self.log.skipping(f"the cable length of {ports} (unknown)"):
                    digits = value[:-1] if value.endswith("m") else value
                    if not (digits.isdigit() and digits.isascii()):
                        raise self._err(path, f"a cable length such as '40m' for {ports}, got {value!r}")
                    metres = int(digits)
                    for port in self._ports(ports, path):
                        self._port(port).cable = metres

    def _touch_port_keyed(self) -> None:
        for table in (*_PORT_KEYED, "PFC_WD"):
            for key in self.t.get(table, _EMPTY):
                if table == "PFC_WD" and key == "GLOBAL":
                    continue
                with self.log.skipping(f"row {table}|{key}"):
                    for port in self._ports(key, f"{table}|{key}"):
                        self._port(port)

    def _neighbors(self) -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        for port, f in self.t.get("DEVICE_NEIGHBOR", _EMPTY).items():
            name = f.get("name")
            peer_port = f.get("port")
            if name is None or peer_port is None:
                self.log.add("fields 'name' and 'port'", f"row DEVICE_NEIGHBOR|{port}", key=f"DEVICE_NEIGHBOR|{port}")
                continue
            out[port] = (name, peer_port)
        return out

    # -- assembly -----------------------------------------------------------------------------------

    def run(self) -> SonicSwitch:
        t = self.t
        ports = self._read_ports()
        global_dscp = self._read_port_qos_map()
        self._read_queues()
        self._read_buffer_table("BUFFER_PG", is_pg=True)
        self._read_buffer_table("BUFFER_QUEUE", is_pg=False)
        self._read_cable_lengths()
        self._touch_port_keyed()

        port_qos: dict[str, SonicPortQos] = {}
        for name in sorted(self.acc, key=natural_key):
            acc = self.acc[name]
            maps = acc.maps
            if self._global_dscp_unread and "dscp_to_tc_map" not in maps:
                self.unread.add(name)  # its DSCP map is the switch-wide one, which could not be read
            if name in self.unread:
                continue
            dscp_name = maps.get("dscp_to_tc_map", global_dscp)
            port_qos[name] = SonicPortQos(
                port=name,
                dscp_to_tc_map=dscp_name,
                dscp_to_tc=self._bound("DSCP_TO_TC_MAP", dscp_name),
                tc_to_pg=self._bound("TC_TO_PRIORITY_GROUP_MAP", maps.get("tc_to_pg_map")),
                tc_to_queue=self._bound("TC_TO_QUEUE_MAP", maps.get("tc_to_queue_map")),
                pfc_to_queue=self._bound("MAP_PFC_PRIORITY_TO_QUEUE", maps.get("pfc_to_queue_map")),
                pfc_enable=acc.pfc_enable,
                pfcwd_sw_enable=acc.pfcwd_sw_enable,
                queues=dict(sorted(acc.queues.items())),
                buffer_pg=dict(sorted(acc.buffer_pg.items())),
                buffer_queue=dict(sorted(acc.buffer_queue.items())),
                cable_length_m=acc.cable,
            )

        meta = t.get("DEVICE_METADATA", _EMPTY).get("localhost", {})
        return SonicSwitch(
            hostname=meta.get("hostname"),
            hwsku=meta.get("hwsku"),
            platform=meta.get("platform"),
            device_type=meta.get("type"),
            buffer_model=meta.get("buffer_model") or DEFAULT_BUFFER_MODEL,
            ports={name: ports[name] for name in sorted(ports, key=natural_key)},
            port_qos=port_qos,
            buffer_profiles=_copy(t.get("BUFFER_PROFILE", _EMPTY)),
            buffer_pools=_copy(t.get("BUFFER_POOL", _EMPTY)),
            pfc_wd=_copy(t.get("PFC_WD", _EMPTY)),
            neighbors=self._neighbors(),
            buffer_inputs=self._buffer_inputs(meta),
            default_pfcwd_status=meta.get("default_pfcwd_status"),
        )

    def _buffer_inputs(self, meta: Fields) -> SonicBufferInputs:
        pattern = self.t.get("LOSSLESS_TRAFFIC_PATTERN", _EMPTY).get("AZURE")
        param = self.t.get("DEFAULT_LOSSLESS_BUFFER_PARAMETER", _EMPTY).get("AZURE", {})
        pool = self.t.get("BUFFER_POOL", _EMPTY).get("ingress_lossless_pool", {})

        def num(fields: Fields | None, table: str, field: str) -> int | None:
            value = None if fields is None else fields.get(field)
            with self.log.skipping(f"{table} {field} (unknown)"):
                return None if value is None else self._uint(value, table, field)
            return None

        tp = "LOSSLESS_TRAFFIC_PATTERN|AZURE"
        return SonicBufferInputs(
            buffer_model=meta.get("buffer_model") or None,
            device_metadata="localhost" in self.t.get("DEVICE_METADATA", _EMPTY),
            lossless_mtu=num(pattern, tp, "mtu"),
            small_packet_percentage=num(pattern, tp, "small_packet_percentage"),
            traffic_pattern=pattern is not None,
            over_subscribe_ratio=num(param, "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE", "over_subscribe_ratio"),
            lossless_pool_size=num(pool, "BUFFER_POOL|ingress_lossless_pool", "size"),
            lossless_pool_xoff=num(pool, "BUFFER_POOL|ingress_lossless_pool", "xoff"),
        )

    def _bound(self, table: str, name: str | None) -> dict[int, int]:
        """Contents of a map already validated while PORT_QOS_MAP was read; a fresh dict per port."""
        if name is None:
            return {}
        return dict(self._maps[(table, name)])


def _copy(table: Table) -> dict[str, dict[str, str]]:
    return {key: dict(fields) for key, fields in table.items()}
