"""Host misconfigurations and faults the twin can inject, each recorded as ground truth in the checks' own terms.

NIC-level scenarios take free host links from the :class:`~unifab.twin.picker.Picker` (so they never share a NIC
with another scenario); host-level ones (ACS, peer memory, a GPU's PCIe link) take hosts no other scenario changed
and mark them used, so the GPU-placement scenario (``affinity``) does not move a GPU under them. Truth entities are
the ids the finding carries: the NIC (``nic:<host>:<rdma dev>``), the GPU (``gpu:<host>:<index>``) or the host.
"""

from __future__ import annotations

from collections.abc import Callable

from unifab.model import host_id, nic_id
from unifab.twin.cluster import Cluster, TwinNic
from unifab.twin.picker import CANNOT_EXPRESS, HostLink, Picker, Truth
from unifab.twin.scenario_needs import Needs

__all__ = [
    "DOWNGRADED_WIDTH",
    "HOST_NEEDS",
    "HOST_SCENARIOS",
    "LOW_ROCE_MTU",
    "acs_redirect",
    "dcbx_fw",
    "ets_roce",
    "gid_index",
    "pcie_downgraded",
    "peermem_missing",
    "roce_mtu",
]

DOWNGRADED_WIDTH = 8  # a x16 card that trained on half its lanes (a bad riser or a dirty slot)
LOW_ROCE_MTU = 1024  # RoCE active MTU stuck below the 4096 a 9000-byte netdev carries


def _nic_truth(check: str, nic: TwinNic, detail: str) -> Truth:
    ident = nic_id(nic.host, nic.rdma_dev)
    return {
        "check": check,
        "subject": {"kind": "nic", "id": ident},
        "entities": [ident],
        "side": "nic",
        "detail": detail,
    }


def _host_truth(check: str, host: str, detail: str) -> Truth:
    ident = host_id(host)
    return {
        "check": check,
        "subject": {"kind": "host", "id": ident},
        "entities": [ident],
        "side": "host",
        "detail": detail,
    }


def _hosts(cluster: Cluster, pick: Picker, scenario: str) -> list[str]:
    """Free hosts for a host-level scenario (one, plus one per 64 hosts), marked used."""
    from unifab.errors import UsageError

    free = sorted(h for h in cluster.hosts if h not in pick.used_hosts and cluster.hosts[h])
    want = 1 + len(cluster.hosts) // 64
    if len(free) <= want:
        raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
    chosen = pick.rng.sample(free, want)
    pick.used_hosts.update(chosen)
    return sorted(chosen)


def _near(pick: Picker, where: Callable[[HostLink], bool] | None) -> Callable[[HostLink], bool] | None:
    """``where``, narrowed to leaves other scenarios already touched when a free link there qualifies: a NIC fact
    needs no particular leaf, and leaving untouched leaves alone keeps them for scenarios that need a quiet leaf."""
    touched = {lk.leaf.name for lk in pick.links if lk.id in pick.used_links}

    def near(lk: HostLink) -> bool:
        return lk.leaf.name in touched and (where is None or where(lk))

    free = (lk for lk in pick.links if lk.id not in pick.used_links and lk.leaf.name not in pick.used_leaves)
    return near if any(near(lk) for lk in free) else where


def _nic_scenario(
    name: str,
    check: str,
    doc: str,
    breaks: Callable[[TwinNic], str],
    where: Callable[[HostLink], bool] | None = None,
    why: str = CANNOT_EXPRESS,
) -> Callable[[Cluster, Picker], list[Truth]]:
    def scenario(cluster: Cluster, pick: Picker) -> list[Truth]:
        return [_nic_truth(check, lk.nic, breaks(lk.nic)) for lk in pick.links_for(name, _near(pick, where), why)]

    scenario.__doc__ = f"{check}: {doc}"
    return scenario


def _set(nic: TwinNic, field: str, value: object, said: str) -> str:
    setattr(nic, field, value)
    return said


