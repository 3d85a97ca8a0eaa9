"""Topology scenarios: the plan keeps the intent, LLDP shows the real cabling, checks find exactly the truth."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from unifab.checks import topology
from unifab.checks.context import CheckContext
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding
from unifab.twin.cluster import build
from unifab.twin.scenario_needs import Kinds
from unifab.twin.scenarios import NEEDS, SCENARIOS, Picker, Truth
from unifab.twin.topology_scenarios import NCCL_AND_LINK_SCENARIOS, TOPOLOGY_SCENARIOS
from unifab.twin.writer import write_bundle

NEW = tuple(NCCL_AND_LINK_SCENARIOS)
ALL_TOPOLOGY = (*TOPOLOGY_SCENARIOS, *NEW)
NEW_CHECKS = ("TOPO-PCIE-AFFINITY", "TOPO-NCCL-HCA", "TOPO-DEGRADED", "TOPO-UPLINKS")
EVIDENCE_CHECKS = ("COVERAGE", "TOPO-UNVERIFIED")  # what was not collected, and what nothing confirms


def _generate(out: Path, gpus: int, seed: int, names: tuple[str, ...], switch_os: str = "sonic") -> list[Truth]:
    """Like ``twin generate``: the existing scenarios first (catalog order), then the topology ones."""
    cluster = build(gpus, switch_os=switch_os)
    pick = Picker(cluster, random.Random(seed))
    catalog = {**SCENARIOS, **TOPOLOGY_SCENARIOS, **NCCL_AND_LINK_SCENARIOS}
    kinds = Kinds.of(cluster)
    runnable = [n for n in catalog if n in names and (n not in NEEDS or NEEDS[n].met(kinds))]
    truth = [t for name in runnable for t in catalog[name](cluster, pick)]
    assert pick.skipped == []
    for t in truth:  # as twin.generate does: a switch-wide setting cannot be judged on links to an unseen leaf
        if t["subject"].get("kind") == "switch":
            t["entities"] = [e for e in t["entities"] if not _touches(e, cluster.uncollected)]
    write_bundle(cluster, out)
    return truth


def _touches(entity: str, devices: set[str]) -> bool:
    return entity.startswith("link:") and any(
        end.rsplit(":", 1)[0] in devices for end in entity.removeprefix("link:").split("--")
    )


def _findings(out: Path) -> list[Finding]:
    fabric = load_bundle(out)
    ctx = CheckContext.build(fabric)
    topo = [f for spec in topology.CHECKS if spec.run is not None for f in spec.run(ctx)]
    return [*run_checks(fabric), *topo]


def _pairs(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.check, e) for f in findings for e in f.entities}


def _expected(truth: list[Truth]) -> set[tuple[str, str]]:
    return {(t["check"], e) for t in truth for e in t["entities"]}


@pytest.mark.parametrize("scenario", sorted(ALL_TOPOLOGY))
def test_each_scenario_alone(tmp_path: Path, scenario: str) -> None:
    truth = _generate(tmp_path / "b", 256, 5, (scenario,))
    assert truth
    findings = _findings(tmp_path / "b")
    assert _pairs(findings) == _expected(truth)
    # one finding per injected root cause, naming all its entities; cabling is fixed at the switch
    by_entities = {(f.check, f.entities): f for f in findings}
    for t in truth:
        f = by_entities[(t["check"], tuple(t["entities"]))]
        assert f.subject == t["subject"]
        assert f.fix and all(x.commands for x in f.fix)
        if t["side"] == "switch":
            assert all(x.device.startswith("leaf") for x in f.fix)
        if "device" in t:
            assert {x.device for x in f.fix} == {t["device"]}


@pytest.mark.parametrize(
    ("gpus", "seed"),
    [(64, 1), (256, 2), pytest.param(512, 7, marks=pytest.mark.slow), pytest.param(1024, 11, marks=pytest.mark.slow)],
)
def test_all_scenarios_recall_and_no_extra_findings(tmp_path: Path, gpus: int, seed: int) -> None:
    names = (*SCENARIOS, *ALL_TOPOLOGY)
    truth = _generate(tmp_path / "b", gpus, seed, names)
    assert {t["check"] for t in truth} >= {"TOPO-MISWIRED", "TOPO-MISSING", "TOPO-RAIL", *NEW_CHECKS, *EVIDENCE_CHECKS}
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)


def test_plan_keeps_the_intent_and_lldp_shows_the_cabling(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 64, 3, ("miswire",))
    [t] = truth
    plan = (tmp_path / "b" / "plan" / "cabling.csv").read_text()
    fabric = load_bundle(tmp_path / "b")
    by_id = {lk.id: lk for lk in fabric.links}
    for planned in t["entities"]:
        a, b = (end.replace(":", ",") for end in planned.removeprefix("link:").split("--"))
        assert f"{a},{b}," in plan or f"{b},{a}," in plan
        assert by_id[planned].sources == frozenset({"plan"})
    discovered = [lk for lk in fabric.links if lk.sources == frozenset({"lldp"})]
    assert len(discovered) == 2


def test_clean_twin_has_no_topology_findings(tmp_path: Path) -> None:
    _generate(tmp_path / "b", 256, 0, ())
    assert _findings(tmp_path / "b") == []


@pytest.mark.parametrize(("switch_os", "seed"), [("eos", 1), ("nvue", 2), ("mixed", 3)])
def test_other_switch_oses_report_the_real_cabling(tmp_path: Path, switch_os: str, seed: int) -> None:
    truth = _generate(tmp_path / "b", 256, seed, ALL_TOPOLOGY, switch_os=switch_os)
    assert {t["check"] for t in truth} == {"TOPO-MISWIRED", "TOPO-MISSING", "TOPO-RAIL", *NEW_CHECKS, *EVIDENCE_CHECKS}
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)


# --- what NCCL assumes, and the links' capacity ------------------------------------------------------------


def test_affinity_reads_the_same_from_nvidia_smi_and_the_nccl_topology(tmp_path: Path) -> None:
    """Both views of the host agree: without nvidia-smi topo -m the NCCL XML gives the same pairing."""
    [t] = _generate(tmp_path / "b", 64, 4, ("affinity",))
    host, gpu = t["entities"][0].removeprefix("gpu:").split(":")
    both = load_bundle(tmp_path / "b").hosts[host].gpus
    assert both[int(gpu)].nic_relation == "NODE"
    assert sum(g.nic_relation == "PIX" for g in both.values()) == 7
    (tmp_path / "b" / "hosts" / host / "cmd" / "nvidia-smi-topo-m.txt").unlink()
    xml_only = load_bundle(tmp_path / "b").hosts[host].gpus
    assert [(g.nic, g.nic_relation) for g in xml_only.values()] == [(g.nic, g.nic_relation) for g in both.values()]
    [f] = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "TOPO-PCIE-AFFINITY"]
    assert f"GPU {gpu}'s closest NIC" in f.message and "NODE" in f.impact["summary"]


@pytest.mark.parametrize("seed", range(6))
def test_nccl_hca_variants_each_leave_out_the_rail_the_truth_names(tmp_path: Path, seed: int) -> None:
    [t] = _generate(tmp_path / "b", 128, seed, ("nccl-hca",))
    job = t["entities"][0].rsplit(":", 1)[1]
    env = (tmp_path / "b" / "scheduler" / "env" / f"{job}.env").read_text()
    value = t["detail"].split(" ", 1)[0].removeprefix("NCCL_IB_HCA=")
    assert f"NCCL_IB_HCA={value}\n" in env
    [f] = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "TOPO-NCCL-HCA"]
    [dropped] = f.evidence["b"]["left_out"]
    assert dropped in t["detail"] and not f.evidence["b"]["non_rail_included"]
    assert f.fix[0].commands == ("export NCCL_IB_HCA==" + ",".join(f"mlx5_{r}:1" for r in range(8)),)


def test_degraded_link_shows_on_both_ends_and_only_as_topo_degraded(tmp_path: Path) -> None:
    [t] = _generate(tmp_path / "b", 128, 6, ("degraded-link",))
    fabric = load_bundle(tmp_path / "b")
    host, netdev = t["subject"]["a"].split(":")
    leaf, port = t["subject"]["b"].split(":")
    assert fabric.hosts[host].nics[netdev].speed_mbps == 200_000
    assert fabric.switches[leaf].ports[port].speed_mbps == 200_000
    assert [f.check for f in run_checks(fabric)] == ["TOPO-DEGRADED"]


def test_uplink_down_truth_lists_every_missing_cable_and_the_ratio(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 64, 8, ("uplink-down",))
    [uplinks] = [t for t in truth if t["check"] == "TOPO-UPLINKS"]
    missing = sorted(e for t in truth if t["check"] == "TOPO-MISSING" for e in t["entities"])
    assert uplinks["entities"] == missing and len(missing) == 2  # a quarter of 8 uplinks
    [f] = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "TOPO-UPLINKS"]
    assert f.message.endswith("6 of 8 planned uplinks up: oversubscribed 1.33:1 instead of 1:1")


# --- what could not be seen ----------------------------------------------------------------------------------


def _host_port(t: Truth) -> tuple[str, str, str]:
    host, netdev = t["subject"]["a"].split(":")
    return host, netdev, t["subject"]["b"].split(":")[0]


def test_uncollected_leaf_is_one_coverage_finding_and_its_cables_stay_verified(tmp_path: Path) -> None:
    [t] = _generate(tmp_path / "b", 128, 3, ("leaf-uncollected",))
    leaf = t["device"]
    assert not (tmp_path / "b" / "switches" / leaf).exists()
    fabric = load_bundle(tmp_path / "b")
    assert leaf not in fabric.switches and fabric.input_findings == []
    its = [lk for lk in fabric.links if leaf in (lk.a.node, lk.b.node)]
    assert its and all(lk.sources == frozenset({"plan", "lldp"}) for lk in its)  # host and spine LLDP see it
    [f] = run_checks(fabric)
    assert (f.check, f.entities, f.severity.value) == ("COVERAGE", (f"switch:{leaf}",), "warning")
    assert f.evidence["b"]["confirmed_by_other_end"] == len(its) and f.evidence["b"]["seen_by_neither_end"] == []
    assert f.evidence["b"]["jobs"] and "TOPO-UPLINKS" in f.evidence["b"]["checks_not_run"]


@pytest.mark.parametrize("seed", range(3))
def test_uncollected_leaf_keeps_its_nics_rail_nics_for_nccl_hca(tmp_path: Path, seed: int) -> None:
    truth = _generate(tmp_path / "b", 128, seed, ("leaf-uncollected", "nccl-hca"))
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)
    [f] = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "TOPO-NCCL-HCA"]
    assert not f.evidence["b"]["non_rail_included"] and "non-rail" not in f.message
    assert f.fix[0].commands == ("export NCCL_IB_HCA==" + ",".join(f"mlx5_{r}:1" for r in range(8)),)


def test_host_port_down_is_dark_in_every_host_file_and_missing(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 128, 4, ("host-port-down",))
    [cov] = [t for t in truth if t["check"] == "COVERAGE"]
    [t] = [t for t in truth if t["check"] == "TOPO-MISSING"]
    host, netdev, leaf = _host_port(t)
    assert cov["device"] == leaf
    cmd = tmp_path / "b" / "hosts" / host / "cmd"
    assert (
        f"{netdev}: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 9000 qdisc mq state DOWN"
        in (cmd / "ip-d-link.txt").read_text()
    )
    assert f"==> {netdev} (Down)" in (cmd / "ibdev2netdev.txt").read_text()
    lldp = (cmd / "lldpcli.json").read_text()
    assert f'"name": "{netdev}"' not in lldp and lldp.count('"name": "eth') == 7  # its other ports hear LLDP
    fabric = load_bundle(tmp_path / "b")
    assert fabric.hosts[host].nics[netdev].port_state == "DOWN"
    [f] = [f for f in run_checks(fabric) if f.check == "TOPO-MISSING"]
    assert f.message.endswith(f"host end {host}:{netdev} dark (RDMA port DOWN), far end not collected")
    assert [x.device for x in f.fix] == [host, leaf]


def test_host_no_lldp_is_up_without_a_neighbour_and_unverified(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 128, 5, ("host-no-lldp",))
    [t] = [t for t in truth if t["check"] == "TOPO-UNVERIFIED"]
    host, netdev, leaf = _host_port(t)
    cmd = tmp_path / "b" / "hosts" / host / "cmd"
    assert f"{netdev}: <BROADCAST,MULTICAST,UP,LOWER_UP>" in (cmd / "ip-d-link.txt").read_text()
    lldp = (cmd / "lldpcli.json").read_text()
    assert f'"name": "{netdev}"' not in lldp and lldp.count('"name": "eth') == 7  # its other ports hear LLDP
    [f] = [f for f in run_checks(load_bundle(tmp_path / "b")) if f.check == "TOPO-UNVERIFIED"]
    assert f.severity.value == "warning" and f"far end {leaf} not collected" in f.message
    assert f.fix[0].device == host and f.fix[0].commands[0] == f"lldpcli show neighbors ports {netdev} details"


def test_the_three_share_one_uncollected_leaf(tmp_path: Path) -> None:
    truth = _generate(tmp_path / "b", 128, 6, ("leaf-uncollected", "host-port-down", "host-no-lldp"))
    assert sorted(t["check"] for t in truth) == ["COVERAGE", "TOPO-MISSING", "TOPO-UNVERIFIED"]
    [cov] = [t for t in truth if t["check"] == "COVERAGE"]
    assert {_host_port(t)[2] for t in truth if t["check"] != "COVERAGE"} == {cov["device"]}
    assert _pairs(_findings(tmp_path / "b")) == _expected(truth)
