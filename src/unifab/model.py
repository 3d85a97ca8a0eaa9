"""Typed records of one fabric snapshot: hosts, NICs, switches, ports, links and findings.

Parsers produce format-specific records; :mod:`unifab.collect` turns them into these vendor-neutral
ones, and checks read only these. Entity ids follow the design's canonical strings
(``nic:gpu017:mlx5_3``, ``port:leaf03:Ethernet12``, ``link:gpu017:eth3--leaf03:Ethernet12``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from unifab.profile import QosProfile

__all__ = [
    "FABRIC_KINDS",
    "Endpoint",
    "EtsClass",
    "Fabric",
    "Finding",
    "Fix",
    "Gid",
    "Gpu",
    "Headroom",
    "Host",
    "IbFabric",
    "IbPort",
    "IbSm",
    "Job",
    "Link",
    "Nic",
    "NicQos",
    "PcieLink",
    "PfcWatchdog",
    "Port",
    "PortQos",
    "QueueQos",
    "Severity",
    "Switch",
    "SwitchBuffers",
    "Transceiver",
    "TransceiverLane",
    "VersionRule",
    "guid_text",
    "host_id",
    "link_id",
    "nic_id",
    "port_id",
    "switch_id",
]


class Severity(enum.Enum):
    """Finding severity; ``rank`` orders them for ``--fail-on`` (higher is worse)."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.lower())
        except ValueError:
            choices = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown severity {text!r}; expected one of {choices}") from None


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2, Severity.CRITICAL: 3}


def host_id(host: str) -> str:
    return f"host:{host}"


def nic_id(host: str, rdma_dev: str) -> str:
    return f"nic:{host}:{rdma_dev}"


def switch_id(switch: str) -> str:
    return f"switch:{switch}"


def port_id(switch: str, port: str) -> str:
    return f"port:{switch}:{port}"


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One end of a cable: a host netdev or a switch port."""

    node: str
    port: str

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


def link_id(a: Endpoint, b: Endpoint) -> str:
    """``link:<end>--<end>`` with the two ends in sorted order, so both directions name one link."""
    x, y = f"{a.node}:{a.port}", f"{b.node}:{b.port}"  # str(end), without the call (checks ask for ids often)
    return f"link:{x}--{y}" if x <= y else f"link:{y}--{x}"


@dataclass(frozen=True, slots=True)
class EtsClass:
    """One traffic class of the NIC's transmit scheduler."""

    tc: int
    tsa: str  # "ets" | "strict" | "vendor"
    bw_percent: int | None


@dataclass(frozen=True, slots=True)
class NicQos:
    """What a NIC does with RoCE traffic: classification, PFC, ECN/DCQCN and the TOS override."""

    trust: str | None  # "dscp" | "pcp" | "none"
    dscp2prio: dict[int, int]
    pfc_enabled: frozenset[int]
    prio_tc: dict[int, int]
    cable_len_m: int | None
    ecn_np_enabled: frozenset[int] | None  # notification point (CNP generation) per priority
    ecn_rp_enabled: frozenset[int] | None  # reaction point (rate limiting) per priority
    cnp_dscp: int | None
    cnp_prio: int | None
    traffic_class: int | None  # global TOS override from tc/<port>/traffic_class, None when unset
    ets: tuple[EtsClass, ...] = ()
    rx_buffer_sizes: tuple[int, ...] | None = None  # bytes per receive buffer
    prio2buffer: tuple[int, ...] | None = None  # receive buffer of each priority
    roce_tos: int | None = None  # rdma_cm default_roce_tos
    roce_mode: str | None = None  # rdma_cm default_roce_mode: "RoCE v2" | "IB/RoCE v1"
    # the driver stack the reader found the QoS in, which decides the commands that change it: "mlnx_ofed"
    # (ecn/ sysfs tree), "mlx5_upstream" (debugfs cc_params, no ecn/ tree), "bnxt" (niccli + bnxt_re configfs)
    source: str | None = None
    # who sizes the receive buffers (mlx5 PFCC buf_ownership / manual_buffer): "driver" (software-owned, after
    # a `mlnx_qos --buffer_size` / `dcb buffer`), "firmware" (the boot default); None when not collected
    buffer_owner: str | None = None
    # who runs DCBX (mlnx_qos "DCBX mode:"): "os" (lldpad/the OS settings stand) or "fw" (the firmware negotiates
    # with the switch, whose TLVs override OS-side mlnx_qos settings); None when not collected
    dcbx: str | None = None


