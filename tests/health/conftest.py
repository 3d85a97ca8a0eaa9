"""Health test fixtures: a small hand-built Fabric (2 hosts x 2 NICs, 2 leaves, a spine, one job) and series."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from unifab.health.series import METRICS, Series
from unifab.model import Endpoint, Fabric, Gpu, Host, Job, Link, Nic, Port, Switch


def nic(host: str, rail: int) -> Nic:
    return Nic(host, f"eth{rail}", f"mlx5_{rail}", 9000, None)


def port(switch: str, name: str) -> Port:
    return Port(switch, name, 9100, 400_000, "up", None)


def small_fabric() -> Fabric:
    hosts = {
        h: Host(h, {f"eth{r}": nic(h, r) for r in range(2)}, gpus={i: Gpu(h, i) for i in range(8)})
        for h in ("gpu001", "gpu002")
    }
    leaves = {
        f"leaf{r}": Switch(
            f"leaf{r}", "sonic", "x", {p: port(f"leaf{r}", p) for p in ("Ethernet0", "Ethernet8", "Ethernet64")}
        )
        for r in range(2)
    }
    spine = Switch("spine1", "eos", "x", {p: port("spine1", p) for p in ("Ethernet1/1", "Ethernet2/1")})
    links = [
        Link(Endpoint(h, f"eth{r}"), Endpoint(f"leaf{r}", f"Ethernet{8 * i}"), frozenset({"lldp"}))
        for i, h in enumerate(hosts)
        for r in range(2)
    ]
    links += [
        Link(Endpoint(f"leaf{r}", "Ethernet64"), Endpoint("spine1", f"Ethernet{r + 1}/1"), frozenset({"lldp"}))
        for r in range(2)
    ]
    jobs = {"job:slurm:7": Job("job:slurm:7", "train", ("gpu001",))}
    return Fabric(hosts=hosts, switches={**leaves, "spine1": spine}, links=links, jobs=jobs)


def series(metric: str, values: list[float], times: list[float] | None = None, step: float = 30.0) -> Series:
    spec = METRICS[metric]
    ts = times if times is not None else [1000.0 + i * step for i in range(len(values))]
    return Series("nic:h:mlx5_0", Endpoint("h", "eth0"), spec.counter, "", spec, metric, list(ts), list(values))


@pytest.fixture
def fabric() -> Fabric:
    return small_fabric()


@pytest.fixture
def make_series() -> Callable[..., Series]:
    return series
