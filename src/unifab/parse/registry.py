"""Named formats for ``unifab parse FORMAT FILE``: each maps to a parser module imported on demand."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ALIASES", "FORMATS", "Format", "Parser", "TreeParser", "closest", "help_listing", "lookup"]


# A record is whatever typed dataclass the format's module returns; ``to_jsonable`` prints any of them.
Parser = Callable[[str, str], object]
TreeParser = Callable[[dict[str, str], str], object]


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    module: str
    summary: str
    tree: bool = False  # accepts a directory (module has ``parse_tree(files, source)``)
    function: str = "parse"

    def parser(self) -> Parser:
        """The format's ``parse(text, source)``, imported on first use (``unifab --help`` stays fast)."""
        parse: Parser = getattr(importlib.import_module(self.module), self.function)
        return parse

    def tree_parser(self) -> TreeParser:
        """The format's ``parse_tree({relative path: text}, source)`` (formats read from a directory)."""
        parse_tree: TreeParser = importlib.import_module(self.module).parse_tree
        return parse_tree


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("mlnx-qos", "unifab.parse.host.mlnx_qos", "mlnx_qos -i <netdev> output"),
        Format(
            "sysfs-ecn",
            "unifab.parse.host.sysfs_ecn",
            "/sys/class/net/<if>/ecn tree (a directory, or 'path: value' lines)",
            tree=True,
        ),
        Format(
            "traffic-class",
            "unifab.parse.host.traffic_class",
            "/sys/class/infiniband/<dev>/tc/<p>/traffic_class",
        ),
        Format("ibdev2netdev", "unifab.parse.host.ibdev2netdev", "ibdev2netdev output"),
        Format(
            "lldpcli",
            "unifab.parse.host.lldpcli",
            "lldpcli show neighbors details (-f json0, json or keyvalue)",
        ),
        Format(
            "sonic-config-db",
            "unifab.collect.switch_view",
            "SONiC CONFIG_DB (any shape) as the vendor-neutral per-port view the checks read",
            function="parse_sonic",
        ),
        Format("sonic-tables", "unifab.parse.switch.sonic_config_db", "SONiC CONFIG_DB tables, shape-normalized"),
        Format("sonic-qos", "unifab.parse.switch.sonic_qos", "SONiC CONFIG_DB resolved to per-port QoS"),
        Format("cabling-csv", "unifab.parse.plan.cabling", "plan/cabling.csv"),
        Format(
            "topology-dot", "unifab.parse.plan.topology_dot", "Cumulus PTM /etc/ptm.d/topology.dot (plan/topology.dot)"
        ),
        Format("ptmctl", "unifab.parse.plan.ptmctl", "Cumulus PTM ptmctl [-d|-l] tables: per-port cable pass/fail"),
        Format(
            "netbox-cables",
            "unifab.parse.plan.netbox_cables",
            "NetBox/Nautobot /api/dcim/cables/ JSON (a page or a list)",
        ),
        Format(
            "junos-lldp", "unifab.parse.switch.junos", "Junos show lldp neighbors [detail] (| display json, or CLI)"
        ),
        Format(
            "eos-config",
            "unifab.collect.switch_view",
            "Arista EOS running-config as the vendor-neutral per-port view the checks read",
            function="parse_eos",
        ),
        Format("eos-config-raw", "unifab.parse.switch.eos_config", "Arista EOS running-config, EOS's own records"),
        Format(
            "eos-json",
            "unifab.parse.switch.eos_json",
            "Arista EOS eAPI JSON (interfaces, lldp, PFC/ECN/queue counters, version) or a SuzieQ gather file",
        ),
        Format(
            "sonic-counters-db", "unifab.parse.switch.sonic_counters_db", "SONiC COUNTERS_DB: PFC, queue, PG, watchdog"
        ),
        Format("sonic-lldp", "unifab.parse.switch.sonic_lldp", "SONiC APPL_DB LLDP_ENTRY_TABLE neighbours"),
        Format("sonic-version", "unifab.parse.switch.sonic_version", "SONiC show version: image, platform, HwSKU"),
        Format(
            "sonic-interfaces-status",
            "unifab.parse.switch.sonic_interfaces_status",
            "SONiC show interfaces status: lanes, speed, MTU, FEC, oper/admin state per port",
        ),
        Format("eos-version", "unifab.parse.switch.eos_version_text", "Arista EOS show version (CLI text)"),
        Format("nvue-system", "unifab.parse.switch.nvue_system", "Cumulus NVUE nv show system: the running release"),
        Format(
            "sonic-state-db",
            "unifab.parse.switch.sonic_state_db",
            "SONiC STATE_DB: oper speed, MTU, FEC, buffer limits",
        ),
        Format(
            "nvue",
            "unifab.collect.switch_view",
            "Cumulus NVUE nv config show -o yaml as the vendor-neutral per-port view the checks read",
            function="parse_nvue",
        ),
        Format("nvue-raw", "unifab.parse.switch.nvue", "Cumulus NVUE nv config show -o yaml, NVUE's own records"),
        Format("ibnetdiscover", "unifab.parse.ib.ibnetdiscover", "ibnetdiscover [-g] topology file (InfiniBand)"),
        Format("ibnetdiscover-ports", "unifab.parse.ib.ibnetdiscover_ports", "ibnetdiscover -p ports report"),
        Format(
            "ibnodes",
            "unifab.parse.ib.ibnodes",
            "ibswitches / ibhosts / ibrouters / ibnodes, ibnetdiscover -l|-S|-H|-R node lists",
        ),
        Format("iblinkinfo", "unifab.parse.ib.iblinkinfo", "iblinkinfo [-l] [-p]: every port's link and state"),
        Format("perfquery", "unifab.parse.ib.perfquery", "perfquery [-x] [-a [-l]]: PMA port counters"),
        Format("ibqueryerrors", "unifab.parse.ib.ibqueryerrors", "ibqueryerrors: ports past the error thresholds"),
        Format("sminfo", "unifab.parse.ib.sminfo", "sminfo: the subnet manager's LID, GUID, priority, state"),
        Format("ibstat", "unifab.parse.ib.ibstat", "ibstat / ibstatus: local CAs and their ports"),
        Format("saquery", "unifab.parse.ib.saquery", "saquery NR <lid>: SA node records (node descriptions)"),
        Format("slurm-jobs", "unifab.parse.sched.slurm_jobs", "squeue [--json] / scontrol show job / slurmrestd jobs"),
        Format(
            "slurm-nodes", "unifab.parse.sched.slurm_nodes", "sinfo --json|-R|-N -l / scontrol show node / slurmrestd"
        ),
        Format("k8s-pods", "unifab.parse.sched.k8s_pods", "kubectl get pods -o json|yaml, pods grouped into jobs"),
        Format(
            "job-env",
            "unifab.parse.sched.nccl_env",
            "a rank's environment: /proc/<pid>/environ or sacct --env-vars",
            function="parse_env",
        ),
        Format(
            "batch-script",
            "unifab.parse.sched.nccl_env",
            "the exports of a Slurm batch script",
            function="parse_script",
        ),
        Format("hostlist", "unifab.parse.sched.hostlist", "Slurm hostlist expressions (scontrol show hostnames)"),
        Format("eos-cli", "unifab.parse.switch.eos_cli_text", "Arista EOS CLI text: show interfaces [status], lldp"),
        Format("sonic-cli", "unifab.parse.switch.sonic_cli", "Dell Enterprise SONiC sonic-cli running-configuration"),
        Format("avd-qos", "unifab.parse.switch.avd_qos", "Arista AVD structured config YAML: QoS maps, profiles"),
        Format("sonic-appl-buffers", "unifab.parse.switch.sonic_appl_buffers", "SONiC APPL_DB buffer tables"),
        Format(
            "sonic-asic-table", "unifab.parse.switch.sonic_asic_table", "SONiC Mellanox ASIC_TABLE headroom parameters"
        ),
        Format("junos-interfaces", "unifab.parse.switch.junos", "Junos show interfaces (| display json, or CLI text)"),
        Format("nxos-lldp", "unifab.parse.switch.nxos", "NX-OS show lldp neighbors | json native, or detail text"),
        Format("nxos-interfaces", "unifab.parse.switch.nxos", "NX-OS show interface brief | json native, or text"),
        Format("cumulus-lldp", "unifab.parse.switch.cumulus", "Cumulus net show lldp json (lldpd json0), or lldpctl"),
        Format("cumulus-interfaces", "unifab.parse.switch.cumulus", "FRR vtysh show interface [+ ip -d address show]"),
        Format("lldpctl", "unifab.parse.host.lldpctl_text", "lldpctl / lldpcli show neighbors plain text"),
        Format("ip-link", "unifab.parse.host.ip_link", "ip [-d] link show / ip [-d] address show"),
        Format(
            "ethtool-m",
            "unifab.parse.host.ethtool_module",
            "ethtool -m <if>: SFF-8636/CMIS/SFF-8472 module EEPROM and DOM",
        ),
        Format("lsmod", "unifab.parse.host.lsmod", "lsmod / /proc/modules: loaded kernel modules"),
        Format("lspci", "unifab.parse.host.lspci", "lspci -vvv [-nn] [-D]: PCIe devices, link cap/status, ACS, NUMA"),
        Format(
            "nvidia-smi-q", "unifab.parse.host.nvidia_smi_q", "nvidia-smi -q -x XML: per-GPU PCIe, ECC, remapped rows"
        ),
        Format("xid", "unifab.parse.host.xid", "kernel log (dmesg/journalctl/syslog): NVIDIA Xid events"),
        Format(
            "nvidia-smi-topo", "unifab.parse.host.nvidia_smi_topo", "nvidia-smi topo -m: GPU/NIC matrix and affinity"
        ),
        Format(
            "nccl-topo", "unifab.parse.host.nccl_topo", "NCCL topology XML (NCCL_TOPO_DUMP_FILE dump or NCCL_TOPO_FILE)"
        ),
        Format("ip-monitor", "unifab.parse.host.ip_monitor", "ip -ts monitor link events + carrier counters"),
        Format("lldpcli-xml", "unifab.parse.host.lldpcli_xml", "lldpcli -f xml show neighbors details"),
        Format(
            "nccl-debug",
            "unifab.parse.host.nccl_debug",
            "NCCL_DEBUG=INFO log: NCCL version, NET/IB and NET/Socket selection",
        ),
        Format("nccl-ras", "unifab.parse.host.nccl_ras", "NCCL RAS client report: processes missing or dead"),
        Format("nvlink-status", "unifab.parse.host.nvlink_status", "nvidia-smi nvlink --status"),
        Format("show-gids", "unifab.parse.host.show_gids", "mlnx-tools show_gids output"),
        Format("ibv-devinfo", "unifab.parse.host.ibv_devinfo", "ibv_devinfo [-v] output"),
        Format(
            "hw-counters",
            "unifab.parse.host.hw_counters",
            "/sys/class/infiniband[/<dev>] port state and counters (directory, 'path: value' lines, or show_counters)",
            tree=True,
        ),
        Format("rdma-statistic", "unifab.parse.host.rdma_statistic", "rdma statistic show / mode output"),
        Format("ethtool-a", "unifab.parse.host.ethtool_pause", "ethtool -a <if>: 802.3x global pause settings"),
        Format("ethtool-S", "unifab.parse.host.ethtool_stats", "ethtool -S <if> output (flat counter map)"),
        Format(
            "sysfs-cc-params",
            "unifab.parse.host.cc_params",
            "/sys/kernel/debug/mlx5/<bdf>/cc_params (a directory, or 'name: value' lines)",
            tree=True,
        ),
        Format(
            "roce-tos",
            "unifab.parse.host.roce_tos",
            "rdma_cm configfs default_roce_tos/mode (a directory, 'path: value' lines, or cma_roce_tos output)",
            tree=True,
        ),
        Format(
            "bnxt-qos",
            "unifab.parse.host.bnxt_qos",
            "niccli getqos / bnxtqos get_qos output, or the bnxt_re cc configfs (a directory)",
            tree=True,
        ),
    )
}

