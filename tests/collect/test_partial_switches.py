"""EOS and NVUE switch files read in part through the bundle reader, as the SONiC databases are: one bad entry of a
twin switch's file is an INPUT-PARTIAL naming the file, the key and the device; the rest of the switch reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.collect.eos import LLDP_FILE as EOS_LLDP
from unifab.collect.eos import SHOW_INTERFACES
from unifab.collect.nvue import LLDP_FILE as NVUE_LLDP
from unifab.model import Fabric, Severity


@pytest.fixture(scope="module", params=["eos", "nvue"])
def twin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Fabric]:
    from unifab.twin.generate import generate

    os_name = str(request.param)
    out = tmp_path_factory.mktemp(f"twin-{os_name}") / "bundle"
    generate(out, gpus=8, seed=0, switch_os=os_name)
    fabric = load_bundle(out)
    assert fabric.input_findings == []
    return os_name, out, fabric


@pytest.fixture
def bundle(twin: tuple[str, Path, Fabric], tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(twin[1], copy)
    return copy


def _lldp_links(fabric: Fabric, switch: str) -> set[str]:
    return {lk.id for lk in fabric.links if "lldp" in lk.sources and switch in (lk.a.node, lk.b.node)}


def test_one_bad_lldp_entry_costs_one_neighbour(twin: tuple[str, Path, Fabric], bundle: Path) -> None:
    os_name, _, whole = twin
    rel = EOS_LLDP if os_name == "eos" else NVUE_LLDP
    path = sorted(bundle.glob(f"switches/*/{os_name}/{rel}"))[0]
    switch = path.parent.parent.name
    doc = json.loads(path.read_text())
    if os_name == "eos":
        local = sorted(k for k, v in doc["lldpNeighbors"].items() if v.get("lldpNeighborInfo"))[0]
        doc["lldpNeighbors"][local]["lldpNeighborInfo"][0]["ttl"] = "soon"
    else:  # lldpd's json0 tree: every value a list of objects
        doc["lldp"][0]["interface"][0]["port"][0]["ttl"] = [{"value": "soon"}]
    path.write_text(json.dumps(doc))
    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.severity is Severity.WARNING
    assert finding.subject["device"] == switch and finding.subject["path"] == path.relative_to(bundle).as_posix()
    assert "ttl" in (finding.subject.get("key") or "") and "topology" in finding.message
    lost = _lldp_links(whole, switch) - _lldp_links(fabric, switch)
    assert len(lost) <= 1 and len(_lldp_links(fabric, switch)) == len(_lldp_links(whole, switch)) - len(lost) > 0
    assert fabric.switches == whole.switches


@pytest.fixture(scope="module")
def eos_twin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric]:
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("twin-eos-only") / "bundle"
    generate(out, gpus=8, seed=0, switch_os="eos")
    return out, load_bundle(out)


def test_eos_bad_interface_entry_costs_that_interface(eos_twin: tuple[Path, Fabric], tmp_path: Path) -> None:
    """``show interfaces`` JSON is EOS's own file: one bad interface entry costs that interface."""
    bundle = tmp_path / "bundle"
    shutil.copytree(eos_twin[0], bundle)
    whole = eos_twin[1]
    path = sorted(bundle.glob(f"switches/*/eos/{SHOW_INTERFACES}"))[0]
    switch = path.parent.parent.name
    doc = json.loads(path.read_text())
    name = sorted(doc["interfaces"])[0]
    doc["interfaces"][name]["mtu"] = "jumbo"
    path.write_text(json.dumps(doc))
    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.subject["device"] == switch
    assert finding.subject["key"].endswith(f"{name}.mtu") and finding.subject["skipped"] == f"interface {name}"
    others = {n: p for n, p in fabric.switches[switch].ports.items() if n != name}
    assert others == {n: p for n, p in whole.switches[switch].ports.items() if n != name}
