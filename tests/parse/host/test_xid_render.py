"""Round trip of the Xid kernel-log ``render``: plain dmesg lines parse back to the same record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.parse.host.xid import XidEvent, XidLog, dump, parse

SAMPLE = "host/dmesg_xid119_gsp_rpc_timeout_xe9680_h100.log"


def canonical(log: XidLog) -> XidLog:
    """``log`` with wall-clock stamps dropped and lines numbered the way ``render`` lays them out."""
    events = tuple(
        dataclasses.replace(
            e, line=len(log.gpus) + i + 1, timestamp=None if isinstance(e.timestamp, str) else e.timestamp
        )
        for i, e in enumerate(log.events)
    )
    return XidLog(events, log.gpus)


def test_sample_round_trips_in_dmesg_layout(samples: Path) -> None:
    log = canonical(parse((samples / SAMPLE).read_text()))
    assert log.events and log.gpus
    out = dump(log)
    assert parse(out) == log
    assert "NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d\n" in out


def test_no_xid_log() -> None:
    log = XidLog((), {"0000:18:00.0": "GPU-00000001-0000-0000-0000-000000000000", "0000:9b:00.1": "GPU-2"})
    out = dump(log)
    assert out == (
        "[    5.000000] NVRM: GPU at PCI:0000:18:00: GPU-00000001-0000-0000-0000-000000000000\n"
        "[    5.001000] NVRM: GPU at PCI:0000:9b:00.1: GPU-2\n"
    )
    assert parse(out) == log


def test_pid_unknown_and_old_driver_lines() -> None:
    events = (
        XidEvent(1, 1234.5, None, "0000:b3:00.0", 79, None, None, "GPU has fallen off the bus."),
        XidEvent(2, None, None, "0000:01:00.0", 32, 77, None, "Channel ID 00000009 intr 00800000"),
        XidEvent(3, 0.25, None, "0000:01:00.0", 13, None, "python", ""),
    )
    out = dump(XidLog(events, {}))
    assert out.splitlines()[0] == "[ 1234.500000] NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off the bus."
    assert "pid=77, name=<unknown>, Channel" in out and "pid='<unknown>', name=python\n" in out
    assert parse(out) == XidLog(events, {})


def test_unrenderable_records() -> None:
    wall = XidEvent(1, "Sun Feb 23 16:24:18 2025", None, "0000:9b:00.0", 119, None, None, "")
    with pytest.raises(ValueError, match="plain dmesg"):
        dump(XidLog((wall,), {}))
    with pytest.raises(ValueError, match="PCI"):
        dump(XidLog((), {"9b:00": "GPU-1"}))


PCI = st.builds(
    lambda bus, dev, fn: f"0000:{bus:02x}:{dev:02x}.{fn}", st.integers(0, 255), st.integers(0, 31), st.integers(0, 7)
)
WORDS = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9 ._()!-]{0,30}[A-Za-z0-9.)!]\Z")
NAME = st.from_regex(r"\A[a-z][a-z0-9_-]{0,12}\Z")


@st.composite
def logs(draw: st.DrawFn) -> XidLog:
    gpus = draw(st.dictionaries(PCI, st.from_regex(r"\AGPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\Z"), max_size=4))
    events = []
    for i in range(draw(st.integers(0, 4))):
        pid = draw(st.none() | st.integers(0, 2**22))
        process = draw(st.none() | NAME)
        message = draw(st.just("") | WORDS)
        if pid is None and process is None and message.startswith("pid="):
            message = "x" + message
        stamp = draw(st.none() | st.integers(0, 10**12).map(lambda k: k / 1_000_000))
        events.append(
            XidEvent(len(gpus) + i + 1, stamp, None, draw(PCI), draw(st.integers(0, 999)), pid, process, message)
        )
    return XidLog(tuple(events), gpus)


@given(logs())
def test_round_trip(log: XidLog) -> None:
    assert parse(dump(log)) == log
