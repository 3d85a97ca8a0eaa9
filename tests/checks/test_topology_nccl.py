"""TOPO-PCIE-AFFINITY and TOPO-NCCL-HCA over small hosts built from model records."""

from __future__ import annotations

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.topology_nccl import check_nccl_hca, check_pcie_affinity
from unifab.model import Endpoint, Fabric, Finding, Gpu, Host, Job, Link, Nic, Port, Switch

RAILS = 4


def _fabric(
    relations: dict[int, tuple[str, str]] | None = None,
    hosts: int = 2,
    frontend: bool = True,
    gpus: int = RAILS,
    cabled: bool = True,
) -> Fabric:
    """``hosts`` hosts h<i>: GPU g next to mlx5_g (PIX) unless ``relations[g] = (nic, relation)``; NIC r cabled
    to leaf-r<r>; with ``frontend`` a ``mlx5_bond_0`` NIC cabled to the frontend switch ``fe1``."""
    relations = relations or {}
    fabric = Fabric()
    for r in range(RAILS):
        names = [f"Ethernet{h * 8}" for h in range(hosts)]
        ports = {p: Port(f"leaf-r{r}", p, 9100, None, "up", None) for p in names}
        fabric.switches[f"leaf-r{r}"] = Switch(f"leaf-r{r}", "sonic", "x", ports)
    fe_ports = {f"Ethernet{h}": Port("fe1", f"Ethernet{h}", 9100, 100_000, "up", None) for h in range(hosts)}
    fabric.switches["fe1"] = Switch("fe1", "sonic", "x", fe_ports)
    for h in range(hosts):
        name = f"h{h}"
        nics = {f"eth{r}": Nic(name, f"eth{r}", f"mlx5_{r}", 9000, None) for r in range(RAILS)}
        if frontend:
            nics["bond0"] = Nic(name, "bond0", "mlx5_bond_0", 9000, None)
        gpu_map = {}
        for g in range(gpus):
            nic, relation = relations.get(g, (f"mlx5_{g % RAILS}", "PIX"))
            gpu_map[g] = Gpu(name, g, nic=nic, nic_relation=relation)
        fabric.hosts[name] = Host(name, nics, gpu_map)
        if cabled:
            for r in range(RAILS):
                both = frozenset({"plan", "lldp"})
                fabric.links.append(Link(Endpoint(name, f"eth{r}"), Endpoint(f"leaf-r{r}", f"Ethernet{h * 8}"), both))
            if frontend:
                fabric.links.append(Link(Endpoint(name, "bond0"), Endpoint("fe1", f"Ethernet{h}"), frozenset({"lldp"})))
    return fabric


def _affinity(fabric: Fabric) -> list[Finding]:
    return list(check_pcie_affinity(CheckContext.build(fabric)))


def _hca(fabric: Fabric, value: str | None, env_known: bool = True) -> list[Finding]:
    job = Job("job:slurm:7", "train", tuple(fabric.hosts), nccl_ib_hca=value, env_known=env_known)
    fabric.jobs[job.id] = job
    return list(check_nccl_hca(CheckContext.build(fabric)))


# --- TOPO-PCIE-AFFINITY --------------------------------------------------------------------------------------


def test_affinity_passes_when_every_gpu_has_its_own_pix_or_pxb_nic() -> None:
    assert _affinity(_fabric()) == []
    assert _affinity(_fabric({2: ("mlx5_2", "PXB")})) == []


def test_affinity_passes_when_gpus_share_nics_by_design() -> None:
    """8 GPUs on 4 NICs, two GPUs per PCIe switch: shared, but no rail NIC idles."""
    assert _affinity(_fabric(gpus=8)) == []


def test_gpu_beyond_pxb_is_one_finding_per_host_naming_gpu_nics_and_relation() -> None:
    fabric = _fabric({3: ("mlx5_0", "SYS")}, hosts=1)
    [f] = _affinity(fabric)
    assert f.subject == {"kind": "host", "id": "host:h0"}
    assert f.entities == ("gpu:h0:3", "nic:h0:mlx5_0", "nic:h0:mlx5_3")
    assert "GPU 3's closest NIC mlx5_0 is SYS" in f.message
    assert "GPUs 0, 3 share mlx5_0" in f.message and "rail NIC mlx5_3 idles" in f.message
    assert "crosses the CPU root complex" in f.impact["summary"] and "SYS" in f.impact["summary"]
    assert f.evidence["b"]["idle_rail_nics"] == ["mlx5_3"]
    assert f.evidence["b"]["shared_nics"] == {"mlx5_0": [0, 3]}
    assert {g["gpu"]: g["relation"] for g in f.evidence["a"]["gpus"]} == {"gpu:h0:0": "PIX", "gpu:h0:3": "SYS"}
    assert f.fix and f.fix[0].device == "h0"


def test_shared_nic_with_an_idle_rail_nic_fires_even_when_both_are_pix() -> None:
    [f] = _affinity(_fabric({1: ("mlx5_0", "PXB")}, hosts=1))
    assert f.entities == ("nic:h0:mlx5_0", "nic:h0:mlx5_1")
    assert "rail NIC mlx5_1 idles" in f.message


def test_idle_nic_needs_cabling_to_know_the_rails() -> None:
    """Without links no NIC is known to be a rail NIC: only the relation half of the check applies."""
    assert _affinity(_fabric({1: ("mlx5_0", "PXB")}, hosts=1, cabled=False)) == []
    [f] = _affinity(_fabric({1: ("mlx5_0", "NODE")}, hosts=1, cabled=False))
    assert f.entities == ("gpu:h0:1", "nic:h0:mlx5_0")


