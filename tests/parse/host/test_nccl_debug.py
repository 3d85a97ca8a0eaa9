"""Tests for the ``NCCL_DEBUG=INFO`` transport-selection parser: real sample, variants, errors, fuzz."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError
from unifab.parse.host.nccl_debug import NcclIbDevice, NcclInterface, parse

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
