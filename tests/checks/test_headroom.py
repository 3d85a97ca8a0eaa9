"""QOS-HEADROOM: the formulas against the references' worked values and a real SONiC table, then the check."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from unifab.checks.context import CheckContext
from unifab.checks.headroom import CHECKS, check_headroom
from unifab.model import Fabric, Finding, Headroom, Severity, SwitchBuffers
from unifab.parse.host import ip_link
from unifab.qos.headroom import (
    SPECTRUM_ASICS,
    guess_asic,
    mlx5_required_buffer,
    mlx5_xoff_bytes,
    qbb_xoff_bytes,
    sonic_mellanox_xoff,
)

FabricFactory = Callable[..., Fabric]

SN5600 = SPECTRUM_ASICS["Spectrum-4"]
SPECTRUM_2 = SPECTRUM_ASICS["Spectrum-2"]


# ----------------------------------------------------------------------------------------- mlx5 NIC formula


@pytest.mark.parametrize(
    ("speed", "cable", "mtu", "xoff"),
    [
        (100_000, 7, 9000, 56_080),
        (400_000, 7, 9000, 150_880),
        (400_000, 30, 9000, 170_480),
        (200_000, 7, 4200, 74_624),
        (25_000, 7, 1500, 16_720),  # floored to 40G
        (40_000, 7, 1500, 16_720),
    ],
)
def test_mlx5_xoff_worked_values(speed: int, cable: int, mtu: int, xoff: int) -> None:
    """host-nic-roce.md §5.2 worked values of the driver's integer expression."""
    assert mlx5_xoff_bytes(speed, cable, mtu) == xoff


def test_mlx5_required_buffer_adds_max_mtu_and_a_cell() -> None:
    # ConnectX's netdev max_mtu 9978 by default, not 9216 (reference review Q2: 9216 sizes are rejected)
    assert mlx5_required_buffer(400_000, 7, 9000) == 150_880 + 9978 + 128 == 160_986
    assert mlx5_required_buffer(100_000, 7, 9000) == 66_186
    assert mlx5_required_buffer(400_000, 3, 9000) == 147_280 + 9978 + 128
    assert mlx5_required_buffer(400_000, 7, 9000, max_mtu=9216) == 150_880 + 9216 + 128
    assert mlx5_required_buffer(400_000, 7, 9000, max_mtu=4096) == 150_880 + 9216 + 128  # 9216 is the floor


def test_mlx5_rejects_nonsense_inputs() -> None:
    with pytest.raises(ValueError, match="positive"):
        mlx5_xoff_bytes(0, 7, 9000)


# ----------------------------------------------------------------------------------------- SONiC Mellanox formula


def _lookup_rows(path: Path) -> list[tuple[int, int, int, int, int]]:
    """``speed cable size xon xoff threshold`` rows of a pg_profile_lookup.ini."""
    rows = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        speed, cable, size, xon, xoff = fields[:5]
        rows.append((int(speed), int(cable.removesuffix("m")), int(size), int(xon), int(xoff)))
    return rows


def test_sonic_formula_reproduces_the_sn5600_table(samples: Path) -> None:
    """The real ACS-SN5600 static table (small-packet 100 %, port MTU 9100, no SHP) within ±1 KB."""
    rows = _lookup_rows(samples / "switch" / "sonic" / "sonic_mellanox_sn5600_pg_profile_lookup.ini")
    assert len(rows) == 24
    exact = 0
    for speed, cable, size, xon, xoff in rows:
        lanes = 8 if speed == 800_000 else 4  # the table's 800G rows carry the 8-lane xon
        calc = sonic_mellanox_xoff(speed, cable, 9100, SN5600, small_packet_percentage=100, lanes=lanes)
        assert abs(calc.xoff - xoff) <= 1024, (speed, cable, calc, xoff)
        assert calc.xon == xon, (speed, cable)
        assert abs(calc.size - size) <= 1024, (speed, cable, calc, size)
        exact += calc.xoff == xoff
    assert exact == 15  # switch-qos §1.4: 15 of 24 rows match exactly, the other 9 are 1 KB above


