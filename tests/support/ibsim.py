"""A private InfiniBand fabric for the tests: the real ``ibsim`` simulator, ``opensm`` and infiniband-diags.

:func:`ibsim_fabric` writes the NETFILE into the test's temp dir and starts ``ibsim -s NETFILE`` with its own
``IBSIM_SOCKNAME``: ibsim and the ``libumad2sim.so`` preload talk over *abstract* unix sockets named
``<IBSIM_SOCKNAME>:ctl`` / ``:outN`` (default ``ibsim``), so a unique name per fabric keeps parallel tests apart
and leaves nothing on disk. (``IBSIM_SERVER_NAME``/``IBSIM_SERVER_PORT`` select ibsim's TCP mode, ``-r``, which
is not used.) ``SIM_HOST`` picks the node the tools attach to (default: the first one of the NETFILE).

``IbSim.run(argv)`` runs a tool under the preload with a timeout and returns its stdout; ``sweep()`` runs
``opensm -o`` once so LIDs are assigned (perfquery, ibqueryerrors need them); ``start_sm()`` keeps an opensm
running (sminfo asks the live SM) and ``start_standby_sm(node, priority)`` a second one on another node, which
finds the master and stays standby; ``console(cmd)`` types a command at ibsim's console (its stdin):
``Unlink "S-leaf-r1"[2]``, ``PerformanceSet "S-leaf-r1"[2] PortCounters.SymbolErrorCounter=65535``.

Missing tools: ``pytest.skip``, or ``pytest.fail`` when ``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PRELOAD", "TOOLS", "IbSim", "ibsim_fabric", "net_ids", "require_tools"]

PRELOAD = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
TOOLS = (
    "ibsim",
    "opensm",
    "ibnetdiscover",
    "iblinkinfo",
    "perfquery",
    "sminfo",
    "ibqueryerrors",
    "ibswitches",
    "ibhosts",
    "saquery",
)
START_TIMEOUT_S = 10.0
TOOL_TIMEOUT_S = 30.0
CRASH_RETRIES = 2
_NODE = re.compile(r'^(?:Switch|Hca)\s+\d+\s+"([^"]+)"\s+#\s+"([^"]*)"', re.MULTILINE)


def net_ids(netfile: str) -> dict[str, str]:
    """NodeDescription -> the node's name in a NETFILE (what ibsim's console commands and SIM_HOST take)."""
    return {desc: net_id for net_id, desc in _NODE.findall(netfile)}


def require_tools() -> None:
    """Skip (or fail under ``UNIFAB_REQUIRE_SERVICES=1``) unless ibsim, opensm, the diags and the preload exist."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if not PRELOAD.is_file():
        missing.append(str(PRELOAD))
    if missing:
        reason = (
            f"InfiniBand simulator tools missing: {', '.join(missing)} "
            "(apt-get install ibsim-utils infiniband-diags opensm)"
        )
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} (required: UNIFAB_REQUIRE_SERVICES=1)", pytrace=False)
        pytest.skip(reason)


