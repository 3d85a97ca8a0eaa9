"""A twin host's PCIe and GPU views: ``cmd/lspci-vvv.txt``, ``cmd/nvidia-smi-q.xml``, ``cmd/rdma-statistic.txt``.

The PCIe layout is the one :mod:`unifab.twin.host_files` gives the NCCL topology: PCIe switch *i* at bus
``B = SWITCH_BUSES[i]`` has two downstream ports on bus ``B+1`` (device 00 to the NIC on bus ``B+2``, device 01 to the
GPU on bus ``B+3``); a GPU the ``affinity`` scenario moved off its NIC's switch hangs below a downstream port of a
switch of its own instead (:func:`own_switch_bus`). ``lspci-vvv.txt`` holds the 32 devices an ``lspci -vvv -s``
selection would print (the GPUs, the NICs and the downstream ports above them, ACS off as on a GPUDirect-ready
host) in the lines :func:`unifab.parse.host.lspci.dump` writes, not the whole PCI tree: that is all the reader
uses, and it keeps the file near 16 kB per host. Every link trains at its capability
(Gen5 x16). ``nvidia-smi-q.xml`` describes the 8 H100 SXM5 GPUs (UUIDs as in ``cmd/dmesg.txt``), and
``rdma-statistic.txt`` the idle counters of each RDMA device.

Each text is rendered once per NIC kind with placeholder serials and UUIDs, which are then replaced per host,
so the twin stays quick at 100,000 GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from unifab import layout
from unifab.parse.host import lspci, nvidia_smi_q, rdma_statistic
from unifab.twin import cluster as c
from unifab.twin.cluster import TwinNic
from unifab.twin.files import write_text
from unifab.twin.hardware import SWITCH_BUSES

__all__ = [
    "ACS_OFF",
    "ACS_REDIRECT",
    "BNXT_RDMA_COUNTERS",
    "CUDA_VERSION",
    "GPU_BOARD_PART",
    "GPU_DRIVER",
    "GPU_PRODUCT",
    "GPU_VBIOS",
    "MLX5_RDMA_COUNTERS",
    "NIC_KINDS",
    "PCIE_GEN5",
    "SMI_TIMESTAMP",
    "RailPci",
    "gpu_bdf",
    "gpu_serial",
    "gpu_uuid",
    "host_lspci",
    "host_nvidia_smi",
    "host_rdma_statistic",
    "nic_bdf",
    "nic_serial",
    "own_switch_bus",
    "write_host_pci",
]

GPU_PRODUCT = "NVIDIA H100 80GB HBM3"
GPU_VBIOS = "96.00.89.00.01"
GPU_BOARD_PART = "692-2G520-0200-000"
GPU_DRIVER = "535.161.08"
CUDA_VERSION = "12.2"
SMI_TIMESTAMP = "Mon Nov 30 06:00:00 2026"
PCIE_GEN5 = lspci.Link(32.0, 16)
ACS_OFF = lspci.AcsBits(False, False, False, False, False, False, False)
# what a BIOS with "PCIe ACS" enabled leaves on a switch's downstream ports (as the real capture's 82:00.0 shows)
ACS_REDIRECT = lspci.AcsBits(True, False, True, True, True, False, False)
_SN = "@@SN{}@@"  # placeholder of NIC i's VPD serial number
_UUID = "@@UUID{}@@"  # placeholder of GPU i's UUID
_GPU_SN = "@@GSN{}@@"  # placeholder of GPU i's board serial


@dataclass(frozen=True, slots=True)
class _NicKind:
    """How lspci names one kind of NIC, and the RDMA counters ``rdma statistic show`` lists for it."""

    description: str
    subsystem: str
    driver: str
    part: str
    counters: tuple[str, ...]


# mlx5 counters in the order of the real capture (samples/host/rdma_statistic_optional_counters_rocep8s0f0.txt)
MLX5_RDMA_COUNTERS = (
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
)
# bnxt_re hw stats (drivers/infiniband/hw/bnxt_re/hw_counters.c, the generic and error counters)
BNXT_RDMA_COUNTERS = (
    "active_pds",
    "active_ahs",
    "active_qps",
    "active_rc_qps",
    "active_ud_qps",
    "active_srqs",
    "active_cqs",
    "active_mrs",
    "active_mws",
    "rx_pkts",
    "rx_bytes",
    "tx_pkts",
    "tx_bytes",
    "recoverable_errors",
    "tx_roce_errors",
    "tx_roce_discards",
    "rx_roce_errors",
    "rx_roce_discards",
    "to_retransmits",
    "seq_err_naks_rcvd",
    "max_retry_exceeded",
    "rnr_naks_rcvd",
    "missing_resp",
    "unrecoverable_err",
    "bad_resp_err",
    "local_qp_op_err",
    "local_protection_err",
    "mem_mgmt_err",
    "remote_invalid_req_err",
    "remote_access_err",
    "remote_op_err",
    "dup_req",
    "res_exceed_max",
)
NIC_KINDS = {
    "mlx5": _NicKind(
        "Mellanox Technologies MT2910 Family [ConnectX-7]",
        "Mellanox Technologies MT2910 Family [ConnectX-7]",
        "mlx5_core",
        "MCX75310AAS-NEAT",
        MLX5_RDMA_COUNTERS,
    ),
    "bnxt": _NicKind(
        "Broadcom Inc. and subsidiaries BCM57608 10Gb/25Gb/50Gb/100Gb/200Gb/400Gb Ethernet",
        "Broadcom Inc. and subsidiaries BCM57608 1x400G QSFP112 PCIe Ethernet NIC",
        "bnxt_en",
        "BCM957608-P1400GDF00",
        BNXT_RDMA_COUNTERS,
    ),
}


@dataclass(frozen=True, slots=True)
class RailPci:
    """What one rail's PCIe switch trained and enforces: the NIC's and the GPU's lanes, ACS redirect on its ports."""

    nic_width: int = 16
    gpu_width: int = 16
    acs_redirect: bool = False


