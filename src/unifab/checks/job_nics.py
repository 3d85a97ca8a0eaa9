"""Which NICs NCCL uses for a job, and so which fabric (RoCE Ethernet, InfiniBand or both) carries its collectives.

NCCL's IB transport (RoCE is the same verbs transport) opens every RDMA device ``NCCL_IB_HCA`` selects, read as
NCCL's ``parseStringList`` reads it (:func:`unifab.parse.sched.nccl_env.device_list`): names are *prefixes* unless
the list starts with ``=`` (``mlx5_1`` also selects ``mlx5_10``), ``^`` excludes, and ``:<port>`` picks a port.
With no ``NCCL_IB_HCA`` (or an environment the scheduler did not report) every RDMA device is a candidate. The
HCA's port is port 1 here: the model holds one port per NIC.
"""

from __future__ import annotations

import functools

from unifab.model import FABRIC_KINDS, Fabric, Job, Nic
from unifab.parse.sched.nccl_env import NcclDeviceList, device_list

__all__ = ["hca_list", "job_fabrics", "job_uses_nic"]


@functools.lru_cache(maxsize=1024)
def hca_list(raw: str) -> NcclDeviceList:
    """A job's ``NCCL_IB_HCA`` as NCCL reads it, read once per value (it is asked for every NIC of every job)."""
    return device_list("NCCL_IB_HCA", raw, [])


def job_uses_nic(job: Job, nic: Nic) -> bool:
    """Whether NCCL may run ``job`` over ``nic`` (a NIC of one of its hosts): every NIC when the job sets no
    ``NCCL_IB_HCA``, else the ones the list selects by RDMA device name (the netdev's when none was collected)."""
    if job.nccl_ib_hca is None:
        return True
    return hca_list(job.nccl_ib_hca).selects(nic.rdma_dev or nic.netdev, 1)


def job_fabrics(fabric: Fabric, job: Job) -> tuple[str, ...]:
    """The kinds of fabric (:data:`~unifab.model.FABRIC_KINDS` order) the NICs NCCL uses for ``job`` are on; empty
    when the bundle has none of them (no host of the job collected, or ``NCCL_IB_HCA`` selects nothing there)."""
    kinds: set[str] = set()
    for name in job.hosts:
        host = fabric.hosts.get(name)
        for nic in host.nics.values() if host is not None else ():
            if nic.fabric not in kinds and job_uses_nic(job, nic):
                kinds.add(nic.fabric)
        if len(kinds) == len(FABRIC_KINDS):
            break
    return tuple(k for k in FABRIC_KINDS if k in kinds)
