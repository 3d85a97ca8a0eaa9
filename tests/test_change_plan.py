"""Change waves keep running jobs and redundancy up: property-tested against an independent oracle.

The oracle reads the twin's plan/cabling.csv itself (host -> leaves, leaf -> spines) and checks every wave of
plans made for random selections and random job placements; it shares no code with the planner.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from unifab.api import load_snapshot
from unifab.change_plan import plan_change, select
from unifab.cli.plan_change import plan_change_command
from unifab.errors import UsageError
from unifab.model import Endpoint, Fabric, Host, Job, Link, Nic, Port, Switch
from unifab.twin.generate import generate


@dataclasses.dataclass(frozen=True)
class Cabling:
    host_leaves: dict[str, frozenset[str]]
    leaf_spines: dict[str, frozenset[str]]


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric, Cabling]:
    out = tmp_path_factory.mktemp("waves") / "bundle"
    generate(out, gpus=256, seed=9, su_hosts=8)  # 32 hosts in 4 SUs, 32 leaves, 8 spines
    host_leaves: dict[str, set[str]] = defaultdict(set)
    leaf_spines: dict[str, set[str]] = defaultdict(set)
    with (out / "plan" / "cabling.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["a_node"].startswith("gpu"):
                host_leaves[row["a_node"]].add(row["z_node"])
            else:
                leaf_spines[row["a_node"]].add(row["z_node"])
    cabling = Cabling(
        {h: frozenset(v) for h, v in host_leaves.items()}, {k: frozenset(v) for k, v in leaf_spines.items()}
    )
    return out, load_snapshot(out).fabric, cabling


def _oracle(cabling: Cabling, jobs: list[Job], allow: set[str], selected: list[str], plan: object, n: int) -> None:
    waves = plan.waves  # type: ignore[attr-defined]
    blocked = {b.device for b in plan.blocked}  # type: ignore[attr-defined]
    placed = [d for w in waves for d in w.devices]
    assert sorted(placed + sorted(blocked)) == sorted(selected)  # each device exactly once
    assert len(set(placed)) == len(placed)

    def hurts(job: Job, down: set[str]) -> bool:
        return any(h in down or cabling.host_leaves[h] & down for h in job.hosts)

    for wave in waves:
        down = set(wave.devices)
        assert 1 <= len(down) <= n
        for job in jobs:
            if hurts(job, down):
                assert job.id in allow, (wave, job)
                assert set(job.hosts) <= set(wave.drain_hosts) and job.id in wave.drained_jobs
        for leaf, spines in cabling.leaf_spines.items():
            assert not (len(spines) > 1 and spines <= down), f"all uplinks of {leaf} down in wave {wave.index}"
        assert down & set(cabling.host_leaves) <= set(wave.drain_hosts)
    for device in blocked:
        assert any(job.id not in allow and hurts(job, {device}) for job in jobs), device


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_waves_keep_jobs_and_redundancy(twin: tuple[Path, Fabric, Cabling], data: st.DataObject) -> None:
    _bundle, fabric, cabling = twin
    hosts = sorted(fabric.hosts)
    n_jobs = data.draw(st.integers(0, 5), "jobs")
    jobs = [
        Job(f"job:slurm:{2000 + i}", None, tuple(sorted(data.draw(st.sets(st.sampled_from(hosts), min_size=1)))))
        for i in range(n_jobs)
    ]
    allow = {j.id for j in jobs if data.draw(st.booleans(), f"drain {j.id}")}
    devices = sorted([*fabric.switches, *fabric.hosts])
    chosen = data.draw(st.sets(st.sampled_from(devices), min_size=1, max_size=24), "devices")
    if data.draw(st.booleans(), "every spine too"):  # redundancy groups whole in the selection
        chosen |= {s for s in fabric.switches if s.startswith("spine")}
    selected = sorted(chosen)
    n = data.draw(st.integers(1, 40), "max_parallel")
    scenario = dataclasses.replace(fabric, jobs={j.id: j for j in jobs})
    plan = plan_change(scenario, selected, max_parallel=n, allow_drain=[j.rsplit(":", 1)[1] for j in allow])
    _oracle(cabling, jobs, allow, selected, plan, n)


def test_all_spines_never_down_together(twin: tuple[Path, Fabric, Cabling]) -> None:
    _bundle, fabric, cabling = twin
    spines = select(fabric, ["spine*"])
    plan = plan_change(dataclasses.replace(fabric, jobs={}), spines, max_parallel=len(spines))
    assert len(plan.waves) == 2 and not plan.blocked  # one spine must stay up: two waves at least
    _oracle(cabling, [], set(), spines, plan, len(spines))


def _dual_homed() -> Fabric:
    """gpu1's rail-0 NIC pair goes to two ToRs (leaf-a-r0, leaf-b-r0): they may not both be down."""
    nics = {n: Nic("gpu1", n, f"mlx5_{i}", 9000, None) for i, n in enumerate(("eth0", "eth1"))}
    leaves = {
        s: Switch(s, "sonic", "x", {"Ethernet0": Port(s, "Ethernet0", 9100, 400_000, "up", None)})
        for s in ("leaf-a-r0", "leaf-b-r0")
    }
    links = [
        Link(Endpoint("gpu1", "eth0"), Endpoint("leaf-a-r0", "Ethernet0"), frozenset({"lldp"})),
        Link(Endpoint("gpu1", "eth1"), Endpoint("leaf-b-r0", "Ethernet0"), frozenset({"lldp"})),
    ]
    return Fabric(hosts={"gpu1": Host("gpu1", nics)}, switches=leaves, links=links)


