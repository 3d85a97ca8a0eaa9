"""What a twin scenario needs in the cluster to be injectable: NICs of a vendor or driver stack, switches of an OS.

This is data on the scenario table (:data:`unifab.twin.scenarios.NEEDS`). :func:`unifab.twin.generate.generate`
skips a scenario whose needs the cluster does not meet before the scenario runs (so it draws nothing from the
seeded RNG), recording which kind of device is missing (a reason that starts with "no "); the truth tests derive
the skips they expect from the same data, so a scenario skipped for any other reason fails them.
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.twin.cluster import Cluster

__all__ = ["Kinds", "Needs"]


@dataclass(frozen=True, slots=True)
class Kinds:
    """The kinds of device a cluster holds, as the scenarios' needs name them."""

    nics: frozenset[tuple[str, str]]  # (vendor, driver) of every NIC: ("mlx5", "ofed"), ("bnxt", "bnxt"), ...
    leaf_os: frozenset[str]
    spine_os: frozenset[str]
    uplink_os: frozenset[tuple[str, str]]  # (leaf OS, spine OS) of every leaf-spine cable

    @classmethod
    def of(cls, cluster: Cluster) -> Kinds:
        switches = cluster.switches
        uplinks = {
            (leaf.os, switches[p.peer_node].os)
            for leaf in cluster.leaves()
            for p in leaf.ports.values()
            if p.peer_node in switches and switches[p.peer_node].role == "spine"
        }
        return cls(
            nics=frozenset((n.vendor, n.driver) for nics in cluster.hosts.values() for n in nics),
            leaf_os=frozenset(s.os for s in switches.values() if s.role == "leaf"),
            spine_os=frozenset(s.os for s in switches.values() if s.role == "spine"),
            uplink_os=frozenset(uplinks),
        )


@dataclass(frozen=True, slots=True)
class Needs:
    """Devices a scenario can only be injected on. Every field given must be met by one device of the cluster
    (an empty field asks nothing); ``otherwise`` is an alternative that is enough on its own.

    ``nic_vendor`` / ``nic_driver``: one NIC of that vendor (``mlx5``, ``bnxt``) running one of those stacks
    (``ofed``, ``upstream``, ``bnxt``); ``leaf_os`` / ``spine_os``: one leaf / spine running one of those switch
    OSes; ``uplink_os``: one leaf-spine link with one of those OSes on both ends. ``why`` is what the skip says.
    """

    why: str
    nic_vendor: frozenset[str] = frozenset()
    nic_driver: frozenset[str] = frozenset()
    leaf_os: frozenset[str] = frozenset()
    spine_os: frozenset[str] = frozenset()
    uplink_os: frozenset[str] = frozenset()
    otherwise: Needs | None = None

    def __post_init__(self) -> None:
        if not self.why.startswith("no "):
            raise ValueError(f"a skip names the missing kind of device ('no ...'), got {self.why!r}")
        if not (self.nic_vendor or self.nic_driver or self.leaf_os or self.spine_os or self.uplink_os):
            raise ValueError("a scenario's needs name at least one kind of device")

    def met(self, kinds: Kinds) -> bool:
        nic = not (self.nic_vendor or self.nic_driver) or any(
            (not self.nic_vendor or vendor in self.nic_vendor) and (not self.nic_driver or driver in self.nic_driver)
            for vendor, driver in kinds.nics
        )
        leaf = not self.leaf_os or bool(self.leaf_os & kinds.leaf_os)
        spine = not self.spine_os or bool(self.spine_os & kinds.spine_os)
        uplink = not self.uplink_os or any({a, b} <= self.uplink_os for a, b in kinds.uplink_os)
        return (nic and leaf and spine and uplink) or (self.otherwise is not None and self.otherwise.met(kinds))
