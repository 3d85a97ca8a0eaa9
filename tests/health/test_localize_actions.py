"""Drain actions in the scheduler's own commands (scontrol for Slurm hosts, kubectl cordon/drain for Kubernetes),
and PFC pause spreading upstream from a stuck receiver traced back to it."""

from __future__ import annotations

from dataclasses import replace

from unifab.health.detect import FEC, LINK_FLAP, PFC_STORM, Symptom
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric, Host, Job, Link
from unifab.render.scheduler import drain_argvs

K8S = "job:k8s:ml/llama-pretrain"


def sym(detector: str, node: str, port: str, start: float = 100.0) -> Symptom:
    kind = "port" if node.startswith(("leaf", "spine")) else "nic"
    entity = f"port:{node}:{port}" if kind == "port" else f"nic:{node}:mlx5_{port[-1]}"
    return Symptom(detector, entity, Endpoint(node, port), "x", start, start + 300, 10, 5, 1.0)


def kubectl_drain(node: str) -> tuple[str, ...]:
    """The cordon and drain of one Kubernetes node, from the one scheduler builder."""
    return tuple(" ".join(argv) for argv in drain_argvs("kubernetes", [node], ""))


def with_jobs(fabric: Fabric, *jobs: Job) -> Fabric:
    return replace(fabric, jobs={j.id: j for j in jobs})


def drain_of(fabric: Fabric, symptoms: list[Symptom]) -> tuple[str, ...]:
    [incident] = localize(fabric, symptoms)
    [drain] = [a for a in incident.actions if a.kind == "drain"]
    return drain.commands


def test_a_host_running_a_kubernetes_job_is_cordoned_and_drained_with_kubectl(fabric: Fabric) -> None:
    k8s = with_jobs(fabric, Job(K8S, "llama-pretrain", ("gpu001",)))
    [incident] = localize(k8s, [sym(LINK_FLAP, "gpu001", "eth0", 160), sym(LINK_FLAP, "leaf0", "Ethernet0", 130)])
    assert incident.jobs == (K8S,)
    drain = incident.actions[0]
    assert drain.kind == "drain" and drain.commands == (
        "kubectl cordon gpu001",
        "kubectl drain gpu001 --ignore-daemonsets --delete-emptydir-data",
    )
    assert "evicts the pods" in drain.why and K8S in drain.why
    assert not any(c.startswith("scontrol") for c in drain.commands)


def test_a_slurm_host_keeps_scontrol(fabric: Fabric) -> None:
    assert drain_of(fabric, [sym(LINK_FLAP, "gpu001", "eth0"), sym(LINK_FLAP, "leaf0", "Ethernet0")]) == (
        "scontrol update NodeName=gpu001 State=DRAIN 'Reason=unifab: HEALTH-LINK-FLAP, root cause "
        "link:gpu001:eth0--leaf0:Ethernet0'",
    )


def test_a_switch_over_slurm_and_kubernetes_hosts_drains_each_in_its_own_scheduler(fabric: Fabric) -> None:
    mixed = with_jobs(fabric, Job("job:slurm:7", "train", ("gpu001",)), Job(K8S, "llama-pretrain", ("gpu002",)))
    symptoms = [sym(LINK_FLAP, "leaf0", p) for p in ("Ethernet0", "Ethernet8", "Ethernet64")]
    commands = drain_of(mixed, symptoms)
    assert commands[0].startswith("scontrol update NodeName=gpu001 State=DRAIN 'Reason=")
    assert commands[1:] == kubectl_drain("gpu002")


def test_a_host_running_jobs_of_both_gets_both(fabric: Fabric) -> None:
    both = with_jobs(fabric, Job("job:slurm:7", "train", ("gpu001",)), Job(K8S, "llama-pretrain", ("gpu001",)))
    commands = drain_of(both, [sym(FEC, "gpu001", "eth0")])
    assert commands[0].startswith("scontrol update NodeName=gpu001") and commands[1:] == kubectl_drain("gpu001")


def test_an_idle_host_goes_to_the_clusters_only_scheduler(fabric: Fabric) -> None:
    k8s = with_jobs(fabric, Job(K8S, "llama-pretrain", ("gpu001",)))
    assert drain_of(k8s, [sym(FEC, "gpu002", "eth0")]) == kubectl_drain("gpu002")  # no job of its own
    assert drain_of(with_jobs(fabric), [sym(FEC, "gpu002", "eth0")])[0].startswith("scontrol update NodeName=gpu002")


def test_a_node_name_that_is_not_one_is_never_put_in_a_command(fabric: Fabric) -> None:
    bad = "gpu003;reboot"
    hosts = {**fabric.hosts, bad: Host(bad, {"eth0": replace(fabric.hosts["gpu001"].nics["eth0"], host=bad)})}
    link = Link(Endpoint(bad, "eth0"), Endpoint("leaf0", "Ethernet64"), frozenset({"lldp"}))
    odd = replace(fabric, hosts=hosts, links=[link], jobs={K8S: Job(K8S, "x", (bad,))})
    commands = drain_of(odd, [sym(FEC, bad, "eth0")])
    assert commands == ("# 'gpu003;reboot' is not a valid node name: drain it by hand",)


def test_pause_spreading_upstream_from_a_stuck_nic_is_one_incident_on_the_nic(fabric: Fabric) -> None:
    # gpu001:eth0 pauses leaf0:Ethernet0; leaf0 pauses spine1 out of its uplink; spine1 pauses leaf1's uplink
    storm = [
        sym(PFC_STORM, "gpu001", "eth0", 100),
        sym(PFC_STORM, "leaf0", "Ethernet64", 130),
        sym(PFC_STORM, "spine1", "Ethernet2/1", 160),
    ]
    [incident] = localize(fabric, storm)
    assert (incident.kind, incident.root, incident.start) == ("nic", "nic:gpu001:mlx5_0", 100)
    assert len(incident.symptoms) == 3 and incident.jobs == ("job:slurm:7",) and incident.hosts == ("gpu001",)
    assert "spread upstream to leaf0:Ethernet64, spine1:Ethernet2/1" in incident.summary


def test_a_switch_port_pausing_with_no_storm_below_it_is_its_own_root(fabric: Fabric) -> None:
    assert [i.root for i in localize(fabric, [sym(PFC_STORM, "leaf0", "Ethernet64")])] == ["port:leaf0:Ethernet64"]
    # at other times: two storms, not one spreading
    apart = [sym(PFC_STORM, "gpu001", "eth0", 100), sym(PFC_STORM, "leaf0", "Ethernet64", 1000)]
    assert sorted(i.root for i in localize(fabric, apart)) == ["nic:gpu001:mlx5_0", "port:leaf0:Ethernet64"]
    # two switch ports pausing each other: nothing below them says which, both stay
    ring = [sym(PFC_STORM, "leaf0", "Ethernet64"), sym(PFC_STORM, "spine1", "Ethernet1/1")]
    assert sorted(i.root for i in localize(fabric, ring)) == ["port:leaf0:Ethernet64", "port:spine1:Ethernet1/1"]


def test_infiniband_congestion_symptoms_stay_as_detect_ib_put_them(fabric: Fabric) -> None:
    ib = replace(sym(PFC_STORM, "leaf0", "Ethernet64"), counter="xmit_wait")
    nic = sym(PFC_STORM, "gpu001", "eth0")
    assert sorted(i.root for i in localize(fabric, [ib, nic])) == ["nic:gpu001:mlx5_0", "port:leaf0:Ethernet64"]
