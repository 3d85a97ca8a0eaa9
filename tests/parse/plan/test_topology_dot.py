"""PTM ``topology.dot``: golden over the Cumulus documentation sample, DOT variants, errors with lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError
from unifab.parse.plan import topology_dot
from unifab.parse.plan.cabling import PlannedCable

GOLDEN = Path(__file__).parent / "golden"
SAMPLE = Path("vendor-docs") / "ptmctl_d_and_topology_dot.txt"


def sample_dot(samples: Path) -> str:
    """The ``/etc/ptm.d/topology.dot`` part of the sample (it is followed by ``ptmctl`` outputs)."""
    text = (samples / SAMPLE).read_text()
    return text[: text.index("\n}\n") + 3]


def test_golden(samples: Path, golden: Any) -> None:
    dot = topology_dot.parse(sample_dot(samples), "topology.dot")
    golden(GOLDEN / "ptm_topology_dot.json", dot)
    assert dot.planned() == (
        PlannedCable("cumulus-1", "swp44", "cumulus-2", "swp20", None),
        PlannedCable("cumulus-1", "swp46", "cumulus-2", "swp22", None),
    )
    assert dot.cables[1].attributes == {"LLDP": "match_type=portdescr"}
    assert [c.line for c in dot.cables] == [3, 4]


def test_dot_variants() -> None:
    text = """/* fabric plan */
strict graph "fabric" {
  LLDP1="match_type=ifname"   // a PTM template
  graph [label="x"]; node [shape=box]
  "spine1":"swp1" -- "leaf1":"swp49" [LLDP="lldptmpl=LLDP1", BFD="upMinTx=300"];
  spine1:swp2 -- leaf2:swp49;
  "leaf1"  # a node statement plans nothing
  "odd \\"name\\"":"swp1" -- "x":"e1/1"
}
"""
    dot = topology_dot.parse(text)
    assert dot.name == "fabric"
    assert dot.attributes == {"LLDP1": "match_type=ifname"}
    assert [(c.a_node, c.a_port, c.z_node, c.z_port, c.line) for c in dot.cables] == [
        ("spine1", "swp1", "leaf1", "swp49", 5),
        ("spine1", "swp2", "leaf2", "swp49", 6),
        ('odd "name"', "swp1", "x", "e1/1", 8),
    ]
    assert dot.cables[0].attributes == {"LLDP": "lldptmpl=LLDP1", "BFD": "upMinTx=300"}


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "'graph' or 'digraph'"),
        ("tree G {}", 1, "'graph' or 'digraph'"),
        ('graph G {\n "a":"p1" -- "b"\n}', 2, "'b' has no port"),
        ('graph G {\n "a":"p1" -- "b":"p2" -- "c":"p3"\n}', 2, "one cable per edge"),
        ('graph G {\n "a":"p1" -- "b":"p2"\n', 2, "'}' to close"),
        ('graph G {\n "a":"p1" -- "b":"p2" [LLDP]\n}', 2, "'=' after attribute"),
        ('graph G {\n "a":"p1" -- "b":"p2"\n}\ngraph H {}', 4, "nothing after"),
        ('graph G {\n "a":"p1" -- "b":"p2" @\n}', 2, "unexpected character '@'"),
    ],
)
def test_errors_name_the_line(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        topology_dot.parse(text, "plan/topology.dot")
    assert err.value.source == "plan/topology.dot"
    assert err.value.line == line
    assert expected in err.value.expected
