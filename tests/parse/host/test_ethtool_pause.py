"""``ethtool -a``; the format is ethtool's own (netlink and ioctl paths print the same lines)."""

from __future__ import annotations

import pytest

from unifab.errors import ParseError
from unifab.parse.host import ethtool_pause

# Reconstructed from ethtool's dump_pause(): tab-aligned "Key:\tvalue" lines under a header.
PLAIN = "Pause parameters for eth3:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\ton\n"
NEGOTIATED = (
    "Pause parameters for ens1np0:\nAutonegotiate:\ton\nRX:\t\ton\nTX:\t\ton\nRX negotiated: off\nTX negotiated: off\n"
)


def test_plain() -> None:
    p = ethtool_pause.parse(PLAIN)
    assert p == ethtool_pause.PauseParams("eth3", autoneg=False, rx=True, tx=True)
    assert ethtool_pause.dump(p) == PLAIN


def test_negotiated_lines() -> None:
    p = ethtool_pause.parse(NEGOTIATED)
    assert p.autoneg and p.rx_negotiated is False and p.tx_negotiated is False
    assert ethtool_pause.parse(ethtool_pause.dump(p)) == p


@pytest.mark.parametrize(("text", "line"), [("Pause parameters for eth0:\nRX: maybe\n", 2), ("bogus\n", 1)])
def test_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        ethtool_pause.parse(text, "ethtool-a.txt")
    assert exc.value.line == line


def test_missing_settings() -> None:
    with pytest.raises(ParseError, match="autoneg"):
        ethtool_pause.parse("Pause parameters for eth0:\nRX:\ton\nTX:\ton\n")
