"""The twin's InfiniBand network: HCAs, IB switches and subnet managers, before they are written as diag outputs.

Two shapes (``unifab twin generate --fabric``):

* ``ib`` — the backend is InfiniBand: each host's eight rail NICs are single-port HCAs ``mlx5_<r>`` cabled to
  rail leaves ``ib-leaf-su<s>-r<r>`` exactly as the RoCE twin cables its rails (same ports, 1-based: the RoCE
  leaf's ``Ethernet<8i>`` is IB port ``i + 1``), leaves uplinked to spines ``ib-spine<NN>``.
* ``mixed`` — the RoCE backend stays as it is and every host gets one more HCA, ``mlx5_8``, on an IB storage
  network: storage leaves ``ib-stor-leaf<NN>`` (one per 16 hosts) uplinked to two storage spines.

Links train 4X HDR (the fastest speed ibsim can simulate, so the twin's NETFILE loads into the real simulator),
MTU 4096. GUIDs follow NVIDIA's OUIs (HCAs ``a088c2...``, switches ``b83fd2...``); an HCA's port GUID is its node
GUID + 1 (as ibsim assigns it). LIDs: switches first, then HCAs, in name order. The master SM runs on the first
spine (priority 15), a standby on the second (priority 14). :func:`unifab.twin.ib_generate.build_ib` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "FABRICS",
    "HCA_OUI",
    "IB_MTU",
    "IB_SL",
    "IB_SPEED",
    "IB_WIDTH",
    "STORAGE_DEV",
    "STORAGE_HOSTS_PER_LEAF",
    "STORAGE_SPINES",
    "SWITCH_OUI",
    "IbHca",
    "IbNet",
    "IbSmTwin",
    "IbSw",
    "IbSwPort",
]

FABRICS = ("roce", "ib", "mixed")
IB_WIDTH = "4X"
IB_SPEED = "HDR"
IB_MTU = 4096
IB_SL = 1  # the SL the twin's intent (fabric.yaml qos.nccl.sl) and its jobs use on an IB backend
STORAGE_DEV = "mlx5_8"
STORAGE_HOSTS_PER_LEAF = 16
STORAGE_SPINES = 2
SWITCH_MODEL = "MQM8700"
SWITCH_PORTS = 40
HCA_OUI = 0xA088C2030000_0000
SWITCH_OUI = 0xB83FD2030000_0000


@dataclass(slots=True)
class IbHca:
    """One single-port HCA: its identity, LID and the link it trained."""

    host: str
    dev: str
    rail: int | None  # None for a storage HCA
    node_guid: int
    lid: int = 0
    port_guid: int = 0  # node_guid + 1 unless a scenario changed it
    width: str = IB_WIDTH
    speed: str = IB_SPEED
    mtu: int = IB_MTU
    state: str = "Active"  # logical port state (Down when no cable)
    counters: dict[str, int] = field(default_factory=dict)
    # the NodeDescription the HCA itself answers (ibnetdiscover, iblinkinfo) when it is not the one the SM holds
    # (saquery): a firmware default or empty one, before rdma-ndd set "<host> <dev>" again
    shown_description: str | None = None

    @property
    def description(self) -> str:
        return f"{self.host} {self.dev}"

    @property
    def shown(self) -> str:
        """The NodeDescription ibnetdiscover and iblinkinfo print."""
        return self.description if self.shown_description is None else self.shown_description

    @property
    def net_id(self) -> str:
        """The node's id in the ibsim NETFILE (and its console commands)."""
        return f"H-{self.host}-{self.dev}"


@dataclass(slots=True)
class IbSwPort:
    num: int
    peer: tuple[str, str]  # planned: (host, dev) of an HCA, or (switch, port number as text)
    width: str = IB_WIDTH
    speed: str = IB_SPEED
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class IbSw:
    name: str
    role: str  # "leaf" | "spine"
    guid: int
    lid: int = 0
    ports: dict[int, IbSwPort] = field(default_factory=dict)

    @property
    def description(self) -> str:
        return f"MF0;{self.name}:{SWITCH_MODEL}/U1"

    @property
    def net_id(self) -> str:
        return f"S-{self.name}"

    @property
    def nports(self) -> int:
        return max(SWITCH_PORTS, max(self.ports, default=0))


@dataclass(slots=True)
class IbSmTwin:
    """A subnet manager: where it runs (a switch name or ``host:dev``), its port GUID, LID, priority and state."""

    where: str
    guid: int
    lid: int
    priority: int
    state: int = 2  # SMInfo SMState: 3 master, 2 standby
    activity: int = 1553


@dataclass(slots=True)
class IbNet:
    role: str  # "backend" | "storage"
    hcas: dict[tuple[str, str], IbHca]
    switches: dict[str, IbSw]
    sms: list[IbSmTwin] = field(default_factory=list)
    # real cabling where it differs from the plan: (node, port) -> (node, port) really there, or None (no cable)
    actual: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)
    sl: int | None = None  # the SL the fabric's intent asks jobs to use
    # the rate the plan (plan/ibnetdiscover.txt) gives a cable, by its switch end (switch, port): (width, speed);
    # a cable not listed is planned at IB_WIDTH IB_SPEED
    planned_rates: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    no_ibstat: set[str] = field(default_factory=set)  # hosts whose ibstat was not collected

    def actual_peer(self, node: str, port: str, planned: tuple[str, str]) -> tuple[str, str] | None:
        return self.actual.get((node, port), planned)

    def leaves(self) -> list[IbSw]:
        return [s for s in self.switches.values() if s.role == "leaf"]

    def host_ports(self, leaf: IbSw) -> list[IbSwPort]:
        return [p for p in leaf.ports.values() if (p.peer[0], p.peer[1]) in self.hcas]

    def end_of(self, node: str, port: str) -> IbHca | IbSwPort | None:
        hca = self.hcas.get((node, port))
        if hca is not None:
            return hca
        sw = self.switches.get(node)
        return sw.ports.get(int(port)) if sw is not None and port.isdigit() else None
