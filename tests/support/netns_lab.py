"""Real LLDP between test "devices": network namespaces joined by veth cables, a private lldpd in each.

Each namespace is ``ufab-<pid>-<n>`` (unique per test process), its lldpd has its own control socket and pid file
in a directory every user can traverse (``lldpcli`` is setuid ``_lldpd`` and must reach the socket). A switch
namespace announces what a switch port does: its hostname, the port ID as the interface name (subtype ifname)
and a port description. :meth:`NetnsLab.wait_for` polls, bounded, until every expected neighbour is seen.
Everything (daemons by pid, namespaces, which take their veth ends with them) is torn down on exit, also when
the test fails. No ``ip netns`` or lldpd here: skip, or fail under ``UNIFAB_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nobody import shared_dir

__all__ = ["Namespace", "NetnsLab", "netns_lab", "require_netns"]

_COUNTER = itertools.count()
IFNAMSIZ = 15


def _unusable(why: str) -> None:
    if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"network namespaces with lldpd are required (UNIFAB_REQUIRE_SERVICES=1): {why}", pytrace=False)
    pytest.skip(why)


def require_netns() -> None:
    """Skip (or fail under UNIFAB_REQUIRE_SERVICES=1) unless ``ip netns``, lldpd and lldpcli are usable here."""
    for tool in ("ip", "lldpd", "lldpcli"):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            _unusable(f"{tool} not installed (apt-get install iproute2 lldpd)")
    if os.geteuid() != 0:
        _unusable("network namespaces need root")
    probe = f"ufab-{os.getpid()}-probe{next(_COUNTER)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False, timeout=30)
    if made.returncode != 0:
        _unusable(f"ip netns add failed: {made.stderr.strip()}")
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False, timeout=30)


@dataclass
class Namespace:
    name: str  # the netns name
    hostname: str  # what its lldpd announces
    dir: Path  # its lldpd's socket and pid file
    switch: bool
    interfaces: list[str] = field(default_factory=list)

    @property
    def socket(self) -> Path:
        return self.dir / "ctl"


class NetnsLab:
    """Namespaces, veth cables between them, one lldpd per namespace; :meth:`close` undoes all of it."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.namespaces: list[Namespace] = []
        self.pids: list[int] = []

    def run(self, *argv: str, ns: Namespace | None = None) -> str:
        cmd = [*(["ip", "netns", "exec", ns.name] if ns else []), *argv]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout

    def namespace(self, hostname: str, switch: bool = False) -> Namespace:
        name = f"ufab-{os.getpid()}-{next(_COUNTER)}"
        directory = self.work / name
        directory.mkdir(mode=0o755)
        directory.chmod(0o755)
        self.run("ip", "netns", "add", name)
        ns = Namespace(name, hostname, directory, switch)
        self.namespaces.append(ns)
        self.run("ip", "link", "set", "lo", "up", ns=ns)
        return ns

    def cable(self, a: Namespace, a_if: str, b: Namespace, b_if: str) -> None:
        """A veth pair, one end in each namespace (created there directly: no name is ever taken on this host)."""
        assert len(a_if) <= IFNAMSIZ and len(b_if) <= IFNAMSIZ, (a_if, b_if)
        self.run("ip", "link", "add", a_if, "netns", a.name, "type", "veth", "peer", "name", b_if, "netns", b.name)
        for ns, ifname in ((a, a_if), (b, b_if)):
            self.run("ip", "-n", ns.name, "link", "set", ifname, "up")
            ns.interfaces.append(ifname)

    def start(self) -> None:
        """Start every namespace's lldpd on its cabled interfaces, configured before its first frame.

        lldpd runs ``lldpcli`` on its start-up configuration (``-O``) before it resumes, so no frame ever
        carries the machine's own host name (a neighbour learnt from such a frame would linger for its TTL).
        """
        for ns in self.namespaces:
            lines = [f"configure system hostname {ns.hostname}", "configure lldp tx-interval 1"]
            if ns.switch:
                lines += [
                    'configure system description "SONiC Software Version: SONiC.test"',
                    "configure system capabilities enabled bridge,router",
                    "configure lldp portidsubtype ifname",
                    *(f'configure ports {i} lldp portdescription "{i} (test)"' for i in ns.interfaces),
                ]
            conf = ns.dir / "lldpd.conf"
            conf.write_text("\n".join(lines) + "\n")
            conf.chmod(0o644)
            pattern = ",".join(ns.interfaces)
            self.run("lldpd", "-u", str(ns.socket), "-p", str(ns.dir / "pid"), "-O", str(conf), "-I", pattern, ns=ns)
            self.pids.append(self._pid(ns))

    def _pid(self, ns: Namespace) -> int:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                return int((ns.dir / "pid").read_text().strip())
            time.sleep(0.1)
        raise AssertionError(f"lldpd in {ns.name} wrote no pid file")

    def neighbors(self, ns: Namespace) -> set[tuple[str, str, str]]:
        """``(local interface, neighbour's system name, neighbour's port id)`` as this namespace's lldpd sees them."""
        out = self.run("lldpcli", "-u", str(ns.socket), "-f", "json0", "show", "neighbors", ns=ns)
        seen: set[tuple[str, str, str]] = set()
        for block in json.loads(out).get("lldp", []):
            for iface in block.get("interface", []):
                names = [n.get("value", "") for c in iface.get("chassis", []) for n in c.get("name", [])]
                ports = [p.get("value", "") for port in iface.get("port", []) for p in port.get("id", [])]
                for name, port in itertools.product(names, ports):
                    seen.add((iface.get("name", ""), name, port))
        return seen

    def wait_for(self, ns: Namespace, expected: set[tuple[str, str, str]], timeout_s: float = 45) -> None:
        """Poll until ``ns`` sees at least ``expected`` (see :meth:`neighbors`); fail saying what it saw."""
        deadline = time.monotonic() + timeout_s
        seen: set[tuple[str, str, str]] = set()
        while time.monotonic() < deadline:
            seen = self.neighbors(ns)
            if expected <= seen:
                return
            time.sleep(0.5)
        pytest.fail(
            f"{ns.name} ({ns.hostname}) saw {sorted(seen)} after {timeout_s:.0f} s, expected {sorted(expected)}"
        )

    def close(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for pid in self.pids:
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns.name], capture_output=True, check=False, timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def netns_lab() -> Iterator[NetnsLab]:
    """A :class:`NetnsLab` in a fresh directory every user can traverse; everything removed at the end."""
    require_netns()
    work = shared_dir()
    if work is None:
        _unusable("no directory every user can traverse for lldpd's control sockets")
        raise AssertionError("unreachable")
    work.chmod(0o755)
    lab = NetnsLab(work)
    try:
        yield lab
    finally:
        lab.close()
        shutil.rmtree(work, ignore_errors=True)
