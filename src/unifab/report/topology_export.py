"""The discovered topology in the schedulers' own formats: Slurm ``topology.conf``, Kubernetes node labels, a rail map.

Schedulers place jobs by a topology file people keep by hand. These exports are built only from what was
**seen on the wire** (links whose sources include ``lldp``: LLDP or ``ibnetdiscover``), so the file says how
the fabric is cabled, not how it was meant to be; the command refuses to export while topology errors are open.

How the tree is built (linear in links):

- **Blocks**: leaves that share hosts form one block (a scalable unit): the connected components of the
  host-leaf graph. In a rail-optimised cluster the eight rail leaves of an SU share every host of the SU, so
  the SU is one block, and every pair of its hosts is one leaf hop apart on every rail. A block is named after
  its leaves with their ``-r<i>`` rail suffix dropped (``leaf-su1``) when that gives one name, else after its
  first leaf.
- **NVLink domains** (Slurm's block plugin only): on GB200-class systems the GPUs of one multi-node NVLink domain
  report one ``<ClusterUUID>.<CliqueId>`` (``nvidia-smi -q``, Fabric), which is the scheduler's tightest unit:
  those hosts are one block, named ``nvl-<first 8 hex of the ClusterUUID>-<CliqueId>``. Hosts that report no
  domain keep their scalable unit's block.
- **Levels above**: a switch above a level (linked to its switches, not to hosts) is grouped with the other
  switches that reach exactly the same children, because redundant spines (all spines of a plane, all planes)
  are one hop for the scheduler; the group is one logical switch named by its members' common name (``spine``
  for ``spine01`` to ``spine08``) or its first member.

Every device name that enters a file passes :func:`unifab.render.host_script.host_name` (the project's one gate
for host and switch names); Kubernetes label values pass the label-value grammar. A name that fails is left
out and reported, never written.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from unifab.checks.topology_common import leaf_rail, nic_rail
from unifab.errors import UsageError
from unifab.model import Endpoint, Fabric
from unifab.parse.sched.hostlist import compress
from unifab.render.host_script import host_name

__all__ = [
    "HEADER",
    "LABEL_PREFIX",
    "RAIL_MAP_FORMAT",
    "Level",
    "Tree",
    "block_levels",
    "hostlist",
    "k8s_labels",
    "rail_map",
    "slurm_block",
    "slurm_tree",
    "tree_of",
]

HEADER = "# Written by unifab topo export from the discovered topology; unifab rewrites this file.\n"
RAIL_MAP_FORMAT = "unifab-rail-map/1"
LABEL_PREFIX = "topology.unifab.io"
_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
_NODE_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")  # a Kubernetes node name (DNS subdomain)
_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_RAIL_SUFFIX = re.compile(r"-r\d+$")


@dataclass(frozen=True, slots=True)
class Level:
    """One logical switch of the tree: its name, the physical switches it stands for, and what hangs below it."""

    name: str
    members: tuple[str, ...]  # physical switches, sorted
    nodes: tuple[str, ...] = ()  # hosts (level 0 only)
    children: tuple[str, ...] = ()  # logical switches one level down
    nvlink_domain: str | None = None  # a block of one NVLink domain: its "<ClusterUUID>.<CliqueId>"


@dataclass(slots=True)
class Tree:
    """The scheduler's view: logical switches by level (0 = blocks of hosts), and names refused by the gate."""

    levels: list[list[Level]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "kind name: why"

    @property
    def blocks(self) -> list[Level]:
        return self.levels[0] if self.levels else []


def hostlist(names: Iterable[str]) -> str:
    """Slurm's compressed, sorted host list (``gpu[001-003,007],login1``), as ``scontrol show hostlistsorted``."""
    return compress(names, sort=True)


def _checked(kind: str, name: str, refused: list[str]) -> bool:
    try:
        host_name(name)
    except UsageError as exc:
        refused.append(f"{kind} {name!r}: {exc}")
        return False
    return True


def _common_name(members: list[str], strip_rail: bool) -> str:
    """``leaf-su1`` for ``leaf-su1-r0..r7``; ``spine`` for ``spine01..08``; else the first member."""
    if strip_rail:
        stems = {_RAIL_SUFFIX.sub("", m) for m in members}
        if len(stems) == 1:
            return stems.pop()
    if len(members) > 1:
        stems = {_stem(m) for m in members}
        if len(stems) == 1 and (stem := stems.pop()):
            return stem
    return members[0]


def _stem(name: str) -> str:
    """The name without its trailing number and separator: ``spine`` for ``spine07``."""
    m = _NUMBERED.match(name)
    return (m.group(1) if m else name).rstrip("-_.")


def tree_of(fabric: Fabric) -> Tree:
    """The levels of the discovered tree (see the module docstring)."""
    tree = Tree()
    neighbours: dict[str, set[str]] = defaultdict(set)  # switch -> switches it is cabled to
    host_leaves: dict[str, set[str]] = defaultdict(set)
    for link in fabric.links:
        if "lldp" not in link.sources:
            continue
        a, b = link.a.node, link.b.node
        a_host, b_host = a in fabric.hosts, b in fabric.hosts
        if a_host and b_host:
            continue
        if a_host or b_host:
            host, leaf = (a, b) if a_host else (b, a)
            host_leaves[host].add(leaf)
        else:
            neighbours[a].add(b)
            neighbours[b].add(a)
    hosts = sorted(h for h in host_leaves if _checked("host", h, tree.refused))
    leaves = sorted({leaf for h in hosts for leaf in host_leaves[h]})
    parent = {leaf: leaf for leaf in leaves}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for h in hosts:
        first, *rest = sorted(host_leaves[h])
        for other in rest:
            ra, rb = find(first), find(other)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, list[str]] = defaultdict(list)
    for leaf in leaves:
        members[find(leaf)].append(leaf)
    nodes: dict[str, list[str]] = defaultdict(list)
    for h in hosts:
        nodes[find(min(host_leaves[h]))].append(h)
    level0 = []
    for root, group in sorted(members.items()):
        if all(_checked("switch", s, tree.refused) for s in group):
            level0.append(Level(_common_name(group, strip_rail=True), tuple(group), nodes=tuple(nodes[root])))
    _unique_names(level0)
    tree.levels.append(level0)
    placed = set(leaves)
    current = level0
    while current:
        owner = {s: lv.name for lv in current for s in lv.members}
        reach: dict[str, set[str]] = defaultdict(set)  # upper switch -> logical children
        for s, lv_name in owner.items():
            for up in neighbours[s]:
                if up not in placed and up not in fabric.hosts:
                    reach[up].add(lv_name)
        by_children: dict[frozenset[str], list[str]] = defaultdict(list)
        for up, children in reach.items():
            if _checked("switch", up, tree.refused):
                by_children[frozenset(children)].append(up)
        upper = [
            Level(_common_name(sorted(ups), strip_rail=False), tuple(sorted(ups)), children=tuple(sorted(children)))
            for children, ups in sorted(by_children.items(), key=lambda kv: sorted(kv[1]))
        ]
        _unique_names(upper, taken={lv.name for level in tree.levels for lv in level})
        if not upper:
            break
        tree.levels.append(upper)
        placed.update(s for lv in upper for s in lv.members)
        current = upper
    return tree


