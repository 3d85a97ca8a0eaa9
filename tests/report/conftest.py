"""Headless Chromium for the report tests: screenshots and the DOM after the page's scripts ran."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions")


@dataclass(frozen=True, slots=True)
class Chromium:
    binary: str

    def _run(self, *args: str) -> str:
        done = subprocess.run([self.binary, *FLAGS, *args], check=True, capture_output=True, text=True, timeout=120)
        return done.stdout

    def screenshot(self, page: Path, png: Path, size: str = "1200,700") -> None:
        self._run(f"--screenshot={png}", f"--window-size={size}", page.as_uri())

    def dump_dom(self, page: Path) -> str:
        """The serialized DOM once the page loaded and its scripts (and timers within 2 s) ran."""
        return self._run("--virtual-time-budget=2000", "--dump-dom", page.as_uri())


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    """Skipped where Chromium is not installed; a failure when ``UNIFAB_REQUIRE_SERVICES=1`` (CI)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail("chromium is required (UNIFAB_REQUIRE_SERVICES=1): apt-get install chromium")
        pytest.skip("chromium not installed")
    return Chromium(binary)
