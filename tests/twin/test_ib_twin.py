"""The InfiniBand twin (``--fabric ib|mixed``): clean twins are clean, every IB scenario is found and nothing else,
the files it writes are what the real tools print (its ibsim NETFILE loaded into the real simulator gives the same
topology), and scenarios refuse a twin that cannot express them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.parse.ib import iblinkinfo, ibnetdiscover, ibstat, perfquery, sminfo
from unifab.twin.generate import generate
from unifab.twin.ib_scenarios import BENIGN, IB_SCENARIOS
from unifab.twin.scenarios import SCENARIOS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ibsim import ibsim_fabric

BACKEND_ONLY = {"ib-job-sl", "ib-affinity"}  # an IB storage network's HCAs carry no NCCL and are no GPU's rail


def _pairs(truth: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}


def _found(bundle: Path) -> set[tuple[str, str]]:
    return {(f.check, e) for f in run_checks(load_bundle(bundle)) for e in f.entities}


@pytest.mark.parametrize("fabric", ["ib", "mixed"])
def test_clean_ib_and_mixed_twins_are_clean(tmp_path: Path, fabric: str) -> None:
    generate(tmp_path / "b", gpus=128, seed=0, fabric=fabric)
    fabric_model = load_bundle(tmp_path / "b")
    kinds = {nic.fabric for host in fabric_model.hosts.values() for nic in host.nics.values()}
    assert kinds == ({"ib"} if fabric == "ib" else {"ib", "roce"})  # mixed: every host shows both
    if fabric == "mixed":
        host = fabric_model.hosts["gpu001"]
        assert {n.fabric for n in host.nics.values()} == {"ib", "roce"} and host.nics["mlx5_8"].ib is not None
    assert fabric_model.ib is not None and fabric_model.ib.sm_collected
    for host in fabric_model.hosts.values():  # each GPU under its own rail NIC's (an IB backend: HCA's) switch
        assert {(g.index, g.nic, g.nic_relation) for g in host.gpus.values()} == {
            (i, f"mlx5_{i}", "PIX") for i in range(8)
        }, host.name
    assert run_checks(fabric_model) == []


@pytest.mark.parametrize(("fabric", "seed"), [("ib", 1), ("ib", 4), ("mixed", 2)])
def test_every_ib_injection_found_and_nothing_else(tmp_path: Path, fabric: str, seed: int) -> None:
    result = generate(tmp_path / "b", gpus=256, seed=seed, scenarios=tuple(IB_SCENARIOS), fabric=fabric)
    truth = json.loads((tmp_path / "b" / "truth.json").read_text())
    assert truth == result.truth and truth["generator"]["fabric"] == fabric
    skipped = {s["scenario"] for s in truth["skipped"]}
    assert skipped == (set() if fabric == "ib" else BACKEND_ONLY)  # storage carries no NCCL traffic, has no GPU
    assert {m["scenario"] for m in truth["misconfigurations"]} | skipped | BENIGN == set(IB_SCENARIOS)
    assert _found(tmp_path / "b") == _pairs(truth)


def test_mixed_twin_with_every_roce_and_ib_scenario(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=256, seed=3, scenarios=(*SCENARIOS, *IB_SCENARIOS), fabric="mixed")
    skipped = {s["scenario"] for s in result.truth["skipped"]}
    assert skipped & set(IB_SCENARIOS) == BACKEND_ONLY  # (RoCE scenarios may skip on a mixed twin of their own)
    assert _found(tmp_path / "b") == _pairs(result.truth)


def test_ib_affinity_from_ncclS_topology_alone(tmp_path: Path) -> None:
    """An IB host whose GPU placement is known only from NCCL's topology XML (no ``nvidia-smi topo -m``): the HCA
    a GPU sits beside comes from the XML's PCI tree, and the misplaced GPU is still the one finding."""
    result = generate(tmp_path / "b", gpus=128, seed=5, scenarios=("ib-affinity",), fabric="ib")
    removed = list((tmp_path / "b" / "hosts").glob("*/cmd/nvidia-smi-topo-m.txt"))
    assert removed
    for path in removed:
        path.unlink()
    fabric = load_bundle(tmp_path / "b")
    assert all(host.gpus and all(g.nic for g in host.gpus.values()) for host in fabric.hosts.values())
    assert _found(tmp_path / "b") == _pairs(result.truth) and result.truth["misconfigurations"]


@pytest.mark.parametrize("scenario", sorted(IB_SCENARIOS))
def test_each_ib_scenario_alone(tmp_path: Path, scenario: str) -> None:
    result = generate(tmp_path / "b", gpus=128, seed=5, scenarios=(scenario,), fabric="ib")
    assert bool(result.truth["misconfigurations"]) == (scenario not in BENIGN) and not result.truth["skipped"]
    findings = run_checks(load_bundle(tmp_path / "b"))
    assert {(f.check, e) for f in findings for e in f.entities} == _pairs(result.truth)
    for m in result.truth["misconfigurations"]:
        if "device" in m:  # the second master's host is the one the fix names
            [f] = [f for f in findings if f.check == m["check"]]
            assert m["device"] in {x.device for x in f.fix}


