"""Host artifacts the twin writes beside :mod:`unifab.twin.host_files`, each through its parser's ``dump``.

Per NIC: ``cmd/ethtool-m/<netdev>.txt``, the ``ethtool -m`` of a healthy 400G OSFP CMIS module (an NVIDIA
MMA4Z00-NS400-like 400GBASE-SR4 multimode transceiver: 4 lanes, 850 nm VCSEL), DOM well inside its thresholds.

Per host: ``cmd/dmesg.txt``, a kernel log without Xid events holding the driver's ``NVRM: GPU at PCI:...: GPU-<uuid>``
line for each of the 8 GPUs, at the PCI addresses :mod:`unifab.twin.host_files` gives them in the NCCL topology
(GPU *i* at bus ``SWITCH_BUSES[i] + 3``), so the collector fills each GPU's UUID from it.

Per host, by :mod:`unifab.twin.host_pci_files`: ``cmd/lspci-vvv.txt``, ``cmd/nvidia-smi-q.xml``,
``cmd/rdma-statistic.txt``; by :mod:`unifab.twin.host_nic_vendor_files`: what a host's NIC kind and driver stack
add (``sys/module/<driver>/version``, upstream mlx5 debugfs ``cc_params``, Broadcom ``niccli getqos`` and bnxt_re
configfs).

The module text is rendered once and only the serial number changes per NIC, so the twin stays quick at
100,000 GPUs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from unifab import layout
from unifab.parse.host import ethtool_module as em
from unifab.parse.host import lsmod, xid
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinNic
from unifab.twin.files import write_text
from unifab.twin.host_nic_vendor_files import write_nic_vendor_files
from unifab.twin.host_pci_files import gpu_bdf, gpu_uuid, write_host_pci

__all__ = ["gpu_uuid", "host_dmesg", "host_lsmod", "module_eeprom", "module_serial", "write_host_extras"]

MODULE_VENDOR = "NVIDIA"
MODULE_PN = "MMA4Z00-NS400"
MODULE_LANES = 4  # 400G SR4: 4 x 100G PAM4
_SERIAL_TOKEN = "@@SERIAL@@"  # replaced per NIC in the rendered template

_OFF = em.Flags(False, False, False, False)

# Healthy readings per lane: (bias mA, tx mW, rx mW); dBm as ethtool computes it (10*log10, 0.01).
_LANE_READINGS = ((7.912, 0.8913, 0.7943), (7.804, 0.9120, 0.8128), (8.016, 0.8710, 0.7762), (7.948, 0.9016, 0.8318))

_INFO = (
    ("Power class", "6"),
    ("Max power", "12.00W"),
    ("Connector", "0x0c (MPO Parallel Optic)"),
    ("Cable assembly length", "0.00m"),
    ("Tx CDR bypass control", "No"),
    ("Rx CDR bypass control", "No"),
    ("Tx CDR", "Yes"),
    ("Rx CDR", "Yes"),
    ("Transmitter technology", "0x00 (850 nm VCSEL)"),
    ("Laser wavelength", "850.000nm"),
    ("Laser wavelength tolerance", "10.000nm"),
    ("Length (SMF)", "0.00km"),
    ("Length (OM5)", "0m"),
    ("Length (OM4)", "50m"),
    ("Length (OM3 50/125um)", "30m"),
    ("Length (OM2 50/125um)", "0m"),
    ("Date code", "240315__"),
    ("Revision compliance", "Rev. 5.0"),
    ("LowPwrAllowRequestHW", "Off"),
    ("LowPwrRequestSW", "Off"),
)


def _dbm(mw: float) -> float | None:
    return em.mw_to_dbm(mw)


def _levels_mw(*mw: float) -> tuple[em.Levels, em.Levels]:
    return em.Levels(*mw), em.Levels(*(_dbm(v) for v in mw))


def module_eeprom(serial_number: str) -> em.ModuleEeprom:
    """The ``ethtool -m`` record of a healthy 400G OSFP SR4 module with the given serial number."""
    lanes = tuple(
        em.Lane(
            lane=n,
            bias_ma=bias,
            tx_power_mw=tx,
            tx_power_dbm=_dbm(tx),
            rx_power_mw=rx,
            rx_power_dbm=_dbm(rx),
            bias_flags=_OFF,
            tx_power_flags=_OFF,
            rx_power_flags=_OFF,
        )
        for n, (bias, tx, rx) in enumerate(_LANE_READINGS, start=1)
    )
    tx_mw, tx_dbm = _levels_mw(3.1623, 0.1585, 2.5119, 0.1995)  # +5.0/-8.0 alarm, +4.0/-7.0 warning dBm
    rx_mw, rx_dbm = _levels_mw(3.1623, 0.0891, 2.5119, 0.1122)  # +5.0/-10.5 alarm, +4.0/-9.5 warning dBm
    return em.ModuleEeprom(
        spec="cmis",
        identifier_code=0x19,
        identifier="OSFP 8X Pluggable Transceiver",
        vendor=MODULE_VENDOR,
        vendor_oui="48:b0:2d",
        part_number=MODULE_PN,
        vendor_rev="A3",
        serial_number=serial_number,
        module_state="ModuleReady",
        temperature_c=46.25,
        voltage_v=3.2812,
        alarm_flags_implemented=None,
        rx_power_type="avg",
        temperature_flags=_OFF,
        voltage_flags=_OFF,
        lanes=lanes,
        thresholds=em.Thresholds(
            temperature_c=em.Levels(80.0, -5.0, 75.0, 0.0),
            voltage_v=em.Levels(3.465, 3.135, 3.4, 3.2),
            bias_ma=em.Levels(13.0, 3.0, 12.0, 4.0),
            tx_power_mw=tx_mw,
            tx_power_dbm=tx_dbm,
            rx_power_mw=rx_mw,
            rx_power_dbm=rx_dbm,
        ),
        info=_INFO,
    )


def module_serial(nic: TwinNic) -> str:
    """A stable, unique serial number per (host, rail): ``MT24`` + 7-digit host index + rail digit."""
    return f"MT24{nic.host_index:07d}{nic.rail}"


@cache
def _module_template() -> str:
    return em.dump(module_eeprom(_SERIAL_TOKEN))


def host_dmesg(host_index: int) -> xid.XidLog:
    """The kernel log record of a healthy host: every GPU announced by the driver, no Xid."""
    gpus = {gpu_bdf(i): gpu_uuid(host_index, i) for i in range(c.GPUS_PER_HOST)}
    return xid.XidLog((), gpus)


# a GPU host's RDMA and GPU modules (sizes of a 5.15 kernel with driver 535 and MLNX_OFED 24.x)
_MODULES = (
    ("nvidia_peermem", 16384, 0, ()),
    ("nvidia_uvm", 1540096, 0, ()),
    ("nvidia_drm", 86016, 0, ()),
    ("nvidia_modeset", 1306624, 1, ("nvidia_drm",)),
    ("nvidia", 56692736, 3, ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset")),
    ("rdma_ucm", 28672, 0, ()),
    ("ib_uverbs", 184320, 3, ("nvidia_peermem", "rdma_ucm", "{rdma}")),
    ("{rdma}", 466944, 0, ()),
    ("ib_core", 434176, 4, ("rdma_ucm", "ib_uverbs", "{rdma}", "rdma_cm")),
    ("{core}", 2134016, 1, ("{rdma}",)),
)


@cache
def host_lsmod(vendor: str, peermem: bool = True) -> str:
    """``lsmod`` of a twin host whose NICs are ``vendor``; without ``peermem`` nvidia_peermem is not loaded."""
    rdma, core = ("bnxt_re", "bnxt_en") if vendor == "bnxt" else ("mlx5_ib", "mlx5_core")
    modules = []
    for name, size, count, holders in _MODULES:
        held = tuple(h.format(rdma=rdma) for h in holders if peermem or h != "nvidia_peermem")
        if name == "nvidia_peermem" and not peermem:
            continue
        used = count - (not peermem and "nvidia_peermem" in holders)
        modules.append(lsmod.Module(name.format(rdma=rdma, core=core), size, used, held))
    return lsmod.dump(lsmod.Lsmod(tuple(modules)))


def write_host_extras(cluster: Cluster, host_root: Path, nics: list[TwinNic]) -> None:
    """Write the extra host artifacts of one twin host under ``host_root`` (its ``hosts/<name>`` directory)."""
    off_switch = tuple(sorted(cluster.gpus_off_nic_switch.get(nics[0].host, ()))) if nics else ()
    write_host_pci(host_root, nics, off_switch)
    write_nic_vendor_files(host_root, nics)
    if nics:
        write_text(host_root / layout.DMESG, xid.dump(host_dmesg(nics[0].host_index)))
        write_text(host_root / layout.LSMOD, host_lsmod(nics[0].vendor, all(n.peermem for n in nics)))
    template = _module_template()
    for nic in nics:
        text = template.replace(_SERIAL_TOKEN, module_serial(nic))
        write_text(host_root / layout.ETHTOOL_M_DIR / f"{nic.netdev}.txt", text)
