"""``unifab demo --serve``: one command from nothing to a populated single pane, Ctrl-C stops it (exit 0)."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from pathlib import Path

import httpx
from processes import wait_until_ready
from tests.serve.conftest import UNIFAB, free_port

TOKEN_LINE = re.compile(r"Viewer token \(paste it into the login form\): (ufb_\S+)")


def test_demo_serve_shows_a_populated_pane_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    out = tmp_path / "demo"
    log = tmp_path / "demo.log"
    lines: list[str] = []
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*UNIFAB, "demo", "--gpus", "64", "--out", str(out), "--quiet", "--serve", "--port", str(port)],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        try:
            wait_until_ready(proc, f"{url}/healthz", "unifab demo --serve", 300, log.read_text)
            printed = "".join(lines)
            assert f"Serving the demo: {url}/" in printed, printed
            found = TOKEN_LINE.search(printed)
            assert found is not None, printed
            auth = {"Authorization": f"Bearer {found.group(1)}"}
            page = httpx.get(f"{url}/", headers=auth, timeout=30)
            assert page.status_code == 200 and 'id="open-count"' in page.text
            summary = httpx.get(f"{url}/api/v1/summary", headers=auth, timeout=30).json()
            assert summary["devices"]["host"] == 8 and summary["findings"]["open"] > 0
            assert httpx.get(f"{url}/").status_code == 401  # the token is needed
            proc.send_signal(signal.SIGINT)  # Ctrl-C
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=10)
    assert code == 0, log.read_text()
    assert (out / "serve.db").is_file() and "unifab demo: stopped" in log.read_text()