def pcie_downgraded(cluster: Cluster, pick: Picker) -> list[Truth]:
    """HOST-PCIE-DOWNGRADED: a NIC, or the GPU on the same PCIe switch, trained at x8 of its x16."""
    out = []
    for lk in pick.links_for("pcie-downgraded", _near(pick, None)):
        nic = lk.nic
        if pick.rng.random() < 0.5 or nic.host in pick.used_hosts:
            nic.pcie_width = DOWNGRADED_WIDTH
            out.append(_nic_truth("HOST-PCIE-DOWNGRADED", nic, f"NIC PCIe link trained at x{DOWNGRADED_WIDTH} of x16"))
            continue
        pick.used_hosts.add(nic.host)  # the GPU stays on its NIC's switch (no affinity move on this host)
        nic.gpu_pcie_width = DOWNGRADED_WIDTH
        gpu = f"gpu:{nic.host}:{nic.rail}"
        out.append(
            {
                "check": "HOST-PCIE-DOWNGRADED",
                "subject": {"kind": "gpu", "id": gpu},
                "entities": [gpu],
                "side": "host",
                "detail": f"GPU {nic.rail} PCIe link trained at x{DOWNGRADED_WIDTH} of x16",
            }
        )
    return out


gid_index = _nic_scenario(
    "gid-index",
    "HOST-GID",
    "a NIC's netdev lost its IPv4 address, so the jobs' NCCL_IB_GID_INDEX=3 names no GID (NCCL's own pick would "
    "fall back to the link-local RoCE v1 GID 0).",
    lambda nic: _set(nic, "ipv4", False, "no IPv4 address on the netdev: only the link-local GIDs 0 and 1"),
)
roce_mtu = _nic_scenario(
    "roce-mtu",
    "HOST-ROCE-MTU",
    f"a NIC's RoCE active MTU is {LOW_ROCE_MTU} under a 9000-byte netdev MTU.",
    lambda nic: _set(nic, "roce_mtu", LOW_ROCE_MTU, f"RoCE active MTU {LOW_ROCE_MTU} with netdev MTU {nic.mtu}"),
)
dcbx_fw = _nic_scenario(
    "dcbx-fw",
    "QOS-DCBX",
    "a ConnectX NIC's DCBX is firmware controlled in a fabric managed from the host (mlnx_qos).",
    lambda nic: _set(nic, "dcbx", "fw", "mlnx_qos DCBX mode: Firmware controlled"),
    where=lambda lk: lk.nic.vendor == "mlx5",
    why="no free link left with an mlx5 NIC",
)
ets_roce = _nic_scenario(
    "ets-roce",
    "QOS-ETS",
    "a NIC gives its RoCE traffic class an ETS share of 0%.",
    lambda nic: _set(nic, "roce_tc_bw", 0, "ETS share of the RoCE TC 0%, its 50% moved to TC 0"),
)


def acs_redirect(cluster: Cluster, pick: Picker) -> list[Truth]:
    """HOST-ACS: the PCIe switch of one rail redirects peer-to-peer traffic (ACSCtl ReqRedir+ CmpltRedir+)."""
    out = []
    for host in _hosts(cluster, pick, "acs-redirect"):
        nic = pick.rng.choice(cluster.hosts[host])
        nic.acs_redirect = True
        out.append(
            _host_truth("HOST-ACS", host, f"ACS redirect on the PCIe switch ports of GPU {nic.rail} and {nic.rdma_dev}")
        )
    return out


def peermem_missing(cluster: Cluster, pick: Picker) -> list[Truth]:
    """HOST-PEERMEM: nvidia_peermem is not loaded on a GPU host."""
    out = []
    for host in _hosts(cluster, pick, "peermem-missing"):
        for nic in cluster.hosts[host]:
            nic.peermem = False
        out.append(_host_truth("HOST-PEERMEM", host, "nvidia_peermem not loaded (lsmod)"))
    return out


HOST_SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "pcie-downgraded": pcie_downgraded,
    "gid-index": gid_index,
    "roce-mtu": roce_mtu,
    "dcbx-fw": dcbx_fw,
    "ets-roce": ets_roce,
    "acs-redirect": acs_redirect,
    "peermem-missing": peermem_missing,
}
# The host scenarios a cluster may have no device for (see unifab.twin.scenarios.NEEDS).
HOST_NEEDS = {
    "dcbx-fw": Needs("no NIC in this cluster reports a DCBX mode (mlnx_qos)", nic_vendor=frozenset({"mlx5"})),
}
