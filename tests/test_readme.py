"""The README tells the truth: its tour runs as written (on a smaller twin), and the names it uses exist.

Each tour command runs in a shell, in a temp directory, with this virtualenv's ``unifab`` first on PATH.
Three commands reach outside this machine in the README; here they run against local stand-ins: NetBox is
the recorded-reply server of ``tests/support/fake_netbox.py``, the inventory's switches are replaced by
the test's private Redis holding a real SONiC CONFIG_DB sample (the README's own example inventory is
validated separately); ``--watch`` is stopped with Ctrl-C (SIGINT) once it says it is watching, and
``unifab serve`` once it answers ``/healthz`` on a free port.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from fake_netbox import TOKEN, recorded, serve
from processes import wait_until_ready
from redis_service import RedisServer
from redis_sonic import database_config_text, flat_rows, load, open_test_dbs

from unifab.collect.inventory import load_inventory
from unifab.parse.registry import lookup

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GPUS = "64"  # the README's sizes, shrunk for the test


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else len(README)]


def _sh_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)


def tour_commands() -> list[str]:
    """Every command of the tour's code block, without comments."""
    lines = []
    for block in _sh_blocks(_section("A short tour")):
        for raw in block.splitlines():
            line = raw.split("  #")[0].strip() if not raw.lstrip().startswith("#") else ""
            if line:
                lines.append(line)
    return lines


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    return env


def _shrink(command: str) -> str:
    """Twin sizes down to the test's size (the plan template keeps its own numbers: it writes only a CSV)."""
    if command.startswith("unifab twin generate"):
        return re.sub(r"--gpus \d+", f"--gpus {GPUS}", command)
    return command


def test_start_here_has_the_two_commands() -> None:
    blocks = _sh_blocks(_section("Start here"))
    assert [b.strip() for b in blocks] == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && unifab demo",
        "bash scripts/test.sh",
    ]


def test_formats_named_in_the_readme_exist() -> None:
    part = README[README.index("- Formats read") : README.index("- Parser conventions")]
    names = [n for n in re.findall(r"`([a-zA-Z0-9_-]+)`", part) if n not in {"unifab", "parse"}]
    tools = {"niccli", "getqos"}  # the commands named in parentheses next to a format
    unknown = [n for n in names if lookup(n) is None and n not in tools]
    assert len(names) > 40
    assert unknown == []


def test_example_inventory_is_valid() -> None:
    inventory = load_inventory((ROOT / "examples" / "inventory.yaml").read_text(), "examples/inventory.yaml")
    assert {d.os for d in inventory.devices} == {"sonic", "eos"}
    assert all(d.address.startswith("192.0.2.") for d in inventory.devices)  # documentation addresses only


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=True,
        executable="/bin/bash",
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _watch(command: str, cwd: Path) -> None:
    with subprocess.Popen(
        command.split(), cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "watching" in first, first
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0


def _serve(command: str, cwd: Path) -> None:
    """Start the tour's ``unifab serve`` on a free port, wait until it answers, stop it with Ctrl-C."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = command.replace("--port 8080", f"--port {port}").split()
    with subprocess.Popen(argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        wait_until_ready(proc, f"http://127.0.0.1:{port}/healthz", command, 300)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0


def test_the_tour_runs_as_written(tmp_path: Path, private_redis_inventory: Path) -> None:
    commands = tour_commands()
    assert len(commands) >= 15
    (tmp_path / "examples").mkdir()
    shutil.copy(private_redis_inventory, tmp_path / "examples" / "inventory.yaml")
    with serve(recorded("pynetbox_cables.json")) as (netbox_url, _):
        for command in commands:
            if command.endswith("--watch"):
                _watch(command, tmp_path)
                continue
            if command.startswith("unifab serve --bundle"):
                _serve(command, tmp_path)
                continue
            run = _shrink(command).replace("https://netbox.example.net", netbox_url)
            if "--from-netbox" in run:
                run = f"UNIFAB_NETBOX_TOKEN={TOKEN} {run}"
            result = _run(run, tmp_path)
            where = f"{command!r} exited {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
            assert "Traceback" not in result.stderr, where
            # 1 = findings (the twin is broken on purpose) or, for collect, a device not collected
            assert result.returncode in (0, 1), where
            if command in ("unifab check ./b1-fixed", "unifab --version") or command.startswith(("unifab parse",)):
                assert result.returncode == 0, where
    assert (tmp_path / "findings.json").stat().st_size > 0
    assert (tmp_path / "report.html").is_file()
    assert (tmp_path / "rails.svg").is_file()
    assert (tmp_path / "plan" / "cabling.csv").is_file()
    assert (tmp_path / "b-live" / "switches").is_dir()


@pytest.fixture
def private_redis_inventory(samples: Path, tmp_path: Path, redis_server: RedisServer) -> Iterator[Path]:
    """An inventory with one SONiC switch: the test's private Redis holding a real CONFIG_DB sample."""
    for by_name in open_test_dbs(redis_server):
        doc = orjson.loads((samples / "switch" / "sonic" / "sonic_config_db_dellz9264_qos_full.json").read_bytes())
        load(by_name["CONFIG_DB"], flat_rows(doc))
        config = tmp_path / "database_config.json"
        config.write_text(database_config_text(redis_server.port))
        inventory = tmp_path / "inventory.yaml"
        inventory.write_text(
            f"devices:\n  - name: leaf01\n    os: sonic\n    address: 127.0.0.1\n    database_config: {config}\n"
        )
        yield inventory
