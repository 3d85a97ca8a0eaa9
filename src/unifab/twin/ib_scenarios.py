"""InfiniBand misconfigurations the twin can inject (``--fabric ib`` or ``mixed`` only), each with its ground truth.

They strike the twin's IB network (:class:`~unifab.twin.ib_cluster.IbNet`) through their own picker, so they
never touch what a RoCE scenario changed (a mixed twin's RoCE backend), and never share a target among
themselves: each takes HCA links (or hosts, jobs, SMs) no other took.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from unifab.model import Endpoint, link_id
from unifab.twin.cluster import GPUS_PER_HOST, Cluster
from unifab.twin.ib_cluster import IbHca, IbNet, IbSmTwin, IbSw, IbSwPort
from unifab.twin.picker import Truth

__all__ = ["BENIGN", "IB_SCENARIOS", "IbHostLink", "IbPicker"]


@dataclass(frozen=True, slots=True)
class IbHostLink:
    hca: IbHca
    leaf: IbSw
    port: IbSwPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.hca.host, self.hca.dev), Endpoint(self.leaf.name, str(self.port.num)))

    def subject(self) -> dict[str, str]:
        return {"kind": "link", "a": f"{self.hca.host}:{self.hca.dev}", "b": f"{self.leaf.name}:{self.port.num}"}


class IbPicker:
    """Hands out the IB network's HCA links so that no two IB injections share a link or a host."""

    def __init__(self, net: IbNet, rng: random.Random) -> None:
        self.net = net
        self.rng = rng
        self.links = [IbHostLink(net.hcas[p.peer], leaf, p) for leaf in net.leaves() for p in net.host_ports(leaf)]
        self.used_hosts: set[str] = set()
        self.skipped: list[dict[str, str]] = []

    def take(self, count: int = 1, where: Callable[[IbHostLink], bool] | None = None) -> list[IbHostLink]:
        free = [lk for lk in self.links if lk.hca.host not in self.used_hosts and (where is None or where(lk))]
        if len(free) < count:
            from unifab.errors import UsageError

            raise UsageError("the cluster is too small to inject every InfiniBand scenario beside the others")
        chosen: list[IbHostLink] = []
        for lk in self.rng.sample(free, len(free)):
            if lk.hca.host not in {c.hca.host for c in chosen}:
                chosen.append(lk)
            if len(chosen) == count:
                break
        self.used_hosts.update(lk.hca.host for lk in chosen)
        return chosen


def _truth(check: str, lk: IbHostLink, side: str, detail: str) -> Truth:
    return {"check": check, "subject": lk.subject(), "entities": [lk.id], "side": side, "detail": detail}


def _swap(net: IbNet, x: IbHostLink, y: IbHostLink) -> None:
    x_hca, y_hca = (x.hca.host, x.hca.dev), (y.hca.host, y.hca.dev)
    x_port, y_port = (x.leaf.name, str(x.port.num)), (y.leaf.name, str(y.port.num))
    net.actual[x_hca], net.actual[y_port] = y_port, x_hca
    net.actual[y_hca], net.actual[x_port] = x_port, y_hca


