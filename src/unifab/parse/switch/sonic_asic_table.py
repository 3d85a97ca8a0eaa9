"""SONiC on NVIDIA Spectrum: the ``ASIC_TABLE`` headroom parameters per ASIC generation.

Reads the JSON extracted from sonic-buildimage ``platform/mellanox/asic_table.j2`` (the sample
``sonic_mellanox_asic_table_params.json`` is *derived*: the Jinja template's literal dicts turned into
JSON, not a device dump)::

    {"ASIC_TABLE": {"ASIC_TABLE:MELLANOX-SPECTRUM-4": {"cell_size": "192", "pipeline_latency": "19",
                     "mac_phy_delay": "0.8", "peer_response_time": "3.8", "port_reserved_shp": "20",
                     "port_max_shp": "8192"}, ...},
     "platform_to_asic": {"x86_64-nvidia_sn5600-r0": "MELLANOX-SPECTRUM-4", ..., "vs-platform": "vs"}}

buffermgrd loads the entry of the running platform into STATE_DB ``ASIC_TABLE|<asic>`` and
``buffer_headroom_mellanox.lua`` reads it: ``cell_size`` in bytes, ``pipeline_latency``,
``mac_phy_delay`` and ``peer_response_time`` in kB (the Lua multiplies by 1024). A flat Redis-style
object (``{"ASIC_TABLE:MELLANOX-SPECTRUM": {...}}`` or ``ASIC_TABLE|...`` keys at the top) is read too,
with an empty platform map. The platform map may name an ASIC with no entry (``vs``): kept as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from unifab.errors import ParseError
from unifab.parse._json import child, json_object, json_string, load_json, type_name
from unifab.parse._text import pasted

__all__ = ["SonicAsicParams", "SonicAsicTable", "parse"]

_PREFIXES = ("ASIC_TABLE:", "ASIC_TABLE|")


@dataclass(frozen=True, slots=True)
class SonicAsicParams:
    """One ``ASIC_TABLE`` entry."""

    asic: str  # "MELLANOX-SPECTRUM-4"
    cell_size_bytes: int
    pipeline_latency_kb: float
    mac_phy_delay_kb: float
    peer_response_time_kb: float
    port_reserved_shp: int | None
    port_max_shp: int | None


@dataclass(frozen=True, slots=True)
class SonicAsicTable:
    asics: dict[str, SonicAsicParams]
    platform_to_asic: dict[str, str]


def _number(value: object, path: str, source: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ParseError(source, f"expected a number, got {type_name(value)}", key=path)
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ParseError(source, f"expected a number, got {value!r}", key=path) from None
    if not number.is_finite() or number < 0:
        raise ParseError(source, f"expected a non-negative number, got {value!r}", key=path)
    return number


def _int(value: object, path: str, source: str) -> int:
    number = _number(value, path, source)
    if number != number.to_integral_value():
        raise ParseError(source, f"expected an integer, got {value!r}", key=path)
    return int(number)


def _entry(asic: str, body: object, path: str, source: str) -> SonicAsicParams:
    obj = json_object(body, path, source)

    def need(name: str) -> object:
        if name not in obj:
            raise ParseError(source, f"expected field {name!r}", key=path)
        return obj[name]

    def opt_int(name: str) -> int | None:
        return _int(obj[name], child(path, name), source) if name in obj else None

    return SonicAsicParams(
        asic=asic,
        cell_size_bytes=_int(need("cell_size"), child(path, "cell_size"), source),
        pipeline_latency_kb=float(_number(need("pipeline_latency"), child(path, "pipeline_latency"), source)),
        mac_phy_delay_kb=float(_number(need("mac_phy_delay"), child(path, "mac_phy_delay"), source)),
        peer_response_time_kb=float(_number(need("peer_response_time"), child(path, "peer_response_time"), source)),
        port_reserved_shp=opt_int("port_reserved_shp"),
        port_max_shp=opt_int("port_max_shp"),
    )


def _asics(table: dict[str, object], path: str, source: str) -> dict[str, SonicAsicParams]:
    out: dict[str, SonicAsicParams] = {}
    for key, body in table.items():
        kpath = child(path, key)
        prefix = next((p for p in _PREFIXES if key.startswith(p)), None)
        if prefix is None or not key[len(prefix) :]:
            raise ParseError(source, "expected a key 'ASIC_TABLE:<ASIC>'", key=kpath)
        asic = key[len(prefix) :]
        out[asic] = _entry(asic, body, kpath, source)
    return out


@pasted
def parse(text: str | bytes, source: str = "<input>") -> SonicAsicTable:
    """The ASIC parameter table and platform map."""
    doc = json_object(load_json(text if isinstance(text, str) else text.decode("utf-8", "replace"), source), "", source)
    if "ASIC_TABLE" in doc:
        asics = _asics(json_object(doc["ASIC_TABLE"], "ASIC_TABLE", source), "ASIC_TABLE", source)
        platforms: dict[str, str] = {}
        if "platform_to_asic" in doc:
            pmap = json_object(doc["platform_to_asic"], "platform_to_asic", source)
            for platform, asic in pmap.items():
                platforms[platform] = json_string(asic, child("platform_to_asic", platform), source)
    else:
        asics = _asics({k: v for k, v in doc.items() if k.startswith(_PREFIXES)}, "", source)
        platforms = {}
    if not asics:
        raise ParseError(source, "expected at least one ASIC_TABLE entry", key="ASIC_TABLE")
    return SonicAsicTable(asics=asics, platform_to_asic=platforms)
