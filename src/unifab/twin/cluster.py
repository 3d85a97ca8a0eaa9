"""The synthetic cluster's shape and per-device state, before it is written as device artifacts.

A rail-optimized RoCE cluster: 8 GPUs and 8 ConnectX NICs per host; hosts grouped in scalable units
(SU) of ``su_hosts``; one leaf per rail per SU (NIC *r* of every host in an SU cables to rail-*r*
leaf); every leaf has as many uplinks as downlinks, spread evenly over the spines. Leaves and spines
run SONiC, EOS or Cumulus (NVUE), each port named as its OS names it (:func:`port_name`), so every
writer (configs, LLDP on both ends, the plan, truth) follows. Scenarios mutate this state; the writer
renders it in the devices' real formats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from unifab.errors import UsageError
from unifab.platforms import platform

if TYPE_CHECKING:
    from unifab.twin.ib_cluster import IbNet

__all__ = [
    "CNP_DSCP",
    "CNP_PRIO",
    "DEFAULT_SU_HOSTS",
    "ECN_MAX_BYTES",
    "ECN_MIN_BYTES",
    "GPUS_PER_HOST",
    "HOST_CABLE_M",
    "HOST_MTU",
    "HOST_SPEED_MBPS",
    "JOB_HOSTS",
    "OSES",
    "PARTIAL_MARK_MODES",
    "QOS_MAP",
    "RAILS",
    "ROCE_DSCP",
    "ROCE_PRIO",
    "ROCE_TCLASS",
    "SPINES_PER_FABRIC",
    "SPINE_CABLE_M",
    "SWITCH_MTU",
    "Cluster",
    "TwinJob",
    "TwinNic",
    "TwinPort",
    "TwinSwitch",
    "build",
    "device_count",
    "job_env",
    "port_name",
    "switch_os_of",
]

GPUS_PER_HOST = 8
RAILS = 8
DEFAULT_SU_HOSTS = 32
SPINES_PER_FABRIC = 8

ROCE_DSCP = 26
ROCE_TCLASS = 106  # DSCP 26 << 2 | ECT(0)
ROCE_PRIO = 3
CNP_DSCP = 48
CNP_PRIO = 6
HOST_MTU = 9000
SWITCH_MTU = 9100
HOST_SPEED_MBPS = 400_000
HOST_CABLE_M = 3.0
SPINE_CABLE_M = 30.0
ECN_MIN_BYTES = 150_000  # NVIDIA's RoCE recommendation, reference host-nic-roce §5.1
ECN_MAX_BYTES = 1_500_000
QOS_MAP = "ROCE"
OSES = ("sonic", "eos", "nvue")  # switch OSes the twin renders; ``mixed`` cycles them by switch index


@dataclass(slots=True)
class TwinNic:
    host: str
    rail: int
    mtu: int = HOST_MTU
    pfc: set[int] = field(default_factory=lambda: {ROCE_PRIO})
    dscp2prio: dict[int, int] = field(default_factory=lambda: {d: d >> 3 for d in range(64)})
    np_enabled: set[int] = field(default_factory=lambda: set(range(8)))
    rp_enabled: set[int] = field(default_factory=lambda: set(range(8)))
    tclass: int | None = ROCE_TCLASS
    trust: str = "dscp"
    global_pause: bool = False  # 802.3x rx/tx pause (ethtool -A)
    cable_len_m: int = int(HOST_CABLE_M)
    speed_mbps: int = HOST_SPEED_MBPS
    port_state: str = "ACTIVE"  # RDMA port state (sysfs ports/1/state, ibv_devinfo)
    roce_tos: int = ROCE_TCLASS  # rdma_cm default_roce_tos
    roce_mode: str = "RoCE v2"  # rdma_cm default_roce_mode
    vendor: str = "mlx5"  # "mlx5" (ConnectX-7) | "bnxt" (Broadcom Thor2), see twin.nic_variants
    driver: str = "ofed"  # "ofed" (MLNX_OFED/DOCA-OFED) | "upstream" (in-tree mlx5) | "bnxt" (Broadcom)
    pcie_width: int = 16  # lanes the NIC's PCIe link trained at (capability x16)
    gpu_pcie_width: int = 16  # lanes of the GPU behind the same PCIe switch (GPU <rail>)
    acs_redirect: bool = False  # ACS P2P redirect on the downstream ports of this rail's PCIe switch
    peermem: bool = True  # nvidia_peermem loaded (a host fact: every NIC of the host carries the same)
    ipv4: bool = True  # the netdev has its RoCE IPv4 address (GIDs 2 and 3 exist)
    roce_mtu: int | None = None  # RoCE active MTU when it is not the one the netdev MTU gives
    dcbx: str = "os"  # mlnx_qos DCBX mode: "os" | "fw"
    roce_tc_bw: int | None = None  # ETS share of the RoCE TC when it is not hardware.ETS_BW's

    @property
    def netdev(self) -> str:
        return f"eth{self.rail}"

    @property
    def rdma_dev(self) -> str:
        return f"bnxt_re{self.rail}" if self.vendor == "bnxt" else f"mlx5_{self.rail}"

    @property
    def ofed_sysfs(self) -> bool:
        """MLNX_OFED's per-priority ``ecn/`` tree and ``traffic_class`` override exist (mlx5 on OFED only)."""
        return self.vendor == "mlx5" and self.driver == "ofed"

    @property
    def host_index(self) -> int:
        """0-based position of the host (names are ``gpu<1-based number>``)."""
        return int(self.host.removeprefix("gpu")) - 1

    @property
    def mac(self) -> str:
        index = self.host_index + 1
        return f"0c:42:a1:{(index >> 8) & 0xFF:02x}:{index & 0xFF:02x}:{self.rail:02x}"


