"""``unifab check --push`` and ``unifab collect --push`` against a real ``unifab serve`` (uvicorn, SQLite).

Also the token scopes and revocation end to end: an agent token limited to gpu001 may send hosts/gpu001
only, and a revoked token is refused from the next request on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.serve.conftest import UNIFAB, Process, free_port, host_part

from unifab.serve.service import Server, Settings


class Served:
    def __init__(self, proc: Process, tokens: dict[str, str]) -> None:
        self.proc, self.url, self.tokens = proc, proc.url, tokens

    def summary(self) -> dict[str, object]:
        auth = {"Authorization": f"Bearer {self.tokens['viewer']}"}
        doc: dict[str, object] = httpx.get(f"{self.url}/api/v1/summary", headers=auth).raise_for_status().json()
        return doc


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("push")
    db = str(work / "serve.db")
    server = Server(Settings(db=db))
    tokens = {role: server.create_token(role, role, "test").token for role in ("agent", "viewer", "admin")}
    made = server.create_token("agent", "gpu001 only", "test", hosts=["gpu001"])
    tokens["gpu001"] = made.token
    server.close()
    port = free_port()
    proc = Process(["serve", "--db", db, "--port", str(port), "--max-upload-mb", "1"], work / "server.log", port)
    try:
        proc.wait_healthy()
        yield Served(proc, tokens)
    finally:
        proc.stop()


def unifab(*args: str, token: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "UNIFAB_TOKEN"}
    if token is not None:
        env["UNIFAB_TOKEN"] = token
    return subprocess.run([*UNIFAB, *args], capture_output=True, text=True, env=env, timeout=300, check=False, cwd=cwd)


def test_check_push_stores_the_bundle(
    served: Served, small_twin: Path, tmp_path: Path, twin_counts: dict[str, int]
) -> None:
    proc = unifab("check", str(small_twin), "--push", served.url, "--quiet", token=served.tokens["agent"])
    assert proc.returncode == 1, proc.stderr  # the twin has error findings: check's own exit code stands
    assert f"pushed {small_twin} to {served.url}: snapshot sha256:" in proc.stderr
    summary = served.summary()
    assert summary["devices"] == twin_counts
    # the same bundle again, with the token from a file: the same snapshot, nothing stored twice
    token_file = tmp_path / "token"
    token_file.write_text(served.tokens["agent"] + "\n")
    again = unifab("check", str(small_twin), "--push", f"{served.url}/", "--token-file", str(token_file), "--quiet")
    assert again.returncode == 1 and "(already stored)" in again.stderr, again.stderr


@pytest.mark.parametrize(
    ("token", "needle"),
    [
        ("ufb_000000000000_nope", "does not accept the token (401)"),
        ("viewer", "may not send this (403): role 'viewer' may not do this"),
        ("gpu001", "may not send this (403): fabric.yaml: this token may only send hosts/gpu001"),
    ],
)
def test_refused_pushes_exit_2_with_one_line(served: Served, small_twin: Path, token: str, needle: str) -> None:
    proc = unifab("check", str(small_twin), "--push", served.url, "--quiet", token=served.tokens.get(token, token))
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("unifab: error: ") and needle in last, proc.stderr


def test_a_too_large_push_is_413(served: Served, small_twin: Path, tmp_path: Path) -> None:
    big = tmp_path / "big"
    for rel, body in host_part(small_twin, "gpu001").items():
        (big / rel).parent.mkdir(parents=True, exist_ok=True)
        (big / rel).write_bytes(body)
    (big / "hosts/gpu001/cmd/dmesg.txt").write_bytes(os.urandom(2 * 1024 * 1024))  # does not compress
    proc = unifab("check", str(big), "--push", served.url, "--quiet", token=served.tokens["agent"])
    assert proc.returncode == 2 and "too large for the server (413)" in proc.stderr, proc.stderr


def test_no_server_no_token_bad_url(small_twin: Path, tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    proc = unifab("check", str(small_twin), "--push", closed, "--quiet", token="ufb_000000000000_x")
    assert proc.returncode == 2 and f"cannot reach {closed}/api/v1/snapshots: connection refused" in proc.stderr
    proc = unifab("check", str(small_twin), "--push", closed, "--quiet")
    assert proc.returncode == 2 and "--push needs a token: set UNIFAB_TOKEN" in proc.stderr
    assert proc.stdout == ""  # the token is read before any work
    proc = unifab("check", str(small_twin), "--push", "ftp://x", "--quiet", token="t")
    assert proc.returncode == 2 and "expected an http:// or https:// URL" in proc.stderr
    proc = unifab("check", str(small_twin), "--push", closed, "--token-file", str(tmp_path / "none"), "--quiet")
    assert proc.returncode == 2 and "cannot read the token" in proc.stderr


def test_an_agent_token_limited_to_its_host(served: Served, small_twin: Path, tar_of: object) -> None:
    from tests.serve.conftest import make_tar

    auth = {"Authorization": f"Bearer {served.tokens['gpu001']}"}
    url = f"{served.url}/api/v1/snapshots"
    own = httpx.post(url, content=make_tar(host_part(small_twin, "gpu001")), headers=auth, timeout=60)
    assert own.status_code in (200, 201), own.text
    for files in (
        host_part(small_twin, "gpu002"),
        {**host_part(small_twin, "gpu001"), "fabric.yaml": b"x: 1\n"},
        {"switches/leaf01/sonic/config_db.json": b"{}"},
    ):
        r = httpx.post(url, content=make_tar(files), headers=auth, timeout=60)
        assert r.status_code == 403 and "this token may only send hosts/gpu001" in r.json()["detail"], r.text
    # it is still an agent: it cannot read
    assert httpx.get(f"{served.url}/api/v1/summary", headers=auth).status_code == 403


def test_revoking_a_token(served: Served, tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    made = unifab("serve", "token", "create", "--role", "viewer", "--db", str(db))
    token = made.stdout.strip()
    token_id = token.split("_")[1]
    server = Server(Settings(db=str(db)))
    try:
        assert server.authenticate(token) is not None
        proc = unifab("serve", "token", "revoke", token_id, "--db", str(db))
        assert proc.returncode == 0 and f"token {token_id} revoked" in proc.stderr, proc.stderr
        assert server.authenticate(token) is None  # this process had it cached: still refused at once
        again = unifab("serve", "token", "revoke", token_id, "--db", str(db))
        assert again.returncode == 2 and f"no live token {token_id!r}" in again.stderr
        assert [e["action"] for e in server.store.audit_log().items][:2] == ["token.revoke", "token.create"]
    finally:
        server.close()
    # over the API, on the running server
    admin = {"Authorization": f"Bearer {served.tokens['admin']}"}
    r = httpx.post(f"{served.url}/api/v1/tokens", json={"role": "viewer", "name": "tmp"}, headers=admin)
    new = r.json()
    viewer = {"Authorization": f"Bearer {new['token']}"}
    assert httpx.get(f"{served.url}/api/v1/summary", headers=viewer).status_code == 200
    assert httpx.delete(f"{served.url}/api/v1/tokens/{new['id']}", headers=admin).status_code == 204
    assert httpx.get(f"{served.url}/api/v1/summary", headers=viewer).status_code == 401
    assert httpx.delete(f"{served.url}/api/v1/tokens/{new['id']}", headers=admin).status_code == 404
    listed = {t["id"]: t for t in httpx.get(f"{served.url}/api/v1/tokens", headers=admin).json()}
    assert listed[new["id"]]["revoked_at"] and "hash" not in listed[new["id"]]
    assert any(t["hosts"] == ["gpu001"] for t in listed.values())


def test_collect_push_sends_what_it_collected(served: Served, samples: Path, tmp_path: Path) -> None:
    from fake_eapi import PASSWORD, USER, make_handler, serve

    for port in serve(make_handler(samples)):
        inventory = tmp_path / "inventory.yaml"
        inventory.write_text(
            f"""\
