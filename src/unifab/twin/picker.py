"""Picking where the twin's scenarios strike: host links, leaf-spine links and leaves, never twice.

Shared by the QoS scenarios (:mod:`unifab.twin.scenarios`) and the cabling ones
(:mod:`unifab.twin.topology_scenarios`), so neither imports the other.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unifab.errors import UsageError
from unifab.model import Endpoint, link_id
from unifab.twin.cluster import Cluster, TwinNic, TwinPort, TwinSwitch

__all__ = ["CANNOT_EXPRESS", "HostLink", "Picker", "Truth", "Uplink", "host_links", "link_truth", "uplinks"]

Truth = dict[str, Any]
CANNOT_EXPRESS = "no device in this cluster can express it"


@dataclass(frozen=True, slots=True)
class HostLink:
    nic: TwinNic
    leaf: TwinSwitch
    port: TwinPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.nic.host, self.nic.netdev), Endpoint(self.leaf.name, self.port.name))

    def subject(self) -> dict[str, str]:
        return {"kind": "link", "a": f"{self.nic.host}:{self.nic.netdev}", "b": f"{self.leaf.name}:{self.port.name}"}


@dataclass(frozen=True, slots=True)
class Uplink:
    """A leaf port cabled to a spine port, both ends as twin ports."""

    leaf: TwinSwitch
    leaf_port: TwinPort
    spine: TwinSwitch
    spine_port: TwinPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.leaf.name, self.leaf_port.name), Endpoint(self.spine.name, self.spine_port.name))

    def subject(self) -> dict[str, str]:
        return {
            "kind": "link",
            "a": f"{self.leaf.name}:{self.leaf_port.name}",
            "b": f"{self.spine.name}:{self.spine_port.name}",
        }


def link_truth(check: str, lk: HostLink, side: str, detail: str) -> Truth:
    """The truth entry of a misconfiguration on one host link: the finding names the link and its two ends."""
    return {"check": check, "subject": lk.subject(), "entities": [lk.id], "side": side, "detail": detail}


def uplinks(cluster: Cluster) -> list[Uplink]:
    out = []
    for leaf in cluster.leaves():
        for port in leaf.ports.values():
            spine = cluster.switches.get(port.peer_node)
            if spine is not None and spine.role == "spine":
                out.append(Uplink(leaf, port, spine, spine.ports[port.peer_port]))
    return out


def host_links(cluster: Cluster) -> list[HostLink]:
    nics = {(n.host, n.netdev): n for nics in cluster.hosts.values() for n in nics}
    return [
        HostLink(nics[(p.peer_node, p.peer_port)], leaf, p)
        for leaf in cluster.leaves()
        for p in cluster.host_ports(leaf)
    ]


class Picker:
    """Hands out leaves and links so that no two injections share a target."""

    def __init__(self, cluster: Cluster, rng: random.Random) -> None:
        self.rng = rng
        self.cluster = cluster
        self.links = host_links(cluster)
        self.used_links: set[str] = set()
        self.used_leaves: set[str] = set()
        self.uplinks = uplinks(cluster)
        self.used_uplinks: set[str] = set()
        self.used_jobs: set[int] = set()  # job ids a job scenario changed
        self.used_hosts: set[str] = set()  # hosts whose GPU placement a scenario changed
        self.skipped: list[dict[str, str]] = []
        # Leaves no scenario may touch until :meth:`quiet_leaves` hands them out (the last ones, so the seeded
        # choices elsewhere do not depend on whether a scenario asks for them).
        leaves = cluster.leaves()
        self.reserved: list[TwinSwitch] = leaves[len(leaves) - max(1, len(leaves) // 16) :] if len(leaves) > 1 else []
        self.set_aside = frozenset(leaf.name for leaf in self.reserved)
        self.used_leaves.update(self.set_aside)

    def _skip(self, scenario: str, why: str) -> list[Any]:
        self.skipped.append({"scenario": scenario, "why": why})
        return []

    def per_link_count(self) -> int:
        """Instances of a per-link scenario: one, plus one per 64 hosts."""
        return 1 + len(self.links) // 512

    def leaves(self, scenario: str) -> list[TwinSwitch]:
        free = [leaf for leaf in self.cluster.leaves() if leaf.name not in self.used_leaves]
        want = max(1, len(self.cluster.leaves()) // 16)
        if len(free) <= want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_leaves.update(leaf.name for leaf in chosen)
        return chosen

    def links_for(
        self, scenario: str, where: Callable[[HostLink], bool] | None = None, why: str = CANNOT_EXPRESS
    ) -> list[HostLink]:
        """Free host links (``where`` narrows them to links whose NIC and switch can express the setting).

        When ``where`` leaves none, the scenario is recorded as skipped with ``why`` instead of injected.
        """
        free = [
            lk
            for lk in self.links
            if lk.id not in self.used_links and lk.leaf.name not in self.used_leaves and (where is None or where(lk))
        ]
        want = self.per_link_count()
        if not free and where is not None:
            return self._skip(scenario, why)
        if len(free) < want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_links.update(lk.id for lk in chosen)
        return chosen

    def uplinks_for(
        self, scenario: str, where: Callable[[Uplink], bool] | None = None, why: str = CANNOT_EXPRESS
    ) -> list[Uplink]:
        free = [
            up
            for up in self.uplinks
            if up.id not in self.used_uplinks and up.leaf.name not in self.set_aside and (where is None or where(up))
        ]
        want = 1 + len(self.uplinks) // 512
        if not free and where is not None:
            return self._skip(scenario, why)
        if len(free) < want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_uplinks.update(up.id for up in chosen)
        return chosen

    def whole_spine(
        self, scenario: str, where: Callable[[TwinSwitch], bool] | None = None, why: str = CANNOT_EXPRESS
    ) -> tuple[TwinSwitch, list[Uplink]] | None:
        """A spine none of whose uplinks another scenario took (``where`` narrows the spines), with its uplinks,
        all marked used: a spine-wide setting stands alone on every link behind it. None (recorded as skipped,
        saying ``why``) when no spine is left."""
        by_spine: dict[str, list[Uplink]] = {}
        for up in self.uplinks:  # a leaf taken out of sight later is dropped from the truth (twin.generate)
            by_spine.setdefault(up.spine.name, []).append(up)
        free = sorted(
            name
            for name, ups in by_spine.items()
            if not any(up.id in self.used_uplinks for up in ups) and (where is None or where(ups[0].spine))
        )
        if not free:
            self._skip(scenario, why)
            return None
        name = self.rng.choice(free)
        ups = by_spine[name]
        self.used_uplinks.update(up.id for up in ups)
        return ups[0].spine, ups

    def quiet_leaves(self, scenario: str) -> list[TwinSwitch]:
        """The leaves set aside at the start (:attr:`reserved`), which no other scenario touches: for scenarios
        that take a whole leaf out of sight, so no other injection disappears with it. Handed out once."""
        if not self.reserved:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen, self.reserved = self.reserved, []
        return chosen

    def links_on(self, leaf: TwinSwitch) -> list[HostLink]:
        return [lk for lk in self.links if lk.leaf is leaf]
