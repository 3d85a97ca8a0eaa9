"""SONiC `show interfaces status`: the real intfutil output (golden), older and newer column sets, collapsed
padding, a bad row read past, and errors that name the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import sonic_interfaces_status as sis

GOLDEN = Path(__file__).parent / "golden"
SAMPLE = "switch/sonic/sonic_show_interfaces_status_intfutil_mock.txt"

# sonic-utilities doc/Command-Reference.md's example of an older image: no FEC and Vlan columns
OLD_COLUMNS = """\
admin@sonic:~$ show interfaces status
  Interface            Lanes    Speed    MTU            Alias    Oper    Admin    Type    Asym PFC
-----------  ---------------  -------  -----  ---------------  ------  -------  ------  ----------
  Ethernet0      49,50,51,52     100G   9100   hundredGigE1/1    down       up     N/A         off
  Ethernet4      53,54,55,56     100G   9100   hundredGigE1/2    down       up     N/A         off
  Ethernet8      57,58,59,60     100G   9100   hundredGigE1/3    down     down     N/A         off
"""

# a newer image with the Oper Speed column, rows in the shape of an operator's published Accton AS7326 output
# (tests/parse/fuzz_seeds/sonic-interfaces-status/, which seeds the fuzz test too)
OPER_SPEED = (
    Path(__file__).parents[1] / "fuzz_seeds" / "sonic-interfaces-status" / "oper_speed_column.txt"
).read_text()


def test_golden(samples: Path, golden: Any) -> None:
    rows = sis.parse((samples / SAMPLE).read_text(), SAMPLE)
    golden(GOLDEN / "sonic_show_interfaces_status_intfutil_mock.json", rows)
    by = {r.name: r for r in rows}
    assert len(rows) == 15
    assert by["Ethernet0"].type == "QSFP28 or later" and by["Ethernet0"].fec == "rs" and not by["Ethernet0"].oper_up
    assert by["Ethernet32"].lanes == (13, 14, 15, 16) and by["Ethernet32"].vlan == "PortChannel1001"
    assert by["Ethernet28"].speed_mbps == 1000 and by["Ethernet36"].speed_mbps == 10
    assert by["PortChannel0001"].speed_mbps is None and by["PortChannel0001"].lanes == ()
    assert by["Ethernet124"].fec == "auto" and by["Ethernet16"].fec is None


def test_round_trip(samples: Path) -> None:
    rows = sis.parse((samples / SAMPLE).read_text())
    assert sis.parse(sis.dump(rows)) == rows


def test_older_and_newer_column_sets() -> None:
    old = sis.parse(OLD_COLUMNS)
    assert [r.name for r in old] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert old[2].admin_up is False and old[0].fec is None and old[0].vlan is None and old[0].mtu == 9100
    new = sis.parse(OPER_SPEED)
    assert new[0].oper_speed_mbps == 25000 and new[0].type == "SFP/SFP+/SFP28" and new[1].oper_speed_mbps is None


def test_collapsed_padding_reads_by_tokens(samples: Path) -> None:
    text = (samples / SAMPLE).read_text()
    lines = text.split("\n")
    collapsed = "\n".join([*lines[:2], *(" ".join(line.split()) for line in lines[2:])])
    assert sis.parse(collapsed) == sis.parse(text)


def test_bad_row_costs_that_port(samples: Path) -> None:
    text = (samples / SAMPLE).read_text()
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if "Ethernet116" in line)
    lines[i] = lines[i].replace("9100", "lots")
    broken = "\n".join(lines)
    with pytest.raises(ParseError) as strict:
        sis.parse(broken)
    assert strict.value.line == i + 1 and "MTU" in strict.value.expected
    log = ParseProblems("s")
    got = sis.parse(broken, "s", log)
    (problem,) = log.problems
    assert problem.line == i + 1 and problem.skipped == "port Ethernet116"
    assert got == tuple(r for r in sis.parse(text) if r.name != "Ethernet116")


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "empty text"),
        ("Port Name Status\n", 1, "header"),
        ("  Interface    Speed\nEthernet0   25G\n", 2, "dashed rule"),
        ("  Interface    Speed\n-----------  ----  ---\n", 2, "one dashed rule per column"),
        ("  Interface    Speed\n-----------  -----\n  Ethernet0   fast\n", 3, "a speed such as 25G"),
        ("  Interface    Oper\n-----------  ----\n  Ethernet0   maybe\n", 3, "up, down or N/A"),
    ],
)
def test_errors_name_the_line(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        sis.parse(text)
    assert err.value.line == line and expected in err.value.expected