@dataclass(slots=True)
class TwinPort:
    name: str
    peer_node: str
    peer_port: str
    speed_mbps: int = HOST_SPEED_MBPS
    mtu: int = SWITCH_MTU
    pfc: set[int] = field(default_factory=lambda: {ROCE_PRIO})
    roce_queue_ecn: bool = True
    cable_m: float = HOST_CABLE_M  # the real (planned) cable
    configured_cable_m: int | None = None  # CABLE_LENGTH when it differs from the real cable
    trusts_dscp: bool = True
    cnp_queue_strict: bool = True
    roce_queue_weight: int | None = None  # DWRR weight of the RoCE queue when it is not the intent's
    pfcwd: bool = True
    fec: str = "rs"
    headroom_short: bool = False  # lossless PG profile with a quarter of the xoff the cable needs


PARTIAL_MARK_MODES = ("ecn_yellow", "ecn_red", "ecn_yellow_red")


@dataclass(slots=True)
class TwinSwitch:
    name: str
    role: str  # "leaf" | "spine"
    index: int
    ports: dict[str, TwinPort] = field(default_factory=dict)
    dscp_to_tc: dict[int, int] = field(
        default_factory=lambda: dict.fromkeys(range(64), 0) | {ROCE_DSCP: 3, CNP_DSCP: 6}
    )
    ecn_min_bytes: int = ECN_MIN_BYTES
    ecn_max_bytes: int = ECN_MAX_BYTES
    os: str = "sonic"  # "sonic" | "eos" | "nvue": which configuration the writer renders
    # The colours the RoCE WRED profile ECN-marks (SAI ecn_mark_mode; SONiC WRED_PROFILE "ecn"): a clean twin marks
    # all; the ecn-colour scenario sets one of PARTIAL_MARK_MODES, which never mark green (RoCE) packets.
    ecn_mark_mode: str = "ecn_all"

    @property
    def mac(self) -> str:
        kind = 1 if self.role == "leaf" else 2
        return f"b8:ce:f6:{kind:02x}:{(self.index >> 8) & 0xFF:02x}:{self.index & 0xFF:02x}"


@dataclass(slots=True)
class TwinJob:
    """A running training job on whole hosts, and the NCCL environment its ranks run with."""

    job_id: int
    name: str
    hosts: list[str]
    env: dict[str, str]


