"""``unifab twin generate --fabric ib|mixed``: the IB network beside (or instead of) the RoCE one, and its scenarios.

A scenario applies to the fabrics that have what it breaks: the ``ib-*`` ones to ``ib`` and ``mixed`` twins, the
RoCE ones to ``roce`` and ``mixed`` twins (an ``ib`` twin has no RoCE switches). Asking for one on a twin that
cannot express it is a usage error naming the fabrics it needs.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

from unifab.errors import UsageError
from unifab.twin.cluster import RAILS, Cluster
from unifab.twin.ib_cluster import (
    FABRICS,
    HCA_OUI,
    IB_SL,
    STORAGE_DEV,
    STORAGE_HOSTS_PER_LEAF,
    STORAGE_SPINES,
    SWITCH_OUI,
    IbHca,
    IbNet,
    IbSmTwin,
    IbSw,
    IbSwPort,
)
from unifab.twin.ib_scenarios import IB_SCENARIOS, IbPicker
from unifab.twin.picker import Truth

__all__ = ["build_ib", "check_fabric", "ib_job_env", "ib_truths", "make_ib", "scenario_fabrics"]


def scenario_fabrics(name: str) -> tuple[str, ...]:
    """The twin fabrics a scenario can be injected on."""
    return ("ib", "mixed") if name in IB_SCENARIOS else ("roce", "mixed")


def check_fabric(fabric: str, scenarios: Collection[str], roce_scenarios: Mapping[str, object]) -> None:
    if fabric not in FABRICS:
        raise UsageError(f"unknown fabric {fabric!r}; expected one of {', '.join(FABRICS)}")
    known = [*roce_scenarios, *IB_SCENARIOS]
    for name in scenarios:
        if name not in known:
            raise UsageError(f"unknown scenario {name!r}; expected one of {', '.join(known)}")
        if fabric not in scenario_fabrics(name):
            raise UsageError(
                f"scenario {name!r} needs --fabric {' or '.join(scenario_fabrics(name))}; this twin is {fabric}"
            )


def ib_job_env() -> dict[str, str]:
    """NCCL on an IB backend: the rails' HCAs and the fabric's SL (no RoCE TOS or GID index)."""
    return {
        "NCCL_IB_SL": str(IB_SL),
        "NCCL_IB_HCA": "=" + ",".join(f"mlx5_{r}:1" for r in range(RAILS)),
        "NCCL_SOCKET_IFNAME": "ib0",
    }


def make_ib(cluster: Cluster, fabric: str) -> None:
    """Give ``cluster`` its IB network; an ``ib`` twin loses its RoCE switches and its jobs run NCCL over IB."""
    if fabric == "roce":
        return
    cluster.fabric = fabric
    cluster.ib = build_ib(cluster, fabric)
    if fabric == "ib":
        cluster.switches = {}
        for job in cluster.jobs:
            job.env = ib_job_env()


def ib_truths(cluster: Cluster, scenarios: Collection[str], seed: int, skipped: list[dict[str, str]]) -> list[Truth]:
    """Inject the ``ib-*`` scenarios (catalog order, their own seeded RNG: the RoCE picks do not move)."""
    if cluster.ib is None:
        return []
    pick = IbPicker(cluster.ib, random.Random(f"ib:{seed}"))
    out = [
        {"scenario": name, **truth}
        for name in IB_SCENARIOS
        if name in scenarios
        for truth in IB_SCENARIOS[name](cluster, cluster.ib, pick)
    ]
    skipped.extend(pick.skipped)
    return out


def _ib_name(roce_switch: str) -> str:
    return f"ib-{roce_switch}"


def build_ib(cluster: Cluster, fabric: str) -> IbNet:
    """The IB network of ``fabric`` (``ib``: the backend rails; ``mixed``: a storage network beside RoCE)."""
    if fabric == "ib":
        net = _backend(cluster)
    elif fabric == "mixed":
        net = _storage(cluster)
    else:
        raise ValueError(f"fabric must be ib or mixed; got {fabric!r}")
    _assign_lids(net)
    by_name = sorted(net.switches.values(), key=lambda s: s.name)
    spines = [s for s in by_name if s.role == "spine"] or by_name
    master, standby = spines[0], spines[1 % len(spines)]
    net.sms = [IbSmTwin(master.name, master.guid, master.lid, 15, 3)]
    if standby is not master:
        net.sms.append(IbSmTwin(standby.name, standby.guid, standby.lid, 14, 2, 1204))
    return net


def _backend(cluster: Cluster) -> IbNet:
    """The RoCE twin's rail cabling, as InfiniBand."""
    switches: dict[str, IbSw] = {}
    index = {name: i for i, name in enumerate(sorted(cluster.switches), start=1)}
    for roce in cluster.switches.values():
        sw = IbSw(_ib_name(roce.name), roce.role, SWITCH_OUI | index[roce.name] << 4)
        for port in roce.ports.values():
            num = _port_num(port.name)
            peer_switch = cluster.switches.get(port.peer_node)
            if peer_switch is not None:
                peer = (_ib_name(peer_switch.name), str(_port_num(port.peer_port)))
            else:
                nic = cluster.nic(port.peer_node, port.peer_port)
                if nic is None:
                    continue
                peer = (nic.host, f"mlx5_{nic.rail}")
            sw.ports[num] = IbSwPort(num, peer)
        switches[sw.name] = sw
    hcas: dict[tuple[str, str], IbHca] = {}
    for h, (host, nics) in enumerate(sorted(cluster.hosts.items()), start=1):
        for nic in nics:
            dev = f"mlx5_{nic.rail}"
            hcas[(host, dev)] = IbHca(host, dev, nic.rail, HCA_OUI | h << 8 | nic.rail << 1)
    return IbNet("backend", hcas, switches, sl=IB_SL)


