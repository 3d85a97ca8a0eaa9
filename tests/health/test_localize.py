"""Localization through the Fabric's links: both ends, one end, a whole switch, a whole host; impact and actions."""

from __future__ import annotations

from dataclasses import replace

from unifab.health.detect import (
    ECN_ABSENT,
    FEC,
    GPU_XID,
    LINK_FLAP,
    LOSSLESS_DROPS,
    NCCL_ERROR,
    NODE_DOWN,
    OPTICS,
    PFC_STORM,
    SWITCH_DOWN,
    Symptom,
)
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric, Finding, Severity
from unifab.render.switch_cli import finish


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
        "scontrol update NodeName=gpu001 State=DRAIN 'Reason=unifab: HEALTH-LINK-FLAP, root cause "
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
    # EOS's own session around the two commands (render.switch_cli.finish owns its framing)
    assert shut.commands == finish("eos", ("interface Ethernet2/1", "shutdown"))
    assert shut.commands[shut.commands.index("interface Ethernet2/1") + 1] == "shutdown"


def test_every_link_of_a_switch_is_the_switch(fabric: Fabric) -> None:
    symptoms = [sym(LINK_FLAP, "leaf0", p) for p in ("Ethernet0", "Ethernet8")] + [
        sym(LINK_FLAP, "spine1", "Ethernet1/1"),
        sym(LINK_FLAP, "gpu001", "eth0"),
    ]
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root) == ("switch", "switch:leaf0")
    assert len(incident.symptoms) == 4
    assert incident.hosts == ("gpu001", "gpu002") and incident.gpus_at_risk == 8
    assert incident.actions[0].commands[0].startswith("scontrol update 'NodeName=gpu[001-002]' State=DRAIN")


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


def test_a_port_dropping_in_its_lossless_queue_explains_the_gaps_its_nic_sees(fabric: Fabric) -> None:
    """leaf0 Ethernet8 drops in its lossless egress queue; gpu002 eth0, which it feeds, counts out-of-sequence
    packets: one incident on the port (the hop that dropped), not a second one on the NIC. A NIC with drops of its
    own elsewhere stays its own incident."""
    port = replace(sym(LOSSLESS_DROPS, "leaf0", "Ethernet8"), counter="queue_drops{3}")
    fed = replace(sym(LOSSLESS_DROPS, "gpu002", "eth0"), counter="out_of_sequence")
    other = sym(LOSSLESS_DROPS, "gpu001", "eth0")
    incidents = localize(fabric, [fed, other, port])
    assert [(i.kind, i.root) for i in incidents] == [("nic", "nic:gpu001:mlx5_0"), ("port", "port:leaf0:Ethernet8")]
    dropped = incidents[1]
    assert {s.entity for s in dropped.symptoms} == {"port:leaf0:Ethernet8", "nic:gpu002:mlx5_0"}
    assert "nic:gpu002:mlx5_0, which it feeds, sees the gaps (out_of_sequence)" in dropped.summary
    assert dropped.hosts == ("gpu002",)
    # the NIC alone is the NIC
    assert roots(fabric, [fed]) == [("nic", "nic:gpu002:mlx5_0")]


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


def down(detector: str, entity: str, node: str, port: str = "", start: float = 300.0) -> Symptom:
    return Symptom(detector, entity, Endpoint(node, port), "series", start, start + 600, 0, 0, 0.0)


def test_a_silent_host_is_the_host_with_the_link_downs_its_leaves_see(fabric: Fabric) -> None:
    symptoms = [
        down(NODE_DOWN, "host:gpu001", "gpu001"),
        down(SWITCH_DOWN, "port:leaf0:Ethernet0", "leaf0", "Ethernet0", 330),
        down(SWITCH_DOWN, "port:leaf1:Ethernet0", "leaf1", "Ethernet0", 330),
    ]
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root, len(incident.symptoms)) == ("host", "host:gpu001", 3)
    assert incident.start == 300 and incident.jobs == ("job:slurm:7",)
    assert [a.kind for a in incident.actions] == ["drain", "advice"] and "BMC" in incident.actions[1].commands[0]


def test_a_silent_leaf_is_the_switch_and_takes_its_far_ends(fabric: Fabric) -> None:
    symptoms = [
        down(SWITCH_DOWN, "switch:leaf0", "leaf0"),
        down(NODE_DOWN, "nic:gpu001:mlx5_0", "gpu001", "eth0"),
        down(NODE_DOWN, "nic:gpu002:mlx5_0", "gpu002", "eth0"),
        down(SWITCH_DOWN, "port:spine1:Ethernet1/1", "spine1", "Ethernet1/1"),
    ]
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root, len(incident.symptoms)) == ("switch", "switch:leaf0", 4)
    assert incident.hosts == ("gpu001", "gpu002")