@dataclass(frozen=True, slots=True)
class Gid:
    """One non-zero GID of an RDMA port (``show_gids``)."""

    index: int
    gid: str  # 8 groups of 4 hex digits, as printed
    version: str | None  # "v1" (IB/RoCE v1) | "v2" (RoCE v2); None when the kernel does not say
    ipv4: str | None  # the IPv4 address of an IPv4-mapped GID
    netdev: str | None  # None on InfiniBand ports
    port: int = 1


@dataclass(frozen=True, slots=True)
class TransceiverLane:
    lane: int  # 1-based channel
    rx_power_dbm: float | None  # None for a dark lane printed as -inf dBm
    tx_power_dbm: float | None
    bias_ma: float | None
    rx_power_mw: float | None = None
    tx_power_mw: float | None = None


@dataclass(frozen=True, slots=True)
class Transceiver:
    """A pluggable module's identity and diagnostics (``ethtool -m`` on hosts, SONiC STATE_DB ``TRANSCEIVER_INFO`` on
    switches)."""

    identifier: str | None  # "QSFP28", "OSFP 8X Pluggable Transceiver"
    vendor: str | None
    part_number: str | None
    serial_number: str | None
    revision: str | None
    temperature_c: float | None
    voltage_v: float | None
    lanes: tuple[TransceiverLane, ...] = ()
    module_state: str | None = None  # CMIS: "ModuleReady", ...
    firmware: str | None = None  # a CMIS module's running (active) firmware, where the reader knows it
    inactive_firmware: str | None = None  # the image in its other bank


@dataclass(frozen=True, slots=True)
class PcieLink:
    """A PCIe function's link: what it runs at and what it could (``lspci -vvv`` or ``nvidia-smi -q``)."""

    speed_gts: float | None  # current, GT/s
    width: int | None  # current lanes
    max_speed_gts: float | None = None
    max_width: int | None = None
    downgraded: bool | None = None  # as lspci reports it; None when the source does not say


FABRIC_KINDS = ("roce", "ib")  # what a NIC, switch port, switch or link carries: RoCE Ethernet or InfiniBand


def guid_text(guid: int) -> str:
    """A GUID as the IB tools print it: ``0x`` and 16 hex digits."""
    return f"0x{guid:016x}"


@dataclass(frozen=True, slots=True)
class IbPort:
    """What an InfiniBand port (an HCA port or a switch port) reports: not RoCE-shaped.

    GUIDs are ``0x`` + 16 hex digits (:func:`guid_text`). A switch has one LID and one port GUID (its management
    port 0) shared by all its ports; an HCA port has its own. ``width`` is ``1X``/``2X``/``4X``/``8X``/``12X``,
    ``speed`` the IBTA name (``SDR`` .. ``NDR``, ``XDR``); ``state`` the logical PortState (``Down``,
    ``Initialize``, ``Armed``, ``Active``) and ``phys_state`` the physical one (``LinkUp``, ``Polling``,
    ``Disabled``, ...). ``mtu`` is the active (neighbour) MTU in bytes. ``counters`` are the PMA counters by the
    names perfquery prints, ``saturated`` those of them that sat at their maximum (the true value is larger).
    ``sources`` names the files each value came from (``ib/ibnetdiscover.txt``, ``ib/perfquery.txt``, ...).
    """

    node_guid: str | None = None
    port_guid: str | None = None
    lid: int | None = None
    port_num: int | None = None  # the port number on its node (an HCA's is 1)
    width: str | None = None
    speed: str | None = None
    state: str | None = None
    phys_state: str | None = None
    mtu: int | None = None
    sm_lid: int | None = None  # the SM LID the port was told (ibstat); 0: no SM reached it
    description: str | None = None  # the node's NodeDescription
    counters: dict[str, int] = field(default_factory=dict)
    saturated: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()

    @property
    def lanes(self) -> int | None:
        w = (self.width or "").upper().removesuffix("X")
        return int(w) if w.isdigit() else None


