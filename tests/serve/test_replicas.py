"""Two real ``unifab serve`` processes on one PostgreSQL: concurrent ingests lose nothing and do nothing twice.

Threads post tarballs to both replicas at once: different hosts (each breaks its own eth0 MTU), the same
host in several versions, and one snapshot id to both replicas. Afterwards the store holds exactly one
snapshot, one job (run once), one ``ingest`` audit entry per id, every job in exactly one ``recheck``
round, findings equal to a full check of the stored bundle, and both replicas answer the same.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, select
from tests.serve.conftest import Process, free_port, host_part, make_tar

from unifab.serve.ingest import unpack_part
from unifab.serve.schema import audit, device_files, devices, jobs, snapshots
from unifab.serve.service import Server, Settings

BROKEN = {"sys/class/net/eth0/mtu": b"1500\n"}


@pytest.fixture
def replicas(pg_url: str, tmp_path: Path) -> Iterator[tuple[list[Process], str]]:
    server = Server(Settings(db=pg_url))  # migrates, and makes the token both replicas accept
    token = server.create_token("operator", "replica-test", "test").token
    server.close()
    started = []
    try:
        for name in ("a", "b"):
            port = free_port()
            args = ["serve", "--db", pg_url, "--port", str(port)]
            started.append(Process(args, tmp_path / f"replica-{name}.log", port))
        for proc in started:
            proc.wait_healthy()
        yield started, token
    finally:
        for proc in started:
            proc.stop()


def all_findings(client: httpx.Client, url: str) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 200, **({"cursor": cursor} if cursor else {})}
        page = client.get(f"{url}/api/v1/findings", params=params).raise_for_status().json()
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_two_replicas_share_one_postgresql(
    replicas: tuple[list[Process], str], pg_url: str, small_twin: Path, twin_upload: bytes, tmp_path: Path
) -> None:
    import unifab

    (a, b), token = replicas
    auth = {"Authorization": f"Bearer {token}"}
    client = httpx.Client(headers=auth, timeout=120)
    first = client.post(f"{a.url}/api/v1/snapshots", content=twin_upload, headers={"X-Unifab-Snapshot-Id": "twin"})
    assert first.status_code == 201, first.text

    posts: list[tuple[str, str, bytes]] = []  # (replica url, snapshot id, body)
    others = [f"gpu00{i}" for i in range(2, 9)]
    for i, host in enumerate(others):  # different devices, spread over both replicas
        posts.append(((a, b)[i % 2].url, f"{host}-broken", make_tar(host_part(small_twin, host, BROKEN))))
    for i in range(6):  # one device in several versions, to both replicas
        changes = BROKEN if i % 2 == 0 else {}
        body = make_tar(host_part(small_twin, "gpu001", {**changes, "cmd/version.txt": str(i).encode()}))
        posts.append(((a, b)[i % 2].url, f"gpu001-v{i}", body))
    same = make_tar(host_part(small_twin, "gpu002", BROKEN))  # the same content as gpu002-broken
    for i in range(4):  # one snapshot id, sent to both replicas at once (a client retrying elsewhere)
        posts.append(((a, b)[i % 2].url, "gpu002-retry", same))

    barrier = threading.Barrier(len(posts))
    answers: dict[int, httpx.Response | BaseException] = {}

    def post(n: int, url: str, sid: str, body: bytes) -> None:
        with httpx.Client(headers=auth, timeout=120) as own:
            barrier.wait()
            try:
                answers[n] = own.post(f"{url}/api/v1/snapshots", content=body, headers={"X-Unifab-Snapshot-Id": sid})
            except BaseException as exc:
                answers[n] = exc

    threads = [threading.Thread(target=post, args=(n, *p)) for n, p in enumerate(posts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    statuses: dict[str, list[int]] = {}
    for n, (_url, sid, _body) in enumerate(posts):
        answer = answers[n]
        assert isinstance(answer, httpx.Response), (sid, answer, a.log(), b.log())
        assert answer.status_code in (200, 201), (sid, answer.text)
        assert answer.json()["id"] == sid and answer.json()["mode"] != "queued"
        statuses.setdefault(sid, []).append(answer.status_code)
    assert all(codes.count(201) == 1 for codes in statuses.values()), statuses  # stored once, whoever got it
    ids = {"twin", *statuses}

    engine = create_engine(pg_url)
    with engine.connect() as conn:
        stored = {r.id: r for r in conn.execute(select(snapshots))}
        job_rows = list(conn.execute(select(jobs)).mappings())
        entries = list(conn.execute(select(audit)).mappings())
        files = {r.unit: r for r in conn.execute(select(device_files))}
        device_rows = {r.name: r for r in conn.execute(select(devices))}
    engine.dispose()
    # nothing lost, nothing twice: one snapshot, one job run once, one ingest entry per id
    assert set(stored) == ids and all(s.mode != "queued" for s in stored.values())
    assert sorted(j["snapshot_id"] for j in job_rows) == sorted(ids)
    assert {(j["state"], j["runs"]) for j in job_rows} == {("done", 1)}
    assert sorted(e["target"] for e in entries if e["action"] == "ingest") == sorted(ids)
    rounds = [e["detail"]["jobs"] for e in entries if e["action"] == "recheck"]
    covered = [job for r in rounds for job in r]
    assert sorted(covered) == sorted(j["id"] for j in job_rows), "every job in exactly one re-check round"
    workers = {j["claimed_by"] for j in job_rows}
    assert workers and all(w for w in workers)

    # the findings are a full check of the bundle the store holds now
    bundle = tmp_path / "stored-bundle"
    for unit, row in files.items():
        for rel, body in unpack_part(row.data, unit).items():
            (bundle / rel).parent.mkdir(parents=True, exist_ok=True)
            (bundle / rel).write_bytes(body)
    expected = {f.key for f in unifab.run_checks(unifab.load_snapshot(bundle).fabric)}
    served = {url: all_findings(client, url) for url in (a.url, b.url)}
    assert {f["key"] for f in served[a.url]} == expected == {f["key"] for f in served[b.url]}
    for host in others:  # every host's own change is there
        assert any(f["finding"]["check"] == "QOS-MTU" and f"{host}:eth0" in f["key"] for f in served[a.url]), host
    winner = files["hosts/gpu001"].snapshot_id  # the version of gpu001 accepted last
    broken = int(winner.rsplit("v", 1)[1]) % 2 == 0
    assert any("gpu001:eth0" in f["key"] and f["finding"]["check"] == "QOS-MTU" for f in served[b.url]) == broken
    assert device_rows["host:gpu001"].snapshot_id == winner

    # both replicas answer the same, and their in-memory fabrics caught up with the store
    assert client.get(f"{a.url}/api/v1/summary").json() == client.get(f"{b.url}/api/v1/summary").json()
    models = [client.get(f"{url}/api/v1/devices/host:gpu001").json()["model"] for url in (a.url, b.url)]
    assert models[0] == models[1]
    assert (models[0]["nics"]["eth0"]["mtu"] == 1500) == broken
    client.close()


def test_a_job_nobody_finished_is_done_by_any_replica(pg_url: str, twin_upload: bytes) -> None:
    """A replica that dies between accepting and re-checking leaves a pending job; another one finishes it."""
    from datetime import UTC, datetime

    from unifab.serve import work
    from unifab.serve.auth import Principal
    from unifab.serve.ingest import pack_part, parse_upload

    first = Server(Settings(db=pg_url))
    first.ingest(twin_upload, "twin", Principal("t", "admin"))
    upload = parse_upload(make_tar({"hosts/gpu001/sys/class/net/eth0/mtu": b"1500\n"}), "x", 10**9)

    accepted = work.accept(
        first.store,
        snapshot_id="orphan",
        received_at=datetime.now(UTC),
        size=1,
        actor="t",
        units={p: pack_part(f) for p, f in upload.parts.items()},
        devices=upload.devices,
    )  # ... and the replica is gone before it re-checks
    assert accepted.created and work.counts(first.store) == {"done": 1, "pending": 1}
    first.close()
    second = Server(Settings(db=pg_url))  # start-up finishes what is pending
    try:
        row = work.job(second.store, accepted.job_id or 0)
        assert row is not None and row["state"] == "done" and row["claimed_by"] == second.replica
        assert second.store.snapshot("orphan")["mode"] != "queued"  # type: ignore[index]
        assert second.live.device("host", "gpu001") is not None
    finally:
        second.close()
