"""Tests for the ``NCCL_DEBUG=INFO`` transport-selection parser: real sample, variants, errors, fuzz."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.nccl_debug import NcclIbDevice, NcclInterface, parse, scan_versions

GOLDEN = Path(__file__).parent / "golden"
SAMPLE = "host/nccl_debug_net_ib_using.txt"
GoldenCheck = Callable[[Path, Any], None]


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "t.log")
    return info.value


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "nccl_debug_net_ib_using.json", parse((samples / SAMPLE).read_text(), SAMPLE))


def test_sample(samples: Path) -> None:
    r = parse((samples / SAMPLE).read_text())
    host = r.hosts["nid000012"]
    assert host.ib_devices == (NcclIbDevice(0, "mlx5_0", 1, "RoCE", False),)
    assert host.socket_fallback and not host.ib_no_device
    assert host.interfaces == (NcclInterface(0, "nmn0", "10.252.1.69", 0), NcclInterface(1, "hsn0", "10.253.6.188", 0))
    assert host.oob_interface == NcclInterface(None, "nmn0", "10.252.1.69", 0)
    assert host.pids == (86554, 86066)


def test_multi_host_rails_ro_and_no_device() -> None:
    r = parse(
        text(
            "some launcher banner",
            "[1,0]<stdout>:gpu-a:10:10 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1:0/RoCE "
            "[2]mlx5_2:1/IB[RO]; "
            "OOB ib0:fe80::1%ib0<0>",
            "gpu-a:11:11 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
            "gpu-a:11:11 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA",
            "gpu-b:20:21 [3] NCCL INFO NET/IB : No device found.",
            "gpu-b:20:21 [3] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>",
            "gpu-b:20:21 [3] NCCL WARN something else",
        )
    )
    assert list(r.hosts) == ["gpu-a", "gpu-b"]
    a, b = r.hosts["gpu-a"], r.hosts["gpu-b"]
    assert a.ib_devices == (
        NcclIbDevice(0, "mlx5_0", 1, "IB", False),
        NcclIbDevice(1, "mlx5_1", 1, "RoCE", False),
        NcclIbDevice(2, "mlx5_2", 1, "IB", True),
    )
    assert a.oob_interface == NcclInterface(None, "ib0", "fe80::1%ib0", 0)
    assert (a.socket_fallback, a.ib_no_device, a.pids) == (False, False, (10, 11))
    assert (b.ib_devices, b.ib_no_device, b.socket_fallback) == ((), True, True)
    assert b.interfaces == (NcclInterface(0, "eth0", "10.0.0.2", 0),)


@pytest.mark.parametrize("raw", ["", "\n\t\n"])
def test_empty(raw: str) -> None:
    assert parse_error(raw).line == 1


def test_no_nccl_lines() -> None:
    err = parse_error("hello\nworld\n")
    assert err.line == 1 and "NCCL INFO" in err.expected


def test_malformed_device_lists() -> None:
    err = parse_error(text("x", "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0/IB ; OOB ib0:10.0.0.1<0>"))
    assert err.line == 2 and "IB device" in err.expected
    assert parse_error("h:1:1 [0] NCCL INFO NET/Socket : Using eth0\n").line == 1
    assert parse_error("h:1:1 [0] NCCL INFO NET/IB : Using\n").line == 1
    assert "OOB" in parse_error("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0\n").expected


# the three shapes of the IB transport's completion error, as NCCL versions print them (one line each)
OLD = (
    "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092> "
    "with error 12, opcode 0, len 0, vendor err 129 (Recv)"
)
MID = (
    "[2026-03-03 12:11:38] tpgds-aihub0007:185303:186751 [1] transport/net_ib.cc:2453 NCCL WARN NET/IB: Got "
    "completion from peer 10.99.91.63<51161> with status=4 opcode=32614 len=32614 vendor err 81 (Send) localGid "
    "::ffff:10.99.92.59 remoteGids::ffff:10.99.91.63 hca mlx5_1"
)
NEW = (
    "2026-09-09T10:46:33.123456789Z ubuntu2:319733:319761 [1] transport/net_ib/p2p.cc:648 NCCL WARN NET/IB: Got "
    "completion from peer 10.153.235.13<40554> with status=IBV_WC_RETRY_EXC_ERR(12) "
    "opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 localGid ::ffff:1.1.2.2 remoteGids::ffff:1.1.1.4 hca mlx5_1"
)


def test_completion_errors_in_every_version_shape() -> None:
    old, mid, new = parse(text(OLD, MID, NEW, "node-2:5776:5902 [0] NCCL INFO transport/net.cc:1134 -> 6")).errors
    assert (old.line, old.host, old.timestamp, old.peer, old.peer_port) == (1, "node-2", None, "10.2.0.5", 33092)
    assert (old.status, old.opcode, old.length, old.vendor_err, old.direction) == (12, 0, 0, 129, "Recv")
    assert (old.local_gid, old.remote_gid, old.hca) == (None, None, None)
    assert (mid.timestamp, mid.status, mid.direction, mid.hca) == ("2026-03-03 12:11:38", 4, "Send", "mlx5_1")
    assert (mid.local_gid, mid.remote_gid) == ("::ffff:10.99.92.59", "::ffff:10.99.91.63")
    assert (new.timestamp, new.status, new.status_name, new.opcode) == (
        "2026-09-09T10:46:33.123456789Z",
        12,
        "IBV_WC_RETRY_EXC_ERR",
        129,
    )
    assert (new.cuda_dev, new.pid, new.local_gid, new.remote_gid) == ("1", 319733, "::ffff:1.1.2.2", "::ffff:1.1.1.4")


def test_a_completion_error_without_a_peer_address() -> None:
    [e] = parse(
        "x:1:2 [0] p2p.cc:1 NCCL WARN NET/IB: Got completion from peer with status=IBV_WC_REM_ACCESS_ERR(10) "
        "opcode=IBV_WC_SEND(0) vendor_err=1 hca mlx5_0\n"
    ).errors
    assert (e.peer, e.peer_port, e.status, e.hca) == (None, None, 10, "mlx5_0")


def test_a_log_with_only_warn_lines_is_read_and_other_warnings_are_ignored() -> None:
    r = parse(text("h:1:1 [0] init.cc:1 NCCL WARN Cuda failure 'out of memory'", OLD))
    assert list(r.hosts) == ["h", "node-2"] and len(r.errors) == 1
    assert r.hosts["h"].ib_devices == () and parse(text(NEW.replace("NCCL WARN", "NCCL INFO"))).errors == ()


def test_a_completion_line_in_no_known_shape_is_a_located_error() -> None:
    err = parse_error(text("banner", "h:1:1 [0] x.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.1 broken"))
    assert err.line == 2 and "status=" in err.expected


def test_read_in_part_a_bad_line_costs_that_line_only() -> None:
    """A truncated completion error, or an IB selection line whose OOB part is cut, among good lines: the
    other errors and the line's own devices are not half-kept."""
    log = text(
        OLD,
        "h:1:1 [0] x.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.1 broken",
        "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0",  # OOB cut: none of the line is kept
        "h:1:1 [0] NCCL INFO NET/IB : Using [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>",
        NEW,
    )
    problems = ParseProblems("t.log")
    r = parse(log, "t.log", problems)
    assert [e.line for e in r.errors] == [1, 5]
    assert [(p.line, p.skipped) for p in problems.problems] == [(2, "line 2"), (3, "line 3")]
    assert [d.name for d in r.hosts["h"].ib_devices] == ["mlx5_1"]
    assert r.hosts["h"].oob_interface == NcclInterface(None, "ib0", "10.0.0.1", 0)
    assert parse_error(log).line == 2  # without a collector: the first problem, as before


