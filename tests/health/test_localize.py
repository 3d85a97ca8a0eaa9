"""Localization through the Fabric's links: both ends, one end, a whole switch, a whole host; impact and actions."""

from __future__ import annotations

from unifab.health.detect import FEC, LINK_FLAP, LOSSLESS_DROPS, PFC_STORM, Symptom
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric, Finding, Severity


def sym(detector: str, node: str, port: str, start: float = 100.0) -> Symptom:
    kind = "port" if node.startswith(("leaf", "spine")) else "nic"
    entity = f"port:{node}:{port}" if kind == "port" else f"nic:{node}:mlx5_{port[-1]}"
    return Symptom(detector, entity, Endpoint(node, port), "x", start, start + 300, 10, 5, 1.0)


def roots(fabric: Fabric, symptoms: list[Symptom]) -> list[tuple[str, str]]:
    return [(i.kind, i.root) for i in localize(fabric, symptoms)]


def test_both_ends_flapping_is_the_link_and_the_action_shuts_it(fabric: Fabric) -> None:
    [incident] = localize(fabric, [sym(LINK_FLAP, "gpu001", "eth0", 160), sym(LINK_FLAP, "leaf0", "Ethernet0", 130)])
    assert (incident.kind, incident.root) == ("link", "link:gpu001:eth0--leaf0:Ethernet0")
    assert incident.start == 130 and len(incident.symptoms) == 2
    assert incident.hosts == ("gpu001",) and incident.jobs == ("job:slurm:7",) and incident.gpus_at_risk == 8
    drain, shut = incident.actions
    assert drain.commands == (
        "scontrol update nodename=gpu001 state=drain reason='unifab: HEALTH-LINK-FLAP, root cause "
        "link:gpu001:eth0--leaf0:Ethernet0'",
    )
    assert shut.device == "leaf0" and shut.commands[0] == "sudo config interface shutdown Ethernet0"


def test_errors_at_one_end_are_that_ends_optic(fabric: Fabric) -> None:
    [incident] = localize(fabric, [sym(FEC, "leaf1", "Ethernet8")])
    assert (incident.kind, incident.root) == ("optic", "optic:leaf1:Ethernet8")
    assert incident.hosts == ("gpu002",) and incident.jobs == ()
    assert incident.not_explained and "gpu002:eth1" in incident.not_explained[0]
    assert incident.actions[-1].kind == "replace"


def test_errors_on_both_ends_are_the_link(fabric: Fabric) -> None:
    assert roots(fabric, [sym(FEC, "leaf1", "Ethernet8"), sym(FEC, "gpu002", "eth1")]) == [
        ("link", "link:gpu002:eth1--leaf1:Ethernet8")
    ]


def test_one_end_flapping_alone_is_that_port(fabric: Fabric) -> None:
    [incident] = localize(fabric, [sym(LINK_FLAP, "leaf0", "Ethernet64")])
    assert (incident.kind, incident.root) == ("port", "port:leaf0:Ethernet64")
    assert incident.actions[0].kind == "shutdown"  # no host behind a spine uplink: nothing to drain


def test_a_spine_port_flapping_is_shut_in_eos(fabric: Fabric) -> None:
    [incident] = localize(fabric, [sym(LINK_FLAP, "spine1", "Ethernet2/1")])
    assert incident.root == "port:spine1:Ethernet2/1" and incident.jobs == ()
    [shut] = incident.actions
    assert shut.device == "spine1"
    assert shut.commands == ("interface Ethernet2/1", "shutdown", "end", "write memory")


def test_every_link_of_a_switch_is_the_switch(fabric: Fabric) -> None:
    symptoms = [sym(LINK_FLAP, "leaf0", p) for p in ("Ethernet0", "Ethernet8")] + [
        sym(LINK_FLAP, "spine1", "Ethernet1/1"),
        sym(LINK_FLAP, "gpu001", "eth0"),
    ]
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root) == ("switch", "switch:leaf0")
    assert len(incident.symptoms) == 4
    assert incident.hosts == ("gpu001", "gpu002") and incident.gpus_at_risk == 8
    assert incident.actions[0].commands[0].startswith("scontrol update nodename='gpu[001-002]' state=drain")


def test_every_nic_of_a_host_is_the_host(fabric: Fabric) -> None:
    symptoms = [sym(FEC, "gpu001", "eth0"), sym(LOSSLESS_DROPS, "gpu001", "eth1"), sym(LINK_FLAP, "leaf0", "Ethernet0")]
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root) == ("host", "host:gpu001")
    assert len(incident.symptoms) == 3 and incident.jobs == ("job:slurm:7",)
    assert [a.kind for a in incident.actions] == ["drain"]


def test_lossless_drops_with_the_config_finding_that_explains_them(fabric: Fabric) -> None:
    finding = Finding(
        "QOS-PFC-MISMATCH",
        Severity.CRITICAL,
        {"kind": "link"},
        "PFC priorities differ",
        entities=("link:gpu002:eth0--leaf0:Ethernet8",),
    )
    unrelated = Finding(
        "QOS-MTU", Severity.ERROR, {"kind": "link"}, "x", entities=("link:gpu001:eth0--leaf0:Ethernet0",)
    )
    [incident] = localize(fabric, [sym(LOSSLESS_DROPS, "gpu002", "eth0")], [finding, unrelated])
    assert (incident.kind, incident.root, incident.findings) == ("nic", "nic:gpu002:mlx5_0", (finding,))
    assert incident.confidence == 0.8 and not incident.not_explained
    [alone] = localize(fabric, [sym(LOSSLESS_DROPS, "gpu002", "eth0")])
    assert alone.confidence < 0.8 and alone.not_explained


def test_pfc_storm_source_and_independent_incidents_in_start_order(fabric: Fabric) -> None:
    symptoms = [sym(PFC_STORM, "gpu002", "eth1", 500), sym(FEC, "leaf0", "Ethernet0", 50)]
    assert roots(fabric, symptoms) == [("optic", "optic:leaf0:Ethernet0"), ("nic", "nic:gpu002:mlx5_1")]


def test_hostile_node_names_never_reach_a_command_unquoted(fabric: Fabric) -> None:
    fabric.jobs.clear()
    evil = "gpu001;rm -rf /"
    host = fabric.hosts.pop("gpu001")
    fabric.hosts[evil] = host
    [incident] = localize(
        fabric, [Symptom(LOSSLESS_DROPS, "nic:x:mlx5_0", Endpoint(evil, "eth0"), "x", 1, 2, 30, 3, 1)]
    )
    [drain] = incident.actions
    assert drain.commands == ("# 'gpu001;rm -rf /' is not a valid node name: drain it by hand",)
