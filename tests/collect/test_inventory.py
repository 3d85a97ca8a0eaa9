"""unifab collect: an inventory of a SONiC switch (real Redis), an EOS switch (real local eAPI server) and
an unreachable one; the good ones land in the bundle, the bad one is reported, nothing stops."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from fake_eapi import PASSWORD, USER, make_handler, serve
from redis_service import RedisServer
from redis_sonic import SONIC, database_config_text, flat_rows, load, open_test_dbs
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.collect.inventory import collect_inventory, load_inventory
from unifab.errors import ParseError

ENV = {"EOS_USER": USER, "EOS_PASS": PASSWORD}


@pytest.fixture
def sonic_switch(samples: Path, tmp_path: Path, redis_server: RedisServer) -> Iterator[Path]:
    """The Dell Z9264 CONFIG_DB sample in the private Redis; yields the database_config file that finds it."""
    for by_name in open_test_dbs(redis_server):
        doc = orjson.loads((samples / SONIC / "sonic_config_db_dellz9264_qos_full.json").read_bytes())
        load(by_name["CONFIG_DB"], flat_rows(doc))
        config = tmp_path / "database_config.json"
        config.write_text(database_config_text(redis_server.port))
        yield config


@pytest.fixture
def eos_port(samples: Path) -> Iterator[int]:
    yield from serve(make_handler(samples))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _inventory(tmp_path: Path, db_config: Path, eos_port: int) -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text(
        f"""\
defaults:
  timeout_s: 3
devices:
  - name: leaf01
    os: sonic
    address: 127.0.0.1
    database_config: {db_config}
  - name: spine01
    os: eos
    address: 127.0.0.1
    port: {eos_port}
    scheme: http
    username_env: EOS_USER
    password_env: EOS_PASS
  - name: spine02
    os: eos
    address: 127.0.0.1
    port: {_closed_port()}
    scheme: http
    username_env: EOS_USER
    password_env: EOS_PASS
"""
    )
    return path


def test_good_devices_collected_bad_one_reported(sonic_switch: Path, eos_port: int, tmp_path: Path) -> None:
    inventory = load_inventory(_inventory(tmp_path, sonic_switch, eos_port).read_text(), "inventory.yaml")
    seen: list[str] = []
    lock = threading.Lock()

    def progress(result: object) -> None:
        with lock:
            seen.append(result.name)

    summary = collect_inventory(inventory, tmp_path / "bundle", workers=3, env=ENV, progress=progress)
    assert sorted(seen) == ["leaf01", "spine01", "spine02"]
    assert [(r.name, r.ok, r.kind) for r in summary.results] == [
        ("leaf01", True, None),
        ("spine01", True, None),
        ("spine02", False, "unreachable"),
    ]
    assert "spine02" in (summary.failed[0].reason or "")
    bundle = tmp_path / "bundle"
    assert (bundle / "switches/leaf01/sonic/config_db.json").is_file()
    assert (bundle / "switches/spine01/eos/running-config.txt").is_file()
    assert not (bundle / "switches/spine02").exists()  # nothing half-written
    fabric = load_bundle(bundle)
    assert "leaf01" in fabric.switches and len(fabric.switches["leaf01"].ports) == 66


def test_cli_collect_exit_codes_and_json(sonic_switch: Path, eos_port: int, tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, sonic_switch, eos_port)
    runner = CliRunner(env=ENV)
    result = runner.invoke(app, ["collect", "--inventory", str(inventory), "--out", str(tmp_path / "b"), "-f", "json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["devices"] == 3 and doc["collected"] == 2
    assert [f["name"] for f in doc["failed"]] == ["spine02"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("devices: []\n", "[devices]"),
        ("devices:\n  - {name: a, os: junos, address: x}\n", "[devices.0.os]"),
        ("devices:\n  - {name: a, os: eos}\n", "[devices.0.address]"),
        ("devices:\n  - {name: a, os: eos, address: x}\n  - {name: a, os: eos, address: y}\n", "appears twice"),
        ("devices: [\n", "expected YAML"),
    ],
)
def test_bad_inventory_names_the_key(text: str, needle: str) -> None:
    with pytest.raises(ParseError) as exc:
        load_inventory(text, "inventory.yaml")
    assert needle in str(exc.value)


def test_cli_bad_inventory_is_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "inv.yaml"
    bad.write_text("devices:\n  - {name: a, os: junos, address: x}\n")
    result = CliRunner().invoke(app, ["collect", "--inventory", str(bad), "--out", str(tmp_path / "b")])
    assert result.exit_code == 2
    assert "devices.0.os" in result.output
