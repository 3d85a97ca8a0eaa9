"""The overview's impacted jobs, the link list and a finding's history in Chromium, on a real ``unifab serve``.

The twin is :func:`tests.serve.test_ui_impacted_jobs.impact_twin`: two running jobs, one with a critical finding
on two of its hosts and one with a warning on one host, and three flagged links. The browser logs in, reads the
impacted jobs on the overview and follows one to its job page, follows the other's worst finding to its history,
then opens the link list, shows every link, and follows a flagged one to its link debugger.

Screenshots go to ``$UNIFAB_ARTIFACTS/browser/<test>/`` when ``UNIFAB_ARTIFACTS`` is set (CI keeps that
directory), else to the test's temp directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.serve.conftest import serving
from tests.serve.test_browser import launch, logged_in, need_chromium
from tests.serve.test_ui_impacted_jobs import CRITICAL_JOB, PENDING_JOB, WARNING_JOB, clean_twin, impact_twin

SHOTS = ("overview-impacted", "job", "history", "links-flagged", "links-all", "link")


class Served:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def api(self, path: str, **params: Any) -> Any:
        r = httpx.get(f"{self.url}{path}", params=params, headers={"Authorization": f"Bearer {self.token}"})
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("served-pages")
    bundle = impact_twin(clean_twin(work / "clean"), work / "bundle")
    with serving(work, bundle) as (url, token, _db):
        yield Served(url, token)


def test_impacted_jobs_links_and_history_in_a_browser(served: Served, shots: Path) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    url = served.url
    flagged = served.api("/api/v1/links", flagged="true")["items"]
    every = served.api("/api/v1/links", limit=50)["items"]
    assert len(flagged) == 3 and len(every) == 50
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = logged_in(page, url, served.token)

            # the overview: both running jobs, worst first, with their hosts affected and worst finding
            rows = page.locator("#impacted tr.impacted-job")
            assert rows.count() == 2
            assert rows.evaluate_all("rs => rs.map(r => [r.dataset.job, r.dataset.severity, r.dataset.hostsHit])") == [
                [CRITICAL_JOB, "critical", "2"],
                [WARNING_JOB, "warning", "1"],
            ]
            assert "2 of 4" in rows.nth(0).inner_text() and "QOS-PFC-MISMATCH" in rows.nth(0).inner_text()
            assert "QOS-MTU" in rows.nth(1).inner_text()
            assert PENDING_JOB not in page.locator("#impacted").inner_text()
            assert page.locator("#no-impacted-job").count() == 0
            page.locator("#impacted-jobs").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "overview-impacted.png"), full_page=True)

            # a job id leads to its job page
            rows.nth(0).locator("a.mono").click()
            page.wait_for_url(f"**/jobs/{quote(CRITICAL_JOB, safe='')}")
            assert page.locator("h1").inner_text().startswith(CRITICAL_JOB)
            assert page.locator("#verdict").get_attribute("data-verdict") == "likely"
            assert page.locator("#job-findings tr.finding").count() == 2
            page.screenshot(path=str(shots / "job.png"), full_page=True)

            # the other job's worst finding leads to its history: opened with the one snapshot
            page.goto(f"{url}/")
            page.locator(f'#impacted tr.impacted-job[data-job="{WARNING_JOB}"] a[href^="/history"]').click()
            page.wait_for_url("**/history?key=*")
            assert page.locator("h1").inner_text() == "Finding history"
            assert page.locator("p.mono").first.inner_text().startswith("QOS-MTU|")
            events = page.locator("#history tr.event")
            assert events.count() == 1 and events.first.get_attribute("data-event") == "opened"
            assert "open" in page.locator("main").inner_text()
            page.screenshot(path=str(shots / "history.png"), full_page=True)

            # the link list: the flagged links by default, every link on request (a page of 50)
            page.click('header a[href="/links"]')
            page.wait_for_url(f"{url}/links")
            links = page.locator("#links tr.link")
            assert links.count() == len(flagged)
            assert sorted(links.evaluate_all("rs => rs.map(r => r.dataset.severity)")) == sorted(
                lk["severity"] for lk in flagged
            )
            page.screenshot(path=str(shots / "links-flagged.png"), full_page=True)
            page.select_option("#filter-flagged", "0")
            page.click("#filter-apply")
            page.wait_for_url("**/links?*flagged=0*")
            assert links.count() == len(every)
            assert page.locator("#next-page").is_visible()
            page.screenshot(path=str(shots / "links-all.png"), full_page=True)

            # a flagged link leads to its debugger
            page.goto(f"{url}/links")
            critical = page.locator('#links tr.link[data-severity="critical"]').first
            ends = critical.locator("td.mono").all_inner_texts()
            critical.locator("a.debug").click()
            page.wait_for_url("**/links/link*")
            link_id = page.locator("#link-id").inner_text()
            assert link_id.startswith("link:") and all(end in link_id for end in ends), (link_id, ends)
            assert "QOS-PFC-MISMATCH" in page.locator("main").inner_text()
            assert page.locator("#compare tbody tr").count() >= 5
            page.screenshot(path=str(shots / "link.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
    for name in SHOTS:
        assert (shots / f"{name}.png").stat().st_size > 10_000, name