# Other spellings people type: the tool's own name, or underscores where the registry has dashes.
ALIASES: dict[str, str] = {
    "niccli": "bnxt-qos",
    "bnxtqos": "bnxt-qos",
    "getqos": "bnxt-qos",
    "cc-params": "sysfs-cc-params",
    "ecn": "sysfs-ecn",
    "lldpcli-json": "lldpcli",
    "config-db": "sonic-config-db",
    "squeue": "slurm-jobs",
    "sinfo": "slurm-nodes",
    "dmesg": "xid",
    "ibnetdiscover-p": "ibnetdiscover-ports",
    "ibnetdiscover-l": "ibnodes",
    "ibswitches": "ibnodes",
    "ibhosts": "ibnodes",
    "ibrouters": "ibnodes",
    "ibstatus": "ibstat",
}


def _key(name: str) -> str:
    """One spelling for comparing names: lower case, dashes (``mlnx_qos`` = ``mlnx-qos``, ``ethtool-s`` = ``-S``)."""
    return name.strip().lower().replace("_", "-")


_BY_KEY: dict[str, str] = {_key(name): name for name in FORMATS} | {
    _key(alias): target for alias, target in ALIASES.items()
}


def lookup(name: str) -> Format | None:
    """The format called ``name`` in any accepted spelling (alias, ``_`` for ``-``, any case); ``None`` if unknown."""
    target = _BY_KEY.get(_key(name))
    return FORMATS[target] if target is not None else None


def closest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` registered names closest to an unknown ``name``, best first (for "did you mean")."""
    import difflib

    key = _key(name)
    matches = difflib.get_close_matches(key, list(_BY_KEY), n=n * 2, cutoff=0.5)
    prefixed = [k for k in _BY_KEY if key and (k.startswith(key) or key in k)]
    out: list[str] = []
    for k in [*matches, *prefixed]:
        if _BY_KEY[k] not in out:
            out.append(_BY_KEY[k])
    return out[:n]


def help_listing() -> str:
    """The formats as ``name — summary`` lines for ``unifab parse --help`` (generated, never hand-written)."""
    aliases: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    lines = []
    for name, spec in FORMATS.items():
        also = f" (also: {', '.join(aliases[name])})" if name in aliases else ""
        lines.append(f"{name}{also}: {spec.summary}")
    return "\n".join(lines)
