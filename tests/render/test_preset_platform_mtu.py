"""A preset's switch MTU above a platform's maximum: each platform gets what it takes, the render says so."""

from __future__ import annotations

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.fabric_plan import FabricPlan, plan, write_tree
from unifab.intent import parse_intent
from unifab.model import Fabric, Severity
from unifab.parse.switch import eos_config as ec
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle

NOTE = (
    "! unifab: Arista EOS interface MTU tops out at 9214 (asked 9216): the intent's switch MTU 9216 is set as mtu 9214"
)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[FabricPlan, Fabric]:
    root = tmp_path_factory.mktemp("spectrum-x")
    write_bundle(build(16, switch_os="mixed"), root / "b")
    fp = plan(parse_intent("preset: nvidia-spectrum-x"), load_bundle(root / "b"), root / "b")
    write_tree(root / "fixed", fp.preview_files(), copy_from=root / "b")
    return fp, load_bundle(root / "fixed")


def test_spectrum_x_renders_every_switch_and_eos_gets_9214(rendered: tuple[FabricPlan, Fabric]) -> None:
    fp, _ = rendered
    assert [(d.name, d.error) for d in fp.devices if d.error] == []
    eos = {d.name: d.outputs["eos.cfg"] for d in fp.devices if d.os == "eos"}
    assert all(text.splitlines()[0] == NOTE for text in eos.values())
    mtus = {name: {i.mtu for i in ec.parse(text).interfaces.values()} for name, text in eos.items()}
    cabled = {name: m for name, m in mtus.items() if m}  # a switch the twin left uncabled renders no interface
    assert len(cabled) >= 2 and all(m == {9214} for m in cabled.values()), mtus


def test_parsed_back_eos_runs_9214_and_sonic_and_nvue_keep_9216(rendered: tuple[FabricPlan, Fabric]) -> None:
    fp, fixed = rendered
    by_os: dict[str, set[int | None]] = {}
    for d in fp.devices:
        if d.kind != "switch":
            continue
        ports = fixed.switches[d.name].ports.values()
        by_os.setdefault(d.os, set()).update(p.mtu for p in ports if p.qos is not None and p.mtu is not None)
    assert by_os == {"eos": {9214}, "sonic": {9216}, "nvue": {9216}}


def test_a_9214_to_9216_uplink_is_a_warning_whose_fix_lowers_the_other_end(
    rendered: tuple[FabricPlan, Fabric],
) -> None:
    """Both ends carry every host frame (hosts at 9000): not an outage. The fix cannot ask EOS for 9216."""
    _, fixed = rendered
    uplinks = [f for f in run_checks(fixed) if f.check == "QOS-MTU"]
    assert uplinks and all(f.severity is Severity.WARNING for f in uplinks)
    for f in uplinks:
        assert "RoCE is not affected" in f.impact["summary"]
        [fix] = f.fix
        assert fixed.switches[fix.device].os in ("sonic", "nvue")
        assert any(c.endswith(" 9214") for c in fix.commands), fix.commands