# --- NCCL version lines ----------------------------------------------------------------------------------

VERSION_SAMPLE = "host/nccl_debug_version_a100_nccl_tests.txt"


def test_version_of_the_nccl_tests_sample(samples: Path) -> None:
    r = parse((samples / VERSION_SAMPLE).read_text(), VERSION_SAMPLE)
    assert r.hosts["lrdn2296"].versions == ("2.22.3",)
    assert [(v.line, v.host, v.pid, v.release, v.build) for v in r.versions] == [
        (5, "lrdn2296", 4063850, "2.22.3", "cuda12.2")
    ]
    assert r.hosts["lrdn2296"].ib_devices[0].name == "mlx5_0"  # the rest of the log still reads


def test_scan_versions_agrees_with_parse_on_the_sample(samples: Path) -> None:
    raw = (samples / VERSION_SAMPLE).read_text()
    assert scan_versions(raw, VERSION_SAMPLE) == parse(raw, VERSION_SAMPLE).versions


# Real lines: worldcoin/iris-mpc PR #510 (AWS EFA, NCCL 2.22.3), aikitoria/open-gpu-kernel-modules issue #38
# (NCCL 2.31.2), a multi-node log with a launcher prefix (torchrun's "1: "), kubectl --timestamps.
REAL_VERSION_LINES = (
    "ip-10-15-32-252:44:44 [0] NCCL INFO NCCL version 2.22.3+cuda12.6",
    "definitley-not-a-banana:2274:2274 [0] NCCL INFO NCCL version 2.31.2+cuda13.3",
    "1: p5-dy-gpu-2:62571:62571 [1] NCCL INFO NCCL version 2.26.2+cuda12.2",
    "2024-11-28T07:42:11.525Z algo-1:17775:17775 [2] NCCL INFO NCCL version 2.21.5+cuda12.4",
)


