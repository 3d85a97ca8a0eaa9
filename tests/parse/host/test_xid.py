"""Tests for the Xid kernel-log parser: the real XE9680 Xid 119 capture and the timestamp/prefix variants."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.xid import XidEvent, normalize_pci, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
DMESG = "host/dmesg_xid119_gsp_rpc_timeout_xe9680_h100.log"
BODY = "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "dmesg.log")
    return info.value


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "dmesg_xid119_gsp_rpc_timeout_xe9680_h100.json", parse((samples / DMESG).read_text(), DMESG))


def test_sample_values(samples: Path) -> None:
    log = parse((samples / DMESG).read_text())
    assert [(e.line, e.xid, e.pid, e.process) for e in log.events] == [
        (3, 119, 2024380, "nvidia-smi"),
        (38, 119, 2024380, "nvidia-smi"),
        (40, 119, 2024380, "nvidia-smi"),
        (42, 119, 1263500, "cache_mgr_main"),
        (43, 119, 1240590, "gpud"),
    ]
    assert {e.pci_bus_id for e in log.events} == {"0000:9b:00.0"}
    first = log.events[0]
    assert (first.timestamp, first.host) == ("Sun Feb 23 16:24:18 2025", None)
    assert first.message == (
        "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)."
    )
    assert log.gpus == {"0000:9b:00.0": "GPU-509665ad-b600-ac93-3616-d754b23d636d"}


@pytest.mark.parametrize(
    ("prefix", "timestamp", "host"),
    [
        ("", None, None),
        ("[ 1399.140323] ", 1399.140323, None),  # plain dmesg
        ("[12345.678901] ", 12345.678901, None),
        ("<4>[   12.500000] ", 12.5, None),  # dmesg -r
        ("kern  :warn  : [   12.500000] ", 12.5, None),  # dmesg -x
        ("[Sun Feb  3 06:04:18 2025] ", "Sun Feb  3 06:04:18 2025", None),  # dmesg -T
        ("2025-02-23T16:24:18,123456+00:00 ", "2025-02-23T16:24:18,123456+00:00", None),  # dmesg --time-format iso
        ("Feb 23 16:24:18 gpu-017 kernel: ", "Feb 23 16:24:18", "gpu-017"),  # journalctl -k, syslog
        ("Feb  3 16:24:18 gpu-017 kernel: [ 1399.140323] ", "Feb  3 16:24:18", "gpu-017"),
        ("2025-02-23T16:24:18+0000 gpu-017 kernel: ", "2025-02-23T16:24:18+0000", "gpu-017"),  # -o short-iso
        ("Feb 23 16:24:18.123456 gpu-017 kernel: ", "Feb 23 16:24:18.123456", "gpu-017"),  # -o short-precise
        ("[ 1399.140323] gpu-017 kernel: ", 1399.140323, "gpu-017"),  # -o short-monotonic
        ("[Feb23 16:24] ", "Feb23 16:24", None),  # dmesg --time-format reltime
    ],
)
def test_prefixes(prefix: str, timestamp: float | str | None, host: str | None) -> None:
    (event,) = parse(f"{prefix}{BODY}\n").events
    assert (event.timestamp, event.host, event.xid, event.pci_bus_id) == (timestamp, host, 119, "0000:9b:00.0")


@pytest.mark.parametrize(
    ("body", "pid", "process", "message"),
    [
        ("NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", None, None,
         "GPU has fallen off the bus."),
        ("NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000009 intr 00800000", None, None,
         "Channel ID 00000009 intr 00800000"),
        ("NVRM: Xid (PCI:0000:3b:00): 48, pid=0, An uncorrectable double bit error", 0, None,
         "An uncorrectable double bit error"),
        ("NVRM: Xid (PCI:0000:01:00): 79", None, None, ""),
        ("NVRM: Xid (PCI:0000:1B:00): 94, pid=77, name=python3, Ch 00000008", 77, "python3", "Ch 00000008"),
    ],
)  # fmt: skip
def test_event_shapes(body: str, pid: int | None, process: str | None, message: str) -> None:
    (event,) = parse(body + "\r\n").events
    assert (event.pid, event.process, event.message) == (pid, process, message)


def test_other_lines_are_ignored() -> None:
    log = parse(
        "\n".join(
            [
                "[  100.0] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV",
                "[  100.1] NVRM: GPU at PCI:0000:1b:00: GPU-00000000-1111-2222-3333-444444444444",
                "[  100.2] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30)."
                "  The GPU likely needs to be reset.",
                "[  100.3] mlx5_core 0000:1a:00.0: Port module event: module 0, Cable plugged",
                f"[  100.4] {BODY}",
            ]
        )
    )
    message = "Timeout after 6s of waiting for RPC response"
    assert log.events == (XidEvent(5, 100.4, None, "0000:9b:00.0", 119, 2024380, "nvidia-smi", message),)
    assert log.gpus == {"0000:1b:00.0": "GPU-00000000-1111-2222-3333-444444444444"}


@pytest.mark.parametrize("raw", ["", "\n", "[  1.0] Linux version 5.15.0-112-generic\n"])
def test_log_without_xid_is_valid(raw: str) -> None:
    log = parse(raw)
    assert (log.events, log.gpus) == ((), {})


def test_normalize_pci() -> None:
    assert normalize_pci("PCI:0000:9B:00") == "0000:9b:00.0"
    assert normalize_pci("PCI:0000:00:01.0") == "0000:00:01.0"
    assert normalize_pci("PCI:3b:00") == "0000:3b:00.0"
    assert normalize_pci("0000:3b:00") is None


# --- errors ---------------------------------------------------------------------------------------


def test_malformed_xid_line() -> None:
    err = parse_error("[ 1.0] ok\n[ 2.0] NVRM: Xid (PCI:0000:9b:00): severe, pid=1\n")
    assert err.line == 2 and "NVRM: Xid (PCI:dddd:bb:dd): <number>" in err.expected
    err = parse_error("[ 2.0] NVRM: Xid (GPU-1234): 79, GPU has fallen off the bus.\n")
    assert err.line == 1 and "PCI:dddd:bb:dd" in err.expected


def test_unknown_prefix() -> None:
    err = parse_error(f"x\ny\nnode7 | {BODY}\n")
    assert err.line == 3 and "timestamp" in err.expected


def test_a_bad_xid_line_costs_its_event_only_when_read_in_part() -> None:
    """A log rotation can cut an Xid line, and messages can interleave: the log's other events are kept."""
    text = (
        "[ 1.0] NVRM: Xid (PCI:0000:9b:00): 79, pid=1, GPU has fallen off the bus.\n"
        "[ 2.0] NVRM: Xid (PCI:0000:9b:00): sev\n"  # cut mid-line
        "[ 3.0] NVRM: Xid (GPU-1234): 48, DBE\n"  # no PCI address
        "[ 4.0] NVRM: Xid (PCI:0000:1a:00): 94, pid=2, Contained ECC error.\n"
    )
    problems = ParseProblems("dmesg")
    log = parse(text, "dmesg", problems)
    assert [(e.line, e.xid, e.pci_bus_id) for e in log.events] == [(1, 79, "0000:9b:00.0"), (4, 94, "0000:1a:00.0")]
    assert [(p.line, p.skipped) for p in problems.problems] == [
        (2, "the Xid event of line 2"),
        (3, "the Xid event of line 3"),
    ]
    assert "PCI:dddd:bb:dd" in problems.problems[1].expected
    with pytest.raises(ParseError) as strict:  # without a collector: the first one, as before
        parse(text, "dmesg")
    assert strict.value.line == 2
