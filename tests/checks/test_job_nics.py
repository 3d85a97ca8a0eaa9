"""Which NICs NCCL uses for a job, read as NCCL reads NCCL_IB_HCA, and the fabrics they put the job on."""

from __future__ import annotations

import pytest

from unifab.checks.ib import job_on_ib
from unifab.checks.job_nics import job_fabrics, job_uses_nic
from unifab.model import Fabric, Host, Job, Nic

# a host with eight RoCE rail NICs, a second-digit one (mlx5_10) and an InfiniBand storage HCA (mlx5_8)
ROCE = ("mlx5_0", "mlx5_1", "mlx5_10")


def _fabric() -> Fabric:
    nics = {f"eth{n}": Nic("gpu001", f"eth{n}", dev, 9000, None, link_layer="Ethernet") for n, dev in enumerate(ROCE)}
    nics["ib0"] = Nic("gpu001", "ib0", "mlx5_8", 4092, None, link_layer="InfiniBand")
    return Fabric(hosts={"gpu001": Host("gpu001", nics)})


def _job(hca: str | None, hosts: tuple[str, ...] = ("gpu001",)) -> Job:
    return Job("job:slurm:1", None, hosts, nccl_ib_hca=hca, env_known=hca is not None)


def _used(hca: str | None) -> set[str]:
    fabric = _fabric()
    return {n.rdma_dev or "" for n in fabric.hosts["gpu001"].nics.values() if job_uses_nic(_job(hca), n)}


@pytest.mark.parametrize(
    ("hca", "used"),
    [
        (None, {"mlx5_0", "mlx5_1", "mlx5_10", "mlx5_8"}),  # unset: every RDMA device
        ("mlx5_1", {"mlx5_1", "mlx5_10"}),  # a prefix, as NCCL's parseStringList matches it
        ("=mlx5_1", {"mlx5_1"}),  # '=': whole names
        ("=mlx5_0:1,mlx5_1:1", {"mlx5_0", "mlx5_1"}),
        ("=mlx5_0:2", set()),  # the model's port is port 1
        ("^=mlx5_8", {"mlx5_0", "mlx5_1", "mlx5_10"}),  # '^': every device but these
        ("^mlx5_1", {"mlx5_0", "mlx5_8"}),
    ],
)
def test_nccl_ib_hca_selects_as_nccl_reads_it(hca: str | None, used: set[str]) -> None:
    assert _used(hca) == used


@pytest.mark.parametrize(
    ("hca", "fabrics"),
    [
        ("=mlx5_0,mlx5_1", ("roce",)),
        ("=mlx5_8", ("ib",)),
        (None, ("roce", "ib")),  # NCCL would open the storage HCA too
        ("mlx5_1", ("roce",)),
        ("=mlx5_9", ()),  # selects nothing the bundle has
    ],
)
def test_the_fabrics_of_a_job_are_those_of_the_nics_it_uses(hca: str | None, fabrics: tuple[str, ...]) -> None:
    fabric = _fabric()
    assert job_fabrics(fabric, _job(hca)) == fabrics
    assert job_on_ib(fabric, _job(hca)) is ("ib" in fabrics)


def test_a_job_whose_hosts_were_not_collected_is_on_no_known_fabric() -> None:
    assert job_fabrics(_fabric(), _job(None, hosts=("gpu099",))) == ()


def test_ib_sl_follows_prefix_matching() -> None:
    """NCCL_IB_HCA=mlx5 (a prefix) selects the IB HCA: the job is on IB, so IB-SL judges it."""
    assert job_on_ib(_fabric(), _job("mlx5"))
