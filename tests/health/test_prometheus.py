"""The live path against a real Prometheus: the twin's series backfilled with promtool, read back through
/api/v1/query_range, must give the same incidents as the bundle's files.

Needs Debian's ``prometheus`` package (``prometheus`` and ``promtool``); without it the test skips, or fails when
``UNIFAB_REQUIRE_SERVICES=1`` (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import stop, wait_until_ready

from unifab.collect.bundle import load_bundle
from unifab.health.engine import run_health
from unifab.health.openmetrics import Sample, dump, parse
from unifab.health.prometheus import PrometheusError, read_prometheus, read_prometheus_xids
from unifab.health.series import read_bundle
from unifab.sources import as_source_path
from unifab.twin.generate import generate

START_TIMEOUT_S = 60.0


def _need(binary: str) -> str:
    found = shutil.which(binary)
    if found is None:
        reason = f"{binary} is not installed (apt-get install -y prometheus)"
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} (required: UNIFAB_REQUIRE_SERVICES=1)", pytrace=False)
        pytest.skip(reason)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("prom") / "b"
    generate(out, 64, 11, su_hosts=4, faults=6)  # up to a dead leaf and a dead host: series that stop
    return out


@dataclass(frozen=True)
class GpuXid:
    """One GPU whose dcgm-exporter gauge reads Xid 79 from one sample on (the TSDB holds its scrapes)."""

    host: str
    index: int
    pci_bus_id: str
    uuid: str
    times: tuple[float, ...]
    at: float


def _gpu_xid(twin: Path) -> GpuXid:
    fabric = load_bundle(twin)
    gpu = fabric.hosts["gpu003"].gpus[2]
    first, _ = read_bundle(as_source_path(twin), fabric).span() or (0.0, 0.0)
    times = tuple(first + 30.0 * i for i in range(20))
    assert gpu.pci_bus_id and gpu.uuid
    return GpuXid("gpu003", 2, gpu.pci_bus_id, gpu.uuid, times, times[9])


def _dcgm_samples(twin: Path) -> list[Sample]:
    """dcgm-exporter 4.x's gauge as the GPU Operator scrapes it (Hostname, pci_bus_id, UUID, err_code)."""
    g = _gpu_xid(twin)
    out = []
    for t in g.times:
        value = 79 if t >= g.at else 0
        labels = {"gpu": str(g.index), "UUID": g.uuid, "pci_bus_id": g.pci_bus_id.upper(), "Hostname": g.host}
        labels["err_code"] = str(value)
        out.append(Sample("DCGM_FI_DEV_XID_ERRORS", tuple(sorted(labels.items())), value, t))
    return out


@pytest.fixture(scope="module")
def prometheus_server(
    twin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    promtool, server = _need("promtool"), _need("prometheus")
    work = tmp_path_factory.mktemp("tsdb")
    samples = [s for f in sorted((twin / "telemetry").glob("*.om")) for s in parse(f.read_text(), f.name)]
    counters = {s.name.removesuffix("_total") for s in samples if s.name.endswith("_total")}
    samples += _dcgm_samples(twin)
    (work / "data.om").write_text(dump(samples, counters))
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(work / "data.om"), str(work / "tsdb")],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (work / "prom.yml").write_text("global: {scrape_interval: 15s}\n")
    port = _free_port()
    log = (work / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            server,
            f"--config.file={work / 'prom.yml'}",
            f"--storage.tsdb.path={work / 'tsdb'}",
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/-/ready", "prometheus", START_TIMEOUT_S, (work / "prometheus.log").read_text)
        yield url, proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)  # a test that froze it has thawed it; never leave it stopped
        stop(proc)
        log.close()


@pytest.fixture(scope="module")
def prometheus(prometheus_server: tuple[str, subprocess.Popen[bytes]]) -> str:
    return prometheus_server[0]


