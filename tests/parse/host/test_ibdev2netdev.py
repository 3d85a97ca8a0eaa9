"""``ibdev2netdev`` on the real ConnectX-4 Lx capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.errors import ParseError
from unifab.parse.host import ibdev2netdev


def test_real_sample(samples: Path) -> None:
    text = (samples / "host" / "ibdev2netdev_cx4lx.txt").read_text()
    rows = ibdev2netdev.parse(text)
    assert [(r.rdma_dev, r.port, r.netdev, r.state) for r in rows] == [
        ("mlx5_0", 1, "eth01", "Up"),
        ("mlx5_1", 1, "eth02", "Down"),
        ("mlx5_2", 1, "eth03", "Up"),
        ("mlx5_3", 1, "eth04", "Up"),
    ]
    assert ibdev2netdev.dump(rows) == text


def test_garbled_line() -> None:
    with pytest.raises(ParseError) as exc:
        ibdev2netdev.parse("mlx5_0 port 1 ==> eth0 (Up)\nmlx5_1 eth1\n", "ibdev2netdev.txt")
    assert exc.value.line == 2
