"""A private ``slurmctld`` for the tests: its own process, free ports on 127.0.0.1, its own state directory and
``slurm.conf`` (``SLURM_CONF`` points ``scontrol`` at it), nodes that resolve to localhost. No slurmd is started:
a controller alone keeps node states and drain reasons. ``auth/none`` (Slurm 22.05 ships it), so no munge is
needed; the tests never talk to a controller they did not start.

Without ``slurmctld`` or ``scontrol`` on PATH :func:`private_slurmctld` skips, or fails when
``UNIFAB_REQUIRE_SERVICES=1``; a controller that is installed but does not answer ``scontrol ping`` is always a
failure, with its log.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0

__all__ = ["SlurmCtld", "private_slurmctld"]


@dataclass(frozen=True, slots=True)
class SlurmCtld:
    conf: Path  # its slurm.conf: give it as SLURM_CONF to scontrol
    log: Path
    nodes: tuple[str, ...]

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def scontrol(self, *args: str) -> str:
        proc = subprocess.run(
            ["scontrol", *args], env=self.env, capture_output=True, text=True, timeout=30, check=False
        )
        if proc.returncode != 0:
            pytest.fail(f"scontrol {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}", pytrace=False)
        return proc.stdout


def _free_ports() -> int:
    """A port whose successor is free too (slurmctld's and the unused slurmd's)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise AssertionError("no two adjacent free ports")


def _missing(reason: str) -> None:
    if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (required: UNIFAB_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(reason)


def _conf(workdir: Path, port: int, nodes: str, extra: tuple[str, ...] = ()) -> str:
    return "\n".join(
        [
            "ClusterName=unifabtest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={port}",
            f"SlurmdPort={port + 1}",
            "AuthType=auth/none",
            "CredType=cred/none",
            "SlurmUser=root",
            f"StateSaveLocation={workdir / 'state'}",
            f"SlurmctldPidFile={workdir / 'slurmctld.pid'}",
            f"SlurmctldLogFile={workdir / 'slurmctld.log'}",
            f"SlurmdSpoolDir={workdir / 'spool'}",
            "ProctrackType=proctrack/linuxproc",
            "SchedulerType=sched/builtin",
            "SelectType=select/linear",
            f"NodeName={nodes} NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=1 State=UNKNOWN",
            f"PartitionName=gpu Nodes={nodes} Default=YES State=UP",
            *extra,
            "",
        ]
    )


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def private_slurmctld(workdir: Path, nodes: str = "gpu[001-002]", extra: tuple[str, ...] = ()) -> Iterator[SlurmCtld]:
    """Start ``slurmctld -D -i`` with a fresh state in ``workdir``; stop it (SIGTERM, then SIGKILL) on exit.

    ``extra``: more ``slurm.conf`` lines (``TopologyPlugin=topology/tree`` reads ``workdir/topology.conf``).
    """
    binary, scontrol = shutil.which("slurmctld"), shutil.which("scontrol")
    if binary is None or scontrol is None:
        _missing("slurmctld/scontrol are not on PATH (apt-get install slurmctld slurm-client)")
        raise AssertionError("unreachable")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "state").mkdir(exist_ok=True)
    conf = workdir / "slurm.conf"
    conf.write_text(_conf(workdir, _free_ports(), nodes, extra))
    log = workdir / "slurmctld.log"
    listed = subprocess.run(
        [scontrol, "show", "hostnames", nodes], capture_output=True, text=True, timeout=30, check=False
    )
    server = SlurmCtld(conf, log, tuple(listed.stdout.split()))
    with (workdir / "slurmctld.out").open("wb") as out:
        proc = subprocess.Popen(
            [binary, "-D", "-i"], env=server.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"slurmctld exited with {proc.returncode}:\n{_tail(log)}", pytrace=False)
            ping = subprocess.run(
                [scontrol, "ping"], env=server.env, capture_output=True, text=True, timeout=30, check=False
            )
            if "is UP" in ping.stdout:
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"slurmctld did not answer scontrol ping in {START_TIMEOUT_S} s:\n{_tail(log)}", pytrace=False
                )
            time.sleep(0.2)
        yield server
    finally:
        _stop(proc)