@pytest.mark.parametrize(
    ("speed", "cable", "lanes", "s23_spp100", "s23_spp50", "s4_spp100"),
    [
        (100_000, 5, 4, (108_544, 19_456, 128_000), (48_128, 19_456, 67_584), (113_664, 19_456, 133_120)),
        (100_000, 300, 4, (220_160, 19_456, 239_616), (94_208, 19_456, 113_664), (225_280, 19_456, 244_736)),
        (400_000, 5, 4, (212_992, 19_456, 232_448), (90_112, 19_456, 109_568), (230_400, 19_456, 249_856)),
        (400_000, 5, 8, (212_992, 38_912, 261_120), (90_112, 38_912, 138_240), (230_400, 38_912, 278_528)),
        (400_000, 40, 8, (265_216, 38_912, 313_344), (112_640, 38_912, 160_768), (283_648, 38_912, 331_776)),
    ],
)
def test_sonic_formula_worked_values(
    speed: int,
    cable: int,
    lanes: int,
    s23_spp100: tuple[int, int, int],
    s23_spp50: tuple[int, int, int],
    s4_spp100: tuple[int, int, int],
) -> None:
    """host-nic-roce.md §5.3 table: port MTU 9100, lossless MTU 1024, no gearbox, no shared headroom pool."""
    for asic, spp, want in ((SPECTRUM_2, 100, s23_spp100), (SPECTRUM_2, 50, s23_spp50), (SN5600, 100, s4_spp100)):
        calc = sonic_mellanox_xoff(speed, cable, 9100, asic, small_packet_percentage=spp, lanes=lanes)
        assert (calc.xoff, calc.xon, calc.size) == want, (asic.name, spp)


def test_sonic_formula_shared_headroom_pool_and_spectrum_6() -> None:
    shp = sonic_mellanox_xoff(400_000, 3, 9100, SN5600, small_packet_percentage=50, shared_headroom_pool=True, lanes=4)
    no_shp = sonic_mellanox_xoff(400_000, 3, 9100, SN5600, small_packet_percentage=50, lanes=4)
    assert (shp.xoff, shp.xon, shp.size) == (94_208, 19_456, 19_456)  # size holds xon only
    assert no_shp.xoff == 94_208 + 2048 and no_shp.terms["compensation_2k"] == 1.0
    s5 = sonic_mellanox_xoff(400_000, 5, 9100, SPECTRUM_ASICS["Spectrum-5"], small_packet_percentage=100, lanes=4)
    assert s5.xoff == 230_400  # same cell and tile delay as Spectrum-4
    s6 = sonic_mellanox_xoff(400_000, 5, 9100, SPECTRUM_ASICS["Spectrum-6"], small_packet_percentage=100, lanes=4)
    assert s6.xon == 43_008  # 42 kB pipeline latency
    assert s6.xoff % 1024 == 0 and s6.terms["kb_on_tile"] == 0.0 and s6.terms["worst_case_factor"] == 4.0


def test_sonic_formula_unknown_speed_uses_asic_peer_response() -> None:
    calc = sonic_mellanox_xoff(2_500, 5, 9100, SN5600, small_packet_percentage=100)
    assert calc.terms["peer_response_time"] == pytest.approx(3.8 * 1024)


def test_qbb_lower_bound() -> None:
    # 2 x 9100 + 2*3 m round trip at 400G (1515.15 B) + 905 quanta * 64 B
    assert qbb_xoff_bytes(400_000, 3, 9100) == 77_636
    assert qbb_xoff_bytes(400_000, 3, 9100) < sonic_mellanox_xoff(400_000, 3, 9100, SN5600).xoff
    assert qbb_xoff_bytes(150_000, 0, 1500) == 3000 + 394 * 64  # between table speeds: the next lower one


@pytest.mark.parametrize(
    ("platform", "hwsku", "asic"),
    [
        (None, "SN5600", "Spectrum-4"),
        (None, "ACS-SN5600", "Spectrum-4"),
        ("x86_64-nvidia_sn5600-r0", None, "Spectrum-4"),
        ("x86_64-mlnx_msn2700a1-r0", None, "Spectrum-1"),
        (None, "Mellanox-SN2700-D48C8", "Spectrum-1"),
        (None, "Mellanox-SN4600C-C64", "Spectrum-3"),
        ("x86_64-mlnx_msn3800-r0", None, "Spectrum-2"),
        ("x86_64-nvidia_sn5640-r0", None, "Spectrum-5"),
        ("x86_64-nvidia_sn6600_ld-r0", None, "Spectrum-6"),
        ("x86_64-arista_7060x6_64pe", "Arista-7060X6-64PE", None),
        (None, "SN9999", None),
        (None, None, None),
    ],
)
def test_guess_asic(platform: str | None, hwsku: str | None, asic: str | None) -> None:
    assert guess_asic(platform, hwsku) == asic


# ----------------------------------------------------------------------------------------- the check

