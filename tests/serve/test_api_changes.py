"""The summary's "what changed with the last snapshot", and the findings API's time and job filters, over a real
twin on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from unifab.serve.app import create_app
from unifab.serve.service import Settings


class Api:
    def __init__(self, client: TestClient, token: str) -> None:
        self.client, self.auth = client, {"Authorization": f"Bearer {token}"}

    def get(self, path: str, **params: Any) -> Any:
        r = self.client.get(path, params=params, headers=self.auth)
        assert r.status_code == 200, r.text
        return r.json()

    def ingest(self, data: bytes, sid: str) -> None:
        r = self.client.post("/api/v1/snapshots", content=data, headers={**self.auth, "X-Unifab-Snapshot-Id": sid})
        assert r.status_code == 201, r.text

    def keys(self, **params: Any) -> set[str]:
        out, cursor = set(), None
        while True:
            page = self.get("/api/v1/findings", limit=500, **params, **({"cursor": cursor} if cursor else {}))
            out |= {f["key"] for f in page["items"]}
            if not (cursor := page["next_cursor"]):
                return out


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    app = create_app(Settings(db=db_url))
    token = app.state.server.create_token("admin", "t", "test").token
    with TestClient(app) as client:
        yield Api(client, token)


def test_the_summary_says_what_the_last_snapshot_opened_and_cleared(
    api: Api, twin_upload: bytes, small_twin: Path, host_files: Callable[..., Any], tar_of: Callable[..., bytes]
) -> None:
    assert api.get("/api/v1/summary")["changes"] is None
    api.ingest(twin_upload, "full")
    first = api.get("/api/v1/summary")
    assert first["changes"]["snapshot"]["id"] == "full"
    assert first["changes"]["opened"] == first["findings"]["open"] and first["changes"]["cleared"] == 0

    api.ingest(tar_of(host_files(small_twin, "gpu001", {"sys/class/net/eth0/mtu": b"1500\n"})), "broken")
    broken = api.get("/api/v1/summary")["changes"]
    assert (broken["snapshot"]["id"], broken["opened"], broken["cleared"]) == ("broken", 1, 0)
    (row,) = broken["items"]["opened"]
    assert row["check"] == "QOS-MTU" and "gpu001:eth0" in row["key"] and broken["items"]["cleared"] == []

    api.ingest(tar_of(host_files(small_twin, "gpu001")), "healed")
    healed = api.get("/api/v1/summary")["changes"]
    assert (healed["snapshot"]["id"], healed["opened"], healed["cleared"]) == ("healed", 0, 1)
    assert [r["key"] for r in healed["items"]["cleared"]] == [row["key"]]

    page = api.client.get("/", headers=api.auth).text  # the overview shows it
    assert 'id="changes-cleared">1<' in page and "QOS-MTU" in page


def test_findings_by_time_and_bad_times(
    api: Api, twin_upload: bytes, small_twin: Path, host_files: Callable[..., Any], tar_of: Callable[..., bytes]
) -> None:
    api.ingest(twin_upload, "full")
    everything = api.keys()
    api.ingest(tar_of(host_files(small_twin, "gpu002", {"sys/class/net/eth0/mtu": b"1500\n"})), "broken")
    (mtu,) = api.keys() - everything
    item = next(f for f in api.get("/api/v1/findings", q="gpu002:eth0", check="QOS-MTU")["items"])
    opened = datetime.fromisoformat(item["first_seen"])
    assert api.keys(since=item["first_seen"]) == {mtu}
    assert mtu not in api.keys(until=item["first_seen"])  # until is exclusive
    zulu = (opened - timedelta(microseconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # the Z form, UTC
    assert api.keys(since=zulu) == {mtu}
    assert api.keys(time="last_seen", since=item["first_seen"]) == everything | {mtu}  # all seen again then
    api.ingest(tar_of(host_files(small_twin, "gpu002")), "healed")
    assert api.keys(state="all", time="cleared", since=item["first_seen"]) == {mtu}
    assert api.keys(state="open", time="cleared", since="2000-01-01") == set()

    for bad in ("yesterday", "2026-13-01", "0001-01-01T00:00:00+05:00"):
        r = api.client.get("/api/v1/findings", params={"since": bad}, headers=api.auth)
        assert r.status_code == 422 and "since:" in r.json()["detail"] and "ISO-8601" in r.json()["detail"]
    r = api.client.get("/api/v1/findings", params={"until": "soon"}, headers=api.auth)
    assert r.status_code == 422 and r.json()["detail"].startswith("until: 'soon'")
    assert api.client.get("/api/v1/findings", params={"time": "seen"}, headers=api.auth).status_code == 422
    page = api.client.get("/findings", params={"since": "yesterday"}, headers=api.auth)
    assert page.status_code == 422 and "is not an ISO-8601 time" in page.text  # the UI says so above the table


def test_findings_by_job_are_the_job_pages_findings(api: Api, twin_upload: bytes) -> None:
    api.ingest(twin_upload, "full")
    jobs = api.get("/api/v1/jobs")["items"]
    assert jobs
    for job in jobs:
        detail = api.get(f"/api/v1/jobs/{job['id']}", limit=1000)
        assert not detail["truncated"]
        expected = {f["key"] for f in detail["items"]}
        assert api.keys(job=job["id"]) == expected
        short = job["id"].removeprefix("job:")
        assert api.keys(job=short, severity="critical") == {
            f["key"] for f in detail["items"] if f["finding"]["severity"] == "critical"
        }
    assert any(api.keys(job=j["id"]) for j in jobs)  # the twin has findings on some job's network
    r = api.client.get("/api/v1/findings", params={"job": "job:slurm:999999"}, headers=api.auth)
    assert r.status_code == 404 and "no job" in r.json()["detail"]


def test_a_restart_fills_the_fabric_of_rows_from_before_it_was_stored(tmp_path: Path) -> None:
    """Rows written before revision 0005 have no ``fabric`` and no InfiniBand switch rows: the start-up
    re-check writes them once, with the received time and snapshot they had."""
    from sqlalchemy import delete, select, update

    from unifab.serve.schema import devices
    from unifab.serve.service import Server
    from unifab.twin.generate import generate

    bundle = tmp_path / "mixed"
    generate(bundle, gpus=16, seed=4, fabric="mixed")
    db = str(tmp_path / "s.db")
    first = Server(Settings(db=db, bundle=bundle))
    with first.store.engine.connect() as conn:
        want = {r.name: (r.fabric, r.received_at, r.snapshot_id) for r in conn.execute(select(devices))}
    assert {f for f, _, _ in want.values()} == {"roce", "ib", "roce+ib"}
    with first.store.engine.begin() as conn:  # as an older server left them
        conn.execute(delete(devices).where(devices.c.os == "ib"))
        conn.execute(update(devices).values(fabric=None))
    first.close()
    again = Server(Settings(db=db))
    with again.store.engine.connect() as conn:
        got = {r.name: (r.fabric, r.received_at, r.snapshot_id) for r in conn.execute(select(devices))}
    again.close()
    assert got == want