def test_default_twin_is_unchanged_and_roce(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=64, seed=0)
    assert "fabric" not in result.truth["generator"]
    assert not (tmp_path / "b" / "ib").exists()


@pytest.mark.parametrize(
    ("fabric", "scenario", "message"),
    [
        ("roce", "ib-second-master", "needs --fabric ib or mixed"),
        ("ib", "pfc-mismatch", "needs --fabric roce or mixed"),
        ("token-ring", "pfc-mismatch", "unknown fabric"),
    ],
)
def test_scenarios_refuse_a_twin_that_cannot_express_them(
    tmp_path: Path, fabric: str, scenario: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        generate(tmp_path / "b", gpus=64, scenarios=(scenario,), fabric=fabric)
    assert not (tmp_path / "b").exists()


def test_ib_files_parse_back_with_the_real_formats(tmp_path: Path) -> None:
    generate(tmp_path / "b", gpus=64, seed=0, scenarios=("ib-port-errors", "ib-degraded-link"), fabric="ib")
    ib = tmp_path / "b" / "ib"
    topo = ibnetdiscover.parse((ib / "ibnetdiscover.txt").read_text())
    assert len([n for n in topo.nodes if n.kind == "ca"]) == 64 and len(ibnetdiscover.links(topo)) == 64 + 64
    info = iblinkinfo.parse((ib / "iblinkinfo.txt").read_text())
    assert {(p.node_description, p.port) for p in info.connected() if p.node_kind == "ca"} == {
        (f"gpu{h:03d} mlx5_{r}", 1) for h in range(1, 9) for r in range(8)
    }
    counters = perfquery.parse((ib / "perfquery.txt").read_text())
    saturated = [b for b in counters.blocks if b.saturated("SymbolErrorCounter")]
    assert len(saturated) == 1 and saturated[0].counters["LinkDownedCounter"] == 7
    master = sminfo.parse((ib / "sminfo.txt").read_text())
    assert master.is_master and master.priority == 15
    stat = ibstat.parse((tmp_path / "b" / "hosts" / "gpu001" / "cmd" / "ibstat.txt").read_text())
    assert [ca.name for ca in stat.cas] == [f"mlx5_{r}" for r in range(8)]


def test_the_twins_netfile_runs_in_the_real_simulator(tmp_path: Path) -> None:
    """ibsim loads ib/ibsim.net; the real ibnetdiscover sees the twin's cabling, GUIDs and trained widths and
    speeds, and the checks find the cabling faults in the real tool's output as in the twin's own."""
    scenarios = ("ib-swapped-cable", "ib-missing-cable", "ib-degraded-link")
    result = generate(tmp_path / "b", gpus=64, seed=2, scenarios=scenarios, fabric="ib")
    ours = ibnetdiscover.parse((tmp_path / "b" / "ib" / "ibnetdiscover.txt").read_text())
    netfile = (tmp_path / "b" / "ib" / "ibsim.net").read_text()
    with ibsim_fabric(tmp_path / "sim", netfile, attach="H-gpu001-mlx5_0") as sim:
        sim.sweep()
        real_text = sim.run(["ibnetdiscover"])
    real = ibnetdiscover.parse(real_text, "ibnetdiscover")

    def links(topo: ibnetdiscover.IbTopology) -> set[tuple[frozenset[tuple[str, int]], int | None, str | None]]:
        return {
            (frozenset({(lk.a_id, lk.a_port), (lk.b_id, lk.b_port)}), lk.width, lk.speed)
            for lk in ibnetdiscover.links(topo)
        }

    assert links(real) == links(ours)
    assert {(n.id, n.description) for n in real.nodes} == {(n.id, n.description) for n in ours.nodes}
    bundle = tmp_path / "real"
    shutil.copytree(tmp_path / "b", bundle)
    for name in ("iblinkinfo.txt", "perfquery.txt"):  # their LIDs are the twin's, not the simulator's SM's
        (bundle / "ib" / name).unlink()
    for path in bundle.glob("hosts/*/cmd/ibstat.txt"):  # and so are the hosts' own LIDs (ibstat, sysfs)
        path.unlink()
    for path in bundle.glob("hosts/*/sys/class/infiniband/*/ports/*/*lid"):
        path.unlink()
    (bundle / "ib" / "ibnetdiscover.txt").write_text(real_text)
    found = {(f.check, e) for f in run_checks(load_bundle(bundle)) for e in f.entities}
    assert found == _pairs(result.truth)
