"""ECMP candidate paths in a leaf-spine fabric: which spines two leaves share, which jobs may cross an element, and
localization over the candidate sets of NCCL's leaf-shared errors (one spine, an incident that explains them, or
no way to tell)."""

from __future__ import annotations

from unifab.health.detect import FEC, NCCL_ERROR, Symptom
from unifab.health.localize import localize
from unifab.health.localize_paths import Paths
from unifab.model import Endpoint, Fabric, Host, Job, Link, Nic, Port, Switch

# leaf0, leaf1 reach spine1 and spine2; leaf2, leaf3 reach spine2 and spine3 (a partial mesh); two hosts per leaf
SPINES = {
    "leaf0": ("spine1", "spine2"),
    "leaf1": ("spine1", "spine2"),
    "leaf2": ("spine2", "spine3"),
    "leaf3": ("spine2", "spine3"),
}


def partial_mesh() -> Fabric:
    hosts = {
        f"gpu{h:03d}": Host(f"gpu{h:03d}", {"eth0": Nic(f"gpu{h:03d}", "eth0", "mlx5_0", 9000, None)})
        for h in range(1, 9)
    }
    switches: dict[str, Switch] = {}
    links: list[Link] = []

    def port(switch: str, name: str) -> Endpoint:
        sw = switches.setdefault(switch, Switch(switch, "sonic", "x", {}))
        sw.ports[name] = Port(switch, name, 9100, 400_000, "up", None)
        return Endpoint(switch, name)

    for h in range(1, 9):
        leaf = f"leaf{(h - 1) // 2}"
        links.append(
            Link(Endpoint(f"gpu{h:03d}", "eth0"), port(leaf, f"Ethernet{8 * ((h - 1) % 2)}"), frozenset({"lldp"}))
        )
    for leaf, spines in SPINES.items():
        for i, spine in enumerate(spines):
            links.append(
                Link(port(leaf, f"Ethernet{64 + 8 * i}"), port(spine, f"Ethernet{leaf[-1]}"), frozenset({"lldp"}))
            )
    jobs = {
        "job:slurm:1": Job("job:slurm:1", "a", ("gpu001", "gpu003")),  # leaf0 and leaf1
        "job:slurm:2": Job("job:slurm:2", "b", ("gpu005", "gpu007")),  # leaf2 and leaf3
        "job:slurm:3": Job("job:slurm:3", "c", ("gpu001", "gpu002")),  # both under leaf0: never leaves it
        "job:slurm:4": Job("job:slurm:4", "d", ("gpu002", "gpu006")),  # leaf0 and leaf2
    }
    return Fabric(hosts=hosts, switches=switches, links=links, jobs=jobs)


def test_spines_a_leaf_reaches_and_the_jobs_that_may_cross_each_element() -> None:
    paths = Paths(partial_mesh())
    assert paths.leaves == {"leaf0", "leaf1", "leaf2", "leaf3"}
    assert paths.common_spines(["leaf0", "leaf1"]) == {"spine1", "spine2"}
    assert paths.common_spines(["leaf0", "leaf2"]) == {"spine2"} and paths.common_spines([]) == set()
    assert paths.jobs_crossing_leaf("leaf0") == {"job:slurm:1", "job:slurm:4"}  # job 3 stays under leaf0
    assert paths.jobs_crossing_spine("spine1") == {"job:slurm:1"}
    assert paths.jobs_crossing_spine("spine2") == {"job:slurm:1", "job:slurm:2", "job:slurm:4"}
    [up] = paths.uplinks["leaf2"]["spine3"]
    assert paths.jobs_crossing_link(up) == {"job:slurm:2"}
    assert {e.node for e in paths.uplink_ends("leaf0")} == {"leaf0", "spine1", "spine2"}
    assert {e.node for e in paths.spine_ends("spine1")} == {"leaf0", "leaf1", "spine1"}


def shared(leaf: str, start: float = 1000.0, end: float = 1300.0) -> Symptom:
    note = (f"4 NIC pairs from 2 of {leaf}'s NICs to 2 other leaves share only {leaf} and its uplinks (ECMP)",)
    return Symptom(NCCL_ERROR, f"switch:{leaf}", Endpoint(leaf, ""), "status=12", start, end, 8, 4, 0.0, 0, note)


def test_one_leaf_alone_is_its_uplinks_with_the_jobs_that_may_cross_them() -> None:
    [incident] = localize(partial_mesh(), [shared("leaf1")])
    assert (incident.kind, incident.root, incident.confidence) == ("switch", "switch:leaf1", 0.6)
    assert incident.jobs == ("job:slurm:1",) and incident.hosts == ()  # the hosts are fine: nothing to drain
    assert incident.gpus_at_risk == 0 and incident.actions[-1].kind == "advice"  # no GPUs in the fixture


def test_leaves_with_one_spine_in_common_at_once_are_that_spine() -> None:
    [incident] = localize(partial_mesh(), [shared("leaf0"), shared("leaf3", 1100.0)])
    assert (incident.kind, incident.root) == ("switch", "switch:spine2")
    assert incident.confidence < 0.6 and len(incident.symptoms) == 2 and incident.start == 1000.0
    assert incident.jobs == ("job:slurm:1", "job:slurm:2", "job:slurm:4")
    assert "ECMP hides" in incident.not_explained[0] and incident.actions[-1].kind == "advice"


def test_leaves_at_different_times_are_separate_faults() -> None:
    got = localize(partial_mesh(), [shared("leaf0"), shared("leaf3", 5000.0, 5300.0)])
    assert [i.root for i in got] == ["switch:leaf0", "switch:leaf3"]
    assert not any("spines they all reach" in n for i in got for n in i.not_explained)


def test_leaves_sharing_several_spines_stay_one_incident_each_and_say_which_spines() -> None:
    got = localize(partial_mesh(), [shared("leaf0"), shared("leaf1")])
    assert [i.root for i in got] == ["switch:leaf0", "switch:leaf1"]
    for incident in got:
        assert any("(spine1, spine2)" in n for n in incident.not_explained)


def test_an_incident_on_one_of_the_leafs_uplinks_explains_its_nccl_errors() -> None:
    errors = Symptom(FEC, "port:spine3:Ethernet2", Endpoint("spine3", "Ethernet2"), "x", 900, 1500, 10, 5, 1.0)
    [incident] = localize(partial_mesh(), [errors, shared("leaf2")])
    assert (incident.kind, incident.root) == ("optic", "optic:spine3:Ethernet2")
    assert len(incident.symptoms) == 2 and incident.confidence > 0.75
    assert incident.jobs == ("job:slurm:2",)  # the jobs that may cross that uplink, not every job of leaf2
    other = Symptom(FEC, "port:spine2:Ethernet2", Endpoint("spine2", "Ethernet2"), "x", 900, 1500, 10, 5, 1.0)
    two = localize(partial_mesh(), [errors, other, shared("leaf2")])  # two uplinks erroring: no telling which
    assert sorted(i.root for i in two) == ["optic:spine2:Ethernet2", "optic:spine3:Ethernet2", "switch:leaf2"]
