"""The discovered topology as Slurm tree/block files, Kubernetes labels and a rail map.

The expected tree is computed here independently of the exporter, from the twin's plan/cabling.csv (which
cables exist) — not from the exporter's own grouping code.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pytest

from unifab.api import load_snapshot
from unifab.model import Endpoint, Fabric, Host, Link, Nic, Port, Switch
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
    assert tx.hostlist(["a01", "a001"]) == "a001,a01"  # widths differ: two lists
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
