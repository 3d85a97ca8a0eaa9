"""The fabric pages (rail map, leaf, links, link debugger, jobs, job, history) over a real store and twin:
what they show, that they page on the server, and that device text is shown, never run."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

import unifab
from unifab.serve.app import create_app
from unifab.serve.service import Settings


class Pages:
    def __init__(self, client: TestClient) -> None:
        server = client.app.state.server  # type: ignore[attr-defined]
        self.client = client
        self.viewer = {"Authorization": f"Bearer {server.create_token('viewer', 'v', 'test').token}"}
        self.agent = {"Authorization": f"Bearer {server.create_token('agent', 'a', 'test').token}"}

    def html(self, path: str, status: int = 200) -> str:
        r = self.client.get(path, headers=self.viewer)
        assert r.status_code == status, (path, r.status_code, r.text[:300])
        return r.text

    def api(self, path: str, **params: Any) -> Any:
        return self.client.get(path, params=params, headers=self.viewer).json()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, twin_upload: bytes) -> Iterator[Pages]:
    app = create_app(Settings(db=str(tmp_path_factory.mktemp("ui") / "serve.db")))
    with TestClient(app) as client:
        p = Pages(client)
        assert client.post("/api/v1/snapshots", content=twin_upload, headers=p.agent).status_code == 201
        yield p


def test_the_rail_map_has_a_cell_per_leaf_linking_to_it(pages: Pages) -> None:
    grid = pages.api("/api/v1/topology/railmap")
    page = pages.html("/railmap")
    cells = re.findall(r'<a class="leaf sev-bg-(\w+)" href="/leaves/([^"]+)" data-leaf="([^"]+)"', page)
    expected = [(c["severity"], c["leaf"]) for u in grid["scalable_units"] for c in u["leaves"]]
    assert [(sev, leaf) for sev, _, leaf in cells] == expected and len(cells) == grid["summary"]["leaves"]
    assert 'href="/api/v1/topology/railmap.svg"' in page


@pytest.mark.parametrize("kind", ["mixed", "ib"])
def test_the_rail_map_has_a_grid_per_fabric(tmp_path: Path, kind: str) -> None:
    """A mixed twin: the RoCE grid in #railmap and the IB grid in #railmap-ib; an IB-only twin: #railmap-ib only.
    Each grid's cells are the leaves the twin's plan gives that fabric, in the API's order."""
    from rail_plan import plan_of  # tests/support

    from unifab.serve.service import pack_directory
    from unifab.twin.generate import generate

    bundle = tmp_path / "bundle"
    generate(bundle, gpus=64, seed=1, fabric=kind)
    plan = plan_of(bundle)
    app = create_app(Settings(db=str(tmp_path / "serve.db")))
    with TestClient(app) as client:
        p = Pages(client)
        assert client.post("/api/v1/snapshots", content=pack_directory(bundle), headers=p.agent).status_code == 201
        grid = p.api("/api/v1/topology/railmap")
        page = p.html("/railmap")
    tables = dict(re.findall(r'<table class="grid" id="(railmap[-\w]*)" data-fabric="(\w+)">', page))
    assert tables == ({"railmap": "roce", "railmap-ib": "ib"} if kind == "mixed" else {"railmap-ib": "ib"})
    for sec in grid["sections"]:
        table_id = "railmap" if sec["fabric"] == "roce" else f"railmap-{sec['fabric']}"
        table = page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
        cells = re.findall(r'<a class="leaf sev-bg-\w+" href="/leaves/[^"]+" data-leaf="([^"]+)"', table)
        assert cells == [c["leaf"] for u in sec["scalable_units"] for c in u["leaves"]]
        assert set(cells) == plan.leaves[sec["fabric"]]
        spines = page.split(f'id="spines{table_id.removeprefix("railmap")}"', 1)[1].split("</table>", 1)[0]
        assert set(re.findall(r'class="mono" href="[^"]+">([^<]+)</a>', spines)) == plan.spines[sec["fabric"]]
        label = f'id="label{table_id.removeprefix("railmap")}">{sec["label"]}</h2>'
        assert label in page


def test_a_leaf_lists_its_hosts_and_links(pages: Pages, small_twin: Path) -> None:
    fabric = unifab.load_snapshot(small_twin).fabric
    page = pages.html("/leaves/leaf-su1-r4")
    behind = sorted({lk.a.node for lk in fabric.links if lk.b.node == "leaf-su1-r4" and lk.a.node in fabric.hosts})
    assert re.findall(r'href="/devices/host%3A(gpu\d+)"', page.split('id="leaf-hosts"')[1].split("</p>")[0]) == behind
    shown = re.findall(r'<tr class="link"', page)
    assert len(shown) == min(50, sum(1 for lk in fabric.links if "leaf-su1-r4" in (lk.a.node, lk.b.node)))
    pages.html("/leaves/nope", status=404)


