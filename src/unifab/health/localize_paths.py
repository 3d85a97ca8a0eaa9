"""Where a NIC pair's traffic may run in a leaf-spine fabric, and which jobs may cross an element, under ECMP.

A RoCE flow between NICs on two leaves is hashed by each switch onto one of its equal-cost uplinks (on the
5-tuple, whose UDP source port the NIC derives from the QP numbers), so nobody outside the switches knows which
spine one flow crossed. NCCL's completion error names the NIC pair only (local GID, remote GID, ``hca`` and the
peer's socket address: no QP number, no port, no path), so a failing pair's **candidate set** is every element of
every equal-cost path between its two NICs: both NIC links, both leaves, every spine both leaves reach and the
links to it. The elements every failing pair shares are what one fault can explain; healthy pairs would exonerate
the elements that are on *all* of their paths, but NCCL logs no per-pair success (and a healthy pair's ECMP flows
may just have avoided a bad spine), so nothing is exonerated here.

Leaves are the switches with a host link; their links to other switches are uplinks, and the switches at the far
end of those are the spines. A rank pair is two NICs on two different hosts of one job, on any rails (rail-aligned
traffic stays under one leaf; cross-rail pairs and rail-misaligned ones cross the spines): a job *may* cross an
element when one of its pairs has the element in its candidate set.
"""

from __future__ import annotations

from collections.abc import Iterable

from unifab.model import Endpoint, Fabric, Link

__all__ = ["Paths"]


class Paths:
    """The Fabric's leaves, their uplinks by spine, and the jobs that may cross them (built once per localize)."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        host_leaf: dict[Endpoint, str] = {}
        for link in fabric.links:
            for near, far in ((link.a, link.b), (link.b, link.a)):
                if near.node in fabric.hosts and far.node in fabric.switches:
                    host_leaf.setdefault(near, far.node)
        self.leaves = frozenset(host_leaf.values())
        self.uplinks: dict[str, dict[str, list[Link]]] = {}  # leaf -> spine -> links
        for link in fabric.links:
            for near, far in ((link.a, link.b), (link.b, link.a)):
                if near.node in self.leaves and far.node in fabric.switches and far.node not in self.leaves:
                    self.uplinks.setdefault(near.node, {}).setdefault(far.node, []).append(link)
        self.host_leaves: dict[str, set[str]] = {}  # host -> the leaves its NICs are cabled to
        for end, leaf in host_leaf.items():
            self.host_leaves.setdefault(end.node, set()).add(leaf)

    def spines(self, leaf: str) -> set[str]:
        return set(self.uplinks.get(leaf, {}))

    def common_spines(self, leaves: Iterable[str]) -> set[str]:
        """The spines every one of ``leaves`` reaches: where ECMP can take a flow between any two of them."""
        out: set[str] | None = None
        for leaf in leaves:
            out = self.spines(leaf) if out is None else out & self.spines(leaf)
        return out or set()

    def uplink_ends(self, leaf: str) -> set[Endpoint]:
        """Both ends of every uplink of ``leaf``."""
        return {e for links in self.uplinks.get(leaf, {}).values() for lk in links for e in (lk.a, lk.b)}

    def spine_ends(self, spine: str) -> set[Endpoint]:
        """Both ends of every link between ``spine`` and a leaf."""
        return {e for per in self.uplinks.values() for lk in per.get(spine, []) for e in (lk.a, lk.b)}

    def _jobs(self, crosses: dict[str, set[str]]) -> set[str]:
        """Jobs with two hosts whose leaves are ``a`` and ``b`` (``b`` in ``crosses[a]``, ``a`` != ``b``)."""
        out: set[str] = set()
        for job in self.fabric.jobs.values():
            leaves = [self.host_leaves.get(h, set()) for h in dict.fromkeys(job.hosts)]
            if any(
                b in crosses.get(a, ()) and a != b
                for i, mine in enumerate(leaves)
                for other in leaves[i + 1 :]
                for a in mine
                for b in other
            ):
                out.add(job.id)
        return out

    def jobs_crossing_leaf(self, leaf: str) -> set[str]:
        """Jobs with a rank pair from a NIC on ``leaf`` to a NIC on a leaf it shares a spine with."""
        others = {b for b in self.leaves if b != leaf and self.spines(leaf) & self.spines(b)}
        return self._jobs({leaf: others, **{b: {leaf} for b in others}})

    def jobs_crossing_link(self, link: Link) -> set[str]:
        """Jobs with a rank pair whose paths may cross the leaf-spine ``link`` (from its leaf to another one)."""
        leaf, spine = (link.a.node, link.b.node) if link.a.node in self.leaves else (link.b.node, link.a.node)
        others = {b for b in self.leaves if b != leaf and spine in self.spines(b)}
        return self._jobs({leaf: others, **{b: {leaf} for b in others}})

    def jobs_crossing_spine(self, spine: str) -> set[str]:
        """Jobs with a rank pair between two leaves that both reach ``spine``."""
        under = {a for a in self.leaves if spine in self.spines(a)}
        return self._jobs({a: under - {a} for a in under})
