"""Cabling faults the twin can inject: the plan keeps the intent, LLDP on both ends shows the real cabling.

A scenario records the real cabling in :attr:`Cluster.actual` (both ends of every moved or absent cable);
the ports' ``peer_node``/``peer_port`` stay the plan, so ``plan/cabling.csv`` and the port descriptions
keep the intent while host ``lldpcli.json`` and SONiC ``appl_db.json`` report what is really there.

Truth entities are the **planned** link ids of the cables involved (sorted), the ids the TOPO-* finding
carries; ``side`` is ``"switch"`` because the fix is recabling at the leaf, ``"both"`` when a dark or silent
host port also gets its own verify commands.

:data:`NCCL_AND_LINK_SCENARIOS` break what NCCL assumes of a host and the links' capacity: a GPU seated away
from its NIC (``affinity``), a job's ``NCCL_IB_HCA`` that leaves out a rail NIC (``nccl-hca``), a host link that
came up at half speed (``degraded-link``) and leaf uplinks that are gone (``uplink-down``). Their truth names
the check and entities the finding carries: GPU and NIC ids for affinity, the job for NCCL_IB_HCA, link ids
otherwise; ``uplink-down`` lists TOPO-MISSING for every cable it removes beside the leaf's TOPO-UPLINKS.

:data:`TOPOLOGY_SCENARIOS` also take evidence away: a leaf whose files are not written (``leaf-uncollected``:
its ``COVERAGE`` finding, and nothing else — the hosts' LLDP still confirms its cables and the plan still says
which rail its NICs are on), a host port that is dark towards such a leaf (``host-port-down``: ``TOPO-MISSING``
from the host end alone) and a host port that is up but hears no LLDP from such a leaf (``host-no-lldp``:
``TOPO-UNVERIFIED``). The last two reuse the first's leaf when it runs, else take one of their own (and its
``COVERAGE``); the leaf is one no other scenario touched (:meth:`Picker.quiet_leaves`).

Leaves of every OS qualify (the writer renders each OS's LLDP from the real cabling). Targets come from
:meth:`Picker.links_for`, so they never overlap another scenario's links; run these after the scenarios of
:data:`unifab.twin.scenarios.SCENARIOS` (they only need free host links).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from unifab.errors import UsageError
from unifab.twin.cluster import GPUS_PER_HOST, Cluster, TwinJob, TwinSwitch
from unifab.twin.picker import HostLink, Picker, Truth, Uplink, link_truth

__all__ = [
    "DEGRADED_SPEED_MBPS",
    "NCCL_AND_LINK_SCENARIOS",
    "NUMA_NODES",
    "TOPOLOGY_SCENARIOS",
    "affinity",
    "degraded_link",
    "host_no_lldp",
    "host_port_down",
    "leaf_uncollected",
    "missing_cable",
    "miswire",
    "nccl_hca",
    "rail_swap",
    "uplink_down",
]

DEGRADED_SPEED_MBPS = 200_000  # a 400G host link that trained on half its lanes
NUMA_NODES = 2  # GPUs 0-3 and NICs 0-3 on node 0, the rest on node 1 (twin.host_files)


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
        lk.nic.port_state = "DOWN"  # no cable, no carrier
        cluster.actual[(lk.nic.host, lk.nic.netdev)] = None
        cluster.actual[(lk.leaf.name, lk.port.name)] = None
        # both: the host's dark port and the leaf port's LLDP are both shown
        out.append(link_truth("TOPO-MISSING", lk, "both", "cable absent"))
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


def _coverage_truth(leaf: TwinSwitch) -> Truth:
    return {
        "check": "COVERAGE",
        "subject": {"kind": "switch", "id": f"switch:{leaf.name}"},
        "entities": [f"switch:{leaf.name}"],
        "side": "switch",
        "device": leaf.name,
        "detail": f"{leaf.name} not collected (its files are not written)",
    }


def _uncollect(cluster: Cluster, pick: Picker, scenario: str) -> list[Truth]:
    """Take quiet leaves out of the bundle: one COVERAGE truth each (their cables stay as planned)."""
    out = []
    for leaf in pick.quiet_leaves(scenario):
        cluster.uncollected.add(leaf.name)
        out.append(_coverage_truth(leaf))
    return out


def leaf_uncollected(cluster: Cluster, pick: Picker) -> list[Truth]:
    """COVERAGE: a leaf was not collected. Its cables are confirmed by the hosts' and spines' LLDP (no
    TOPO-MISSING), and the plan keeps its NICs rail NICs (no TOPO-NCCL-HCA)."""
    return _uncollect(cluster, pick, "leaf-uncollected")


def _links_on_uncollected(cluster: Cluster, pick: Picker, scenario: str) -> tuple[list[HostLink], list[Truth]]:
    """Free host links on leaves that are not collected (making one so when none is), and the COVERAGE truth
    of a leaf made here."""
    truth: list[Truth] = []
    if not any(leaf.name in cluster.uncollected for leaf in cluster.leaves()):
        truth = _uncollect(cluster, pick, scenario)
    free = [lk for lk in pick.links if lk.leaf.name in cluster.uncollected and lk.id not in pick.used_links]
    want = pick.per_link_count()
    if len(free) < want:
        raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
    chosen = sorted(pick.rng.sample(free, want), key=lambda lk: lk.id)
    pick.used_links.update(lk.id for lk in chosen)
    return chosen, truth


def host_port_down(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-MISSING: a host port is dark (no carrier, RDMA port DOWN) and its leaf was not collected."""
    links, out = _links_on_uncollected(cluster, pick, "host-port-down")
    for lk in links:
        lk.nic.port_state = "DOWN"
        cluster.actual[(lk.nic.host, lk.nic.netdev)] = None
        cluster.actual[(lk.leaf.name, lk.port.name)] = None
        out.append(
            link_truth("TOPO-MISSING", lk, "both", f"{lk.nic.host}:{lk.nic.netdev} dark, {lk.leaf.name} not collected")
        )
    return out


