"""The HTTP API over a real store (SQLite and PostgreSQL) and a real twin: ingest, findings, auth, metrics."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from unifab.serve.app import FindingItem, create_app
from unifab.serve.auth import ROLES
from unifab.serve.routing import ROLE_KEY
from unifab.serve.service import Server, Settings

PUBLIC = {("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/login"), ("POST", "/login"), ("POST", "/logout")}


class Api:
    """A client over one app with a token of every role."""

    def __init__(self, client: TestClient, server: Server) -> None:
        self.client = client
        self.server = server
        self.tokens = {role: server.create_token(role, f"test-{role}", "test").token for role in ROLES}

    def auth(self, role: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def get(self, path: str, role: str = "viewer", **kw: Any) -> Any:
        response = self.client.get(path, headers=self.auth(role), **kw)
        assert response.status_code == 200, response.text
        return response.json()

    def ingest(self, data: bytes, snapshot_id: str | None = None, role: str = "agent") -> Any:
        headers = self.auth(role)
        if snapshot_id:
            headers["X-Unifab-Snapshot-Id"] = snapshot_id
        return self.client.post("/api/v1/snapshots", content=data, headers=headers)


def make_api(db: str, **settings: Any) -> Iterator[Api]:
    app = create_app(Settings(db=db, **settings))
    with TestClient(app) as client:
        yield Api(client, app.state.server)


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    yield from make_api(db_url, max_upload_bytes=8 * 1024 * 1024)


@pytest.fixture
def sqlite_api(tmp_path: Path) -> Iterator[Api]:
    yield from make_api(str(tmp_path / "serve.db"), max_upload_bytes=8 * 1024 * 1024)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory, twin_upload: bytes) -> Iterator[Api]:
    """One SQLite-backed app with the twin ingested, shared by the read-only tests of this module."""
    for api in make_api(str(tmp_path_factory.mktemp("loaded") / "serve.db")):
        assert api.ingest(twin_upload).status_code == 201
        yield api


def all_findings(api: Api, **params: Any) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        page = api.get("/api/v1/findings", params={**params, "limit": 40, **({"cursor": cursor} if cursor else {})})
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_ingest_a_twin_gives_the_library_findings(
    api: Api, twin_upload: bytes, small_twin: Path, twin_counts: dict[str, int]
) -> None:
    import unifab

    response = api.ingest(twin_upload)
    assert response.status_code == 201, response.text
    doc = response.json()
    assert doc["id"].startswith("sha256:") and doc["mode"] == "load" and not doc["duplicate"]
    assert "host:gpu001" in doc["devices"] and "switch:spine01" in doc["devices"]

    expected = unifab.findings_document("x", unifab.run_checks(unifab.load_snapshot(small_twin).fabric))
    served = all_findings(api)
    assert sorted((f["finding"]["check"], f["finding"]["message"]) for f in served) == sorted(
        (f["check"], f["message"]) for f in expected["findings"]
    )
    assert {f["finding"]["check"] for f in served} >= {"QOS-PFC-MISMATCH", "TOPO-MISWIRED"}
    summary = api.get("/api/v1/summary")
    assert summary["findings"]["by_severity"] == expected["summary"]["by_severity"]
    assert summary["devices"] == twin_counts and twin_counts["host"] == 8
    assert summary["last_snapshot"]["id"] == doc["id"]

    # a retry (same bytes, so the same digest id) stores nothing and answers with the first
    again = api.ingest(twin_upload)
    assert again.status_code == 200 and again.json()["duplicate"] and again.json()["id"] == doc["id"]
    assert len([e for e in api.get("/api/v1/audit", role="admin")["items"] if e["action"] == "ingest"]) == 1


def test_one_host_changes_then_heals(
    api: Api, twin_upload: bytes, small_twin: Path, host_files: Callable[..., Any], tar_of: Callable[..., bytes]
) -> None:
    assert api.ingest(twin_upload).status_code == 201
    before = {f["key"] for f in all_findings(api)}

    broken = tar_of(host_files(small_twin, "gpu001", {"sys/class/net/eth0/mtu": b"1500\n"}))
    r = api.ingest(broken, "gpu001-broken")
    assert r.status_code == 201, r.text
    assert r.json()["devices"] == ["host:gpu001"] and r.json()["mode"] in ("incremental", "recheck")
    new = [f for f in all_findings(api) if f["key"] not in before]
    assert [f["finding"]["check"] for f in new] == ["QOS-MTU"] and "gpu001:eth0" in new[0]["key"]
    assert new[0]["first_seen"] == new[0]["last_seen"]
    mtu_key = new[0]["key"]
    assert any(f["key"] == mtu_key for f in all_findings(api, device="gpu001"))

    healed = api.ingest(tar_of(host_files(small_twin, "gpu001")), "gpu001-healed")
    assert healed.status_code == 201
    assert {f["key"] for f in all_findings(api)} == before
    cleared = all_findings(api, state="cleared")
    assert [(f["key"], f["state"]) for f in cleared] == [(mtu_key, "cleared")] and cleared[0]["cleared_at"]

    # the same broken upload under its id again: a retry, nothing changes; under a new id: it reopens
    assert api.ingest(broken, "gpu001-broken").json()["duplicate"] is True
    assert all_findings(api, state="cleared")[0]["key"] == mtu_key
    assert api.ingest(broken, "gpu001-broken-again").status_code == 201
    assert any(f["key"] == mtu_key for f in all_findings(api))


def test_a_restart_rebuilds_the_fabric_from_the_store(tmp_path: Path, twin_upload: bytes) -> None:
    db = str(tmp_path / "serve.db")
    first = next(make_api(db))
    assert first.ingest(twin_upload).status_code == 201
    keys = {f["key"] for f in all_findings(first)}
    first.server.close()
    second_app = create_app(Settings(db=db))
    server: Server = second_app.state.server
    assert server.live.session is not None and {f.key for f in server.live.findings()} == keys
    assert server.live.device("host", "gpu001") is not None
    server.close()


@pytest.mark.parametrize(
    ("files", "links", "status", "message"),
    [
        ({"hosts/gpu001/cmd/x.json": b"{not json"}, None, 422, "hosts/gpu001/cmd/x.json: not valid JSON"),
        ({"notes/readme.txt": b"hi", "hosts/a/b": b""}, None, 422, "notes/readme.txt: not part of the bundle layout"),
        ({"switches/leaf1/vyos/config.txt": b"x"}, None, 422, "unknown switch OS directory 'vyos'"),
        ({"hosts/gpu001/cmd/a.txt": b"x"}, {"hosts/gpu001/cmd/b.txt": "/etc/passwd"}, 400, "is not a regular file"),
        ({"../escape/hosts/a/b": b"x"}, None, 400, "not a bundle-relative path"),
        ({}, None, 422, "holds no files"),
    ],
)
def test_a_bad_upload_is_refused_naming_the_file_and_stores_nothing(
    sqlite_api: Api, tar_of: Callable[..., bytes], files: dict[str, bytes], links: Any, status: int, message: str
) -> None:
    r = sqlite_api.ingest(tar_of(files, links))
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]
    assert sqlite_api.get("/api/v1/summary")["last_snapshot"] is None
    assert sqlite_api.server.store.units() == {} and sqlite_api.server.live.session is None


def test_not_a_tar_and_a_bad_snapshot_id_are_400(sqlite_api: Api) -> None:
    r = sqlite_api.ingest(b"this is not an archive")
    assert r.status_code == 400 and "not a tar archive" in r.json()["detail"]
    r = sqlite_api.ingest(b"x", snapshot_id="bad id with spaces")
    assert r.status_code == 400 and "snapshot id" in r.json()["detail"]


def test_an_oversized_upload_is_413(tmp_path: Path, twin_upload: bytes) -> None:
    api = next(make_api(str(tmp_path / "s.db"), max_upload_bytes=10_000))
    r = api.ingest(twin_upload)
    assert r.status_code == 413
    assert r.json()["detail"] == "the upload is larger than the 10,000 bytes this server accepts"
    assert api.server.store.latest_snapshot() is None
    api.server.close()


def test_a_bundle_larger_unpacked_than_allowed_is_413(tmp_path: Path, tar_of: Callable[..., bytes]) -> None:
    api = next(make_api(str(tmp_path / "s.db"), max_unpacked_bytes=1000))
    r = api.ingest(tar_of({"hosts/gpu001/cmd/dmesg.txt": b"0" * 5000}))
    assert r.status_code == 413 and "larger than 1,000 bytes unpacked" in r.json()["detail"]
    api.server.close()


def test_devices_and_device_detail(loaded: Api) -> None:
    hosts = loaded.get("/api/v1/devices", params={"kind": "host", "limit": 5})
    assert [d["name"] for d in hosts["items"]] == [f"host:gpu00{i}" for i in range(1, 6)] and hosts["next_cursor"]
    rest = loaded.get("/api/v1/devices", params={"kind": "host", "cursor": hosts["next_cursor"]})
    assert [d["name"] for d in rest["items"]] == ["host:gpu006", "host:gpu007", "host:gpu008"]
    leaf = loaded.get("/api/v1/devices/switch:leaf-su1-r0")
    assert leaf["os"] == "sonic" and leaf["model"]["name"] == "leaf-su1-r0" and "Ethernet0" in leaf["model"]["ports"]
    assert leaf["open_findings"] >= 1
    assert loaded.client.get("/api/v1/devices/host:nope", headers=loaded.auth()).status_code == 404


def test_findings_filters_and_bad_parameters(loaded: Api) -> None:
    crit = all_findings(loaded, severity="critical")
    assert crit and {f["finding"]["severity"] for f in crit} == {"critical"}
    mtu = all_findings(loaded, check="QOS-MTU")
    assert mtu and {f["finding"]["check"] for f in mtu} == {"QOS-MTU"}
    both = all_findings(loaded, check=["QOS-MTU", "QOS-TRUST"])
    assert {f["finding"]["check"] for f in both} == {"QOS-MTU", "QOS-TRUST"}
    for params in ({"severity": "fatal"}, {"state": "gone"}, {"limit": 0}, {"cursor": "@@"}):
        r = loaded.client.get("/api/v1/findings", params=params, headers=loaded.auth())
        assert r.status_code in (400, 422), (params, r.text)


def test_the_check_catalog(sqlite_api: Api) -> None:
    import unifab

    catalog = sqlite_api.get("/api/v1/checks")
    assert [c["id"] for c in catalog] == list(unifab.check_catalog())
    assert all(c["title"] and c["why"] and c["fix"] for c in catalog)


def test_the_finding_shape_is_the_library_document(sqlite_api: Api) -> None:
    """The API's finding is the library's FindingDoc itself (one definition for CLI JSON and API)."""
    from unifab.report.findings_json import FindingDoc

    assert typing.get_type_hints(FindingItem)["finding"] is FindingDoc
    schemas = sqlite_api.get("/api/v1/openapi.json")["components"]["schemas"]
    assert set(schemas["FindingDoc"]["properties"]) == set(typing.get_type_hints(FindingDoc))
    assert schemas["FindingItem"]["properties"]["finding"] == {"$ref": "#/components/schemas/FindingDoc"}


def _routes(api: Api) -> list[tuple[str, str, list[str] | None]]:
    """Every (method, path, roles) of the app, through included routers (FastAPI >= 0.16x nests them)."""
    out = []
    stack = list(api.client.app.routes)  # type: ignore[attr-defined]
    while stack:
        route = stack.pop(0)
        if isinstance(route, APIRoute):
            roles = (route.openapi_extra or {}).get(ROLE_KEY)
            out += [(method, route.path, roles) for method in sorted(route.methods)]
        elif hasattr(route, "original_router"):
            stack += list(route.original_router.routes)
        elif hasattr(route, "routes"):
            stack += list(route.routes)
    return out


def _concrete(path: str) -> str:
    for param, value in {
        "{name}": "host:gpu001",
        "{snapshot_id}": "nope",
        "{token_id}": "nope",
        "{link_id:path}": "link:gpu001:eth0--leaf-su1-r0:Ethernet0",
        "{job_id:path}": "job:slurm:1001",
        "{check_id}": "QOS-MTU",
        "{host}": "gpu001",
    }.items():
        path = path.replace(param, value)
    assert "{" not in path, path
    return path


def test_every_route_but_the_public_ones_needs_the_right_role(sqlite_api: Api) -> None:
    routes = _routes(sqlite_api)
    assert len(routes) >= 30
    paths = {p for _, p, _ in routes}
    assert {
        "/api/v1/links",
        "/api/v1/links/{link_id:path}",
        "/api/v1/jobs/{job_id:path}",
        "/api/v1/topology/railmap.svg",
        "/api/v1/render",
        "/api/v1/findings/history",
        "/api/v1/intent",
        "/railmap",
        "/links/{link_id:path}",
        "/jobs/{job_id:path}",
    } <= paths
    unguarded = [(m, p) for m, p, roles in routes if roles is None]
    assert sorted(unguarded) == sorted(PUBLIC)
    client = sqlite_api.client
    for method, path, roles in routes:
        if roles is None:
            continue
        url = _concrete(path)
        assert client.request(method, url).status_code == 401, (method, path)
        bad = client.request(method, url, headers={"Authorization": "Bearer ufb_000000000000_wrong"})
        assert bad.status_code == 401, (method, path)
        for role in ROLES:
            status = client.request(method, url, headers=sqlite_api.auth(role)).status_code
            if role in roles:
                assert status not in (401, 403), (method, path, role, status)
            else:
                assert status == 403, (method, path, role, status)


def test_the_cookie_never_authorizes_a_change(sqlite_api: Api, twin_upload: bytes) -> None:
    client = sqlite_api.client
    client.cookies.set("unifab_token", sqlite_api.tokens["admin"])
    try:
        assert client.get("/api/v1/summary").status_code == 200
        assert client.post("/api/v1/snapshots", content=twin_upload).status_code == 401
    finally:
        client.cookies.clear()


def test_openapi_documents_the_api_behind_a_role(sqlite_api: Api) -> None:
    assert sqlite_api.client.get("/api/v1/openapi.json").status_code == 401
    spec = sqlite_api.get("/api/v1/openapi.json")
    paths = spec["paths"]
    assert {"/api/v1/findings", "/api/v1/devices", "/api/v1/summary", "/api/v1/checks", "/api/v1/snapshots"} <= set(
        paths
    )
    assert paths["/api/v1/snapshots"]["post"][ROLE_KEY] == ["agent", "operator", "admin"]
    assert "413" in paths["/api/v1/snapshots"]["post"]["responses"]
    assert "FindingDoc" in spec["components"]["schemas"]


def test_metrics_and_health_are_public(
    sqlite_api: Api, twin_upload: bytes, tar_of: Callable[..., bytes], twin_counts: dict[str, int]
) -> None:
    sqlite_api.ingest(twin_upload)
    sqlite_api.ingest(twin_upload)
    sqlite_api.ingest(tar_of({"x": b""}))
    assert sqlite_api.client.get("/healthz").json() == {"status": "ok", "schema": "0005"}
    text = sqlite_api.client.get("/metrics").text
    assert 'unifab_findings_open{check="QOS-PFC-MISMATCH",severity="critical"} 2.0' in text
    assert 'unifab_devices{age="5m",kind="host"} 8.0' in text
    assert f'unifab_devices{{age="5m",kind="switch"}} {twin_counts["switch"]:.1f}' in text
    assert 'unifab_ingests_total{result="stored"} 1.0' in text
    assert 'unifab_ingests_total{result="duplicate"} 1.0' in text
    assert 'unifab_ingests_total{result="refused"} 1.0' in text
    assert "unifab_ingest_seconds_count 2.0" in text and "unifab_recheck_seconds_count 1.0" in text


def test_private_metrics_need_a_reader(tmp_path: Path) -> None:
    api = next(make_api(str(tmp_path / "s.db"), metrics_public=False))
    assert api.client.get("/metrics").status_code == 401
    assert "unifab_findings_open" in api.client.get("/metrics", headers=api.auth("viewer")).text
    api.server.close()


def test_tokens_made_over_the_api_work_and_are_audited(sqlite_api: Api) -> None:
    r = sqlite_api.client.post("/api/v1/tokens", json={"role": "viewer", "name": "dash"}, headers=sqlite_api.auth())
    assert r.status_code == 201
    token = r.json()["token"]
    assert sqlite_api.client.get("/api/v1/summary", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    bad = sqlite_api.client.post("/api/v1/tokens", json={"role": "root", "name": "x"}, headers=sqlite_api.auth())
    assert bad.status_code == 422
    entry = sqlite_api.get("/api/v1/audit", role="admin")["items"][0]
    assert (entry["action"], entry["target"], entry["detail"]["role"]) == ("token.create", r.json()["id"], "viewer")
