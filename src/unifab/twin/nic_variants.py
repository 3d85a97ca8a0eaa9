"""Which NIC each twin host carries, and which driver stack runs it (``unifab twin generate --nic-vendor/-driver``).

Every NIC of a host is the same kind, as in real servers: ``mlx5`` (ConnectX-7) or ``bnxt`` (Broadcom Thor2
BCM57608), and an mlx5 host runs either MLNX_OFED/DOCA-OFED (``ofed``: the ``ecn/`` sysfs tree, the
``traffic_class`` override, a versioned ``mlx5_core``) or the in-tree driver (``upstream``: DCQCN in debugfs
``cc_params``). ``mixed`` alternates by host index -- vendors on even/odd hosts, drivers on every other pair of
mlx5 hosts -- so a small twin already holds every kind. Each job's ``NCCL_IB_HCA`` then lists the RDMA devices its hosts
really have. The defaults (``mlx5``, ``ofed``) leave the cluster as
:func:`unifab.twin.cluster.build` made it.
"""

from __future__ import annotations

from unifab.twin.cluster import Cluster

__all__ = ["NIC_DRIVERS", "NIC_VENDORS", "apply_nic_variants", "host_variant"]

NIC_VENDORS = ("mlx5", "bnxt", "mixed")
NIC_DRIVERS = ("ofed", "upstream", "mixed")


def host_variant(host_index: int, vendor: str, driver: str) -> tuple[str, str]:
    """``(vendor, driver)`` of the host at 0-based ``host_index``; a Broadcom host's driver is ``bnxt``."""
    if vendor == "mixed":
        vendor = ("mlx5", "bnxt")[host_index % 2]
    if vendor == "bnxt":
        return "bnxt", "bnxt"
    if driver == "mixed":
        driver = ("ofed", "upstream")[(host_index // 2) % 2]
    return "mlx5", driver


def apply_nic_variants(cluster: Cluster, vendor: str = "mlx5", driver: str = "ofed") -> None:
    """Set every NIC's ``vendor`` and ``driver`` (before scenarios run, so they see the final NICs)."""
    if vendor not in NIC_VENDORS:
        raise ValueError(f"vendor must be one of {', '.join(NIC_VENDORS)}; got {vendor!r}")
    if driver not in NIC_DRIVERS:
        raise ValueError(f"driver must be one of {', '.join(NIC_DRIVERS)}; got {driver!r}")
    if (vendor, driver) == ("mlx5", "ofed"):
        return
    for nics in cluster.hosts.values():
        if not nics:
            continue
        kind, stack = host_variant(nics[0].host_index, vendor, driver)
        for nic in nics:
            nic.vendor, nic.driver = kind, stack
    for job in cluster.jobs:  # the ranks name every rail NIC their hosts have (bnxt_re<r> as well as mlx5_<r>)
        by_rail: dict[int, list[str]] = {}
        for host in job.hosts:
            for nic in cluster.hosts[host]:
                names = by_rail.setdefault(nic.rail, [])
                if nic.rdma_dev not in names:
                    names.append(nic.rdma_dev)
        job.env["NCCL_IB_HCA"] = "=" + ",".join(f"{d}:1" for r in sorted(by_rail) for d in by_rail[r])
