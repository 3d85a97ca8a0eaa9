"""Twins with faults and noise, scored: every injected fault is an incident with the right root cause, start and
jobs, and the noise (single flaps and errors, a driver reload, a wrap, missed scrapes, application Xids, a dead
peer process in NCCL's log, congestion that ECN handles) is no incident."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from unifab.checks.runner import run_checks
from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.health.engine import HealthResult, run_health
from unifab.health.events import EventStore, read_events
from unifab.health.series import SeriesStore, intervals, read_bundle
from unifab.model import Fabric
from unifab.sources import as_source_path
from unifab.twin.faults import FAULT_KINDS, write_faults
from unifab.twin.generate import generate


def health(bundle: Path) -> HealthResult:
    fabric = load_bundle(bundle)
    root = as_source_path(bundle)
    return run_health(fabric, read_bundle(root, fabric), run_checks(fabric), events=read_events(root, fabric, 2026))


def epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# every kind once and one more: 13 faults that share no host or link end need a few SUs
@pytest.fixture(scope="module", params=[(256, 8, 1), (256, 16, 5)], ids=["256gpu-su8-seed1", "256gpu-su16-seed5"])
def faulty(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    gpus, su, seed = request.param
    out = tmp_path_factory.mktemp("faults") / "b"
    result = generate(out, gpus, seed, su_hosts=su, faults=len(FAULT_KINDS) + 1)
    return out, result.truth


def test_truth_records_the_faults_in_designs_format(faulty: tuple[Path, dict[str, Any]]) -> None:
    bundle, truth = faulty
    assert orjson.loads((bundle / "truth.json").read_bytes())["faults"] == truth["faults"]
    assert [f["kind"] for f in truth["faults"]] == [*FAULT_KINDS, FAULT_KINDS[0]]
    for fault in truth["faults"]:
        assert set(fault) >= {"kind", "root_cause", "start", "jobs"}
        assert fault["root_cause"]["id"].startswith(fault["root_cause"]["kind"] + ":")
    assert sorted(p.name for p in (bundle / "telemetry").iterdir())[0].endswith(".om")


@dataclass(frozen=True)
class Scored:
    """One faulty twin read and scored once, for the tests that look at different parts of it."""

    fabric: Fabric
    store: SeriesStore
    events: EventStore
    result: HealthResult


@pytest.fixture(scope="module")
def scored(faulty: tuple[Path, dict[str, Any]]) -> Scored:
    bundle, _ = faulty
    fabric = load_bundle(bundle)
    root = as_source_path(bundle)
    store, events = read_bundle(root, fabric), read_events(root, fabric, 2026)
    return Scored(fabric, store, events, run_health(fabric, store, run_checks(fabric), events=events))


def test_every_fault_is_found_as_its_root_cause_and_noise_is_not(
    faulty: tuple[Path, dict[str, Any]], scored: Scored
) -> None:
    _, truth = faulty
    result = scored.result
    found = {(i.kind, i.root) for i in result.incidents}
    assert found == {(f["root_cause"]["kind"], f["root_cause"]["id"]) for f in truth["faults"]}
    by_root = {i.root: i for i in result.incidents}
    step = truth["telemetry"]["step_s"]
    for fault in truth["faults"]:
        incident = by_root[fault["root_cause"]["id"]]
        assert abs(incident.start - epoch(fault["start"])) <= step, fault
        assert list(incident.jobs) == fault["jobs"], fault
        assert incident.actions
        if fault["kind"] in ("host-down", "gpu-xid-79"):  # the job's RAS reports name its processes dead
            assert "ras_dead" in {s.counter for s in incident.symptoms}, fault


def test_the_noise_is_really_there(scored: Scored) -> None:
    store = scored.store
    events = {i.event for s in store.series.values() for i in intervals(s)}
    assert {"reset", "wrap"} <= events
    assert any(i.gap for s in store.series.values() for i in intervals(s))
    singles = [s for s in store.series.values() if s.counter in ("fec_uncorrectable", "crc_errors", "symbol_errors")]
    assert sum(1 for s in singles if sum(1 for i in intervals(s) if i.delta) == 1) >= 3
    events = scored.events
    assert {13, 31, 63} <= {r.event.xid for r in events.xids}  # application Xids and a remap event
    reported = {(r.error.local_gid, r.error.remote_gid) for r in events.nccl}
    assert any((b, a) not in reported for a, b in reported)  # a peer that reports nothing back (a dead process)
    paused = [
        s for s in store.series.values() if s.counter == "pause_rx_us" and max(i.rate or 0 for i in intervals(s)) > 1e5
    ]
    assert paused  # a NIC paused a quarter of the time while its CNPs keep coming
    faulty = {r.label for r in events.ras if r.process.state == "dead"}
    blips = [r for r in events.ras if r.label not in faulty]
    assert len(blips) == 1 and blips[0].process.state == "missing"  # one process missing from one query only
    assert len({r.label for r in events.ras_reports} - faulty) == 2  # that job's and a MISMATCH job's reports


@pytest.mark.parametrize(("gpus", "seed"), [(64, 2), (64, 3), (128, 4)])
def test_a_twin_with_noise_only_has_no_incident(tmp_path: Path, gpus: int, seed: int) -> None:
    generate(tmp_path / "b", gpus, seed, su_hosts=4)
    assert write_faults(tmp_path / "b", 0, seed) == []
    result = health(tmp_path / "b")
    assert result.incidents == () and result.series > 1000


def test_a_twin_too_small_for_every_kind_says_so(tmp_path: Path) -> None:
    generate(tmp_path / "b", 16, 1, su_hosts=2)
    with pytest.raises(UsageError, match="too small"):
        write_faults(tmp_path / "b", len(FAULT_KINDS), 1)


def test_cli_health_exit_codes_and_json(faulty: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    bundle, truth = faulty
    runner = CliRunner()
    result = runner.invoke(app, ["health", str(bundle), "--format", "json", "--quiet"])
    assert result.exit_code == 1, result.output
    doc = orjson.loads(result.stdout)
    assert {i["root_cause"]["id"] for i in doc["incidents"]} == {f["root_cause"]["id"] for f in truth["faults"]}
    assert doc["summary"]["incidents"] == len(truth["faults"]) and doc["summary"]["gaps"] > 0
    table = runner.invoke(app, ["health", str(bundle), "--quiet"])
    assert table.exit_code == 1 and "root cause" in table.stdout
    generate(tmp_path / "clean", 8, 1)
    missing = runner.invoke(app, ["health", str(tmp_path / "clean"), "--quiet"])
    assert missing.exit_code == 2 and "no counter series" in missing.stderr
    write_faults(tmp_path / "clean", 0, 1)
    clean = runner.invoke(app, ["health", str(tmp_path / "clean"), "--quiet"])
    assert clean.exit_code == 0 and "no incident" in clean.stdout
    bad = runner.invoke(app, ["health", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2


def test_cli_health_on_a_bundle_with_only_a_kernel_log(tmp_path: Path) -> None:
    generate(tmp_path / "b", 8, 1)
    fabric = load_bundle(tmp_path / "b")
    host = sorted(fabric.hosts)[0]
    gpu = fabric.hosts[host].gpus[min(fabric.hosts[host].gpus)]
    bus = (gpu.pci_bus_id or "").removesuffix(".0")
    log = tmp_path / "b" / "telemetry" / "kernel" / "k.log"
    log.parent.mkdir(parents=True)
    log.write_text(f"2026-11-30T03:00:00+0000 {host} kernel: NVRM: Xid (PCI:{bus}): 79, pid=1, name=x, off the bus\n")
    result = CliRunner().invoke(app, ["health", str(tmp_path / "b"), "--format", "json", "--quiet"])
    assert result.exit_code == 1, result.output
    [incident] = orjson.loads(result.stdout)["incidents"]
    assert incident["root_cause"] == {"kind": "gpu", "id": f"gpu:{host}:{gpu.index}"}
    assert incident["start"] == "2026-11-30T03:00:00Z" and incident["actions"][-1]["kind"] == "advice"
