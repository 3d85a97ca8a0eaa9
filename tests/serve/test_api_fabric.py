"""The fabric routes (links, jobs, topology, render, a check, a finding's history) over a real store on SQLite
and PostgreSQL and a real twin, against what the library computes from the same bundle."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import unifab
from unifab.model import Finding
from unifab.report import railmap
from unifab.report.findings_json import finding_doc, severity_counts
from unifab.serve.app import create_app
from unifab.serve.service import Settings


class Client:
    def __init__(self, client: TestClient) -> None:
        server = client.app.state.server  # type: ignore[attr-defined]
        self.client = client
        self.server = server
        self.viewer = {"Authorization": f"Bearer {server.create_token('viewer', 'v', 'test').token}"}
        self.agent = {"Authorization": f"Bearer {server.create_token('agent', 'a', 'test').token}"}

    def get(self, path: str, **params: Any) -> Any:
        r = self.client.get(path, params=params, headers=self.viewer)
        assert r.status_code == 200, r.text
        return r.json()

    def status(self, path: str, **params: Any) -> int:
        return self.client.get(path, params=params, headers=self.viewer).status_code

    def every(self, path: str, **params: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self.get(path, **params, **({"cursor": cursor} if cursor else {}))
            items += page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return items


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, twin_upload: bytes
) -> Iterator[Client]:
    """The twin ingested into an app on each backend (read-only for the tests here)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fabric') / 'serve.db'}"
    else:
        url = request.getfixturevalue("pg_database")
        from sqlalchemy import create_engine, text

        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        engine.dispose()
    app = create_app(Settings(db=url))
    with TestClient(app) as client:
        api = Client(client)
        r = client.post("/api/v1/snapshots", content=twin_upload, headers=api.agent)
        assert r.status_code == 201, r.text
        yield api


@pytest.fixture(scope="module")
def library(small_twin: Path) -> tuple[unifab.Fabric, list[Finding]]:
    fabric = unifab.load_snapshot(small_twin).fabric
    return fabric, unifab.run_checks(fabric)


