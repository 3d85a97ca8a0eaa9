"""Tests for the ``nvidia-smi -q -x`` parser: the real A100 (r535) sample, older/newer driver shapes, XML safety."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.nvidia_smi_q import EccCounts, RemappedRows, dump, parse, read_xml

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
A100 = "host/nvidia_smi_q_x_a100_sxm4_80gb_drv535.xml"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "smi.xml")
    return info.value


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def block(text: str, tag: str, replacement: str) -> str:
    """Replace the first ``<tag>...</tag>`` element of ``text``."""
    new, count = re.subn(rf"<{tag}>.*?</{tag}>", replacement, text, count=1, flags=re.S)
    assert count == 1, tag
    return new


# --- real sample ----------------------------------------------------------------------------------


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "nvidia_smi_q_x_a100_sxm4_80gb_drv535.json", parse((samples / A100).read_text(), A100))


def test_a100_values(samples: Path) -> None:
    smi = parse((samples / A100).read_text())
    assert (smi.driver_version, smi.cuda_version, smi.attached_gpus) == ("535.54.03", "12.2", 4)
    assert len(smi.gpus) == 1  # the fixture was trimmed to 1 of the 4 attached GPUs
    gpu = smi.gpus[0]
    assert (gpu.pci_bus_id, gpu.product_name, gpu.uuid) == (
        "0000:01:00.0",
        "NVIDIA A100-SXM4-80GB",
        "GPU-513536b6-7d19-9063-b049-1e69664bb298",
    )
    assert (gpu.serial, gpu.vbios_version, gpu.minor_number, gpu.gpu_module_id) == (
        "1650522003820",
        "92.00.36.00.02",
        1,
        4,
    )
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (4, 4, 16, 16)
    assert (gpu.temperature_c, gpu.memory_temperature_c, gpu.power_draw_w, gpu.power_limit_w) == (27, 44, 67.03, 500.0)
    assert gpu.ecc_volatile == gpu.ecc_aggregate == EccCounts(0, 0)
    assert (gpu.mig_mode, gpu.remapped_rows, gpu.retired_pages_sbe, gpu.retired_pages_pending) == (
        "Enabled",
        None,
        None,
        None,
    )
    assert (gpu.clocks_event_reasons, gpu.reset_required, gpu.drain_and_reset_recommended) == ((), False, False)
    assert (gpu.fabric_state, gpu.fabric_status, gpu.performance_state) == (None, None, "P0")


# --- constructed variants -------------------------------------------------------------------------

OLD_ECC = """<ecc_errors>
            <volatile>
                <single_bit>
                    <device_memory>3</device_memory>
                    <register_file>0</register_file>
                    <texture_memory>N/A</texture_memory>
                    <total>3</total>
                </single_bit>
                <double_bit>
                    <device_memory>1</device_memory>
                    <register_file>0</register_file>
                    <texture_memory>N/A</texture_memory>
                    <total>1</total>
                </double_bit>
            </volatile>
            <aggregate>
                <single_bit>
                    <device_memory>10</device_memory>
                    <total>10</total>
                </single_bit>
                <double_bit>
                    <device_memory>2</device_memory>
                    <total>2</total>
                </double_bit>
            </aggregate>
        </ecc_errors>"""


def test_older_driver_shapes(samples: Path) -> None:
    # Pre-r530 spellings (Volta/Turing era): single/double-bit ECC totals, throttle reasons, power_readings,
    # page retirement counts.
    raw = (samples / A100).read_text()
    raw = block(raw, "ecc_errors", OLD_ECC)
    raw = raw.replace("clocks_event_reason", "clocks_throttle_reason")
    raw = raw.replace("<clocks_throttle_reason_sw_power_cap>Not Active", "<clocks_throttle_reason_sw_power_cap>Active")
    raw = block(
        raw,
        "gpu_power_readings",
        "<power_readings><power_state>P0</power_state><power_management>Supported</power_management>"
        "<power_draw>250.50 W</power_draw><power_limit>300.00 W</power_limit></power_readings>",
    )
    raw = block(
        raw,
        "retired_pages",
        "<retired_pages><multiple_single_bit_retirement><retired_count>2</retired_count>"
        "<retired_pagelist></retired_pagelist></multiple_single_bit_retirement><double_bit_retirement>"
        "<retired_count>1</retired_count></double_bit_retirement><pending_blacklist>Yes</pending_blacklist>"
        "<pending_retirement>Yes</pending_retirement></retired_pages>",
    )
    raw = block(raw, "mig_mode", "<mig_mode><current_mig>N/A</current_mig><pending_mig>N/A</pending_mig></mig_mode>")
    gpu = parse(raw).gpus[0]
    assert (gpu.ecc_volatile, gpu.ecc_aggregate) == (EccCounts(3, 1), EccCounts(10, 2))
    assert gpu.clocks_event_reasons == ("sw_power_cap",)
    assert (gpu.power_draw_w, gpu.power_limit_w) == (250.5, 300.0)
    assert (gpu.retired_pages_sbe, gpu.retired_pages_dbe, gpu.retired_pages_pending) == (2, 1, True)
    assert gpu.mig_mode is None


def test_newer_driver_shapes(samples: Path) -> None:
    # r550+ spellings: split SRAM uncorrectable counters, average/instant power, remapped rows (MIG off).
    raw = (samples / A100).read_text()
    raw = block(
        raw,
        "ecc_errors",
        "<ecc_errors><volatile><sram_correctable>5</sram_correctable>"
        "<sram_uncorrectable_parity>1</sram_uncorrectable_parity><sram_uncorrectable_secded>2</sram_uncorrectable_secded>"
        "<dram_correctable>4</dram_correctable><dram_uncorrectable>0</dram_uncorrectable></volatile>"
        "<aggregate><sram_correctable>N/A</sram_correctable><sram_uncorrectable_parity>N/A</sram_uncorrectable_parity>"
        "<dram_correctable>N/A</dram_correctable><sram_threshold_exceeded>No</sram_threshold_exceeded></aggregate>"
        "</ecc_errors>",
    )
    raw = block(
        raw,
        "gpu_power_readings",
        "<gpu_power_readings><power_state>P0</power_state><average_power_draw>612.31 W</average_power_draw>"
        "<instant_power_draw>640.02 W</instant_power_draw><current_power_limit>700.00 W</current_power_limit>"
        "</gpu_power_readings>",
    )
    raw = raw.replace(
        "<remapped_rows>N/A</remapped_rows>",
        "<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>3</remapped_row_unc>"
        "<remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>No</remapped_row_failure>"
        "<row_remapper_histogram><row_remapper_histogram_max>639 bank(s)</row_remapper_histogram_max>"
        "</row_remapper_histogram></remapped_rows>",
    )
    raw = raw.replace("<current_mig>Enabled</current_mig>", "<current_mig>Disabled</current_mig>")
    raw = raw.replace("<clocks_event_reason_gpu_idle>Not Active", "<clocks_event_reason_gpu_idle>Active").replace(
        "<clocks_event_reason_hw_thermal_slowdown>Not Active", "<clocks_event_reason_hw_thermal_slowdown>Active"
    )
    gpu = parse(raw).gpus[0]
    assert (gpu.ecc_volatile, gpu.ecc_aggregate) == (EccCounts(9, 3), EccCounts(None, None))
    assert (gpu.power_draw_w, gpu.power_limit_w) == (612.31, 700.0)
    assert gpu.remapped_rows == RemappedRows(0, 3, True, False)
    assert gpu.mig_mode == "Disabled"
    assert gpu.clocks_event_reasons == ("gpu_idle", "hw_thermal_slowdown")


def test_several_gpus_and_bus_id_spellings(samples: Path) -> None:
    raw = (samples / A100).read_text()
    gpu = raw[raw.index("    <gpu id=") : raw.index("</gpu>") + len("</gpu>")]
    second = gpu.replace('id="00000000:01:00.0"', 'id="00000000:9B:00.0"').replace(
        "<pci_bus_id>00000000:01:00.0</pci_bus_id>", "<pci_bus_id>N/A</pci_bus_id>"
    )
    smi = parse(raw.replace(gpu, gpu + "\n" + second))
    assert [g.pci_bus_id for g in smi.gpus] == ["0000:01:00.0", "0000:9b:00.0"]  # falls back to <gpu id=...>


def test_tab_indented_and_no_doctype(samples: Path) -> None:
    raw = (samples / A100).read_text()
    tabbed = re.sub(r"(?m)^((?:    )+)", lambda m: "\t" * (len(m[1]) // 4), raw)
    no_doctype = re.sub(r"<!DOCTYPE[^>]*>\n", "", raw)
    assert parse(tabbed) == parse(no_doctype) == parse(raw)


# --- errors and XML safety ------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
]>
<nvidia_smi_log><driver_version>&lol1;</driver_version></nvidia_smi_log>
"""