def test_prometheus_gives_the_same_incidents_as_the_bundle(twin: Path, prometheus: str) -> None:
    fabric = load_bundle(twin)
    local = read_bundle(as_source_path(twin), fabric)
    first, last = local.span() or (0.0, 0.0)
    remote = read_prometheus(prometheus, fabric, first, last, 30.0)
    assert len(remote) == len(local) and remote.problems == []
    mine, theirs = run_health(fabric, local), run_health(fabric, remote)
    assert theirs.incidents and theirs.gaps == mine.gaps
    assert {"switch", "host"} <= {i.kind for i in theirs.incidents}  # a dead leaf and hosts, seen as stopped series
    summary = [(i.root, i.start, tuple((s.detector, s.entity, s.start) for s in i.symptoms)) for i in mine.incidents]
    assert [
        (i.root, i.start, tuple((s.detector, s.entity, s.start) for s in i.symptoms)) for i in theirs.incidents
    ] == (summary)


def test_the_gpus_xids_come_from_dcgm_exporter_in_the_tsdb(twin: Path, prometheus: str) -> None:
    fabric, g = load_bundle(twin), _gpu_xid(twin)
    events = read_prometheus_xids(prometheus, fabric, g.times[0], g.times[-1], 30.0)
    assert events.problems == []
    assert [(x.host, x.event.pci_bus_id, x.event.xid, x.time) for x in events.xids] == [
        (g.host, g.pci_bus_id, 79, g.at)  # once: the gauge stays at 79 afterwards
    ]
    result = run_health(fabric, read_prometheus(prometheus, fabric, g.times[0], g.times[-1], 30.0), events=events)
    [incident] = [i for i in result.incidents if i.root == f"gpu:{g.host}:{g.index}"]
    assert incident.start == g.at and [s.detector for s in incident.symptoms] == ["HEALTH-GPU-XID"]


def test_a_tsdb_that_is_down_is_a_clear_error(twin: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(PrometheusError, match=url):
        read_prometheus(url, load_bundle(twin), 0.0, 600.0, 30.0, timeout=2.0)


def test_a_tsdb_that_is_slow_is_a_clear_error_within_the_timeout(
    twin: Path, prometheus_server: tuple[str, subprocess.Popen[bytes]]
) -> None:
    """The real Prometheus frozen (SIGSTOP): the kernel still accepts the connection, nothing answers. The read
    gives up after --timeout with one line naming the server, then reads normally once it is thawed."""
    from typer.testing import CliRunner

    from unifab.cli import app

    url, proc = prometheus_server
    fabric = load_bundle(twin)
    first, last = read_bundle(as_source_path(twin), fabric).span() or (0.0, 0.0)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        with pytest.raises(PrometheusError, match=f"^{url}: no answer within 1 s$"):
            read_prometheus(url, fabric, first, last, 30.0, timeout=1.0)
        assert time.monotonic() - began < 30  # one query's timeout, not one per metric or a hang
        args = ["health", str(twin), "--prometheus", url, "--timeout", "1", "--quiet"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and result.stderr == f"unifab: error: {url}: no answer within 1 s\n"
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    assert len(read_prometheus(url, fabric, first, last, 30.0)) > 0


def test_cli_reads_prometheus(twin: Path, prometheus: str) -> None:
    import orjson
    from typer.testing import CliRunner

    from unifab.cli import app
    from unifab.health.localize import iso

    fabric = load_bundle(twin)
    first, last = read_bundle(as_source_path(twin), fabric).span() or (0.0, 0.0)
    args = ["health", str(twin), "--prometheus", prometheus, "--start", iso(first), "--end", iso(last), "-f", "json"]
    result = CliRunner().invoke(app, [*args, "--quiet"])
    assert result.exit_code == 1, result.output
    truth = orjson.loads((twin / "truth.json").read_bytes())
    g = _gpu_xid(twin)  # the TSDB also holds one GPU's dcgm Xid 79: its incident comes with the faults'
    assert {i["root_cause"]["id"] for i in orjson.loads(result.stdout)["incidents"]} == {
        f["root_cause"]["id"] for f in truth["faults"]
    } | {f"gpu:{g.host}:{g.index}"}
