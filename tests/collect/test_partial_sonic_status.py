"""``show interfaces status`` beside a SONiC CONFIG_DB fills only the speed the CONFIG_DB's PORT rows leave out
(a PORT row without an MTU runs SONiC's default, which the reader applies already); a bad row of it is an
INPUT-PARTIAL that costs that port's fill, nothing else."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.collect.sonic import SHOW_INTERFACES_STATUS
from unifab.model import Fabric
from unifab.parse.switch import sonic_interfaces_status as sis


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("twin") / "bundle"
    generate(out, gpus=8, seed=0)
    return out


@pytest.fixture(scope="module")
def whole(twin: Path) -> Fabric:
    return load_bundle(twin)


def _sonic_leaf(bundle: Path) -> tuple[str, Path]:
    config = next(iter(sorted(bundle.glob("switches/*/sonic/config_db.json"))), None)
    if config is None:
        pytest.fail("the twin has no SONiC switch")
    return config.parent.parent.name, config


@pytest.fixture
def bundle(twin: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "bundle"
    shutil.copytree(twin, copy)
    return copy


def _status_rows(fabric: Fabric, leaf: str, mtu: int, speed: int) -> tuple[sis.SonicInterfaceStatus, ...]:
    return tuple(
        sis.SonicInterfaceStatus(name, (0,), speed, mtu, "rs", name, "routed", True, True, "N/A", "off")
        for name in sorted(fabric.switches[leaf].ports)
    )


def test_status_fills_only_what_config_db_lacks(bundle: Path, whole: Fabric) -> None:
    leaf, config = _sonic_leaf(bundle)
    doc = json.loads(config.read_text())
    bare = sorted(doc["PORT"])[:2]
    for name in bare:
        doc["PORT"][name].pop("speed", None)
    config.write_text(json.dumps(doc))
    (config.parent / SHOW_INTERFACES_STATUS).write_text(sis.dump(_status_rows(whole, leaf, 1234, 25000)))
    fabric = load_bundle(bundle)
    assert fabric.input_findings == whole.input_findings
    ports, before = fabric.switches[leaf].ports, whole.switches[leaf].ports
    for name in bare:
        assert (ports[name].mtu, ports[name].speed_mbps) == (before[name].mtu, 25000)  # the MTU is CONFIG_DB's
    assert {n: p for n, p in ports.items() if n not in bare} == {n: p for n, p in before.items() if n not in bare}
    assert all(replace(ports[n], mtu=before[n].mtu, speed_mbps=before[n].speed_mbps) == before[n] for n in bare)


def test_status_is_not_read_when_config_db_says_it_all(bundle: Path, whole: Fabric) -> None:
    leaf, config = _sonic_leaf(bundle)
    (config.parent / SHOW_INTERFACES_STATUS).write_text("not a table\n")
    fabric = load_bundle(bundle)
    assert fabric.input_findings == whole.input_findings and fabric.switches[leaf] == whole.switches[leaf]


def test_a_bad_status_row_is_partial(bundle: Path, whole: Fabric) -> None:
    leaf, config = _sonic_leaf(bundle)
    doc = json.loads(config.read_text())
    a, b = sorted(doc["PORT"])[:2]
    for name in (a, b):
        doc["PORT"][name].pop("speed", None)
    config.write_text(json.dumps(doc))
    text = sis.dump(_status_rows(whole, leaf, 4321, 100000))
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if line.split()[:1] == [b])
    lines[i] = lines[i].replace("100G", "fast")
    (config.parent / SHOW_INTERFACES_STATUS).write_text("\n".join(lines))
    fabric = load_bundle(bundle)
    partial = [f for f in fabric.input_findings if f.check == "INPUT-PARTIAL"]
    assert len(partial) == 1 and partial[0].evidence["line"] == i + 1 and partial[0].subject["skipped"] == f"port {b}"
    ports = fabric.switches[leaf].ports
    assert ports[a].speed_mbps == 100000 and ports[b].speed_mbps is None