def test_entity_declarations_are_rejected() -> None:
    err = parse_error(BILLION_LAUGHS)
    assert err.line == 2 and "internal subset" in err.expected
    external = '<?xml version="1.0"?>\n<!DOCTYPE x [\n<!ENTITY % ext SYSTEM "http://example.invalid/x.dtd">\n]>\n<x/>\n'
    assert "internal subset" in parse_error(external).expected


def test_external_dtd_is_not_fetched(samples: Path) -> None:
    # nvidia-smi's own DOCTYPE names an external DTD that is not present: parsing must not try to read it.
    doc = read_xml((samples / A100).read_text(), "a.xml")
    assert doc.root.tag == "nvidia_smi_log" and doc.line(doc.root) == 3


def test_malformed_xml_names_the_line(samples: Path) -> None:
    raw = (samples / A100).read_text()
    err = parse_error(raw.replace("<serial>1650522003820</serial>", "<serial>1650522003820</seriel>"))
    assert err.line == line_of(raw, "<serial>") and "well-formed" in err.expected
    truncated = raw[: raw.index("<uuid>")]
    assert parse_error(truncated).line == truncated.count("\n") + 1


@pytest.mark.parametrize("raw", ["", "   \n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


def test_wrong_root() -> None:
    err = parse_error('<?xml version="1.0"?>\n<system version="1"/>\n')
    assert err.line == 2 and "<nvidia_smi_log>" in err.expected


def test_bad_values_name_their_element(samples: Path) -> None:
    raw = (samples / A100).read_text()
    err = parse_error(raw.replace("<gpu_temp>27 C</gpu_temp>", "<gpu_temp>warm</gpu_temp>"))
    assert err.line == line_of(raw, "<gpu_temp>") and "<gpu_temp>" in err.expected
    err = parse_error(raw.replace("<power_draw>67.03 W</power_draw>", "<power_draw>67.03 kW</power_draw>"))
    assert err.line == line_of(raw, "<power_draw>") and "in W" in err.expected
    err = parse_error(raw.replace("<minor_number>1</minor_number>", "<minor_number>1.5</minor_number>"))
    assert "integer" in err.expected
    err = parse_error(raw.replace("<reset_required>No</reset_required>", "<reset_required>Maybe</reset_required>"))
    assert err.line == line_of(raw, "<reset_required>") and "Yes or No" in err.expected
    no_id = raw.replace('<gpu id="00000000:01:00.0">', "<gpu>").replace("<pci_bus_id>00000000:01:00.0</pci_bus_id>", "")
    err = parse_error(no_id)
    assert err.line == line_of(raw, "<gpu id=") and "PCI address" in err.expected


# --- the Fabric section of NVLink-switch systems (GB200-class) ---------------------------------------------

UUID = "6d9fbfd8-1c2b-4e3a-9f10-0123456789ab"


def _fabric(samples: Path, body: str) -> str:
    return block((samples / A100).read_text(), "fabric", f"<fabric>{body}</fabric>")


def test_the_a100_has_no_nvlink_domain(samples: Path) -> None:
    r = parse((samples / A100).read_text(), A100)
    assert (r.gpus[0].fabric_clique_id, r.gpus[0].fabric_cluster_uuid) == (None, None)
    assert r.nvlink_domains == ()


def test_clique_and_cluster_uuid_make_the_nvlink_domain(samples: Path) -> None:
    body = (
        "<state>Completed</state><status>Success</status><cliqueId>32766</cliqueId>"
        f"<clusterUuid>{UUID.upper()}</clusterUuid><health><bandwidth>Full</bandwidth></health>"
    )
    r = parse(_fabric(samples, body), "smi.xml")
    g = r.gpus[0]
    assert (g.fabric_state, g.fabric_status, g.fabric_clique_id, g.fabric_cluster_uuid) == (
        "Completed",
        "Success",
        32766,
        UUID,
    )
    assert r.nvlink_domains == (f"{UUID}.32766",)
    snake = parse(_fabric(samples, f"<clique_id>7</clique_id><cluster_uuid>{UUID}</cluster_uuid>"), "smi.xml")
    assert snake.nvlink_domains == (f"{UUID}.7",)


def test_no_partition_and_not_available_read_as_no_domain(samples: Path) -> None:
    zero = "00000000-0000-0000-0000-000000000000"
    for body in (
        f"<cliqueId>0</cliqueId><clusterUuid>{zero}</clusterUuid>",
        "<cliqueId>N/A</cliqueId><clusterUuid>N/A</clusterUuid>",
        f"<clusterUuid>{UUID}</clusterUuid>",  # a UUID without its clique is no domain
    ):
        assert parse(_fabric(samples, body), "smi.xml").nvlink_domains == ()


def test_a_bad_clique_or_uuid_names_its_element(samples: Path) -> None:
    raw = _fabric(samples, "<cliqueId>abc</cliqueId>")
    err = parse_error(raw)
    assert "<cliqueId>" in str(err) and err.line == line_of(raw, "<cliqueId>")
    raw = _fabric(samples, "<cliqueId>1</cliqueId><clusterUuid>not-a-uuid; rm -rf /</clusterUuid>")
    err = parse_error(raw)
    assert "<clusterUuid> as a UUID" in str(err) and err.line == line_of(raw, "<clusterUuid>")


def test_dump_keeps_the_nvlink_domain(samples: Path) -> None:
    r = parse(_fabric(samples, f"<cliqueId>5</cliqueId><clusterUuid>{UUID}</clusterUuid>"), "smi.xml")
    again = parse(dump(r), "dump.xml")
    assert again.nvlink_domains == (f"{UUID}.5",) and again.gpus == r.gpus


# --- partial mode: one bad value costs that field -----------------------------------------------------------


def test_partial_bad_values_cost_their_fields(samples: Path) -> None:
    raw = (samples / A100).read_text()
    whole = parse(raw)
    temp = line_of(raw, "<gpu_temp>")
    broken = raw.replace("<gpu_temp>27 C</gpu_temp>", "<gpu_temp>hot</gpu_temp>", 1)
    at = raw.index("<volatile>\n                <sram_correctable>")  # ecc_errors/volatile (MIG counts come before)
    ecc = line_of(raw[at:], "<sram_uncorrectable>") + raw[:at].count("\n")
    broken = broken[:at] + broken[at:].replace("<sram_uncorrectable>0<", "<sram_uncorrectable>x<", 1)
    with pytest.raises(ParseError):
        parse(broken, "smi.xml")  # without a collector: strict
    log = ParseProblems("smi.xml")
    q = parse(broken, "smi.xml", log)
    assert sorted(p.line for p in log.problems) == sorted([temp, ecc])
    (gpu,) = whole.gpus
    assert gpu.temperature_c == 27 and gpu.ecc_volatile == EccCounts(0, 0)
    # the uncorrectable total is unknown (not the sum of the parts that read); the rest as before
    lost = replace(gpu, temperature_c=None, ecc_volatile=EccCounts(0, None))
    assert q == replace(whole, gpus=(lost,))
    assert all("GPU 0000:" in p.skipped for p in log.problems)


def test_partial_gpu_without_address_costs_that_gpu(samples: Path) -> None:
    raw = (samples / A100).read_text()
    broken = re.sub(r"<pci_bus_id>[^<]*</pci_bus_id>", "<pci_bus_id>nowhere</pci_bus_id>", raw, count=1)
    broken = re.sub(r'<gpu id="[^"]*">', '<gpu id="nowhere">', broken, count=1)
    log = ParseProblems("smi.xml")
    q = parse(broken, "smi.xml", log)
    assert q.gpus == () and q.driver_version == parse(raw).driver_version
    assert [p.line for p in log.problems] == [line_of(broken, '<gpu id="nowhere">')]