@dataclass(frozen=True, slots=True)
class IbSm:
    """One subnet manager as ``sminfo`` reports it: its port GUID and LID, priority (0..15) and state."""

    guid: str
    lid: int
    priority: int
    state: str  # "master" | "standby" | "discovering" | "notactive"
    activity_count: int
    source: str  # the bundle file it was read from


@dataclass(frozen=True, slots=True)
class IbFabric:
    """What holds for a whole InfiniBand subnet: its subnet managers and the intended SL of its jobs.

    ``sms`` empty with ``sm_collected`` True means sminfo was collected and found no SM (no answer).
    """

    sms: tuple[IbSm, ...] = ()
    sm_collected: bool = False
    intent_sl: int | None = None  # fabric.yaml qos.nccl.sl: the SL jobs must use (None: the jobs' majority)
    files: tuple[str, ...] = ()  # the ib/ files read
    # plan/ibnetdiscover.txt: link id -> (width, speed) the plan gives the cable ("4X", "NDR")
    planned_rates: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Nic:
    """One RDMA NIC port and its netdev.

    ``counters`` merges every counter source under a prefix naming it: ``ethtool:<name>`` (``ethtool -S``,
    old mlx5 names renamed to current ones), ``rdma:<name>`` (``ports/1/hw_counters``, completed by
    ``rdma statistic``), ``ib:<name>`` (``ports/1/counters``, the IB PMA counters).
    """

    host: str
    netdev: str
    rdma_dev: str | None
    mtu: int | None
    qos: NicQos | None
    pci_address: str | None = None  # "0000:1a:00.0"
    numa_node: int | None = None
    fw_ver: str | None = None
    vendor_part_id: int | None = None  # 4129 = ConnectX-7, ...
    board_id: str | None = None  # "MT_0000000838"
    link_layer: str | None = None  # "Ethernet" (RoCE) | "InfiniBand"
    port_state: str | None = None  # "ACTIVE", "DOWN", ... (port 1)
    active_mtu: int | None = None  # RDMA path MTU in bytes (256..4096), from ibv_devinfo
    speed_mbps: int | None = None
    gids: tuple[Gid, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    transceiver: Transceiver | None = None
    driver: str | None = None  # kernel driver: "mlx5_core", "bnxt_en"
    driver_version: str | None = None  # /sys/module/<driver>/version (MLNX_OFED, vendor drivers)
    pcie: PcieLink | None = None
    global_pause: tuple[bool, bool] | None = None  # 802.3x (rx, tx) from ethtool -a; None when not collected
    max_mtu: int | None = None  # the netdev's max_mtu (`ip -d link` maxmtu); None when not collected
    ib: IbPort | None = None  # an InfiniBand HCA port's GUIDs, LID, width/speed, states and PMA counters
    # `ip -d link` of the netdev: the operstate word (UP, DOWN, LOWERLAYERDOWN, UNKNOWN...) and carrier (LOWER_UP;
    # False on NO-CARRIER); None when not collected or the output does not say
    operstate: str | None = None
    carrier: bool | None = None

    @property
    def id(self) -> str:
        return nic_id(self.host, self.rdma_dev or self.netdev)

    @property
    def fabric(self) -> str:
        """``ib`` for an InfiniBand HCA port, ``roce`` otherwise (see :data:`FABRIC_KINDS`)."""
        return "ib" if self.ib is not None or (self.link_layer or "").lower() == "infiniband" else "roce"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.netdev)


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU: identity, PCIe placement and the NIC NCCL would pair it with."""

    host: str
    index: int  # nvidia-smi index (GPU<i> of ``nvidia-smi topo -m``)
    pci_bus_id: str | None = None  # "0000:18:00.0"
    name: str | None = None  # "NVIDIA H100 80GB HBM3"
    uuid: str | None = None
    numa_node: int | None = None
    nic: str | None = None  # RDMA device of the closest NIC ("mlx5_0")
    nic_relation: str | None = None  # PCIe path to it: "PIX" | "PXB" | "PHB" | "NODE" | "SYS"
    vbios_version: str | None = None
    serial: str | None = None
    pcie: PcieLink | None = None
    xids: tuple[int, ...] = ()  # Xid codes in the kernel log, in order

    @property
    def id(self) -> str:
        return f"gpu:{self.host}:{self.index}"


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    nics: dict[str, Nic]  # by netdev
    gpus: dict[int, Gpu] = field(default_factory=dict)  # by index
    kernel: str | None = None  # uname -r
    gpu_driver: str | None = None  # NVIDIA driver version
    cuda_version: str | None = None
    acs_enabled_bridges: tuple[str, ...] | None = None  # PCI bridges with ACS on (lspci); None: not collected
    # ACSCtl bits that redirect or block peer-to-peer requests (ReqRedir, CmpltRedir, UpstreamFwd, EgressCtrl), by
    # bridge BDF, for bridges with any of them on; None: lspci not collected
    acs_redirect: dict[str, tuple[str, ...]] | None = None
    pci_parents: dict[str, str] = field(default_factory=dict)  # PCI function BDF -> its upstream bridge (lspci)
    kernel_modules: frozenset[str] | None = None  # loaded modules (lsmod, /proc/modules); None: not collected
    # (log, NCCL release) its processes printed in telemetry/nccl/<log> ("NCCL version 2.21.5+cuda12.4")
    nccl_versions: tuple[tuple[str, str], ...] = ()
    nvlink_domain: str | None = None  # "<ClusterUUID>.<CliqueId>" its GPUs report (nvidia-smi -q Fabric; GB200-class)

    @property
    def id(self) -> str:
        return host_id(self.name)


@dataclass(frozen=True, slots=True)
class QueueQos:
    """One egress queue: ECN marking thresholds (bytes) and its scheduler."""

    index: int
    ecn_enabled: bool
    wred_profile: str | None
    scheduler_type: str | None  # "STRICT" | "DWRR" | "WRR"
    ecn_min_bytes: int | None = None
    ecn_max_bytes: int | None = None
    ecn_max_probability: int | None = None  # percent
    weight: int | None = None
    scheduler: str | None = None  # the switch's name for the scheduler profile
    ecn_configured: str | None = None  # thresholds as configured when their unit has no settled byte size
    # SAI's ECN mark mode (SONiC WRED_PROFILE ecn): "ecn_none" | "ecn_green" | "ecn_yellow" | "ecn_red" |
    # "ecn_green_yellow" | "ecn_green_red" | "ecn_yellow_red" | "ecn_all"; None when not collected or no profile
    ecn_mode: str | None = None
    wred_green_enable: bool | None = None  # WRED drops green (RoCE) packets; None when not configured/collected


@dataclass(frozen=True, slots=True)
class Headroom:
    """Ingress priority-group buffer of a lossless PG, in bytes (None where the model computes it)."""

    profile: str | None
    size: int | None
    xon: int | None
    xoff: int | None
    dynamic: bool = False  # headroom computed by the switch (SONiC dynamic model, profile NULL)


@dataclass(frozen=True, slots=True)
class PfcWatchdog:
    action: str | None  # "drop" | "forward" | "alert"
    detection_ms: int | None
    restoration_ms: int | None


@dataclass(frozen=True, slots=True)
class PortQos:
    """The switch port's ingress classification, PFC and egress queues."""

    dscp_map_name: str | None
    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc_enabled: frozenset[int]
    queues: dict[int, QueueQos]
    cable_len_m: int | None
    trust: str | None = None  # "dscp" | "pcp" | None when the port does not classify
    headroom: dict[int, Headroom] = field(default_factory=dict)  # by PG
    pfcwd: PfcWatchdog | None = None
    pfcwd_priorities: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Port:
    switch: str
    name: str
    mtu: int | None
    speed_mbps: int | None
    admin_status: str | None
    qos: PortQos | None
    fec: str | None = None
    description: str | None = None
    ib: IbPort | None = None  # an InfiniBand switch port's GUIDs, LID, width/speed, states and PMA counters
    transceiver: Transceiver | None = None  # the pluggable module in the port (SONiC STATE_DB TRANSCEIVER_INFO)

    @property
    def id(self) -> str:
        return port_id(self.switch, self.name)

    @property
    def fabric(self) -> str:
        """``ib`` for an InfiniBand switch port, ``roce`` otherwise."""
        return "ib" if self.ib is not None else "roce"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.switch, self.name)