JOB_HOSTS = 8  # hosts per twin job (64 GPUs)


def job_env() -> dict[str, str]:
    return {
        "NCCL_IB_TC": str(ROCE_TCLASS),
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_HCA": "=" + ",".join(f"mlx5_{r}:1" for r in range(RAILS)),
        "NCCL_SOCKET_IFNAME": "bond0",
    }


@dataclass(slots=True)
class Cluster:
    hosts: dict[str, list[TwinNic]]
    switches: dict[str, TwinSwitch]
    su_hosts: int
    jobs: list[TwinJob] = field(default_factory=list)
    # Real cabling where it differs from the plan (the ports' peer_node/peer_port): (node, port) -> the
    # (node, port) really cabled there, or None for no cable. Topology scenarios set both ends.
    actual: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)
    # GPUs seated on a PCIe switch without a NIC (host -> GPU indexes): nvidia-smi topo -m and the NCCL
    # topology show their closest NIC across the CPU's host bridges instead of PIX.
    gpus_off_nic_switch: dict[str, set[int]] = field(default_factory=dict)
    # Devices whose files the writer leaves out (planned and cabled, but not collected).
    uncollected: set[str] = field(default_factory=set)
    # Host ports (host, netdev) that are cabled and up but whose lldpd sees no neighbour (LLDP off on the far
    # port, or a NIC firmware LLDP agent consuming the frames).
    lldp_silent: set[tuple[str, str]] = field(default_factory=set)
    # ``roce`` (the RoCE twin), ``ib`` (an InfiniBand backend: no RoCE switches, the rails are ``ib``) or ``mixed``
    # (the RoCE backend plus an IB storage network): see :mod:`unifab.twin.ib_cluster`
    fabric: str = "roce"
    ib: IbNet | None = None

    def actual_peer(self, node: str, port: str, planned: tuple[str, str]) -> tuple[str, str] | None:
        """Where the cable at ``node:port`` really goes: the plan's ``planned`` end unless a scenario moved it."""
        return self.actual.get((node, port), planned)

    def cabled_port(self, switch: str, port: TwinPort) -> TwinPort | None:
        """``port`` with its peer set to the real cabling (for LLDP writers), ``None`` when nothing is cabled."""
        peer = self.actual_peer(switch, port.name, (port.peer_node, port.peer_port))
        if peer is None:
            return None
        return port if peer == (port.peer_node, port.peer_port) else replace(port, peer_node=peer[0], peer_port=peer[1])

    def leaves(self) -> list[TwinSwitch]:
        return [s for s in self.switches.values() if s.role == "leaf"]

    def nic(self, host: str, netdev: str) -> TwinNic | None:
        nics = self.hosts.get(host)
        if nics is None or not netdev.startswith("eth"):
            return None
        rail = int(netdev[3:])
        return nics[rail] if 0 <= rail < len(nics) else None

    def host_ports(self, leaf: TwinSwitch) -> list[TwinPort]:
        return [p for p in leaf.ports.values() if p.peer_node in self.hosts]


def port_name(index: int, os: str = "sonic") -> str:
    """Name of the index-th (0-based) 8-lane front-panel port on a switch running ``os``.

    SONiC (and the twin's EOS) count lanes, ``Ethernet<8 * index>``; Cumulus Linux numbers front-panel
    ports from 1, ``swp<index + 1>`` (a breakout would be ``swp<n>s<m>``; the twin cables whole ports).
    """
    return platform(os).port_name(index)


def switch_os_of(switch_os: str, index: int) -> str:
    """The OS of the switch with 1-based ``index`` when the cluster's OS is ``switch_os`` (``mixed`` cycles)."""
    return OSES[(index - 1) % len(OSES)] if switch_os == "mixed" else switch_os


def device_count(gpus: int, su_hosts: int = DEFAULT_SU_HOSTS) -> int:
    """Hosts + leaves + spines of :func:`build` (for sizing a progress bar before building)."""
    n_hosts = max(1, math.ceil(gpus / GPUS_PER_HOST))
    return n_hosts + math.ceil(n_hosts / su_hosts) * RAILS + SPINES_PER_FABRIC


