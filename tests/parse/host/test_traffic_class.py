"""``/sys/class/infiniband/<dev>/tc/<port>/traffic_class`` as the MLNX_OFED driver prints it."""

from __future__ import annotations

import pytest

from unifab.errors import ParseError
from unifab.parse.host import traffic_class


def test_unset_reads_empty() -> None:
    tc = traffic_class.parse("")
    assert tc.global_tclass is None and tc.rules == () and tc.dscp is None


def test_global_override_and_rules() -> None:
    tc = traffic_class.parse("Global tclass=106\ndst_ip=10.0.0.0/8,tclass=96\n")
    assert tc.global_tclass == 106
    assert tc.dscp == 26
    assert tc.rules == (traffic_class.TclassRule("dst_ip", "10.0.0.0/8", 96),)
    assert traffic_class.parse(traffic_class.dump(tc)) == tc


@pytest.mark.parametrize(("text", "line"), [("Global tclass=abc\n", 1), ("\nGlobal tclass=300\n", 2), ("bogus\n", 1)])
def test_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        traffic_class.parse(text, "traffic_class")
    assert exc.value.line == line