def host_no_lldp(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-UNVERIFIED: a host port is up but its lldpd hears nothing (LLDP off on the leaf port, or the NIC
    firmware's LLDP agent eating the frames), and its leaf was not collected."""
    links, out = _links_on_uncollected(cluster, pick, "host-no-lldp")
    for lk in links:
        cluster.lldp_silent.add((lk.nic.host, lk.nic.netdev))
        out.append(
            link_truth(
                "TOPO-UNVERIFIED",
                lk,
                "both",
                f"{lk.nic.host}:{lk.nic.netdev} up without LLDP, {lk.leaf.name} not collected",
            )
        )
    return out


TOPOLOGY_SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "miswire": miswire,
    "missing-cable": missing_cable,
    "rail-swap": rail_swap,
    "leaf-uncollected": leaf_uncollected,
    "host-port-down": host_port_down,
    "host-no-lldp": host_no_lldp,
}


def affinity(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-PCIE-AFFINITY: a GPU seated on a PCIe switch without a NIC (nvidia-smi topo -m and NCCL XML agree)."""
    free = sorted(h for h in cluster.hosts if h not in pick.used_hosts)
    want = 1 + len(cluster.hosts) // 64
    if len(free) < want:
        raise UsageError("the cluster is too small to inject 'affinity' beside the other scenarios")
    out: list[Truth] = []
    per_node = GPUS_PER_HOST // NUMA_NODES
    for host in pick.rng.sample(free, want):
        pick.used_hosts.add(host)
        nics = cluster.hosts[host]
        gpu = pick.rng.randrange(GPUS_PER_HOST)
        cluster.gpus_off_nic_switch.setdefault(host, set()).add(gpu)
        # its closest NIC is now the first of its NUMA node's (NODE); unless that is its own, it shares it
        # with that NIC's GPU while its own rail NIC idles
        closest = nics[gpu // per_node * per_node].rdma_dev
        involved = sorted({closest, nics[gpu].rdma_dev})
        out.append(
            {
                "check": "TOPO-PCIE-AFFINITY",
                "subject": {"kind": "host", "id": f"host:{host}"},
                "entities": [f"gpu:{host}:{gpu}", *(f"nic:{host}:{n}" for n in involved)],
                "side": "host",
                "detail": f"GPU {gpu} on a PCIe switch without a NIC: closest NIC {closest} over NODE",
            }
        )
    return out


def _job_devices(cluster: Cluster, job: TwinJob) -> list[list[str]]:
    """RDMA device names of the job's hosts by rail (one name per NIC kind in the job)."""
    by_rail: dict[int, list[str]] = {}
    for host in job.hosts:
        for nic in cluster.hosts[host]:
            names = by_rail.setdefault(nic.rail, [])
            if nic.rdma_dev not in names:
                names.append(nic.rdma_dev)
    return [by_rail[r] for r in sorted(by_rail)]


def nccl_hca(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-NCCL-HCA: a job's ranks run with an NCCL_IB_HCA that leaves out one rail NIC."""
    free = [j for j in cluster.jobs if j.job_id not in pick.used_jobs] or list(cluster.jobs)
    job = pick.rng.choice(free)
    pick.used_jobs.add(job.job_id)
    rails = _job_devices(cluster, job)
    rail = pick.rng.randrange(len(rails))
    dropped = rails[rail]
    variant = pick.rng.randrange(3)
    if variant == 0:
        value = "=" + ",".join(f"{d}:1" for r, names in enumerate(rails) if r != rail for d in names)
        detail = f"exact list without {', '.join(dropped)}"
    elif variant == 1:
        value = "^=" + ",".join(dropped)
        detail = f"excludes {', '.join(dropped)}"
    else:
        value = "=" + ",".join(f"{d}:{2 if r == rail else 1}" for r, names in enumerate(rails) for d in names)
        detail = f"lists {', '.join(dropped)} on port 2, which single-port NICs do not have"
    job.env["NCCL_IB_HCA"] = value
    job_id = f"job:slurm:{job.job_id}"
    return [
        {
            "check": "TOPO-NCCL-HCA",
            "subject": {"kind": "job", "id": job_id},
            "entities": [job_id],
            "side": "job",
            "detail": f"NCCL_IB_HCA={value} ({detail})",
        }
    ]


def degraded_link(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-DEGRADED: a host link trained at 200G instead of 400G (the NIC's and the switch port's speed)."""
    out: list[Truth] = []
    for lk in pick.links_for("degraded-link"):
        lk.nic.speed_mbps = DEGRADED_SPEED_MBPS
        lk.port.speed_mbps = DEGRADED_SPEED_MBPS
        out.append(link_truth("TOPO-DEGRADED", lk, "both", f"link at {DEGRADED_SPEED_MBPS // 1000}G on both ends"))
    return out


def uplink_down(cluster: Cluster, pick: Picker) -> list[Truth]:
    """TOPO-UPLINKS: a quarter of a leaf's uplinks gone (each also a TOPO-MISSING cable)."""
    by_leaf: dict[str, list[Uplink]] = {}
    for up in pick.uplinks:
        by_leaf.setdefault(up.leaf.name, []).append(up)
    leaves = sorted(
        name
        for name, ups in by_leaf.items()
        if name not in pick.set_aside and sum(up.id not in pick.used_uplinks for up in ups) >= max(1, len(ups) // 4)
    )
    want = 1 + len(by_leaf) // 64
    if len(leaves) < want:
        raise UsageError("the cluster is too small to inject 'uplink-down' beside the other scenarios")
    out: list[Truth] = []
    for name in pick.rng.sample(leaves, want):
        ups = by_leaf[name]
        free = [up for up in ups if up.id not in pick.used_uplinks]
        gone = sorted(pick.rng.sample(free, max(1, len(ups) // 4)), key=lambda up: up.id)
        for up in gone:
            pick.used_uplinks.add(up.id)
            cluster.actual[(up.leaf.name, up.leaf_port.name)] = None
            cluster.actual[(up.spine.name, up.spine_port.name)] = None
            out.append(
                {
                    "check": "TOPO-MISSING",
                    "subject": up.subject(),
                    "entities": [up.id],
                    "side": "switch",
                    "device": name,
                    "detail": "uplink cable absent",
                }
            )
        out.append(
            {
                "check": "TOPO-UPLINKS",
                "subject": {"kind": "switch", "id": f"switch:{name}"},
                "entities": [up.id for up in gone],
                "side": "switch",
                "device": name,
                "detail": f"{len(ups) - len(gone)} of {len(ups)} uplinks up",
            }
        )
    return out


NCCL_AND_LINK_SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "affinity": affinity,
    "nccl-hca": nccl_hca,
    "degraded-link": degraded_link,
    "uplink-down": uplink_down,
}
