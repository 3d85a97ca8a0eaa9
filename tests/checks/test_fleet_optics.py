"""FLEET-FIRMWARE on switch optics: SONiC STATE_DB TRANSCEIVER_INFO / TRANSCEIVER_FIRMWARE_INFO read into the ports'
transceivers (the rows of sonic-utilities' STATE_DB mock, verbatim, on three leaves), judged per vendor + part."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, Finding, Host, Nic, Severity

SAMPLE = Path(__file__).resolve().parents[1] / "data/wild/switch/sonic/sonic_utilities_state_db_transceiver_subset.json"
PORTS = ("Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet16", "Ethernet40", "Ethernet64", "Ethernet72")
LEAVES = ("leaf1", "leaf2", "leaf3")


def _bundle(root: Path, edit: dict[str, dict[str, dict[str, str]]] | None = None) -> Path:
    """Three SONiC leaves whose CONFIG_DB lists the sample's ports, each with the sample as its STATE_DB;
    ``edit``: switch -> key -> fields replaced in its copy."""
    for name in LEAVES:
        sonic = root / "switches" / name / "sonic"
        sonic.mkdir(parents=True)
        config = {
            "DEVICE_METADATA": {"localhost": {"hwsku": "ACS-SN5600", "platform": "x86_64-nvidia_sn5600-r0"}},
            "PORT": {p: {"admin_status": "up", "mtu": "9100", "speed": "400000"} for p in PORTS[:-1]},
        }
        (sonic / "config_db.json").write_text(json.dumps(config))
        doc = json.loads(SAMPLE.read_text())
        for key, fields in (edit or {}).get(name, {}).items():
            doc[key] |= fields
        (sonic / "state_db.json").write_text(json.dumps(doc))
    return root


def _firmware(fabric: Fabric) -> list[Finding]:
    return [f for f in run_checks(fabric) if f.check == "FLEET-FIRMWARE"]


def test_the_ports_carry_their_modules(tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(tmp_path / "b"))
    assert not fabric.input_findings
    ports = fabric.switches["leaf1"].ports
    t = ports["Ethernet8"].transceiver
    assert t is not None
    assert (t.identifier, t.vendor, t.part_number, t.serial_number) == (
        "QSFP-DD Double Density 8X Pluggable Transceiver",
        "INNOLIGHT",
        "C-DQ8FNM010-N00",
        "INKAO2900002A",
    )
    assert (t.revision, t.firmware, t.inactive_firmware) == ("2A", "2.1.1", "1.2.3")
    assert ports["Ethernet4"].transceiver is not None and ports["Ethernet4"].transceiver.revision == "X.X"
    assert "Ethernet72" not in ports  # a module of a port CONFIG_DB does not list adds no port


def test_uniform_groups_are_clean(tmp_path: Path) -> None:
    """Every vendor + part group runs one firmware on the three leaves; the mixed revisions of XXXX XXX (XX on a
    QSFP-DD, X.X on an SFP28) are no finding without a baseline: revisions are judged against a baseline only."""
    assert _firmware(load_bundle(_bundle(tmp_path / "b"))) == []


def test_the_optic_on_another_firmware_is_the_straggler(tmp_path: Path) -> None:
    edit = {"leaf3": {"TRANSCEIVER_FIRMWARE_INFO|Ethernet8": {"active_firmware": "2.0.6"}}}
    (f,) = _firmware(load_bundle(_bundle(tmp_path / "b", edit)))
    assert f.severity is Severity.WARNING and f.entities == ("optic:leaf3:Ethernet8",)
    assert f.subject == {
        "kind": "switch",
        "device": "leaf3",
        "field": "transceiver_firmware",
        "group": "INNOLIGHT C-DQ8FNM010-N00",
    }
    assert f.evidence["distribution"] == {"2.0.6": "1 device (1 optic)", "2.1.1": "2 devices (2 optics)"}
    assert f.evidence["expected"] == "2.1.1"
    assert "transceiver firmware 2.0.6 on Ethernet8 (1 optic); 2 of 3 optics" in f.message
    commands = f.fix[0].commands
    assert "sudo sfputil show fwversion Ethernet8" in commands
    assert 'sudo sfputil firmware upgrade Ethernet8 "$FW_FILE"' in commands
    assert any("INNOLIGHT C-DQ8FNM010-N00 module firmware image 2.1.1" in c for c in commands)


def test_the_baseline_judges_switch_optics(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b", {"leaf3": {"TRANSCEIVER_FIRMWARE_INFO|Ethernet8": {"active_firmware": "2.0.6"}}})
    (bundle / "fabric.yaml").write_text(
        "version: 1\nfleet:\n  groups:\n    - match: {kind: switch, os: sonic}\n"
        "      transceiver_part: [MFA1A00-C003, C-DQ8FNM010-N00, XXX]\n"
        "      transceiver_revision: [AC, 2A, XX]\n"
    )
    fabric = load_bundle(bundle)
    got = {(f.subject["device"], f.subject["field"], f.entities, f.severity) for f in _firmware(fabric)}
    for leaf in LEAVES:  # the Credo cable is not a qualified part; the SFP28's X.X not a qualified revision
        assert (leaf, "transceiver_part", (f"optic:{leaf}:Ethernet12",), Severity.ERROR) in got
        assert (leaf, "transceiver_revision", (f"optic:{leaf}:Ethernet4",), Severity.ERROR) in got
    # the firmware straggler is still judged by its group's majority (no baseline names firmware)
    assert ("leaf3", "transceiver_firmware", ("optic:leaf3:Ethernet8",), Severity.WARNING) in got
    assert len(got) == 7
    # a baseline that names the firmware (fabric.yaml's transceiver_firmware) replaces the majority: the two
    # 2.1.1 optics are off it, 2.0.6 is not
    (bundle / "fabric.yaml").write_text(
        "version: 1\nfleet:\n  groups:\n    - match: {kind: switch}\n      transceiver_firmware: ['2.0.*', X.X]\n"
    )
    fabric = load_bundle(bundle)
    firmware = [f for f in _firmware(fabric) if f.subject["field"] == "transceiver_firmware"]
    assert {(f.subject["device"], f.subject["group"]) for f in firmware} == {
        ("leaf1", "INNOLIGHT C-DQ8FNM010-N00"),
        ("leaf2", "INNOLIGHT C-DQ8FNM010-N00"),
    }
    assert all(f.severity is Severity.ERROR and f.evidence["allowed"] == ["2.0.*", "X.X"] for f in firmware)
    assert all('sudo sfputil firmware upgrade Ethernet8 "$FW_FILE"' in f.fix[0].commands for f in firmware)


def test_a_bad_module_row_is_partial_and_costs_that_port(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "b", {"leaf2": {"TRANSCEIVER_INFO|Ethernet8": {"model": "C-DQ8F\u0000\u00ff"}}})
    fabric = load_bundle(bundle)
    (problem,) = fabric.input_findings
    assert problem.check == "INPUT-PARTIAL" and "switches/leaf2/sonic/state_db.json" in problem.message
    ports = fabric.switches["leaf2"].ports
    assert ports["Ethernet8"].transceiver is None and ports["Ethernet40"].transceiver is not None
    assert _firmware(fabric) == []


def test_host_and_switch_optics_of_one_part_are_one_group(tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(tmp_path / "b"))
    switch_optic = fabric.switches["leaf1"].ports["Ethernet8"].transceiver
    assert switch_optic is not None
    nic = Nic("gpu001", "eth0", "mlx5_0", 9000, None, transceiver=replace(switch_optic, firmware="2.0.6"))
    fabric.hosts["gpu001"] = Host("gpu001", {"eth0": nic})
    (f,) = _firmware(fabric)
    assert (f.subject["kind"], f.subject["device"], f.entities) == ("host", "gpu001", ("optic:gpu001:eth0",))
    assert f.evidence["distribution"] == {"2.0.6": "1 device (1 optic)", "2.1.1": "3 devices (3 optics)"}
    assert f.fix[0].commands == (
        "# update the INNOLIGHT C-DQ8FNM010-N00 module firmware to 2.1.1 with the vendor's tool, then re-seat or "
        "reset it",
    )


def test_a_port_name_unfit_for_a_command_gets_a_comment_not_a_command() -> None:
    from unifab.checks.fleet import _optic_firmware
    from unifab.checks.fleet_versions import Fact

    fact = Fact(
        "transceiver_firmware", "switch", "leaf1", ("INNOLIGHT", "C-DQ8FNM010-N00"), "2.0.6", (), {"os": "sonic"}
    )
    ports = ("Ethernet8", "Ethernet8\nsudo reboot", "Ethernet8;id", "Ethernet12\n")
    lines = _optic_firmware(fact, tuple(f"optic:leaf1:{p}" for p in ports), "2.1.1")
    assert all("\n" not in line for line in lines)
    commands = [line for line in lines if not line.startswith("#")]
    assert commands == ["sudo sfputil show fwversion Ethernet8", 'sudo sfputil firmware upgrade Ethernet8 "$FW_FILE"']
    assert sum("not a port name safe" in line for line in lines) == 3
