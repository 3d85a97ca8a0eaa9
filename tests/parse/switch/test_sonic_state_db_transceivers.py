"""SONiC STATE_DB TRANSCEIVER_INFO / TRANSCEIVER_FIRMWARE_INFO: the ports' pluggable modules, read from the rows of
sonic-utilities' own STATE_DB mock (tests/data/wild/switch/sonic/, verbatim); a bad row costs that port's module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import sonic_state_db
from unifab.parse.switch.sonic_state_db import SonicTransceiver

SAMPLE = Path(__file__).resolve().parents[2] / "data/wild/switch/sonic/sonic_utilities_state_db_transceiver_subset.json"


def _doc() -> dict[str, dict[str, str]]:
    doc: dict[str, dict[str, str]] = json.loads(SAMPLE.read_text())
    return doc


def test_the_modules_of_the_real_rows() -> None:
    got = sonic_state_db.parse_transceivers(SAMPLE.read_text(), "state_db.json")
    assert list(got) == [
        "Ethernet0",
        "Ethernet4",
        "Ethernet8",
        "Ethernet12",
        "Ethernet16",
        "Ethernet40",
        "Ethernet64",
        "Ethernet72",
    ]
    assert got["Ethernet8"] == SonicTransceiver(
        port="Ethernet8",
        type="QSFP-DD Double Density 8X Pluggable Transceiver",
        manufacturer="INNOLIGHT",
        model="C-DQ8FNM010-N00",
        serial="INKAO2900002A",
        vendor_rev="2A",
        hardware_rev="X.X",
        cmis_rev="5.0",
        active_firmware="2.1.1",  # TRANSCEIVER_FIRMWARE_INFO|Ethernet8
        inactive_firmware="1.2.3",
    )
    assert got["Ethernet8"].revision == "2A"  # vendor_rev, not the CMIS hardware revision
    e0 = got["Ethernet0"]  # SFF-8636: vendor_rev only, no firmware
    assert (e0.manufacturer, e0.model, e0.revision, e0.active_firmware) == ("Mellanox", "MFA1A00-C003", "AC", None)
    assert got["Ethernet4"].revision == "X.X"  # SFP28 with hardware_rev only: older xcvrd's vendor revision
    e72 = got["Ethernet72"]  # xcvrd's space padding stripped; inactive_firmware N/A
    assert (e72.manufacturer, e72.model, e72.serial) == ("vendor1", "some-model", "serial1")
    assert (e72.revision, e72.active_firmware, e72.inactive_firmware) == ("A3", "0.0", None)
    rj45 = got["Ethernet16"]  # every field N/A: a module with nothing known
    assert rj45.type == "RJ45" and rj45.model is None and rj45.revision is None and rj45.active_firmware is None


def test_parse_reads_them_with_the_ports() -> None:
    state = sonic_state_db.parse(SAMPLE.read_text(), "state_db.json")
    assert state.transceivers == sonic_state_db.parse_transceivers(SAMPLE.read_text(), "state_db.json")
    assert state.ports == {}


def test_firmware_in_transceiver_info_from_older_xcvrd() -> None:
    doc = _doc()
    doc["TRANSCEIVER_INFO|Ethernet40"] |= {"active_firmware": "2.1.0", "inactive_firmware": "2.0.9"}
    doc["TRANSCEIVER_INFO|Ethernet8"]["active_firmware"] = "9.9.9"  # TRANSCEIVER_FIRMWARE_INFO wins
    got = sonic_state_db.parse_transceivers(json.dumps(doc))
    assert (got["Ethernet40"].active_firmware, got["Ethernet40"].inactive_firmware) == ("2.1.0", "2.0.9")
    assert got["Ethernet8"].active_firmware == "2.1.1"


def test_firmware_of_a_port_without_a_module_is_not_a_module() -> None:
    doc = _doc()
    doc["TRANSCEIVER_FIRMWARE_INFO|Ethernet100"] = {"active_firmware": "1.0"}
    assert "Ethernet100" not in sonic_state_db.parse_transceivers(json.dumps(doc))


@pytest.mark.parametrize(
    ("key", "field", "value"),
    [
        ("TRANSCEIVER_INFO|Ethernet8", "model", "C-DQ8F\u0000\u0000\u00ff"),  # a garbled EEPROM read
        ("TRANSCEIVER_FIRMWARE_INFO|Ethernet8", "active_firmware", "x" * 65),
    ],
)
def test_a_bad_row_costs_that_ports_module(key: str, field: str, value: str) -> None:
    whole = sonic_state_db.parse_transceivers(SAMPLE.read_text())
    doc = _doc()
    doc[key][field] = value
    log = ParseProblems("state_db.json")
    got = sonic_state_db.parse_transceivers(json.dumps(doc), "state_db.json", log)
    assert got == {k: v for k, v in whole.items() if k != "Ethernet8"}
    (problem,) = log.problems
    assert problem.key == key and problem.skipped == "the transceiver of port Ethernet8"
    assert repr(field) in problem.expected and "ASCII" in problem.expected
    with pytest.raises(ParseError):
        sonic_state_db.parse_transceivers(json.dumps(doc), "state_db.json")
    log = ParseProblems("state_db.json")
    assert sonic_state_db.parse(json.dumps(doc), "state_db.json", log).transceivers == got
    assert len(log.problems) == 1


def test_a_bad_key_of_another_table_is_not_theirs() -> None:
    doc: dict[str, object] = dict(_doc())
    doc["PORT_TABLE|Ethernet0"] = ["not", "a", "hash"]
    doc["TRANSCEIVER_INFO|Ethernet12"] = "not a hash"
    log = ParseProblems("state_db.json")
    got = sonic_state_db.parse_transceivers(json.dumps(doc), "state_db.json", log)
    assert "Ethernet12" not in got and "Ethernet8" in got
    assert [p.key for p in log.problems] == ["TRANSCEIVER_INFO|Ethernet12"]


def test_the_db_dump_shape() -> None:
    doc = {k: {"type": "hash", "value": v, "ttl": -0.001, "expireat": 0} for k, v in _doc().items()}
    assert sonic_state_db.parse_transceivers(json.dumps(doc)) == sonic_state_db.parse_transceivers(SAMPLE.read_text())
