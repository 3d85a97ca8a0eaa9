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
from pathlib import Path

from slurm_service import private_slurmctld

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
