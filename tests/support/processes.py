"""Starting and stopping the real servers tests run (unifab serve, Prometheus, the demo): wait until one answers,
stop one for sure. One place, so every test fails the same clear way when a server does not come up."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable

import httpx
import pytest


def wait_until_ready(
    proc: subprocess.Popen[str] | subprocess.Popen[bytes],
    url: str,
    what: str,
    timeout_s: float,
    log: Callable[[], str] = lambda: "",
) -> None:
    """Poll ``url`` until it answers 200; fail the test (with the end of ``log()``) when ``proc`` exits first or
    ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}: {log()[-2000:]}", pytrace=False)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not answer {url} in {timeout_s:.0f} s: {log()[-2000:]}", pytrace=False)
        time.sleep(0.3)


def stop(proc: subprocess.Popen[str] | subprocess.Popen[bytes], timeout_s: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout_s``."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
