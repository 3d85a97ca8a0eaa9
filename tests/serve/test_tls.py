"""``unifab serve --tls-cert --tls-key``: the real server over HTTPS with a certificate made here (openssl), and
one clear exit-2 line for every bad pair of files, before the store is opened."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from tests.serve.conftest import UNIFAB, Process, free_port, token_for


def openssl() -> str:
    found = shutil.which("openssl")
    if found is None:
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail("openssl not found")
        pytest.skip("openssl not found")
    return found


def make_pair(where: Path, name: str, cn: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its unencrypted key."""
    cert, key = where / f"{name}-cert.pem", where / f"{name}-key.pem"
    subprocess.run(
        [
            *(openssl(), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={cn}"),
            *("-addext", f"subjectAltName=IP:{cn}", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return cert, key


def serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*UNIFAB, "serve", "--db", str(cwd / "never.db"), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_the_server_answers_https_verified_against_its_certificate(tmp_path: Path) -> None:
    cert, key = make_pair(tmp_path, "good")
    db = tmp_path / "serve.db"
    token = token_for(db)
    port = free_port()
    proc = Process(
        ["serve", "--db", str(db), "--port", str(port), "--tls-cert", str(cert), "--tls-key", str(key)],
        tmp_path / "server.log",
        port,
    )
    url = f"https://127.0.0.1:{port}"
    trusted = ssl.create_default_context(cafile=str(cert))
    try:
        deadline = time.monotonic() + 180
        while True:  # the wait of conftest.Process speaks plain HTTP; this one verifies the certificate
            assert proc.proc.poll() is None, proc.log()
            try:
                if httpx.get(f"{url}/healthz", verify=trusted, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, proc.log()
            time.sleep(0.3)
        health = httpx.get(f"{url}/healthz", verify=trusted)
        assert health.json()["status"] == "ok"
        assert health.http_version.startswith("HTTP/1")
        summary = httpx.get(f"{url}/api/v1/summary", headers={"Authorization": f"Bearer {token}"}, verify=trusted)
        assert summary.status_code == 200 and summary.json()["findings"]["open"] == 0
        # the login cookie is Secure over HTTPS
        login = httpx.post(f"{url}/login", data={"token": token}, verify=trusted)
        assert login.status_code == 303 and "secure" in login.headers["set-cookie"].lower()
        # a client that does not trust the certificate refuses it: the TLS is real, not a plain socket
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"{url}/healthz", verify=ssl.create_default_context())
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)  # no plain HTTP on the TLS port
        assert "https://127.0.0.1:" in proc.log()
    finally:
        assert proc.stop() in (0, -15)


def test_bad_tls_files_are_one_clear_error(tmp_path: Path) -> None:
    cert, key = make_pair(tmp_path, "a")
    _other_cert, other_key = make_pair(tmp_path, "b")
    junk = tmp_path / "junk.pem"
    junk.write_text("not pem at all\n")
    cases = {
        ("--tls-cert", str(cert)): "--tls-cert and --tls-key go together",
        ("--tls-key", str(key)): "--tls-cert and --tls-key go together",
        (
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(tmp_path / "none.pem"),
        ): f"--tls-key {tmp_path / 'none.pem'}: no such file",
        ("--tls-cert", str(junk), "--tls-key", str(key)): f"--tls-cert {junk}: not a PEM certificate",
        ("--tls-cert", str(key), "--tls-key", str(key)): f"--tls-cert {key}: not a PEM certificate",
        ("--tls-cert", str(cert), "--tls-key", str(junk)): f"--tls-key {junk}: not a PEM private key",
        ("--tls-cert", str(cert), "--tls-key", str(other_key)): "not the private key of the certificate",
    }
    for args, message in cases.items():
        done = serve(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("unifab: error: ") and message in lines[0], (args, lines)
    assert not (tmp_path / "never.db").exists()  # refused before the store was opened