def test_links_page_through_every_cable_once(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    fabric, _ = library
    items = served.every("/api/v1/links", limit=7)
    assert [i["id"] for i in items] == sorted(lk.id for lk in fabric.links)
    first = items[0]
    assert first["a"]["device"] in ("host:" + first["a"]["node"], "switch:" + first["a"]["node"])
    assert {i["kind"] for i in items} == {"host", "fabric"}


def test_link_filters(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    fabric, findings = library
    leaf = served.every("/api/v1/links", device="switch:leaf-su1-r4", limit=5)
    assert len(leaf) == sum(1 for lk in fabric.links if "leaf-su1-r4" in (lk.a.node, lk.b.node))
    assert all("leaf-su1-r4" in (i["a"]["node"], i["b"]["node"]) for i in leaf)
    flagged = served.every("/api/v1/links", flagged=True)
    assert flagged and all(i["findings"] > 0 for i in flagged)
    on_links = {e for f in findings for e in f.entities if e.startswith("link:")}
    assert on_links <= {i["id"] for i in flagged}
    critical = served.every("/api/v1/links", severity="critical")
    assert critical and {i["severity"] for i in critical} == {"critical"}
    fabric_links = served.every("/api/v1/links", kind="fabric")
    assert fabric_links and all("host" not in (i["a"]["kind"], i["b"]["kind"]) for i in fabric_links)
    for params in ({"cursor": "@@"}, {"severity": "fatal"}, {"limit": 0}, {"kind": "x"}):
        assert served.status("/api/v1/links", **params) in (400, 422), params


def _mtu_link(findings: list[Finding], fabric: unifab.Fabric) -> tuple[str, Finding]:
    for f in findings:
        if f.check == "QOS-MTU" and f.subject.get("kind") == "link":
            link = next(e for e in f.entities if e.startswith("link:"))
            if f.subject["a"].partition(":")[0] in fabric.hosts:
                return link, f
    raise AssertionError("the twin has no host-link MTU finding")


def test_a_link_shows_both_ends_what_differs_and_the_fix(
    served: Client, library: tuple[unifab.Fabric, list[Finding]]
) -> None:
    fabric, findings = library
    link_id, mtu = _mtu_link(findings, fabric)
    doc = served.get(f"/api/v1/links/{link_id}")
    assert doc["id"] == link_id and doc["severity"] == mtu.severity.value
    host_side = "a" if doc["a"]["kind"] == "host" else "b"
    switch_side = "b" if host_side == "a" else "a"
    lk = next(lk for lk in fabric.links if lk.id == link_id)
    nic = fabric.nic_at(lk.a) or fabric.nic_at(lk.b)
    port = fabric.port_at(lk.a) or fabric.port_at(lk.b)
    assert nic is not None and port is not None
    assert doc[host_side]["model"]["mtu"] == nic.mtu and doc[switch_side]["model"]["mtu"] == port.mtu
    rows = {r["field"]: r for r in doc["compare"]}
    assert rows["mtu"]["differs"] is (nic.mtu > port.mtu) is True
    assert rows["mtu"][host_side] == nic.mtu and rows["mtu"][switch_side] == port.mtu
    assert rows["state"]["differs"] is False
    item = next(i for i in doc["items"] if i["finding"]["check"] == "QOS-MTU")
    assert item["key"] == mtu.key and item["finding"] == finding_doc(mtu)
    assert [fix["commands"] for fix in item["finding"]["fix"]] == [list(fx.commands) for fx in mtu.fix]
    ends = {box["end"] for box in item["evidence"]}
    assert {"host end", "switch end"} <= ends
    assert served.status("/api/v1/links/link:nope--nope") == 404


def test_a_clean_link_differs_nowhere(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    clean = next(i for i in served.every("/api/v1/links", kind="host") if i["findings"] == 0)
    doc = served.get(f"/api/v1/links/{clean['id']}")
    assert doc["items"] == [] and not any(r["differs"] for r in doc["compare"])


def test_jobs_answer_is_it_the_network(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    fabric, _ = library
    jobs = served.every("/api/v1/jobs")
    assert [j["id"] for j in jobs] == sorted(fabric.jobs)
    job_id = jobs[0]["id"]
    expected = unifab.run_checks(fabric, job=job_id)
    detail = served.get(f"/api/v1/jobs/{job_id}")
    assert detail["by_severity"] == severity_counts(expected) == jobs[0]["by_severity"]
    assert [i["key"] for i in detail["items"]] == [f.key for f in expected]
    assert detail["hosts"] == list(fabric.jobs[job_id].hosts)
    bad = sum(1 for f in expected if f.severity.value in ("critical", "error"))
    assert detail["verdict"]["network"] == ("likely" if bad else "possible" if expected else "unlikely")
    assert served.get(f"/api/v1/jobs/{job_id.removeprefix('job:')}")["id"] == job_id
    short = served.get(f"/api/v1/jobs/{job_id}", limit=2)
    assert len(short["items"]) == min(2, len(expected)) and short["truncated"] is (len(expected) > 2)
    assert served.status("/api/v1/jobs/job:slurm:nope") == 404


def test_topology_graph_and_the_rail_map(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    fabric, findings = library
    graph = served.get("/api/v1/topology", device="leaf-su1-r0")
    ids = {n["id"] for n in graph["nodes"]}
    assert "switch:leaf-su1-r0" in ids and all(
        e["source"] == "leaf-su1-r0" or e["target"] == "leaf-su1-r0" for e in graph["edges"]
    )
    assert {e["source"] for e in graph["edges"]} | {e["target"] for e in graph["edges"]} == {
        n["name"] for n in graph["nodes"]
    }
    edges: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = served.get("/api/v1/topology", limit=50, **({"cursor": cursor} if cursor else {}))
        edges += page["edges"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(edges) == len(fabric.links)
    grid = served.get("/api/v1/topology/railmap")
    expected = railmap.grid_json(railmap.rail_grid(fabric, findings), "x")
    assert grid["scalable_units"] == expected["scalable_units"] and grid["summary"] == expected["summary"]
    svg = served.client.get("/api/v1/topology/railmap.svg", headers=served.viewer)
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.startswith("<svg") and 'data-leaf="leaf-su1-r0"' in svg.text


def test_render_gives_every_device_its_config_and_diff(served: Client, small_twin: Path) -> None:
    intent_text = (small_twin / "fabric.yaml").read_text()
    expected = unifab.render_intent(
        unifab.parse_intent(intent_text), unifab.load_snapshot(small_twin).fabric, small_twin
    )
    rows: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 9, **({"cursor": cursor} if cursor else {})}
        r = served.client.post("/api/v1/render", json={"intent": intent_text}, params=params, headers=served.viewer)
        assert r.status_code == 200, r.text
        rows += r.json()["items"]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            break
    assert [(r["kind"], r["device"]) for r in rows] == [(d.kind, d.name) for d in expected.devices]
    by_name = {d.name: d for d in expected.devices}
    for row in rows:
        assert row["diff"] == by_name[row["device"]].diff and row["outputs"] == by_name[row["device"]].outputs
    assert r.json()["nccl_env"] == expected.nccl_env
    one = served.client.post(
        "/api/v1/render", json={"intent": intent_text}, params={"device": "switch:leaf-su1-r0"}, headers=served.viewer
    ).json()["items"]
    assert [d["device"] for d in one] == ["leaf-su1-r0"] and "config_db.json" in one[0]["files"]

    bad = served.client.post("/api/v1/render", json={"intent": "version: 1\nqos: [1"}, headers=served.viewer)
    assert bad.status_code == 422 and bad.json()["detail"][0].startswith("intent:3: not valid YAML")
    assert served.client.post("/api/v1/render", json={"intent": 5}, headers=served.viewer).status_code == 422
    # no intent in the body: the one the server holds (here the bundle's fabric.yaml), rendered the same way
    held = served.client.post("/api/v1/render", json={}, params={"limit": 3}, headers=served.viewer)
    assert held.status_code == 200, held.text
    assert held.json()["nccl_env"] == expected.nccl_env and held.json()["items"] == rows[:3]


def test_one_check_and_history_of_a_finding(served: Client, library: tuple[unifab.Fabric, list[Finding]]) -> None:
    _, findings = library
    check = served.get("/api/v1/checks/QOS-MTU")
    assert check["title"] == unifab.check_catalog()["QOS-MTU"].title
    assert check["open_findings"] == sum(1 for f in findings if f.check == "QOS-MTU")
    assert served.status("/api/v1/checks/NOPE") == 404
    key = findings[0].key
    history = served.get("/api/v1/findings/history", key=key)
    assert history["current"]["key"] == key and [e["event"] for e in history["events"]] == ["opened"]
    assert served.status("/api/v1/findings/history", key="NOPE|x") == 404
    found = served.every("/api/v1/findings", q="mtu")
    assert found and all("mtu" in (f["key"] + f["finding"]["message"]).lower() for f in found)


def test_history_over_a_break_and_a_heal(
    db_url: str, twin_upload: bytes, small_twin: Path, host_files: Callable[..., Any], tar_of: Callable[..., bytes]
) -> None:
    app = create_app(Settings(db=db_url))
    with TestClient(app) as client:
        api = Client(client)
        assert client.post("/api/v1/snapshots", content=twin_upload, headers=api.agent).status_code == 201
        broken = tar_of(host_files(small_twin, "gpu001", {"sys/class/net/eth0/mtu": b"1500\n"}))
        healed = tar_of(host_files(small_twin, "gpu001"))
        for body, sid in ((broken, "b1"), (healed, "h1"), (broken, "b2")):
            r = client.post("/api/v1/snapshots", content=body, headers={**api.agent, "X-Unifab-Snapshot-Id": sid})
            assert r.status_code == 201, r.text
        key = next(f["key"] for f in api.every("/api/v1/findings", check="QOS-MTU") if "gpu001:eth0" in f["key"])
        events = api.get("/api/v1/findings/history", key=key)["events"]
        assert [(e["event"], e["snapshot_id"]) for e in events] == [
            ("opened", "b1"),
            ("cleared", "h1"),
            ("opened", "b2"),
        ]