LOSSY = Headroom("ingress_lossy_profile", 0, None, None)
# ACS-SN5600 pg_profile_lookup.ini row 400000 5m (what traditional buffermgrd writes)
ROW_PROFILE = Headroom("pg_lossless_400000_5m_profile", 250_880, 19_456, 231_424)
SHP_PROFILE = Headroom("pg_lossless_400000_5m_profile", 19_456, 19_456, 231_424)  # shared headroom pool: size = xon
# the Lua at small-packet 50 % for 400G over 5 m (no pool, 4 lanes): 43 % of the vendor's row
SPP50_PROFILE = Headroom("pg_lossless_400000_5m_profile", 117_760, 19_456, 98_304)
NIC_BUFFERS = (130_944, 261_888, 0, 0, 0, 0, 0, 0)
PRIO2BUFFER = (0, 0, 0, 1, 0, 0, 0, 0)
POOL_NOTE = "# check first that ingress_lossless_pool has room"


def _fabric(
    make_fabric: FabricFactory,
    n: int = 4,
    headroom: dict[int, dict[int, Headroom]] | None = None,
    nic_qos: dict[int, dict[str, Any]] | None = None,
    port_qos: dict[int, dict[str, Any]] | None = None,
    hwsku: str | None = "ACS-SN5600",
    default: Headroom = ROW_PROFILE,
    buffers: SwitchBuffers | None = None,
    nic: dict[int, dict[str, Any]] | None = None,
) -> Fabric:
    """``make_fabric`` with SONiC buffers on every port (PG 0 lossy, PG 3 ``default``) and mlx5 NIC buffers.

    Everything these tests compute with is pinned here, whatever the shared fixture's defaults become:
    NIC MTU 9000, Cable len 7 m, PFC on 3 in buffer 1; port 400G, MTU 9100, CABLE_LENGTH 5 m, TC t -> PG t.
    """
    headroom = headroom or {}
    nic_base: dict[str, Any] = {
        "rx_buffer_sizes": NIC_BUFFERS,
        "prio2buffer": PRIO2BUFFER,
        "cable_len_m": 7,
        "pfc_enabled": frozenset({3}),
    }
    port_base: dict[str, Any] = {"cable_len_m": 5, "pfc_enabled": frozenset({3}), "tc_to_pg": {t: t for t in range(8)}}
    nq = {i: nic_base | (nic_qos or {}).get(i, {}) for i in range(n)}
    pq = {
        i: port_base | {"headroom": headroom.get(i, {0: LOSSY, 3: default})} | (port_qos or {}).get(i, {})
        for i in range(n)
    }
    ports = {i: {"speed_mbps": 400_000, "mtu": 9100} for i in range(n)}
    nics = {i: {"mtu": 9000} | (nic or {}).get(i, {}) for i in range(n)}
    fabric = make_fabric(n, nic=nics, nic_qos=nq, port=ports, port_qos=pq)
    leaf = fabric.switches["leaf1"]
    fabric.switches["leaf1"] = replace(leaf, hwsku=hwsku, platform=None, buffers=buffers)
    return fabric


def _run(fabric: Fabric) -> list[Finding]:
    return list(check_headroom(CheckContext.build(fabric)))


def test_registered_spec() -> None:
    assert [s.id for s in CHECKS] == ["QOS-HEADROOM"]
    assert CHECKS[0].run is check_headroom
    assert "pg_profile_lookup.ini" in CHECKS[0].fix and "driver-owned" in CHECKS[0].fix


@pytest.mark.parametrize("profile", [ROW_PROFILE, SHP_PROFILE], ids=["table-row", "shared-headroom-pool"])
def test_clean_ports_pass(make_fabric: FabricFactory, profile: Headroom) -> None:
    assert _run(_fabric(make_fabric, default=profile)) == []


