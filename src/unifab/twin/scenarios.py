"""Misconfigurations the twin can inject, each recorded as ground truth in the checks' own terms.

A scenario picks its targets with the generator's seeded RNG, mutates the cluster state and returns
one truth entry per misconfiguration: the check that must find it, its subject and the canonical
ids of the links it affects. Targets are a small minority of their kind so the fabric's majority
still shows the intended configuration.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unifab.model import Endpoint, link_id
from unifab.twin.cluster import ROCE_DSCP, ROCE_PRIO, Cluster, TwinNic, TwinPort, TwinSwitch

Truth = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HostLink:
    nic: TwinNic
    leaf: TwinSwitch
    port: TwinPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.nic.host, self.nic.netdev), Endpoint(self.leaf.name, self.port.name))

    def subject(self) -> dict[str, str]:
        return {
            "kind": "link",
            "a": f"{self.nic.host}:{self.nic.netdev}",
            "b": f"{self.leaf.name}:{self.port.name}",
        }


def host_links(cluster: Cluster) -> list[HostLink]:
    nics = {(n.host, n.netdev): n for nics in cluster.hosts.values() for n in nics}
    return [
        HostLink(nics[(p.peer_node, p.peer_port)], leaf, p)
        for leaf in cluster.leaves()
        for p in cluster.host_ports(leaf)
    ]


class Picker:
    """Hands out distinct host links per check, so two injections never land on one finding."""

    def __init__(self, cluster: Cluster, rng: random.Random) -> None:
        self.rng = rng
        self.links = host_links(cluster)
        self.used: dict[str, set[str]] = {}

    def count(self) -> int:
        """Instances of a per-link scenario: one, plus one per 64 hosts."""
        return 1 + len(self.links) // 512

    def links_for(self, check: str) -> list[HostLink]:
        used = self.used.setdefault(check, set())
        free = [lk for lk in self.links if lk.id not in used]
        chosen = self.rng.sample(free, min(self.count(), len(free)))
        used.update(lk.id for lk in chosen)
        return chosen


def _truth(check: str, lk: HostLink, side: str, detail: str) -> Truth:
    return {"check": check, "subject": lk.subject(), "entities": [lk.id], "side": side, "detail": detail}


def pfc_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    out = []
    for lk in pick.links_for("QOS-PFC-MISMATCH"):
        if pick.rng.random() < 0.5:
            lk.nic.pfc = set()
            out.append(_truth("QOS-PFC-MISMATCH", lk, "nic", "PFC disabled on the NIC"))
        else:
            lk.port.pfc = {ROCE_PRIO, ROCE_PRIO + 1}
            out.append(_truth("QOS-PFC-MISMATCH", lk, "switch", "switch port enables PFC on 3,4"))
    return out


def dscp_lossy(cluster: Cluster, pick: Picker) -> list[Truth]:
    leaves = cluster.leaves()
    chosen = pick.rng.sample(leaves, max(1, len(leaves) // 16))
    out = []
    for leaf in chosen:
        leaf.dscp_to_tc[ROCE_DSCP] = 1
        affected = [lk for lk in pick.links if lk.leaf is leaf]
        out.append(
            {
                "check": "QOS-DSCP-MAP",
                "subject": {"kind": "switch", "id": f"switch:{leaf.name}"},
                "entities": sorted(lk.id for lk in affected),
                "side": "switch",
                "detail": f"DSCP {ROCE_DSCP} mapped to lossy TC 1 on {leaf.name}",
            }
        )
    return out


def ecn_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    out = []
    for lk in pick.links_for("QOS-ECN-OFF"):
        choice = pick.rng.choice(("switch", "np", "rp"))
        if choice == "switch":
            lk.port.roce_queue_ecn = False
            detail = "no WRED/ECN profile on the switch's RoCE queue"
        elif choice == "np":
            lk.nic.np_enabled.discard(ROCE_PRIO)
            detail = "NIC roce_np disabled on the RoCE priority"
        else:
            lk.nic.rp_enabled.discard(ROCE_PRIO)
            detail = "NIC roce_rp disabled on the RoCE priority"
        out.append(_truth("QOS-ECN-OFF", lk, "switch" if choice == "switch" else "nic", detail))
    return out


def mtu_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    out = []
    for lk in pick.links_for("QOS-MTU"):
        if pick.rng.random() < 0.5:
            lk.port.mtu = 1500
            out.append(_truth("QOS-MTU", lk, "switch", "switch port MTU 1500 below the NIC's 9000"))
        else:
            lk.nic.mtu = 1500
            out.append(_truth("QOS-MTU", lk, "nic", "NIC MTU 1500 in a 9000 fabric"))
    return out


SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "pfc-mismatch": pfc_mismatch,
    "dscp-lossy": dscp_lossy,
    "ecn-off": ecn_off,
    "mtu-mismatch": mtu_mismatch,
}