@dataclass(frozen=True, slots=True)
class SwitchBuffers:
    """A SONiC switch's buffer model and the switch-wide inputs of its headroom calculation (None: not collected)."""

    model: str  # DEVICE_METADATA|localhost buffer_model: "traditional" | "dynamic"
    lossless_mtu: int | None = None  # LOSSLESS_TRAFFIC_PATTERN mtu (dynamic model only)
    small_packet_percentage: int | None = None  # LOSSLESS_TRAFFIC_PATTERN small_packet_percentage
    over_subscribe_ratio: int | None = None  # DEFAULT_LOSSLESS_BUFFER_PARAMETER
    lossless_pool_size: int | None = None  # BUFFER_POOL|ingress_lossless_pool size, bytes
    lossless_pool_xoff: int | None = None  # its xoff: the shared headroom pool, bytes
    model_source: str = "DEVICE_METADATA|localhost buffer_model"  # where ``model`` came from


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    os: str  # "sonic" | "eos" | "nvue"
    config_file: str  # bundle-relative path of the config the ports came from
    ports: dict[str, Port]
    hwsku: str | None = None
    platform: str | None = None
    version: str | None = None
    buffers: SwitchBuffers | None = None  # SONiC buffer model and headroom inputs
    # SONiC's switch-wide PFC watchdog settings: PFC_WD|GLOBAL POLL_INTERVAL (ms), and whether DEVICE_METADATA|
    # localhost default_pfcwd_status is "enable" (pfcwd start_default writes the PFC_WD rows); None: not collected
    pfcwd_poll_ms: int | None = None
    pfcwd_default: bool | None = None
    guid: str | None = None  # an InfiniBand switch's node GUID
    lid: int | None = None  # an InfiniBand switch's LID (its port 0)

    @property
    def fabric(self) -> str:
        """``ib`` for an InfiniBand switch (platform ``ib``), ``roce`` otherwise."""
        return "ib" if self.os == "ib" else "roce"


