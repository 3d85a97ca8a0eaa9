"""A session hands out snapshots that never change afterwards, with stable finding keys."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.session.incremental import Session


def test_an_earlier_snapshot_survives_an_update(twin_bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "b"
    shutil.copytree(twin_bundle, work)
    session = Session(work)
    initial = [f.key for f in session.findings]
    before = session.snapshot()
    host = sorted((work / "hosts").iterdir())[0].name
    old_host = before.fabric.hosts[host]
    qos = sorted((work / "hosts" / host / "cmd" / "mlnx_qos").glob("*.txt"))[0]
    qos.write_text(qos.read_text().replace("trust state: dscp", "trust state: pcp"))
    update = session.update_host(host)
    after = session.snapshot()
    assert update.added
    assert before.fabric.hosts[host] is old_host  # the old snapshot still holds the old state
    assert after.fabric.hosts[host] is not old_host
    assert after.read_at >= before.read_at
    assert [f.key for f in run_checks(before.fabric)] == initial  # checking the old snapshot again: as it was
    assert [f.key for f in run_checks(after.fabric)] == [f.key for f in update.findings]
    assert before.origin(f"host:{host}") is not None
    assert sorted(before.origins) == sorted(after.origins)


def test_finding_keys_are_unique_and_stable(twin_bundle: Path) -> None:
    first = Session(twin_bundle).findings
    again = Session(twin_bundle).findings
    assert len({f.key for f in first}) == len(first)
    assert [f.key for f in first] == [f.key for f in again]
    assert all(f.key.startswith(f"{f.check}|") for f in first)