def test_static_profile_below_its_row_is_reported(make_fabric: FabricFactory) -> None:
    """A traditional SN5600 port holding the spp-50 number: short of the SKU's row, shown with both numbers."""
    (f,) = _run(_fabric(make_fabric, n=1, default=SPP50_PROFILE))
    assert f.check == "QOS-HEADROOM" and f.severity is Severity.WARNING  # between the spp-50 floor and the row
    assert f.entities == ("link:gpu001:eth0--leaf1:Ethernet0",)
    assert "ACS-SN5600's pg_profile_lookup.ini row for 400G 5m" in f.message and "traditional" in f.message
    b = f.evidence["b"]
    assert b["formula"] == "pg_profile_lookup.ini"
    assert b["buffer_model"]["value"] == "traditional" and "inferred" in b["buffer_model"]["source"]
    assert b["table_row"] | {"file": None} == {
        "hwsku": "ACS-SN5600",
        "file": None,
        "speed": 400_000,
        "cable": "5m",
        "size": 250_880,
        "xon": 19_456,
        "xoff": 231_424,
        "threshold": 0,
    }
    assert "x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini" in b["table_row"]["file"]
    assert b["required"] == {"xoff": 231_424, "xon": 19_456, "size": 250_880}
    assert b["floor_xoff_spp50"] == 98_304 and b["shortfall_bytes"] == 133_120 and b["tolerance_bytes"] == 0
    assert b["inputs"]["hwsku"]["value"] == "ACS-SN5600" and b["inputs"]["asic"]["value"]["name"] == "Spectrum-4"
    assert [(x.device, x.commands) for x in f.fix] == [
        (
            "leaf1",
            (
                f"{POOL_NOTE}: this adds 133120 B of headroom to each of 1 PG(s) "
                "(mmuconfig -l lists pools and profiles; headroom the pool cannot hold is rejected)",
                "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_5m_profile' "
                "'xoff' '231424' 'size' '250880'",
            ),
        )
    ]
    assert "dropped" in f.impact["summary"] and f.impact["priorities"] == [3]


def test_far_below_the_floor_is_an_error(make_fabric: FabricFactory) -> None:
    short = Headroom("pg_lossless_400000_5m_short_profile", 43_520, 19_456, 24_064)
    (f,) = _run(_fabric(make_fabric, n=1, headroom={0: {0: LOSSY, 3: short}}))
    assert f.severity is Severity.ERROR
    (hset,) = [c for c in f.fix[0].commands if not c.startswith("#")][:1]
    assert hset.endswith("'BUFFER_PROFILE|pg_lossless_400000_5m_short_profile' 'xoff' '231424' 'size' '250880'")
    # not the port's buffermgrd profile: buffermgrd puts its own back on the next speed or cable change
    assert f.fix[0].commands[-1].startswith("# buffermgrd re-binds the port to pg_lossless_400000_5m_profile")


def test_size_below_xoff_plus_xon_is_reported(make_fabric: FabricFactory) -> None:
    thin = Headroom("pg_lossless_400000_5m_profile", 235_520, 19_456, 231_424)  # size holds xoff, not xon
    (f,) = _run(_fabric(make_fabric, n=1, headroom={0: {0: LOSSY, 3: thin}}))
    assert "size 235520 B is 15360 B below the 250880 B (xoff + xon)" in f.message
    assert f.fix[0].commands[-1].endswith("'BUFFER_PROFILE|pg_lossless_400000_5m_profile' 'size' '250880'")


def test_cable_rounds_up_to_the_tables_bucket(make_fabric: FabricFactory) -> None:
    """CABLE_LENGTH 3m: sized as the 5m row, and the fix says 3m is not a length buffermgrd accepts."""
    spp50_3m = Headroom("pg_lossless_400000_3m_profile", 115_712, 19_456, 96_256)
    (f,) = _run(_fabric(make_fabric, n=1, headroom={0: {0: LOSSY, 3: spp50_3m}}, port_qos={0: {"cable_len_m": 3}}))
    b = f.evidence["b"]
    assert b["inputs"]["cable_m"] == {"value": 3, "source": "CABLE_LENGTH Ethernet0"}
    assert b["table_row"]["cable"] == "5m" and b["required"]["xoff"] == 231_424 and b["floor_xoff_spp50"] == 96_256
    assert f.fix[0].commands[-1] == (
        "# CABLE_LENGTH 3m has no pg_profile_lookup.ini row: traditional buffermgrd accepts only 5m, 40m, 300m "
        "(5m covers this cable)"
    )


def test_cable_from_plan_is_written_as_a_table_bucket(make_fabric: FabricFactory) -> None:
    fabric = _fabric(make_fabric, n=1, port_qos={0: {"cable_len_m": None}})
    fabric.links[0] = replace(fabric.links[0], cable_m=100.0)
    (f,) = _run(fabric)
    b = f.evidence["b"]
    assert b["inputs"]["cable_m"]["value"] == 100.0 and "plan" in b["inputs"]["cable_m"]["source"]
    assert b["table_row"]["cable"] == "300m" and b["required"]["xoff"] == 677_888
    assert f.fix[0].commands[-1] == "sonic-db-cli CONFIG_DB hset 'CABLE_LENGTH|AZURE' 'Ethernet0' '300m'"


