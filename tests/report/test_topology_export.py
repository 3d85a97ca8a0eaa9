"""The discovered topology as Slurm tree/block files, Kubernetes labels and a rail map.

The expected tree is computed here independently of the exporter, from the twin's plan/cabling.csv (which
cables exist) — not from the exporter's own grouping code.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.api import load_snapshot
from unifab.model import Endpoint, Fabric, Host, Link, Nic, Port, Switch
from unifab.parse.sched.hostlist import expand
from unifab.report import topology_export as tx
from unifab.twin.generate import generate


@pytest.fixture(scope="module")
def clean_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "bundle"
    generate(out, gpus=384, seed=5, su_hosts=16)  # 48 hosts: SUs of 16, 16 and 16
    return out


def _planned(bundle: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """host -> its leaves, and spine -> its leaves, from the plan."""
    host_leaves: dict[str, set[str]] = defaultdict(set)
    spine_leaves: dict[str, set[str]] = defaultdict(set)
    with (bundle / "plan" / "cabling.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            a, z = row["a_node"], row["z_node"]
            if a.startswith("gpu"):
                host_leaves[a].add(z)
            elif z.startswith("spine"):
                spine_leaves[z].add(a)
    return host_leaves, spine_leaves


def test_hostlist_compresses_like_slurm() -> None:
    assert tx.hostlist(["gpu003", "gpu001", "gpu002", "gpu007"]) == "gpu[001-003,007]"
    assert tx.hostlist(["gpu1", "gpu10", "gpu2", "login", "node09"]) == "gpu[1-2,10],login,node09"
    assert tx.hostlist(["a01", "a001"]) == "a[01,001]"  # widths differ: two ranges, each keeps its width
    assert expand("a[01,001]") == ("a01", "a001")
    assert tx.hostlist(["x5"]) == "x5"


def test_tree_matches_the_cabling(clean_twin: Path) -> None:
    fabric = load_snapshot(clean_twin).fabric
    tree = tx.tree_of(fabric)
    host_leaves, spine_leaves = _planned(clean_twin)
    by_leaf_set: dict[frozenset[str], set[str]] = defaultdict(set)
    for host, leaves in host_leaves.items():
        by_leaf_set[frozenset(leaves)].add(host)
    assert tree.refused == []
    got = {frozenset(b.members): set(b.nodes) for b in tree.blocks}
    assert got == dict(by_leaf_set)
    assert len(tree.levels) == 2
    (spines,) = tree.levels[1]  # every spine reaches every SU: one logical switch
    assert set(spines.members) == set(spine_leaves)
    assert set(spines.children) == {b.name for b in tree.blocks}
    text = tx.slurm_tree(tree)
    assert text.startswith(tx.HEADER)
    for block in tree.blocks:
        assert f"SwitchName={block.name} Nodes={tx.hostlist(block.nodes)}\n" in text
        assert re.fullmatch(r"leaf-su\d+", block.name)
    assert f"SwitchName=spine Switches={','.join(sorted(b.name for b in tree.blocks))}\n" in text
    assert tx.slurm_block(tree).count("BlockName=") == len(tree.blocks)


def test_rail_swap_is_exported_as_cabled(tmp_path: Path) -> None:
    out = tmp_path / "b"
    result = generate(out, gpus=128, seed=2, scenarios=("rail-swap",))
    fabric = load_snapshot(out).fabric
    rails = tx.rail_map(fabric)["hosts"]
    assert isinstance(rails, dict)
    (swap,) = [m for m in result.truth["misconfigurations"] if m["check"] == "TOPO-RAIL"]
    host, nic_a = swap["subject"]["a"].split(":")
    nic_b = swap["subject"]["with"].removeprefix("link:").split("--")[0].split(":")[1]
    with (out / "plan" / "cabling.csv").open(encoding="utf-8") as fh:
        planned = {row["a_port"]: row["z_node"] for row in csv.DictReader(fh) if row["a_node"] == host}
    seen = {row["netdev"]: row["leaf"] for row in rails[host]}
    assert {row["fabric"] for row in rails[host]} == {"roce"}
    assert seen[nic_a] == planned[nic_b] and seen[nic_b] == planned[nic_a]  # the map follows the wire
    assert {k: v for k, v in seen.items() if k not in (nic_a, nic_b)} == {
        k: v for k, v in planned.items() if k not in (nic_a, nic_b)
    }


def _tiny(host: str, leaf: str = "leaf-a-r0") -> Fabric:
    nic = Nic(host, "eth0", "mlx5_0", 9000, None)
    port = Port(leaf, "Ethernet0", 9100, 400_000, "up", None)
    return Fabric(
        hosts={host: Host(host, {"eth0": nic})},
        switches={leaf: Switch(leaf, "sonic", "x", {"Ethernet0": port})},
        links=[Link(Endpoint(host, "eth0"), Endpoint(leaf, "Ethernet0"), frozenset({"lldp"}))],
    )


@pytest.mark.parametrize("name", ["gpu1 Nodes=evil", "gpu1\nSwitchName=x", "gpu[1-2]", "-rf", "a#b"])
def test_hostile_host_names_never_enter_the_file(name: str) -> None:
    tree = tx.tree_of(_tiny(name))
    assert tree.blocks == [] or all(name not in b.nodes for b in tree.blocks)
    assert any(repr(name) in why for why in tree.refused)
    assert name not in tx.slurm_tree(tree)


def test_hostile_switch_name_refused() -> None:
    tree = tx.tree_of(_tiny("gpu001", leaf="leaf Switches=all"))
    assert tree.blocks == [] and "leaf Switches=all" not in tx.slurm_tree(tree)
    assert any("leaf Switches=all" in why for why in tree.refused)


def test_k8s_labels_valid_and_names_checked(clean_twin: Path) -> None:
    fabric = load_snapshot(clean_twin).fabric
    items, refused = tx.k8s_labels(fabric, tx.tree_of(fabric))
    assert refused == [] and len(items) == len(fabric.hosts)
    labels = items[0]["metadata"]["labels"]  # type: ignore[index]
    assert labels[f"{tx.LABEL_PREFIX}/block"] == "leaf-su1"
    assert labels[f"{tx.LABEL_PREFIX}/spine-group"] == "spine"
    assert {k for k in labels if k.endswith("-leaf")} == {f"{tx.LABEL_PREFIX}/rail{i}-leaf" for i in range(8)}
    upper = _tiny("GPU001")  # a valid Slurm name but not a Kubernetes node name
    items, refused = tx.k8s_labels(upper, tx.tree_of(upper))
    assert items == [] and "GPU001" in refused[0]


# --- the block plugin: NVLink domains, else scalable units ------------------------------------------------

UUID_A = "6d9fbfd8-1c2b-4e3a-9f10-0123456789ab"
UUID_B = "0aa1bb2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"


def _block_lines(text: str) -> dict[str, str]:
    assert text.startswith(tx.HEADER)
    out = {}
    for line in text.splitlines()[1:]:
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"BlockName=([A-Za-z0-9_.-]+) Nodes=(\S+)", line)
        assert m is not None, line
        assert m.group(1) not in out
        out[m.group(1)] = m.group(2)
    return out


def test_blocks_are_scalable_units_without_nvlink_domains(clean_twin: Path) -> None:
    fabric = load_snapshot(clean_twin).fabric
    tree = tx.tree_of(fabric)
    host_leaves, _ = _planned(clean_twin)
    units: dict[str, set[str]] = defaultdict(set)
    for host, leaves in host_leaves.items():
        (stem,) = {re.sub(r"-r\d+$", "", leaf) for leaf in leaves}
        units[stem].add(host)
    blocks = _block_lines(tx.slurm_block(tree, fabric))
    assert blocks == {name: tx.hostlist(hosts) for name, hosts in units.items()}
    assert tx.slurm_block(tree, fabric) == tx.slurm_block(tree)


def test_nvlink_domains_make_the_blocks_and_the_rest_keeps_its_unit(clean_twin: Path) -> None:
    fabric = load_snapshot(clean_twin).fabric
    names = sorted(fabric.hosts)
    domain = dict.fromkeys(names[:18], f"{UUID_A}.7") | dict.fromkeys(names[18:36], f"{UUID_B}.32766")
    for h, d in domain.items():  # 18-host domains (GB200 NVL72: 18 trays) that cross the 16-host SUs
        fabric.hosts[h] = replace(fabric.hosts[h], nvlink_domain=d)
    text = tx.slurm_block(tx.tree_of(fabric), fabric)
    host_leaves, _ = _planned(clean_twin)
    rest: dict[str, set[str]] = defaultdict(set)
    for host, leaves in host_leaves.items():
        if host not in domain:
            rest[re.sub(r"-r\d+$", "", min(leaves))].add(host)
    assert _block_lines(text) == {
        "nvl-6d9fbfd8-7": tx.hostlist(names[:18]),
        "nvl-0aa1bb2c-32766": tx.hostlist(names[18:36]),
        **{name: tx.hostlist(hosts) for name, hosts in rest.items()},
    }
    assert f"# nvl-6d9fbfd8-7: NVLink domain {UUID_A}.7\n" in text
    assert len(rest) == 1  # the two domains took SU1 and SU2 whole; SU3 keeps its other hosts
