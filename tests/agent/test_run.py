"""``unifab agent run`` against a real ``unifab serve`` (a subprocess over SQLite in the test's directory):
changed-only pushes, the heartbeat, a controller that is down and comes up (replayed in order), a refused and
a rotated token, an unreadable host file, a full spool disk, an unprivileged user, and bad settings."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from tests.agent.conftest import Controller, agent_env, bump, events, make_root, run_agent, start_agent
from tests.serve.conftest import free_port


def wait_for(what: str, check: object, log: Path | None = None, seconds: float = 40) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log is not None else ""
            pytest.fail(f"timed out waiting for {what}\n{tail}", pytrace=False)
        time.sleep(0.1)


def args(tmp_path: Path, c: Controller | str, token: Path, *extra: str, host: str = "gpu001") -> list[str]:
    url = c if isinstance(c, str) else c.url
    return [
        "--controller", url, "--token-file", str(token), "--spool-dir", str(tmp_path / f"spool-{host}"),
        "--root", str(tmp_path / f"root-{host}"), "--hostname", host, *extra,
    ]  # fmt: skip


@pytest.fixture
def token_file(tmp_path: Path, controller: Controller) -> Path:
    path = tmp_path / "token"
    path.write_text(controller.tokens["gpu001"] + "\n")
    return path


def test_pushes_only_what_changed_and_heartbeats(tmp_path: Path, controller: Controller, token_file: Path) -> None:
    controller.start()
    root = make_root(tmp_path / "root-gpu001", nics=2)
    first = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))
    assert first.returncode == 0, first.stderr
    pushed = events(first.stderr, "pushed")
    assert len(pushed) == 1 and pushed[0]["result"] == "stored"
    sid = pushed[0]["id"]
    assert sid.startswith("gpu001-00000001-") and len(sid) == len("gpu001-00000001-") + 12
    assert controller.get(f"/api/v1/snapshots/{sid}", "viewer")["devices"] == ["host:gpu001"]
    again = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))
    assert again.returncode == 0, again.stderr
    assert events(again.stderr, "unchanged") and not events(again.stderr, "pushed")
    assert events(again.stderr, "heartbeat")  # even when nothing changed
    bump(root, 41)
    third = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))
    assert [e["id"][:16] for e in events(third.stderr, "pushed")] == ["gpu001-00000002-"]
    agents = controller.all("/api/v1/agents", "viewer")
    assert [(a["host"], a["spool_depth"], a["dropped"]) for a in agents] == [("gpu001", 0, 0)]
    assert agents[0]["last_snapshot"] == events(third.stderr, "pushed")[0]["id"]
    device = controller.get("/api/v1/devices/host:gpu001", "viewer")
    assert device["snapshot_id"] == agents[0]["last_snapshot"] and device["agent"]["version"]
    model = device["model"]
    assert sorted(model["nics"]) == ["eth0", "eth1"]
    assert model["nics"]["eth0"]["counters"]["rdma:np_cnp_sent"] == 41


def test_a_down_controller_is_spooled_then_replayed_in_order(
    tmp_path: Path, controller: Controller, token_file: Path
) -> None:
    root = make_root(tmp_path / "root-gpu001")
    log = tmp_path / "agent.log"
    proc = start_agent(tmp_path, log, *args(tmp_path, controller, token_file, "--interval", "0.3"))
    try:
        wait_for("the first snapshot", lambda: len(events(log.read_text(), "spooled")) == 1, log)
        for value in range(1, 5):
            bump(root, value)
            wait_for(f"{value + 1} spooled", lambda n=value + 1: len(events(log.read_text(), "spooled")) == n, log)
        text = log.read_text()
        assert "cannot reach http://127.0.0.1:" in text and "connection refused" in text
        assert not events(text, "pushed")
        controller.start()
        spooled = [e["id"] for e in events(log.read_text(), "spooled")]
        wait_for(
            "the spool replayed", lambda: {e["id"] for e in events(log.read_text(), "pushed")} >= set(spooled), log
        )
        pushed = [e["id"] for e in events(log.read_text(), "pushed")]
        assert pushed[: len(spooled)] == spooled  # oldest first
        audit = [e["target"] for e in reversed(controller.all("/api/v1/audit")) if e["action"] == "ingest"]
        assert audit[: len(spooled)] == spooled
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert events(log.read_text(), "stopped")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_refused_token_is_reported_and_a_rotated_one_is_used(
    tmp_path: Path, controller: Controller, token_file: Path
) -> None:
    controller.start()
    make_root(tmp_path / "root-gpu001")
    token_file.write_text("ufb_000000000000_not-a-token\n")
    log = tmp_path / "agent.log"
    proc = start_agent(tmp_path, log, *args(tmp_path, controller, token_file, "--interval", "0.3"))
    try:
        wait_for("a 401", lambda: "does not accept the token (401)" in log.read_text(), log)
        failed = [e for e in events(log.read_text(), "push_failed") if e.get("kind") == "token"]
        assert failed and failed[0]["level"] == "error" and "/api/v1/snapshots" in failed[0]["reason"]
        assert proc.poll() is None  # keeps running
        other = controller.tokens["gpu001"]
        _, scoped_elsewhere = controller.new_token("agent", hosts=["gpu002"])
        token_file.write_text(scoped_elsewhere + "\n")
        wait_for("a 403", lambda: "may not send this (403)" in log.read_text(), log)
        token_file.write_text(other + "\n")  # rotated: read again on the next attempt
        wait_for("the push", lambda: events(log.read_text(), "pushed"), log)
        # the heartbeat follows the push in the same cycle: wait for it rather than race the agent's next write
        wait_for("the heartbeat", lambda: events(log.read_text(), "heartbeat"), log)
        assert controller.all("/api/v1/agents", "viewer")[0]["host"] == "gpu001"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def test_an_unreadable_host_file_and_a_bad_url_are_one_line_each(tmp_path: Path, token_file: Path) -> None:
    root = make_root(tmp_path / "root-gpu001")
    (root / "sys/class/net/eth0/mtu").unlink()
    (root / "sys/class/net/eth0/mtu").mkdir()  # unreadable as a file, even for root
    done = run_agent(tmp_path, "--once", *args(tmp_path, "http://no-such-host.invalid:8080", token_file))
    assert done.returncode == 1, done.stderr  # spooled, not delivered
    missing = [e for e in events(done.stderr, "host_file_missing") if e["path"] == "gpu001/sys/class/net/eth0/mtu"]
    assert len(missing) == 1 and missing[0]["level"] == "warning" and "cannot read" in missing[0]["reason"]
    failed = events(done.stderr, "push_failed")
    assert len(failed) == 1 and "cannot reach http://no-such-host.invalid:8080/api/v1/snapshots" in failed[0]["reason"]
    assert len(events(done.stderr, "spooled")) == 1 and "Traceback" not in done.stderr


@pytest.fixture
def tiny_spool(tmp_path: Path) -> object:
    mount = tmp_path / "spool-gpu001"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {made.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_spool_disk_keeps_the_old_spool_and_keeps_running(
    tmp_path: Path, controller: Controller, token_file: Path, tiny_spool: Path
) -> None:
    root = make_root(tmp_path / "root-gpu001")
    first = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))  # controller down: spooled
    assert first.returncode == 1 and len(events(first.stderr, "spooled")) == 1, first.stderr
    kept = sorted(p.name for p in tiny_spool.glob("snap-*.ufs"))
    fd = os.open(tiny_spool / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    bump(root, 7)
    second = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))
    assert second.returncode == 1, second.stderr
    # the collect's staging directory is on the spool's disk: the collect is what fails first (else the write)
    failed = events(second.stderr, "collect_failed") + events(second.stderr, "spool_write_failed")
    assert len(failed) == 1 and failed[0]["level"] == "error", second.stderr
    assert "No space left on device" in failed[0]["reason"] and "Traceback" not in second.stderr
    assert sorted(p.name for p in tiny_spool.glob("snap-*.ufs")) == kept
    (tiny_spool / "filler").unlink()
    controller.start()
    third = run_agent(tmp_path, "--once", *args(tmp_path, controller, token_file))
    assert third.returncode == 0, third.stderr  # the old one first, then the new one
    assert [e["id"][:16] for e in events(third.stderr, "pushed")] == ["gpu001-00000001-", "gpu001-00000002-"]


def test_runs_as_an_unprivileged_user(
    tmp_path: Path, controller: Controller, token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop in a child that dropped to uid/gid 65534 (the interpreter's own files stay root's, so the
    child imports first): it needs only its spool directory, the token file and what it collects."""
    import unifab.agent.run as agent_run
    import unifab.collect.host_live
    import unifab.collect.staging
    import unifab.report.text
    import unifab.serve.client
    import unifab.serve.ingest
    from unifab.agent.config import AgentConfig

    assert unifab.collect.host_live and unifab.collect.staging and unifab.report.text and unifab.serve.ingest
    assert unifab.serve.client
    controller.start()
    home = tmp_path / "nobody"
    home.mkdir()
    make_root(home / "root")
    spool = home / "spool"
    spool.mkdir()
    os.chown(spool, 65534, 65534)
    token_file.chmod(0o644)
    for path in (tmp_path, *tmp_path.parents):
        if path == Path("/") or path == Path("/dev/shm"):
            break
        path.chmod(path.stat().st_mode | 0o011)  # traversable, not listable
    config = AgentConfig(
        controller=controller.url, token_file=token_file, spool_dir=spool, root=home / "root", hostname="gpu001"
    )
    monkeypatch.setenv("PATH", agent_env(tmp_path)["PATH"])  # the child inherits it; the session's is restored
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, run one cycle, exit with its code
        code = 3
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            log = (spool / "agent.log").open("w")
            code = agent_run.Agent(config, log=agent_run.EventLog(log)).run(once=True)
            log.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    text = (spool / "agent.log").read_text()
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "uid=65534" in text and events(text, "pushed")
    assert {p.stat().st_uid for p in spool.glob("*")} == {65534}
    assert httpx.get(f"{controller.url}/healthz").status_code == 200


