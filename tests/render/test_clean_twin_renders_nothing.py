"""A clean twin is exactly what its own intent renders: ``unifab render`` against it changes nothing.

With scenarios, only the devices the scenarios broke change, and the preview bundle checks clean
(but for what the renderer does not manage: a port's speed and FEC).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from unifab.checks.runner import run_checks
from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.fabric_plan import DevicePlan, plan, write_tree
from unifab.intent import load_intent
from unifab.twin.cluster import SPINE_CABLE_M, TwinPort, TwinSwitch, port_name
from unifab.twin.generate import generate
from unifab.twin.host_scenarios import HOST_SCENARIOS
from unifab.twin.scenarios import SCENARIOS
from unifab.twin.switch_files import config_db
from unifab.twin.switch_files_eos import running_config
from unifab.twin.switch_files_nvue import config_yaml
from unifab.twin.topology_scenarios import NCCL_AND_LINK_SCENARIOS, TOPOLOGY_SCENARIOS

runner = CliRunner()
# QoS and uplink scenarios: what a render can fix (topology scenarios are cabling, not configuration; host
# scenarios are the host's hardware, kernel and addressing, which the QoS intent does not render — but ETS)
NOT_CONFIG = {*TOPOLOGY_SCENARIOS, *NCCL_AND_LINK_SCENARIOS, *(set(HOST_SCENARIOS) - {"ets-roce"})}
CONFIG_SCENARIOS = tuple(n for n in SCENARIOS if n not in NOT_CONFIG)
# the port's own settings, not the QoS intent's; and the RoCE active MTU, which the NIC derives from the netdev
# MTU the render fixes (the preview bundle keeps the ibv_devinfo recorded before it)
NOT_RENDERED = {"LINK-SPEED", "LINK-FEC", "HOST-ROCE-MTU"}
_NODE = re.compile(r"^(?:link|nic|gpu|port):")


def _changed(devices: list[DevicePlan]) -> dict[str, int]:
    """Device -> changed lines (``+``/``-`` lines of its diff, headers excluded) for devices that change."""
    out = {}
    for d in devices:
        assert d.error is None, d.error
        lines = [ln for ln in d.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        if lines:
            out[d.name] = len(lines)
    return out


def _touched(truth: dict[str, object]) -> set[str]:
    """Every device a misconfiguration's truth names: its ``device`` and the nodes of its entities."""
    out: set[str] = set()
    misconfigurations = truth["misconfigurations"]
    assert isinstance(misconfigurations, list)
    for m in misconfigurations:
        if m.get("device"):
            out.add(m["device"])
        for entity in m["entities"]:
            if not _NODE.match(entity):
                continue
            for end in entity.split(":", 1)[1].split("--"):
                out.add(end.split(":", 1)[0])
    return out


def _broken_switches(truth: dict[str, Any]) -> set[str]:
    """Switches whose configuration a scenario changed: the truth's ``device``, else the switch end of
    its (host) link, for switch-side truths of settings the renderer manages."""
    out: set[str] = set()
    for m in truth["misconfigurations"]:
        if m["side"] not in ("switch", "both") or m["check"] in NOT_RENDERED:
            continue
        if m.get("device"):
            out.add(m["device"])
            continue
        for entity in m["entities"]:
            out.add(entity.removeprefix("link:").split("--")[1].split(":")[0])
    return out


@pytest.mark.parametrize(
    ("switch_os", "nic_vendor", "nic_driver"),
    [
        ("sonic", "mlx5", "ofed"),
        ("eos", "mlx5", "upstream"),
        ("nvue", "mlx5", "ofed"),
        ("sonic", "bnxt", "ofed"),
        ("mixed", "mixed", "mixed"),
        ("sonic", "mixed", "mixed"),
    ],
)
def test_clean_twin_renders_no_change_on_any_device(
    tmp_path: Path, switch_os: str, nic_vendor: str, nic_driver: str
) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=3, switch_os=switch_os, nic_vendor=nic_vendor, nic_driver=nic_driver)
    fabric = load_bundle(bundle)
    fp = plan(load_intent(bundle / "fabric.yaml"), fabric, bundle)
    switches = {d.name for d in fp.devices if d.kind == "switch"}
    assert len(switches) == 16
    if switch_os == "mixed":
        assert {d.os for d in fp.devices if d.kind == "switch"} == {"sonic", "eos", "nvue"}
    host_os = {d.name: d.os for d in fp.devices if d.kind == "host"}
    assert len(host_os) == len(fabric.hosts)
    broadcom = {h for h, os in host_os.items() if os == "bnxt"}
    if nic_vendor != "mlx5":  # Broadcom hosts are rendered and compared too: their getqos and bnxt_re cc
        assert broadcom
        assert all(any(p.startswith(f"hosts/{h}/cmd/bnxt-qos/") for p in _after(fp.devices, h)) for h in broadcom)
    if nic_vendor == "bnxt":
        assert broadcom == set(host_os)
    assert _changed(fp.devices) == {}


