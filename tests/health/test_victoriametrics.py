"""The live path against a real VictoriaMetrics (the scale-out TSDB's single-node form): the twin's series pushed
through its Prometheus import API, read back through its Prometheus query API, must give the same incidents as
the bundle's own files.

Needs Debian's ``victoria-metrics`` package; without it the test skips, or fails when
``UNIFAB_REQUIRE_SERVICES=1`` (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from processes import stop, wait_until_ready

from unifab.collect.bundle import load_bundle
from unifab.health.engine import run_health
from unifab.health.openmetrics import Sample, parse
from unifab.health.prometheus import read_prometheus
from unifab.health.series import read_bundle
from unifab.sources import as_source_path
from unifab.twin.generate import generate

START_TIMEOUT_S = 60.0


def _binary() -> str:
    found = shutil.which("victoria-metrics")
    if found is None:
        reason = "victoria-metrics is not installed (apt-get install -y victoria-metrics)"
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} (required: UNIFAB_REQUIRE_SERVICES=1)", pytrace=False)
        pytest.skip(reason)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prometheus_text(samples: list[Sample]) -> str:
    """Prometheus exposition lines with millisecond timestamps, as VictoriaMetrics' import takes them."""
    lines = []
    for s in samples:
        assert s.timestamp is not None
        labels = ",".join(f'{k}="{v}"' for k, v in s.labels)
        lines.append(f"{s.name}{{{labels}}} {s.value} {round(s.timestamp * 1000)}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vm") / "b"
    generate(out, 64, 11, su_hosts=4, faults=6)
    return out


@pytest.fixture(scope="module")
def victoria(twin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _binary()
    work = tmp_path_factory.mktemp("vmdata")
    port = _free_port()
    log = (work / "vm.log").open("wb")
    proc = subprocess.Popen(
        [binary, f"-storageDataPath={work / 'data'}", f"-httpListenAddr=127.0.0.1:{port}", "-retentionPeriod=100y"],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/health", "victoria-metrics", START_TIMEOUT_S, (work / "vm.log").read_text)
        samples = [s for f in sorted((twin / "telemetry").glob("*.om")) for s in parse(f.read_text(), f.name)]
        pushed = httpx.post(f"{url}/api/v1/import/prometheus", content=_prometheus_text(samples), timeout=60)
        assert pushed.status_code == 204, pushed.text
        httpx.get(f"{url}/internal/force_flush", timeout=30).raise_for_status()
        yield url
    finally:
        stop(proc)
        log.close()


def test_victoriametrics_gives_the_same_incidents_as_the_bundle(twin: Path, victoria: str) -> None:
    fabric = load_bundle(twin)
    local = read_bundle(as_source_path(twin), fabric)
    first, last = local.span() or (0.0, 0.0)
    remote = read_prometheus(victoria, fabric, first, last, 30.0)
    assert len(remote) == len(local) and remote.problems == []
    mine, theirs = run_health(fabric, local), run_health(fabric, remote)
    assert theirs.incidents
    assert [(i.root, i.start, tuple((s.detector, s.entity) for s in i.symptoms)) for i in theirs.incidents] == [
        (i.root, i.start, tuple((s.detector, s.entity) for s in i.symptoms)) for i in mine.incidents
    ]