def test_default_cable_when_unknown(make_fabric: FabricFactory) -> None:
    # no CABLE_LENGTH and no plan length: 5 m assumed, so the 5m row; no CABLE_LENGTH command (length unknown)
    (f,) = _run(_fabric(make_fabric, n=1, default=SPP50_PROFILE, port_qos={0: {"cable_len_m": None}}))
    cable = f.evidence["b"]["inputs"]["cable_m"]
    assert cable["value"] == 5 and "assumed" in cable["source"]
    assert not any("CABLE_LENGTH" in c for c in f.fix[0].commands)


def test_lossless_priority_without_pg_headroom(make_fabric: FabricFactory) -> None:
    (f,) = _run(_fabric(make_fabric, headroom={3: {0: LOSSY}}))
    assert f.severity is Severity.CRITICAL and "no BUFFER_PG entry" in f.message
    assert f.evidence["b"]["pg"] == 3 and f.evidence["b"]["configured"] is None
    assert f.evidence["b"]["required"]["xoff"] == 231_424
    # the switch already has buffermgrd's profile for 400G/5m: point the PG at it
    assert f.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet24|3' 'profile' 'pg_lossless_400000_5m_profile'",
    )


def test_lossless_pg_creates_the_table_profile_in_one_write(make_fabric: FabricFactory) -> None:
    (f,) = _run(_fabric(make_fabric, n=1, headroom={0: {0: LOSSY}}))
    assert f.fix[0].commands[1:] == (
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_5m_profile' 'pool' 'ingress_lossless_pool' "
        "'xon' '19456' 'xoff' '231424' 'size' '250880' 'dynamic_th' '0'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet0|3' 'profile' 'pg_lossless_400000_5m_profile'",
    )
    assert f.fix[0].commands[0].startswith(POOL_NOTE)


def test_lossless_tc_in_a_lossy_pg(make_fabric: FabricFactory) -> None:
    findings = _run(_fabric(make_fabric, headroom={1: {0: LOSSY, 3: LOSSY}}))
    assert [f.severity for f in findings] == [Severity.CRITICAL]
    assert "ingress_lossy_profile with no xoff" in findings[0].message


def test_port_without_buffer_data_is_skipped(make_fabric: FabricFactory) -> None:
    # no BUFFER_PG rows at all (EOS, or a config rendered before buffermgrd ran): unknown, not absent
    assert _run(_fabric(make_fabric, headroom={0: {}})) == []


def test_unknown_sku_uses_the_lua_at_spp_100(make_fabric: FabricFactory) -> None:
    """A Spectrum-4 SKU whose table is not shipped: the Lua at the tables' 100 %, never the template's 50."""
    (f,) = _run(_fabric(make_fabric, n=1, hwsku="Mellanox-SN5600-V256", default=SPP50_PROFILE))
    b = f.evidence["b"]
    assert b["formula"] == "sonic-mellanox" and "table_row" not in b
    assert b["inputs"]["small_packet_percentage"]["value"] == 100
    assert (
        "no pg_profile_lookup.ini shipped for hwsku 'Mellanox-SN5600-V256'"
        in (b["inputs"]["small_packet_percentage"]["source"])
    )
    assert b["required"]["xoff"] == 230_400 and b["tolerance_bytes"] == 1024  # the row is 1 KB above
    assert _run(_fabric(make_fabric, n=1, hwsku="Mellanox-SN5600-V256")) == []  # the row passes within 1 KB


# ------------------------------------------------------------------------------ the dynamic buffer model

DYNAMIC_NULL = Headroom(None, None, None, None, dynamic=True)
OVERRIDE_SPP50 = Headroom("headroom_override", 117_760, 19_456, 98_304)  # the Lua at spp 50, 400G 5 m, no pool


def test_dynamic_null_pg_is_the_switchs_business(make_fabric: FabricFactory) -> None:
    dynamic = SwitchBuffers("dynamic")
    fabric = _fabric(make_fabric, default=DYNAMIC_NULL, port_qos={0: {"cable_len_m": 300}}, buffers=dynamic)
    assert _run(fabric) == []


