"""QOS-HEADROOM: the formulas against the references' worked values and a real SONiC table, then the check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.headroom import CHECKS, check_headroom
from unifab.model import Fabric, Finding, Headroom, Severity
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
    assert mlx5_required_buffer(400_000, 7, 9000) == 150_880 + 9216 + 128
    assert mlx5_required_buffer(400_000, 3, 9000) == 147_280 + 9216 + 128
    assert mlx5_required_buffer(400_000, 7, 9000, max_mtu=9978) == 150_880 + 9978 + 128
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
SHP_PROFILE = Headroom("pg_lossless_400000_3m_profile", 19_456, 19_456, 231_424)  # the twin's (SHP: size = xon)
STATIC_PROFILE = Headroom("pg_lossless_400000_3m_profile", 115_712, 19_456, 96_256)  # spp 50, no SHP, 4 lanes
NIC_BUFFERS = (130_944, 261_888, 0, 0, 0, 0, 0, 0)
PRIO2BUFFER = (0, 0, 0, 1, 0, 0, 0, 0)


def _fabric(
    make_fabric: FabricFactory,
    n: int = 4,
    headroom: dict[int, dict[int, Headroom]] | None = None,
    nic_qos: dict[int, dict[str, Any]] | None = None,
    port_qos: dict[int, dict[str, Any]] | None = None,
    hwsku: str | None = "ACS-SN5600",
    default: Headroom = STATIC_PROFILE,
) -> Fabric:
    """``make_fabric`` with SONiC buffers on every port (PG 0 lossy, PG 3 ``default``) and mlx5 NIC buffers.

    Everything these tests compute with is pinned here, whatever the shared fixture's defaults become:
    NIC MTU 9000, Cable len 7 m, PFC on 3 in buffer 1; port 400G, MTU 9100, CABLE_LENGTH 3 m, TC t -> PG t.
    """
    headroom = headroom or {}
    nic_base: dict[str, Any] = {
        "rx_buffer_sizes": NIC_BUFFERS,
        "prio2buffer": PRIO2BUFFER,
        "cable_len_m": 7,
        "pfc_enabled": frozenset({3}),
    }
    port_base: dict[str, Any] = {"cable_len_m": 3, "pfc_enabled": frozenset({3}), "tc_to_pg": {t: t for t in range(8)}}
    nq = {i: nic_base | (nic_qos or {}).get(i, {}) for i in range(n)}
    pq = {
        i: port_base | {"headroom": headroom.get(i, {0: LOSSY, 3: default})} | (port_qos or {}).get(i, {})
        for i in range(n)
    }
    ports = {i: {"speed_mbps": 400_000, "mtu": 9100} for i in range(n)}
    fabric = make_fabric(n, nic={i: {"mtu": 9000} for i in range(n)}, nic_qos=nq, port=ports, port_qos=pq)
    leaf = fabric.switches["leaf1"]
    fabric.switches["leaf1"] = replace(leaf, hwsku=hwsku, platform=None)
    return fabric


def _run(fabric: Fabric) -> list[Finding]:
    return list(check_headroom(CheckContext.build(fabric)))


def test_registered_spec() -> None:
    assert [s.id for s in CHECKS] == ["QOS-HEADROOM"]
    assert CHECKS[0].run is check_headroom


@pytest.mark.parametrize("profile", [STATIC_PROFILE, SHP_PROFILE], ids=["static", "shared-headroom-pool"])
def test_clean_ports_pass(make_fabric: FabricFactory, profile: Headroom) -> None:
    assert _run(_fabric(make_fabric, default=profile)) == []


def test_xoff_below_requirement(make_fabric: FabricFactory) -> None:
    small = Headroom("pg_lossless_400000_3m_small", 109_568, 19_456, 90_112)
    findings = _run(_fabric(make_fabric, headroom={1: {0: LOSSY, 3: small}}))
    assert len(findings) == 1
    f = findings[0]
    assert f.check == "QOS-HEADROOM" and f.severity is Severity.ERROR
    assert f.entities == ("link:gpu002:eth0--leaf1:Ethernet8",)
    b = f.evidence["b"]
    assert b["formula"] == "sonic-mellanox"
    assert b["configured"]["xoff"] == 90_112
    assert b["required"] == {"xoff": 96_256, "xon": 19_456, "size": 115_712}
    assert b["shortfall_bytes"] == 6144
    inputs = b["inputs"]
    assert inputs["speed_mbps"]["value"] == 400_000
    assert inputs["cable_m"] == {"value": 3, "source": "CABLE_LENGTH Ethernet8"}
    assert inputs["port_mtu"]["value"] == 9100
    assert inputs["asic"]["value"]["name"] == "Spectrum-4"
    assert inputs["small_packet_percentage"]["value"] == 50
    assert inputs["shared_headroom_pool"]["value"] is False
    assert inputs["lanes"]["value"] == 4
    assert f.evidence["a"]["netdev"] == "eth0" and f.evidence["a"]["mtu"] == 9000
    assert [(x.device, x.commands) for x in f.fix] == [
        (
            "leaf1",
            (
                "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_small' 'xoff' '96256'",
                "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_small' 'size' '115712'",
            ),
        )
    ]
    assert "dropped" in f.impact["summary"] and f.impact["priorities"] == [3]


def test_xoff_within_one_kb_tolerance_passes(make_fabric: FabricFactory) -> None:
    near = Headroom("near", 115_712 - 1024, 19_456, 96_256 - 1024)
    assert _run(_fabric(make_fabric, headroom={0: {0: LOSSY, 3: near}})) == []


def test_longer_cable_needs_more(make_fabric: FabricFactory) -> None:
    # the profile fits 3 m but the port's CABLE_LENGTH says 300 m
    findings = _run(_fabric(make_fabric, port_qos={2: {"cable_len_m": 300}}))
    assert len(findings) == 1
    assert findings[0].evidence["b"]["inputs"]["cable_m"]["value"] == 300
    assert findings[0].evidence["b"]["required"]["xoff"] > 2 * 96_256


def test_cable_from_plan_when_no_cable_length(make_fabric: FabricFactory) -> None:
    fabric = _fabric(make_fabric, port_qos={0: {"cable_len_m": None}})
    fabric.links[0] = replace(fabric.links[0], cable_m=100.0)
    findings = _run(fabric)
    assert len(findings) == 1
    b = findings[0].evidence["b"]
    assert b["inputs"]["cable_m"]["value"] == 100.0 and "plan" in b["inputs"]["cable_m"]["source"]
    assert findings[0].fix[0].commands[0] == "sonic-db-cli CONFIG_DB hset 'CABLE_LENGTH|AZURE' 'Ethernet0' '100m'"


def test_default_cable_when_unknown(make_fabric: FabricFactory) -> None:
    # no CABLE_LENGTH and no plan length: 5 m assumed, and 400G over 5 m needs 98 304 B (the profile fits 3 m)
    (f,) = _run(_fabric(make_fabric, n=1, port_qos={0: {"cable_len_m": None}}))
    cable = f.evidence["b"]["inputs"]["cable_m"]
    assert cable["value"] == 5 and "assumed" in cable["source"]
    assert f.evidence["b"]["required"]["xoff"] == 98_304 and f.evidence["b"]["shortfall_bytes"] == 2048
    assert len(f.fix[0].commands) == 2  # no CABLE_LENGTH command: the real length is unknown


def test_lossless_priority_without_pg_headroom(make_fabric: FabricFactory) -> None:
    findings = _run(_fabric(make_fabric, headroom={3: {0: LOSSY}}))
    assert len(findings) == 1
    f = findings[0]
    assert f.severity is Severity.CRITICAL
    assert "no BUFFER_PG entry" in f.message
    assert f.evidence["b"]["pg"] == 3 and f.evidence["b"]["configured"] is None
    assert f.evidence["b"]["required"]["xoff"] == 96_256
    # the switch already has a big-enough profile for 400G/3m: point the PG at it
    assert f.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet24|3' 'profile' 'pg_lossless_400000_3m_profile'",
    )


def test_lossless_pg_creates_profile_when_none_fits(make_fabric: FabricFactory) -> None:
    fabric = _fabric(make_fabric, n=1, headroom={0: {0: LOSSY}})
    (f,) = _run(fabric)
    assert f.fix[0].commands == (
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_profile' 'pool' 'ingress_lossless_pool'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_profile' 'xon' '19456'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_profile' 'xoff' '96256'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_profile' 'size' '115712'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PROFILE|pg_lossless_400000_3m_profile' 'dynamic_th' '0'",
        "sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet0|3' 'profile' 'pg_lossless_400000_3m_profile'",
    )


def test_lossless_tc_in_a_lossy_pg(make_fabric: FabricFactory) -> None:
    findings = _run(_fabric(make_fabric, headroom={1: {0: LOSSY, 3: LOSSY}}))
    assert [f.severity for f in findings] == [Severity.CRITICAL]
    assert "ingress_lossy_profile with no xoff" in findings[0].message


def test_port_without_buffer_data_is_skipped(make_fabric: FabricFactory) -> None:
    # no BUFFER_PG rows at all (EOS, or a config rendered before buffermgrd ran): unknown, not absent
    assert _run(_fabric(make_fabric, headroom={0: {}})) == []


def test_dynamic_model_port_is_skipped(make_fabric: FabricFactory) -> None:
    dyn = Headroom(None, None, None, None, dynamic=True)
    assert _run(_fabric(make_fabric, headroom={0: {0: LOSSY, 3: dyn}}, port_qos={0: {"cable_len_m": 300}})) == []


def test_missing_pg_on_dynamic_switch_fixes_with_null_profile(make_fabric: FabricFactory) -> None:
    dyn = Headroom(None, None, None, None, dynamic=True)
    fabric = _fabric(make_fabric, n=2, headroom={0: {0: LOSSY, 3: dyn}, 1: {0: LOSSY}})
    (f,) = _run(fabric)
    assert f.fix[0].commands == ("sonic-db-cli CONFIG_DB hset 'BUFFER_PG|Ethernet8|3' 'profile' 'NULL'",)


def test_unknown_asic_uses_the_generic_lower_bound(make_fabric: FabricFactory) -> None:
    small = Headroom("p", 90_000, 19_456, 70_000)
    fabric = _fabric(make_fabric, n=2, hwsku="Arista-7060X6-64PE", headroom={1: {0: LOSSY, 3: small}})
    (f,) = _run(fabric)
    b = f.evidence["b"]
    assert b["formula"] == "802.1Qbb lower bound"
    assert b["required"]["xoff"] == 77_636 and b["inputs"]["asic"]["value"] is None
    assert "lower bound" in f.message


def test_nic_lossless_buffer_too_small(make_fabric: FabricFactory) -> None:
    small = (130_944, 156_672, 0, 0, 0, 0, 0, 0)
    findings = _run(_fabric(make_fabric, nic_qos={2: {"rx_buffer_sizes": small}}))
    assert len(findings) == 1
    f = findings[0]
    assert f.severity is Severity.ERROR
    a = f.evidence["a"]
    assert a["formula"].startswith("mlx5")
    assert a["xoff"] == 150_880 and a["required"] == {"size": 160_224}
    assert a["buffers"] == [
        {"buffer": 1, "priorities": [3], "configured_size": 156_672, "required_size": 160_224, "shortfall_bytes": 3552}
    ]
    assert a["inputs"]["cable_m"]["value"] == 7 and "Cable len" in a["inputs"]["cable_m"]["source"]
    assert a["inputs"]["speed_mbps"]["value"] == 400_000 and a["inputs"]["mtu"]["value"] == 9000
    assert [(x.device, x.commands) for x in f.fix] == [
        ("gpu003", ("mlnx_qos -i eth0 --buffer_size 130944,160256,0,0,0,0,0,0",))
    ]


def test_nic_lossless_priority_in_empty_buffer_is_critical(make_fabric: FabricFactory) -> None:
    findings = _run(_fabric(make_fabric, nic_qos={0: {"prio2buffer": (0, 0, 0, 2, 0, 0, 0, 0)}}))
    assert [f.severity for f in findings] == [Severity.CRITICAL]
    assert findings[0].fix[0].commands == ("mlnx_qos -i eth0 --buffer_size 130944,261888,160256,0,0,0,0,0",)


def test_nic_without_buffer_data_is_skipped(make_fabric: FabricFactory) -> None:
    assert _run(_fabric(make_fabric, nic_qos={0: {"rx_buffer_sizes": None}, 1: {"prio2buffer": None}})) == []


# ----------------------------------------------------------------------------------------- the twin


def test_twin_bundle_passes(tmp_path: Path) -> None:
    """A clean twin (SN5600, 400G, 3 m, MTU 9000 NIC / 9100 switch) read through the real parsers."""
    from unifab.collect.bundle import load_bundle
    from unifab.twin.cluster import build
    from unifab.twin.writer import write_bundle

    write_bundle(build(8), tmp_path)
    fabric = load_bundle(tmp_path)
    ctx = CheckContext.build(fabric)
    assert len(ctx.nic_links) == 8
    port = ctx.nic_links[0].port
    assert port.speed_mbps == 400_000 and port.qos is not None and port.qos.cable_len_m == 3
    assert port.qos.headroom[3].xoff is not None
    assert list(check_headroom(ctx)) == []
