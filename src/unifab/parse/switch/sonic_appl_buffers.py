"""SONiC APPL_DB (DB 0) buffer tables: pools, profiles, and each port's PG/queue -> profile, resolved.

Reads a dump of APPL_DB (``redis-cli -n 0`` / ``sonic-db-dump -n APPL_DB``, or the sonic-utilities
mock-table shape; any shape :func:`unifab.parse.switch.sonic_state_db.read_dump` reads). These are the
tables buffermgrd publishes for orchagent, with ``:``-separated keys:

* ``BUFFER_POOL_TABLE:<pool>``: ``type`` ingress|egress, ``mode`` static|dynamic, ``size``, ``xoff``
  (shared headroom pool);
* ``BUFFER_PROFILE_TABLE:<profile>``: ``pool``, ``size``, ``xon``, ``xoff``, ``xon_offset``,
  ``dynamic_th`` (signed, a power-of-two exponent) or ``static_th``;
* ``BUFFER_PG_TABLE:<port>:<pgs>`` and ``BUFFER_QUEUE_TABLE:<port>:<queues>``: ``profile``; ``<pgs>`` is
  ``3``, ``3-4`` or ``0,3``; the port part may be a comma list;
* ``BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE:<port>`` / ``..._EGRESS_...``: ``profile_list`` (comma list).

Other tables are ignored. Profile references may be plain names (schema 3.0.3+) or the old
``[BUFFER_PROFILE_TABLE:name]`` form; ``NULL`` (dynamic model, headroom computed by buffermgrd) leaves
the PG without a profile. Sizes are bytes.

A reference to a profile or pool that is not in the dump, or a value that is not a number, is a problem
naming the key. With a :class:`~unifab.errors.ParseProblems` collector it costs that entry only: a profile
naming a missing pool is skipped (and so are the PGs and queues bound to it), a PG/queue row or profile
list whose profile is missing is skipped, the rest is read. Without one :class:`~unifab.errors.ParseError`
is raised. A dump with no buffer entry at all is always an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, parse_uint, pasted
from unifab.parse.switch.sonic_state_db import read_dump

__all__ = [
    "SonicApplBuffers",
    "SonicBufferAssignment",
    "SonicBufferPool",
    "SonicBufferProfile",
    "SonicPortBuffers",
    "expand_indices",
    "parse",
]

POOL = "BUFFER_POOL_TABLE:"
PROFILE = "BUFFER_PROFILE_TABLE:"
PG = "BUFFER_PG_TABLE:"
QUEUE = "BUFFER_QUEUE_TABLE:"
INGRESS_LIST = "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE:"
EGRESS_LIST = "BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE:"
MAX_INDEX = 63

_INT = re.compile(r"-?\d+")
_REF = re.compile(r"\[\s*[A-Z_]+[:|](.+?)\s*\]")


@dataclass(frozen=True, slots=True)
class SonicBufferPool:
    name: str
    type: str | None  # "ingress" | "egress"
    mode: str | None  # "static" | "dynamic"
    size_bytes: int | None
    xoff_bytes: int | None  # shared headroom pool size


@dataclass(frozen=True, slots=True)
class SonicBufferProfile:
    name: str
    pool: str | None
    size_bytes: int | None
    xon_bytes: int | None
    xoff_bytes: int | None
    xon_offset_bytes: int | None
    dynamic_th: int | None
    static_th_bytes: int | None


@dataclass(frozen=True, slots=True)
class SonicBufferAssignment:
    """One PG or queue of a port with its profile resolved (all ``None`` when the profile is NULL)."""

    index: int
    profile: str | None
    pool: str | None
    size_bytes: int | None
    xon_bytes: int | None
    xoff_bytes: int | None
    dynamic_th: int | None
    static_th_bytes: int | None

    @property
    def lossless(self) -> bool:
        """A PG with an xoff headroom is lossless."""
        return bool(self.xoff_bytes)


@dataclass(frozen=True, slots=True)
class SonicPortBuffers:
    port: str
    pgs: dict[int, SonicBufferAssignment]
    queues: dict[int, SonicBufferAssignment]
    ingress_profiles: tuple[str, ...]
    egress_profiles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SonicApplBuffers:
    pools: dict[str, SonicBufferPool]
    profiles: dict[str, SonicBufferProfile]
    ports: dict[str, SonicPortBuffers]


def expand_indices(text: str) -> list[int]:
    """``"3-4"`` -> [3, 4], ``"0,3"`` -> [0, 3], ``"5"`` -> [5]; raises ``ValueError`` otherwise."""
    out: list[int] = []
    for item in text.split(","):
        lo, sep, hi = item.strip().partition("-")
        if not lo.isdigit() or not lo.isascii() or (sep and (not hi.isdigit() or not hi.isascii())):
            raise ValueError(text)
        first, last = int(lo), int(hi) if sep else int(lo)
        if first > last or last > MAX_INDEX:
            raise ValueError(text)
        out.extend(range(first, last + 1))
    return out


def _deref(value: str) -> str | None:
    value = value.strip()
    match = _REF.fullmatch(value)
    if match is not None:
        value = match.group(1)
    return None if value in ("", "NULL") else value


def _opt_uint(row: dict[str, str], name: str, source: str, key: str) -> int | None:
    return parse_uint(row[name], source, name, key=key, strip=True) if name in row else None


def _opt_int(row: dict[str, str], name: str, source: str, key: str) -> int | None:
    if name not in row:
        return None
    if not _INT.fullmatch(row[name].strip()):
        raise ParseError(source, f"{name} as an integer, got {row[name]!r}", key=key)
    return int(row[name])


@pasted
def parse(text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None) -> SonicApplBuffers:
    """Read an APPL_DB dump and resolve the buffer view (ports in natural order)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    dump = read_dump(text, source, log)
    pools: dict[str, SonicBufferPool] = {}
    profiles: dict[str, SonicBufferProfile] = {}
    seen = False  # any buffer entry at all, read or skipped
    for key, row in dump.hashes.items():
        if key.startswith(POOL) and key[len(POOL) :]:
            seen = True
            name = key[len(POOL) :]
            with log.skipping(f"pool {name} (and the profiles in it)"):
                pools[name] = SonicBufferPool(
                    name=name,
                    type=row.get("type"),
                    mode=row.get("mode"),
                    size_bytes=_opt_uint(row, "size", source, key),
                    xoff_bytes=_opt_uint(row, "xoff", source, key),
                )
    for key, row in dump.hashes.items():
        if key.startswith(PROFILE) and key[len(PROFILE) :]:
            seen = True
            name = key[len(PROFILE) :]
            with log.skipping(f"profile {name} (and the PGs and queues bound to it)"):
                pool = _deref(row.get("pool", ""))
                if pool is not None and pool not in pools:
                    raise ParseError(source, f"pool {pool!r} to be in BUFFER_POOL_TABLE", key=key)
                profiles[name] = SonicBufferProfile(
                    name=name,
                    pool=pool,
                    size_bytes=_opt_uint(row, "size", source, key),
                    xon_bytes=_opt_uint(row, "xon", source, key),
                    xoff_bytes=_opt_uint(row, "xoff", source, key),
                    xon_offset_bytes=_opt_uint(row, "xon_offset", source, key),
                    dynamic_th=_opt_int(row, "dynamic_th", source, key),
                    static_th_bytes=_opt_uint(row, "static_th", source, key),
                )
    pgs: dict[str, dict[int, SonicBufferAssignment]] = {}
    queues: dict[str, dict[int, SonicBufferAssignment]] = {}
    lists: dict[str, dict[str, tuple[str, ...]]] = {"in": {}, "out": {}}
    for key, row in dump.hashes.items():
        if key.startswith((PG, QUEUE)):
            seen = True
            with log.skipping(f"row {key}"):
                _read_assignment(key, row, source, profiles, pgs if key.startswith(PG) else queues)
        elif key.startswith((INGRESS_LIST, EGRESS_LIST)):
            seen = True
            port = key.split(":", 1)[1]
            with log.skipping(f"the profile list of {port}"):
                listed = tuple(n for n in (_deref(x) for x in row.get("profile_list", "").split(",")) if n is not None)
                for name in listed:
                    if name not in profiles:
                        raise ParseError(source, f"profile {name!r} to be in BUFFER_PROFILE_TABLE", key=key)
                lists["in" if key.startswith(INGRESS_LIST) else "out"][port] = listed
    names = sorted({*pgs, *queues, *lists["in"], *lists["out"]}, key=natural_key)
    ports = {
        p: SonicPortBuffers(
            port=p,
            pgs=dict(sorted(pgs.get(p, {}).items())),
            queues=dict(sorted(queues.get(p, {}).items())),
            ingress_profiles=lists["in"].get(p, ()),
            egress_profiles=lists["out"].get(p, ()),
        )
        for p in names
    }
    if not pools and not profiles and not ports:
        if seen and log.problems:
            raise log.problems[0].error()  # every buffer entry was bad: nothing in the file is usable
        raise ParseError(source, "at least one BUFFER_POOL/PROFILE/PG/QUEUE table entry")
    return SonicApplBuffers(pools=dict(sorted(pools.items())), profiles=dict(sorted(profiles.items())), ports=ports)


