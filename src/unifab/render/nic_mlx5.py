"""Commands that set a ConnectX (mlx5, MLNX_OFED) NIC's RoCE QoS, one netdev at a time."""

from __future__ import annotations

from collections.abc import Iterable


def pfc(netdev: str, priorities: Iterable[int]) -> str:
    enabled = set(priorities)
    return f"mlnx_qos -i {netdev} --pfc {','.join('1' if p in enabled else '0' for p in range(8))}"


def dscp2prio(netdev: str, dscp: int, prio: int) -> str:
    return f"mlnx_qos -i {netdev} --dscp2prio set,{dscp},{prio}"


def ecn_enable(netdev: str, point: str, prio: int) -> str:
    """Enable DCQCN notification (``roce_np``) or reaction (``roce_rp``) point on one priority."""
    return f"echo 1 > /sys/class/net/{netdev}/ecn/{point}/enable/{prio}"


def mtu(netdev: str, value: int) -> str:
    return f"ip link set dev {netdev} mtu {value}"


def trust(netdev: str, mode: str) -> str:
    return f"mlnx_qos -i {netdev} --trust {mode}"


def traffic_class(rdma_dev: str, tclass: int, port: int = 1) -> str:
    """Global RoCE TOS override (MLNX_OFED); beats any per-QP TOS the application sets."""
    return f"echo {tclass} > /sys/class/infiniband/{rdma_dev}/tc/{port}/traffic_class"


def cable_len(netdev: str, metres: int) -> str:
    return f"mlnx_qos -i {netdev} --cable_len {metres}"


def global_pause_off(netdev: str) -> str:
    return f"ethtool -A {netdev} autoneg off rx off tx off"
