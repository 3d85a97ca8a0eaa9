"""Every capture of a supported format in tests/data/wild/ and tests/data/samples/ parses, and reads right.

The tables below are the reviewed map from each data file to its format (path globs relative to
tests/data). A file must be matched by exactly one entry of MAPPED, TREES, UNREAD or NOT_SUPPORTED, so
a new capture cannot slip in unread, and every glob must match a file, so the tables cannot go stale.
UNREAD lists captures of a supported format that unifab does not read, with the reason; the test checks
they still fail, so an entry is removed once its parser learns the shape.

Where a capture comes with expected values (ntc-templates' own parse, NAME.yml beside it) the fields
unifab reads are compared with them; KEY_FIELDS pins a few more values read off the captures by eye.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import yaml

from unifab.collect.problems import takes_problems
from unifab.errors import ParseError, ParseProblems
from unifab.parse.registry import FORMATS
from unifab.parse.switch.eos_cli_text import STATUS_STATE, expand_ifname, speed_column_to_mbps

DATA = Path(__file__).resolve().parents[1] / "data"

# glob (relative to tests/data) -> format name
MAPPED: dict[str, str] = {
    # --- wild corpus ---
    "wild/host/*ethtool_S_*.txt": "ethtool-S",
    "wild/host/*ibv_devinfo*.txt": "ibv-devinfo",
    "wild/host/*lldpcli_show_neighbors*.txt": "lldpctl",
    "wild/switch/eos/ntc_arista_eos_show_*.raw": "eos-cli",
    "wild/switch/junos/*_show_interfaces*": "junos-interfaces",
    "wild/switch/nxos/*show_interface*": "nxos-interfaces",
    "wild/switch/sonic/*_state_db_*.json": "sonic-state-db",
    # --- samples: host ---
    "samples/host/dmesg_xid*.log": "xid",
    "samples/host/ethtool_m_*.txt": "ethtool-m",
    "samples/host/ibdev2netdev_*.txt": "ibdev2netdev",
    "samples/host/link_flap_carrier_changes_ip_monitor.txt": "ip-monitor",
    "samples/host/lldpcli_neighbors_*.json": "lldpcli",
    "samples/host/lldpcli_neighbors_details_*.keyvalue.txt": "lldpcli",
    "samples/host/lldpcli_neighbors_details_host.txt": "lldpctl",
    "samples/host/lldpcli_neighbors_details_host.xml": "lldpcli-xml",
    "samples/host/lsmod_*.txt": "lsmod",
    "samples/host/lspci_vvv_*.txt": "lspci",
    "samples/host/mlnx_qos_*.txt": "mlnx-qos",
    "samples/host/nccl_debug_*.txt": "nccl-debug",
    "samples/host/nccl_ras_*.txt": "nccl-ras",
    "samples/host/nccl_topo_*.xml": "nccl-topo",
    "samples/host/ntc_linux_ip_link_show.raw": "ip-link",
    "samples/host/nvidia_smi_nvlink_status_*.txt": "nvlink-status",
    "samples/host/nvidia_smi_q_x_*.xml": "nvidia-smi-q",
    "samples/host/rdma_statistic_*.txt": "rdma-statistic",
    "samples/host/show_gids_*.txt": "show-gids",
    "samples/host/sysfs_class_infiniband_h100_flat.txt": "hw-counters",
    "samples/host/ubuntu-16.04_edge01_ip_-d_address_show.txt": "ip-link",
    "samples/host/ubuntu-16.04_edge01_lldpctl.txt": "lldpctl",
    # --- samples: InfiniBand, scheduler ---
    "samples/ib/ibnetdiscover_sim_rail_*.txt": "ibnetdiscover",
    "samples/ib/ibnetdiscover_g_sim_rail_*.txt": "ibnetdiscover",
    "samples/ib/ibnetdiscover_p_sim_rail_*.txt": "ibnetdiscover-ports",
    "samples/ib/ibnetdiscover_l_sim_rail_*.txt": "ibnodes",
    "samples/ib/ibswitches_sim*.txt": "ibnodes",
    "samples/ib/ibhosts_sim*.txt": "ibnodes",
    "samples/ib/ibstat_sim*.txt": "ibstat",
    "samples/ib/ibstatus_*.txt": "ibstat",
    "samples/ib/saquery_*.txt": "saquery",
    "samples/ib/iblinkinfo_*.txt": "iblinkinfo",
    "samples/ib/ibqueryerrors_*.txt": "ibqueryerrors",
    "samples/ib/perfquery_*.txt": "perfquery",  # perfquery_series_sim/<unix time>.txt too: one round each
    "samples/ib/sminfo_*.txt": "sminfo",
    "samples/scheduler/slurm_scontrol_show_job_*.txt": "slurm-jobs",
    "samples/scheduler/slurm_squeue*": "slurm-jobs",
    "samples/scheduler/slurmrestd_*_job_*.json": "slurm-jobs",
    "samples/scheduler/slurm_scontrol_show_node_*.txt": "slurm-nodes",
    "samples/scheduler/slurm_sinfo*": "slurm-nodes",
    "samples/scheduler/slurmrestd_*_node_*.json": "slurm-nodes",
    # --- samples: switches ---
    "samples/switch/eos/eos-4.23.5M_*.json": "eos-json",
    "samples/switch/eos/eos_show_interfaces_vEOS.json": "eos-json",
    "samples/switch/eos/eos_show_lldp_neighbors_detail.json": "eos-json",
    "samples/switch/eos/suzieq_gather_eos/*.output": "eos-json",
    "samples/switch/eos/*.cfg": "eos-config",
    "samples/switch/eos/eos_avd_qos_input_hostvars.yml": "avd-qos",
    "samples/switch/eos/ntc_arista_eos_*.raw": "eos-cli",
    "samples/switch/eos/eos_show_version_text_*.txt": "eos-version",
    "samples/switch/nvue/nvue_nv_show_system_*.txt": "nvue-system",
    "samples/switch/sonic/sonic_show_version_*.txt": "sonic-version",
    "samples/switch/sonic/sonic_show_interfaces_status_*.txt": "sonic-interfaces-status",
    "samples/switch/junos/*lldp_neighbors*": "junos-lldp",
    "samples/switch/junos/*show_interface*": "junos-interfaces",
    "samples/switch/nvue/*_net_show_lldp_json.json": "cumulus-lldp",
    "samples/switch/nvue/*_vtysh_show_int_*.txt": "cumulus-interfaces",
    "samples/switch/nvue/suzieq_texttfsm_cl_interfaces.txt": "cumulus-interfaces",
    "samples/switch/nvue/suzieq_texttfsm_lldpd.txt": "lldpctl",
    "samples/switch/nxos/*lldp_neighbors*": "nxos-lldp",
    "samples/switch/nxos/*show_interface*": "nxos-interfaces",
    "samples/switch/sonic/dell_enterprise_sonic_cli_*.cfg": "sonic-cli",
    "samples/switch/sonic/sonic_appl_db_buffer_tables_*.json": "sonic-appl-buffers",
    "samples/switch/sonic/sonic_appl_db_lldp_entry_table_*.json": "sonic-lldp",
    "samples/switch/sonic/sonic_buffers_rendered_*.json": "sonic-config-db",
    "samples/switch/sonic/sonic_config_db_*.json": "sonic-config-db",
    "samples/switch/sonic/sonic_qos_rendered_*.json": "sonic-config-db",
    "samples/switch/sonic/sonic_counters_db_*.json": "sonic-counters-db",
    "samples/switch/sonic/sonic_state_db_*.json": "sonic-state-db",
    "samples/switch/sonic/sonic_mellanox_asic_table_params.json": "sonic-asic-table",
}

# directory (relative to tests/data) -> tree format; its files are not matched one by one
TREES: dict[str, str] = {
    "samples/host/sysfs_class_infiniband_h100": "hw-counters",
}

# exact path -> (format, why unifab does not read it); the test checks it still raises ParseError
UNREAD: dict[str, tuple[str, str]] = {
    "samples/scheduler/slurm_hostlist_expansion.txt": (
        "hostlist",
        "a transcript of several `scontrol show hostnames` runs; the format reads one expression "
        "(tests/parse/sched/test_hostlist.py reads each case)",
    ),
    "samples/switch/eos/eos_show_interfaces_counters_queue_detail.json": (
        "eos-json",
        "ANTA test-fixture wrapper {command, eapi_revision, fixtures}; each fixtures.<case> is an eAPI "
        "reply that reads as eos-json (tests/parse/switch/test_eos_json.py)",
    ),
    "samples/switch/eos/eos_show_priority_flow_control_counters.json": (
        "eos-json",
        "ANTA test-fixture wrapper, as above",
    ),
    "samples/switch/eos/eos_show_qos_interfaces_ecn_counters_queue.json": (
        "eos-json",
        "ANTA test-fixture wrapper, as above",
    ),
    "samples/vendor-docs/ptmctl_d_and_topology_dot.txt": (
        "ptmctl",
        "a topology.dot file and ptmctl tables in one document; each part reads with its own format "
        "(tests/parse/plan/test_ptmctl.py, test_topology_dot.py)",
    ),
}

# glob -> why it is not a format unifab reads
NOT_SUPPORTED: dict[str, str] = {
    "samples/host/lldpcli_show_interfaces_host.json": "lldpcli show interfaces (local ports), not neighbours",
    "samples/ib/ibsim_*.net": "ibsim fabric description (input of the simulator)",
    "samples/peers/*": "SuzieQ's own outputs, kept to compare findings",
    "samples/repro/*": "scripts and configs that made the generated samples",
    "samples/telemetry/*": "exporter metrics, not device state",
    "samples/switch/sonic/sonic_cli_outputs_pfc_pfcwd_ecn_queue.txt": "SONiC `show pfc/pfcwd/ecn/queue` text",
    "samples/switch/sonic/sonic_database_config_mock.json": "database_config.json (DB instance map)",
    "samples/switch/sonic/sonic_mellanox_sn5600_pg_profile_lookup.ini": "buffer profile lookup table (unifab.qos)",
    "samples/vendor-docs/netq_check_*.txt": "NetQ check reports",
    "samples/vendor-docs/nvue_*show*.txt": "NVUE `nv show` text, not `nv config show -o yaml`",
}

_NOT_DATA = (".source.txt",)


def _data_files() -> list[str]:
    """Every data file under wild/ and samples/, relative to tests/data (sidecars, indexes, the
    ntc-templates expected parses and the files of tree directories left out)."""
    out = []
    for root in ("wild", "samples"):
        for path in sorted((DATA / root).rglob("*")):
            rel = path.relative_to(DATA).as_posix()
            if not path.is_file() or rel.endswith(_NOT_DATA) or path.name == "INDEX.md":
                continue
            if root == "wild" and path.suffix == ".yml":
                continue  # expected values of the capture beside it
            if any(rel.startswith(tree + "/") for tree in TREES):
                continue
            out.append(rel)
    return out


FILES = _data_files()


def _mapped(rel: str) -> list[str]:
    return [fmt for pattern, fmt in MAPPED.items() if fnmatchcase(rel, pattern)]


def _matches(rel: str) -> list[str]:
    hits = [f"MAPPED {p}" for p in MAPPED if fnmatchcase(rel, p)]
    hits += [f"UNREAD {rel}"] if rel in UNREAD else []
    hits += [f"NOT_SUPPORTED {p}" for p in NOT_SUPPORTED if fnmatchcase(rel, p)]
    return hits


def test_every_file_has_one_entry() -> None:
    problems = {rel: hits for rel in FILES if len(hits := _matches(rel)) != 1}
    assert not problems, problems


def test_no_entry_is_stale() -> None:
    stale = [p for p in [*MAPPED, *NOT_SUPPORTED] if not any(fnmatchcase(rel, p) for rel in FILES)]
    stale += [p for p in UNREAD if p not in FILES]
    stale += [d for d in TREES if not (DATA / d).is_dir()]
    assert not stale
    assert set(MAPPED.values()) | {f for f, _ in UNREAD.values()} <= set(FORMATS)


def test_every_unread_capture_is_justified_in_the_corpus_index() -> None:
    """The issue's rule: a capture that does not read is listed, with its reason, in the corpus index."""
    text = (DATA / "wild" / "INDEX.md").read_text()
    section = text.split("## Captures of a supported format that unifab does not read", 1)[1]
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| (.+?) \|$", section, re.MULTILINE)
    assert {path: fmt for path, fmt, _why in rows} == {path: fmt for path, (fmt, _why) in UNREAD.items()}
    assert all(len(why) > 20 for _path, _fmt, why in rows)