@dataclass(frozen=True, slots=True)
class Link:
    """A cable between two endpoints, as discovered (LLDP) and/or planned."""

    a: Endpoint
    b: Endpoint
    sources: frozenset[str]  # {"lldp", "plan"}
    cable_m: float | None = None

    @property
    def id(self) -> str:
        return link_id(self.a, self.b)


@dataclass(frozen=True, slots=True)
class Fix:
    """Commands or config that would correct one device."""

    device: str
    commands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    severity: Severity
    subject: dict[str, str]
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: tuple[Fix, ...] = ()
    impact: dict[str, Any] = field(default_factory=dict)
    entities: tuple[str, ...] = ()  # canonical ids this finding is about (links, ports, NICs)

    def sort_key(self) -> tuple[int, str, str]:
        return (-self.severity.rank, self.check, self.entities[0] if self.entities else self.message)

    @property
    def key(self) -> str:
        """Stable identity across snapshots: the check id and the subject (what a store tracks first/last seen by).

        The same problem on the same link, port or device has the same key in every snapshot, whatever its
        message or evidence say this time; two findings of one snapshot never share a key.
        """
        subject = ",".join(f"{k}={v}" for k, v in sorted(self.subject.items()))
        return f"{self.check}|{subject}"


@dataclass(frozen=True, slots=True)
class Job:
    """A running job and what the network needs to know of it: its hosts and the NCCL class it asks for."""

    id: str  # canonical: job:slurm:<id> | job:k8s:<namespace>/<name>
    name: str | None
    hosts: tuple[str, ...]
    nccl_ib_tc: int | None = None
    nccl_ib_sl: int | None = None
    nccl_ib_hca: str | None = None
    nccl_ib_gid_index: int | None = None  # NCCL_IB_GID_INDEX; None: NCCL selects the GID itself
    env_known: bool = False  # False: the scheduler did not say what environment the ranks run with
    tc_conflict: bool = False  # ranks of the job were seen with different NCCL_IB_TC values
    sl_conflict: bool = False  # ranks of the job were seen with different NCCL_IB_SL values


