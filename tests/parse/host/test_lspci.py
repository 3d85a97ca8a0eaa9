"""Tests for the ``lspci -vvv`` parser: the real Dell 8xH100 capture and its excerpt, -nn/-D and pciutils variants."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.lspci import AcsBits, BusNumbers, Link, Lspci, normalize_bdf, parse, split_name

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
EXCERPT = "host/lspci_vvv_excerpt_h100_cx7_pcieswitch.txt"
FULL = "host/lspci_vvv_dell_8xH100_8xCX7.txt"
ACS_OFF = AcsBits(False, False, False, False, False, False, False)


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "lspci.txt")
    return info.value


@pytest.fixture(scope="module")
def full(samples: Path) -> Lspci:
    return parse((samples / FULL).read_text(), FULL)


# --- real samples ---------------------------------------------------------------------------------


def test_excerpt_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "lspci_vvv_excerpt_h100_cx7_pcieswitch.json", parse((samples / EXCERPT).read_text(), EXCERPT))


def test_excerpt_values(samples: Path) -> None:
    devices = parse((samples / EXCERPT).read_text()).by_bdf()
    assert list(devices) == ["0000:17:00.0", "0000:17:03.0", "0000:19:00.0", "0000:1a:00.0"]
    switch = devices["0000:17:03.0"]
    assert (switch.class_name, switch.vendor, switch.device, switch.revision, switch.prog_if) == (
        "PCI bridge",
        "Broadcom / LSI",
        "PEX890xx PCIe Gen 5 Switch",
        "b0",
        "00",
    )
    assert (switch.pcie_port_type, switch.physical_slot, switch.subsystem) == (
        "Downstream Port",
        "40",
        "Dell Device 224b",
    )
    assert (switch.link_cap, switch.link_status, switch.downgraded) == (Link(32.0, 16), Link(16.0, 16), True)
    assert switch.bus == BusNumbers(0x17, 0x1B, 0x1B) and switch.acs == ACS_OFF
    assert switch.acs_cap == AcsBits(True, True, True, True, True, False, True)
    gpu = devices["0000:19:00.0"]
    assert (gpu.class_name, gpu.vendor, gpu.device, gpu.kernel_driver, gpu.numa_node) == (
        "3D controller",
        "NVIDIA Corporation",
        "Device 2330",
        "nvidia",
        0,
    )
    assert gpu.kernel_modules == ("nvidiafb", "nouveau", "nvidia_drm", "nvidia")
    assert (gpu.link_status, gpu.downgraded, gpu.acs, gpu.bus) == (Link(32.0, 16), False, None, None)
    assert gpu.dev_status_errors == {"CorrErr"} and gpu.aer_correctable == {"RxErr", "BadTLP", "Timeout"}
    nic = devices["0000:1a:00.0"]
    assert (nic.device, nic.part_number, nic.serial_number) == (
        "MT2910 Family [ConnectX-7]",
        "MCX75310AAS-NEAT",
        "MT2340J88735",
    )
    assert nic.aer_correctable == {"AdvNonFatalErr"} and nic.aer_uncorrectable == frozenset()
    # The excerpt lacks the bridges whose secondary bus is 0x19/0x1a/0x17: no parent can be derived.
    assert {d.parent for d in devices.values()} == {None}


# Rail 0 (GPU 19:00.0, CX-7 1a:00.0, CX-6 Dx 1b:00.0) with its switch chain, a Gen5 switch port trained at 16GT/s,
# the BMC NIC and its root port (both downgraded), an NVSwitch bridge and the Switchtec port above it (ACS redirect).
FULL_EXCERPT = (
    "0000:15:01.0",
    "0000:16:00.0",
    "0000:17:01.0",
    "0000:17:02.0",
    "0000:17:03.0",
    "0000:19:00.0",
    "0000:1a:00.0",
    "0000:1b:00.0",
    "0000:00:0c.0",
    "0000:01:00.0",
    "0000:82:00.0",
    "0000:83:00.0",
)


def test_full_capture_golden_excerpt(full: Lspci, golden: GoldenCheck) -> None:
    devices = full.by_bdf()
    golden(GOLDEN / "lspci_vvv_dell_8xH100_8xCX7_excerpt.json", {bdf: devices[bdf] for bdf in FULL_EXCERPT})


def test_full_capture_aggregates(full: Lspci) -> None:
    assert len(full.devices) == 517
    gpus = [d for d in full.devices if d.class_name == "3D controller"]
    assert [d.bdf[5:] for d in gpus] == [
        "19:00.0",
        "3b:00.0",
        "4c:00.0",
        "5d:00.0",
        "9b:00.0",
        "bb:00.0",
        "cb:00.0",
        "db:00.0",
    ]
    assert {(d.vendor, d.device, d.link_status, d.downgraded) for d in gpus} == {
        ("NVIDIA Corporation", "Device 2330", Link(32.0, 16), False)
    }
    assert [d.numa_node for d in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    cx7 = [d for d in full.devices if d.device == "MT2910 Family [ConnectX-7]"]
    assert len(cx7) == 8 and {d.part_number for d in cx7} == {"MCX75310AAS-NEAT"}
    assert {d.kernel_driver for d in cx7} == {"mlx5_core"}
    assert sum(d.device == "MT2892 Family [ConnectX-6 Dx]" for d in full.devices) == 4
    # Every GPU shares its switch (the upstream port two levels up) with exactly one ConnectX-7: one rail each.
    devices = full.by_bdf()

    def switch(bdf: str) -> str | None:
        parent = devices[bdf].parent
        return None if parent is None else devices[parent].parent

    for gpu in gpus:
        assert [n.bdf for n in cx7 if switch(n.bdf) == switch(gpu.bdf)] != []
        assert len([n for n in cx7 if switch(n.bdf) == switch(gpu.bdf)]) == 1
    assert switch("0000:19:00.0") == switch("0000:1a:00.0") == "0000:16:00.0"


def test_full_capture_downgrades_and_acs(full: Lspci) -> None:
    downgraded = {d.bdf[5:] for d in full.devices if d.downgraded}
    assert downgraded == {
        "00:0c.0",  # root port to the BMC NIC: 5GT/s of 8GT/s
        "00:0e.0",
        "01:00.0",  # BCM5720: x1 of x2 (annotated "(downgraded)")
        "01:00.1",
        "17:00.0",  # PEX890xx downstream ports (x4 management links and the CX-6 Dx port) at 16GT/s of 32GT/s
        "17:03.0",
        "39:00.0",
        "4a:00.0",
        "5b:00.0",
        "99:00.0",
        "99:03.0",
        "b9:00.0",
        "c9:00.0",
        "d9:00.0",
        "80:01.0",  # root port to the Switchtec (NVSwitch management): x2 of x16
        "81:00.1",
    }
    redirect = {d.bdf[5:] for d in full.devices if d.acs is not None and d.acs.req_redir}
    assert redirect == {"82:00.0", "82:01.0", "82:02.0", "82:03.0"}  # Switchtec ports above the NVSwitches
    source_valid = {d.bdf[5:] for d in full.devices if d.acs is not None and d.acs.src_valid}
    assert source_valid == redirect | {"00:0c.0", "00:0e.0"}
    gpu_switch_ports = [d for d in full.devices if d.device == "PEX890xx PCIe Gen 5 Switch" and d.acs is not None]
    assert gpu_switch_ports and {d.acs for d in gpu_switch_ports} == {ACS_OFF}  # P2P not redirected
    assert sum(d.parent is None for d in full.devices) == 425  # root-bus devices: no bridge above them
    assert sum(d.bus is not None for d in full.devices) == 59


# --- constructed variants -------------------------------------------------------------------------

# RECONSTRUCTED: the same four devices as `lspci -vvv -nn -D` prints them (class and vendor:device ids).
NN_HEADERS = {
    "17:00.0 PCI bridge:": "0000:17:00.0 PCI bridge [0604]:",
    "17:03.0 PCI bridge:": "0000:17:03.0 PCI bridge [0604]:",
    "PEX890xx PCIe Gen 5 Switch (rev b0)": "PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0)",
    "19:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)": (
        "0000:19:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2330] (rev a1)"
    ),
    "Subsystem: NVIDIA Corporation Device 16c1": "Subsystem: NVIDIA Corporation Device [10de:16c1]",
    "1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n": (
        "0000:1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]\n"
    ),
    "Subsystem: Mellanox Technologies MT2910 Family [ConnectX-7]": (
        "Subsystem: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:0025]"
    ),
}


def test_numeric_ids_and_domains(samples: Path) -> None:
    raw = (samples / EXCERPT).read_text()
    nn = raw
    for old, new in NN_HEADERS.items():
        nn = nn.replace(old, new)
    plain, numeric = parse(raw).by_bdf(), parse(nn).by_bdf()
    assert list(plain) == list(numeric)
    gpu = numeric["0000:19:00.0"]
    assert (gpu.class_id, gpu.vendor_id, gpu.device_id, gpu.device, gpu.subsystem_id) == (
        "0302",
        "10de",
        "2330",
        "Device 2330",
        "10de:16c1",
    )
    nic = numeric["0000:1a:00.0"]
    assert (nic.vendor, nic.device, nic.vendor_id, nic.device_id) == (
        "Mellanox Technologies",
        "MT2910 Family [ConnectX-7]",
        "15b3",
        "1021",
    )
    assert (numeric["0000:17:00.0"].class_id, numeric["0000:17:00.0"].device_id) == ("0604", "c030")
    for bdf, device in plain.items():  # apart from ids, the records agree
        assert (device.vendor, device.device, device.link_status, device.acs) == (
            numeric[bdf].vendor,
            numeric[bdf].device,
            numeric[bdf].link_status,
            numeric[bdf].acs,
        )


BRIDGE = """\
0000:00:01.0 PCI bridge: Intel Corporation Device 352a (rev 04) (prog-if 00 [Normal decode])
\tBus: primary=00, secondary=05, subordinate=05, sec-latency=0
\t\tLnkCap:\tPort #1, Speed 16GT/s, Width x16, ASPM not supported
{sta}
\tKernel driver in use: pcieport