CLEAN_RAIL = RailPci()


def _buses() -> tuple[int, ...]:

    return SWITCH_BUSES


def _bdf(bus: int, dev: int = 0) -> str:
    return f"0000:{bus:02x}:{dev:02x}.0"


def nic_bdf(rail: int) -> str:
    """PCI address of NIC ``rail`` (the NCCL topology's)."""
    return _bdf(_buses()[rail] + 2)


def gpu_bdf(index: int) -> str:
    """PCI address of GPU ``index`` (the NCCL topology's and the kernel log's)."""
    return _bdf(_buses()[index] + 3)


def nic_serial(nic: TwinNic) -> str:
    """A unique adapter serial (VPD ``[SN]``) per (host, rail)."""
    prefix = "MT2412X" if nic.vendor == "mlx5" else "P1400G24"
    return f"{prefix}{nic.host_index * c.RAILS + nic.rail:06d}"


def gpu_uuid(host_index: int, gpu: int) -> str:
    """A stable, unique GPU UUID per (host, GPU index), in nvidia-smi's ``GPU-8-4-4-4-12`` hex form."""
    return f"GPU-{host_index:08x}-{gpu:04x}-4e00-8a00-{host_index * c.GPUS_PER_HOST + gpu:012x}"


def gpu_serial(host_index: int, gpu: int) -> str:
    """A unique 13-digit board serial per (host, GPU)."""
    return f"165402{host_index * c.GPUS_PER_HOST + gpu:07d}"


def _bridge(
    bus: int, dev: int, numa: int, secondary: int | None = None, width: int = 16, acs: bool = False
) -> lspci.PciDevice:
    """A PEX890xx downstream port at ``bus:dev`` (its link trained at ``width`` lanes, ACS redirect on when ``acs``);
    its secondary bus is ``bus + 1 + dev`` unless given."""
    below = bus + 1 + dev if secondary is None else secondary
    return lspci.PciDevice(
        bdf=_bdf(bus, dev),
        class_name="PCI bridge",
        class_id=None,
        description="Broadcom / LSI PEX890xx PCIe Gen 5 Switch",
        vendor="Broadcom / LSI",
        device="PEX890xx PCIe Gen 5 Switch",
        vendor_id=None,
        device_id=None,
        revision="b0",
        prog_if="00",
        numa_node=numa,
        kernel_driver="pcieport",
        pcie_port_type="Downstream Port",
        link_cap=PCIE_GEN5,
        link_status=lspci.Link(PCIE_GEN5.speed_gts, width),
        downgraded=width < PCIE_GEN5.width,
        dl_active=True,
        bus=lspci.BusNumbers(bus, below, below),
        # ACSCtl, what the reader uses (ACSCap is left out, like the lines lspci prints beside it)
        acs=ACS_REDIRECT if acs else ACS_OFF,
    )


