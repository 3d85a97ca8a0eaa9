"""Cabling faults the twin can inject: the plan keeps the intent, LLDP on both ends shows the real cabling.

A scenario records the real cabling in :attr:`Cluster.actual` (both ends of every moved or absent cable);
the ports' ``peer_node``/``peer_port`` stay the plan, so ``plan/cabling.csv`` and the port descriptions
keep the intent while host ``lldpcli.json`` and SONiC ``appl_db.json`` report what is really there.

Truth entities are the **planned** link ids of the cables involved (sorted), the ids the TOPO-* finding
carries; ``side`` is ``"switch"`` because the fix is recabling at the leaf.

Leaves of every OS qualify (the writer renders each OS's LLDP from the real cabling). Targets come from
:meth:`Picker.links_for`, so they never overlap another scenario's links; run these after the scenarios of
:data:`unifab.twin.scenarios.SCENARIOS` (they only need free host links).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from unifab.twin.cluster import Cluster
from unifab.twin.picker import HostLink, Picker, Truth


def _free(pick: Picker, lk: HostLink) -> bool:
    return lk.id not in pick.used_links and lk.leaf.name not in pick.used_leaves


def _swap(cluster: Cluster, x: HostLink, y: HostLink) -> None:
    """Cross two host cables: x's NIC lands on y's switch port and y's NIC on x's."""
    x_nic, y_nic = (x.nic.host, x.nic.netdev), (y.nic.host, y.nic.netdev)
    x_port, y_port = (x.leaf.name, x.port.name), (y.leaf.name, y.port.name)
    cluster.actual[x_nic] = y_port
    cluster.actual[y_port] = x_nic
    cluster.actual[y_nic] = x_port
    cluster.actual[x_port] = y_nic


def _pair_truth(check: str, x: HostLink, y: HostLink, detail: str) -> Truth:
    first, second = sorted((x, y), key=lambda lk: lk.id)
    ids = [first.id, second.id]
    return {
        "check": check,
        "subject": {**first.subject(), "with": second.id},
        "entities": ids,
        "side": "switch",
        "detail": detail,
    }


def miswire(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-MISWIRED: two host cables on the same leaf swapped (same rail, so only the ports differ)."""
    out: list[Truth] = []
    free_on_leaf = Counter(lk.leaf.name for lk in pick.links if _free(pick, lk))
    for x in pick.links_for("miswire", where=lambda lk: free_on_leaf[lk.leaf.name] >= 2):
        partners = [lk for lk in pick.links_on(x.leaf) if lk.id != x.id and _free(pick, lk)]
        if not partners:
            continue
        y = pick.rng.choice(partners)
        pick.used_links.add(y.id)
        _swap(cluster, x, y)
        out.append(
            _pair_truth("TOPO-MISWIRED", x, y, f"{x.nic.host}:{x.nic.netdev} and {y.nic.host}:{y.nic.netdev} swapped")
        )
    return out


def missing_cable(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-MISSING: a host cable is absent (no LLDP on either end); the plan keeps it."""
    out: list[Truth] = []
    for lk in pick.links_for("missing-cable"):
        cluster.actual[(lk.nic.host, lk.nic.netdev)] = None
        cluster.actual[(lk.leaf.name, lk.port.name)] = None
        out.append(
            {
                "check": "TOPO-MISSING",
                "subject": lk.subject(),
                "entities": [lk.id],
                "side": "switch",
                "detail": "cable absent",
            }
        )
    return out


def rail_swap(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-RAIL: a host's eth<i> and eth<j> cables swapped between the rail-i and rail-j leaves."""
    out: list[Truth] = []
    by_nic = {(lk.nic.host, lk.nic.rail): lk for lk in pick.links}
    free_on_host = Counter(lk.nic.host for lk in pick.links if _free(pick, lk))
    for x in pick.links_for("rail-swap", where=lambda lk: free_on_host[lk.nic.host] >= 2):
        partners = [
            lk
            for rail in range(len(cluster.hosts[x.nic.host]))
            if rail != x.nic.rail and (lk := by_nic.get((x.nic.host, rail))) is not None and _free(pick, lk)
        ]
        if not partners:
            continue
        y = pick.rng.choice(partners)
        pick.used_links.add(y.id)
        _swap(cluster, x, y)
        out.append(
            _pair_truth(
                "TOPO-RAIL",
                x,
                y,
                f"{x.nic.host}:{x.nic.netdev} on {y.leaf.name}, {y.nic.netdev} on {x.leaf.name}",
            )
        )
    return out


TOPOLOGY_SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "miswire": miswire,
    "missing-cable": missing_cable,
    "rail-swap": rail_swap,
}
