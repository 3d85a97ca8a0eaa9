"""``PUT /api/v1/intent`` over a real store and a real twin: validated by the library's loader, stored as the
bundle's fabric.yaml (re-checked against), audited, and what ``POST /api/v1/render`` renders by default."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from unifab.serve.app import create_app
from unifab.serve.auth import ROLES
from unifab.serve.service import Settings, pack_directory

YAML = {"content-type": "application/yaml"}


class Client:
    def __init__(self, client: TestClient, tokens: dict[str, str]) -> None:
        self.client, self.tokens = client, tokens

    def h(self, role: str, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}", **extra}

    def put(self, body: bytes, role: str = "operator", media: str = "application/yaml") -> Any:
        return self.client.put("/api/v1/intent", content=body, headers=self.h(role, **{"content-type": media}))

    def get(self, path: str, **params: Any) -> Any:
        r = self.client.get(path, params=params, headers=self.h("viewer"))
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture
def loaded(db_url: str, small_twin: Path) -> Iterator[Client]:
    app = create_app(Settings(db=db_url))
    server = app.state.server
    tokens = {role: server.create_token(role, role, "test").token for role in ROLES}
    with TestClient(app) as client:
        c = Client(client, tokens)
        assert client.post("/api/v1/snapshots", content=pack_directory(small_twin), headers=c.h("agent")).status_code
        yield c


def test_a_bad_intent_is_refused_naming_the_line_and_changes_nothing(loaded: Client, small_twin: Path) -> None:
    before = loaded.get("/api/v1/intent")
    assert before["intent"] == (small_twin / "fabric.yaml").read_text() and before["changed"] is False
    r = loaded.put(b"version: 1\nqos:\n  lossless_priorities: [3\n")
    assert r.status_code == 422 and r.json()["detail"][0].startswith("fabric.yaml:4: not valid YAML")
    r = loaded.put(b"version: 1\nqos:\n  bogus: 1\n")
    assert r.status_code == 422 and r.json()["detail"] == [
        d for d in r.json()["detail"] if d.startswith("fabric.yaml:3: qos.bogus: unknown key")
    ]
    assert loaded.put(b"\xff\xfe", media="text/plain").status_code == 400
    assert loaded.put(b"version: 1\n", media="application/json").status_code == 415
    assert loaded.put(b"x" * (300 * 1024)).status_code == 413
    assert loaded.get("/api/v1/intent")["sha256"] == before["sha256"]
    audit = loaded.client.get("/api/v1/audit", headers=loaded.h("admin")).json()["items"]
    assert not [e for e in audit if e["action"] == "intent.put"]


@pytest.mark.parametrize("role", ["viewer", "agent"])
def test_only_operators_and_admins_put_an_intent(loaded: Client, role: str) -> None:
    assert loaded.put(b"version: 1\n", role=role).status_code == 403


def test_an_intent_is_stored_rechecked_audited_and_rendered(loaded: Client, small_twin: Path) -> None:
    original = (small_twin / "fabric.yaml").read_text()
    changed = original.replace("mtu: {host: 9000, switch: 9100}", "mtu: {host: 4200, switch: 9100}")
    assert changed != original
    r = loaded.put(changed.encode(), role="operator")
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["changed"] is True and doc["intent"] == changed and doc["snapshot_id"].startswith("intent:")
    assert loaded.get("/api/v1/intent")["intent"] == changed
    snap = loaded.get(f"/api/v1/snapshots/{doc['snapshot_id']}")
    assert snap["units"] == ["fabric.yaml"] and snap["mode"] != "queued"
    # every check now runs against the new intent: the live fabric's QoS baseline is the one just put
    index = loaded.client.app.state.server.fabric_index()  # type: ignore[attr-defined]
    assert index.fabric.qos_intent.host_mtu == 4200

    audit = loaded.client.get("/api/v1/audit", headers=loaded.h("admin")).json()["items"]
    entries = [e for e in audit if e["action"] == "intent.put"]
    assert len(entries) == 1 and entries[0]["detail"]["sha256"] == doc["sha256"]
    assert entries[0]["detail"]["snapshot"] == doc["snapshot_id"] and entries[0]["actor"] != "cli"

    # the render endpoint renders the held intent when the body names none, exactly as when it names it
    held = loaded.client.post("/api/v1/render", json={}, params={"limit": 5}, headers=loaded.h("viewer"))
    given = loaded.client.post(
        "/api/v1/render", json={"intent": changed}, params={"limit": 5}, headers=loaded.h("viewer")
    )
    assert held.status_code == given.status_code == 200, held.text
    assert held.json() == given.json() and "4200" in str(held.json()["items"])

    # the same text again changes nothing and is not audited again
    again = loaded.put(changed.encode(), role="admin")
    assert again.status_code == 200 and again.json()["changed"] is False
    audit = loaded.client.get("/api/v1/audit", headers=loaded.h("admin")).json()["items"]
    assert len([e for e in audit if e["action"] == "intent.put"]) == 1


def test_render_without_an_intent_anywhere_is_422(tmp_path: Path, small_twin: Path) -> None:
    bundle = tmp_path / "b"
    import shutil

    shutil.copytree(small_twin, bundle)
    (bundle / "fabric.yaml").unlink()
    app = create_app(Settings(db=str(tmp_path / "s.db"), bundle=bundle))
    token = app.state.server.create_token("viewer", "v", "test").token
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {token}"}
        assert client.get("/api/v1/intent", headers=auth).status_code == 404
        r = client.post("/api/v1/render", json={}, headers=auth)
        assert r.status_code == 422 and "PUT /api/v1/intent" in r.json()["detail"][0]