defaults:
  timeout_s: 3
devices:
  - {{name: spine01, os: eos, address: 127.0.0.1, port: {port}, scheme: http, username_env: U, password_env: P}}
  - {{name: spine09, os: eos, address: 127.0.0.1, port: {free_port()}, scheme: http, username_env: U, password_env: P}}
"""
        )
        env = {**os.environ, "U": USER, "P": PASSWORD, "UNIFAB_TOKEN": served.tokens["agent"]}
        out = tmp_path / "b-live"
        args = ["collect", "--inventory", str(inventory), "--out", str(out), "--push", served.url, "--quiet"]
        proc = subprocess.run([*UNIFAB, *args], capture_output=True, text=True, env=env, timeout=300, check=False)
        assert proc.returncode == 1, proc.stderr  # spine09 failed: collect's own exit code stands
        assert f"pushed {out} to {served.url}" in proc.stderr, proc.stderr
    viewer = {"Authorization": f"Bearer {served.tokens['viewer']}"}
    spine = httpx.get(f"{served.url}/api/v1/devices/switch:spine01", headers=viewer).json()
    assert spine["os"] == "eos" and spine["model"]["name"] == "spine01"
    missing = httpx.get(f"{served.url}/api/v1/devices/switch:spine09", headers=viewer)
    assert missing.status_code == 404  # what failed to collect was not sent
