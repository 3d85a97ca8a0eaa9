"""The twin's extra host artifacts parse with the real parsers and fill the fabric model."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.model import Fabric
from unifab.parse.host import ethtool_module, xid
from unifab.twin.cluster import build
from unifab.twin.host_extra_files import gpu_uuid, host_dmesg, module_eeprom, module_serial, write_host_extras
from unifab.twin.writer import write_bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric]:
    root = tmp_path_factory.mktemp("extras") / "bundle"
    cluster = build(16)
    write_bundle(cluster, root)
    for host, nics in cluster.hosts.items():
        write_host_extras(cluster, root / "hosts" / host, nics)
    return root, load_bundle(root)


def test_no_input_findings(bundle: tuple[Path, Fabric]) -> None:
    _, fabric = bundle
    assert fabric.input_findings == []


def test_every_nic_has_a_healthy_400g_module(bundle: tuple[Path, Fabric]) -> None:
    _, fabric = bundle
    nics = [nic for host in fabric.hosts.values() for nic in host.nics.values()]
    assert len(nics) == 16
    serials = set()
    for nic in nics:
        t = nic.transceiver
        assert t is not None
        assert (t.identifier, t.vendor, t.part_number, t.module_state) == (
            "OSFP 8X Pluggable Transceiver",
            "NVIDIA",
            "MMA4Z00-NS400",
            "ModuleReady",
        )
        assert t.temperature_c is not None and 20 < t.temperature_c < 70
        assert len(t.lanes) == 4
        for lane in t.lanes:
            assert lane.rx_power_dbm is not None and -3 < lane.rx_power_dbm < 2
            assert lane.tx_power_dbm is not None and -3 < lane.tx_power_dbm < 2
        serials.add(t.serial_number)
    assert len(serials) == 16


def test_module_file_round_trips(bundle: tuple[Path, Fabric]) -> None:
    root, _ = bundle
    text = (root / "hosts" / "gpu002" / "cmd" / "ethtool-m" / "eth3.txt").read_text()
    m = ethtool_module.parse(text)
    assert m.serial_number == "MT2400000013"
    assert m == module_eeprom("MT2400000013")
    assert ethtool_module.dump(m) == text


def test_module_readings_are_inside_thresholds() -> None:
    m = module_eeprom("X")
    t = m.thresholds
    assert t is not None and t.rx_power_dbm is not None and t.tx_power_dbm is not None and t.bias_ma is not None
    for lane in m.lanes:
        assert lane.rx_power_dbm is not None and t.rx_power_dbm.low_warning is not None
        assert lane.rx_power_dbm > t.rx_power_dbm.low_warning
        assert lane.tx_power_dbm is not None and t.tx_power_dbm.low_warning is not None
        assert lane.tx_power_dbm > t.tx_power_dbm.low_warning
        assert lane.bias_ma is not None and t.bias_ma.low_warning is not None and t.bias_ma.high_warning is not None
        assert t.bias_ma.low_warning < lane.bias_ma < t.bias_ma.high_warning


def test_serials_differ_by_host_and_rail() -> None:
    cluster = build(16)
    nics = [nic for nics in cluster.hosts.values() for nic in nics]
    assert len({module_serial(nic) for nic in nics}) == len(nics)


def test_gpu_uuids_come_from_dmesg_and_match_pci(bundle: tuple[Path, Fabric]) -> None:
    _, fabric = bundle
    host = fabric.hosts["gpu002"]
    assert len(host.gpus) == 8
    for index, gpu in host.gpus.items():
        assert gpu.uuid == gpu_uuid(1, index)
        assert gpu.pci_bus_id is not None and xid.dump(host_dmesg(1)).count(gpu.pci_bus_id[:-2] + ":") == 1
        assert gpu.xids == ()


def test_dmesg_round_trips(bundle: tuple[Path, Fabric]) -> None:
    root, _ = bundle
    text = (root / "hosts" / "gpu001" / "cmd" / "dmesg.txt").read_text()
    log = xid.parse(text)
    assert log == host_dmesg(0) and log.events == ()
    assert xid.dump(log) == text
    assert len({gpu_uuid(h, g) for h in range(3) for g in range(8)}) == 24