def _parse(rel: str, fmt: str) -> Any:
    return FORMATS[fmt].parser()((DATA / rel).read_text(encoding="utf-8"), rel)


@pytest.mark.parametrize("rel", [rel for rel in FILES if _mapped(rel)])
def test_mapped_file_parses(rel: str) -> None:
    for fmt in _mapped(rel):
        record = _parse(rel, fmt)
        if isinstance(record, (tuple, list, dict)):
            assert record, f"{rel} as {fmt} read nothing"


@pytest.mark.parametrize("rel", [rel for rel in FILES if _mapped(rel)])
def test_mapped_file_reads_whole(rel: str) -> None:
    """Read leniently (parsers that skip bad rows, docs/parsers.md), a capture of the corpus skips nothing: the
    partial reading never hides a row that the corpus has and unifab misreads."""
    for fmt in _mapped(rel):
        parser = FORMATS[fmt].parser()
        if not takes_problems(parser):
            continue
        log = ParseProblems(rel)
        parser((DATA / rel).read_text(encoding="utf-8"), rel, log)  # type: ignore[call-arg]
        assert log.problems == [], [str(p) for p in log.problems]


@pytest.mark.parametrize("tree", sorted(TREES))
def test_tree_parses(tree: str) -> None:
    root = DATA / tree
    files = {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
    assert FORMATS[TREES[tree]].tree_parser()(files, tree)


@pytest.mark.parametrize("rel", sorted(UNREAD))
def test_unread_still_fails(rel: str) -> None:
    fmt, _why = UNREAD[rel]
    with pytest.raises(ParseError) as err:
        _parse(rel, fmt)
    assert err.value.source == rel


# --- reading right -----------------------------------------------------------------------------------


def _none(value: str) -> str | None:
    return value or None


def _eos_status(row: dict[str, str]) -> dict[str, object]:
    admin, oper = STATUS_STATE[row["status"]]
    return {
        "name": expand_ifname(row["port"]),
        "description": _none(row["name"]),
        "admin_up": admin,
        "oper_up": oper,
        "speed_mbps": speed_column_to_mbps(row["speed"]),
    }


def _eos_lldp(row: dict[str, str]) -> dict[str, object]:
    return {
        "local_port": expand_ifname(row["local_interface"]),
        "system_name": row["neighbor_name"],
        "port_id": row["neighbor_interface"],
    }


def _if_name_descr_mtu(row: dict[str, str]) -> dict[str, object]:
    return {
        "name": row["interface"],
        "description": _none(row["description"]),
        "mtu": int(row["mtu"]) if row["mtu"] else None,
    }


# ntc-templates expected parse (NAME.yml beside NAME.raw) -> what unifab's record must hold for each row
EXPECTED: dict[str, tuple[str, Callable[[dict[str, str]], dict[str, object]]]] = {
    "wild/switch/eos/ntc_arista_eos_show_interfaces_status_port_channel.yml": ("eos-cli", _eos_status),
    "wild/switch/eos/ntc_arista_eos_show_lldp_neighbors2.yml": ("eos-cli", _eos_lldp),
    "wild/switch/junos/ntc_juniper_junos_show_interfaces_irb.yml": ("junos-interfaces", _if_name_descr_mtu),
    "wild/switch/nxos/ntc_cisco_nxos_show_interface10_vfc.yml": ("nxos-interfaces", _if_name_descr_mtu),
}


def test_every_expected_file_is_checked() -> None:
    found = {p.relative_to(DATA).as_posix() for p in (DATA / "wild").rglob("*.yml")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("yml", sorted(EXPECTED))
def test_reads_what_ntc_templates_reads(yml: str) -> None:
    fmt, convert = EXPECTED[yml]
    rows = yaml.safe_load((DATA / yml).read_text())["parsed_sample"]
    records = _parse(yml.removesuffix(".yml") + ".raw", fmt)
    assert len(records) == len(rows)
    for record, row in zip(records, rows, strict=True):
        want = convert({k: str(v) for k, v in row.items()})
        assert {k: getattr(record, k) for k in want} == want


# path -> (format, record count, [(record key, field, value)]); key = interface name, neighbour's local
# port, or counter name (field None)
KEY_FIELDS: dict[str, tuple[str, int, list[tuple[str, str | None, object]]]] = {
    "wild/switch/eos/ntc_arista_eos_show_interfaces_portchannel.raw": (
        "eos-cli",
        13,
        [
            ("Ethernet47", "mtu", 9214),
            ("Ethernet47", "speed_mbps", 1000),
            ("Ethernet51", "mtu", 1500),  # IP MTU 1500 bytes (default), BW 1000000 kbit
            ("Ethernet52", "speed_mbps", 10000),
            ("Loopback0", "mtu", 65535),
            ("Loopback2", "admin_up", False),
            ("Port-Channel1", "speed_mbps", None),  # Full-duplex, Unconfigured
            ("Port-Channel2", "speed_mbps", 2000),  # not a member's 1Gb/s
            ("Port-Channel2", "kind", "bond"),
            ("Vlan16", "mtu", 1500),
            ("Vlan4094", "oper_up", False),
        ],
    ),
    "wild/switch/eos/ntc_arista_eos_show_interfaces2.raw": (
        "eos-cli",
        8,
        [
            ("Ethernet1", "mtu", 1500),
            ("Ethernet1", "description", '"Test interface Et1"'),
            ("Ethernet3", "mtu", 9214),
            ("Vlan500", "description", "VLAN500"),
            ("Vlan500", "mtu", 1500),
        ],
    ),
    "wild/switch/eos/ntc_arista_eos_show_lldp_neighbors_header_line.raw": (
        "eos-cli",
        4,
        [
            ("Ethernet3/1", "system_name", "tg104.sjc.aristanetworks.com"),
            ("Ethernet3/1", "port_id", "Ethernet3/2"),
            ("Management1/1", "port_id", "1/1"),
        ],
    ),
    "wild/switch/eos/ntc_arista_eos_show_interfaces_status_flags.raw": (
        "eos-cli",
        8,
        [("Ethernet1", "description", None), ("Ethernet52", "description", "Core: drxx.yul01")],
    ),
    "wild/switch/junos/ntc_juniper_junos_show_interfaces2.raw": (
        "junos-interfaces",
        1,
        [("xe-0/1/0", "mtu", 9114), ("xe-0/1/0", "speed_mbps", 10000)],
    ),
    "wild/switch/junos/qfx_show_interfaces_logical_unit_prompt_realistic.txt": (
        "junos-interfaces",
        1,
        [("et-0/0/10.0", "mtu", 9000), ("et-0/0/10.0", "oper_up", True), ("et-0/0/10.0", "kind", "subinterface")],
    ),
    "wild/switch/nxos/ucs_fi_nxos_5.0_show_interface_vfc3509.txt": (
        "nxos-interfaces",
        1,
        [("vfc3509", "description", "server 9/1, VHBA fc0"), ("vfc3509", "oper_up", True)],
    ),
    "wild/switch/nxos/ntc_cisco_nxos_show_interface12_svi.raw": (
        "nxos-interfaces",
        2,
        [("Vlan1", "admin_up", False), ("Vlan1", "mtu", 1500), ("mgmt0", "mtu", 1500)],
    ),
    "wild/switch/nxos/ntc_cisco_nxos_show_interface13_tunnel.raw": ("nxos-interfaces", 1, [("Tunnel1", "mtu", 1476)]),
    "wild/switch/nxos/ntc_cisco_nxos_show_interface11_nve.raw": (
        "nxos-interfaces",
        1,
        [("nve1", "mtu", 9216), ("nve1", "kind", "vxlan")],
    ),
    "wild/host/ethtool_S_mlx5_grep_blocks_realistic.txt": (
        "ethtool-S",
        15,
        [("rx_prio3_pause", None, 41927), ("tx_prio3_pause_duration", None, 2914), ("rx_prio3_discards", None, 0)],
    ),
    "wild/host/lolyu_aoi_ethtool_S_tg3_fenced.txt": (
        "ethtool-S",
        16,
        [("rx_octets", None, 314843626), ("rx_out_length_errors", None, 0)],
    ),
    "wild/host/cumulus_docs_sudo_lldpcli_show_neighbors_excerpt.txt": (
        "lldpctl",
        3,
        [("eth0", "system_name", "PIONEERMS22"), ("eth0", "port_id", "swp47"), ("swp2", "system_name", "MSP-1")],
    ),
}


def _key(record: object) -> str:
    return str(getattr(record, "name", None) or getattr(record, "local_port", ""))


@pytest.mark.parametrize("rel", sorted(KEY_FIELDS))
def test_key_fields(rel: str) -> None:
    fmt, count, fields = KEY_FIELDS[rel]
    parsed = _parse(rel, fmt)
    assert len(parsed) == count
    by_key = parsed if isinstance(parsed, dict) else {_key(r): r for r in parsed}
    for key, field, value in fields:
        got = by_key[key] if field is None else getattr(by_key[key], field)
        assert got == value, (key, field)
