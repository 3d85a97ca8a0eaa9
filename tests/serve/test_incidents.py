"""Incidents in the single pane: a bundle whose ``telemetry/`` rides along with its snapshot gives, through a real
``unifab serve``, the incidents ``unifab health`` gives for the bundle (``GET /api/v1/incidents``), and the web UI
lists each with the rate of every counter its detectors judged, drawn (Chromium). A telemetry-only upload re-reads
no device and re-runs no check; the next one replaces it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from tests.health.test_twin_faults import health
from tests.serve.conftest import serving
from tests.serve.test_browser import launch, logged_in, need_chromium

from unifab.serve.ingest import pack_directory, parse_upload
from unifab.serve.live import LiveFabric
from unifab.twin.generate import generate


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("incidents") / "b"
    generate(out, 64, seed=2, su_hosts=4, faults=3)
    return out


class Served:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers={"Authorization": f"Bearer {self.token}"}, timeout=120)


@pytest.fixture(scope="module")
def served(faulty: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("served-incidents"), faulty) as (url, token, _db):
        yield Served(url, token)


def _roots(incidents: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(i["root_cause"]["id"], i["start"]) for i in incidents]


def test_the_api_gives_the_incidents_unifab_health_gives(faulty: Path, served: Served) -> None:
    truth = orjson.loads((faulty / "truth.json").read_bytes())
    answer = served.get("/api/v1/incidents")
    assert answer.status_code == 200, answer.text
    doc = answer.json()
    local = health(faulty)
    assert _roots(doc["incidents"]) == [(i.root, i.as_dict()["start"]) for i in local.incidents]
    assert {i["root_cause"]["id"] for i in doc["incidents"]} == {f["root_cause"]["id"] for f in truth["faults"]}
    assert doc["summary"]["series"] == local.series and doc["summary"]["incidents"] == len(truth["faults"])
    assert all(i["actions"] and i["symptoms"] for i in doc["incidents"])


def test_the_page_draws_each_counter_its_detectors_judged(served: Served) -> None:
    doc = served.get("/api/v1/incidents").json()
    html = served.get("/incidents")
    assert html.status_code == 200
    text = html.text
    for incident in doc["incidents"]:
        assert f'data-root="{incident["root_cause"]["id"]}"' in text
    assert text.count('<svg class="plot"') >= sum(
        1 for i in doc["incidents"] for s in i["symptoms"] if not s["counter"].startswith("xid")
    )
    assert text.count("<polyline") == text.count('<svg class="plot"') > 0


def test_a_telemetry_upload_rereads_no_device(faulty: Path) -> None:
    upload = parse_upload(pack_directory(faulty), "twin", 1 << 30)
    live = LiveFabric()
    first = live.apply(upload.parts)
    assert first.mode == "load" and "telemetry" in upload.parts
    telemetry = dict(upload.parts["telemetry"])
    again = live.apply({"telemetry": telemetry})  # the same files again: nothing to re-read
    assert again.mode == "incremental" and again.findings == first.findings
    series = next(rel for rel in sorted(telemetry) if rel.endswith(".om"))
    telemetry = {**telemetry, series: telemetry[series].replace(b"# EOF", b"# a scrape more\n# EOF")}
    changed = live.apply({"telemetry": telemetry})  # new samples: health reads them, no check does
    assert changed.mode == "incremental" and changed.findings == first.findings
    assert live.session is not None and live.session.last_whole == ()
    telemetry = {**telemetry, "telemetry/nccl/job1.log": b"gpu001:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"}
    assert live.apply({"telemetry": telemetry}).mode == "reload"  # NCCL versions: FLEET-DRIVER reads them


def test_incidents_in_a_browser(served: Served, shots: Path) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    doc = served.get("/api/v1/incidents").json()
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = logged_in(page, served.url, served.token)
            page.click("header a[href='/incidents']")
            page.wait_for_url("**/incidents")
            sections = page.locator("section.incident")
            assert sections.count() == len(doc["incidents"])
            assert sections.evaluate_all("ss => ss.map(s => s.dataset.root)") == [
                i["root_cause"]["id"] for i in doc["incidents"]
            ]
            plot = page.locator("svg.plot").first
            box = plot.bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 20  # drawn, not collapsed
            assert page.locator("svg.plot polyline").first.get_attribute("points")
            page.screenshot(path=str(shots / "incidents.png"), full_page=True)
            jobs = page.locator("section.incident a.job")
            assert jobs.count() > 0  # the twin's faults hurt its Slurm jobs
            jobs.first.click()
            page.wait_for_url("**/jobs/**")
            assert page.locator("#verdict").count() == 1
            assert errors == []
        finally:
            browser.close()
