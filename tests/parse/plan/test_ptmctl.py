"""``ptmctl``/``ptmctl -d``/``ptmctl -l`` tables: golden over the Cumulus sample, cable verdicts, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError
from unifab.parse.plan import ptmctl

GOLDEN = Path(__file__).parent / "golden"


def sample_tables(samples: Path) -> str:
    """The sample after its topology.dot part: three prompts and their tables, verbatim."""
    text = (samples / "vendor-docs" / "ptmctl_d_and_topology_dot.txt").read_text()
    return text[text.index("cumulus@switch") :]


def test_golden(samples: Path, golden: Any) -> None:
    tables = ptmctl.parse(sample_tables(samples), "ptmctl.txt")
    golden(GOLDEN / "ptmctl_d_l.json", tables)
    assert [t.command for t in tables] == ["ptmctl", "ptmctl -d", "ptmctl -l"]
    detail = tables[1]
    assert detail.columns[:4] == ("port", "cbl status", "exp nbr", "act nbr")
    assert detail.rows[0]["last upd"] == "5m: 5s"  # a cell with a space, read by column position
    assert detail.rows[0]["BFD Type"] is None  # N/A


def test_cable_verdicts(samples: Path) -> None:
    verdicts = {c.port: c for c in ptmctl.cables(ptmctl.parse(sample_tables(samples)))}
    assert verdicts["swp46"] == ptmctl.PtmCable("swp46", "fail", "h2:swp1", "h2:swp1")
    assert verdicts["swp45"].status == "pass"
    assert verdicts["swp1"] == ptmctl.PtmCable("swp1", "pass", None, None)  # plain ptmctl: no neighbours
    assert set(verdicts) == {"swp1", "swp2", "swp3", "swp45", "swp46"}  # -l has no cbl status


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "at least one ptmctl table"),
        ("hello\n", 1, "'-----' rule"),
        ("-" * 20 + "\nport  cbl\n", 2, "closing '-----' rule"),
        ("-" * 20 + "\nname  cbl\n" + "-" * 20 + "\n", 2, "start with 'port'"),
        ("-" * 20 + "\nport  cbl\n   status  x\n" + "-" * 20 + "\n", 3, "under a column"),
        ("-" * 20 + "\nport  cbl\n" + "-" * 20 + "\n      pass extra words\n", 4, "2 columns"),
    ],
)
def test_errors(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError) as err:
        ptmctl.parse(text, "ptmctl.txt")
    assert (err.value.line, err.value.source) == (line, "ptmctl.txt")
    assert expected in err.value.expected


_RULE_LINE = "-" * 40


def test_comment_prompt_names_the_command_and_collapsed_rows_read_by_tokens() -> None:
    header = "port  cbl     exp      act\n      status  nbr      nbr\n"
    text = f"# ptmctl -d\n{_RULE_LINE}\n{header}{_RULE_LINE}\nswp1 pass h1:swp1 h1:swp1\n"
    (table,) = ptmctl.parse(text, "t")
    assert table.command == "ptmctl -d"
    assert table.rows == ({"port": "swp1", "cbl status": "pass", "exp nbr": "h1:swp1", "act nbr": "h1:swp1"},)


def test_row_that_neither_lines_up_nor_splits_is_an_error() -> None:
    text = f"{_RULE_LINE}\nport  last    x\n{_RULE_LINE}\nswp1 5m: 5s y\n"  # 4 words, 3 columns, cut mid-word
    with pytest.raises(ParseError) as err:
        ptmctl.parse(text, "t")
    assert err.value.line == 4 and "under the header" in err.value.expected
