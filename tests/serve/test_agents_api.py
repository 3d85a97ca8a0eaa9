"""The host agents' routes: POST /api/v1/agents/{host}/heartbeat (ingest roles, a scoped token speaks for its
hosts only), GET /api/v1/agents, the agent in a host's device detail, and the dropped-snapshots note of an
ingest in the audit log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.serve.conftest import host_part, make_tar

from unifab.serve.app import create_app
from unifab.serve.service import Settings


@pytest.fixture
def client(db_url: str) -> Iterator[tuple[TestClient, dict[str, str]]]:
    app = create_app(Settings(db=db_url))
    server = app.state.server
    tokens = {r: server.create_token(r, r, "test").token for r in ("agent", "viewer", "admin")}
    tokens["gpu001"] = server.create_token("agent", "one host", "test", hosts=["gpu001"]).token
    with TestClient(app) as c:
        yield c, tokens


def auth(tokens: dict[str, str], who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens[who]}"}


BEAT = {"version": "0.1.0", "spool_depth": 3, "spool_bytes": 4096, "dropped": 2, "last_snapshot": "gpu001-1-ab"}


def test_heartbeats_are_stored_listed_and_scoped(client: tuple[TestClient, dict[str, str]]) -> None:
    c, tokens = client
    url = "/api/v1/agents/gpu001/heartbeat"
    first = c.post(url, json={**BEAT, "interval": 30}, headers=auth(tokens, "gpu001"))
    assert first.status_code == 200, first.text
    doc = first.json()
    assert (doc["host"], doc["spool_depth"], doc["dropped"], doc["interval"]) == ("gpu001", 3, 2, 30.0)
    assert doc["actor"] == tokens["gpu001"].split("_")[1]
    # a late heartbeat with a smaller dropped total cannot undo a drop
    c.post(url, json={**BEAT, "spool_depth": 0, "dropped": 1}, headers=auth(tokens, "agent")).raise_for_status()
    listed = c.get("/api/v1/agents", headers=auth(tokens, "viewer")).json()
    assert [(a["host"], a["spool_depth"], a["dropped"]) for a in listed["items"]] == [("gpu001", 0, 2)]
    assert listed["next_cursor"] is None
    refused = c.post("/api/v1/agents/gpu002/heartbeat", json=BEAT, headers=auth(tokens, "gpu001"))
    assert refused.status_code == 403 and "only send heartbeats of gpu001" in refused.json()["detail"]
    assert c.post(url, json=BEAT, headers=auth(tokens, "viewer")).status_code == 403
    assert c.post(url, json=BEAT).status_code == 401
    assert c.get("/api/v1/agents", headers=auth(tokens, "agent")).status_code == 403
    for bad in ({**BEAT, "spool_depth": -1}, {"version": "x"}, {**BEAT, "dropped": "many"}):
        assert c.post(url, json=bad, headers=auth(tokens, "agent")).status_code == 422
    assert c.post("/api/v1/agents/..bad/heartbeat", json=BEAT, headers=auth(tokens, "agent")).status_code == 422


def test_the_dropped_note_is_audited_and_the_device_shows_its_agent(
    client: tuple[TestClient, dict[str, str]], small_twin: Path
) -> None:
    c, tokens = client
    upload = make_tar(host_part(small_twin, "gpu001"))
    headers = {
        **auth(tokens, "gpu001"),
        "X-Unifab-Snapshot-Id": "gpu001-00000009-abc",
        "X-Unifab-Dropped-Snapshots": "4",
    }
    assert c.post("/api/v1/snapshots", content=upload, headers=headers).status_code == 201
    assert c.post("/api/v1/snapshots", content=upload, headers=headers).status_code == 200  # known: nothing again
    bad = c.post("/api/v1/snapshots", content=upload, headers={**headers, "X-Unifab-Dropped-Snapshots": "-1"})
    assert bad.status_code == 400 and "X-Unifab-Dropped-Snapshots" in bad.json()["detail"]
    entries = c.get("/api/v1/audit", headers=auth(tokens, "admin")).json()["items"]
    ingests = [e for e in entries if e["action"] == "ingest"]
    assert [(e["target"], e["detail"].get("dropped_before")) for e in ingests] == [("gpu001-00000009-abc", 4)]
    device = c.get("/api/v1/devices/host:gpu001", headers=auth(tokens, "viewer")).json()
    assert device["agent"] is None
    c.post("/api/v1/agents/gpu001/heartbeat", json=BEAT, headers=auth(tokens, "gpu001")).raise_for_status()
    device = c.get("/api/v1/devices/host:gpu001", headers=auth(tokens, "viewer")).json()
    assert device["agent"]["version"] == "0.1.0" and device["model"] is not None