class IbSim:
    """One running simulator. Use through :func:`ibsim_fabric`."""

    def __init__(self, workdir: Path, netfile: Path, attach: str | None) -> None:
        self.workdir = workdir
        self.netfile = netfile
        self.sockname = f"unifab-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.attach = attach
        self.log = workdir / "ibsim.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.sm: subprocess.Popen[bytes] | None = None
        self.standbys: list[subprocess.Popen[bytes]] = []
        (workdir / "osm").mkdir(exist_ok=True)

    # --- environment ------------------------------------------------------------------------------------------
    def env(self, attach: str | None = None) -> dict[str, str]:
        """The preload's environment, attached to ``attach`` (a NETFILE node name), else the fabric's own node."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IBSIM_", "SIM_"))}
        env.update(
            LD_PRELOAD=str(PRELOAD),
            IBSIM_SOCKNAME=self.sockname,
            OSM_CACHE_DIR=str(self.workdir / "osm"),
            OSM_TMP_DIR=str(self.workdir / "osm"),
        )
        if attach or self.attach:
            env["SIM_HOST"] = attach or self.attach or ""
        return env

    def _log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    # --- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["IBSIM_SOCKNAME"] = self.sockname
        argv = ["ibsim", "-s", str(self.netfile)]
        if shutil.which("stdbuf"):  # the console prompt and replies, unbuffered, so console() can see them
            argv = ["stdbuf", "-o0", "-e0", *argv]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Network simulator ready" not in self._log_tail():
            if self.proc.poll() is not None:
                pytest.fail(f"ibsim exited with {self.proc.returncode}:\n{self._log_tail()}", pytrace=False)
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"ibsim not ready in {START_TIMEOUT_S} s:\n{self._log_tail()}", pytrace=False)
            time.sleep(0.05)

    def stop(self) -> None:
        for standby in self.standbys:
            _stop(standby)
        self.standbys.clear()
        if self.sm is not None:
            _stop(self.sm)
            self.sm = None
        if self.proc is not None:
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.write(b"Quit\n")
                self.proc.stdin.close()
            _stop(self.proc)
            self.proc = None

    # --- tools ------------------------------------------------------------------------------------------------
    def run(
        self, argv: list[str], timeout: float = TOOL_TIMEOUT_S, ok: tuple[int, ...] = (0,), *, with_stderr: bool = False
    ) -> str:
        """``argv`` under the preload; its stdout (and stderr in its place with ``with_stderr``, as ``2>&1`` keeps
        it). A timeout or an exit code outside ``ok`` fails the test.

        A tool killed by a signal is run again, up to :data:`CRASH_RETRIES` times: ibqueryerrors has been seen to
        die of SIGSEGV inside the umad2sim preload under load (about one run in eight at 256 GPUs, after the SM
        reported SUBNET UP), a fault of the simulator's shim, not of what the tool prints."""
        for _attempt in range(CRASH_RETRIES + 1):
            try:
                done = subprocess.run(
                    argv,
                    check=False,
                    env=self.env(),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT if with_stderr else subprocess.PIPE,
                    timeout=timeout,
                    cwd=self.workdir,
                )
            except subprocess.TimeoutExpired:
                pytest.fail(f"{' '.join(argv)} did not finish in {timeout} s", pytrace=False)
            if done.returncode >= 0:
                break
        if done.returncode not in ok:
            said = (done.stderr or done.stdout).decode(errors="replace")[-2000:]
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}:\n{said}", pytrace=False)
        return done.stdout.decode()

    def sweep(self) -> None:
        """One opensm sweep (``-o``): LIDs assigned, ports Active."""
        self.run(["opensm", "-o", "-f", str(self.workdir / "osm" / "opensm-once.log")], timeout=60)

    def start_sm(self, priority: int | None = None, config: Path | None = None) -> None:
        """A running opensm (sminfo needs a live SM) whose first sweep is done; stopped with the fabric.

        ``SMINFO_MASTER`` comes as soon as opensm enters the master state, before its first sweep has
        finished and the SA answers path queries; ``ibqueryerrors`` run in that window has been seen to
        crash (SIGSEGV) under load, so the wait also needs opensm's ``SUBNET UP`` (``-d2`` flushes its log per message).
        """
        log = self.workdir / "osm" / "opensm.log"
        with (self.workdir / "osm" / "opensm.out").open("wb") as out:
            self.sm = subprocess.Popen(
                ["opensm", "-d2", "-f", str(log), *_sm_options(priority, config)],
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            done = subprocess.run(
                ["sminfo"], check=False, env=self.env(), capture_output=True, timeout=10, cwd=self.workdir
            )
            if done.returncode == 0 and b"SMINFO_MASTER" in done.stdout and self._subnet_up():
                return
            if self.sm.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"opensm did not become master: {log.read_text(errors='replace')[-2000:]}", pytrace=False)
            time.sleep(0.2)

    def start_standby_sm(self, attach: str, priority: int | None = None, config: Path | None = None) -> None:
        """A second opensm, on node ``attach`` at ``priority`` (or as its ``config`` file says), once it has found
        the master and entered STANDBY (call :meth:`start_sm` first; an SM that would win the election takes over
        instead, and this fails)."""
        workdir = self.workdir / f"osm-{len(self.standbys) + 1}"
        workdir.mkdir()
        env = self.env(attach) | {"OSM_CACHE_DIR": str(workdir), "OSM_TMP_DIR": str(workdir)}
        out_path = workdir / "opensm.out"
        with out_path.open("wb") as out:
            proc = subprocess.Popen(
                ["opensm", "-d2", "-f", str(workdir / "opensm.log"), *_sm_options(priority, config)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.standbys.append(proc)
        deadline = time.monotonic() + START_TIMEOUT_S
        while b"Entering STANDBY state" not in out_path.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline or b"Entering MASTER" in out_path.read_bytes():
                pytest.fail(f"opensm on {attach} did not become standby: {out_path.read_text()[-2000:]}", pytrace=False)
            time.sleep(0.1)

    def _subnet_up(self) -> bool:
        osm = self.workdir / "osm"
        return any(
            b"SUBNET UP" in path.read_bytes() for path in (osm / "opensm.out", osm / "opensm.log") if path.is_file()
        )

    def console(self, command: str) -> None:
        """Type ``command`` at ibsim's console and wait until ibsim has read it (its next ``sim>`` prompt)."""
        assert self.proc is not None and self.proc.stdin is not None
        size = self.log.stat().st_size
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            text = self.log.read_bytes()[size:].decode(errors="replace")
            if "sim> " in text:
                return
            time.sleep(0.02)
        pytest.fail(f"ibsim did not take {command!r}:\n{self._log_tail()}", pytrace=False)


def _sm_options(priority: int | None, config: Path | None) -> list[str]:
    """opensm's ``-p`` (priority) and ``-F`` (config file) options, for those given."""
    return [*(["-p", str(priority)] if priority is not None else []), *(["-F", str(config)] if config else [])]


def _stop(proc: subprocess.Popen[bytes], timeout_s: float = 5) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def ibsim_fabric(workdir: Path, netfile_text: str, attach: str | None = None) -> Iterator[IbSim]:
    """A running ibsim over ``netfile_text`` (written to ``workdir/fabric.net``), stopped on exit."""
    require_tools()
    workdir.mkdir(parents=True, exist_ok=True)
    netfile = workdir / "fabric.net"
    netfile.write_text(netfile_text)
    sim = IbSim(workdir, netfile, attach)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()
