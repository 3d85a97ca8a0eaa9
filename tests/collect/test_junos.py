"""The Junos reader: a bundle holding a vQFX's real ``| display json`` replies reads into its ports and cabling."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle

QFX = "switch/junos/junos-qfx-19.4R1.10_dcedge01_show_{}.json"


def _bundle(samples: Path, out: Path, *, lldp: bool = True) -> Path:
    junos = out / "switches" / "dcedge01" / "junos"
    junos.mkdir(parents=True)
    shutil.copy(samples / QFX.format("interface"), junos / "show-interfaces.json")
    if lldp:
        shutil.copy(samples / QFX.format("lldp_neighbors_detail"), junos / "show-lldp-neighbors-detail.json")
    return out


def test_ports_and_links_of_a_real_vqfx(samples: Path, tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(samples, tmp_path / "b"))
    sw = fabric.switches["dcedge01"]
    assert (sw.os, sw.config_file) == ("junos", "switches/dcedge01/junos/show-interfaces.json")
    # front-panel ports only: no logical units (xe-0/0/0.0), management (em0, bme0), tunnels or internals
    assert all(name.startswith("xe-0/0/") and "." not in name for name in sw.ports)
    assert len(sw.ports) == 12
    port = sw.ports["xe-0/0/0"]
    assert (port.mtu, port.speed_mbps, port.admin_status, port.qos) == (1500, 10_000, "up", None)
    assert {lk.id for lk in fabric.links} == {
        "link:dcedge01:xe-0/0/0--exit01:Ethernet4",
        "link:dcedge01:xe-0/0/1--exit02:Ethernet4",
    }
    # the QoS checks do not judge ports whose class-of-service was not read; nothing is unreadable
    assert [f for f in run_checks(fabric) if f.check.startswith(("INPUT-", "QOS-"))] == []


def test_interfaces_are_required_and_lldp_is_optional(samples: Path, tmp_path: Path) -> None:
    fabric = load_bundle(_bundle(samples, tmp_path / "b", lldp=False))
    assert "dcedge01" in fabric.switches and fabric.links == []
    (tmp_path / "b/switches/dcedge01/junos/show-interfaces.json").unlink()
    fabric = load_bundle(tmp_path / "b")
    assert "dcedge01" not in fabric.switches
    [missing] = [f for f in fabric.input_findings if f.check == "INPUT-MISSING"]
    assert "show-interfaces.json" in missing.evidence["file"]


def test_a_broken_reply_is_named_and_the_rest_is_read(samples: Path, tmp_path: Path) -> None:
    out = _bundle(samples, tmp_path / "b")
    (out / "switches/dcedge01/junos/show-lldp-neighbors-detail.json").write_text('{"lldp-neighbors-information": [')
    fabric = load_bundle(out)
    assert "dcedge01" in fabric.switches
    [bad] = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert bad.evidence["file"] == "switches/dcedge01/junos/show-lldp-neighbors-detail.json"
