"""The NIC plan (``nic-plan.json``) beside ``unifab-qos.sh``: the same values, commands the agent accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.agent import apply as ap
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.fabric_plan import output_files, plan
from unifab.intent import Device, parse_intent, resolve
from unifab.render import nic_mlx5
from unifab.render import nic_plan as np
from unifab.render.host_qos import render_host_script
from unifab.render.host_script import NicTarget
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle


def _profile(preset: str = "nvidia-spectrum-x") -> object:
    return resolve(parse_intent(f"preset: {preset}"), Device("gpu001", "host"))


def test_render_writes_a_plan_beside_each_host_script(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    write_bundle(build(8), bundle)
    files = dict(output_files(plan(parse_intent("preset: nvidia-spectrum-x"), load_bundle(bundle), bundle)))
    hosts = {rel.split("/")[1] for rel in files if rel.endswith("/unifab-qos.sh")}
    assert hosts and hosts == {rel.split("/")[1] for rel in files if rel.endswith("/nic-plan.json")}
    doc = json.loads(files["hosts/gpu001/nic-plan.json"])
    assert doc["format"] == np.FORMAT and doc["host"] == "gpu001"
    assert [n["netdev"] for n in doc["nics"]] == sorted(n["netdev"] for n in doc["nics"]) and len(doc["nics"]) == 8
    path = tmp_path / "nic-plan.json"
    path.write_text(files["hosts/gpu001/nic-plan.json"])
    loaded = ap.load_plan(path)  # the agent accepts what render writes, every command recomputed
    assert {argv[0] for s in loaded.steps for argv in (*s.read, *s.apply)} <= np.TOOLS
    assert {s.nic.dialect for s in loaded.steps} == {np.OFED}  # the twin's NICs carry the MLNX_OFED ecn/ tree


def test_the_plan_carries_the_scripts_values() -> None:
    profile = _profile()
    nic = np.PlanNic("eth0", "mlx5_0", "mlx5", np.OFED, 5, traffic_class=True)
    steps = {s["id"]: s for s in np.render_nic_plan("gpu001", [nic], profile)["steps"]}
    script = render_host_script("gpu001", [NicTarget("eth0", "mlx5_0", "mlx5", 5)], profile)
    s = nic_mlx5.nic_settings(profile, 5)
    for key, value in (("pfc", s.pfc), ("prio_tc", s.prio_tc), ("prio2buffer", s.prio2buffer), ("dscp2prio", s.dscp)):
        assert steps[f"eth0.{key}"]["expect"] == value and value in script  # the script's mlx5_qos arguments
    assert steps["eth0.pfc"]["apply"] == [["mlnx_qos", "-i", "eth0", "--pfc", s.pfc]]
    assert " ".join(steps["eth0.pfc"]["apply"][0]) == nic_mlx5.pfc("eth0", profile.lossless_priorities)
    assert steps["eth0.mtu"]["apply"] == [["ip", "link", "set", "dev", "eth0", "mtu", str(profile.host_mtu)]]
    assert steps["eth0.traffic_class"]["if_exists"] is True
    flapping = {k.split(".", 1)[1] for k, v in steps.items() if v["flaps_link"]}
    assert flapping == {"mtu", "pfc", "prio2buffer", "cable_len"}


def test_upstream_and_bnxt_steps() -> None:
    profile = _profile("broadcom-thor")
    up = np.PlanNic("eth1", "mlx5_1", "mlx5", np.UPSTREAM, 3, pci_address="0000:17:00.0")
    bn = np.PlanNic("ens1f0np0", "bnxt_re0", "bnxt", np.BNXT, 7)
    doc = np.render_nic_plan("gpu001", [up, bn], profile)
    steps = {s["id"]: s for s in doc["steps"]}
    assert steps["eth1.dcb_pfc"]["apply"][0][:5] == ["dcb", "pfc", "set", "dev", "eth1"]
    assert "eth1.cc_params.np_cnp_dscp" in steps and not any(k.startswith("eth1.ecn.") for k in steps)
    bnxt = [s["id"] for s in doc["steps"] if s["nic"] == "ens1f0np0"]
    assert bnxt[-4:] == ["ens1f0np0.pfc", "ens1f0np0.app.7,5,48", "ens1f0np0.app.3,5,26", "ens1f0np0.app.3,3,4791"]
    assert steps["ens1f0np0.cc.roce_dscp"]["expect"] == "0x1a" and steps["ens1f0np0.cc.roce_dscp"]["compare"] == "int"
    assert steps["ens1f0np0.cc.roce_dscp"]["commit"]["path"].endswith("/bnxt_re0/ports/1/cc/apply")
    no_pci = np.render_nic_plan("gpu001", [np.PlanNic("eth1", None, "mlx5", np.UPSTREAM, 3)], profile)
    assert no_pci["notes"] == ["eth1: PCI address unknown, so its debugfs cc_params (DCQCN, CNP) are not planned"]


@pytest.mark.parametrize(
    ("nic", "problem"),
    [
        (np.PlanNic("eth0; rm -rf /", "mlx5_0", "mlx5", np.OFED, 3), "netdev name"),
        (np.PlanNic("eth0", "mlx5_0$(id)", "mlx5", np.OFED, 3), "RDMA device name"),
        (np.PlanNic("eth0", None, "mlx5", np.UPSTREAM, 3, pci_address="../../x"), "PCI address"),
        (np.PlanNic("eth0", None, "mlx5", "windows", 3), "dialect 'windows'"),
    ],
)
def test_names_are_validated_before_they_reach_a_plan(nic: np.PlanNic, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        np.render_nic_plan("gpu001", [nic], _profile())
