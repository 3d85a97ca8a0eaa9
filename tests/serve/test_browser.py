"""The real thing end to end: ``unifab serve`` (uvicorn) on a free port over a twin, driven by Chromium.

The token comes from ``unifab serve token create`` on the same store; the browser logs in with it through
the login form, reads the overview, filters the findings, opens a device and logs out. Screenshots are
written to the test's temp directory. No Chromium at /usr/bin/chromium: skip, or fail when
``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from processes import stop, wait_until_ready

CHROMIUM = Path("/usr/bin/chromium")
UNIFAB = [sys.executable, "-m", "unifab.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def need_chromium() -> None:
    if not CHROMIUM.exists():
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{CHROMIUM} not found (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} not found")


class Served:
    def __init__(self, url: str, token: str, db: Path) -> None:
        self.url, self.token, self.db = url, token, db


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, small_twin: Path) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("served")
    db = work / "serve.db"
    made = subprocess.run(
        [*UNIFAB, "serve", "token", "create", "--role", "viewer", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    token = made.stdout.strip()
    port = free_port()
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [*UNIFAB, "serve", "--db", str(db), "--bundle", str(small_twin), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/healthz", "unifab serve", 180, (work / "server.log").read_text)
        yield Served(url, token, db)
    finally:
        stop(proc)
        log.close()


def test_the_served_api_and_headers(served: Served) -> None:
    auth = {"Authorization": f"Bearer {served.token}"}
    summary = httpx.get(f"{served.url}/api/v1/summary", headers=auth).json()
    assert summary["devices"] == {"host": 8, "switch": 16} and summary["findings"]["open"] > 0
    page = httpx.get(f"{served.url}/", headers=auth)
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "style-src 'nonce-" in csp
    assert httpx.get(f"{served.url}/").status_code == 401
    # a viewer may not ingest
    assert httpx.post(f"{served.url}/api/v1/snapshots", content=b"x", headers=auth).status_code == 403


def test_a_person_logs_in_reads_the_overview_and_filters_findings(served: Served, tmp_path: Path) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    auth = {"Authorization": f"Bearer {served.token}"}
    summary = httpx.get(f"{served.url}/api/v1/summary", headers=auth).json()
    critical = summary["findings"]["by_severity"]["critical"]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
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
            page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

            page.click("text=Findings")
            page.select_option("#filter-severity", "critical")
            page.click("#filter-apply")
            page.wait_for_url("**/findings?*severity=critical*")
            rows = page.locator("tr.finding")
            assert rows.count() == critical
            assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.severity)")) == {"critical"}
            page.screenshot(path=str(tmp_path / "findings-critical.png"), full_page=True)

            page.select_option("#filter-severity", "")
            page.fill("#filter-device", "gpu003")
            page.click("#filter-apply")
            page.wait_for_url("**/findings?*device=gpu003*")
            assert page.locator("tr.finding").count() >= 1

            page.goto(f"{served.url}/devices/host:gpu003")
            assert page.locator("h1").inner_text() == "host:gpu003"
            assert page.locator("#nics tbody tr").count() == 8
            page.screenshot(path=str(tmp_path / "device.png"), full_page=True)

            page.click("text=Log out")
            page.wait_for_url("**/login")
            page.goto(f"{served.url}/findings")
            assert page.locator("#token").is_visible()
            # the login page answers 401 on purpose; anything else (a CSP violation, a failed asset) is a bug
            assert [e for e in errors if "status of 401" not in e] == []
        finally:
            browser.close()
    assert (tmp_path / "overview.png").stat().st_size > 10_000