def _after(devices: list[DevicePlan], name: str) -> dict[str, str]:
    return next(d.after for d in devices if d.name == name)


def test_a_broken_broadcom_nic_is_the_only_host_that_changes(tmp_path: Path) -> None:
    """The comparison can fail: one Thor port with RoCE's priority on TC0 and PFC off changes that host only."""
    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=3, nic_vendor="bnxt")
    qos_file = sorted((bundle / "hosts").glob("*/cmd/bnxt-qos/*.txt"))[0]
    text = qos_file.read_text()
    broken = text.replace("3:3", "3:0", 1).replace("PFC enabled: 3", "PFC enabled: none", 1)
    assert broken != text
    qos_file.write_text(broken)
    fp = plan(load_intent(bundle / "fabric.yaml"), load_bundle(bundle), bundle)
    host = qos_file.parents[2].name
    changed = _changed(fp.devices)
    assert set(changed) == {host}
    device = next(d for d in fp.devices if d.name == host)
    assert "-         PFC enabled: none" in device.diff  # in the capture's layout, as the twin wrote it
    assert "+         PFC enabled: 3" in device.diff
    assert "+         PRIO_MAP: 0:0 1:1 2:2 3:3" in device.diff


def test_clean_twin_through_the_cli_reports_zero_changed_lines(tmp_path: Path) -> None:
    bundle, out = tmp_path / "b", tmp_path / "r"
    generate(bundle, gpus=64, seed=5)
    args = ["render", str(bundle / "fabric.yaml"), "--bundle", str(bundle), "--out", str(out), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    devices = json.loads(result.stdout)["devices"]
    assert {d["kind"] for d in devices} == {"host", "switch"}
    assert [(d["device"], d["changed_lines"]) for d in devices if d["changed_lines"]] == []
    assert list(out.glob("*/*/changes.diff")) == []


@pytest.mark.parametrize(("switch_os", "seed"), [("sonic", 1), ("eos", 2), ("nvue", 3), ("mixed", 4)])
def test_scenarios_change_only_the_devices_they_broke_and_the_preview_checks_clean(
    tmp_path: Path, switch_os: str, seed: int
) -> None:
    bundle = tmp_path / "b"
    result = generate(bundle, gpus=64, seed=seed, scenarios=CONFIG_SCENARIOS, switch_os=switch_os)
    touched = _touched(result.truth)
    fp = plan(load_intent(bundle / "fabric.yaml"), load_bundle(bundle), bundle)
    changed = _changed(fp.devices)
    assert changed, "the scenarios broke something the render fixes"
    assert set(changed) <= touched
    assert _broken_switches(result.truth) <= set(changed), "every switch a rendered setting was broken on changes"
    fixed = tmp_path / "fixed"
    write_tree(fixed, fp.preview_files(), copy_from=bundle)
    left = {f.check for f in run_checks(load_bundle(fixed))}
    assert left <= NOT_RENDERED


@pytest.mark.parametrize("switch_os", ["sonic", "eos", "nvue"])
def test_a_spine_port_of_a_100k_gpu_fabric_is_rendered(switch_os: str) -> None:
    """12,500 hosts: 391 SUs x 8 leaves x 32 uplinks over 8 spines puts port 12,512 on a spine."""
    name = port_name(12_511, switch_os)
    spine = TwinSwitch("spine01", "spine", 1, os=switch_os)
    spine.ports[name] = TwinPort(name, "leaf-su391-r7", port_name(63, switch_os), cable_m=SPINE_CABLE_M)
    text = {"sonic": config_db, "eos": running_config, "nvue": config_yaml}[switch_os](spine)
    # a 30 m spine cable: NVUE takes the metres, traditional SONiC the 40 m bucket, EOS sizes headroom itself
    assert name in text and {"sonic": "40m" in text, "eos": True, "nvue": "30m" in text}[switch_os]
