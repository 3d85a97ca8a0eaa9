"""``lspci.render``: records written back as ``lspci -vvv`` text read the same (real captures and variants)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from unifab.parse.host.lspci import AcsBits, BusNumbers, Link, Lspci, PciDevice, dump, parse

EXCERPT = "host/lspci_vvv_excerpt_h100_cx7_pcieswitch.txt"
FULL = "host/lspci_vvv_dell_8xH100_8xCX7.txt"


@pytest.mark.parametrize("name", [EXCERPT, FULL])
def test_real_captures_round_trip(samples: Path, name: str) -> None:
    record = parse((samples / name).read_text(), name)
    text = dump(record)
    assert parse(text, "rendered") == record
    assert len(text) < len((samples / name).read_text())  # only the modelled lines are written


def test_rendered_lines_are_lspci_spelling(samples: Path) -> None:
    record = parse((samples / EXCERPT).read_text(), EXCERPT)
    text = dump(record)
    for line in (  # the lines as the real capture prints them
        "17:03.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])",
        "\tBus: primary=17, secondary=1b, subordinate=1b, sec-latency=0",
        "\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)",
        "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-",
        "19:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)",
        "\tSubsystem: NVIDIA Corporation Device 16c1",
        "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)",
        "1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
        "\t\t\t[SN] Serial number: MT2340J88735",
        "\tKernel driver in use: mlx5_core",
        "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia",
    ):
        assert line in text.split("\n"), line


def _device(bdf: str, **fields: object) -> PciDevice:
    base = PciDevice(
        bdf=bdf,
        class_name="Ethernet controller",
        class_id="0200",
        description="Broadcom Inc. and subsidiaries BCM57608 10Gb/25Gb/50Gb/100Gb/200Gb/400Gb Ethernet",
        vendor="Broadcom Inc. and subsidiaries",
        device="BCM57608 10Gb/25Gb/50Gb/100Gb/200Gb/400Gb Ethernet",
        vendor_id="14e4",
        device_id="1760",
        revision="11",
        prog_if=None,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def test_variants_round_trip() -> None:
    """-nn ids, a domain other than 0000, narrower and slower links, error bits, ACS on, unknown speed."""
    bridge = PciDevice(
        bdf="0001:40:01.0",
        class_name="PCI bridge",
        class_id="0604",
        description="Broadcom / LSI PEX890xx PCIe Gen 5 Switch",
        vendor="Broadcom / LSI",
        device="PEX890xx PCIe Gen 5 Switch",
        vendor_id="1000",
        device_id="c030",
        revision="b0",
        prog_if="00",
        subsystem="Dell Device 224b",
        subsystem_id="1028:224b",
        pcie_port_type="Downstream Port",
        link_cap=Link(32.0, 16),
        link_status=Link(None, 0),
        downgraded=True,
        dl_active=False,
        bus=BusNumbers(0x40, 0x41, 0x41),
        acs_cap=AcsBits(True, True, True, True, True, False, True),
        acs=AcsBits(True, False, True, True, True, False, False),
        kernel_driver="pcieport",
    )
    narrow = _device(
        "0001:41:00.0",
        numa_node=1,
        physical_slot="40",
        pcie_port_type="Endpoint",
        link_cap=Link(32.0, 16),
        link_status=Link(32.0, 8),
        downgraded=True,
        dl_active=True,
        parent="0001:40:01.0",
        dev_status_errors=frozenset({"CorrErr"}),
        aer_correctable=frozenset({"BadTLP", "RxErr"}),
        aer_uncorrectable=frozenset({"CmpltTO", "PoisonedTLP"}),
        kernel_driver="bnxt_en",
        kernel_modules=("bnxt_en",),
        part_number="BCM957608-P2200G",
        serial_number="P2200G0123",
    )
    slow = _device(
        "0001:42:00.0",
        pcie_port_type="Endpoint",
        link_cap=Link(2.5, 4),
        link_status=Link(2.5, 4),
        downgraded=True,  # pciutils said "(downgraded)" though the numbers match
    )
    record = Lspci((bridge, narrow, slow))
    text = dump(record)
    assert text.startswith("0001:40:01.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030]")
    assert "\t\tLnkSta:\tSpeed unknown (ok), Width x0 (downgraded)" in text
    assert "\t\tLnkCap:\tPort #0, Speed 2.5GT/s, Width x4, ASPM not supported" in text
    assert parse(text, "rendered") == record
