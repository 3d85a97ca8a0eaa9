"""Which checks read each file of the bundle layout: what an ``INPUT-PARTIAL`` finding says could not be judged.

One table, :data:`NOT_CHECKED`: a path pattern (:func:`fnmatch.fnmatchcase`, ``*`` crosses ``/``) relative to a
device's directory for ``hosts/<host>/`` and ``switches/<switch>/`` files, else to the bundle root, mapped to the
check ids whose inputs come from that file. :class:`~unifab.collect.problems.Problems` names them in every
``INPUT-PARTIAL`` of a file read through ``parse_file``, ``parse_file_partial`` or ``parse_tree``, beside what a
caller says itself. The ids follow what the checks read (src/unifab/checks/): the model fields each file fills in
collect/host.py and the switch readers, and the checks that read those fields. Files read only by ``unifab
health`` (``telemetry/``) have no entry: no check of the registry reads them. No NX-OS file is read by the bundle
reader (NX-OS captures are parsed by ``unifab parse`` and the peer gatherers only), so none is listed.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import cache

__all__ = ["NOT_CHECKED", "checks_for"]

# --- groups of checks that read the same facts ---------------------------------------------------------------
_NIC_QOS = (  # trust, DSCP→priority and PFC of a NIC: every link-QoS check pairs them with the switch port
    "QOS-TRUST",
    "QOS-PFC-MISMATCH",
    "QOS-PFC-LOSSY-ROCE",
    "QOS-DSCP-MAP",
    "QOS-TC-OVERRIDE",
    "QOS-GLOBAL-PAUSE",
    "QOS-CNP",
    "QOS-ETS",
)
_NIC_ECN = ("QOS-DCQCN-OFF", "QOS-CNP")  # DCQCN enables, CNP DSCP/priority (sysfs ecn, cc_params, bnxt_re cc)
_SWITCH_QOS = (  # a switch port's QoS: classification, PFC, queues (ECN/WRED, scheduler), buffers, watchdog
    "QOS-TRUST",
    "QOS-PFC-MISMATCH",
    "QOS-PFC-LOSSY-ROCE",
    "QOS-DSCP-MAP",
    "QOS-GLOBAL-PAUSE",
    "QOS-PFCWD",
    "QOS-ECN-OFF",
    "QOS-ECN-THRESH",
    "QOS-ECN-COLOR",
    "QOS-WRED-DROP",
    "QOS-CNP",
    "QOS-HEADROOM",
    "QOS-CABLE-LEN",
    "QOS-ETS",
)
_PORT_LINK = ("QOS-MTU", "LINK-SPEED", "LINK-FEC", "TOPO-DEGRADED", "TOPO-UPLINKS", "QOS-HEADROOM")
_CABLING = (  # what LLDP or the plan says about cables
    "TOPO-MISSING",
    "TOPO-UNVERIFIED",
    "TOPO-UNEXPECTED",
    "TOPO-MISWIRED",
    "TOPO-RAIL",
    "TOPO-NCCL-HCA",
    "TOPO-UPLINKS",
)
_JOBS = ("QOS-JOB-TC", "TOPO-NCCL-HCA", "IB-SL", "HOST-GID")  # a job's hosts and NCCL environment

NOT_CHECKED: dict[str, tuple[str, ...]] = {
    # --- a host's commands (hosts/<host>/cmd/...) --------------------------------------------------------------
    "cmd/mlnx_qos/*": (*_NIC_QOS, "QOS-HEADROOM", "QOS-CABLE-LEN", "QOS-DCBX"),
    "cmd/bnxt-qos/*": _NIC_QOS,
    "cmd/ethtool-S/*": ("QOS-GLOBAL-PAUSE",),  # pause-frame counters
    "cmd/ethtool-a/*": ("QOS-GLOBAL-PAUSE",),
    "cmd/ethtool-m/*": ("FLEET-FIRMWARE",),  # the host optic's part and revision
    "cmd/ip-d-link.txt": ("QOS-HEADROOM", "HOST-ROCE-MTU", "TOPO-MISSING"),  # maxmtu; operstate/carrier
    "cmd/lldpcli.json": _CABLING,
    "cmd/show_gids.txt": ("HOST-GID",),
    "cmd/ibv_devinfo.txt": ("HOST-ROCE-MTU", "IB-MTU", "FLEET-FIRMWARE", "TOPO-MISSING"),
    "cmd/ibdev2netdev.txt": ("HOST-GID", "TOPO-NCCL-HCA", "TOPO-RAIL"),  # RDMA device ↔ netdev
    "cmd/ibstat.txt": ("IB-DUPLICATE", "IB-SM"),
    "cmd/rdma-statistic.txt": ("QOS-GLOBAL-PAUSE",),
    "cmd/lsmod.txt": ("HOST-PEERMEM",),
    "cmd/lspci-vvv.txt": ("HOST-PCIE-DOWNGRADED", "HOST-ACS"),
    "cmd/nvidia-smi-q.xml": ("HOST-PCIE-DOWNGRADED", "FLEET-DRIVER", "HOST-PEERMEM", "TOPO-PCIE-AFFINITY"),
    "cmd/nvidia-smi-topo-m.txt": ("TOPO-PCIE-AFFINITY", "HOST-ACS"),
    "cmd/nccl-topo.xml": ("TOPO-PCIE-AFFINITY", "HOST-ACS"),
    "cmd/uname-r.txt": ("HOST-PEERMEM",),
    # --- a host's sysfs mirror (hosts/<host>/sys/...) ----------------------------------------------------------
    "sys/class/net/*/ecn/*": _NIC_ECN,
    "sys/class/net/*/mtu": ("QOS-MTU", "QOS-HEADROOM", "HOST-ROCE-MTU"),
    "sys/kernel/debug/mlx5/*/cc_params/*": _NIC_ECN,
    "sys/kernel/config/bnxt_re/*": _NIC_ECN,
    "sys/class/infiniband/*/tc/*/traffic_class": ("QOS-TC-OVERRIDE", "QOS-JOB-TC"),
    "sys/class/infiniband/*/ports/*/hw_counters/*": ("QOS-GLOBAL-PAUSE",),
    "sys/class/infiniband/*/ports/*/*lid": ("IB-DUPLICATE",),  # lid, sm_lid: the HCA's LID and its SM's
    "sys/class/infiniband/*/ports/*": ("TOPO-MISSING", "LINK-SPEED", "TOPO-DEGRADED", "QOS-HEADROOM", "HOST-GID"),
    "sys/class/infiniband/*/device/*": ("FLEET-DRIVER",),  # uevent: the driver
    "sys/class/infiniband/*": ("FLEET-FIRMWARE",),  # fw_ver, board_id
    "sys/module/*/version": ("FLEET-DRIVER",),
    # --- a switch's files (switches/<switch>/<os>/...) ---------------------------------------------------------
    "sonic/config_db.json": (*_SWITCH_QOS, *_PORT_LINK),
    "sonic/appl_db.json": _CABLING,
    "sonic/show-version.txt": ("FLEET-OS",),
    "sonic/state_db.json": ("FLEET-FIRMWARE",),  # TRANSCEIVER_INFO / TRANSCEIVER_FIRMWARE_INFO: switch optics
    "sonic/show-interfaces-status.txt": ("LINK-SPEED", "TOPO-DEGRADED", "QOS-HEADROOM", "QOS-CABLE-LEN"),
    "eos/running-config.txt": (*_SWITCH_QOS, *_PORT_LINK),
    "eos/show-interfaces.json": ("QOS-MTU", "LINK-SPEED", "TOPO-DEGRADED", "TOPO-UPLINKS", "QOS-GLOBAL-PAUSE"),
    "eos/show-version.*": ("FLEET-OS",),
    "eos/show-lldp-neighbors-detail.json": _CABLING,
    "nvue/config.yaml": (*_SWITCH_QOS, *_PORT_LINK),
    "nvue/lldpcli.json": _CABLING,
    "nvue/nv-show-system.txt": ("FLEET-OS",),
    "junos/show-interfaces.json": ("QOS-MTU", "LINK-SPEED", "TOPO-DEGRADED", "TOPO-UPLINKS"),
    "junos/show-lldp-neighbors-detail.json": _CABLING,
    # --- the bundle root -----------------------------------------------------------------------------------------
    "plan/cabling.csv": (*_CABLING, "COVERAGE", "QOS-CABLE-LEN"),
    "plan/topology.dot": (*_CABLING, "COVERAGE"),
    "plan/ibnetdiscover.txt": ("TOPO-DEGRADED",),
    "ib/ibnetdiscover.txt": ("TOPO-MISSING", "TOPO-UNEXPECTED", "TOPO-MISWIRED", "TOPO-DEGRADED", "IB-DUPLICATE"),
    "ib/iblinkinfo.txt": ("TOPO-DEGRADED", "TOPO-MISSING", "IB-MTU"),
    "ib/perfquery.txt": ("IB-COUNTERS",),
    "ib/ibqueryerrors.txt": ("IB-COUNTERS",),
    "ib/sminfo*": ("IB-SM",),
    "scheduler/env/*": _JOBS,
    "scheduler/*": _JOBS,
}

_DEVICE = re.compile(r"(?:hosts|switches)/[^/]+/(.+)")


@cache
def checks_for(path: str) -> tuple[str, ...]:
    """The checks whose inputs come from ``path`` (bundle-relative), in table order without repeats; ``()`` when
    the table has no pattern for it. The first pattern that matches decides."""
    device = _DEVICE.fullmatch(path)
    rel = device.group(1) if device else path
    for pattern, ids in NOT_CHECKED.items():
        if fnmatchcase(rel, pattern):
            return tuple(dict.fromkeys(ids))
    return ()