0000:05:00.0 Ethernet controller: Mellanox Technologies MT28908 Family [ConnectX-6]
\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 8GT/s (downgraded), Width x8 (downgraded)
\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
"""


@pytest.mark.parametrize(
    ("sta", "downgraded", "active"),
    [
        # pciutils < 3.2: one line, no annotation, flags on the same line
        ("\t\tLnkSta:\tSpeed 8GT/s, Width x8, TrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-", True, True),
        # pciutils 3.2 .. 3.7
        (
            "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)\n\t\t\tTrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-",
            False,
            True,
        ),
        # pciutils 3.8+: nothing printed for root/downstream ports even when below the capability
        ("\t\tLnkSta:\tSpeed 8GT/s, Width x16\n\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-", True, False),
        ("\t\tLnkSta:\tSpeed 16GT/s (strange), Width x16 (ok)", False, None),
        ("\t\tLnkSta:\tSpeed unknown, Width x0", True, None),
    ],
)
def test_lnksta_generations(sta: str, downgraded: bool, active: bool | None) -> None:
    devices = parse(BRIDGE.format(sta=sta)).by_bdf()
    port = devices["0000:00:01.0"]
    assert (port.downgraded, port.dl_active) == (downgraded, active)
    nic = devices["0000:05:00.0"]
    assert (nic.parent, nic.downgraded, nic.link_status) == ("0000:00:01.0", True, Link(8.0, 8))


def test_parent_from_secondary_bus() -> None:
    devices = parse(BRIDGE.format(sta="")).by_bdf()
    assert devices["0000:05:00.0"].parent == "0000:00:01.0"
    assert devices["0000:00:01.0"].parent is None and devices["0000:00:01.0"].downgraded is None


def test_helpers() -> None:
    assert normalize_bdf("17:00.0") == "0000:17:00.0"
    assert normalize_bdf("00000000:9B:00.0") == "0000:9b:00.0"
    assert normalize_bdf("ffff:ff:01.0") == "ffff:ff:01.0"
    assert normalize_bdf("17:00") is None
    assert split_name("Broadcom Inc. and subsidiaries NetXtreme BCM5720", None) == (
        "Broadcom Inc. and subsidiaries",
        "NetXtreme BCM5720",
    )
    assert split_name("Acme Widgets Device 1234", None) == ("Acme Widgets", "Device 1234")
    assert split_name("Acme Widgets Frobnicator", None) == (None, "Acme Widgets Frobnicator")


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n\n", " \t \n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "no device line" in err.expected


def test_garbled_header(samples: Path) -> None:
    raw = (samples / EXCERPT).read_text().replace("19:00.0 3D controller:", "19:00 3D controller:")
    err = parse_error(raw)
    assert err.line == 182 and "<bus>:<dev>.<fn>" in err.expected


def test_detail_before_any_device() -> None:
    err = parse_error("\tNUMA node: 0\n")
    assert err.line == 1 and "device line before" in err.expected


@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        ("LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", "LnkSta:\tSpeed fast, Width x16", 209, "link speed"),
        ("LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", "LnkSta:\tWidth x16", 209, "LnkSta: Speed"),
        ("LnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1", "LnkCap:\tSpeed 32GT/s", 205, "LnkCap: Port #N"),
        (
            "UpstreamFwd- EgressCtrl- DirectTrans-\n\tCapabilities: [140",
            "UpstreamFwd-\n\tCapabilities: [140",
            73,
            "EgressCtrl",
        ),
        (
            "NUMA node: 0\n\tBus: primary=17, secondary=1b",
            "NUMA node: zero\n\tBus: primary=17, secondary=1b",
            97,
            "NUMA",
        ),
        ("Bus: primary=17, secondary=18", "Bus: primary=17", 7, "secondary="),
    ],
)
def test_bad_detail_lines(samples: Path, old: str, new: str, line: int, expected: str) -> None:
    raw = (samples / EXCERPT).read_text()
    assert old in raw
    err = parse_error(raw.replace(old, new, 1))
    assert err.line == line and expected in err.expected


def test_device_twice_and_detail_twice(samples: Path) -> None:
    raw = (samples / EXCERPT).read_text()
    assert parse_error(raw + "\n" + raw).line == 361
    err = parse_error(raw.replace("\tNUMA node: 0\n", "\tNUMA node: 0\n\tNUMA node: 1\n", 1))
    assert err.line == 7 and "one numa_node" in err.expected


# --- fuzz -----------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_truncated_and_mutated_sample_raise_only_parse_error(samples: Path, data: st.DataObject) -> None:
    seed = (samples / EXCERPT).read_text()
    cut = seed[: data.draw(st.integers(0, len(seed)))]
    at = data.draw(st.integers(0, len(cut)))
    text = cut[:at] + data.draw(st.text(max_size=3)) + cut[at:]
    try:
        record = parse(text)
    except ParseError as exc:
        assert exc.line is not None and 1 <= exc.line <= text.count("\n") + 1
    else:
        assert all(re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", d.bdf) for d in record.devices)