def _port_num(name: str) -> int:
    """The 1-based IB port number of a RoCE port: its position among the switch's front-panel ports."""
    digits = "".join(c for c in name if c.isdigit())
    value = int(digits) if digits else 0
    # SONiC/EOS count lanes (Ethernet<8i>), Cumulus ports from 1 (swp<i+1>)
    return value // 8 + 1 if name.startswith("Ethernet") else value


def _storage(cluster: Cluster) -> IbNet:
    """One storage HCA per host on storage leaves (16 hosts each), every leaf cabled to each storage spine."""
    hosts = sorted(cluster.hosts)
    n_leaves = max(1, -(-len(hosts) // STORAGE_HOSTS_PER_LEAF))
    switches: dict[str, IbSw] = {}
    spines = [
        IbSw(f"ib-stor-spine{j + 1:02d}", "spine", SWITCH_OUI | 0x8000 | (j + 1) << 4) for j in range(STORAGE_SPINES)
    ]
    hcas: dict[tuple[str, str], IbHca] = {}
    for i in range(n_leaves):
        leaf = IbSw(f"ib-stor-leaf{i + 1:02d}", "leaf", SWITCH_OUI | 0x4000 | (i + 1) << 4)
        first = i * STORAGE_HOSTS_PER_LEAF
        for slot, host in enumerate(hosts[first : first + STORAGE_HOSTS_PER_LEAF], start=1):
            leaf.ports[slot] = IbSwPort(slot, (host, STORAGE_DEV))
            h = first + slot  # the host's 1-based position in name order
            hcas[(host, STORAGE_DEV)] = IbHca(host, STORAGE_DEV, None, HCA_OUI | 0x800000 | h << 8)
        for j, spine in enumerate(spines):
            leaf_port = STORAGE_HOSTS_PER_LEAF + 1 + j
            spine.ports[i + 1] = IbSwPort(i + 1, (leaf.name, str(leaf_port)))
            leaf.ports[leaf_port] = IbSwPort(leaf_port, (spine.name, str(i + 1)))
        switches[leaf.name] = leaf
    for spine in spines:
        switches[spine.name] = spine
    return IbNet("storage", hcas, switches)


def _assign_lids(net: IbNet) -> None:
    lid = 1
    for name in sorted(net.switches):
        net.switches[name].lid = lid
        lid += 1
    for key in sorted(net.hcas):
        hca = net.hcas[key]
        hca.lid = lid
        hca.port_guid = hca.node_guid + 1
        lid += 1
