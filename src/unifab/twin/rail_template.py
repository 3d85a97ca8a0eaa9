"""A rail-optimized cabling plan from a few numbers, in the shape of NVIDIA's DGX SuperPOD.

Hosts carry 8 GPUs and ``rails`` NICs (8 on DGX/HGX: one per GPU). Hosts group into scalable units
(SU) of ``su_hosts`` (32 in the SuperPOD reference); NIC *r* of host slot *s* in SU *u* cables to leaf
``leaf-su<u>-r<r>`` port *s*; every leaf has as many uplinks as host ports, at the ports after them,
uplink *k* going to spine ``k mod spines`` (8 spines by default), each spine numbering its ports in
leaf order. Names and port numbering are the twin's (:mod:`unifab.twin.cluster`), so a twin bundle
of the same size carries exactly this plan. The reference's SU 1 (32 nodes, 8 leaves of (32 down + 32 up)) is
``gpus=256, su_hosts=32``; past ~16 SUs the reference adds a core layer, which this two-tier template
does not draw.
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import UsageError
from unifab.parse.plan.cabling import PlannedCable
from unifab.twin.cluster import GPUS_PER_HOST, HOST_CABLE_M, SPINE_CABLE_M, SPINES_PER_FABRIC, port_name

__all__ = ["RAIL_CHOICES", "RailShape", "check_gpus", "host_name", "leaf_name", "plan", "shape", "spine_name"]

RAIL_CHOICES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class RailShape:
    gpus: int
    rails: int
    su_hosts: int
    spines: int

    @property
    def hosts(self) -> int:
        return self.gpus // GPUS_PER_HOST

    @property
    def scalable_units(self) -> int:
        return -(-self.hosts // self.su_hosts)

    @property
    def leaves(self) -> int:
        return self.scalable_units * self.rails

    @property
    def uplinks_per_leaf(self) -> int:
        return min(self.su_hosts, self.hosts)


def check_gpus(gpus: int) -> None:
    """``--gpus`` of every command that builds a rail-optimized fabric: whole 8-GPU hosts, at least one."""
    if gpus < GPUS_PER_HOST or gpus % GPUS_PER_HOST:
        raise UsageError(f"--gpus must be a positive multiple of {GPUS_PER_HOST} (GPUs per host), got {gpus}")


def shape(gpus: int, rails: int = 8, su_hosts: int = 32, spines: int | None = None) -> RailShape:
    """Validated numbers; :class:`UsageError` says which one is wrong and what it must be.

    ``spines`` defaults to 8 (the twin's spine layer), or fewer when a leaf has fewer uplinks: a spine
    no leaf reaches carries no cable. Uplinks need not divide evenly over the spines (12 uplinks on 8
    spines give 4 spines two links from each leaf).
    """
    check_gpus(gpus)
    if rails not in RAIL_CHOICES:
        choices = ", ".join(map(str, RAIL_CHOICES))
        raise UsageError(f"--rails must be one of {choices} (NICs per {GPUS_PER_HOST}-GPU host), got {rails}")
    if su_hosts < 1:
        raise UsageError(f"--su-size must be at least 1 host, got {su_hosts}")
    uplinks = min(su_hosts, gpus // GPUS_PER_HOST)
    if spines is None:
        spines = min(SPINES_PER_FABRIC, uplinks)
    if not 1 <= spines <= uplinks:
        raise UsageError(f"--spines must be 1..{uplinks} (each leaf has {uplinks} uplinks), got {spines}")
    return RailShape(gpus, rails, su_hosts, spines)


def host_name(index: int, hosts: int) -> str:
    """``gpu001``..: 1-based, zero-padded to at least three digits (the twin's names)."""
    return f"gpu{index + 1:0{max(3, len(str(hosts)))}d}"


def leaf_name(su: int, rail: int) -> str:
    return f"leaf-su{su + 1}-r{rail}"


def spine_name(index: int) -> str:
    return f"spine{index + 1:02d}"


def plan(s: RailShape) -> tuple[PlannedCable, ...]:
    """Every cable of the shape, sorted by the a-end (host cables host-first, uplinks leaf-first)."""
    cables: list[PlannedCable] = []
    for h in range(s.hosts):
        su, slot = divmod(h, s.su_hosts)
        host = host_name(h, s.hosts)
        for rail in range(s.rails):
            cables.append(PlannedCable(host, f"eth{rail}", leaf_name(su, rail), port_name(slot), HOST_CABLE_M))
    spine_next = [0] * s.spines
    for su in range(s.scalable_units):
        for rail in range(s.rails):
            for u in range(s.uplinks_per_leaf):
                spine = u % s.spines
                cables.append(
                    PlannedCable(
                        leaf_name(su, rail),
                        port_name(s.su_hosts + u),
                        spine_name(spine),
                        port_name(spine_next[spine]),
                        SPINE_CABLE_M,
                    )
                )
                spine_next[spine] += 1
    return tuple(sorted(cables, key=lambda c: (c.a_node, c.a_port)))
