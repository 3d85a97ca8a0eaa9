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
