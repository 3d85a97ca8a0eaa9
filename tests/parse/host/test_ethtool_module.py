"""Tests for the ``ethtool -m`` parser: real SFF-8636 samples, a reconstructed CMIS module, errors, round trip."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_edit import replace_line

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host import ethtool_module
from unifab.parse.host.ethtool_module import Flags, Lane, Levels, ModuleEeprom, Thresholds, dump, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
SR4 = "host/ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt"
DAC = "host/ethtool_m_qsfp_dac_mcp1600_mellanox.txt"
OFF = Flags(False, False, False, False)


def kv(key: str, value: str) -> str:
    """One line as ethtool prints it: ``printf("\\t%-41s : %s\\n", key, value)``."""
    return f"\t{key:<41} : {value}\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "m.txt")
    return info.value


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [(SR4, "ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.json"), (DAC, "ethtool_m_qsfp_dac_mcp1600_mellanox.json")],
)
def test_golden(samples: Path, golden: GoldenCheck, sample: str, golden_name: str) -> None:
    golden(GOLDEN / golden_name, parse((samples / sample).read_text(), sample))


def test_sr4_values(samples: Path) -> None:
    m = parse((samples / SR4).read_text())
    assert (m.spec, m.identifier_code, m.identifier) == ("sff-8636", 0x11, "QSFP28")
    assert (m.vendor, m.vendor_oui, m.part_number, m.vendor_rev, m.serial_number) == (
        "Mellanox",
        "00:02:c9",
        "MMA1B00-C100D",
        "A4",
        "MT1708FT01255",
    )
    assert (m.temperature_c, m.voltage_v, m.alarm_flags_implemented, m.rx_power_type) == (30.56, 3.235, True, "avg")
    assert [lane.lane for lane in m.lanes] == [1, 2, 3, 4]
    assert m.lanes[0] == Lane(1, 6.75, 1.3924, 1.44, 0.972, -0.12, OFF, OFF, OFF)
    assert [(lane.rx_power_mw, lane.rx_power_dbm) for lane in m.lanes] == [
        (0.972, -0.12),
        (0.9798, -0.09),
        (1.134, 0.55),
        (1.134, 0.55),
    ]
    assert [lane.tx_power_dbm for lane in m.lanes] == [1.44, 1.2, 1.26, 1.27]
    assert m.temperature_flags == m.voltage_flags == OFF
    assert m.thresholds == Thresholds(
        temperature_c=Levels(80.0, -10.0, 70.0, 0.0),
        voltage_v=Levels(3.5, 3.1, 3.465, 3.135),
        bias_ma=Levels(8.5, 5.492, 8.0, 6.0),
        tx_power_mw=Levels(3.4673, 0.0724, 1.7378, 0.1445),
        tx_power_dbm=Levels(5.4, -11.4, 2.4, -8.4),
        rx_power_mw=Levels(3.4673, 0.0467, 1.7378, 0.0933),
        rx_power_dbm=Levels(5.4, -13.31, 2.4, -10.3),
    )
    assert m.info[0] == ("Extended identifier", "0x8c")
    assert [v for k, v in m.info if k == "Extended identifier description"] == [
        "2.5W max. Power consumption",
        "CDR present in TX, CDR present in RX",
        "High Power Class (> 3.5 W) not enabled",
    ]
    assert m.info[-1] == ("Revision Compliance", "SFF-8636 Rev 2.5/2.6/2.7")


def test_passive_dac_has_no_dom(samples: Path) -> None:
    # No DOM: ethtool prints temperature 0.00 and voltage 0 and stops; the capture has spaces, not TABs.
    m = parse((samples / DAC).read_text())
    assert (m.identifier_code, m.identifier, m.part_number) == (0x0D, "QSFP+", "MCP1600-E00A")
    assert (m.temperature_c, m.voltage_v, m.lanes, m.thresholds, m.alarm_flags_implemented) == (
        0.0,
        0.0,
        (),
        None,
        None,
    )
    assert ("Transmitter technology", "0xa0 (Copper cable unequalized)") in m.info
    assert ("Length (Copper or Active cable)", "1m") in m.info


def test_render_reproduces_samples(samples: Path) -> None:
    sr4 = (samples / SR4).read_text()
    assert dump(parse(sr4)) == sr4  # real TABs: byte for byte
    dac = (samples / DAC).read_text()
    assert dump(parse(dac)).expandtabs(8) == dac  # the capture has the TABs expanded


# --- constructed variants -------------------------------------------------------------------------

# RECONSTRUCTED: no real CMIS (QSFP-DD/OSFP) `ethtool -m` capture is public. Built from the printf formats of
# ethtool's cmis.c / sff-common.h (ethtool 5.x/6.x): an 800G 2xDR4 OSFP, 8 lanes, lane 8 dark-ish with its rx low
# alarm and warning On, every other flag Off.
CMIS_THRESHOLDS = [
    ("Laser bias current high alarm threshold", "13.000 mA"),
    ("Laser bias current low alarm threshold", "3.000 mA"),
    ("Laser bias current high warning threshold", "12.000 mA"),
    ("Laser bias current low warning threshold", "4.000 mA"),
    ("Laser output power high alarm threshold", "3.5481 mW / 5.50 dBm"),
    ("Laser output power low alarm threshold", "0.1585 mW / -8.00 dBm"),
    ("Laser output power high warning threshold", "2.8184 mW / 4.50 dBm"),
    ("Laser output power low warning threshold", "0.1995 mW / -7.00 dBm"),
    ("Module temperature high alarm threshold", "80.00 degrees C / 176.00 degrees F"),
    ("Module temperature low alarm threshold", "-5.00 degrees C / 23.00 degrees F"),
    ("Module temperature high warning threshold", "75.00 degrees C / 167.00 degrees F"),
    ("Module temperature low warning threshold", "0.00 degrees C / 32.00 degrees F"),
    ("Module voltage high alarm threshold", "3.4650 V"),
    ("Module voltage low alarm threshold", "3.1350 V"),
    ("Module voltage high warning threshold", "3.4000 V"),
    ("Module voltage low warning threshold", "3.2000 V"),
    ("Laser rx power high alarm threshold", "3.5481 mW / 5.50 dBm"),
    ("Laser rx power low alarm threshold", "0.0562 mW / -12.50 dBm"),
    ("Laser rx power high warning threshold", "2.8184 mW / 4.50 dBm"),
    ("Laser rx power low warning threshold", "0.0708 mW / -11.50 dBm"),
]
KINDS = ("high alarm  ", "low alarm   ", "high warning", "low warning ")


def cmis_800g() -> str:
    out = [
        kv("Identifier", "0x19 (OSFP 8X Pluggable Transceiver)"),
        kv("Power class", "8"),
        kv("Max power", "17.00W"),
        kv("Connector", "0x0c (MPO Parallel Optic)"),
        kv("Cable assembly length", "0.00m"),
        kv("Tx CDR bypass control", "No"),
        kv("Rx CDR bypass control", "No"),
        kv("Tx CDR", "Yes"),
        kv("Rx CDR", "Yes"),
        kv("Transmitter technology", "0x06 (1310 nm EML)"),
        kv("Laser wavelength", "1311.000nm"),
        kv("Laser wavelength tolerance", "6.500nm"),
        kv("Length (SMF)", "0.50km"),
        kv("Length (OM5)", "0m"),
        kv("Length (OM4)", "0m"),
        kv("Length (OM3 50/125um)", "0m"),
        kv("Length (OM2 50/125um)", "0m"),
        kv("Vendor name", "NVIDIA"),
        kv("Vendor OUI", "48:b0:2d"),
        kv("Vendor PN", "MMS4X00-NS"),
        kv("Vendor rev", "A1"),
        kv("Vendor SN", "MT0000FT00001"),
        kv("Date code", "240101__"),
        kv("Revision compliance", "Rev. 5.0"),
        kv("Module State", "0x03 (ModuleReady)"),
        kv("LowPwrAllowRequestHW", "Off"),
        kv("LowPwrRequestSW", "Off"),
        kv("Module temperature", "45.12 degrees C / 113.22 degrees F"),
        kv("Module voltage", "3.2710 V"),
    ]
    out += [kv(f"Laser tx bias current (Channel {n})", f"{7.5 + n / 10:.3f} mA") for n in range(1, 9)]
    out += [kv(f"Transmit avg optical power (Channel {n})", "1.1220 mW / 0.50 dBm") for n in range(1, 9)]
    out += [kv(f"Rcvr signal avg optical power (Channel {n})", "0.9120 mW / -0.40 dBm") for n in range(1, 8)]
    out += [kv("Rcvr signal avg optical power (Channel 8)", "0.0398 mW / -14.00 dBm")]
    out += [kv(f"Module {q} {k.strip()}", "Off") for q in ("temperature", "voltage") for k in KINDS]
    for n in range(1, 9):
        out += [kv(f"Laser bias current {k} (Chan {n})", "Off") for k in KINDS]
        out += [kv(f"Laser tx power {k} (Channel {n})", "Off") for k in KINDS]
        out += [kv(f"Laser rx power {k} (Channel {n})", "On" if n == 8 and "low" in k else "Off") for k in KINDS]
    out += [kv(k, v) for k, v in CMIS_THRESHOLDS]
    return "".join(out)


def test_cmis_800g_osfp() -> None:
    raw = cmis_800g()
    m = parse(raw)
    assert (m.spec, m.identifier_code, m.identifier) == ("cmis", 0x19, "OSFP 8X Pluggable Transceiver")
    assert (m.vendor, m.part_number, m.module_state) == ("NVIDIA", "MMS4X00-NS", "ModuleReady")
    assert (m.temperature_c, m.voltage_v, m.rx_power_type) == (45.12, 3.271, "avg")
    assert len(m.lanes) == 8 and [lane.bias_ma for lane in m.lanes] == [7.6, 7.7, 7.8, 7.9, 8.0, 8.1, 8.2, 8.3]
    assert m.lanes[7].rx_power_dbm == -14.0 and m.lanes[7].rx_power_mw == 0.0398
    assert m.lanes[7].rx_power_flags == Flags(False, True, False, True)
    assert all(lane.rx_power_flags == OFF for lane in m.lanes[:7])
    assert m.thresholds is not None and m.thresholds.rx_power_dbm == Levels(5.5, -12.5, 4.5, -11.5)
    assert ("Revision compliance", "Rev. 5.0") in m.info and ("Max power", "17.00W") in m.info
    assert all(key != "Module State" for key, _ in m.info)
    assert dump(m) == raw  # CMIS layout: module flags first, then per-lane flag groups


def test_legacy_bias_label_and_space_before_channel() -> None:
    # "Laser bias current (Channel N)" (some builds) and "Rcvr ... power (Channel N)" with a space read the same.
    raw = cmis_800g().replace("Laser tx bias current (Channel", "Laser bias current (Channel")
    assert parse(raw) == parse(cmis_800g())
    sr4_like = kv("Identifier", "0x11 (QSFP28)") + kv(
        "Rcvr signal avg optical power (Channel 2)", "1.0000 mW / 0.00 dBm"
    )
    assert parse(sr4_like).lanes == (Lane(2, rx_power_mw=1.0, rx_power_dbm=0.0),)


def test_dark_lane_minus_inf_and_clamped() -> None:
    raw = (
        kv("Identifier", "0x11 (QSFP28)")
        + kv("Rcvr signal avg optical power(Channel 1)", "0.0000 mW / -inf dBm")
        + kv("Rcvr signal avg optical power(Channel 2)", "0.0000 mW / -40.00 dBm")
        + kv("Laser rx power low alarm threshold", "0.0000 mW / -inf dBm")
    )
    m = parse(raw)
    assert [(lane.rx_power_mw, lane.rx_power_dbm) for lane in m.lanes] == [(0.0, None), (0.0, -40.0)]
    assert m.thresholds is not None and m.thresholds.rx_power_mw == Levels(low_alarm=0.0)
    assert m.thresholds.rx_power_dbm == Levels(low_alarm=None)
    assert parse(dump(m)) == m


def test_only_mw_printed_computes_dbm() -> None:
    raw = kv("Identifier", "0x11 (QSFP28)") + kv("Transmit avg optical power (Channel 1)", "0.5000 mW")
    raw += kv("Transmit avg optical power (Channel 2)", "0.0000 mW")
    m = parse(raw)
    assert [(lane.tx_power_mw, lane.tx_power_dbm) for lane in m.lanes] == [(0.5, -3.01), (0.0, None)]
    assert ethtool_module.mw_to_dbm(1.0) == 0.0


def test_oma_receiver_power() -> None:
    raw = kv("Identifier", "0x0d (QSFP+)") + kv("Receiver signal OMA(Channel 1)", "0.5012 mW / -3.00 dBm")
    m = parse(raw)
    assert (m.rx_power_type, m.lanes[0].rx_power_dbm) == ("oma", -3.0)
    assert dump(m) == raw


def test_sfp_reads_as_one_lane() -> None:
    raw = (
        kv("Identifier", "0x03 (SFP)")
        + kv("Vendor PN", "MMA2P00-AS")
        + kv("Laser bias current", "6.000 mA")
        + kv("Laser output power", "0.6310 mW / -2.00 dBm")
        + kv("Receiver signal average optical power", "0.5012 mW / -3.00 dBm")
        + kv("Module temperature", "35.00 degrees C / 95.00 degrees F")
        + kv("Laser output power high alarm", "Off")
        + kv("Laser bias current low warning", "On")
    )
    m = parse(raw)
    assert m.spec == "sff-8472"
    assert m.lanes == (Lane(1, 6.0, 0.631, -2.0, 0.5012, -3.0, Flags(low_warning=True), Flags(high_alarm=False), None),)
    with pytest.raises(ValueError, match="SFF-8472"):
        dump(m)


def test_whitespace_variants_read_the_same(samples: Path) -> None:
    sr4 = (samples / SR4).read_text()
    squeezed = "\n".join(" ".join(line.split()).replace(" : ", ": ") for line in sr4.split("\n"))
    assert parse(sr4.expandtabs(8).replace("\n", "\r\n")) == parse(sr4)
    assert parse("\n\n" + squeezed) == parse(sr4)


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n", "  \n\t\n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


def test_not_decoded_output() -> None:
    err = parse_error("Cannot get module EEPROM information: Operation not supported\n")
    assert err.line == 1 and "Identifier" in err.expected
    err = parse_error("\nOffset\t\tValues\n------\t\t------\n0x0000:\t\t11 00 06\n")
    assert err.line == 2 and "'<key> : <value>'" in err.expected


def test_bad_values_name_the_line(samples: Path) -> None:
    sr4 = (samples / SR4).read_text()
    err = parse_error(sr4.replace("30.56 degrees C", "hot"))
    assert err.line == 26 and "degrees C" in err.expected
    err = parse_error(sr4.replace("1.3924 mW / 1.44 dBm", "1.3924 W"))
    assert err.line == 33 and "mW" in err.expected
    err = parse_error(sr4.replace("(Chan 2)  : Off", "(Chan 2)  : Maybe", 1))
    assert err.line == 45 and "On or Off" in err.expected
    err = parse_error(sr4.replace("Identifier                                : 0x11 (QSFP28)", "Identifier : QSFP"))
    assert err.line == 1 and "0x<hex>" in err.expected


def test_repeated_diagnostic_line(samples: Path) -> None:
    sr4 = (samples / SR4).read_text()
    lines = sr4.split("\n")
    err = parse_error("\n".join([*lines[:27], lines[26], *lines[27:]]))
    assert err.line == 28 and "once" in err.expected


def test_module_flag_with_channel() -> None:
    err = parse_error(kv("Identifier", "0x11 (QSFP28)") + kv("Module voltage high alarm (Channel 1)", "Off"))
    assert err.line == 2 and "no channel" in err.expected


def test_mixed_receiver_power_kinds() -> None:
    raw = kv("Identifier", "0x11 (QSFP28)") + kv("Receiver signal OMA(Channel 1)", "1.0000 mW / 0.00 dBm")
    err = parse_error(raw + kv("Rcvr signal avg optical power(Channel 2)", "1.0000 mW / 0.00 dBm"))
    assert err.line == 3 and "OMA" in err.expected


# --- round trip -----------------------------------------------------------------------------------


INFO_SFF = [
    ("Extended identifier", "0x8c"),
    ("Extended identifier description", "2.5W max. Power consumption"),
    ("Connector", "0x0c (MPO Parallel Optic)"),
    ("Transceiver type", "100G Ethernet: 100G Base-SR4 or 25GBase-SR"),
    ("Length (OM3 50um)", "70m"),
    ("Revision Compliance", "SFF-8636 Rev 2.5/2.6/2.7"),
    ("Date code", "170201"),
]
INFO_CMIS = [
    ("Power class", "8"),
    ("Max power", "17.00W"),
    ("Length (SMF)", "0.50km"),
    ("Date code", "240101__"),
    ("Revision compliance", "Rev. 5.0"),
    ("LowPwrRequestSW", "Off"),
]


def grid(low: int, high: int, scale: int) -> st.SearchStrategy[float]:
    return st.integers(low, high).map(lambda k: k / scale)


FLAGS = st.builds(Flags, st.booleans(), st.booleans(), st.booleans(), st.booleans())
TEXT = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=":"), min_size=1, max_size=12)


@st.composite
def modules(draw: st.DrawFn) -> ModuleEeprom:
    cmis = draw(st.booleans())
    code = draw(st.sampled_from([0x18, 0x19] if cmis else [0x0C, 0x0D, 0x11]))
    mw = st.none() | grid(0, 60000, 10000)
    dbm = st.none() | grid(-4000, 800, 100)
    lanes = []
    for n in range(1, (8 if cmis else 4) + 1):
        tx_mw, rx_mw = draw(mw), draw(mw)
        lanes.append(
            Lane(
                n,
                draw(grid(0, 20000, 1000)),
                tx_mw,
                draw(dbm if tx_mw is not None else st.none() | grid(-4000, 800, 100)),
                rx_mw,
                draw(dbm),
                draw(st.none() | FLAGS),
                draw(st.none() | FLAGS),
                draw(st.none() | FLAGS),
            )
        )
    has_rx = any(lane.rx_power_mw is not None or lane.rx_power_dbm is not None for lane in lanes)

    def levels(values: st.SearchStrategy[float | None]) -> st.SearchStrategy[Levels]:
        return st.builds(Levels, values, values, values, values)

    thresholds = draw(
        st.none()
        | st.builds(
            Thresholds,
            levels(grid(-4000, 12000, 100)),
            st.none() | levels(grid(0, 40000, 10000)),
            st.none() | levels(grid(0, 20000, 1000)),
            levels(grid(0, 60000, 10000)),
            levels(st.none() | grid(-4000, 800, 100)),
            st.none(),
            st.none(),
        )
    )
    info_pool = INFO_CMIS if cmis else INFO_SFF
    return ModuleEeprom(
        spec="cmis" if cmis else "sff-8636",
        identifier_code=code,
        identifier=draw(st.none() | st.sampled_from(["QSFP28", "OSFP 8X Pluggable Transceiver"])),
        vendor=draw(st.none() | TEXT),
        vendor_oui=draw(st.none() | st.just("00:02:c9")),
        part_number=draw(st.none() | TEXT),
        vendor_rev=draw(st.none() | TEXT),
        serial_number=draw(st.none() | TEXT),
        module_state=draw(st.none() | st.sampled_from(["ModuleReady", "ModuleFault", "0x07 (reserved or unknown)"]))
        if cmis
        else None,
        temperature_c=draw(st.none() | grid(-4000, 12000, 100)),
        voltage_v=draw(st.none() | grid(0, 40000, 10000)),
        alarm_flags_implemented=None if cmis else draw(st.none() | st.booleans()),
        rx_power_type=draw(st.sampled_from(["avg", "oma"])) if has_rx else None,
        temperature_flags=draw(st.none() | FLAGS),
        voltage_flags=draw(st.none() | FLAGS),
        lanes=tuple(lanes),
        thresholds=thresholds,
        info=tuple(draw(st.lists(st.sampled_from(info_pool), max_size=5))),
    )


@settings(max_examples=200, deadline=None)
@given(modules())
def test_round_trip(m: ModuleEeprom) -> None:
    out = dump(m)
    assert parse(out) == m
    assert parse(out.expandtabs(8).replace("\n", "\r\n")) == m


# --- partial mode: one bad line costs its value -------------------------------------------------------------


def test_partial_bad_dom_value_costs_that_value(samples: Path) -> None:
    raw = (samples / SR4).read_text()
    whole = parse(raw)
    key = "Laser tx bias current (Channel 2)"
    broken, line = replace_line(raw, key, kv(key, "lots")[:-1])
    with pytest.raises(ParseError):
        parse(broken, "m.txt")  # without a collector: strict
    log = ParseProblems("m.txt")
    m = parse(broken, "m.txt", log)
    ((problem,),) = (log.problems,)
    assert problem.line == line and "mA" in problem.expected and "Laser tx bias current" in problem.skipped
    lanes = tuple(replace(lane, bias_ma=None) if lane.lane == 2 else lane for lane in whole.lanes)
    assert whole.lanes[1].bias_ma is not None and m == replace(whole, lanes=lanes)


def test_partial_lost_identifier_line_keeps_the_rest(samples: Path) -> None:
    raw = (samples / DAC).read_text()
    whole = parse(raw)
    broken, line = replace_line(raw, "Identifier", "\t\x01 garbled")
    log = ParseProblems("m.txt")
    m = parse(broken, "m.txt", log)
    assert [p.line for p in log.problems] == [line]
    assert m == replace(whole, spec=None, identifier_code=None, identifier=None)
    with pytest.raises(ParseError):
        parse("\x01 garbled\nnot: ethtool\n", "m.txt", ParseProblems("m.txt"))  # nothing modelled read
