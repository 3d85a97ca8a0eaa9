"""plan/cabling.csv and plan/topology.dot in one bundle: merged, a disagreement is one INPUT finding."""

from __future__ import annotations

from pathlib import Path

from unifab.collect.bundle import load_bundle
from unifab.model import Endpoint, link_id

CSV = "a_node,a_port,z_node,z_port,cable_m\nleaf1,swp49,spine1,swp1,30\nleaf1,swp50,spine2,swp1,30\n"


def _bundle(tmp_path: Path, dot: str, csv: str | None = CSV) -> Path:
    plan = tmp_path / "b" / "plan"
    plan.mkdir(parents=True)
    if csv is not None:
        (plan / "cabling.csv").write_text(csv)
    (plan / "topology.dot").write_text(dot)
    return tmp_path / "b"


def _lid(a: str, b: str) -> str:
    return link_id(Endpoint(*a.split(":")), Endpoint(*b.split(":")))


def test_dot_alone_is_the_plan(samples: Path, tmp_path: Path) -> None:
    text = (samples / "vendor-docs" / "ptmctl_d_and_topology_dot.txt").read_text()
    fabric = load_bundle(_bundle(tmp_path, text[: text.index("\n}\n") + 3], csv=None))
    assert {lk.id for lk in fabric.links} == {
        _lid("cumulus-1:swp44", "cumulus-2:swp20"),
        _lid("cumulus-1:swp46", "cumulus-2:swp22"),
    }
    assert all(lk.sources == frozenset({"plan"}) for lk in fabric.links)
    assert fabric.input_findings == []


def test_merge_agreeing_and_extra_cables(tmp_path: Path) -> None:
    dot = 'graph G {\n "spine1":"swp1" -- "leaf1":"swp49"\n "leaf2":"swp49" -- "spine1":"swp2"\n}\n'
    fabric = load_bundle(_bundle(tmp_path, dot))
    links = {lk.id: lk for lk in fabric.links}
    assert set(links) == {
        _lid("leaf1:swp49", "spine1:swp1"),
        _lid("leaf1:swp50", "spine2:swp1"),
        _lid("leaf2:swp49", "spine1:swp2"),
    }
    assert links[_lid("leaf1:swp49", "spine1:swp1")].cable_m == 30  # the CSV's length survives the merge
    assert fabric.input_findings == []


def test_disagreement_keeps_the_csv_and_names_both_files(tmp_path: Path) -> None:
    dot = 'graph G {\n  "leaf1":"swp50" -- "spine3":"swp7"\n}\n'
    fabric = load_bundle(_bundle(tmp_path, dot))
    assert _lid("leaf1:swp50", "spine3:swp7") not in {lk.id for lk in fabric.links}
    [f] = fabric.input_findings
    assert f.check == "INPUT-UNREADABLE"
    assert f.message == (
        "plan/topology.dot:2: cable leaf1:swp50 -- spine3:swp7 disagrees with plan/cabling.csv, which cables "
        "leaf1:swp50 to spine2:swp1; the plan/cabling.csv cable is kept"
    )
    assert f.entities == ("file:plan/topology.dot", "file:plan/cabling.csv")


def test_broken_dot_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(tmp_path, 'graph G {\n "a":"p" -- "b"\n}\n'))
    [f] = fabric.input_findings
    assert f.check == "INPUT-UNREADABLE"
    assert f.message.startswith('plan/topology.dot:2: expected "node":"port" on both ends')
    assert len(fabric.links) == 2  # the CSV still counts
