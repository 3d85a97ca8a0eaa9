"""``nvidia_smi_q.render``: records written back as ``nvidia-smi -q -x`` XML read the same."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from unifab.parse.host.nvidia_smi_q import EccCounts, NvidiaSmiQ, RemappedRows, dump, parse, smi_bus_id

A100 = "host/nvidia_smi_q_x_a100_sxm4_80gb_drv535.xml"


def test_real_sample_round_trips(samples: Path) -> None:
    record = parse((samples / A100).read_text(), A100)
    text = dump(record)
    assert parse(text, "rendered") == record
    assert '<gpu id="00000000:01:00.0">' in text
    assert "            <pci_bus_id>00000000:01:00.0</pci_bus_id>" in text.split("\n")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE nvidia_smi_log SYSTEM')


def test_variant_round_trips(samples: Path) -> None:
    """Remapped rows, retired pages, ECC counts, active reasons, a GPU on a high bus, values that need escaping."""
    base = parse((samples / A100).read_text(), A100)
    gpu = replace(
        base.gpus[0],
        pci_bus_id="0000:9a:00.0",
        product_name="NVIDIA H100 80GB HBM3 <SXM5> & co",
        ecc_volatile=EccCounts(3, None),
        ecc_aggregate=EccCounts(12, 1),
        retired_pages_sbe=2,
        retired_pages_dbe=0,
        retired_pages_pending=False,
        remapped_rows=RemappedRows(0, 3, True, False),
        mig_mode=None,
        clocks_event_reasons=("sw_thermal_slowdown", "gpu_idle"),
        reset_required=True,
        fabric_state="Completed",
        fabric_status="Success",
        power_draw_w=None,
    )
    record = NvidiaSmiQ(None, "550.54.15", None, 8, (gpu, replace(gpu, pci_bus_id="0001:1b:00.0", uuid=None)))
    text = dump(record)
    assert '<gpu id="00000000:9A:00.0">' in text and '<gpu id="00000001:1B:00.0">' in text
    assert "<product_name>NVIDIA H100 80GB HBM3 &lt;SXM5&gt; &amp; co</product_name>" in text
    assert parse(text, "rendered") == record


def test_bus_id_spelling() -> None:
    assert smi_bus_id("0000:1a:00.0") == "00000000:1A:00.0"


def test_sparse_gpu_round_trips(samples: Path) -> None:
    """A GPU with nothing but its address (and remapped rows all N/A) writes only what it has."""
    base = parse((samples / A100).read_text(), A100).gpus[0]
    empty = EccCounts(None, None)
    nones = dict.fromkeys(("product_name", "uuid", "serial", "vbios_version", "minor_number"))
    gpu = replace(
        base,
        **nones,  # type: ignore[arg-type]
        gpu_module_id=None,
        board_part_number=None,
        pcie_gen_current=None,
        pcie_gen_max=None,
        pcie_width_current=None,
        pcie_width_max=None,
        pcie_replay_count=None,
        performance_state=None,
        temperature_c=None,
        memory_temperature_c=None,
        power_draw_w=None,
        power_limit_w=None,
        ecc_mode=None,
        ecc_volatile=empty,
        ecc_aggregate=empty,
        retired_pages_sbe=None,
        retired_pages_dbe=None,
        retired_pages_pending=None,
        remapped_rows=RemappedRows(None, None, None, None),
        mig_mode=None,
        clocks_event_reasons=(),
        reset_required=None,
        drain_and_reset_recommended=None,
        fabric_state=None,
        fabric_status=None,
    )
    record = NvidiaSmiQ(None, None, None, None, (gpu,))
    text = dump(record)
    assert "pci_gpu_link_info" not in text and "ecc_errors" not in text and "N/A" in text
    assert parse(text, "rendered") == record