def test_every_link_of_a_leaf_down_at_once_is_the_switch(fabric: Fabric) -> None:
    ports = ("Ethernet0", "Ethernet8", "Ethernet64")
    symptoms = [down(SWITCH_DOWN, f"port:leaf1:{p}", "leaf1", p) for p in ports]
    assert roots(fabric, symptoms) == [("switch", "switch:leaf1")]


def test_a_dead_nic_is_the_nic_and_a_lone_port_down_is_the_link(fabric: Fabric) -> None:
    symptoms = [
        down(NODE_DOWN, "nic:gpu002:mlx5_1", "gpu002", "eth1"),
        down(SWITCH_DOWN, "port:leaf1:Ethernet8", "leaf1", "Ethernet8"),
        down(SWITCH_DOWN, "port:leaf0:Ethernet0", "leaf0", "Ethernet0", 900),
    ]
    assert roots(fabric, symptoms) == [("nic", "nic:gpu002:mlx5_1"), ("link", "link:gpu001:eth0--leaf0:Ethernet0")]


def optic(node: str, port: str, level: float = 2.0) -> Symptom:
    note = ("lane 1 rx power 0.02 mW below the module's low alarm level 0.05 mW",)
    return Symptom(OPTICS, f"optic:{node}:{port}", Endpoint(node, port), "dom alarm", 3000, 3000, 1, 1, level, 0, note)


def test_a_dom_alarm_with_errors_at_the_same_end_is_its_optic_with_more_confidence(fabric: Fabric) -> None:
    [both] = localize(fabric, [optic("gpu002", "eth1"), sym(FEC, "gpu002", "eth1", 100)])
    assert (both.kind, both.root, both.start, both.confidence) == ("optic", "optic:gpu002:eth1", 100, 0.9)
    assert "rx power" in both.summary and both.actions[-1].kind == "replace"
    [alone] = localize(fabric, [optic("gpu002", "eth1")])
    assert alone.root == "optic:gpu002:eth1" and alone.confidence == 0.8
    [warning] = localize(fabric, [optic("gpu002", "eth1", 1.0)])
    assert warning.confidence < alone.confidence


def test_ecn_absent_is_the_nic_and_a_config_finding_explains_it(fabric: Fabric) -> None:
    finding = Finding(
        "QOS-ECN-OFF", Severity.ERROR, {"kind": "link"}, "no ECN", entities=("link:gpu001:eth1--leaf1:Ethernet0",)
    )
    [incident] = localize(fabric, [sym(ECN_ABSENT, "gpu001", "eth1")], [finding])
    assert (incident.kind, incident.root, incident.confidence) == ("nic", "nic:gpu001:mlx5_1", 0.8)
    assert "congestion control" in incident.summary and incident.findings == (finding,)


def test_a_gpu_xid_is_the_gpu_with_the_vendors_action(fabric: Fabric) -> None:
    note = "Xid 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS: GPU has fallen off the bus; vendor action: reboot"
    s = Symptom(GPU_XID, "gpu:gpu001:3", Endpoint("gpu001", "gpu3"), "xid 79", 50, 50, 1, 1, 0.0, 0, (note,))
    [incident] = localize(fabric, [s])
    assert (incident.kind, incident.root, incident.jobs) == ("gpu", "gpu:gpu001:3", ("job:slurm:7",))
    assert [a.kind for a in incident.actions] == ["drain", "advice"] and "reboot" in incident.actions[1].commands[0]


def nccl(node: str, port: str, link: str) -> Symptom:
    return Symptom(NCCL_ERROR, link, Endpoint(node, port), "status=12", 700, 900, 6, 3, 0.0, 0, ("3 peers",))


def test_nccl_errors_join_the_incident_on_their_link_or_make_one(fabric: Fabric) -> None:
    link = "link:gpu001:eth0--leaf0:Ethernet0"
    [joined] = localize(fabric, [sym(FEC, "leaf0", "Ethernet0", 100), nccl("gpu001", "eth0", link)])
    assert joined.root == "optic:leaf0:Ethernet0" and len(joined.symptoms) == 2 and joined.confidence > 0.75
    [alone] = localize(fabric, [nccl("gpu001", "eth0", link)])
    assert (alone.kind, alone.root, alone.jobs) == ("link", link, ("job:slurm:7",)) and alone.not_explained
