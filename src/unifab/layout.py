"""The bundle layout as data: every path unifab reads or writes in a bundle, in one place.

The readers (``collect/``), the live collectors (``collect/host_live.py``, ``collect/inventory.py``), the
twin's writers, ``--watch`` and the render preview take their paths from here; docs/bundle.md describes the
same layout for people. Switch configuration files belong to their platform (:mod:`unifab.platforms`).
Paths are POSIX strings relative to the bundle root, or to a device's directory where the name says so.
"""

from __future__ import annotations

__all__ = [
    "BNXT_QOS_DIR",
    "BNXT_RE",
    "BUNDLE_DIRS",
    "CABLING_CSV",
    "COLLECT_JSON",
    "COLLECT_MANIFEST",
    "DCGM_DIR",
    "DMESG",
    "ETHTOOL_A_DIR",
    "ETHTOOL_M_DIR",
    "ETHTOOL_S_DIR",
    "GPU_DRIVER",
    "HOSTS",
    "IBDEV2NETDEV",
    "IBNETDISCOVER",
    "IBV_DEVINFO",
    "IB_DIR",
    "INTENT",
    "IP_LINK",
    "JOB_ENV_DIR",
    "JOB_FILES",
    "KERNEL_LOG_DIR",
    "LLDPCLI",
    "LOG_SUFFIX",
    "LSMOD",
    "LSPCI",
    "MLNX_QOS_DIR",
    "MLX5_DEBUGFS",
    "NCCL_LOG_DIR",
    "NCCL_RAS_DIR",
    "NCCL_TOPO",
    "NVIDIA_SMI_Q",
    "NVIDIA_SMI_TOPO",
    "PLAN_DIR",
    "PORT",
    "RDMA_CM",
    "RDMA_STATISTIC",
    "SAQUERY",
    "SCHEDULER",
    "SHOW_GIDS",
    "STAGING_DIR",
    "SWITCHES",
    "SYS_IB",
    "SYS_MODULE",
    "SYS_NET",
    "TELEMETRY_DIR",
    "TELEMETRY_SUFFIX",
    "TOPOLOGY_DOT",
    "TRUTH",
    "TWIN_ORIGINALS",
    "UNAME",
    "WATCHED",
]

# --- the bundle root -------------------------------------------------------------------------------------
HOSTS = "hosts"  # hosts/<host>/...
SWITCHES = "switches"  # switches/<switch>/<platform directory>/...
PLAN_DIR = "plan"
CABLING_CSV = "plan/cabling.csv"
TOPOLOGY_DOT = "plan/topology.dot"
IB_DIR = "ib"
IBNETDISCOVER = "ib/ibnetdiscover.txt"
SAQUERY = "ib/saquery.txt"  # `saquery` (NodeRecords; `saquery NR <lid>` runs concatenated too): the SM's node names
SCHEDULER = "scheduler"
JOB_FILES = ("squeue.json", "scontrol-show-job.txt", "squeue.txt", "pods.json")  # under scheduler/
JOB_ENV_DIR = "scheduler/env"  # <job id>.env: one rank's environment
INTENT = "fabric.yaml"
TRUTH = "truth.json"  # twin bundles only
TWIN_ORIGINALS = "twin-originals"  # twin faults only: the files write_faults rewrote, as they were before
COLLECT_MANIFEST = "collect-manifest.json"  # unifab collect: per device its OS, when, ok/failed (+ why), stale
STAGING_DIR = ".unifab-staging"  # unifab collect: devices being written, renamed into place when complete
TELEMETRY_DIR = "telemetry"  # <device>.om: OpenMetrics counter samples with timestamps (docs/health.md)
TELEMETRY_SUFFIX = ".om"
KERNEL_LOG_DIR = "telemetry/kernel"  # <host>.log: `journalctl -k -o short-iso` (Xid events with wall-clock times)
NCCL_LOG_DIR = "telemetry/nccl"  # <job or rank>.log: NCCL_DEBUG=INFO|WARN output (completion errors, NCCL version)
NCCL_RAS_DIR = "telemetry/nccl-ras"  # [<job>/]<unix time>.txt: NCCL RAS client reports (unresponsive processes)
DCGM_DIR = "telemetry/dcgm"  # <host>.om: dcgm-exporter scrapes with timestamps (DCGM_FI_DEV_XID_ERRORS: Xid events)
LOG_SUFFIX = ".log"
BUNDLE_DIRS = (HOSTS, SWITCHES, PLAN_DIR, IB_DIR)  # a bundle has at least one of these
WATCHED = (HOSTS, SWITCHES, PLAN_DIR, SCHEDULER, IB_DIR, INTENT)  # what a change to means a re-check

# --- a device's directory (hosts/<host>/ or switches/<switch>/) --------------------------------------------
COLLECT_JSON = "collect.json"  # which collector read the device, when, and what it could not gather

# --- a host's directory, as the agent writes it and a live host has it under / -----------------------------
IBDEV2NETDEV = "cmd/ibdev2netdev.txt"
SHOW_GIDS = "cmd/show_gids.txt"
IBV_DEVINFO = "cmd/ibv_devinfo.txt"
RDMA_STATISTIC = "cmd/rdma-statistic.txt"
LSPCI = "cmd/lspci-vvv.txt"
LSMOD = "cmd/lsmod.txt"  # `lsmod` (or /proc/modules): loaded kernel modules (nvidia_peermem)
NVIDIA_SMI_Q = "cmd/nvidia-smi-q.xml"
NVIDIA_SMI_TOPO = "cmd/nvidia-smi-topo-m.txt"
NCCL_TOPO = "cmd/nccl-topo.xml"
DMESG = "cmd/dmesg.txt"
UNAME = "cmd/uname-r.txt"
LLDPCLI = "cmd/lldpcli.json"
IP_LINK = "cmd/ip-d-link.txt"  # `ip -d link show`: every netdev's maxmtu
MLNX_QOS_DIR = "cmd/mlnx_qos"  # <netdev>.txt
BNXT_QOS_DIR = "cmd/bnxt-qos"  # <netdev>.txt
ETHTOOL_S_DIR = "cmd/ethtool-S"  # <netdev>.txt
ETHTOOL_A_DIR = "cmd/ethtool-a"  # <netdev>.txt
ETHTOOL_M_DIR = "cmd/ethtool-m"  # <netdev>.txt
SYS_NET = "sys/class/net"
SYS_IB = "sys/class/infiniband"
RDMA_CM = "sys/kernel/config/rdma_cm"
BNXT_RE = "sys/kernel/config/bnxt_re"
MLX5_DEBUGFS = "sys/kernel/debug/mlx5"
SYS_MODULE = "sys/module"
PORT = 1  # the port read on every RDMA device (ConnectX and Thor expose one port per device)
GPU_DRIVER = "nvidia"