def test_dynamic_with_collected_traffic_pattern(make_fabric: FabricFactory) -> None:
    """LOSSLESS_TRAFFIC_PATTERN collected at 50 %: a static override sized to it passes, one below it errs."""
    pattern = SwitchBuffers("dynamic", lossless_mtu=1024, small_packet_percentage=50)
    assert _run(_fabric(make_fabric, n=2, default=OVERRIDE_SPP50, buffers=pattern)) == []
    small = Headroom("headroom_override_small", 109_568, 19_456, 90_112)
    (f,) = _run(_fabric(make_fabric, n=2, default=OVERRIDE_SPP50, buffers=pattern, headroom={1: {0: LOSSY, 3: small}}))
    assert f.severity is Severity.ERROR  # the switch's own pattern: no assumption to soften it
    b = f.evidence["b"]
    assert b["formula"] == "sonic-mellanox" and "dynamic buffer model" in f.message
    assert b["buffer_model"] == {"value": "dynamic", "source": "DEVICE_METADATA|localhost buffer_model"}
    assert b["inputs"]["small_packet_percentage"] == {"value": 50, "source": "LOSSLESS_TRAFFIC_PATTERN"}
    assert b["required"]["xoff"] == 98_304 and b["terms"]["compensation_2k"] == 1.0
    assert f.fix[0].commands[-1] == (
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|headroom_override_small' 'xoff' '98304' 'size' '117760'"
    )


@pytest.mark.parametrize("buffers", [SwitchBuffers("dynamic"), None], ids=["collected-model", "inferred-model"])
def test_dynamic_without_traffic_pattern_assumes_100_not_50(
    make_fabric: FabricFactory, buffers: SwitchBuffers | None
) -> None:
    # port 0's NULL PG makes the model inferable when DEVICE_METADATA's buffer_model is not in the model
    headroom = {0: {0: LOSSY, 3: DYNAMIC_NULL}}
    (f,) = _run(_fabric(make_fabric, n=2, default=OVERRIDE_SPP50, buffers=buffers, headroom=headroom))
    b = f.evidence["b"]
    assert b["buffer_model"]["value"] == "dynamic"
    spp = b["inputs"]["small_packet_percentage"]
    assert spp["value"] == 100 and "not collected" in spp["source"] and "never an assumed 50" in spp["source"]
    assert b["required"]["xoff"] == 230_400 and b["floor_xoff_spp50"] == 98_304
    assert f.severity is Severity.WARNING  # at the spp-50 value: short only if the switch runs 100 %


def test_missing_pg_on_dynamic_switch_fixes_with_null_profile(make_fabric: FabricFactory) -> None:
    fabric = _fabric(make_fabric, n=2, headroom={0: {0: LOSSY, 3: DYNAMIC_NULL}, 1: {0: LOSSY}})
    (f,) = _run(fabric)
    assert f.fix[0].commands == ("sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet8|3' 'profile' 'NULL'",)


def test_shared_headroom_pool_from_the_collected_pool(make_fabric: FabricFactory) -> None:
    pool = SwitchBuffers("traditional", lossless_pool_xoff=8_250_000)
    (f,) = _run(_fabric(make_fabric, n=1, headroom={0: {0: LOSSY}}, buffers=pool))
    assert f.evidence["b"]["inputs"]["shared_headroom_pool"]["value"] is True
    assert "'size' '19456'" in f.fix[0].commands[1]  # a pool-shaped profile: size holds xon


def test_unknown_asic_uses_the_generic_lower_bound(make_fabric: FabricFactory) -> None:
    small = Headroom("p", 90_000, 19_456, 70_000)
    fabric = _fabric(make_fabric, n=2, hwsku="Arista-7060X6-64PE", headroom={1: {0: LOSSY, 3: small}})
    (f,) = _run(fabric)
    b = f.evidence["b"]
    assert b["formula"] == "802.1Qbb lower bound"
    assert b["required"]["xoff"] == qbb_xoff_bytes(400_000, 5, 9100) and b["inputs"]["asic"]["value"] is None
    assert "lower bound" in f.message and f.severity is Severity.ERROR


# ----------------------------------------------------------------------------------------- mlx5 NICs


def test_nic_lossless_buffer_too_small(make_fabric: FabricFactory) -> None:
    """160 256 B is what a 9216-based fix wrote for 400G/7 m; the driver needs 160 986 (max_mtu 9978)."""
    old_fix = (130_944, 160_256, 0, 0, 0, 0, 0, 0)
    (f,) = _run(_fabric(make_fabric, nic_qos={2: {"rx_buffer_sizes": old_fix}}))
    assert f.severity is Severity.WARNING and "ownership not collected" in f.message
    a = f.evidence["a"]
    assert a["formula"].startswith("mlx5")
    assert a["xoff"] == 150_880 and a["required"] == {"size": 160_986}
    assert a["inputs"]["max_mtu"]["value"] == 9978 and "not collected" in a["inputs"]["max_mtu"]["source"]
    assert a["buffer_owner"]["value"] is None and a["buffer_owner"]["source"].startswith("unknown: mlnx_qos")
    assert a["buffers"] == [
        {"buffer": 1, "priorities": [3], "configured_size": 160_256, "required_size": 160_986, "shortfall_bytes": 730}
    ]
    assert a["inputs"]["cable_m"]["value"] == 7 and "Cable len" in a["inputs"]["cable_m"]["source"]
    (fix,) = f.fix
    assert fix.device == "gpu003"
    command = "mlnx_qos -i eth0 --buffer_size 130944,161024,0,0,0,0,0,0"  # 160 986 in 128 B cells
    assert command in fix.commands
    (note,) = [c for c in fix.commands if "driver-owned" in c]
    assert note.startswith("# mlnx_qos --buffer_size / dcb buffer moves the port's receive buffers to driver-owned")
    assert fix.commands.index(note) < fix.commands.index(command)


