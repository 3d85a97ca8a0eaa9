"""``plan/cabling.csv``."""

from __future__ import annotations

import pytest

from unifab.errors import ParseError
from unifab.parse.plan import cabling


def test_round_trip_with_and_without_length() -> None:
    text = (
        "a_node,a_port,z_node,z_port,cable_m\n"
        "gpu001,eth0,leaf-su1-r0,Ethernet0,3\n"
        "leaf-su1-r0,Ethernet256,spine01,Ethernet0,\n"
    )
    cables = cabling.parse(text)
    assert cables[0] == cabling.PlannedCable("gpu001", "eth0", "leaf-su1-r0", "Ethernet0", 3.0)
    assert cables[1].cable_m is None
    assert cabling.parse(cabling.dump(cables)) == cables


def test_four_column_header_is_accepted() -> None:
    assert len(cabling.parse("a_node,a_port,z_node,z_port\nh,eth0,s,Ethernet0\n")) == 1


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("node,port\n", 1),
        ("a_node,a_port,z_node,z_port\nh,eth0,s\n", 2),
        ("a_node,a_port,z_node,z_port,cable_m\nh,eth0,s,Ethernet0,3\nh,eth1,s,Ethernet8,far\n", 3),
    ],
)
def test_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        cabling.parse(text, "plan/cabling.csv")
    assert exc.value.line == line