def test_versions_of_real_lines_by_host() -> None:
    raw = text(*REAL_VERSION_LINES, "NCCL version 2.21.5+cuda12.4")  # NCCL_DEBUG=VERSION: no host, ignored
    r = parse(raw)
    got = {name: h.versions for name, h in r.hosts.items()}
    assert got == {
        "ip-10-15-32-252": ("2.22.3",),
        "definitley-not-a-banana": ("2.31.2",),
        "p5-dy-gpu-2": ("2.26.2",),
        "algo-1": ("2.21.5",),
    }
    assert [v.build for v in r.versions] == ["cuda12.6", "cuda13.3", "cuda12.2", "cuda12.4"]
    assert scan_versions(raw) == r.versions


def test_one_host_with_two_releases_keeps_both_in_order() -> None:
    raw = text(
        "gpu01:10:10 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "gpu01:11:11 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "gpu01:12:12 [0] NCCL INFO NCCL version 2.19.3+cuda12.3",
    )
    assert parse(raw).hosts["gpu01"].versions == ("2.21.5", "2.19.3")
    assert [v.line for v in scan_versions(raw)] == [1, 2, 3]


def test_scan_versions_ignores_what_parse_refuses_and_counts_lines() -> None:
    raw = text(
        "gpu01:10:10 [0] NCCL INFO NET/IB : Using garbage",
        "unrelated text mentioning NCCL version 9.9.9",
        "gpu01:10:10 [0] x.cc:1 NCCL WARN NCCL version 1.0.0",
        "",
        "gpu02:10:10 [0] NCCL INFO NCCL version 2.18.1+cuda12.1",
    )
    with pytest.raises(ParseError):
        parse(raw)
    assert [(v.line, v.host, v.release) for v in scan_versions(raw, "t.log")] == [(5, "gpu02", "2.18.1")]
    assert scan_versions("") == ()


def test_text_after_the_version_and_a_package_suffix_are_tolerated() -> None:
    raw = text(
        "gpu01:10:10 [0] NCCL INFO NCCL version 2.21.5+cuda12.4 HEAD:0123abc",
        "gpu02:10:10 [0] NCCL INFO NCCL version 2.18.5-1+cuda12.2",
    )
    assert [(v.release, v.build) for v in scan_versions(raw)] == [("2.21.5", "cuda12.4"), ("2.18.5-1", "cuda12.2")]


@pytest.mark.parametrize("bad", ["NCCL version garbage", "NCCL version v2.21.5", "NCCL version +cuda12"])
def test_a_version_line_without_a_release_is_a_located_error(bad: str) -> None:
    raw = text("gpu01:10:10 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", f"gpu01:10:10 [0] NCCL INFO {bad}")
    for read in (parse, scan_versions):
        with pytest.raises(ParseError) as info:
            read(raw, "t.log")
        assert info.value.line == 2 and "NCCL version <major>.<minor>.<patch>" in str(info.value)
