"""PFC headroom formulas and switch ASIC parameters, shared by the checks and the renderers.

After a receiver sends XOFF, bytes keep arriving for one cable round trip, the peer's response time
and the frames already in flight; the headroom above the XOFF threshold must absorb them or the
lossless class drops packets. Two vendor formulas say how much that is:

* the mlx5 driver's NIC receive-buffer rule (:func:`mlx5_xoff_bytes`, :func:`mlx5_required_buffer`),
  reference host-nic-roce.md §5.2, from torvalds/linux ``mlx5/core/en/port_buffer.c``;
* SONiC's Mellanox switch formula (:func:`sonic_mellanox_xoff`), reference host-nic-roce.md §5.3 and
  switch-qos-sonic-eos-nvue.md §1.4, from sonic-net/sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua``.

What a SONiC PG must hold depends on the switch's buffer model (:func:`sonic_requirement`): the
traditional buffermgrd copies the SKU's ``pg_profile_lookup.ini`` row (:mod:`unifab.qos.pg_profile_tables`),
the dynamic one runs the Lua with the switch's ``LOSSLESS_TRAFFIC_PATTERN``.

Where the switch ASIC is not known, :func:`qbb_xoff_bytes` gives a vendor-neutral *lower bound*
built from the terms the references quantify (the references give the generic 802.1Qbb headroom
only as a list of terms, not as a formula with constants; see the function).

Pure functions and data: no model, no I/O. :func:`sonic_mellanox_xoff` and :func:`sonic_requirement` remember
their answers (a fabric's ports ask a few distinct questions tens of thousands of times), so what they return is
shared between callers: read it, never change it (copy ``terms`` before adding to it).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

from unifab.qos.pg_profile_tables import PG_PROFILE_TABLES, PgProfileRow, PgProfileTable, cable_bucket, table_for

__all__ = [
    "COMMON_CABLE_BUCKETS_M",
    "MLX5_CELL_BYTES",
    "MLX5_CONNECTX_MAX_MTU",
    "MLX5_DEFAULT_CABLE_LEN_M",
    "MLX5_MAX_CABLE_LEN_M",
    "MLX5_MIN_MAX_MTU",
    "MLX5_MIN_SPEED_MBPS",
    "PAUSE_QUANTA",
    "SONIC_DEFAULT_LOSSLESS_MTU",
    "SONIC_SPP_WHEN_UNKNOWN",
    "SPECTRUM_ASICS",
    "AsicParams",
    "HeadroomCalc",
    "SonicRequirement",
    "bytes_on_cable",
    "ceil1k",
    "guess_asic",
    "mlx5_required_buffer",
    "mlx5_xoff_bytes",
    "qbb_xoff_bytes",
    "sonic_cable_length_m",
    "sonic_mellanox_xoff",
    "sonic_requirement",
]

# ---------------------------------------------------------------------------------------------
# NIC side: mlx5 (reference host-nic-roce.md §5.2, linux drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c)

MLX5_MIN_SPEED_MBPS = 40_000  # calculate_xoff floors the link speed at 40G (and uses 40G when the query fails)
MLX5_DEFAULT_CABLE_LEN_M = 7  # MLX5E_DEFAULT_CABLE_LEN
MLX5_MAX_CABLE_LEN_M = 1000  # MLX5E_MAX_CABLE_LENGTH: the driver ignores a PFC delay of 0 or >= this
MLX5_MIN_MAX_MTU = 9216  # max_mtu = max(netdev max_mtu, 9216): 9216 is the floor the driver always applies
# ConnectX netdevs report `maxmtu 9978` (`ip -d link`, CX-4 Lx and CX-7 captures; reference review Q2): the
# max_mtu the driver uses when the netdev's own is not collected. 9216 alone is 762 B low and the driver
# rejects a buffer sized with it (-ENOMEM).
MLX5_CONNECTX_MAX_MTU = 9978
MLX5_CELL_BYTES = 128  # port buffer cell when the SBCAM register does not report one


def mlx5_xoff_bytes(speed_mbps: int, cable_m: int, mtu: int) -> int:
    """Bytes the mlx5 driver reserves above a lossless buffer's XOFF threshold (``calculate_xoff``).

    Source comment: ``xoff = (301 + 2.16 * cable_len) * speed + 2.72 * MTU``; the driver evaluates it
    in unsigned 32-bit integers, left to right::

        xoff = (301 + 216 * cable_len / 100) * speed / 1000 + 272 * mtu / 100

    ``speed_mbps`` is the PTYS operational speed (floored at 40G), ``cable_m`` the driver's cable length
    (``mlnx_qos`` "Cable len", default 7 m; values of 0 or >= 1000 m are never accepted by the driver),
    ``mtu`` the netdev MTU (not max_mtu). Reference host-nic-roce.md §5.2.
    """
    if speed_mbps <= 0 or cable_m < 0 or mtu <= 0:
        raise ValueError(f"speed, cable length and MTU must be positive, got {speed_mbps}, {cable_m}, {mtu}")
    speed = max(speed_mbps, MLX5_MIN_SPEED_MBPS)
    return ((301 + (216 * cable_m) // 100) * speed) // 1000 + (272 * mtu) // 100


def mlx5_required_buffer(
    speed_mbps: int,
    cable_m: int,
    mtu: int,
    max_mtu: int = MLX5_CONNECTX_MAX_MTU,
    cell_bytes: int = MLX5_CELL_BYTES,
) -> int:
    """Smallest lossless receive buffer the mlx5 driver accepts: ``xoff + max_mtu + cell``.

    ``update_xoff_threshold`` rejects a lossless buffer below this size (``-ENOMEM``) and otherwise sets
    ``xoff_threshold = size - xoff`` and ``xon_threshold = xoff_threshold - max_mtu``. The driver's
    ``max_mtu`` is ``max(netdev max_mtu, 9216)`` (``MINIMUM_MAX_MTU``), so 9216 is a floor; pass the netdev's
    real max_mtu (``ip -d link`` maxmtu). The default is ConnectX's 9978. Reference host-nic-roce.md §5.2,
    review-qos-and-fixes.md Q2.
    """
    return mlx5_xoff_bytes(speed_mbps, cable_m, mtu) + max(max_mtu, MLX5_MIN_MAX_MTU) + cell_bytes


# ---------------------------------------------------------------------------------------------
# Switch side: SONiC on NVIDIA Spectrum (reference host-nic-roce.md §5.3, switch-qos-sonic-eos-nvue.md §1.4)

PAUSE_QUANTA: dict[int, int] = {  # IEEE 802.3 31B.3.7 peer response, in 512-bit quanta, by speed in Mb/s
    800_000: 905,
    400_000: 905,
    200_000: 453,
    100_000: 394,
    50_000: 147,
    40_000: 118,
    25_000: 80,
    10_000: 67,
    1_000: 2,
    100: 1,
}
FIBRE_SPEED_M_PER_S = 198_000_000  # speed of light in fibre used by buffer_headroom_mellanox.lua
MIN_PACKET_BYTES = 64


@dataclass(frozen=True, slots=True)
class AsicParams:
    """One Spectrum generation's STATE_DB ``ASIC_TABLE`` entry (sonic-buildimage platform/mellanox/asic_table.j2).

    Latencies are in kB as the table stores them; the Lua multiplies them by 1024.
    """

    name: str
    asic_table_key: str
    generation: int
    cell_size: int
    pipeline_latency_kb: float
    mac_phy_delay_kb: float = 0.8
    peer_response_time_kb: float = 3.8

    @property
    def has_tile_delay(self) -> bool:
        """``kb_on_tile`` applies to ASIC_TABLE keys ending in 4 or 5 (Spectrum-4 and -5)."""
        return self.generation in (4, 5)

    @property
    def extra_xoff_bytes(self) -> int:
        """Spectrum-6 (key ending in 6) adds 18 KB to xoff (sonic-swss 422271e7e)."""
        return 18 * 1024 if self.generation == 6 else 0


SPECTRUM_ASICS: dict[str, AsicParams] = {
    a.name: a
    for a in (
        AsicParams("Spectrum-1", "MELLANOX-SPECTRUM", 1, 96, 19),
        AsicParams("Spectrum-2", "MELLANOX-SPECTRUM-2", 2, 144, 19),
        AsicParams("Spectrum-3", "MELLANOX-SPECTRUM-3", 3, 144, 19),
        AsicParams("Spectrum-4", "MELLANOX-SPECTRUM-4", 4, 192, 19),
        AsicParams("Spectrum-5", "MELLANOX-SPECTRUM-5", 5, 192, 19),
        AsicParams("Spectrum-6", "MELLANOX-SPECTRUM-6", 6, 256, 42),
    )
}

# Switch models of sonic-buildimage's platform → ASIC table (extracted in samples/switch/sonic/
# sonic_mellanox_asic_table_params.json), keyed by the model number that platform strings
# (x86_64-nvidia_sn5600-r0) and HwSKUs (ACS-SN5600) carry.
_MODEL_ASIC: dict[str, str] = (
    dict.fromkeys(("SN2010", "SN2100", "SN2201", "SN2410", "SN2700", "SN2740"), "Spectrum-1")
    | dict.fromkeys(("SN3420", "SN3700", "SN3700C", "SN3800"), "Spectrum-2")
    | dict.fromkeys(("SN4280", "SN4410", "SN4600", "SN4600C", "SN4700", "SN4800"), "Spectrum-3")
    | dict.fromkeys(("SN5400", "SN5600", "SN5610N"), "Spectrum-4")
    | dict.fromkeys(("SN5640",), "Spectrum-5")
    | dict.fromkeys(("SN6600", "SN6810"), "Spectrum-6")
)
_MODEL_RE = re.compile(r"SN(\d{4})([A-Z]?)")


def guess_asic(platform: str | None = None, hwsku: str | None = None) -> str | None:
    """The Spectrum generation of a switch from its platform or HwSKU string; ``None`` when unknown.

    ``guess_asic("x86_64-nvidia_sn5600-r0")``, ``guess_asic(hwsku="ACS-SN5600")`` and
    ``guess_asic(hwsku="SN5600")`` are all ``"Spectrum-4"``. Only models in sonic-buildimage's
    platform → ASIC table are known; anything else (other vendors, unlisted models) is ``None``.
    """
    for text in (platform, hwsku):
        for m in _MODEL_RE.finditer((text or "").upper()):
            asic = _MODEL_ASIC.get(f"SN{m[1]}{m[2]}") or _MODEL_ASIC.get(f"SN{m[1]}")
            if asic is not None:
                return asic
    return None


@dataclass(frozen=True, slots=True)
class HeadroomCalc:
    """Headroom of one lossless PG in bytes, plus the intermediate terms for evidence."""

    xoff: int
    xon: int
    size: int
    terms: dict[str, float] = field(default_factory=dict)


def ceil1k(value: float) -> int:
    """Round up to a whole KiB, as the Lua does (``math.ceil(x / 1024) * 1024``)."""
    return math.ceil(value / 1024) * 1024


def bytes_on_cable(speed_mbps: float, cable_m: float) -> float:
    """Bytes in flight over a cable's round trip: ``2 * L * speed * 1e9 / 1.98e8 / (8 * 1000)``.

    Speed in Mb/s, length in metres, light in fibre at 1.98e8 m/s (buffer_headroom_mellanox.lua since
    sonic-swss 3943093d4; before it the divisor was ``8 * 1024``). Reference host-nic-roce.md §5.3.
    """
    return 2 * cable_m * speed_mbps * 1e9 / FIBRE_SPEED_M_PER_S / (8 * 1000)


@functools.lru_cache(maxsize=4096)  # answers shared: see the module doc
def sonic_mellanox_xoff(
    speed_mbps: int,
    cable_m: float,
    port_mtu: int,
    asic: AsicParams,
    lossless_mtu: int = 1024,
    small_packet_percentage: int = 100,
    shared_headroom_pool: bool = False,
    lanes: int = 8,
    gearbox_delay: float = 0.0,
) -> HeadroomCalc:
    """xoff / xon / size of a lossless PG as SONiC's Mellanox buffer manager computes them.

    Source: sonic-net/sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua`` (current formula: byte-based
    small-packet percentage, ``ceil`` on the worst-case factor, ``kb_on_tile``, the 2 KB compensation and
    the Spectrum-6 18 KB), as transcribed in reference host-nic-roce.md §5.3 and switch-qos §1.4::

        peer_response  = pause_quanta[speed] * 512 / 8      (else ASIC peer_response_time * 1024)
        worst_case     = ceil(cell / 64) if cell > 128 else ceil(2 * cell / (1 + cell))
        p              = 100 * 64 / ((spp * 64 + (100 - spp) * lossless_mtu) / 100)
        occupancy      = (100 - p + p * worst_case) / 100
        propagation    = port_mtu + bytes_on_cable + 2 * bytes_on_gearbox + mac_phy + peer_response + kb_on_tile
        xoff           = ceil1k(lossless_mtu + propagation * occupancy)   (+18 KB on Spectrum-6)
        no SHP, spp != 100: full = ceil1k(lossless_mtu + propagation * worst_case); xoff += 2048 if xoff + 2048 < full
        xon            = ceil1k(pipeline_latency * (2 if 8 lanes else 1))
        size           = ceil1k(xon) with a shared headroom pool, else ceil1k(xoff + xon + (port_mtu if 8 lanes else 0))

    ``small_packet_percentage`` is CONFIG_DB ``LOSSLESS_TRAFFIC_PATTERN`` (dynamic model only; template
    default 50 since Dec 2024, 100 before and what the traditional→dynamic migrator writes; the static
    ``pg_profile_lookup.ini`` tables follow 100, the default here). ``shared_headroom_pool``
    is on when ``BUFFER_POOL|ingress_lossless_pool.xoff`` or ``over_subscribe_ratio`` is non-zero.
    ``lanes`` only changes xon and size. The switch's own tables may be 1 KB above this (compare ±1 KB).
    """
    if speed_mbps <= 0 or cable_m < 0 or port_mtu <= 0:
        raise ValueError(f"speed, cable length and MTU must be positive, got {speed_mbps}, {cable_m}, {port_mtu}")
    if not 0 <= small_packet_percentage <= 100:
        raise ValueError(f"small_packet_percentage must be 0..100, got {small_packet_percentage}")
    cell = asic.cell_size
    quanta = PAUSE_QUANTA.get(speed_mbps)
    peer_response = quanta * 512 / 8 if quanta is not None else asic.peer_response_time_kb * 1024
    worst_case = math.ceil(cell / MIN_PACKET_BYTES) if cell > 2 * MIN_PACKET_BYTES else math.ceil(2 * cell / (1 + cell))
    spp = small_packet_percentage
    p = 100 * MIN_PACKET_BYTES / ((spp * MIN_PACKET_BYTES + (100 - spp) * lossless_mtu) / 100)
    occupancy = (100 - p + p * worst_case) / 100
    on_cable = bytes_on_cable(speed_mbps, cable_m)
    on_gearbox = speed_mbps * gearbox_delay / (8 * 1024) if gearbox_delay else 0.0
    mac_phy = asic.mac_phy_delay_kb * 1024
    on_tile = speed_mbps / 1000 * 120 / 8 if asic.has_tile_delay else 0.0
    propagation = port_mtu + on_cable + 2 * on_gearbox + mac_phy + peer_response + on_tile
    xoff = ceil1k(lossless_mtu + propagation * occupancy) + asic.extra_xoff_bytes
    compensated = False
    if not shared_headroom_pool and spp != 100:
        full = ceil1k(lossless_mtu + propagation * worst_case)
        if xoff + 2048 < full:
            xoff += 2048
            compensated = True
    eight_lane = lanes == 8
    pipeline = asic.pipeline_latency_kb * 1024 * (2 if eight_lane else 1)
    speed_overhead = port_mtu if eight_lane else 0
    xon = ceil1k(pipeline)
    size = ceil1k(xon) if shared_headroom_pool else ceil1k(xoff + xon + speed_overhead)
    terms = {
        "peer_response_time": peer_response,
        "worst_case_factor": float(worst_case),
        "small_packet_percentage_by_byte": round(p, 4),
        "cell_occupancy": round(occupancy, 6),
        "bytes_on_cable": round(on_cable, 2),
        "bytes_on_gearbox": round(on_gearbox, 2),
        "mac_phy_delay": mac_phy,
        "kb_on_tile": on_tile,
        "propagation_delay": round(propagation, 2),
        "pipeline_latency": pipeline,
        "compensation_2k": float(compensated),
    }
    return HeadroomCalc(xoff=xoff, xon=xon, size=size, terms=terms)


# What a SONiC PG needs, by buffer model (reference review-qos-and-fixes.md Q1)

SONIC_SPP_WHEN_UNKNOWN = 100  # LOSSLESS_TRAFFIC_PATTERN not collected: what mellanox_buffer_migrator writes
SONIC_DEFAULT_LOSSLESS_MTU = 1024  # LOSSLESS_TRAFFIC_PATTERN mtu of the template and the migrator
# Cable buckets every shipped Mellanox table has: the lengths to write when the SKU's own table is unknown
COMMON_CABLE_BUCKETS_M: tuple[int, ...] = tuple(
    sorted(set.intersection(*(set(t.cable_buckets) for t in PG_PROFILE_TABLES.values())))
)


@dataclass(frozen=True, slots=True)
class SonicRequirement:
    """The headroom one SONiC lossless PG needs, and how it was found.

    ``method`` is ``"pg_profile_lookup.ini"`` (the SKU table's ``row``, traditional model) or
    ``"buffer_headroom_mellanox.lua"`` (``calc``: the dynamic model, or a traditional switch whose SKU
    table is not shipped). ``cable_bucket_m`` is the ``CABLE_LENGTH`` a fix may write: a table bucket on a
    traditional switch (``None`` past the last bucket), the cable rounded up to a metre on a dynamic one.
    """

    buffer_model: str
    method: str
    xoff: int
    xon: int
    size: int
    shared_headroom_pool: bool
    cable_bucket_m: int | None
    table: PgProfileTable | None = None
    row: PgProfileRow | None = None
    small_packet_percentage: int | None = None
    lossless_mtu: int | None = None
    calc: HeadroomCalc | None = None

    @property
    def threshold(self) -> int:
        """``dynamic_th`` of the profile buffermgrd would write (the row's, else 0)."""
        return self.row.threshold if self.row is not None else 0


@functools.lru_cache(maxsize=4096)  # answers shared: see the module doc
def sonic_requirement(
    speed_mbps: int,
    cable_m: float,
    port_mtu: int,
    asic: AsicParams,
    *,
    buffer_model: str = "traditional",
    hwsku: str | None = None,
    small_packet_percentage: int | None = None,
    lossless_mtu: int | None = None,
    shared_headroom_pool: bool = False,
    lanes: int = 4,
) -> SonicRequirement:
    """What a lossless PG of ``speed_mbps`` over ``cable_m`` needs on a SONiC Spectrum switch.

    * ``traditional`` (DEVICE_METADATA ``buffer_model``, the default): buffermgrd copies the HwSKU's
      ``pg_profile_lookup.ini`` row for the speed and the cable rounded up to the table's bucket
      (sonic-swss ``cfgmgr/buffermgr.cpp``); a SKU whose table is not shipped, or a speed or cable the
      table has no row for, falls back to the Lua at ``small_packet_percentage`` 100, which the tables
      follow. ``LOSSLESS_TRAFFIC_PATTERN`` does not exist in this model and is ignored.
    * ``dynamic``: buffermgrd runs ``buffer_headroom_mellanox.lua`` with the switch's
      ``LOSSLESS_TRAFFIC_PATTERN``; when it was not collected, 100 and MTU 1024 (what
      ``mellanox_buffer_migrator.py`` writes on upgraded switches), never an assumed 50.
    """
    if buffer_model == "dynamic":
        spp = SONIC_SPP_WHEN_UNKNOWN if small_packet_percentage is None else small_packet_percentage
        mtu = lossless_mtu or SONIC_DEFAULT_LOSSLESS_MTU
        calc = sonic_mellanox_xoff(
            speed_mbps, cable_m, port_mtu, asic, mtu, spp, shared_headroom_pool=shared_headroom_pool, lanes=lanes
        )
        return SonicRequirement(
            "dynamic",
            "buffer_headroom_mellanox.lua",
            calc.xoff,
            calc.xon,
            calc.size,
            shared_headroom_pool,
            math.ceil(cable_m),
            small_packet_percentage=spp,
            lossless_mtu=mtu,
            calc=calc,
        )
    table = table_for(hwsku)
    buckets = table.cable_buckets if table is not None else COMMON_CABLE_BUCKETS_M
    bucket = cable_bucket(buckets, cable_m)
    row = table.row(speed_mbps, cable_m) if table is not None else None
    if row is not None:
        return SonicRequirement(
            "traditional",
            "pg_profile_lookup.ini",
            row.xoff,
            row.xon,
            row.size,
            row.shared_headroom_pool,
            bucket,
            table=table,
            row=row,
        )
    calc = sonic_mellanox_xoff(
        speed_mbps,
        cable_m,
        port_mtu,
        asic,
        SONIC_DEFAULT_LOSSLESS_MTU,
        SONIC_SPP_WHEN_UNKNOWN,
        shared_headroom_pool=shared_headroom_pool,
        lanes=lanes,
    )
    return SonicRequirement(
        "traditional",
        "buffer_headroom_mellanox.lua",
        calc.xoff,
        calc.xon,
        calc.size,
        shared_headroom_pool,
        bucket,
        table=table,
        small_packet_percentage=SONIC_SPP_WHEN_UNKNOWN,
        lossless_mtu=SONIC_DEFAULT_LOSSLESS_MTU,
        calc=calc,
    )


def sonic_cable_length_m(cable_m: float, hwsku: str | None = None, buffer_model: str | None = None) -> int:
    """The ``CABLE_LENGTH`` a SONiC port over a ``cable_m`` cable should carry, in metres.

    The traditional buffer model (the default when DEVICE_METADATA names none) looks the profile up by the
    exact ``<speed>_<cable>`` of the HwSKU's ``pg_profile_lookup.ini`` and creates no lossless profile for a
    length the table has no row for, so the cable is rounded up to the table's bucket (the common buckets
    when the SKU's table is not shipped; past the last bucket, the metres). The dynamic model computes the
    headroom from the length itself: the cable rounded up to a metre.
    """
    metres = math.ceil(cable_m)
    if buffer_model == "dynamic":
        return metres
    table = table_for(hwsku)
    bucket = cable_bucket(table.cable_buckets if table is not None else COMMON_CABLE_BUCKETS_M, metres)
    return bucket if bucket is not None else metres


def qbb_xoff_bytes(speed_mbps: int, cable_m: float, mtu: int) -> int:
    """Vendor-neutral *lower bound* on PFC xoff headroom: ``2 * mtu + bytes_on_cable + peer_response``.

    The references give the generic 802.1Qbb headroom only as terms (host-nic-roce.md §5.3: "2 x cable
    propagation + peer response (pause quanta) + MTU(s) in flight + MAC/PHY/pipeline latency"). This
    keeps the terms they quantify: the round trip on the cable (:func:`bytes_on_cable`), the peer's
    response time from the IEEE 802.3 31B.3.7 pause quanta (:data:`PAUSE_QUANTA`; a speed between
    table entries takes the next lower one) and two maximum frames in flight (the one the receiver is
    sending when it decides to pause, the one the peer is sending when the pause arrives). MAC, PHY
    and pipeline latency are implementation-specific and left out, so real headroom must exceed this:
    a buffer below it overflows on any switch.
    """
    if speed_mbps <= 0 or cable_m < 0 or mtu <= 0:
        raise ValueError(f"speed, cable length and MTU must be positive, got {speed_mbps}, {cable_m}, {mtu}")
    quanta = next((q for s, q in sorted(PAUSE_QUANTA.items(), reverse=True) if s <= speed_mbps), 0)
    return math.ceil(2 * mtu + bytes_on_cable(speed_mbps, cable_m) + quanta * 512 / 8)