def test_dual_homed_tors_are_spread() -> None:
    plan = plan_change(_dual_homed(), ["leaf-a-r0", "leaf-b-r0"], max_parallel=2)
    assert [w.devices for w in plan.waves] == [("leaf-a-r0",), ("leaf-b-r0",)]


def test_selector_and_drain_errors(twin: tuple[Path, Fabric, Cabling]) -> None:
    _bundle, fabric, _cabling = twin
    with pytest.raises(UsageError, match="matches no device"):
        select(fabric, ["nope*"])
    with pytest.raises(UsageError, match=r"expected \[host:\|switch:\]GLOB"):
        select(fabric, ["rack:gpu*"])
    assert select(fabric, ["host:gpu00[1-2]", "switch:spine01"]) == ["gpu001", "gpu002", "spine01"]
    with pytest.raises(UsageError, match="no running job"):
        plan_change(fabric, ["gpu001"], allow_drain=["424242"])
    with pytest.raises(UsageError, match="at least 1"):
        plan_change(fabric, ["gpu001"], max_parallel=0)


def test_cli_plan_file_and_exit_codes(twin: tuple[Path, Fabric, Cabling], tmp_path: Path) -> None:
    bundle, fabric, _cabling = twin
    app = typer.Typer()
    app.command()(plan_change_command)
    runner = CliRunner()
    job = next(iter(fabric.jobs.values()))
    leaf = sorted(select(fabric, ["leaf-*"]))[0]
    host = job.hosts[0]
    out = tmp_path / "plan.json"
    blocked = runner.invoke(app, [str(bundle), "--devices", host, "--out", str(out), "-q"])
    assert blocked.exit_code == 1, blocked.output
    doc = json.loads(out.read_text())
    assert doc["format"] == "unifab-change-plan/1" and doc["waves"] == []
    assert job.id in doc["blocked"][0]["reason"] and "--allow-drain" in doc["blocked"][0]["reason"]
    short = job.id.rsplit(":", 1)[1]
    ok = runner.invoke(app, [str(bundle), "--devices", f"{host},{leaf}", "--allow-drain", short, "--out", "-", "-q"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    drain = [c for w in doc["waves"] for c in w["before"] if c.startswith("scontrol update")]
    assert drain and all("State=DRAIN" in c for c in drain)
    assert any(c.startswith("scontrol update") and "State=RESUME" in c for w in doc["waves"] for c in w["after"])
    k8s = runner.invoke(
        app, [str(bundle), "--devices", host, "--allow-drain", "all", "--scheduler", "kubernetes", "--out", "-", "-q"]
    )
    assert k8s.exit_code == 0 and f"kubectl drain {host}" in k8s.stdout and f"kubectl uncordon {host}" in k8s.stdout
    assert runner.invoke(app, [str(bundle), "--devices", "x", "--scheduler", "pbs"]).exit_code == 2
    assert "Example: unifab plan-change" in runner.invoke(app, ["--help"]).output
