"""The switch version parsers (SONiC show version, EOS show version text, NVUE nv show system) over real samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.errors import ParseError
from unifab.parse.registry import FORMATS
from unifab.parse.switch import eos_version_text, nvue_system, sonic_version

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples" / "switch"


def test_sonic_show_version_command_reference() -> None:
    rel = "sonic/sonic_show_version_msn2700_cmdref.txt"
    record = sonic_version.parse((SAMPLES / rel).read_text(), rel)
    assert record.software_version == "SONiC.HEAD.32-21ea29a"
    assert record.image_version == "HEAD.32-21ea29a"
    assert (record.platform, record.hwsku, record.asic, record.asic_count) == (
        "x86_64-mlnx_msn2700-r0",
        "Mellanox-SN2700",
        "mellanox",
        1,
    )
    assert (record.model_number, record.hardware_revision, record.kernel) == ("MSN2700-CS2FO", "A1", "4.9.0-8-amd64")
    assert sonic_version.parse(sonic_version.dump(record)) == record


def test_sonic_show_version_errors_name_the_line() -> None:
    with pytest.raises(ParseError, match="SONiC Software Version"):
        sonic_version.parse("Platform: x86_64-mlnx_msn2700-r0\n", "v.txt")
    with pytest.raises(ParseError) as err:
        sonic_version.parse("SONiC Software Version: SONiC.1\nASIC Count: two\n", "v.txt")
    assert err.value.line == 2
    with pytest.raises(ParseError) as err:
        sonic_version.parse("SONiC Software Version: SONiC.1\nSONiC Software Version: SONiC.2\n", "v.txt")
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("name", "model", "version", "internal", "serial", "hw", "mem"),
    [
        ("veos", "vEOS", "4.14.7M", "4.14.7M-2384414.4147M", None, None, 2028860),
        ("720xp", "CCS-720XP-24ZY4-F", "4.27.6M", "4.27.6M-28481162.4276M", "JPE11400249", "11.00", 3982820),
    ],
)
def test_eos_show_version_text(
    name: str, model: str, version: str, internal: str, serial: str | None, hw: str | None, mem: int
) -> None:
    rel = f"eos/eos_show_version_text_{name}.txt"
    record = eos_version_text.parse((SAMPLES / rel).read_text(), rel)
    assert (record.model_name, record.version, record.internal_version) == (model, version, internal)
    assert (record.serial_number, record.hardware_revision, record.mem_total_kb) == (serial, hw, mem)


def test_eos_text_reads_like_the_eapi_reply() -> None:
    """The text and the eAPI JSON of one command give the same fields the model takes (version, model)."""
    from unifab.parse.switch.eos_json import parse_show_version

    text = "Arista DCS-7060X6-64PE\nSoftware image version: 4.32.2F\nInternal build version: 4.32.2F-1.4322F\n"
    reply = '{"modelName": "DCS-7060X6-64PE", "version": "4.32.2F", "internalVersion": "4.32.2F-1.4322F"}'
    a, b = eos_version_text.parse(text), parse_show_version(reply)
    assert (a.model_name, a.version, a.internal_version) == (b.model_name, b.version, b.internal_version)
    with pytest.raises(ParseError, match="Software image version"):
        eos_version_text.parse("Arista vEOS\nArchitecture: i386\n")


def test_nvue_show_system_documentation_example() -> None:
    rel = "nvue/nvue_nv_show_system_cl55.txt"
    record = nvue_system.parse((SAMPLES / rel).read_text(), rel)
    assert record == nvue_system.NvueSystem("Cumulus Linux 5.5.0", "leaf01", "3 days, 18:40:31", "Etc/UTC")
    assert record.release == "5.5.0"
    assert nvue_system.parse(nvue_system.dump(record)) == record


def test_nvue_show_system_errors() -> None:
    with pytest.raises(ParseError, match="dashes"):
        nvue_system.parse("hostname leaf01\n")
    with pytest.raises(ParseError, match="build"):
        nvue_system.parse("          operational  applied\n--------  -----------  -------\nhostname  leaf01\n")


def test_formats_are_registered() -> None:
    for name in ("sonic-version", "eos-version", "nvue-system"):
        assert FORMATS[name].parser() is not None