def test_collected_hosts_leave_the_buffer_owner_unknown(tmp_path: Path) -> None:
    """mlnx_qos (the format the twin writes) and the sysfs/debugfs trees say nothing of who owns the receive
    buffers: the collector leaves ``buffer_owner`` None rather than guess (unknown is not wrong)."""
    from unifab.collect.bundle import load_bundle
    from unifab.twin.cluster import build
    from unifab.twin.writer import write_bundle

    write_bundle(build(8), tmp_path)
    nics = [n for h in load_bundle(tmp_path).hosts.values() for n in h.nics.values() if n.qos is not None]
    assert nics and {n.qos.buffer_owner for n in nics if n.qos is not None} == {None}
    assert all(n.qos is not None and n.qos.rx_buffer_sizes is not None for n in nics), "the buffers were read"


def test_nic_driver_owned_is_an_error_without_the_mode_note(make_fabric: FabricFactory) -> None:
    small = (130_944, 156_672, 0, 0, 0, 0, 0, 0)
    (f,) = _run(_fabric(make_fabric, nic_qos={0: {"rx_buffer_sizes": small, "buffer_owner": "driver"}}))
    assert f.severity is Severity.ERROR and "ownership" not in f.message
    assert f.evidence["a"]["buffer_owner"]["value"] == "driver"
    assert "mlnx_qos -i eth0 --buffer_size 130944,161024,0,0,0,0,0,0" in f.fix[0].commands
    assert not any("driver-owned" in c for c in f.fix[0].commands)


def test_nic_firmware_owned_buffers_are_not_judged_by_the_driver_rule(make_fabric: FabricFactory) -> None:
    small = (130_944, 156_672, 0, 0, 0, 0, 0, 0)
    assert _run(_fabric(make_fabric, nic_qos={0: {"rx_buffer_sizes": small, "buffer_owner": "firmware"}})) == []
    empty = {"prio2buffer": (0, 0, 0, 2, 0, 0, 0, 0), "buffer_owner": "firmware"}
    assert [f.severity for f in _run(_fabric(make_fabric, nic_qos={0: empty}))] == [Severity.CRITICAL]


@pytest.mark.parametrize(
    ("max_mtu", "required"),
    [(9978, 160_986), (9216, 160_224), (4096, 160_224), (10_240, 161_248)],  # 9216 is the driver's floor
)
def test_nic_uses_the_collected_max_mtu(make_fabric: FabricFactory, max_mtu: int, required: int) -> None:
    small = (130_944, 156_672, 0, 0, 0, 0, 0, 0)
    (f,) = _run(_fabric(make_fabric, n=1, nic={0: {"max_mtu": max_mtu}}, nic_qos={0: {"rx_buffer_sizes": small}}))
    a = f.evidence["a"]
    assert a["required"] == {"size": required} and a["inputs"]["max_mtu"]["value"] == max(max_mtu, 9216)
    assert f"maxmtu {max_mtu}" in a["inputs"]["max_mtu"]["source"]


def test_nic_at_the_collected_requirement_passes(make_fabric: FabricFactory) -> None:
    fits = (130_944, 160_256, 0, 0, 0, 0, 0, 0)  # 160 224 needed with a 9216 max_mtu
    assert _run(_fabric(make_fabric, n=1, nic={0: {"max_mtu": 9216}}, nic_qos={0: {"rx_buffer_sizes": fits}})) == []


def test_nic_lossless_priority_in_empty_buffer_is_critical(make_fabric: FabricFactory) -> None:
    findings = _run(_fabric(make_fabric, nic_qos={0: {"prio2buffer": (0, 0, 0, 2, 0, 0, 0, 0)}}))
    assert [f.severity for f in findings] == [Severity.CRITICAL]
    assert "mlnx_qos -i eth0 --buffer_size 130944,261888,161024,0,0,0,0,0" in findings[0].fix[0].commands


