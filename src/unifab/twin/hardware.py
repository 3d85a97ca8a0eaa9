"""The twin's hardware: fixed identities and defaults every writer shares (firmware, PCIe layout, ETS,
DCQCN, system descriptions), and the NIC identities derived from them (MAC, GUID, RoCE MTU, ibv_devinfo).

Kept apart from the per-format writers so that host, NIC-vendor, PCI and switch writers can all read
them without importing one another.
"""

from __future__ import annotations

from unifab.intent_presets import MLX5_DCQCN
from unifab.parse.host import ibv_devinfo
from unifab.twin.cluster import TwinNic

__all__ = [
    "BOARD_ID",
    "EOS_INTERNAL_VERSION",
    "EOS_MODEL",
    "EOS_VERSION",
    "ETS_BW",
    "FW_VER",
    "GPU_NVLINKS",
    "GPU_PCI_CLASS",
    "HOST_DESCR",
    "HW_COUNTERS",
    "IBOE_HEADERS",
    "LANE_SPEEDS",
    "NIC_PCI_CLASS",
    "NUMA_CPUS",
    "RP_DEFAULTS",
    "RX_BUFFERS",
    "SWITCH_BUSES",
    "SYSTEM_DESCR",
    "VENDOR_PART_ID",
    "active_mtu",
    "ets_bw",
    "eui64",
    "mac_bytes",
    "nic_ibv_device",
]

FW_VER = "28.39.1002"  # ConnectX-7 firmware
VENDOR_PART_ID = 4129  # ConnectX-7
BOARD_ID = "MT_0000000838"
NIC_PCI_CLASS = "0x020000"  # Ethernet controller (RoCE)
GPU_PCI_CLASS = "0x030200"  # 3D controller
SWITCH_BUSES = (0x15, 0x26, 0x37, 0x48, 0x95, 0xA6, 0xB7, 0xC8)  # PCIe switch i: NIC on bus +2, GPU on bus +3
NUMA_CPUS = ("0-55,112-167", "56-111,168-223")
GPU_NVLINKS = "NV18"
HW_COUNTERS = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled")
IBOE_HEADERS = 96  # GRH + UDP + BTH + XRC + ATOMICETH + ICRC bytes (linux ib_verbs.h iboe_get_mtu)
LANE_SPEEDS = ((100_000, "NDR"), (50_000, "HDR"), (25_000, "EDR"))  # Gb/s per lane -> sysfs speed name
# MLNX_OFED / firmware reaction-point defaults (reference host-nic-roce §2.3): the notification point's
# min_time_between_cnps is written on its own.
RP_DEFAULTS = {name: value for name, value in MLX5_DCQCN.items() if name != "min_time_between_cnps"}
ETS_BW = (45, 1, 1, 50, 1, 1, 0, 1)  # per TC; TC 6 (CNP) is strict
RX_BUFFERS = (130944, 261888, 0, 0, 0, 0, 0, 0)  # lossy buffer 0, lossless buffer 1 (priority 3)


def ets_bw(roce_tc_bw: int | None, roce_tc: int = 3) -> tuple[int, ...]:
    """ETS shares per TC with the RoCE TC at ``roce_tc_bw`` percent (None: :data:`ETS_BW`'s), the difference given
    to or taken from TC 0 so the ETS classes still add up to 100."""
    if roce_tc_bw is None:
        return ETS_BW
    shares = list(ETS_BW)
    shares[0] += shares[roce_tc] - roce_tc_bw
    shares[roce_tc] = roce_tc_bw
    return tuple(shares)


def mac_bytes(nic: TwinNic) -> list[int]:
    return [int(part, 16) for part in nic.mac.split(":")]


def eui64(nic: TwinNic) -> str:
    """The modified EUI-64 interface id of the NIC's MAC, as four hex groups (also the node GUID)."""
    b = mac_bytes(nic)
    return f"{b[0] ^ 2:02x}{b[1]:02x}:{b[2]:02x}ff:fe{b[3]:02x}:{b[4]:02x}{b[5]:02x}"


def active_mtu(netdev_mtu: int) -> int:
    """The RoCE path MTU the kernel derives from the netdev MTU (``iboe_get_mtu``)."""
    room = netdev_mtu - IBOE_HEADERS
    return next((m for m in (4096, 2048, 1024, 512) if room >= m), 256)


def nic_ibv_device(nic: TwinNic) -> ibv_devinfo.IbvDevice:
    state = f"PORT_{nic.port_state}"
    guid = eui64(nic)
    port = ibv_devinfo.IbvPort(
        port=1,
        state=state if state in ibv_devinfo.PORT_STATES else "PORT_DOWN",
        max_mtu=4096,
        active_mtu=nic.roce_mtu if nic.roce_mtu is not None else active_mtu(nic.mtu),
        sm_lid=0,
        port_lid=0,
        port_lmc=0,
        link_layer="Ethernet",
    )
    return ibv_devinfo.IbvDevice(
        hca_id=nic.rdma_dev,
        transport="InfiniBand",
        fw_ver=FW_VER,
        node_guid=guid,
        sys_image_guid=guid,
        vendor_id="0x02c9",
        vendor_part_id=VENDOR_PART_ID,
        hw_ver="0x0",
        board_id=BOARD_ID,
        phys_port_cnt=1,
        ports=(port,),
    )


EOS_MODEL = "DCS-7060X6-64PE"
EOS_VERSION = "4.32.2F"
EOS_INTERNAL_VERSION = "4.32.2F-38195967.4322F"
SYSTEM_DESCR = {
    "sonic": "SONiC Software Version: SONiC.202405 - HwSku: ACS-SN5600 - Distribution: Debian 12",
    "eos": f"Arista Networks EOS version {EOS_VERSION} running on an Arista {EOS_MODEL}",
    "nvue": "Cumulus Linux version 5.16.0 running on Nvidia SN5600",
}
HOST_DESCR = "Ubuntu 22.04.4 LTS Linux 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64"