def swapped_cable(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """TOPO-RAIL (IB backend: one host's HCAs of two rails swapped between their rail leaves) or TOPO-MISWIRED
    (IB storage: two hosts' HCAs swapped on one leaf)."""
    [x] = pick.take()
    if net.role == "backend":
        partners = [lk for lk in pick.links if lk.hca.host == x.hca.host and lk.leaf is not x.leaf]
        check, detail = "TOPO-RAIL", "{x} on {yl}, {y} on {xl}"
    else:
        partners = [lk for lk in pick.links if lk.leaf is x.leaf and lk.hca.host not in pick.used_hosts]
        check, detail = "TOPO-MISWIRED", "{x} and {y} swapped on {xl}"
    y = pick.rng.choice(partners)
    pick.used_hosts.add(y.hca.host)
    _swap(net, x, y)
    first, second = sorted((x, y), key=lambda lk: lk.id)
    said = detail.format(x=x.subject()["a"], y=y.subject()["a"], xl=x.leaf.name, yl=y.leaf.name)
    return [
        {
            "check": check,
            "subject": {**first.subject(), "with": second.id},
            "entities": [first.id, second.id],
            "side": "switch",
            "detail": said,
        }
    ]


def missing_cable(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """TOPO-MISSING: an HCA's cable is absent: the HCA is not discovered, its leaf port is Down/Polling, the host's
    ibstat shows the port Down."""
    [lk] = pick.take()
    net.actual[(lk.hca.host, lk.hca.dev)] = None
    net.actual[(lk.leaf.name, str(lk.port.num))] = None
    return [_truth("TOPO-MISSING", lk, "both", "HCA cable absent")]


def degraded_link(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """TOPO-DEGRADED: an HCA link trained at 1X HDR (one lane) or at 4X SDR (the slowest speed)."""
    [lk] = pick.take()
    width, speed = ("1X", "HDR") if pick.rng.random() < 0.5 else ("4X", "SDR")
    lk.hca.width = lk.port.width = width
    lk.hca.speed = lk.port.speed = speed
    return [_truth("TOPO-DEGRADED", lk, "both", f"link trained {width} {speed}")]


def _sm_entities(*sms: IbSmTwin) -> list[str]:
    return sorted(f"sm:0x{sm.guid:016x}" for sm in sms)


def second_master(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-SM: an opensm left running on a compute host is master beside the fabric's own master."""
    [lk] = pick.take()
    rogue = IbSmTwin(f"{lk.hca.host}:{lk.hca.dev}", lk.hca.port_guid, lk.hca.lid, 0, 3, 88)
    master = next(sm for sm in net.sms if sm.state == 3)
    net.sms.append(rogue)
    return [
        {
            "check": "IB-SM",
            "subject": {"kind": "sm", "id": f"sm:0x{master.guid:016x}"},
            "entities": _sm_entities(master, rogue),
            "side": "fabric",
            "device": lk.hca.host,
            "detail": f"a second master SM on {lk.hca.host} {lk.hca.dev}",
        }
    ]


def sm_tie(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-SM: the standby SM has the master's priority, so the election falls to the lower GUID."""
    standby = next((sm for sm in net.sms if sm.state == 2), None)
    master = next(sm for sm in net.sms if sm.state == 3)
    if standby is None:
        pick.skipped.append({"scenario": "ib-sm-tie", "why": "no standby SM in this cluster"})
        return []
    standby.priority = master.priority
    return [
        {
            "check": "IB-SM",
            "subject": {"kind": "sm", "id": f"sm:0x{min(master.guid, standby.guid):016x}"},
            "entities": _sm_entities(master, standby),
            "side": "fabric",
            "detail": f"master and standby SM both at priority {master.priority}",
        }
    ]


def _duplicate(net: IbNet, pick: IbPicker, what: str) -> list[Truth]:
    x, y = pick.take(2)
    if what == "guid":
        y.hca.port_guid = x.hca.port_guid
        value = f"0x{x.hca.port_guid:016x}"
    else:
        y.hca.lid = x.hca.lid
        value = str(x.hca.lid)
    return [
        {
            "check": "IB-DUPLICATE",
            "subject": {"kind": what if what == "lid" else "guid", "id": value},
            "entities": sorted(f"nic:{lk.hca.host}:{lk.hca.dev}" for lk in (x, y)),
            "side": "nic",
            "detail": f"{x.subject()['a']} and {y.subject()['a']} share {what.upper()} {value}",
        }
    ]


def duplicate_guid(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-DUPLICATE: two HCAs on different hosts carry the same port GUID."""
    return _duplicate(net, pick, "guid")


def duplicate_lid(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-DUPLICATE: two HCAs on different hosts answer the same LID."""
    return _duplicate(net, pick, "lid")


def port_errors(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-COUNTERS: a leaf port facing an HCA with a saturated SymbolErrorCounter and link-down events."""
    [lk] = pick.take()
    lk.port.counters.update({"SymbolErrorCounter": 65535, "LinkDownedCounter": 7, "PortRcvErrors": 211})
    return [_truth("IB-COUNTERS", lk, "switch", "SymbolErrorCounter saturated, 7 link-downs, 211 receive errors")]


def mtu_mismatch(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-MTU: an HCA runs IB MTU 2048 in a 4096 fabric."""
    [lk] = pick.take()
    lk.hca.mtu = 2048
    return [_truth("IB-MTU", lk, "nic", "HCA active MTU 2048")]


def job_sl(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """IB-SL: a job on the IB backend runs NCCL on SL 0 instead of the intent's SL."""
    if net.role != "backend" or not cluster.jobs:
        pick.skipped.append({"scenario": "ib-job-sl", "why": "no job in this cluster runs NCCL over InfiniBand"})
        return []
    job = pick.rng.choice(cluster.jobs)
    job.env["NCCL_IB_SL"] = "0"
    job_id = f"job:slurm:{job.job_id}"
    return [
        {
            "check": "IB-SL",
            "subject": {"kind": "job", "id": job_id},
            "entities": [job_id],
            "side": "job",
            "detail": f"NCCL_IB_SL=0 instead of {net.sl}",
        }
    ]


BELOW_PLAN_LINKS = 3
PLANNED_FAST = ("4X", "NDR")  # what the plan promised; the twin's links train 4X HDR (ibsim's fastest)


def below_plan(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """TOPO-DEGRADED against the plan: the plan gives three HCA cables of one leaf 4X NDR (NDR optics and HCAs
    were planned for those hosts); they trained 4X HDR like every peer on the leaf, so only the plan shows it."""
    by_leaf: dict[str, list[IbHostLink]] = {}
    for lk in pick.links:
        if lk.hca.host not in pick.used_hosts and (lk.leaf.name, str(lk.port.num)) not in net.actual:
            by_leaf.setdefault(lk.leaf.name, []).append(lk)
    leaves = sorted(name for name, links in by_leaf.items() if len({lk.hca.host for lk in links}) >= BELOW_PLAN_LINKS)
    if not leaves:
        pick.skipped.append({"scenario": "ib-below-plan", "why": "no leaf has three hosts no other scenario took"})
        return []
    leaf = pick.rng.choice(leaves)
    chosen = pick.take(BELOW_PLAN_LINKS, where=lambda lk: lk in by_leaf[leaf])
    out = []
    for lk in sorted(chosen, key=lambda k: k.id):
        net.planned_rates[(lk.leaf.name, str(lk.port.num))] = PLANNED_FAST
        trained = f"{lk.port.width} {lk.port.speed}"
        out.append(_truth("TOPO-DEGRADED", lk, "both", f"plan says {' '.join(PLANNED_FAST)}, trained {trained}"))
    return out


DEFAULT_DESCRIPTIONS = ("MT4123 ConfigurationCapable", "")  # the HCA's own before rdma-ndd ran, and none at all


def default_description(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """Nothing (no finding): two hosts' HCAs answer ibnetdiscover with a default NodeDescription (the firmware's
    ``MT4123 ConfigurationCapable``, or an empty one) and their ibstat was not collected, but the SM's NodeRecords
    (``ib/saquery.txt``) keep the real ``<host> <dev>``, so the CAs are named from saquery."""
    for lk, shown in zip(pick.take(2), DEFAULT_DESCRIPTIONS, strict=True):
        for hca in net.hcas.values():
            if hca.host == lk.hca.host:
                hca.shown_description = shown
        net.no_ibstat.add(lk.hca.host)
    return []


NUMA_NODES = 2  # GPUs and rail HCAs 0-3 on node 0, the rest on node 1 (twin.host_files.gpu_topology)


def hca_affinity(cluster: Cluster, net: IbNet, pick: IbPicker) -> list[Truth]:
    """TOPO-PCIE-AFFINITY on an IB backend: a GPU seated on a PCIe switch without an HCA (``nvidia-smi topo -m``
    and NCCL's XML agree). Its closest HCA is then its NUMA node's first, over NODE: GPUDirect RDMA is lost for it,
    and unless that HCA is its own rail's, it shares it with that HCA's GPU while its own rail HCA idles."""
    if net.role != "backend":
        why = "a storage HCA is no GPU's rail NIC (the RoCE 'affinity' scenario moves a mixed twin's GPUs)"
        pick.skipped.append({"scenario": "ib-affinity", "why": why})
        return []
    [lk] = pick.take(where=lambda k: k.hca.rail is not None)
    host, gpu = lk.hca.host, lk.hca.rail
    assert gpu is not None
    cluster.gpus_off_nic_switch.setdefault(host, set()).add(gpu)
    per_node = GPUS_PER_HOST // NUMA_NODES
    closest = next(h.dev for h in net.hcas.values() if h.host == host and h.rail == gpu // per_node * per_node)
    return [
        {
            "check": "TOPO-PCIE-AFFINITY",
            "subject": {"kind": "host", "id": f"host:{host}"},
            "entities": [f"gpu:{host}:{gpu}", *(f"nic:{host}:{n}" for n in sorted({closest, lk.hca.dev}))],
            "side": "host",
            "detail": f"GPU {gpu} on a PCIe switch without an HCA: closest HCA {closest} over NODE",
        }
    ]


IB_SCENARIOS: dict[str, Callable[[Cluster, IbNet, IbPicker], list[Truth]]] = {
    "ib-swapped-cable": swapped_cable,
    "ib-missing-cable": missing_cable,
    "ib-degraded-link": degraded_link,
    "ib-second-master": second_master,
    "ib-sm-tie": sm_tie,
    "ib-duplicate-guid": duplicate_guid,
    "ib-duplicate-lid": duplicate_lid,
    "ib-port-errors": port_errors,
    "ib-mtu": mtu_mismatch,
    "ib-job-sl": job_sl,
    "ib-below-plan": below_plan,
    "ib-default-description": default_description,
    "ib-affinity": hca_affinity,
}
BENIGN = frozenset({"ib-default-description"})  # scenarios whose truth is that no check finds anything
