"""Scoping findings to one job: its hosts' links and the uplinks of their leaves, nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.model import Fabric, Job
from unifab.twin.generate import generate

FabricFactory = Callable[..., Fabric]


def test_job_sees_only_its_links(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(nic={1: {"mtu": 1500}, 5: {"mtu": 1500}})
    fabric.jobs["job:slurm:7"] = Job("job:slurm:7", "train", ("gpu002", "gpu003"))
    assert len(run_checks(fabric)) == 2
    [finding] = run_checks(fabric, job="7")
    assert finding.subject["a"] == "gpu002:eth0"
    assert run_checks(fabric, job="job:slurm:7") == run_checks(fabric, job="slurm:7") == [finding]


def test_switch_wide_finding_is_narrowed_to_the_job(make_fabric: FabricFactory) -> None:
    lossy = dict.fromkeys(range(64), 0) | {26: 1, 48: 6}
    fabric = make_fabric(n=10, port_qos={i: {"dscp_to_tc": lossy} for i in (1, 2, 3)})
    fabric.jobs["job:slurm:8"] = Job("job:slurm:8", None, ("gpu002", "gpu009"))
    [finding] = run_checks(fabric, job="8")
    assert finding.entities == ("link:gpu002:eth0--leaf1:Ethernet8",)
    assert finding.impact["links_in_job"] == 1 and finding.impact["links"] == 3


def test_unknown_job_names_the_known_ones(make_fabric: FabricFactory) -> None:
    fabric = make_fabric()
    fabric.jobs["job:slurm:7"] = Job("job:slurm:7", None, ("gpu001",))
    with pytest.raises(UsageError, match="job 'nope' not found; jobs in the bundle: job:slurm:7"):
        run_checks(fabric, job="nope")


@pytest.mark.slow
def test_job_includes_its_leaves_uplinks(tmp_path: Path) -> None:
    generate(tmp_path / "b", gpus=512, seed=4, scenarios=("uplink-mtu",))  # two scalable units
    fabric = load_bundle(tmp_path / "b")
    finding = run_checks(fabric)[0]
    behind = finding.impact["hosts"]
    other = next(h for h in sorted(fabric.hosts) if h not in behind)  # a host in the other unit
    fabric.jobs["job:slurm:1"] = Job("job:slurm:1", None, (behind[0],))
    fabric.jobs["job:slurm:2"] = Job("job:slurm:2", None, (other,))
    assert finding in run_checks(fabric, job="1")
    assert finding not in run_checks(fabric, job="2")
