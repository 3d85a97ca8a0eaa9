"""The exported ``topology.conf`` is accepted by a real ``slurmctld``, whose view matches the discovered cabling.

The expected switch tree is computed here from the twin's plan/cabling.csv (hosts that share their leaves are
one scalable unit; the spines reach them all), not from the exporter.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from slurm_service import private_slurmctld

from unifab.parse.host import nvidia_smi_q
from unifab.twin.generate import generate


def _expected(bundle: Path) -> dict[str, set[str]]:
    """frozen set of an SU's leaves -> its hosts."""
    host_leaves: dict[str, set[str]] = defaultdict(set)
    with (bundle / "plan" / "cabling.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["a_node"].startswith("gpu"):
                host_leaves[row["a_node"]].add(row["z_node"])
    units: dict[str, set[str]] = defaultdict(set)
    for host, leaves in host_leaves.items():
        (stem,) = {re.sub(r"-r\d+$", "", leaf) for leaf in leaves}
        units[stem].add(host)
    return units


def test_real_slurmctld_accepts_the_tree(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    generate(bundle, gpus=256, seed=6, su_hosts=8)  # 32 hosts, 4 SUs
    work = tmp_path / "slurm"
    work.mkdir()
    export = subprocess.run(
        [sys.executable, "-m", "unifab", "topo", "export", str(bundle), "--slurm", str(work / "topology.conf"), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert export.returncode == 0, export.stderr
    with private_slurmctld(work, nodes="gpu[001-032]", extra=("TopologyPlugin=topology/tree",)) as ctld:
        shown = ctld.scontrol("show", "topology")
        hostnames = {
            name: set(ctld.scontrol("show", "hostnames", nodes).split())
            for name, nodes in re.findall(r"SwitchName=(\S+) Level=0 .*?Nodes=(\S+)", shown)
        }
        uppers = {
            name: set(ctld.scontrol("show", "hostnames", children).split())  # Slurm compresses the list
            for name, children in re.findall(r"SwitchName=(\S+) Level=1 .*?Switches=(\S+)", shown)
        }
    assert hostnames == _expected(bundle), shown
    assert uppers == {"spine": set(hostnames)}, shown


UUID = "6d9fbfd8-1c2b-4e3a-9f10-0123456789ab"


def _with_nvlink_domain(bundle: Path, hosts: list[str], domain: tuple[str, int]) -> None:
    """Give ``hosts`` GPUs in one NVLink domain: the Fabric section nvidia-smi -q -x prints on GB200-class trays."""
    for host in hosts:
        path = bundle / "hosts" / host / "cmd" / "nvidia-smi-q.xml"
        record = nvidia_smi_q.parse(path.read_text(), str(path))
        gpus = tuple(
            replace(
                g,
                fabric_state="Completed",
                fabric_status="Success",
                fabric_cluster_uuid=domain[0],
                fabric_clique_id=domain[1],
            )
            for g in record.gpus
        )
        path.write_text(nvidia_smi_q.dump(replace(record, gpus=gpus)))


def _blocks(text: str) -> dict[str, str]:
    """BlockName -> Nodes of a topology/block file, every line checked against the block plugin's grammar
    (``BlockName=<name> Nodes=<hostlist>``, comments; Slurm 23.11 topology.conf(5))."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"BlockName=([A-Za-z0-9_.-]+) Nodes=(\S+)", line)
        assert m is not None, line
        assert m.group(1) not in out, f"duplicate block {m.group(1)}"
        out[m.group(1)] = m.group(2)
    return out


def test_block_file_syntax_with_nvlink_domains_and_units(tmp_path: Path) -> None:
    """The installed Slurm (22.05) has no topology/block plugin (23.11+): the file's grammar is checked here and
    each Nodes= list is expanded by the real scontrol, which must give every host exactly once."""
    bundle = tmp_path / "bundle"
    generate(bundle, gpus=256, seed=6, su_hosts=8)  # 32 hosts, 4 SUs of 8
    hosts = [f"gpu{i:03d}" for i in range(1, 33)]
    _with_nvlink_domain(bundle, hosts[:18], (UUID, 4))  # one 18-tray NVLink domain across SU1-SU3
    work = tmp_path / "slurm"
    work.mkdir()
    conf = work / "block.conf"
    export = subprocess.run(
        [sys.executable, "-m", "unifab", "topo", "export", str(bundle), "--slurm-block", str(conf), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert export.returncode == 0, export.stderr
    blocks = _blocks(conf.read_text())
    with private_slurmctld(work, nodes="gpu[001-032]") as ctld:
        expanded = {name: ctld.scontrol("show", "hostnames", nodes).split() for name, nodes in blocks.items()}
    units = _expected(bundle)
    expected = {"nvl-6d9fbfd8-4": set(hosts[:18])}
    for stem, members in units.items():
        if members - set(hosts[:18]):
            expected[stem] = members - set(hosts[:18])
    assert {name: set(nodes) for name, nodes in expanded.items()} == expected
    assert sorted(h for nodes in expanded.values() for h in nodes) == hosts  # each host in exactly one block