def test_the_link_list_pages_on_the_server(pages: Pages, small_twin: Path) -> None:
    total = len(unifab.load_snapshot(small_twin).fabric.links)
    page = pages.html("/links?flagged=0")
    assert page.count('<tr class="link"') == 50 < total
    next_url = re.search(r'href="([^"]+)" id="next-page"', page)
    assert next_url is not None
    rest = pages.html(next_url.group(1).replace("&amp;", "&"))
    assert rest.count('<tr class="link"') == min(50, total - 50)


def test_the_link_debugger_highlights_what_differs_and_copies_the_fix(pages: Pages) -> None:
    mtu = pages.api("/api/v1/findings", check="QOS-MTU")["items"]
    subject = next(f["finding"]["subject"] for f in mtu if f["finding"]["subject"]["a"].startswith("gpu"))
    first, second = sorted((subject["a"], subject["b"]))
    page = pages.html(f"/links/link:{quote(first)}--{quote(second)}")
    assert re.search(r'<tr class="differs" data-field="mtu" data-differs="true">', page)
    assert 'data-field="trust" data-differs="false"' in page
    assert "(host end)" in page and "(switch end)" in page
    fix = re.search(r'<button type="button" class="copy" data-copy="(fix-[\d-]+)" hidden>', page)
    assert fix is not None and f'<pre id="{fix.group(1)}" class="fix-commands">sudo config interface mtu' in page
    pages.html("/links/link:nope--nope", status=404)


def test_the_job_page_answers_is_it_the_network(pages: Pages, small_twin: Path) -> None:
    fabric = unifab.load_snapshot(small_twin).fabric
    job_id = sorted(fabric.jobs)[0]
    listing = pages.html("/jobs")
    assert f'href="/jobs/{quote(job_id, safe="/")}"' in listing
    page = pages.html(f"/jobs/{job_id}")
    scoped = unifab.run_checks(fabric, job=job_id)
    verdict = pages.api(f"/api/v1/jobs/{job_id}")["verdict"]["network"]
    assert f'data-verdict="{verdict}"' in page and "Is it the network?" in page
    assert page.count('<tr class="finding"') == min(50, len(scoped))
    assert 'class="debug" href="/links/link' in page
    pages.html("/jobs/job:slurm:nope", status=404)


def test_findings_search_and_history_pages(pages: Pages) -> None:
    page = pages.html("/findings?q=MTU")
    rows = re.findall(r'<tr class="finding" data-check="([^"]+)"', page)
    matching = pages.api("/api/v1/findings", q="MTU", limit=500)["items"]
    assert rows and len(rows) == min(50, len(matching)) < len(pages.api("/api/v1/findings", limit=500)["items"])
    history = re.search(r'<a class="history" href="(/history\?key=[^"]+)"', page)
    assert history is not None
    shown = pages.html(history.group(1).replace("&amp;", "&"))
    assert '<tr class="event" data-event="opened">' in shown
    pages.html("/history?key=NOPE", status=404)


def test_a_hostile_lldp_name_is_shown_not_run(
    tmp_path: Path, twin_upload: bytes, small_twin: Path, host_files: Callable[..., Any], tar_of: Callable[..., bytes]
) -> None:
    """A neighbor that calls itself ``evil<ESC>[2J<script>`` becomes a link end; every page shows it escaped."""
    lldp = (small_twin / "hosts/gpu001/cmd/lldpcli.json").read_text()
    hostile = "evil\\u001b[2J<script>alert(1)</script>"
    changed = re.sub(r'"value": "leaf-su1-r\d+"', lambda _: f'"value": "{hostile}"', lldp, count=1)  # 1st neighbor
    assert changed != lldp
    app = create_app(Settings(db=str(tmp_path / "serve.db")))
    with TestClient(app) as client:
        p = Pages(client)
        assert client.post("/api/v1/snapshots", content=twin_upload, headers=p.agent).status_code == 201
        part = tar_of(host_files(small_twin, "gpu001", {"cmd/lldpcli.json": changed.encode()}))
        assert client.post("/api/v1/snapshots", content=part, headers=p.agent).status_code == 201
        links = p.api("/api/v1/links", device="host:gpu001", limit=500)["items"]
        evil = next(lk for lk in links if "evil" in lk["a"]["node"] + lk["b"]["node"])
        for page in (p.html("/links?device=gpu001&flagged=0"), p.html("/links/" + quote(evil["id"], safe=""))):
            assert "<script>alert" not in page and "\x1b" not in page
            assert "evil\\x1b[2J&lt;script&gt;alert(1)&lt;/script&gt;" in page
