"""NetBox/Nautobot cables JSON: the recorded pynetbox and pynautobot list pages, both termination shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.errors import ParseError
from unifab.parse.plan import netbox_cables
from unifab.parse.plan.cabling import PlannedCable
from unifab.parse.plan.netbox_cables import Termination

DATA = Path(__file__).resolve().parents[2] / "collect" / "data" / "netbox"


@pytest.mark.parametrize("name", ["pynetbox_cables.json", "pynautobot_cables.json"])
def test_recorded_legacy_pages(name: str) -> None:
    page = netbox_cables.parse((DATA / name).read_text(), name)
    assert (page.count, page.next, len(page.cables)) == (3, None, 3)
    first = page.cables[0]
    assert first.id == "1" and first.status == "connected" and first.length_m is None
    assert first.a == (Termination("dcim.consoleport", "tst1-test1", "Console"),)
    assert first.b == (Termination("dcim.consoleserverport", "tst1-test2", "Port 10"),)
    cables, skipped = netbox_cables.planned(page.cables)
    assert skipped == ()
    assert cables == (
        PlannedCable("tst1-test1", "Console", "tst1-test2", "Port 10", None),
        PlannedCable("tst1-test3", "Console", "tst1-test4", "Port 11", None),
        PlannedCable("tst1-test5", "Console", "tst1-test6", "Port 1", None),
    )


def test_recorded_single_cable_and_bare_list() -> None:
    results = json.loads((DATA / "pynetbox_cables.json").read_text())["results"]
    assert len(netbox_cables.parse(json.dumps(results)).cables) == 3
    assert netbox_cables.parse(json.dumps(results[2])).cables[0].b[0].name == "Port 1"


def _v3(cable_id: int, a: list[tuple[str, str]], b: list[tuple[str, str]], **extra: object) -> dict[str, object]:
    """A cable in NetBox >= 3.3's serializer shape (v3.3 release notes: ``termination_a`` object became the
    ``a_terminations`` list of ``{object_type, object_id, object}``). Written here: no recorded >= 3.3 cables
    page exists among public client fixtures (pynetbox's and pynautobot's are the legacy shape, used above)."""

    def ends(pairs: list[tuple[str, str]]) -> list[dict[str, object]]:
        return [
            {"object_type": "dcim.interface", "object_id": i, "object": {"name": n, "device": {"name": d}}}
            for i, (d, n) in enumerate(pairs)
        ]

    return {"id": cable_id, "a_terminations": ends(a), "b_terminations": ends(b), **extra}


def test_v3_terminations_lengths_trunks_and_skips() -> None:
    doc = {
        "count": 5,
        "next": None,
        "results": [
            _v3(1, [("gpu001", "eth0")], [("leaf-su1-r0", "Ethernet0")], length=10, length_unit={"value": "ft"}),
            _v3(2, [("a", "p1"), ("a", "p2")], [("b", "q1"), ("b", "q2")], status={"value": "planned"}),
            _v3(3, [("a", "p3")], [("b", "q3"), ("c", "q3")]),
            _v3(4, [("a", "p4")], [("b", "q4")], status="decommissioning"),
            {
                "id": 5,
                "a_terminations": [{"object_type": "circuits.circuittermination", "object": {"term_side": "A"}}],
                "b_terminations": [{"object_type": "dcim.interface", "object": {"name": "x", "device": {"name": "y"}}}],
            },
        ],
    }
    page = netbox_cables.parse(json.dumps(doc))
    cables, skipped = netbox_cables.planned(page.cables)
    assert cables == (
        PlannedCable("gpu001", "eth0", "leaf-su1-r0", "Ethernet0", 3.048),
        PlannedCable("a", "p1", "b", "q1", None),
        PlannedCable("a", "p2", "b", "q2", None),
    )
    assert [(s.cable, s.reason) for s in skipped] == [
        ("3", "1:2 terminations (a breakout), not 1:1"),
        ("4", "status decommissioning: not part of the plan"),
        ("5", "a circuits.circuittermination end without a device and component name"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "key", "expected"),
    [
        ("{", 1, None, "expected JSON"),
        ('{"results": {}}', None, "results", "'results' to be a list"),
        ('{"results": [], "count": "3"}', None, "count", "'count' to be an integer"),
        ('{"results": [{"name": "x"}]}', None, "results[0].id", "'id'"),
        ('{"results": [{"id": 1, "a_terminations": {}}]}', None, "results[0].a_terminations", "list of terminations"),
        ('{"results": [{"id": 1, "termination_a": []}]}', None, "results[0].termination_a", "termination object"),
        ("[1]", None, "[0]", "cable object"),
        ('"cables"', 1, None, "cables page"),
    ],
)
def test_errors_name_the_key(text: str, line: int | None, key: str | None, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        netbox_cables.parse(text, "cables.json")
    assert (err.value.source, err.value.line, err.value.key) == ("cables.json", line, key)
    assert expected in err.value.expected