def build(gpus: int, su_hosts: int = DEFAULT_SU_HOSTS, switch_os: str = "sonic", jobs: int | None = None) -> Cluster:
    """A clean cluster of ``ceil(gpus / 8)`` hosts, cabled rail by rail.

    ``switch_os`` is the OS of every switch (``sonic``, ``eos``, ``nvue``), or ``mixed``: leaves and
    spines each cycle through sonic, eos, nvue by their 1-based index (leaf 1 and spine01 SONiC,
    leaf 2 and spine02 EOS, leaf 3 and spine03 NVUE, ...). ``jobs``: how many Slurm jobs share the hosts
    (default one per :data:`JOB_HOSTS` hosts); from 1 to the number of hosts.
    """
    if switch_os not in (*OSES, "mixed"):
        raise ValueError(f"switch_os must be one of sonic, eos, nvue, mixed; got {switch_os!r}")
    n_hosts = max(1, math.ceil(gpus / GPUS_PER_HOST))
    if jobs is not None and not 1 <= jobs <= n_hosts:
        raise UsageError(f"--jobs {jobs}: expected 1 to {n_hosts} (one host or more per job, {n_hosts} hosts)")
    width = max(3, len(str(n_hosts)))
    n_su = math.ceil(n_hosts / su_hosts)
    switches: dict[str, TwinSwitch] = {}
    spines = [
        TwinSwitch(f"spine{j + 1:02d}", "spine", j + 1, os=switch_os_of(switch_os, j + 1))
        for j in range(SPINES_PER_FABRIC)
    ]
    for su in range(n_su):
        for rail in range(RAILS):
            index = su * RAILS + rail + 1
            leaf = TwinSwitch(f"leaf-su{su + 1}-r{rail}", "leaf", index, os=switch_os_of(switch_os, index))
            switches[leaf.name] = leaf
    hosts: dict[str, list[TwinNic]] = {}
    for h in range(n_hosts):
        name = f"gpu{h + 1:0{width}d}"
        su, slot = divmod(h, su_hosts)
        nics = [TwinNic(name, rail) for rail in range(RAILS)]
        hosts[name] = nics
        for nic in nics:
            leaf = switches[f"leaf-su{su + 1}-r{nic.rail}"]
            port = port_name(slot, leaf.os)
            leaf.ports[port] = TwinPort(port, name, nic.netdev)
    spine_next = dict.fromkeys((s.name for s in spines), 0)
    uplinks = min(su_hosts, n_hosts)
    for leaf in switches.values():
        for u in range(uplinks):
            spine = spines[u % len(spines)]
            leaf_port = port_name(su_hosts + u, leaf.os)
            spine_port = port_name(spine_next[spine.name], spine.os)
            spine_next[spine.name] += 1
            leaf.ports[leaf_port] = TwinPort(leaf_port, spine.name, spine_port, cable_m=SPINE_CABLE_M)
            spine.ports[spine_port] = TwinPort(spine_port, leaf.name, leaf_port, cable_m=SPINE_CABLE_M)
    for spine in spines:
        switches[spine.name] = spine
    return Cluster(hosts, switches, su_hosts, _jobs(list(hosts), jobs))


def _jobs(names: list[str], count: int | None) -> list[TwinJob]:
    """One job per :data:`JOB_HOSTS` hosts; with ``count``, that many jobs over every host in contiguous blocks
    (the first ``len(names) % count`` one host larger), as a scheduler packing whole nodes would place them."""
    if count is None:
        blocks = [names[start : start + JOB_HOSTS] for start in range(0, len(names), JOB_HOSTS)]
    else:
        size, larger = divmod(len(names), count)
        bounds = [i * size + min(i, larger) for i in range(count + 1)]
        blocks = [names[bounds[i] : bounds[i + 1]] for i in range(count)]
    return [TwinJob(1001 + i, f"pretrain-{i + 1}", block, job_env()) for i, block in enumerate(blocks)]