@dataclass(frozen=True, slots=True)
class VersionRule:
    """One group of the intent's fleet baseline (``fabric.yaml`` ``fleet.groups[i]``, docs: fleet baseline):
    the devices it selects and the versions it allows per field; :mod:`unifab.checks.fleet` matches and judges."""

    where: str  # "fabric.yaml:12: fleet.groups[0]", named in findings
    select: tuple[tuple[str, str], ...]  # (selector, pattern): kind, role, name, os, platform, nic_model, psid
    allowed: tuple[tuple[str, tuple[str, ...]], ...]  # (field, version patterns): nic_firmware, gpu_driver, ...


@dataclass(slots=True)
class Fabric:
    """One snapshot of a fabric, assembled from a bundle or from live collection."""

    hosts: dict[str, Host] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    input_findings: list[Finding] = field(default_factory=list)
    jobs: dict[str, Job] = field(default_factory=dict)
    # The fabric-wide QoS of the bundle's fabric.yaml; when set, checks take it as the baseline
    # instead of the devices' majority.
    qos_intent: QosProfile | None = None
    # The version baseline of the bundle's fabric.yaml (``fleet:``); empty: FLEET-* judge each group by its majority.
    fleet_baseline: tuple[VersionRule, ...] = ()
    ib: IbFabric | None = None  # the InfiniBand subnet's SMs and intent, when the bundle has ib/ files

    def nic_at(self, end: Endpoint) -> Nic | None:
        host = self.hosts.get(end.node)
        return host.nics.get(end.port) if host else None

    def port_at(self, end: Endpoint) -> Port | None:
        switch = self.switches.get(end.node)
        return switch.ports.get(end.port) if switch else None

    def end_fabric(self, end: Endpoint) -> str | None:
        """``ib`` or ``roce`` for a known NIC or switch port (an IB switch's unknown port too); ``None`` else."""
        nic = self.nic_at(end)
        if nic is not None:
            return nic.fabric
        switch = self.switches.get(end.node)
        if switch is None:
            return None
        port = switch.ports.get(end.port)
        return "ib" if switch.fabric == "ib" or (port is not None and port.fabric == "ib") else "roce"

    def link_fabric(self, link: Link) -> str:
        """The kind of fabric a cable belongs to: ``ib`` when either known end is InfiniBand, else ``roce``
        (one bundle can hold a RoCE backend and an IB network; a planned cable's kind comes from its ends)."""
        kinds = {self.end_fabric(link.a), self.end_fabric(link.b)}
        return "ib" if "ib" in kinds else "roce"
