"""Durability: a real ``unifab serve`` is SIGKILLed and restarted 3 times while 3 ``unifab agent run`` processes
push hosts whose files change all the time; one agent has a spool of 2 snapshots, so it drops some.

Afterwards, every snapshot the agents produced (their ``spooled`` log lines) is either stored by the server
exactly once (its audit log has one ``ingest`` per stored id, in each host's order) or was reported dropped
(a ``dropped`` line, counted in the next pushes' ``dropped_before`` and in the heartbeat's total); never both,
never neither.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.agent.conftest import Controller, bump, events, make_root, start_agent

HOSTS = ("gpu001", "gpu002", "gpu003")
SMALL_SPOOL = "gpu003"
KILLS = 3


def test_nothing_lost_nothing_twice_across_server_crashes(tmp_path: Path, controller: Controller) -> None:
    token = tmp_path / "token"
    token.write_text(controller.tokens["agent"] + "\n")
    roots = {h: make_root(tmp_path / f"root-{h}") for h in HOSTS}
    logs = {h: tmp_path / f"agent-{h}.log" for h in HOSTS}
    controller.start()
    stop_bumping = threading.Event()

    def bumper() -> None:
        value = 0
        while not stop_bumping.wait(0.6):
            value += 1
            for root in roots.values():
                bump(root, value)

    agents: dict[str, subprocess.Popen[bytes]] = {}
    thread = threading.Thread(target=bumper, daemon=True)
    started = time.monotonic()
    startups: list[float] = []
    try:
        for host in HOSTS:
            extra = ["--spool-max-snapshots", "2"] if host == SMALL_SPOOL else []
            agents[host] = start_agent(
                tmp_path,
                logs[host],
                "--controller", controller.url, "--token-file", str(token), "--interval", "0.2",
                "--spool-dir", str(tmp_path / f"spool-{host}"), "--root", str(roots[host]), "--hostname", host,
                *extra,
            )  # fmt: skip
        thread.start()
        for _ in range(KILLS):
            time.sleep(1.5)
            controller.kill()
            time.sleep(1.0)
            began = time.monotonic()
            controller.start()
            startups.append(time.monotonic() - began)
        stop_bumping.set()
        thread.join()

        def settled(host: str) -> bool:
            text = logs[host].read_text()
            done = {e["id"] for e in events(text, "pushed")} | {e["id"] for e in events(text, "dropped")}
            return {e["id"] for e in events(text, "spooled")} <= done

        deadline = time.monotonic() + 40
        while not all(settled(h) for h in HOSTS):
            if time.monotonic() > deadline:
                pytest.fail("the agents did not drain their spools:\n" + logs[HOSTS[0]].read_text()[-3000:])
            time.sleep(0.2)
        for host, proc in agents.items():
            assert proc.poll() is None, f"agent {host} exited: {logs[host].read_text()[-2000:]}"
            proc.send_signal(signal.SIGTERM)
        for host, proc in agents.items():
            assert proc.wait(timeout=30) == 0, logs[host].read_text()[-2000:]
    finally:
        stop_bumping.set()
        for proc in agents.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert controller.starts == KILLS + 1
    audit = list(reversed(controller.all("/api/v1/audit")))  # oldest first
    ingested = [e for e in audit if e["action"] == "ingest"]
    stored = [e["target"] for e in ingested]
    assert len(stored) == len(set(stored)), [i for i, n in Counter(stored).items() if n > 1]
    total_dropped = 0
    for host in HOSTS:
        text = logs[host].read_text()
        produced = [e["id"] for e in events(text, "spooled")]
        dropped = [e["id"] for e in events(text, "dropped")]
        mine = [s for s in stored if s.startswith(f"{host}-")]
        assert len(produced) >= 5, f"{host} produced only {len(produced)} snapshots"
        assert produced == sorted(produced) and len(set(produced)) == len(produced)  # ids ordered by sequence
        assert not set(dropped) & set(mine), "a snapshot both stored and reported dropped"
        assert set(mine) | set(dropped) == set(produced), "a produced snapshot neither stored nor reported dropped"
        assert mine == sorted(mine), "replayed out of order"
        notes = sum(e["detail"].get("dropped_before", 0) for e in ingested if e["target"].startswith(f"{host}-"))
        assert notes == len(dropped), f"{host}: {len(dropped)} dropped, the pushes said {notes}"
        device = controller.get(f"/api/v1/devices/host:{host}", "viewer")
        assert device["snapshot_id"] == produced[-1]
        agent = next(a for a in controller.all("/api/v1/agents", "viewer") if a["host"] == host)
        assert agent["dropped"] == len(dropped) and agent["spool_depth"] == 0
        assert agent["last_snapshot"] == produced[-1]
        if host == SMALL_SPOOL:
            assert dropped, "the small spool never filled: the test did not exercise the bound"
        total_dropped += len(dropped)
    replays = sum(
        len([e for e in events(logs[h].read_text(), "pushed") if e["result"] == "already stored"]) for h in HOSTS
    )
    print(f"stored {len(stored)}, dropped {total_dropped}, answered 'already stored' {replays}, "
          f"{time.monotonic() - started:.1f} s, server starts {[round(s, 1) for s in startups]}")  # fmt: skip