def _unique_names(levels: list[Level], taken: set[str] | None = None) -> None:
    """Logical names must be unique in the file: a clash falls back to the first member's name."""
    seen = set(taken or ())
    for i, lv in enumerate(levels):
        name = lv.name if lv.name not in seen else lv.members[0]
        n = 2
        while name in seen:
            name, n = f"{lv.members[0]}-{n}", n + 1
        seen.add(name)
        if name != lv.name:
            levels[i] = Level(name, lv.members, lv.nodes, lv.children, lv.nvlink_domain)


def _members_comment(lv: Level) -> str:
    if lv.members == (lv.name,):
        return ""
    return f"# {lv.name}: {hostlist(lv.members)}\n"


def slurm_tree(tree: Tree) -> str:
    """``topology.conf`` for Slurm's ``topology/tree`` plugin."""
    out = [HEADER]
    for depth, level in enumerate(tree.levels):
        for lv in level:
            out.append(_members_comment(lv))
            if depth == 0:
                out.append(f"SwitchName={lv.name} Nodes={hostlist(lv.nodes)}\n")
            else:
                out.append(f"SwitchName={lv.name} Switches={','.join(lv.children)}\n")
    return "".join(out)


def block_levels(tree: Tree, fabric: Fabric | None = None) -> list[Level]:
    """The blocks of Slurm's block plugin: one per NVLink domain the fabric's hosts report, then the scalable
    units of the tree with those hosts taken out (an SU left without hosts is dropped)."""
    domains: dict[str, list[str]] = defaultdict(list)
    if fabric is not None:
        for name in sorted(fabric.hosts):
            domain = fabric.hosts[name].nvlink_domain
            if domain is not None and _checked("host", name, tree.refused):
                domains[domain].append(name)
    out: list[Level] = []
    for domain, hosts in sorted(domains.items()):
        uuid, _, clique = domain.rpartition(".")
        name = f"nvl-{uuid[:8]}-{clique}"
        if _checked("NVLink domain", name, tree.refused):
            out.append(Level(name, (), nodes=tuple(hosts), nvlink_domain=domain))
    placed = {h for lv in out for h in lv.nodes}
    for lv in tree.blocks:
        rest = tuple(h for h in lv.nodes if h not in placed)
        if rest:
            out.append(Level(lv.name, lv.members, nodes=rest))
    _unique_names(out)
    return out


