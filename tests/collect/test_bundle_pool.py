"""The process-pool read of a bundle (unifab.collect.parallel) gives exactly the serial read's fabric and findings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.host import load_host
from unifab.collect.parallel import WORKERS_ENV, pool_workers, read_devices
from unifab.collect.problems import Problems
from unifab.jsonify import dumps
from unifab.model import Link
from unifab.report.findings_json import document
from unifab.sources import DirectorySource, SourcePath
from unifab.twin.generate import generate


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small twin with misconfigurations, one broken file, one non-UTF-8 file and one link out of the bundle."""
    out = tmp_path_factory.mktemp("pool") / "twin"
    generate(out, 128, seed=3, scenarios=("pfc-mismatch", "ecn-off", "miswire", "mtu-mismatch"))
    hosts = sorted((out / "hosts").iterdir())
    qos = sorted((hosts[1] / "cmd" / "mlnx_qos").iterdir())[0]
    qos.write_text("this is not mlnx_qos output\n")
    (hosts[2] / "cmd" / "uname-r.txt").write_bytes(b"\xff\xfe\x00")
    (hosts[3] / "cmd" / "lsmod.txt").unlink()
    (hosts[3] / "cmd" / "lsmod.txt").symlink_to("/etc/hostname")
    return out


def _findings_text(bundle: Path, workers: int, pool_min_devices: int | None = None) -> str:
    fabric = load_bundle(bundle, workers=workers, pool_min_devices=pool_min_devices)
    return dumps(document("twin", run_checks(fabric)))


def test_pool_and_serial_give_byte_identical_findings(twin: Path) -> None:
    serial = _findings_text(twin, workers=1)
    pooled = _findings_text(twin, workers=2, pool_min_devices=1)
    assert pooled == serial
    assert "INPUT-UNREADABLE" in serial  # the broken files are reported, by both


def test_pool_and_serial_give_equal_fabrics(twin: Path) -> None:
    serial = load_bundle(twin, workers=1)
    pooled = load_bundle(twin, workers=2, pool_min_devices=1)
    assert list(pooled.hosts) == list(serial.hosts)
    assert pooled.hosts == serial.hosts
    assert pooled.switches == serial.switches
    assert pooled.links == serial.links
    assert pooled.input_findings == serial.input_findings


def test_a_broken_device_stays_its_own_finding_in_the_pool(twin: Path) -> None:
    fabric = load_bundle(twin, workers=2, pool_min_devices=1)
    broken = sorted(p.name for p in (twin / "hosts").iterdir())[1]
    assert broken in fabric.hosts  # the device is still read
    paths = [f.evidence.get("file") for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert any(str(p).startswith(f"hosts/{broken}/cmd/mlnx_qos/") for p in paths)
    assert len(fabric.hosts) == len(list((twin / "hosts").iterdir()))


def _dies_in_a_worker(parent: int) -> object:
    def read(device_dir: SourcePath, problems: Problems) -> tuple[object, list[Link]]:
        if os.getpid() != parent:
            os._exit(3)  # a worker killed mid-read (out of memory, say)
        return load_host(device_dir, problems)

    return read


def test_a_dead_worker_costs_nothing_but_time(twin: Path) -> None:
    root = SourcePath(DirectorySource(twin))
    dirs = sorted(p for p in (root / "hosts").iterdir() if p.is_dir())
    jobs = [("host", d) for d in dirs]
    serial_problems = Problems(root)
    expected = [load_host(d, serial_problems)[0] for d in dirs]
    reads = list(read_devices(root, jobs, {"host": _dies_in_a_worker(os.getpid())}, 2))  # type: ignore[dict-item]
    assert [r.device for r in reads] == expected
    assert [f for r in reads for f in r.findings] == serial_problems.findings


def test_pool_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert pool_workers(10) == 1  # below the threshold: serial
    assert pool_workers(10, workers=2, min_devices=1) == 2
    assert pool_workers(1000, workers=1) == 1
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert pool_workers(1000) == 1
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert pool_workers(1000) == 3
    assert pool_workers(2, min_devices=1) == 2  # never more workers than devices


def test_with_threads_running_the_pool_uses_forkserver_and_reads_the_same(twin: Path) -> None:
    import threading

    from unifab.collect import parallel

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)  # a progress bar's refresh thread, say
    thread.start()
    try:
        assert parallel._context().get_start_method() in ("forkserver", "spawn")
        pooled = _findings_text(twin, workers=2, pool_min_devices=1)
    finally:
        stop.set()
        thread.join()
    assert pooled == _findings_text(twin, workers=1)


def test_the_incremental_session_reads_a_large_bundle_on_the_pool_alike(
    twin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from unifab.collect import parallel
    from unifab.session.incremental import Session

    monkeypatch.setenv(WORKERS_ENV, "1")
    serial = Session(twin)
    monkeypatch.setattr(parallel, "POOL_MIN_DEVICES", 1)
    monkeypatch.setenv(WORKERS_ENV, "2")
    pooled = Session(twin)
    assert dumps(document("twin", pooled.findings)) == dumps(document("twin", serial.findings))
    assert pooled.fabric.hosts == serial.fabric.hosts
