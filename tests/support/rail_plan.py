"""What a twin's plan says its rail map has, per fabric kind: the rail map tests derive their expectations from it.

``plan/cabling.csv`` gives the cables (a host only ever starts one; a leaf is cabled to a host; a spine is a
non-leaf cabled to a leaf); the IB switches are the switches of ``plan/ibnetdiscover.txt``."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from unifab.parse.ib import ibnetdiscover

__all__ = ["Plan", "plan_of"]


@dataclass(frozen=True)
class Plan:
    """What the twin's plan says the rail map has, per fabric kind."""

    leaves: dict[str, set[str]]
    spines: dict[str, set[str]]
    uplinks: dict[str, Counter[str]]  # kind -> leaf -> planned leaf-to-spine cables


def plan_of(bundle: Path) -> Plan:
    """The plan of the bundle at ``bundle`` (a twin's: its hosts start the cables, leaves end them)."""
    with (bundle / "plan" / "cabling.csv").open(newline="") as fh:
        rows = [(r["a_node"], r["z_node"]) for r in csv.DictReader(fh)]
    ib_plan = bundle / "plan" / "ibnetdiscover.txt"
    ib_switches: set[str] = set()
    if ib_plan.is_file():
        topology = ibnetdiscover.parse(ib_plan.read_text())
        ib_switches = {str(ibnetdiscover.node_name(n.kind, n.description)) for n in topology.nodes if n.kind != "ca"}
    hosts = {a for a, _ in rows} - {z for _, z in rows}  # a host only ever starts a cable
    leaves = {z for a, z in rows if a in hosts}
    uplinks = Counter(a for a, z in rows if a in leaves and z not in leaves)
    spines = {z for a, z in rows if a in leaves and z not in leaves}

    def kind(name: str) -> str:
        return "ib" if name in ib_switches else "roce"

    out = Plan({}, {}, {})
    for leaf in leaves:
        out.leaves.setdefault(kind(leaf), set()).add(leaf)
        out.uplinks.setdefault(kind(leaf), Counter())[leaf] = uplinks[leaf]
    for spine in spines:
        out.spines.setdefault(kind(spine), set()).add(spine)
    return out