def slurm_block(tree: Tree, fabric: Fabric | None = None) -> str:
    """``topology.conf`` for Slurm's ``topology/block`` plugin (23.11 and later): a block per NVLink domain the
    hosts report, else per scalable unit (:func:`block_levels`)."""
    out = [HEADER]
    for lv in block_levels(tree, fabric):
        if lv.nvlink_domain is not None:
            out.append(f"# {lv.name}: NVLink domain {lv.nvlink_domain}\n")
        else:
            out.append(_members_comment(lv))
        out.append(f"BlockName={lv.name} Nodes={hostlist(lv.nodes)}\n")
    return "".join(out)


def _host_rails(fabric: Fabric) -> dict[str, dict[int, tuple[str, str, Endpoint]]]:
    """host -> rail -> (leaf, leaf port, host end) for discovered host-leaf cables whose rail is known."""
    out: dict[str, dict[int, tuple[str, str, Endpoint]]] = defaultdict(dict)
    for link in fabric.links:
        if "lldp" not in link.sources:
            continue
        for host_end, leaf_end in ((link.a, link.b), (link.b, link.a)):
            if host_end.node in fabric.hosts and leaf_end.node not in fabric.hosts:
                rail = leaf_rail(leaf_end.node)
                if rail is None:
                    rail = nic_rail(fabric, host_end)
                if rail is not None:
                    out[host_end.node].setdefault(rail, (leaf_end.node, leaf_end.port, host_end))
    return out


def k8s_labels(fabric: Fabric, tree: Tree) -> tuple[list[dict[str, object]], list[str]]:
    """Node objects carrying only placement labels (``kubectl apply`` merges them), and the names refused."""
    refused = list(tree.refused)
    upper = {child: lv.name for lv in (tree.levels[1] if len(tree.levels) > 1 else []) for child in lv.children}
    rails = _host_rails(fabric)
    items: list[dict[str, object]] = []
    for block in tree.blocks:
        for host in block.nodes:
            if not _NODE_NAME.fullmatch(host):
                refused.append(f"host {host!r}: not a Kubernetes node name (lowercase letters, digits, '-', '.')")
                continue
            labels = {f"{LABEL_PREFIX}/block": block.name}
            if block.name in upper:
                labels[f"{LABEL_PREFIX}/spine-group"] = upper[block.name]
            for rail, (leaf, _port, _end) in sorted(rails.get(host, {}).items()):
                labels[f"{LABEL_PREFIX}/rail{rail}-leaf"] = leaf
            bad = [v for v in labels.values() if not _LABEL_VALUE.fullmatch(v)]
            if bad:
                refused.append(f"host {host!r}: label value {bad[0]!r} is not a valid Kubernetes label value")
                continue
            items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": host, "labels": labels}})
    return items, refused


def rail_map(fabric: Fabric) -> dict[str, object]:
    """Per host, each rail's NIC, the GPUs closest to it and the leaf port it is cabled to (as discovered)."""
    hosts: dict[str, list[dict[str, object]]] = {}
    for host, by_rail in sorted(_host_rails(fabric).items()):
        gpus_by_nic: dict[str, list[int]] = defaultdict(list)
        for gpu in fabric.hosts[host].gpus.values():
            if gpu.nic:
                gpus_by_nic[gpu.nic].append(gpu.index)
        rows = []
        for rail, (leaf, port, end) in sorted(by_rail.items()):
            nic = fabric.nic_at(end)
            rdma = nic.rdma_dev if nic else None
            rows.append(
                {
                    "rail": rail,
                    "fabric": fabric.end_fabric(end) or "roce",  # a storage HCA on an IB leaf is not a RoCE rail
                    "netdev": nic.netdev if nic else end.port,
                    "rdma_dev": rdma,
                    "gpus": sorted(gpus_by_nic.get(rdma or "", [])),
                    "leaf": leaf,
                    "leaf_port": port,
                }
            )
        hosts[host] = rows
    return {"format": RAIL_MAP_FORMAT, "hosts": hosts}