def test_nic_without_buffer_data_is_skipped(make_fabric: FabricFactory) -> None:
    assert _run(_fabric(make_fabric, nic_qos={0: {"rx_buffer_sizes": None}, 1: {"prio2buffer": None}})) == []


def test_ip_link_max_mtu_reaches_the_requirement(make_fabric: FabricFactory) -> None:
    """``ip -d link show`` maxmtu, read by unifab's parser, is the max_mtu the check sizes with."""
    text = (
        "4: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT group default "
        "qlen 1000\n"
        "    link/ether b8:ce:f6:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 9978 "
        "addrgenmode eui64 numtxqueues 512 numrxqueues 256 gso_max_size 65536 gso_max_segs 65535\n"
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n"
        "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0 minmtu 0 maxmtu 0\n"
    )
    assert ip_link.max_mtus(text) == {"ens1f0np0": 9978}
    assert (
        ip_link.max_mtus("2: eth0: <UP> mtu 1500 state UP\n    link/ether 00:11:22:33:44:55 brd ff:ff:ff:ff:ff:ff\n")
        == {}
    )
    small = (130_944, 156_672, 0, 0, 0, 0, 0, 0)
    nic = {0: {"max_mtu": ip_link.max_mtus(text)["ens1f0np0"]}}
    (f,) = _run(_fabric(make_fabric, n=1, nic=nic, nic_qos={0: {"rx_buffer_sizes": small}}))
    assert f.evidence["a"]["required"] == {"size": 160_986}


# ------------------------------------------------------------------- fixes applied to a recorded CONFIG_DB


def _apply_sonic_fix(config_db: dict[str, Any], commands: tuple[str, ...]) -> None:
    """Apply ``sonic-db-cli CONFIG_DB hset KEY F V [F V ...]`` commands to nested CONFIG_DB JSON (comments skipped)."""
    for command in commands:
        if command.startswith("#") or command == "sudo config save -y":  # CONFIG_DB is the saved file here
            continue
        words = shlex.split(command)
        assert words[:3] == ["sonic-db-cli", "CONFIG_DB", "hset"] and len(words) % 2 == 0, command
        table, key = words[3].split("|", 1)
        pairs = dict(zip(words[4::2], words[5::2], strict=True))
        config_db.setdefault(table, {}).setdefault(key, {}).update(pairs)


def _others(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.check, f.key) for f in findings if f.check != "QOS-HEADROOM")


def test_fix_applied_to_the_recorded_config_db_clears_the_finding(tmp_path: Path) -> None:
    """A twin read through the real parsers, its SN5600 profiles at the spp-50 numbers (96 256 B for 400G/3 m):
    every lossless port is reported, the fixes applied to config_db.json clear them and change nothing else."""
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.twin.cluster import build
    from unifab.twin.writer import write_bundle

    write_bundle(build(8), tmp_path)
    configs = sorted(tmp_path.glob("switches/*/sonic/config_db.json"))
    assert configs
    for path in configs:
        db = orjson.loads(path.read_bytes())
        assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "ACS-SN5600"
        for name, profile in db["BUFFER_PROFILE"].items():
            if name.startswith("pg_lossless_400000_5m"):  # the twin renders 3 m cables as the 5 m bucket
                profile |= {"xoff": "98304", "size": "117760", "xon": "19456"}  # the spp-50 formula at 5 m
        path.write_bytes(orjson.dumps(db))
    before = run_checks(load_bundle(tmp_path))
    headroom = [f for f in before if f.check == "QOS-HEADROOM"]
    assert len(headroom) == 8
    assert {f.evidence["b"]["table_row"]["cable"] for f in headroom} == {"5m"}
    assert all(f.severity is Severity.WARNING for f in headroom)  # at the spp-50 floor, short of the row
    for f in headroom:
        for fix in f.fix:
            path = tmp_path / "switches" / fix.device / "sonic" / "config_db.json"
            db = orjson.loads(path.read_bytes())
            _apply_sonic_fix(db, fix.commands)
            path.write_bytes(orjson.dumps(db))
    after = run_checks(load_bundle(tmp_path))
    assert [f for f in after if f.check == "QOS-HEADROOM"] == []
    assert _others(after) == _others(before)
    port = (
        load_bundle(tmp_path)
        .switches[headroom[0].fix[0].device]
        .ports[headroom[0].evidence["b"]["port"].split(":")[-1]]
    )
    assert port.qos is not None and (port.qos.headroom[3].xoff, port.qos.headroom[3].size) == (231_424, 250_880)
