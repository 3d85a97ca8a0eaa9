"""Xid events from dcgm-exporter's DCGM_FI_DEV_XID_ERRORS gauge (``telemetry/dcgm/*.om``): each change to a
non-zero value is one Xid on that GPU at the sample's time, whichever label shape the exporter release prints
(4.x: ``pci_bus_id``, ``Hostname``, ``err_code``/``err_msg``; 2.x: ``gpu`` and ``UUID`` only, the host from
Prometheus's ``instance``); a sample naming no host or GPU of the bundle is a problem, not a stop."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.health.test_twin_faults import health

from unifab.collect.bundle import load_bundle
from unifab.health.events import XidRecord, read_events
from unifab.sources import as_source_path
from unifab.twin.faults import TELEMETRY_START
from unifab.twin.generate import generate

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "telemetry"
STEP = 30


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dcgm") / "b"
    generate(out, 64, seed=0, faults=1)  # a link flap: the telemetry window, and an incident that is not a GPU's
    return out


@pytest.fixture(scope="module")
def roots_before(bundle: Path) -> set[str]:
    """The incidents' root causes of the twin without dcgm scrapes."""
    return {i.root for i in health(bundle).incidents}


def _v4(host: str, gpu: int, pci: str, uuid: str, value: int, t: float) -> str:
    """A dcgm-exporter 4.x sample line as the GPU Operator's exporter prints it, with a timestamp."""
    why = {0: "No Error", 79: "GPU has fallen off the bus", 48: "Double Bit ECC Error"}[value]
    return (
        f'DCGM_FI_DEV_XID_ERRORS{{gpu="{gpu}",UUID="{uuid}",pci_bus_id="0000{pci.upper()}",device="nvidia{gpu}",'
        f'modelName="NVIDIA H100 80GB HBM3",Hostname="{host}",DCGM_FI_DRIVER_VERSION="570.124.06",'
        f'err_code="{value}",err_msg="{why}"}} {value} {t:.0f}'
    )


def _dcgm_xids(copy: Path) -> tuple[list[XidRecord], list[str]]:
    """The Xid records read from telemetry/dcgm/ (the twin's kernel logs carry Xids of their own), and problems."""
    events = read_events(as_source_path(copy), load_bundle(copy), 2026)
    return [x for x in events.xids if x.where.startswith("telemetry/dcgm/")], events.problems


def _scrapes(bundle: Path, tmp: Path, lines: list[str]) -> Path:
    copy = tmp / "b"
    shutil.copytree(bundle, copy)
    (copy / "telemetry" / "dcgm").mkdir()
    head = (
        "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
    )
    (copy / "telemetry" / "dcgm" / "scrapes.om").write_text(head + "\n".join(lines) + "\n# EOF\n")
    return copy


def test_a_gauge_change_is_one_xid_incident_on_that_gpu(bundle: Path, roots_before: set[str], tmp_path: Path) -> None:
    fabric = load_bundle(bundle)
    g0, g5 = fabric.hosts["gpu002"].gpus[0], fabric.hosts["gpu003"].gpus[5]
    assert g0.pci_bus_id and g0.uuid and g5.uuid
    times = [TELEMETRY_START + i * STEP for i in range(20)]
    lines = [_v4("gpu002", 0, g0.pci_bus_id[4:], g0.uuid, 79 if i >= 12 else 0, t) for i, t in enumerate(times)]
    # dcgm-exporter 2.x: gpu and UUID only; the host is the scrape's instance (host:port)
    lines += [
        f'DCGM_FI_DEV_XID_ERRORS{{gpu="5",UUID="{g5.uuid}",instance="gpu003:9400"}} {48 if i >= 4 else 0} {t:.0f}'
        for i, t in enumerate(times)
    ]
    copy = _scrapes(bundle, tmp_path, lines)
    xids, problems = _dcgm_xids(copy)
    assert problems == []
    assert [(x.host, x.event.pci_bus_id, x.event.xid, x.time) for x in xids] == [
        ("gpu003", g5.pci_bus_id, 48, times[4]),
        ("gpu002", g0.pci_bus_id, 79, times[12]),  # once: the gauge stays at 79 afterwards
    ]
    assert xids[1].event.message == "GPU has fallen off the bus"
    result = health(copy)
    by_root = {i.root: i for i in result.incidents}
    for root, start, code in (("gpu:gpu002:0", times[12], "xid 79"), ("gpu:gpu003:5", times[4], "xid 48")):
        incident = by_root[root]
        assert incident.kind == "gpu" and incident.start == start
        assert [(s.detector, s.counter) for s in incident.symptoms] == [("HEALTH-GPU-XID", code)]
    assert {i.root for i in result.incidents} == roots_before | {"gpu:gpu002:0", "gpu:gpu003:5"}


def test_a_sample_for_no_host_of_the_bundle_is_a_problem(bundle: Path, tmp_path: Path) -> None:
    lines = [
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-x",Hostname="elsewhere"} 79 1764467600',
        'DCGM_FI_DEV_XID_ERRORS{gpu="9",UUID="GPU-y",Hostname="gpu002"} 79 1764467600',
    ]
    xids, problems = _dcgm_xids(_scrapes(bundle, tmp_path, lines))
    assert xids == []
    assert [p.split(": no host")[0] for p in problems] == [
        "telemetry/dcgm/scrapes.om: DCGM_FI_DEV_XID_ERRORS of gpu 0 on elsewhere",
        "telemetry/dcgm/scrapes.om: DCGM_FI_DEV_XID_ERRORS of gpu 9 on gpu002",
    ]


def test_a_real_healthy_scrape_gives_no_event_and_no_problem(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    (copy / "telemetry" / "dcgm").mkdir()
    shutil.copy(SAMPLES / "dcgm_exporter_scrape_gpu_operator_a100.prom", copy / "telemetry" / "dcgm" / "vks.om")
    xids, problems = _dcgm_xids(copy)
    assert xids == [] and problems == []


def test_a_broken_scrape_is_one_problem_and_the_rest_is_read(
    bundle: Path, roots_before: set[str], tmp_path: Path
) -> None:
    copy = _scrapes(bundle, tmp_path, ["DCGM_FI_DEV_XID_ERRORS{gpu=0} 79"])
    xids, problems = _dcgm_xids(copy)
    assert xids == [] and len(problems) == 1 and problems[0].startswith("telemetry/dcgm/scrapes.om")
    assert {i.root for i in health(copy).incidents} == roots_before
