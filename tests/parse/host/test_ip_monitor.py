"""Tests for the ``ip -ts monitor link`` + sysfs carrier parser: real sample, variants, errors, fuzz."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError
from unifab.parse.host.ip_monitor import CarrierSnapshot, parse

GOLDEN = Path(__file__).parent / "golden"
FLAP = "host/link_flap_carrier_changes_ip_monitor.txt"
GoldenCheck = Callable[[Path, Any], None]


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "t.txt")
    return info.value


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "link_flap_carrier_changes_ip_monitor.json", parse((samples / FLAP).read_text(), FLAP))


def test_sample_three_flaps(samples: Path) -> None:
    r = parse((samples / FLAP).read_text())
    timed = [e for e in r.events if e.timestamp is not None]
    assert [e.state for e in timed] == ["DOWN", "UP"] * 3
    assert [e.carrier for e in timed] == [False, True] * 3
    assert {(e.ifindex, e.ifname, e.peer, e.mtu) for e in r.events} == {(6, "ens1np0", "if5", 1500)}
    before, after = r.carrier
    assert (before.carrier_changes, after.carrier_changes) == (2, 8)
    assert (after.carrier_up_count, after.carrier_down_count, after.operstate) == (4, 4, "up")
    assert after.carrier_changes is not None and before.carrier_changes is not None
    assert after.carrier_changes - before.carrier_changes == 2 * 3


def test_t_timestamp_line_deleted_and_link_prefix() -> None:
    r = parse(
        text(
            "Timestamp: Mon Nov 30 02:15:33 2026 607900 usec",
            "[LINK]Deleted 7: vlan100@bond0: <BROADCAST,MULTICAST> mtu 9000 qdisc noop state DOWN group default",
            "    link/ether 02:00:00:00:01:01 brd ff:ff:ff:ff:ff:ff",
            "3: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP",
            "4: ib0: <BROADCAST,MULTICAST>",
        )
    )
    deleted, plain, bare = r.events
    assert deleted.timestamp == "Mon Nov 30 02:15:33 2026 607900 usec" and deleted.deleted
    assert (deleted.ifname, deleted.peer, deleted.mtu, deleted.line) == ("vlan100", "bond0", 9000, 2)
    assert plain.timestamp is None and plain.carrier and plain.state == "UP"
    assert (bare.state, bare.mtu, bare.flags) == (None, None, ("BROADCAST", "MULTICAST"))


def test_sysfs_grep_style_and_partial_snapshots() -> None:
    r = parse(
        text(
            "/sys/class/net/eth0/carrier_changes:5",
            "/sys/class/net/eth1/carrier_changes:1",
            "/sys/class/net/eth1/carrier_changes:3",
        )
    )
    assert r.events == ()
    assert r.carrier == (
        CarrierSnapshot("eth0", None, 5, None, None, None, 1),
        CarrierSnapshot("eth1", None, 1, None, None, None, 2),
        CarrierSnapshot("eth1", None, 3, None, None, None, 3),
    )


@pytest.mark.parametrize("raw", ["", "\n", "  \t\n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


def test_unknown_line() -> None:
    err = parse_error(text("# x", "6: eth0: <UP> mtu 1500 state UP", "hello world"))
    assert err.line == 3 and "'hello world'" in err.expected


def test_bad_counter_value_and_attribute() -> None:
    assert parse_error("/sys/class/net/eth0/carrier_changes = x\n").line == 1
    err = parse_error(text("# a", "/sys/class/net/eth0/speed = 100"))
    assert err.line == 2 and "'speed'" in err.expected


def test_bad_mtu_and_flags() -> None:
    assert "mtu" in parse_error("6: eth0: <UP> mtu big state UP\n").expected
    assert parse_error("\n6: eth0: <up lower> mtu 1 state UP\n").line == 2


def test_dangling_timestamp() -> None:
    assert parse_error(text("6: eth0: <UP> mtu 1 state UP", "Timestamp: now")).line == 2
    assert parse_error(text("Timestamp: now", "Timestamp: later")).line == 2
