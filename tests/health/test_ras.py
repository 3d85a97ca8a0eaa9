"""NCCL RAS reports as health evidence: read from ``telemetry/nccl-ras/`` (the real reports, placed on hosts by
their RDMA GID addresses), judged over successive queries, and joined to the incidents of their hosts."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.health.test_detect_events import gid_fabric

from unifab.health.detect import NCCL_ERROR, Symptom
from unifab.health.detect_events import ras_processes
from unifab.health.events import EventStore, read_events
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric
from unifab.sources import as_source_path

T0 = 1764547200
STOPPED = "172.16.64.213"  # the address of the stopped process in NVIDIA's documented reports


def _bundle(root: Path, samples: Path, reports: list[str], *, job: str = "job-7", address: str = "10.0.2.1") -> None:
    """``reports`` (sample names under host/) as one job's RAS queries a minute apart, the stopped process moved to
    ``address`` (gpu002's first NIC in :func:`gid_fabric`)."""
    for n, name in enumerate(reports):
        path = root / "telemetry/nccl-ras" / job / f"{T0 + 60 * n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((samples / "host" / name).read_text().replace(STOPPED, address))


def _events(root: Path, fabric: Fabric) -> EventStore:
    return read_events(as_source_path(root), fabric, 2026)


HEALTHY, INCOMPLETE, DEAD = (
    "nccl_ras_healthy_2.26.2_256gpu.txt",
    "nccl_ras_incomplete_doc.txt",
    "nccl_ras_dead_doc.txt",
)


def test_the_real_reports_place_the_stopped_process_on_its_host_and_gpu(
    tmp_path: Path, samples: Path, fabric: Fabric
) -> None:
    fabric = gid_fabric(fabric)
    _bundle(tmp_path, samples, [HEALTHY, INCOMPLETE, INCOMPLETE, DEAD])
    events = _events(tmp_path, fabric)
    assert events.problems == []
    assert [(r.time - T0, r.label) for r in events.ras_reports] == [
        (0, "job-7"),
        (60, "job-7"),
        (120, "job-7"),
        (180, "job-7"),
    ]
    assert [(r.host, r.process.pid, r.process.state, r.time - T0) for r in events.ras] == [
        ("gpu002", 3487984, "missing", 60),
        ("gpu002", 3487984, "missing", 120),
        ("gpu002", 3487984, "dead", 180),
    ]
    [symptom] = ras_processes(events.ras, events.ras_reports, fabric)
    assert (symptom.detector, symptom.entity, symptom.counter) == (NCCL_ERROR, "gpu:gpu002:5", "ras_dead")
    assert (symptom.start - T0, symptom.end - T0, symptom.intervals) == (60, 180, 3)
    assert "declared dead" in symptom.notes[0] and "last 3 of 4 RAS reports" in symptom.notes[0]


@pytest.mark.parametrize(
    ("reports", "counter"),
    [
        ([HEALTHY, INCOMPLETE], None),  # missing from one query: it may answer the next (NCCL's guide)
        ([INCOMPLETE, INCOMPLETE], "ras_missing"),  # missing twice in a row
        ([HEALTHY, DEAD], "ras_dead"),  # RAS's own verdict: once is enough
        ([INCOMPLETE, INCOMPLETE, HEALTHY], None),  # the latest report no longer names it: it answered again
        ([INCOMPLETE, HEALTHY, INCOMPLETE], None),  # not in a row
        (["nccl_ras_mismatch_2.26.2_32gpu.txt"] * 3, None),  # stragglers: a warning, not a stopped process
    ],
)
def test_what_makes_a_symptom(
    tmp_path: Path, samples: Path, fabric: Fabric, reports: list[str], counter: str | None
) -> None:
    fabric = gid_fabric(fabric)
    _bundle(tmp_path, samples, reports)
    events = _events(tmp_path, fabric)
    assert [s.counter for s in ras_processes(events.ras, events.ras_reports, fabric)] == ([counter] if counter else [])


def test_an_address_of_no_host_and_a_badly_named_report_are_problems(
    tmp_path: Path, samples: Path, fabric: Fabric
) -> None:
    _bundle(tmp_path, samples, [DEAD], address="192.0.2.9")  # gid_fabric not applied: no host has it
    (tmp_path / "telemetry/nccl-ras/latest.txt").write_text("Errors\n======\n")
    events = _events(tmp_path, fabric)
    assert [r.host for r in events.ras] == [None]
    assert any("192.0.2.9, no host of the bundle" in p for p in events.problems)
    assert any("latest.txt: expected a RAS report named by its unix time" in p for p in events.problems)
    assert ras_processes(events.ras, events.ras_reports, fabric) == []


def ras(host: str, gpu: int, counter: str = "ras_dead", start: float = 500.0) -> Symptom:
    note = f"process 4242 on {host} (RAS address 10.0.2.1) managing GPU {gpu}: declared dead in the last 2 of 5"
    return Symptom(
        NCCL_ERROR, f"gpu:{host}:{gpu}", Endpoint(host, f"gpu{gpu}"), counter, start, start + 60, 2, 2, 0.0, 0, (note,)
    )


def test_a_process_ras_names_joins_the_incident_on_its_gpu_or_host(fabric: Fabric) -> None:
    xid = Symptom(
        "HEALTH-GPU-XID", "gpu:gpu002:5", Endpoint("gpu002", "gpu5"), "xid 79", 400, 400, 1, 1, 0.0, 0, ("Xid 79",)
    )
    down = Symptom("HEALTH-NODE-DOWN", "host:gpu001", Endpoint("gpu001", ""), "series", 300, 300, 1, 1, 0.0)
    incidents = localize(fabric, [xid, down, ras("gpu002", 5), ras("gpu001", 0), ras("gpu001", 1)])
    assert sorted((i.root, sorted(s.counter for s in i.symptoms)) for i in incidents) == [
        ("gpu:gpu002:5", ["ras_dead", "xid 79"]),
        ("host:gpu001", ["ras_dead", "ras_dead", "series"]),
    ]


def test_a_process_nothing_else_explains_is_its_gpu_and_not_the_network(fabric: Fabric) -> None:
    [incident] = localize(fabric, [ras("gpu002", 3)])
    assert (incident.kind, incident.root, incident.confidence, incident.hosts) == (
        "gpu",
        "gpu:gpu002:3",
        0.4,
        ("gpu002",),
    )
    assert "no fabric or device symptom on gpu002 explains it" in incident.summary
    [advice] = [a for a in incident.actions if a.kind == "advice"]
    assert "py-spy dump --pid 4242" in advice.commands[0] and advice.commands[0].startswith("# ")
