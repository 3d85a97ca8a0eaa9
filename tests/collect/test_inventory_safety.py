"""unifab collect with broken, hostile and interrupted devices: a real redis-server, a real local eAPI server,
raw hostile servers on loopback (tests/collect/conftest.py) and real ``unifab collect`` processes killed with
SIGKILL. What must hold: one device never stops the others, a failed re-collect keeps the previous data and
``check`` reports it stale, a device re-collected as another OS loses its old OS directory, a kill leaves the
previous device directory or the new complete one, and a bad ``--out`` is one error line with exit 2.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import yaml
from fake_eapi import PASSWORD, USER, EapiHandler, make_handler, serve
from nobody import python_as_nobody
from redis_service import RedisServer
from redis_sonic import LLDP, SONIC, database_config_text, flat_rows, load, open_test_dbs
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.collect.inventory import collect_inventory, load_inventory

ENV = {"EOS_USER": USER, "EOS_PASS": PASSWORD}
REPO = Path(__file__).resolve().parents[2]


# --- fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture
def dbs(redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    yield from open_test_dbs(redis_server)


@pytest.fixture
def sonic_db_config(samples: Path, tmp_path: Path, redis_server: RedisServer, dbs: dict[str, redis.Redis]) -> Path:
    """The Dell Z9264 CONFIG_DB and the LLDP sample in the private Redis; the database_config that finds them."""
    doc = orjson.loads((samples / SONIC / "sonic_config_db_dellz9264_qos_full.json").read_bytes())
    load(dbs["CONFIG_DB"], flat_rows(doc))
    load(dbs["APPL_DB"], orjson.loads((samples / SONIC / LLDP).read_bytes()))
    config = tmp_path / "database_config.json"
    config.write_text(database_config_text(redis_server.port))
    return config


@pytest.fixture
def eos_handler(samples: Path) -> type[EapiHandler]:
    return make_handler(samples)


@pytest.fixture
def eos_port(eos_handler: type[EapiHandler]) -> Iterator[int]:
    yield from serve(eos_handler)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _eos(name: str, port: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "os": "eos",
        "address": "127.0.0.1",
        "port": port,
        "scheme": "http",
        "username_env": "EOS_USER",
        "password_env": "EOS_PASS",
        **extra,
    }


def _sonic(name: str, db_config: Path, **extra: Any) -> dict[str, Any]:
    return {"name": name, "os": "sonic", "address": "127.0.0.1", "database_config": str(db_config), **extra}


def _inventory(path: Path, *devices: dict[str, Any], timeout_s: float = 3) -> Path:
    path.write_text(yaml.safe_dump({"defaults": {"timeout_s": timeout_s}, "devices": list(devices)}))
    return path


def _collect(inventory: Path, out: Path, workers: int = 4) -> Any:
    return collect_inventory(load_inventory(inventory.read_text(), str(inventory)), out, workers=workers, env=ENV)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _manifest(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = orjson.loads((out / "collect-manifest.json").read_bytes())
    return doc


# --- a failed re-collect: the data is kept and reported stale ---------------------------------------------


def test_failed_recollect_keeps_the_data_and_check_reports_it_stale(eos_port: int, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    runner = CliRunner(env=ENV)
    good = _inventory(tmp_path / "good.yaml", _eos("spine01", eos_port))
    first = runner.invoke(app, ["collect", "--inventory", str(good), "--out", str(out), "-f", "json", "-q"])
    assert first.exit_code == 0, first.output
    collected_at = orjson.loads((out / "switches/spine01/collect.json").read_bytes())["finished"]
    data = _tree(out / "switches/spine01/eos")
    assert _manifest(out)["devices"]["spine01"]["result"] == "ok"

    down = _inventory(tmp_path / "down.yaml", _eos("spine01", _closed_port()))
    second = runner.invoke(app, ["collect", "--inventory", str(down), "--out", str(out), "-f", "json", "-q"])
    assert second.exit_code == 1
    failed = json.loads(second.stdout)["failed"]
    assert [(f["name"], f["kind"], f["stale"], f["data_from"]) for f in failed] == [
        ("spine01", "unreachable", True, collected_at)
    ]
    assert _tree(out / "switches/spine01/eos") == data  # the previous data, untouched
    entry = _manifest(out)["devices"]["spine01"]
    assert (entry["result"], entry["stale"], entry["data_from"], entry["kind"]) == (
        "failed",
        True,
        collected_at,
        "unreachable",
    )
    assert "cannot connect" in entry["reason"]

    table = CliRunner().invoke(app, ["check", str(out), "-q"])
    assert table.exit_code == 1
    assert "INPUT-STALE" in table.stdout and "No findings" not in table.stdout
    doc = json.loads(CliRunner().invoke(app, ["check", str(out), "-q", "-f", "json"]).stdout)
    stale = [f for f in doc["findings"] if f["check"] == "INPUT-STALE"]
    assert len(stale) == 1 and stale[0]["subject"]["device"] == "spine01"
    assert stale[0]["evidence"]["data_from"] == collected_at and collected_at in stale[0]["message"]

    # The device comes back: collected again, current again.
    assert runner.invoke(app, ["collect", "--inventory", str(good), "--out", str(out), "-q"]).exit_code == 0
    assert not [f for f in load_bundle(out).input_findings if f.check == "INPUT-STALE"]
    assert _manifest(out)["devices"]["spine01"]["result"] == "ok"


def test_a_device_that_never_collected_leaves_nothing_but_its_manifest_entry(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    summary = _collect(_inventory(tmp_path / "inv.yaml", _eos("spine02", _closed_port())), out)
    assert [(r.name, r.ok, r.stale) for r in summary.results] == [("spine02", False, False)]
    assert not (out / "switches/spine02").exists()
    assert _manifest(out)["devices"]["spine02"]["stale"] is False


# --- re-collected as another OS ---------------------------------------------------------------------------


def test_recollect_as_another_os_removes_the_old_os_directory(
    sonic_db_config: Path, eos_port: int, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    assert _collect(_inventory(tmp_path / "a.yaml", _sonic("sw1", sonic_db_config)), out).failed == ()
    assert load_bundle(out).switches["sw1"].os == "sonic"
    (out / "switches/sw1/README").write_text("the operator's note\n")
    assert _collect(_inventory(tmp_path / "b.yaml", _eos("sw1", eos_port)), out).failed == ()
    device = out / "switches/sw1"
    assert sorted(p.name for p in device.iterdir()) == ["README", "collect.json", "eos"]
    assert load_bundle(out).switches["sw1"].os == "eos"
    assert _manifest(out)["devices"]["sw1"]["os"] == "eos"


# --- malformed content from a real Redis --------------------------------------------------------------------


def test_a_bad_redis_row_is_read_in_part_not_the_devices_failure(
    sonic_db_config: Path, dbs: dict[str, redis.Redis], tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    inventory = _inventory(tmp_path / "inv.yaml", _sonic("leaf01", sonic_db_config))
    assert _collect(inventory, out).failed == ()
    lldp_before = {link.id for link in load_bundle(out).links if "lldp" in link.sources}

    dbs["APPL_DB"].hset("LLDP_ENTRY_TABLE:Ethernet0", mapping={"lldp_rem_port_id_subtype": "five"})
    (result,) = _collect(inventory, out).results
    assert (result.ok, result.stale) == (True, False)
    fabric = load_bundle(out)
    (partial,) = [f for f in fabric.input_findings if f.check == "INPUT-PARTIAL"]
    assert partial.evidence["key"] == "LLDP_ENTRY_TABLE:Ethernet0" and "lldp_rem_port_id_subtype" in partial.message
    lldp_after = {link.id for link in fabric.links if "lldp" in link.sources}
    assert len(lldp_after) == len(lldp_before) - 1 and lldp_after < lldp_before  # only Ethernet0's neighbour is lost
    assert "leaf01" in fabric.switches
    before = _tree(out / "switches/leaf01/sonic")

    for client in dbs.values():
        client.flushdb()
    dbs["CONFIG_DB"].set("CONFIG_DB_INITIALIZED", "1")  # a string, no table row: an empty configuration
    (result,) = _collect(inventory, out).results
    assert not result.ok and "CONFIG_DB holds no table rows" in (result.reason or "")
    assert _tree(out / "switches/leaf01/sonic") == before
    stale = [f for f in load_bundle(out).input_findings if f.check == "INPUT-STALE"]
    assert len(stale) == 1 and "CONFIG_DB holds no table rows" in stale[0].message


# --- hostile devices never stop the others -------------------------------------------------------------------


def test_hostile_devices_fail_alone(hostile: Any, eos_port: int, tmp_path: Path) -> None:
    inventory = _inventory(
        tmp_path / "inv.yaml",
        _eos("good", eos_port),
        _eos("drip", hostile.start("drip_body"), timeout_s=10, deadline_s=1.5),
        _eos("headers", hostile.start("drip_headers"), timeout_s=10, deadline_s=1.5),
        _eos("gzip", hostile.start("bad_gzip")),
        _eos("huge", hostile.start("announce_2gib")),
        _eos("endless", hostile.start("stream_2gib_chunked"), max_bytes=2**20),
        {"name": "resp", "os": "sonic", "address": "127.0.0.1", "port": hostile.start("not_resp")},
    )
    out = tmp_path / "bundle"
    started = time.monotonic()
    result = CliRunner(env=ENV).invoke(
        app, ["collect", "--inventory", str(inventory), "--out", str(out), "-f", "json", "-q", "--workers", "7"]
    )
    assert time.monotonic() - started < 10
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert (doc["devices"], doc["collected"]) == (7, 1)
    why = {f["name"]: (f["kind"], f["reason"]) for f in doc["failed"]}
    assert why["drip"][0] == "unreachable" and "1.5 s deadline" in why["drip"][1]
    assert why["headers"][0] == "unreachable" and "deadline" in why["headers"][1]
    assert why["gzip"][0] == "error" and "cannot be decoded" in why["gzip"][1]
    assert why["huge"][0] == "error" and "announced 2,147,483,648 bytes" in why["huge"][1]
    assert why["endless"][0] == "error" and "sent more than 1,048,576 bytes" in why["endless"][1]
    assert why["resp"][0] == "unsupported" and "not a Redis reply" in why["resp"][1]
    assert sorted(p.name for p in (out / "switches").iterdir()) == ["good"]
    assert (out / "switches/good/eos/running-config.txt").is_file()


# --- --out that cannot be written ---------------------------------------------------------------------------------


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("unifab: error:"), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_out_is_a_file_or_unwritable(eos_port: int, tmp_path: Path) -> None:
    inventory = _inventory(tmp_path / "inv.yaml", _eos("spine01", eos_port))
    a_file = tmp_path / "file"
    a_file.write_text("keep me\n")
    runner = CliRunner(env=ENV)
    for out, needle in (
        (a_file, "exists and is not a directory"),
        (a_file / "sub", "cannot write to --out"),
        (Path("/sys/unifab-test-out"), "cannot write to --out"),
    ):
        if out.is_relative_to("/sys") and not Path("/sys/kernel").is_dir():
            continue  # no sysfs here
        result = runner.invoke(app, ["collect", "--inventory", str(inventory), "--out", str(out), "-q"])
        assert result.exit_code == 2, result.output
        assert needle in _one_error_line(result.stderr)
    assert a_file.read_text() == "keep me\n"


def test_unwritable_out_as_an_unprivileged_user(eos_port: int, tmp_path: Path) -> None:
    """As ``nobody``, an --out inside a directory only root may write: one error line, exit 2."""
    probe = _inventory(tmp_path / "probe.yaml", _eos("spine01", eos_port))
    probe_argv = ["collect", "--inventory", str(probe), "--out", str(tmp_path / "probe-out"), "-q"]
    with python_as_nobody(probe_argv, env={**os.environ, **ENV}) as (prefix, shared):
        inventory = _inventory(shared / "inv.yaml", _eos("spine01", eos_port))
        inventory.chmod(0o644)
        (shared / "ro").mkdir(mode=0o755)
        argv = [*prefix, "-m", "unifab.cli", "collect", "--inventory", str(inventory)]
        argv += ["--out", str(shared / "ro" / "b"), "-q"]
        proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **ENV}, timeout=60, check=False)
        if os.geteuid() == 0:  # as nobody, root's directory is not writable
            assert proc.returncode == 2, proc.stderr
            assert "Permission denied" in _one_error_line(proc.stderr)


# --- SIGKILL of a real `unifab collect` ------------------------------------------------------------------------


def _start_collect(inventory: Path, out: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "unifab", "collect", "--inventory", str(inventory), "--out", str(out), "-q"]
    return subprocess.Popen(
        argv, env={**os.environ, **ENV}, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _wait_for(proc: subprocess.Popen[bytes], found: Any, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        hit = found()
        if hit is not None:
            return Path(hit)
        assert proc.poll() is None, f"collect exited ({proc.returncode}) before the moment to kill it"
        time.sleep(0.001)
    proc.kill()
    raise AssertionError("the moment to kill never came")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL


def test_sigkill_while_a_device_is_read_leaves_the_previous_bundle(hostile: Any, eos_port: int, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    assert _collect(_inventory(tmp_path / "good.yaml", _eos("spine01", eos_port)), out).failed == ()
    before = _tree(out / "switches")
    manifest = (out / "collect-manifest.json").read_bytes()
    slow = _inventory(tmp_path / "slow.yaml", _eos("spine01", hostile.start("drip_body"), timeout_s=30))
    proc = _start_collect(slow, out)
    staging = out / ".unifab-staging"
    _wait_for(proc, lambda: next((p for p in staging.glob("spine01.*") if p.is_dir()), None))
    time.sleep(0.5)  # reading the dripping reply
    _kill(proc)
    assert _tree(out / "switches") == before
    assert (out / "collect-manifest.json").read_bytes() == manifest
    assert not [f for f in load_bundle(out).input_findings if f.check.startswith("INPUT-")]


def test_sigkill_mid_write_leaves_the_previous_device_or_the_new_complete_one(
    eos_handler: type[EapiHandler], eos_port: int, tmp_path: Path
) -> None:
    """The new running-config is 40 MB, so writing the staged files takes a while; the kill comes as soon as
    the first staged file appears (here: a truncated temporary file of a few MB, deep in the stage)."""
    out = tmp_path / "bundle"
    inventory = _inventory(tmp_path / "inv.yaml", _eos("spine01", eos_port, timeout_s=30))
    assert _collect(inventory, out).failed == ()
    old = _tree(out / "switches/spine01/eos")
    big = "! " + "x" * 78 + "\n"
    new_config = eos_handler.replies["show running-config"] + big * 500_000
    eos_handler.replies = {**eos_handler.replies, "show running-config": new_config}  # the eos_port server's
    staging = out / ".unifab-staging"
    proc = _start_collect(inventory, out)
    written = _wait_for(proc, lambda: next(iter(staging.glob("spine01.*/switches/spine01/eos/*")), None))
    _kill(proc)
    stage = written.parents[3]
    now = _tree(out / "switches/spine01/eos")
    if now != old:  # the kill came after the rename: then the new one is there, complete
        assert now["running-config.txt"].decode() == new_config
        assert sorted(now) == sorted(old)
    assert not any(p.name.endswith(".tmp") for p in (out / "switches").rglob("*"))
    assert stage.exists()  # the killed run's stage is left behind, outside switches/
    assert not [f for f in load_bundle(out).input_findings if f.check.startswith("INPUT-")]
    # The next run clears the stage and installs the new data.
    assert _collect(inventory, out).failed == ()
    assert not stage.exists()
    assert (out / "switches/spine01/eos/running-config.txt").read_text() == new_config