def _endpoint(bdf: str, parent: str, numa: int, kind: str, rail: int, width: int = 16) -> lspci.PciDevice:
    gpu = kind == "gpu"
    nic = NIC_KINDS.get(kind)
    description = "NVIDIA Corporation Device 2330" if nic is None else nic.description
    vendor, device = lspci.split_name(description, None)
    return lspci.PciDevice(
        bdf=bdf,
        class_name="3D controller" if gpu else "Ethernet controller",
        class_id=None,
        description=description,
        vendor=vendor,
        device=device,
        vendor_id=None,
        device_id=None,
        revision="a1" if gpu else ("11" if kind == "bnxt" else None),
        prog_if=None,
        subsystem="NVIDIA Corporation Device 16c1" if nic is None else nic.subsystem,
        numa_node=numa,
        kernel_driver="nvidia" if nic is None else nic.driver,
        kernel_modules=("nvidiafb", "nouveau", "nvidia_drm", "nvidia") if nic is None else (nic.driver,),
        pcie_port_type="Endpoint",
        link_cap=PCIE_GEN5,
        link_status=lspci.Link(PCIE_GEN5.speed_gts, width),
        downgraded=width < PCIE_GEN5.width,
        parent=parent,
        part_number=None if nic is None else nic.part,
        serial_number=None if nic is None else _SN.format(rail),
    )


def own_switch_bus(index: int) -> int:
    """Bus of the PCIe switch GPU ``index`` sits on when it is off its NIC's switch (the ``affinity`` scenario),
    as ``SWITCH_BUSES[i]`` is the NIC's switch: the NCCL topology names the switch ``<bus>:00.0`` and lspci shows
    the GPU's downstream port on the bus after it, the switch's internal bus."""
    return _buses()[index] + 4


def host_lspci(vendor: str, off_switch: tuple[int, ...] = (), rails: tuple[RailPci, ...] = ()) -> lspci.Lspci:
    """The ``lspci -vvv`` record of a host whose NICs are ``vendor`` (serials as placeholders), in bus order.

    A GPU in ``off_switch`` keeps its address (bus ``B+3``) but hangs below a downstream port of its own PCIe
    switch (:func:`own_switch_bus`), not below its NIC's switch, as nvidia-smi topo and the NCCL topology show it.
    ``rails[i]`` says how rail ``i``'s links trained and whether its switch ports redirect peer traffic (ACS); a
    downgraded device and the downstream port above it show the same link, as both ends of one link do.
    """
    devices = []
    per_node = c.GPUS_PER_HOST // 2
    for i, bus in enumerate(_buses()):
        numa = i // per_node
        rail = rails[i] if i < len(rails) else CLEAN_RAIL
        down_nic = _bridge(bus + 1, 0, numa, width=rail.nic_width, acs=rail.acs_redirect)
        nic = _endpoint(nic_bdf(i), down_nic.bdf, numa, vendor, i, rail.nic_width)
        gpu_port = own_switch_bus(i) + 1 if i in off_switch else bus + 1
        down_gpu = _bridge(
            gpu_port,
            0 if i in off_switch else 1,
            numa,
            secondary=bus + 3 if i in off_switch else None,
            width=rail.gpu_width,
            acs=rail.acs_redirect,
        )
        gpu = _endpoint(gpu_bdf(i), down_gpu.bdf, numa, "gpu", i, rail.gpu_width)
        if i in off_switch:
            devices += [down_nic, nic, gpu, down_gpu]
            continue
        devices += [down_nic, down_gpu, nic, gpu]
    return lspci.Lspci(tuple(devices))


