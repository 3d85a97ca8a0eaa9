"""The real thing end to end: ``unifab serve`` (uvicorn) on a free port over a twin, driven by Chromium.

The token comes from ``unifab serve token create`` on the same store; the browser logs in with it through
the login form, reads the overview, filters the findings, opens a device and logs out. Screenshots are
written to the test's temp directory. No Chromium at /usr/bin/chromium: skip, or fail when
``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.serve.conftest import serving

CHROMIUM = Path("/usr/bin/chromium")


def need_chromium() -> None:
    if not CHROMIUM.exists():
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{CHROMIUM} not found (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} not found")


def launch(playwright: Any) -> Any:
    """The system Chromium, headless, as every browser test here drives it."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    )


def logged_in(page: Any, url: str, token: str) -> list[str]:
    """Log ``page`` in to the server at ``url`` with ``token``; the list the page's console errors go to."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{url}/login")
    page.fill("#token", token)
    page.click("#login")
    page.wait_for_url(f"{url}/")
    return errors


class Served:
    def __init__(self, url: str, token: str, db: Path) -> None:
        self.url, self.token, self.db = url, token, db


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, small_twin: Path) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("served"), small_twin) as (url, token, db):
        yield Served(url, token, db)


def test_the_served_api_and_headers(served: Served, twin_counts: dict[str, int]) -> None:
    auth = {"Authorization": f"Bearer {served.token}"}
    summary = httpx.get(f"{served.url}/api/v1/summary", headers=auth).json()
    assert summary["devices"] == twin_counts and summary["findings"]["open"] > 0
    page = httpx.get(f"{served.url}/", headers=auth)
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "style-src 'nonce-" in csp
    # the one script (the copy buttons) runs by its nonce: no inline handler, no other script
    assert "script-src 'nonce-" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert httpx.get(f"{served.url}/").status_code == 401
    # a viewer may not ingest
    assert httpx.post(f"{served.url}/api/v1/snapshots", content=b"x", headers=auth).status_code == 403


def test_a_person_logs_in_reads_the_overview_and_filters_findings(served: Served, shots: Path) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    auth = {"Authorization": f"Bearer {served.token}"}
    summary = httpx.get(f"{served.url}/api/v1/summary", headers=auth).json()
    critical = summary["findings"]["by_severity"]["critical"]
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

            page.goto(f"{served.url}/")
            assert page.locator("#token").is_visible()  # not logged in: the login form
            page.fill("#token", served.token)
            page.click("#login")
            page.wait_for_url(f"{served.url}/")
            assert page.locator("#open-count").inner_text() == str(summary["findings"]["open"])
            assert page.locator("#by-check tbody tr").count() == len(summary["by_check"])
            page.screenshot(path=str(shots / "overview.png"), full_page=True)

            page.click("text=Findings")
            page.select_option("#filter-severity", "critical")
            page.click("#filter-apply")
            page.wait_for_url("**/findings?*severity=critical*")
            rows = page.locator("tr.finding")
            assert rows.count() == critical
            assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.severity)")) == {"critical"}
            page.screenshot(path=str(shots / "findings-critical.png"), full_page=True)

            page.select_option("#filter-severity", "")
            page.fill("#filter-device", "gpu003")
            page.click("#filter-apply")
            page.wait_for_url("**/findings?*device=gpu003*")
            assert page.locator("tr.finding").count() >= 1

            page.goto(f"{served.url}/devices/host:gpu003")
            assert page.locator("h1").inner_text() == "host:gpu003"
            assert page.locator("#nics tbody tr").count() == 8
            page.screenshot(path=str(shots / "device.png"), full_page=True)

            page.click("text=Log out")
            page.wait_for_url("**/login")
            page.goto(f"{served.url}/findings")
            assert page.locator("#token").is_visible()
            # the login page answers 401 on purpose; anything else (a CSP violation, a failed asset) is a bug
            assert [e for e in errors if "status of 401" not in e] == []
        finally:
            browser.close()
    assert (shots / "overview.png").stat().st_size > 10_000


def test_from_the_rail_map_to_a_link_debugger_and_a_job(served: Served, shots: Path) -> None:
    """Click a flagged leaf on the rail map, then a flagged link of it, copy its fix; then open a job."""
    need_chromium()
    from playwright.sync_api import sync_playwright

    url = served.url
    with sync_playwright() as p:
        browser = launch(p)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
            page = context.new_page()
            errors = logged_in(page, url, served.token)

            page.click("text=Rail map")
            page.wait_for_url(f"{url}/railmap")
            cells = page.locator("#railmap a.leaf")
            assert cells.count() >= 8
            page.screenshot(path=str(shots / "railmap.png"), full_page=True)
            flagged = page.locator('#railmap a.leaf[data-severity="critical"]').first
            leaf = flagged.get_attribute("data-leaf")
            flagged.click()
            page.wait_for_url(f"**/leaves/{leaf}")
            assert page.locator("h1").inner_text() == leaf
            assert page.locator("#leaf-hosts a").count() >= 1
            page.screenshot(path=str(shots / "leaf.png"), full_page=True)

            flagged_links = page.locator('tr.link:not([data-severity="ok"]) a.debug')
            hrefs = [flagged_links.nth(i).get_attribute("href") for i in range(min(flagged_links.count(), 8))]
            flagged_links.first.click()
            page.wait_for_url("**/links/link*")
            assert page.locator("#link-id").inner_text().startswith("link:")
            assert page.locator("#compare tbody tr").count() >= 5
            assert page.locator("section.finding").count() >= 1
            # a flagged link's findings may all be about its host (PCIe, ACS): some link of the leaf shows a
            # finding with evidence from its ends, each captioned with the end it came from
            seen = []
            for href in hrefs:
                if href and href != hrefs[0]:
                    page.goto(url + href if href.startswith("/") else href)
                captions = page.locator(".evidence .caption").all_inner_texts()
                seen.append(captions)
                if any("end)" in c for c in captions):
                    break
            assert any("end)" in c for c in seen[-1]), seen
            copy = page.locator("button.copy").first
            assert copy.is_visible()  # the script ran (under the page's CSP) and showed it
            commands = page.locator(f"#{copy.get_attribute('data-copy')}").inner_text()
            copy.click()
            page.wait_for_selector('button.copy[data-copied="true"]')
            assert page.evaluate("navigator.clipboard.readText()") == commands
            page.screenshot(path=str(shots / "link.png"), full_page=True)

            page.click("text=Jobs")
            page.wait_for_url(f"{url}/jobs")
            page.locator("#jobs a").first.click()
            page.wait_for_url("**/jobs/job*")
            verdict = page.locator("#verdict")
            assert verdict.get_attribute("data-verdict") in ("likely", "possible", "unlikely")
            assert "Is it the network?" in verdict.inner_text()
            page.screenshot(path=str(shots / "job.png"), full_page=True)
            if page.locator("#job-findings a.debug").count():
                page.locator("#job-findings a.debug").first.click()
                page.wait_for_url("**/links/link*")
            assert errors == []
        finally:
            browser.close()
    for name in ("railmap", "leaf", "link", "job"):
        assert (shots / f"{name}.png").stat().st_size > 10_000
