"""The static lossless-PG headroom tables (``pg_profile_lookup.ini``) of common NVIDIA Spectrum SONiC SKUs.

In SONiC's traditional buffer model, buffermgrd (sonic-net/sonic-swss ``cfgmgr/buffermgr.cpp``,
``readPgProfileLookupFile`` / ``doSpeedUpdateTask``) copies the row for the port's speed and
``CABLE_LENGTH`` verbatim into ``BUFFER_PROFILE|pg_lossless_<speed>_<cable>_profile``; it runs no
formula, and a cable length without a row (``3m``) fails with "No PG profile configured for speed …
and cable length …". The rows are therefore the requirement of a static profile, and their cable
lengths are the only values a traditional switch accepts in ``CABLE_LENGTH``
(reference review-qos-and-fixes.md Q1, switch-qos-sonic-eos-nvue.md §1.4).

The rows below are copied from sonic-buildimage ``device/mellanox/<platform>/<HwSKU>/pg_profile_lookup.ini``
(columns ``speed cable size xon xoff threshold``; speed in Mb/s, sizes in bytes); :data:`SOURCES` names the
file and commit each table was read from. Tables whose ``size`` equals ``xon`` belong to SKUs with a shared
headroom pool (the PG holds xon, the pool holds xoff).

Pure data and lookups: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "PG_PROFILE_TABLES",
    "SOURCES",
    "PgProfileRow",
    "PgProfileTable",
    "cable_bucket",
    "parse_lookup",
    "table_for",
]


@dataclass(frozen=True, slots=True)
class PgProfileRow:
    """One ``pg_profile_lookup.ini`` row: the profile buffermgrd writes for one speed and cable bucket."""

    speed_mbps: int
    cable_m: int
    size: int
    xon: int
    xoff: int
    threshold: int  # dynamic_th of the generated profile

    @property
    def cable(self) -> str:
        """The cable length as the table and ``CABLE_LENGTH`` spell it (``"5m"``)."""
        return f"{self.cable_m}m"

    @property
    def shared_headroom_pool(self) -> bool:
        """A row whose size holds only xon (the shared headroom pool holds xoff): size below xoff.

        (Non-pool rows have size = xoff + xon, some 1 KB less from the table's rounding.)
        """
        return self.size < self.xoff


@dataclass(frozen=True, slots=True)
class PgProfileTable:
    """A SKU's lookup table and where it was read."""

    hwsku: str
    source: str
    rows: tuple[PgProfileRow, ...]

    @property
    def cable_buckets(self) -> tuple[int, ...]:
        """The cable lengths the table has rows for, in metres, ascending."""
        return tuple(sorted({r.cable_m for r in self.rows}))

    def speeds(self) -> tuple[int, ...]:
        return tuple(sorted({r.speed_mbps for r in self.rows}))

    def row(self, speed_mbps: int, cable_m: float) -> PgProfileRow | None:
        """The row buffermgrd uses for ``speed_mbps`` at ``cable_m`` rounded up to the table's bucket.

        ``None`` when the speed has no rows or the cable is longer than the longest bucket.
        """
        bucket = cable_bucket(self.cable_buckets, cable_m)
        if bucket is None:
            return None
        return next((r for r in self.rows if r.speed_mbps == speed_mbps and r.cable_m == bucket), None)


def cable_bucket(buckets: tuple[int, ...], cable_m: float) -> int | None:
    """The smallest bucket ≥ ``cable_m`` (a 3 m cable is sized as the 5 m row); ``None`` past the last one."""
    return next((b for b in sorted(buckets) if b >= cable_m), None)


_ROW = re.compile(r"\s*(\d+)\s+(\d+)m\s+(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s*")


def parse_lookup(text: str, hwsku: str = "", source: str = "") -> PgProfileTable:
    """Read ``pg_profile_lookup.ini`` text (``#`` comments, ``speed cable size xon xoff threshold`` rows)."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _ROW.fullmatch(line)
        if m is None:
            raise ValueError(f"{source or hwsku or '<input>'}:{number}: expected `speed cable size xon xoff threshold`")
        speed, cable, size, xon, xoff, threshold = (int(g) for g in m.groups())
        rows.append(PgProfileRow(speed, cable, size, xon, xoff, threshold))
    return PgProfileTable(hwsku, source, tuple(rows))


_BI = "sonic-net/sonic-buildimage device/mellanox/"
_SN5600_COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"  # the copy in tests/data/samples/switch/sonic/
_FORK_COMMIT = "e0d7a66288bf8f433de9500186403e7a8d584c7d"  # read from the fork fastiuk/sonic-buildimage

# HwSKU → (file, commit). Several SKUs of one platform share a file (symlinks in the source tree).
SOURCES: dict[str, tuple[str, str]] = {
    "ACS-MSN2700": (_BI + "x86_64-mlnx_msn2700-r0/ACS-MSN2700/pg_profile_lookup.ini", _FORK_COMMIT),
    "Mellanox-SN2700-D48C8": (_BI + "x86_64-mlnx_msn2700-r0/Mellanox-SN2700-D48C8/pg_profile_lookup.ini", _FORK_COMMIT),
    "Mellanox-SN2700-D40C8S8": (
        _BI + "x86_64-mlnx_msn2700-r0/Mellanox-SN2700-D40C8S8/pg_profile_lookup.ini",
        _FORK_COMMIT,
    ),
    "ACS-MSN3800": (_BI + "x86_64-mlnx_msn3800-r0/ACS-MSN3800/pg_profile_lookup.ini", _FORK_COMMIT),
    "Mellanox-SN3800-D112C8": (
        _BI + "x86_64-mlnx_msn3800-r0/Mellanox-SN3800-D112C8/pg_profile_lookup.ini",
        _FORK_COMMIT,
    ),
    "Mellanox-SN4600C-D112C8": (
        _BI + "x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-D112C8/pg_profile_lookup.ini",
        _FORK_COMMIT,
    ),
    # Mellanox-SN4600C-D48C40/pg_profile_lookup.ini is a symlink to ../Mellanox-SN4600C-D112C8/ (edge-core fork)
    "Mellanox-SN4600C-D48C40": (
        _BI + "x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-D48C40/pg_profile_lookup.ini (-> Mellanox-SN4600C-D112C8)",
        _FORK_COMMIT,
    ),
    "ACS-MSN4700": (_BI + "x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini", _FORK_COMMIT),
    "Mellanox-SN4700-C128": (_BI + "x86_64-mlnx_msn4700-r0/Mellanox-SN4700-C128/pg_profile_lookup.ini", _FORK_COMMIT),
    "ACS-SN5600": (_BI + "x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini", _SN5600_COMMIT),
}

# speed cable size xon xoff threshold, verbatim from the files above (license headers left out)
_ACS_MSN2700 = """
  10000    5m 49152  19456  29696          0
  25000    5m 49152  19456  29696          0
  40000    5m 49152  19456  29696          0
  50000    5m 49152  19456  29696          0
 100000    5m 50176  19456  30720          0
  10000   40m 49152  19456  29696          0
  25000   40m 51200  19456  31744          0
  40000   40m 52224  19456  32768          0
  50000   40m 53248  19456  33792          0
 100000   40m 58368  19456  38912          0
  10000  300m 56320  19456  36864          0
  25000  300m 67584  19456  48128          0
  40000  300m 78848  19456  59392          0
  50000  300m 86016  19456  66560          0
 100000  300m 123904 19456  104448         0
"""

_SN2700_D48C8 = """
  10000    5m 19456  19456  22528          0
  25000    5m 19456  19456  22528          0
  40000    5m 19456  19456  22528          0
  50000    5m 19456  19456  22528          0
 100000    5m 19456  19456  23552          0
  10000   40m 19456  19456  22528          0
  25000   40m 19456  19456  24576          0
  40000   40m 19456  19456  25600          0
  50000   40m 19456  19456  25600          0
 100000   40m 19456  19456  29696          0
  10000  300m 19456  19456  27648          0
  25000  300m 19456  19456  36864          0
  40000  300m 19456  19456  45056          0
  50000  300m 19456  19456  50176          0
 100000  300m 19456  19456  78848          0
  10000 2000m 19456  19456  29696          0
  25000 2000m 19456  19456  58368          0
  40000 2000m 19456  19456  87040          0
  50000 2000m 19456  19456 105472          0
 100000 2000m 19456  19456 199680          0
"""

_SN2700_D40C8S8 = """
  10000    5m 19456  19456  22528          0
  25000    5m 19456  19456  22528          0
  40000    5m 19456  19456  22528          0
  50000    5m 19456  19456  22528          0
 100000    5m 19456  19456  23552          0
  10000   40m 19456  19456  22528          0
  25000   40m 19456  19456  24576          0
  40000   40m 19456  19456  25600          0
  50000   40m 19456  19456  25600          0
 100000   40m 19456  19456  29696          0
  10000  300m 19456  19456  27648          0
  25000  300m 19456  19456  36864          0
  40000  300m 19456  19456  45056          0
  50000  300m 19456  19456  50176          0
 100000  300m 19456  19456  78848          0
"""

_ACS_MSN3800 = """
  10000    5m 54272  19456  34816          0
  25000    5m 58368  19456  38912          0
  40000    5m 61440  19456  41984          0
  50000    5m 64512  19456  45056          0
 100000    5m 75776  19456  56320          0
  10000   40m 55296  19456  35840          0
  25000   40m 60416  19456  40960          0
  40000   40m 65536  19456  46080          0
  50000   40m 69632  19456  50176          0
 100000   40m 86016  19456  66560          0
  10000  300m 63488  19456  44032          0
  25000  300m 78848  19456  59392          0
  40000  300m 95232  19456  75776          0
  50000  300m 106496 19456  87040          0
 100000  300m 159744 19456  140288         0
"""

_SN3800_D112C8 = """
  10000    5m 19456  19456  25600          0
  25000    5m 19456  19456  28672          0
  40000    5m 19456  19456  30720          0
  50000    5m 19456  19456  32768          0
 100000    5m 19456  19456  40960          0
  10000   40m 19456  19456  26624          0
  25000   40m 19456  19456  30720          0
  40000   40m 19456  19456  33792          0
  50000   40m 19456  19456  36864          0
 100000   40m 19456  19456  48128          0
  10000  300m 19456  19456  31744          0
  25000  300m 19456  19456  44032          0
  40000  300m 19456  19456  55296          0
  50000  300m 19456  19456  63488          0
 100000  300m 19456  19456 102400          0
  10000 2000m 19456  19456  33792          0
  25000 2000m 19456  19456  65536          0
  40000 2000m 19456  19456  97280          0
  50000 2000m 19456  19456 118784          0
 100000 2000m 19456  19456 225280          0
"""

_SN4600C_D112C8 = """
  10000    5m 19456  19456  24576          0
  25000    5m 19456  19456  26624          0
  40000    5m 19456  19456  30720          0
  50000    5m 19456  19456  33792          0
 100000    5m 19456  19456  59392          0
  10000   40m 19456  19456  25600          0
  25000   40m 19456  19456  28672          0
  40000   40m 19456  19456  33792          0
  50000   40m 19456  19456  36864          0
 100000   40m 19456  19456  66560          0
  10000  300m 19456  19456  30720          0
  25000  300m 19456  19456  41984          0
  40000  300m 19456  19456  54272          0
  50000  300m 19456  19456  63488          0
 100000  300m 19456  19456  120832         0
  10000 2000m 19456  19456  32768          0
  25000 2000m 19456  19456  64512          0
  40000 2000m 19456  19456  97280          0
  50000 2000m 19456  19456  119808         0
 100000 2000m 19456  19456  234496         0
"""

_ACS_MSN4700 = """
  10000    5m 52224  19456  32768          0
  25000    5m 52224  19456  32768          0
  40000    5m 53248  19456  33792          0
  50000    5m 53248  19456  33792          0
 100000    5m 53248  19456  33792          0
 200000    5m 55296  19456  35840          0
 400000    5m 86016  37888  38912          0
  10000   40m 53248  19456  33792          0
  25000   40m 55296  19456  35840          0
  40000   40m 57344  19456  37888          0
  50000   40m 58368  19456  38912          0
 100000   40m 63488  19456  44032          0
 200000   40m 74752  19456  55296          0
 400000   40m 124928 37888  77824          0
  10000  300m 60416  19456  40960          0
  25000  300m 73728  19456  54272          0
  40000  300m 86016  19456  66560          0
  50000  300m 95232  19456  75776          0
 100000  300m 137216 19456  117760         0
 200000  300m 223232 19456  203776         0
 400000  300m 420864 37888  373760         0
"""

_SN4700_C128 = """
  10000    5m 19456  19456  24576          0
  25000    5m 19456  19456  26624          0
  40000    5m 19456  19456  30720          0
  50000    5m 19456  19456  33792          0
 100000    5m 19456  19456  59392          0
 200000    5m 19456  19456  66560          0
  10000   40m 19456  19456  25600          0
  25000   40m 19456  19456  28672          0
  40000   40m 19456  19456  33792          0
  50000   40m 19456  19456  36864          0
 100000   40m 19456  19456  66560          0
 200000   40m 19456  19456  80896          0
  10000  300m 19456  19456  30720          0
  25000  300m 19456  19456  41984          0
  40000  300m 19456  19456  54272          0
  50000  300m 19456  19456  63488          0
 100000  300m 19456  19456  120832         0
 200000  300m 19456  19456  188416         0
  10000 1500m 19456  19456  55296          0
  25000 1500m 19456  19456  103424         0
  40000 1500m 19456  19456  153600         0
  50000 1500m 19456  19456  187392         0
 100000 1500m 19456  19456  366592         0
"""

_ACS_SN5600 = """
  10000    5m 64512   19456  45056         0
  25000    5m 67584   19456  48128         0
  40000    5m 75776   19456  57344         0
  50000    5m 82944   19456  63488         0
 100000    5m 133120  19456  113664        0
 200000    5m 150528  19456  131072        0
 400000    5m 250880  19456  231424        0
 800000    5m 304128  38912  257024        0
  10000   40m 65536   19456  46080         0
  25000   40m 71680   19456  52224         0
  40000   40m 81920   19456  62464         0
  50000   40m 89088   19456  69632         0
 100000   40m 146432  19456  126976        0
 200000   40m 177152  19456  157696        0
 400000   40m 303104  19456  283648        0
 800000   40m 410624  38912  362496        0
  10000  300m 75776   19456  56320         0
  25000  300m 96256   19456  76800         0
  40000  300m 120832  19456  101376        0
  50000  300m 138240  19456  118784        0
 100000  300m 244736  19456  225280        0
 200000  300m 374784  19456  355328        0
 400000  300m 697344  19456  677888        0
 800000  300m 1198080 38912  1150976       0
"""

_TEXT: dict[str, str] = {
    "ACS-MSN2700": _ACS_MSN2700,
    "Mellanox-SN2700-D48C8": _SN2700_D48C8,
    "Mellanox-SN2700-D40C8S8": _SN2700_D40C8S8,
    "ACS-MSN3800": _ACS_MSN3800,
    "Mellanox-SN3800-D112C8": _SN3800_D112C8,
    "Mellanox-SN4600C-D112C8": _SN4600C_D112C8,
    "Mellanox-SN4600C-D48C40": _SN4600C_D112C8,
    "ACS-MSN4700": _ACS_MSN4700,
    "Mellanox-SN4700-C128": _SN4700_C128,
    "ACS-SN5600": _ACS_SN5600,
}

PG_PROFILE_TABLES: dict[str, PgProfileTable] = {
    sku: parse_lookup(text, sku, f"{SOURCES[sku][0]} @ {SOURCES[sku][1][:12]}") for sku, text in _TEXT.items()
}


def table_for(hwsku: str | None) -> PgProfileTable | None:
    """The lookup table of a HwSKU (``DEVICE_METADATA|localhost hwsku``); ``None`` when it is not shipped.

    Only exact SKU names match (case-insensitively): SKUs of one model differ (the D112C8 SKUs use a shared
    headroom pool, the ACS ones do not), so an unknown SKU gets no table rather than a neighbour's.
    """
    if not hwsku:
        return None
    name = _BY_UPPER.get(hwsku.strip().upper())
    return PG_PROFILE_TABLES[name] if name else None


_BY_UPPER = {sku.upper(): sku for sku in PG_PROFILE_TABLES}