def host_nvidia_smi() -> nvidia_smi_q.NvidiaSmiQ:
    """The ``nvidia-smi -q -x`` record of a host's 8 GPUs: identity, PCIe link, driver and CUDA (UUIDs and serials
    as placeholders)."""
    unread = nvidia_smi_q.EccCounts(None, None)
    gpus = tuple(
        nvidia_smi_q.Gpu(
            pci_bus_id=gpu_bdf(i),
            product_name=GPU_PRODUCT,
            uuid=_UUID.format(i),
            serial=_GPU_SN.format(i),
            vbios_version=GPU_VBIOS,
            minor_number=i,
            gpu_module_id=i + 1,
            board_part_number=GPU_BOARD_PART,
            pcie_gen_current=5,
            pcie_gen_max=5,
            pcie_width_current=16,
            pcie_width_max=16,
            pcie_replay_count=None,  # health readings are not part of this view: left out (None)
            performance_state=None,
            temperature_c=None,
            memory_temperature_c=None,
            power_draw_w=None,
            power_limit_w=None,
            ecc_mode=None,
            ecc_volatile=unread,
            ecc_aggregate=unread,
            retired_pages_sbe=None,
            retired_pages_dbe=None,
            retired_pages_pending=None,
            remapped_rows=None,
            mig_mode="Disabled",
            clocks_event_reasons=(),
            reset_required=None,
            drain_and_reset_recommended=None,
            fabric_state=None,
            fabric_status=None,
        )
        for i in range(c.GPUS_PER_HOST)
    )
    return nvidia_smi_q.NvidiaSmiQ(SMI_TIMESTAMP, GPU_DRIVER, CUDA_VERSION, len(gpus), gpus)


def host_rdma_statistic(nics: tuple[tuple[str, str], ...]) -> rdma_statistic.RdmaStatistic:
    """``rdma statistic show`` of idle RDMA devices ``(name, vendor)``: every counter 0, no optional set."""
    return rdma_statistic.RdmaStatistic(
        tuple(rdma_statistic.RdmaStatLink(dev, 1, dict.fromkeys(NIC_KINDS[v].counters, 0), ()) for dev, v in nics)
    )


@cache
def _lspci_template(vendor: str, off_switch: tuple[int, ...], rails: tuple[RailPci, ...]) -> str:
    return lspci.dump(host_lspci(vendor, off_switch, rails))


@cache
def _smi_template() -> str:
    return nvidia_smi_q.dump(host_nvidia_smi())


@cache
def _rdma_text(nics: tuple[tuple[str, str], ...]) -> str:
    return rdma_statistic.dump(host_rdma_statistic(nics))


def _fill(template: str, values: dict[str, str]) -> str:
    for token, value in values.items():
        template = template.replace(token, value)
    return template


def write_host_pci(host_root: Path, nics: list[TwinNic], off_switch: tuple[int, ...] = ()) -> None:
    """Write ``cmd/lspci-vvv.txt``, ``cmd/nvidia-smi-q.xml`` and ``cmd/rdma-statistic.txt`` of one host whose
    GPUs ``off_switch`` sit off their NIC's PCIe switch."""
    if not nics:
        return
    host = nics[0].host_index
    serials = {_SN.format(n.rail): nic_serial(n) for n in nics}
    rails = tuple(RailPci(n.pcie_width, n.gpu_pcie_width, n.acs_redirect) for n in nics)
    if all(r == CLEAN_RAIL for r in rails):
        rails = ()  # one template for every clean host
    write_text(host_root / layout.LSPCI, _fill(_lspci_template(nics[0].vendor, off_switch, rails), serials))
    gpus = {_UUID.format(i): gpu_uuid(host, i) for i in range(c.GPUS_PER_HOST)}
    gpus |= {_GPU_SN.format(i): gpu_serial(host, i) for i in range(c.GPUS_PER_HOST)}
    write_text(host_root / layout.NVIDIA_SMI_Q, _fill(_smi_template(), gpus))
    write_text(host_root / layout.RDMA_STATISTIC, _rdma_text(tuple((n.rdma_dev, n.vendor) for n in nics)))
