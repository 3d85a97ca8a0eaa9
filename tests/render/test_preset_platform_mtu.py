"""A preset's switch MTU above a platform's maximum: each platform gets what it takes, the render says so, and
both ends of a switch↔switch link take what the lesser platform takes (a SONiC↔EOS uplink: 9214 at both ends)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.fabric_plan import DevicePlan, FabricPlan, plan, write_tree
from unifab.intent import parse_intent
from unifab.model import Fabric, Severity
from unifab.parse.switch import eos_config as ec
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle

NOTE = (
    "! unifab: Arista EOS interface MTU tops out at 9214 (asked 9216): the intent's switch MTU 9216 is set as mtu 9214"
)
LINK_NOTE = "where Arista EOS interface MTU tops out at 9214 (asked 9216): both ends of the link are set to 9214"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[FabricPlan, Fabric, Path]:
    root = tmp_path_factory.mktemp("spectrum-x")
    write_bundle(build(16, switch_os="mixed"), root / "b")
    fp = plan(parse_intent("preset: nvidia-spectrum-x"), load_bundle(root / "b"), root / "b")
    write_tree(root / "fixed", fp.preview_files(), copy_from=root / "b")
    return fp, load_bundle(root / "fixed"), root / "fixed"


def _device(fp: FabricPlan, name: str) -> DevicePlan:
    return next(d for d in fp.devices if d.name == name)


def _switch_links(fixed: Fabric) -> list[tuple[str, str, str, str]]:
    """(switch, port, peer switch, peer port) of every switch↔switch link, each once."""
    return [
        (lk.a.node, lk.a.port, lk.b.node, lk.b.port)
        for lk in fixed.links
        if lk.a.node in fixed.switches and lk.b.node in fixed.switches
    ]


def test_spectrum_x_renders_every_switch_and_eos_gets_9214(rendered: tuple[FabricPlan, Fabric, Path]) -> None:
    fp, _, _ = rendered
    assert [(d.name, d.error) for d in fp.devices if d.error] == []
    eos = {d.name: d.outputs["eos.cfg"] for d in fp.devices if d.os == "eos"}
    assert all(text.splitlines()[0] == NOTE for text in eos.values())
    mtus = {name: {i.mtu for i in ec.parse(text).interfaces.values()} for name, text in eos.items()}
    cabled = {name: m for name, m in mtus.items() if m}  # a switch the twin left uncabled renders no interface
    assert len(cabled) >= 2 and all(m == {9214} for m in cabled.values()), mtus


def test_parsed_back_both_ends_of_every_switch_link_agree_and_host_ports_keep_their_platforms_mtu(
    rendered: tuple[FabricPlan, Fabric, Path],
) -> None:
    _, fixed, _ = rendered
    links = _switch_links(fixed)
    oses = {fixed.switches[a].os for a, _, b, _ in links} | {fixed.switches[b].os for _, _, b, _ in links}
    assert oses == {"sonic", "eos", "nvue"}
    for a, pa, b, pb in links:
        want = 9214 if "eos" in (fixed.switches[a].os, fixed.switches[b].os) else 9216
        assert (fixed.switches[a].ports[pa].mtu, fixed.switches[b].ports[pb].mtu) == (want, want), (a, pa, b, pb)
    host_ports: dict[str, set[int | None]] = {}
    for lk in fixed.links:
        for sw, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if sw.node in fixed.switches and other.node in fixed.hosts:
                host_ports.setdefault(fixed.switches[sw.node].os, set()).add(fixed.switches[sw.node].ports[sw.port].mtu)
    assert host_ports == {"eos": {9214}, "sonic": {9216}, "nvue": {9216}}


def test_the_preview_has_no_mtu_finding(rendered: tuple[FabricPlan, Fabric, Path]) -> None:
    _, fixed, _ = rendered
    assert [f.message for f in run_checks(fixed) if f.check == "QOS-MTU"] == []


def test_a_sonic_to_eos_uplink_renders_9214_at_both_ends_and_the_sonic_host_ports_stay_9216(
    rendered: tuple[FabricPlan, Fabric, Path],
) -> None:
    fp, fixed, _ = rendered
    leaf, port, spine, spine_port = next(
        (a, pa, b, pb)
        for a, pa, b, pb in _switch_links(fixed)
        if fixed.switches[a].os == "sonic" and fixed.switches[b].os == "eos" and a.startswith("leaf")
    )
    db = json.loads(_device(fp, leaf).outputs["config_db.json"])
    assert db["PORT"][port] == {"mtu": "9214"}
    host_mtus = {db["PORT"][p]["mtu"] for p in db["PORT"] if p != port}
    others = [pa for a, pa, _, _ in _switch_links(fixed) if a == leaf and pa != port]  # its uplink to SONiC
    assert host_mtus == {"9216"} and all(db["PORT"][p] == {"mtu": "9216"} for p in others)
    # the lossless PG headroom of the uplink is sized for the MTU it runs
    pgs = {v["profile"] for k, v in db["BUFFER_PG"].items() if k.startswith(f"{port}|")}
    assert len(pgs) == 1 and next(iter(pgs)).endswith("_mtu9214_profile"), pgs
    eos = ec.parse(_device(fp, spine).outputs["eos.cfg"])
    assert eos.interfaces[spine_port].mtu == 9214
    # the SONiC end says why it runs below the intent's 9216
    note = f"{port} faces {spine} {spine_port}, {LINK_NOTE}"
    assert _device(fp, leaf).notes == [note]
    assert _device(fp, leaf).outputs["notes.txt"] == f"# unifab: {note}\n"


def test_every_lowered_port_is_noted_in_its_rendered_output(rendered: tuple[FabricPlan, Fabric, Path]) -> None:
    fp, fixed, _ = rendered
    to_eos = sorted(
        (end, port)
        for a, pa, b, pb in _switch_links(fixed)
        for end, port, far in ((a, pa, b), (b, pb, a))
        if fixed.switches[far].os == "eos" and fixed.switches[end].os != "eos"
    )
    assert len(to_eos) == 8
    noted = sorted((d.name, n.split(" ", 1)[0]) for d in fp.devices for n in d.notes)
    assert noted == to_eos
    for d in fp.devices:
        file = {"sonic": "notes.txt", "nvue": "nv-set.txt"}.get(d.os)
        for n in d.notes:
            assert LINK_NOTE in n and file is not None and f"# unifab: {n}\n" in d.outputs[file]
    assert all(not d.notes for d in fp.devices if d.os == "eos")  # EOS's own note is its first line


def test_a_9214_to_9216_uplink_is_a_warning_whose_fix_lowers_the_other_end(
    rendered: tuple[FabricPlan, Fabric, Path], tmp_path: Path
) -> None:
    """A bundle whose SONiC end still runs 9216 against EOS's 9214 (each switch clamped on its own): both ends carry
    every host frame (hosts at 9000), not an outage. The fix cannot ask EOS for 9216: it lowers the SONiC end."""
    fp, fixed, preview = rendered
    leaf = next(d.name for d in fp.devices if d.os == "sonic" and d.notes)
    bundle = tmp_path / "b"
    shutil.copytree(preview, bundle, symlinks=True)
    config = bundle / fixed.switches[leaf].config_file
    db = json.loads(config.read_text())
    port = _device(fp, leaf).notes[0].split(" ", 1)[0]
    db["PORT"][port]["mtu"] = "9216"
    config.write_text(json.dumps(db, indent=2, sort_keys=True) + "\n")
    uplinks = [f for f in run_checks(load_bundle(bundle)) if f.check == "QOS-MTU"]
    assert len(uplinks) == 1 and uplinks[0].severity is Severity.WARNING
    assert "RoCE is not affected" in uplinks[0].impact["summary"]
    [fix] = uplinks[0].fix
    assert fix.device == leaf and any(c.endswith(" 9214") for c in fix.commands), fix.commands