def test_frontend_nic_is_not_a_rail_nic_that_idles() -> None:
    assert _affinity(_fabric(frontend=True)) == []


# --- TOPO-NCCL-HCA ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1",  # exact, with ports
        "mlx5_0,mlx5_1,mlx5_2,mlx5_3",  # prefixes that match the rail NICs only
        "^mlx5_bond",  # exclude the frontend by prefix
        "^=mlx5_bond_0",
        "mlx5_0:1,mlx5_1,mlx5_2:1,mlx5_3:1,,",  # empty entries are skipped
    ],
)
def test_hca_passes_when_it_selects_exactly_the_rail_nics(value: str) -> None:
    assert _hca(_fabric(), value) == []


@pytest.mark.parametrize(
    ("value", "left_out", "let_in"),
    [
        ("mlx5", [], ["mlx5_bond_0"]),  # a prefix of every device, the frontend too
        ("^=mlx5_2", ["mlx5_2"], ["mlx5_bond_0"]),  # excluding one device lets every other one in
        ("=mlx5_0:1,mlx5_1:1,mlx5_2:2,mlx5_3:1", ["mlx5_2"], []),  # port 2 does not exist
        ("=mlx5_0,mlx5_1,mlx5_2", ["mlx5_3"], []),
        ("=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_bond_0", [], ["mlx5_bond_0"]),
        ("=mlx5_", ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"], []),  # '=' makes a name exact, not a prefix
        ("^mlx5_1,mlx5_bond", ["mlx5_1"], []),
    ],
)
def test_hca_that_leaves_out_a_rail_or_lets_in_the_frontend(value: str, left_out: list[str], let_in: list[str]) -> None:
    [f] = _hca(_fabric(), value)
    assert f.check == "TOPO-NCCL-HCA" and f.subject == {"kind": "job", "id": "job:slurm:7"}
    assert f.entities == ("job:slurm:7",)
    assert sorted(f.evidence["b"]["left_out"]) == left_out
    assert sorted(f.evidence["b"]["non_rail_included"]) == let_in
    assert all(hosts == ["h0", "h1"] for hosts in f.evidence["b"]["left_out"].values())
    for dev in left_out:
        assert f"leaves out rail NIC {dev}" in f.message
    if left_out:
        assert f"NCCL runs on {RAILS - len(left_out)} of {RAILS} rails" in f.impact["summary"]
    if let_in:
        assert "includes non-rail NIC mlx5_bond_0 on 2 of 2 hosts" in f.message
        assert "lossless" in f.impact["summary"]
    [fix] = f.fix
    assert fix.device == "job:slurm:7"
    assert fix.commands == ("export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1",)


def test_hca_reads_as_nccl_does() -> None:
    [f] = _hca(_fabric(), "^=mlx5_2:1")
    assert f.evidence["a"]["reads_as"] == {"exclude": True, "exact": True, "devices": ["mlx5_2:1"]}


def test_hca_unset_or_unknown_environment_is_not_judged() -> None:
    assert _hca(_fabric(), None) == []
    assert _hca(_fabric(), "=mlx5_0", env_known=False) == []


def test_hca_skips_hosts_without_rail_knowledge() -> None:
    assert _hca(_fabric(cabled=False), "=mlx5_0") == []


# --- rails from the plan and LLDP, not only from collected leaves -------------------------------------------


def _without_leaf(fabric: Fabric, leaf: str, lldp: bool = True) -> Fabric:
    """``leaf`` not collected; without ``lldp`` only the plan names its cables."""
    del fabric.switches[leaf]
    if not lldp:
        fabric.links = [
            Link(lk.a, lk.b, frozenset({"plan"})) if leaf in (lk.a.node, lk.b.node) else lk for lk in fabric.links
        ]
    return fabric


@pytest.mark.parametrize("lldp", [True, False])
def test_hca_does_not_accuse_the_nics_of_an_uncollected_leaf(lldp: bool) -> None:
    fabric = _without_leaf(_fabric(), "leaf-r2", lldp=lldp)
    assert _hca(fabric, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1") == []
    [f] = _hca(fabric, "=mlx5_0,mlx5_1,mlx5_3")
    assert f.evidence["b"]["left_out"] == {"mlx5_2": ["h0", "h1"]} and not f.evidence["b"]["non_rail_included"]
    assert f.fix[0].commands == ("export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1",)


def test_hca_does_not_judge_a_nic_no_cable_names_and_its_fix_keeps_it() -> None:
    fabric = _fabric()
    for name, host in fabric.hosts.items():
        host.nics["eth9"] = Nic(name, "eth9", "mlx5_9", 9000, None)  # no plan, no LLDP: unknown
    [f] = _hca(fabric, "mlx5")
    assert f.evidence["b"]["non_rail_included"] == {"mlx5_bond_0": ["h0", "h1"]}
    assert f.evidence["b"]["not_judged"] == {"mlx5_9": ["h0", "h1"]}
    assert "mlx5_9" not in f.message
    assert f.fix[0].commands == ("export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_9:1",)


def test_affinity_knows_the_rail_nics_of_an_uncollected_leaf() -> None:
    fabric = _without_leaf(_fabric({1: ("mlx5_0", "PXB")}, hosts=1), "leaf-r1", lldp=False)
    [f] = _affinity(fabric)
    assert "rail NIC mlx5_1 idles" in f.message
