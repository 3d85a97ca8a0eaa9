"""The ids ``unifab agent gate`` judges on a host by itself, in the catalog beside the fabric checks.

The gate (:mod:`unifab.agent.gate`, :mod:`unifab.agent.job_env`) runs these on the host before a job gets it;
``unifab check`` never does (they have no ``run``): the catalog lists them so ``unifab checks`` and
docs/checks.md explain every id an operator can meet.
"""

from __future__ import annotations

from unifab.checks.registry import CheckSpec

__all__ = ["CHECKS", "GATE_SPECS", "JOB_SPECS"]

JOB_SPECS = (
    CheckSpec(
        "GATE-JOB-ENV",
        "A job's NCCL variable does not read as what it says (a number NCCL parses differently, an unknown family)",
        "NCCL reads such values with strtol/atoi or ignores them: the job runs with settings nobody chose.",
        "Write the value as NCCL reads it (decimal integers; NCCL_IB_ADDR_FAMILY=AF_INET or AF_INET6).",
    ),
    CheckSpec(
        "GATE-JOB-HCA",
        "A job's NCCL_IB_HCA names a device this host does not have, selects none, or selects a NIC that is down",
        "NCCL uses only the devices the list selects: a typo leaves rails unused or no RDMA device at all.",
        "List this host's RDMA devices (ibv_devices) exactly: NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,...",
    ),
    CheckSpec(
        "GATE-JOB-GID",
        "The GID at a job's NCCL_IB_GID_INDEX is not of the address family the job asks for",
        "NCCL connects with that GID as it is: an IPv6 GID in an IPv4-routed fabric (or the reverse) connects "
        "to nothing.",
        "Leave NCCL_IB_GID_INDEX unset (NCCL picks the RoCE v2 GID of NCCL_IB_ADDR_FAMILY) or pick the index "
        "show_gids lists as v2 with an address of that family.",
    ),
    CheckSpec(
        "GATE-JOB-IFNAME",
        "A job's NCCL_SOCKET_IFNAME selects no interface of this host, or only interfaces that are down",
        "NCCL's bootstrap and out-of-band connections use these interfaces: with none the job fails at init.",
        "Name interfaces this host has (ip -br link), remembering names are prefixes unless the list starts with =.",
    ),
)

GATE_SPECS = (
    CheckSpec(
        "GATE-NO-RDMA",
        "The host has no RDMA NIC, or fewer than the gate was told to expect",
        "NCCL falls back to TCP sockets (or fails) without an RDMA device; a NIC that fell off the bus takes its "
        "rail with it.",
        "Check the NIC is seen (lspci), its driver loaded (mlx5_core / bnxt_en) and /sys/class/infiniband populated.",
    ),
    CheckSpec(
        "GATE-NIC-DOWN",
        "An RDMA NIC's port is not ACTIVE",
        "A rail without link: NCCL either fails to connect through it or runs the job on fewer rails.",
        "Check the cable, optic and the leaf port (ethtool, ibv_devinfo, mlxlink); reseat or replace.",
    ),
    CheckSpec(
        "GATE-NIC-QOS",
        "A NIC's QoS differs from the intent (trust, PFC, DSCP map, TOS override, ECN, MTU)",
        "The host end of the lossless class is not what the fabric is configured for: pauses on the wrong "
        "priority, RoCE in a lossy class, no congestion control.",
        "Apply the intent's NIC script (unifab render, unifab agent apply) or the fix commands listed.",
    ),
    *JOB_SPECS,
)

CHECKS = GATE_SPECS  # no run: the catalog lists them, unifab check never runs them