def _read_assignment(
    key: str,
    row: dict[str, str],
    source: str,
    profiles: dict[str, SonicBufferProfile],
    target: dict[str, dict[int, SonicBufferAssignment]],
) -> None:
    """One ``BUFFER_PG_TABLE:``/``BUFFER_QUEUE_TABLE:`` row into ``target`` (nothing stored when it is bad)."""
    ports_part, sep, index_part = key.split(":", 1)[1].rpartition(":")
    try:
        indices = expand_indices(index_part) if sep and ports_part else []
    except ValueError:
        indices = []
    if not indices:
        raise ParseError(source, "a key TABLE:<port>:<index or range> (e.g. 3-4)", key=key)
    assignment = _assign(row, source, key, profiles)
    for port in ports_part.split(","):
        slot = target.setdefault(port.strip(), {})
        for i in indices:
            slot[i] = _at(assignment, i)


def _assign(
    row: dict[str, str], source: str, key: str, profiles: dict[str, SonicBufferProfile]
) -> SonicBufferAssignment:
    if "profile" not in row:
        raise ParseError(source, "field 'profile'", key=key)
    name = _deref(row["profile"])
    if name is None:
        return SonicBufferAssignment(-1, None, None, None, None, None, None, None)
    profile = profiles.get(name)
    if profile is None:
        raise ParseError(source, f"profile {name!r} to be in BUFFER_PROFILE_TABLE", key=key)
    return SonicBufferAssignment(
        index=-1,
        profile=name,
        pool=profile.pool,
        size_bytes=profile.size_bytes,
        xon_bytes=profile.xon_bytes,
        xoff_bytes=profile.xoff_bytes,
        dynamic_th=profile.dynamic_th,
        static_th_bytes=profile.static_th_bytes,
    )


def _at(a: SonicBufferAssignment, index: int) -> SonicBufferAssignment:
    return SonicBufferAssignment(
        index, a.profile, a.pool, a.size_bytes, a.xon_bytes, a.xoff_bytes, a.dynamic_th, a.static_th_bytes
    )