@pytest.mark.parametrize(
    ("config", "flags", "needle"),
    [
        ("controller: http://x\ntoken_file: /t\nintervall: 5\n", [], "agent.yaml:3: unknown key 'intervall'"),
        ("controller: http://x\ntoken_file: /t\ninterval: -1\n", [], "agent.yaml:3: interval must be a positive"),
        ("controller: ftp://x\ntoken_file: /t\n", [], "agent.yaml:1: controller must be an http:// or https://"),
        ("token_file: /t\n", [], "controller: required"),
        ("controller: http://x\n", [], "token_file: required"),
        ("controller: http://x\ntoken_file: /t\nspool_max_bytes: lots\n", [], "spool_max_bytes must be a positive"),
        ("controller: http://x\ntoken_file: /t\nspool_max_snapshots: 0\n", [], "spool_max_snapshots must be a pos"),
        ("controller: http://x\ntoken_file: /t\nhostname: ../x\n", [], "hostname must be a plain host name"),
        ("- a\n- b\n", [], "expected a mapping of controller, token_file"),
        ("controller: [\n", [], "agent.yaml:2: YAML"),
        ("controller: http://x\ntoken_file: /t\n", ["--interval", "0"], "--interval: interval must be a positive"),
    ],
)
def test_bad_settings_exit_2_naming_the_key(tmp_path: Path, config: str, flags: list[str], needle: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(config)
    done = run_agent(tmp_path, "--config", str(path), "--spool-dir", str(tmp_path / "s"), *flags)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("unifab: error: ") and needle in lines[0], done.stderr


def test_a_config_file_with_every_key_and_flags_over_it(
    tmp_path: Path, controller: Controller, token_file: Path
) -> None:
    controller.start()
    make_root(tmp_path / "root-gpu001")
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"controller: http://127.0.0.1:{free_port()}\ntoken_file: {token_file}\ninterval: 30\n"
        f"spool_dir: {tmp_path / 'spool-gpu001'}\nspool_max_bytes: 16M\nspool_max_snapshots: 5\n"
        f"root: {tmp_path / 'root-gpu001'}\nhostname: gpu001\ncommand_timeout: 5\n"
    )
    done = run_agent(tmp_path, "--config", str(path), "--controller", controller.url, "--once")
    assert done.returncode == 0, done.stderr
    started = events(done.stderr, "started")[0]
    assert (started["controller"], started["interval"], started["host"]) == (controller.url, "30", "gpu001")
    assert events(done.stderr, "pushed")
