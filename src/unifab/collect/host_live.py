"""Live collection on one host: write ``<out>/hosts/<hostname>/`` in the bundle layout :mod:`unifab.collect.host` reads.

What is gathered, for the RDMA NICs only (netdevs of ``/sys/class/infiniband/*/device/net``, ``ibdev2netdev`` or
``ports/1/gid_attrs/ndevs/0``), and every GPU:

* copies of the files read under ``<root>``: ``sys/class/net/<netdev>/{mtu,ecn/...}``, the
  ``sys/class/infiniband/<dev>/`` strings, port files, counters, ``tc/*/traffic_class``,
  ``device/{uevent,numa_node}`` and ``device/net/<netdev>/ifindex`` (whose directory links the device to its netdev);
  ``sys/kernel/config/rdma_cm/<dev>/ports/*/default_roce_{tos,mode}``; ``sys/kernel/config/bnxt_re/<dev>/ports/*/cc/``;
  ``sys/kernel/debug/mlx5/<bdf>/cc_params/`` (upstream mlx5, where the MLNX_OFED ``ecn/`` tree is absent);
  ``sys/module/<driver>/version``; and the NCCL topology file named by ``NCCL_TOPO_FILE``/``NCCL_TOPO_DUMP_FILE``
  (environment or ``<root>/etc/nccl.conf``) as ``cmd/nccl-topo.xml``;
* the stdout of commands (:data:`HOST_COMMANDS`, :func:`nic_commands`), run without a shell, each with a timeout.

Least privilege: the agent runs as a dedicated user where it can. The few commands whose READ needs root are marked
(``Command.root``, the reason in :data:`ROOT_REASONS`); with ``sudo=True`` (``unifab agent collect --sudo``) and not
already root, exactly those run through ``sudo -n --`` with the tool's absolute path (never a prompt: ``-n``, stdin
``/dev/null``), and :func:`sudoers` writes the matching allow-list (``unifab agent sudoers``,
``deploy/sudoers.d/unifab-agent``). A refusal is recorded as missing ("sudo refused (not in the allow-list?)").

Nothing here raises for what the host lacks: a missing tool, a non-zero exit, a timeout, empty output or an
unreadable file becomes an entry of ``collect.json``'s ``missing`` list (``{"path": ..., "reason": ...}``), which the
bundle reader reports as ``INPUT-MISSING``. Only unusable arguments raise :class:`~unifab.errors.UsageError`.
The host directory is written beside the bundle first and moved into place at the end, replacing an older one.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import orjson

from unifab import layout
from unifab.errors import ParseError, UsageError
from unifab.parse.host import ibdev2netdev, lspci
from unifab.render import host_script

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HOSTNAME_CHARS",
    "HOST_COMMANDS",
    "NETDEV_PLACEHOLDER",
    "ROOT_REASONS",
    "SUDO_REFUSED",
    "TOOL_DIRS",
    "CollectReport",
    "Command",
    "CommandResult",
    "CommandRunner",
    "Missing",
    "SubprocessRunner",
    "collect_host",
    "lldp_command",
    "nic_commands",
    "root_commands",
    "sudoers",
]

DEFAULT_TIMEOUT_S = 30.0
HOSTNAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass(frozen=True, slots=True)
class Command:
    path: str  # where its stdout goes, relative to the host directory
    argv: tuple[str, ...]
    empty_ok: bool = False  # an empty stdout is a valid reading (a kernel log without messages)
    fallback: tuple[str, ...] | None = None  # run when argv's tool is not installed
    root: bool = False  # its READ needs root (ROOT_REASONS says why): run through sudo with --sudo


# Why each root-marked tool needs root to READ; the allow-list (sudoers) is built from exactly these commands.
ROOT_REASONS: dict[str, str] = {
    "lspci": "config space past the first 64 bytes (capabilities: LnkCap/LnkSta, ACS, MaxReadReq) needs "
    "CAP_SYS_ADMIN; unprivileged, lspci prints '<access denied>' and still exits 0",
    "dmesg": "the kernel log needs CAP_SYSLOG under kernel.dmesg_restrict=1 (the Debian and Ubuntu default)",
    "lldpcli": "lldpd's control socket is _lldpd:_lldpd 0770 and lldpcli is setuid _lldpd, executable by root "
    "and group adm only (Debian); adding the agent user to group _lldpd instead also works",
    "ethtool": "only -m (module EEPROM: ETHTOOL_GMODULEEEPROM, ETHTOOL_MSG_MODULE_EEPROM_GET) needs "
    "CAP_NET_ADMIN; -S and -a are unprivileged reads",
    "mlnx_qos": "the vendor (MLNX_OFED/DOCA mlx5 tools) documents it as a root tool; the kernel's DCB netlink GET "
    "alone is unprivileged, so a host where it answers unprivileged may drop it",
    "niccli": "Broadcom's tool opens the device directly and refuses to run unprivileged",
    "bnxtqos": "Broadcom's tool opens the device directly and refuses to run unprivileged",
}
# Where the allow-list expects each tool: /usr/bin and /usr/sbin (distributions differ: lspci is /usr/bin on
# Debian, /usr/sbin on RHEL); sudo matches a command run from another path to the same file (/sbin/x on usrmerge).
TOOL_DIRS = ("/usr/bin", "/usr/sbin")
SUDO_REFUSED = "sudo refused (not in the allow-list?)"
_LLDPCLI_ARGS = ("-f", "json0", "show", "neighbors", "details")

HOST_COMMANDS = (
    Command(layout.IBDEV2NETDEV, ("ibdev2netdev",)),
    Command(layout.SHOW_GIDS, ("show_gids",)),
    Command(layout.IBV_DEVINFO, ("ibv_devinfo",)),
    Command(layout.RDMA_STATISTIC, ("rdma", "statistic", "show")),
    Command(layout.LSPCI, ("lspci", "-D", "-nn", "-vvv"), root=True),
    Command(layout.NVIDIA_SMI_Q, ("nvidia-smi", "-q", "-x")),
    Command(layout.NVIDIA_SMI_TOPO, ("nvidia-smi", "topo", "-m")),
    Command(layout.DMESG, ("dmesg",), empty_ok=True, root=True),
    Command(layout.UNAME, ("uname", "-r")),
    Command(layout.LLDPCLI, ("lldpcli", *_LLDPCLI_ARGS), root=True),
    Command(layout.IP_LINK, ("ip", "-d", "link", "show")),
    Command(layout.LSMOD, ("lsmod",), fallback=("cat", "/proc/modules")),
)


def nic_commands(netdev: str, driver: str | None) -> tuple[Command, ...]:
    """Per-NIC commands: the vendor's QoS tool (mlx5 ``mlnx_qos``, Broadcom ``niccli``), ``ethtool -S`` and ``-m``."""
    if driver == "bnxt_en":
        qos = Command(
            f"{layout.BNXT_QOS_DIR}/{netdev}.txt",
            ("niccli", "-dev", netdev, "getqos"),
            fallback=("bnxtqos", f"-dev={netdev}", "get_qos"),
            root=True,
        )
    else:
        qos = Command(f"{layout.MLNX_QOS_DIR}/{netdev}.txt", ("mlnx_qos", "-i", netdev), root=True)
    return (
        qos,
        Command(f"{layout.ETHTOOL_S_DIR}/{netdev}.txt", ("ethtool", "-S", netdev)),
        Command(f"{layout.ETHTOOL_M_DIR}/{netdev}.txt", ("ethtool", "-m", netdev), root=True),
        Command(f"{layout.ETHTOOL_A_DIR}/{netdev}.txt", ("ethtool", "-a", netdev)),
    )


def lldp_command(socket_path: Path | None) -> Command:
    """``lldpcli`` on the default control socket, or with ``-u PATH`` on another lldpd's."""
    if socket_path is None:
        return next(c for c in HOST_COMMANDS if c.path == layout.LLDPCLI)
    return Command(layout.LLDPCLI, ("lldpcli", "-u", str(socket_path), *_LLDPCLI_ARGS), root=True)


@dataclass(frozen=True, slots=True)
class CommandResult:
    returncode: int | None  # None when the command did not run to an exit
    stdout: bytes = b""
    stderr: bytes = b""
    not_found: bool = False
    timed_out: bool = False
    error: str | None = None  # why it could not be started


class CommandRunner(Protocol):
    """Runs one command (no shell) and returns what happened; never raises."""

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult: ...


@dataclass(frozen=True, slots=True)
class SubprocessRunner:
    """The real runner: ``subprocess.run`` with a timeout, ``LC_ALL=C``, commands looked up on ``path``."""

    path: str | None = None  # PATH to search and to give the command; None: this process's PATH

    def which(self, name: str) -> str | None:
        """``name``'s absolute path on ``path``, then in the sbin directories an unprivileged user's PATH lacks
        (``ethtool`` and ``lldpcli`` live in ``/usr/sbin``)."""
        dirs = (self.path if self.path is not None else os.environ.get("PATH", os.defpath)).split(os.pathsep)
        dirs += [d for d in _SBIN if d not in dirs]
        return shutil.which(name, path=os.pathsep.join(dirs))

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        exe = self.which(argv[0])
        if exe is None:
            return CommandResult(None, not_found=True)
        env = dict(os.environ, LC_ALL="C")
        if self.path is not None:
            env["PATH"] = self.path
        try:
            proc = subprocess.run(  # argv from HOST_COMMANDS/nic_commands, no shell
                [exe, *argv[1:]], capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False
            )
        except subprocess.TimeoutExpired as exc:
            return CommandResult(None, _bytes(exc.stdout), _bytes(exc.stderr), timed_out=True)
        except OSError as exc:
            return CommandResult(None, error=exc.strerror or str(exc))
        return CommandResult(proc.returncode, proc.stdout, proc.stderr)


_SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def _bytes(value: bytes | str | None) -> bytes:
    if value is None:
        return b""
    return value.encode() if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class Missing:
    path: str  # relative to the host directory
    reason: str


@dataclass(frozen=True, slots=True)
class CollectReport:
    host: str
    host_dir: Path
    files: tuple[str, ...]  # written, relative to the host directory
    missing: tuple[Missing, ...]
    nics: tuple[str, ...]  # RDMA netdevs found


def collect_host(
    out_dir: Path,
    root: Path = Path("/"),
    run: CommandRunner | None = None,
    hostname: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    lldp_socket: Path | None = None,
    sudo: bool = False,
) -> CollectReport:
    """Collect this host into ``out_dir/hosts/<hostname>/``; see the module docstring.

    ``lldp_socket``: the control socket of the lldpd to ask (``lldpcli -u PATH``) instead of the default one.
    ``sudo``: run the root-marked commands through ``sudo -n --`` unless this process is root already.
    """
    name = hostname if hostname is not None else socket.gethostname().split(".")[0]
    if not name or name in (".", "..") or not set(name) <= HOSTNAME_CHARS:
        raise UsageError(f"--hostname must be a plain host name (letters, digits, '-', '_', '.'), got {name!r}")
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a directory")
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} exists and is not a directory")
    if timeout <= 0:
        raise UsageError(f"the command timeout must be positive, got {timeout}")
    if lldp_socket is not None:
        lldp_socket = _lldp_socket(lldp_socket)
    try:
        (out_dir / "hosts").mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".collect-{name}-", dir=out_dir))
    except OSError as exc:
        raise UsageError(f"cannot write to --out {out_dir}: {exc.strerror}") from None
    started = _now()
    target = out_dir / "hosts" / name
    try:
        runner = run or SubprocessRunner()
        which = runner.which if isinstance(runner, SubprocessRunner) else SubprocessRunner().which
        escalate = sudo and os.geteuid() != 0
        collector = _Collector(root, staging, runner, timeout, lldp_command(lldp_socket), escalate, which)
        nics = collector.collect()
        _replace(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if not isinstance(exc, KeyboardInterrupt):
            _mark_failed(target, started, exc)
        if isinstance(exc, OSError):  # the disk filled up, the bundle became unwritable: say so, exit 2
            raise UsageError(f"cannot collect {name} into {out_dir}: {exc.strerror or exc}") from None
        raise
    return CollectReport(name, target, tuple(collector.files), tuple(collector.missing), tuple(nics))


def _lldp_socket(path: Path) -> Path:
    """An existing Unix socket (lldpd's control socket), made absolute; else a usage error saying what it is."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise UsageError(
            f"--lldp-socket {path}: {exc.strerror or exc} (expected lldpd's control socket, e.g. /run/lldpd.socket)"
        ) from None
    if not stat.S_ISSOCK(mode):
        raise UsageError(
            f"--lldp-socket {path} is not a socket (expected lldpd's control socket, e.g. /run/lldpd.socket)"
        )
    return path.absolute()


def _mark_failed(target: Path, started: str, exc: BaseException) -> None:
    """Record a failed collect in the host's previous ``collect.json`` (``last_attempt``), so its older files are
    read as stale (``INPUT-STALE``), never as current. Best effort: with no previous data there is nothing to
    mark, and a disk that cannot take the marker cannot take the data either (the error says so)."""
    record = target / layout.COLLECT_JSON
    try:
        doc = orjson.loads(record.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    if not isinstance(doc, dict):
        return
    reason = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)[:500]
    doc["last_attempt"] = {"started": started, "finished": _now(), "result": "failed", "reason": reason}
    partial = record.with_name(f".{record.name}.{os.getpid()}")
    try:
        partial.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        partial.replace(record)
    except OSError:
        partial.unlink(missing_ok=True)


def _replace(staging: Path, target: Path) -> None:
    """``staging`` in the place of ``target``: one atomic swap where the system has one, else two renames."""
    from unifab.collect.staging import exchange

    if target.is_dir() and not target.is_symlink() and exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)  # the swap left the previous directory here
        return
    old: Path | None = None
    if target.exists():
        old = staging.with_name(staging.name + ".old")
        target.rename(old)
    staging.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@dataclass(slots=True)
class _Collector:
    root: Path
    out: Path
    run: CommandRunner
    timeout: float
    lldp: Command
    sudo: bool  # run the root-marked commands through sudo
    which: Callable[[str], str | None]
    files: list[str] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)

    # --- writing ----------------------------------------------------------------------------------------

    def write(self, rel: str, data: bytes) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files.append(rel)

    def lack(self, rel: str, reason: str) -> None:
        self.missing.append(Missing(rel, reason))

    def read(self, rel: str) -> bytes | None:
        """A file of ``root`` (``rel`` is relative to it); None when absent or unreadable."""
        try:
            return (self.root / rel).read_bytes()
        except OSError:
            return None

    def copy(self, rel: str, required: bool = False) -> bool:
        """Copy ``root/rel`` to the same relative path; an unreadable file is recorded when it exists or is required."""
        src = self.root / rel
        try:
            data = src.read_bytes()
        except FileNotFoundError:
            if required:
                self.lack(rel, "not present on this host")
            return False
        except OSError as exc:
            if required or src.exists():
                self.lack(rel, f"cannot read: {exc.strerror or exc}")
            return False
        self.write(rel, data)
        return True

    def copy_dir(self, rel: str, recursive: bool = True) -> int:
        """Copy every regular file under ``root/rel``; the number copied."""
        base = self.root / rel
        if not base.is_dir():
            return 0
        copied = 0
        for top, dirs, names in os.walk(base):
            if not recursive:
                dirs.clear()
            dirs.sort()
            for filename in sorted(names):
                path = Path(top, filename)
                copied += self.copy(path.relative_to(self.root).as_posix())
        return copied

    # --- commands ---------------------------------------------------------------------------------------

    def invoke(self, cmd: Command, argv: tuple[str, ...]) -> tuple[CommandResult, tuple[str, ...] | None]:
        """Run ``argv``; a root-marked command through ``sudo -n -- /abs/tool ...`` when escalating (then the
        sudo argv is returned too)."""
        if not (self.sudo and cmd.root):
            return self.run(argv, self.timeout), None
        exe = self.which(argv[0])
        if exe is None:
            return CommandResult(None, not_found=True), None
        wrapped = ("sudo", "-n", "--", exe, *argv[1:])
        return self.run(wrapped, self.timeout), wrapped

    def command(self, cmd: Command) -> bytes | None:
        argv = cmd.argv
        result, wrapped = self.invoke(cmd, argv)
        if result.not_found and wrapped is None and cmd.fallback is not None:
            argv = cmd.fallback
            result, wrapped = self.invoke(cmd, argv)
        shown = " ".join(wrapped or argv)
        if wrapped is not None and result.not_found:
            self.lack(cmd.path, f"sudo not installed (--sudo runs '{' '.join(argv)}' through it)")
        elif wrapped is not None and result.returncode == 1 and _sudo_refusal(result.stderr):
            self.lack(cmd.path, f"{SUDO_REFUSED}: '{shown}': {_first_line(result.stderr)}")
        elif result.not_found:
            tools = cmd.argv[0] + (f" or {cmd.fallback[0]}" if cmd.fallback else "")
            self.lack(cmd.path, f"{tools} not installed")
        elif result.timed_out:
            self.lack(cmd.path, f"'{shown}' timed out after {self.timeout:g} s")
        elif result.error is not None:
            self.lack(cmd.path, f"'{shown}' could not start: {result.error}")
        elif result.returncode != 0:
            detail = _first_line(result.stderr) or _first_line(result.stdout)
            self.lack(cmd.path, f"'{shown}' exited {result.returncode}" + (f": {detail}" if detail else ""))
        elif not result.stdout.strip() and not cmd.empty_ok:
            self.lack(cmd.path, f"'{shown}' printed nothing")
        else:
            self.write(cmd.path, result.stdout)
            return result.stdout
        return None

    # --- the host ---------------------------------------------------------------------------------------

    def collect(self) -> list[str]:
        started = _now()
        # The RDMA devices' sysfs state first: reading it never waits on a tool, so a port found down still
        # blocks the gate when a hanging command (lldpcli, show_gids) later eats the deadline.
        devices = self.rdma_devices()
        drivers: set[str] = set()
        for dev in devices:
            drivers.update(self.rdma_device(dev))
        commands = (self.lldp if cmd.path == layout.LLDPCLI else cmd for cmd in HOST_COMMANDS)
        outputs = {cmd.path: self.command(cmd) for cmd in commands}
        netdevs = self.rdma_netdevs(devices, outputs.get(layout.IBDEV2NETDEV))
        for netdev, dev in sorted(netdevs.items()):
            self.copy(f"{layout.SYS_NET}/{netdev}/mtu", required=True)
            self.copy_dir(f"{layout.SYS_NET}/{netdev}/ecn")
            try:
                host_script.netdev(netdev)  # the one gate for a device-provided name entering a command
            except UsageError as exc:
                self.lack(f"{layout.SYS_NET}/{netdev}", f"its commands were not run: {exc}")
                continue
            for cmd in nic_commands(netdev, self.driver(dev)):
                self.command(cmd)
        for dev in devices:
            if dev in netdevs.values():  # RoCE NICs only: an InfiniBand HCA has no RoCE settings
                self.nic_configfs(dev, [n for n, d in netdevs.items() if d == dev])
        for driver in sorted(drivers | {layout.GPU_DRIVER}):
            self.copy(f"{layout.SYS_MODULE}/{driver}/version")
        self.nccl_topology()
        report = {
            "version": 1,
            "collector": "agent",
            "root": str(self.root),
            "started": started,
            "finished": _now(),
            "nics": dict(sorted(netdevs.items())),
            "files": len(self.files) + 1,
            "missing": [{"path": m.path, "reason": m.reason} for m in self.missing],
        }
        self.write(layout.COLLECT_JSON, orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
        return sorted(netdevs)

    def rdma_devices(self) -> list[str]:
        base = self.root / layout.SYS_IB
        try:
            return sorted(p.name for p in base.iterdir() if p.is_dir())
        except OSError:
            return []

    def rdma_netdevs(self, devices: list[str], ibdev_output: bytes | None) -> dict[str, str]:
        """netdev -> RDMA device, for netdevs that exist under ``/sys/class/net``."""
        found: dict[str, str] = {}
        for dev in devices:
            net = self.root / layout.SYS_IB / dev / "device" / "net"
            names = sorted(p.name for p in net.iterdir()) if net.is_dir() else []
            ndev = self.read(f"{layout.SYS_IB}/{dev}/ports/{layout.PORT}/gid_attrs/ndevs/0")
            if not names and ndev is not None and ndev.strip():
                names = [ndev.decode(errors="replace").strip()]
            for name in names:
                found.setdefault(name, dev)
        if ibdev_output is not None:
            try:
                rows = ibdev2netdev.parse(ibdev_output.decode(errors="replace"), layout.IBDEV2NETDEV)
            except ParseError:
                rows = ()  # the bundle reader reports the file; here it only adds names
            for row in rows:
                found.setdefault(row.netdev, row.rdma_dev)
        return {n: d for n, d in found.items() if "/" not in n and (self.root / layout.SYS_NET / n).exists()}

    def uevent(self, dev: str, key: str) -> str | None:
        data = self.read(f"{layout.SYS_IB}/{dev}/device/uevent")
        for line in (data or b"").decode(errors="replace").splitlines():
            name, sep, value = line.strip().partition("=")
            if sep and name == key:
                return value.strip() or None
        return None

    def driver(self, dev: str) -> str | None:
        driver = self.uevent(dev, "DRIVER")
        if driver is not None:
            return driver
        return "bnxt_en" if dev.startswith("bnxt") else ("mlx5_core" if dev.startswith("mlx5") else None)

    def rdma_device(self, dev: str) -> set[str]:
        """Copy one device's sysfs files; the drivers it names."""
        base = f"{layout.SYS_IB}/{dev}"
        for name in ("fw_ver", "board_id", "hca_type"):
            self.copy(f"{base}/{name}")
        self.copy(f"{base}/device/uevent")
        self.copy(f"{base}/device/numa_node")
        net = self.root / base / "device" / "net"
        for netdev in sorted(p.name for p in net.iterdir()) if net.is_dir() else []:
            self.copy(f"{base}/device/net/{netdev}/ifindex")  # keeps the device -> netdev link in the bundle
        ports = self.root / base / "ports"
        for port in sorted(ports.iterdir()) if ports.is_dir() else []:
            rel = f"{base}/ports/{port.name}"
            for name in ("state", "phys_state", "rate", "link_layer", "lid", "sm_lid", "lid_mask_count", "sm_sl"):
                self.copy(f"{rel}/{name}")
            self.copy_dir(f"{rel}/hw_counters", recursive=False)
            self.copy_dir(f"{rel}/counters", recursive=False)
            if self.read(f"{rel}/gid_attrs/ndevs/0") is not None:  # IB ports have none
                self.copy(f"{rel}/gid_attrs/ndevs/0")
        tc = self.root / base / "tc"
        for port in sorted(tc.iterdir()) if tc.is_dir() else []:
            self.copy(f"{base}/tc/{port.name}/traffic_class")
        driver = self.driver(dev)
        return {driver} if driver and "/" not in driver else set()

    def nic_configfs(self, dev: str, netdevs: list[str]) -> None:
        """rdma_cm defaults, and the vendor's congestion-control settings."""
        cm = f"{layout.RDMA_CM}/{dev}"
        if not self.copy_dir(cm):
            why = f"rdma_cm configfs has no {dev} (mount configfs and 'mkdir /{cm}' to expose default_roce_tos)"
            self.lack(f"{cm}/ports/{layout.PORT}/default_roce_tos", why)
        driver = self.driver(dev)
        if driver == "bnxt_en":
            cc = f"{layout.BNXT_RE}/{dev}/ports/{layout.PORT}/cc"
            if not self.copy_dir(cc, recursive=False):
                self.lack(cc, f"bnxt_re configfs has no {dev} ('mkdir /{layout.BNXT_RE}/{dev}' to expose cc settings)")
        elif driver == "mlx5_core" and not any((self.root / layout.SYS_NET / n / "ecn").is_dir() for n in netdevs):
            bdf = lspci.normalize_bdf(self.uevent(dev, "PCI_SLOT_NAME") or "")
            if bdf is None:
                return
            cc = f"{layout.MLX5_DEBUGFS}/{bdf}/cc_params"
            if not self.copy_dir(cc, recursive=False):
                self.lack(cc, "no MLNX_OFED ecn tree and no debugfs cc_params (mount debugfs and collect as root)")

    def nccl_topology(self) -> None:
        for source in self.nccl_topo_candidates():
            data = self.read(source.lstrip("/"))
            if data is not None and data.strip():
                self.write(layout.NCCL_TOPO, data)
                return
        why = "no NCCL topology file (set NCCL_TOPO_FILE or NCCL_TOPO_DUMP_FILE in the environment or /etc/nccl.conf)"
        self.lack(layout.NCCL_TOPO, why)

    def nccl_topo_candidates(self) -> Iterable[str]:
        keys = ("NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE")
        if self.root.resolve() == Path("/").resolve():
            yield from (os.environ[k] for k in keys if os.environ.get(k))
        conf = self.read("etc/nccl.conf")
        for line in (conf or b"").decode(errors="replace").splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key.strip() in keys and value.strip().startswith("/"):
                yield value.strip()


def _sudo_refusal(stderr: bytes) -> bool:
    """Whether sudo itself said no (``sudo: a password is required``, ``Sorry, user ... is not allowed``), as
    opposed to the command it ran failing with exit 1."""
    line = _first_line(stderr)
    return line.startswith("sudo:") or line.startswith("Sorry, user")


# --- the allow-list ----------------------------------------------------------------------------------------

NETDEV_PLACEHOLDER = "NETDEV"
NO_ARGUMENTS = '""'  # sudoers: the command with no argument at all
_SUDO_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_SUDOERS_PATH = re.compile(r"^/[A-Za-z0-9_./-]+$")


def root_commands(lldp_socket: Path | None = None) -> tuple[Command, ...]:
    """Every root-marked command, the per-NIC ones (both vendors) with :data:`NETDEV_PLACEHOLDER` as the netdev."""
    commands = [lldp_command(lldp_socket) if c.path == layout.LLDPCLI else c for c in HOST_COMMANDS]
    for driver in ("mlx5_core", "bnxt_en"):
        commands.extend(nic_commands(NETDEV_PLACEHOLDER, driver))
    return tuple(c for c in commands if c.root)


def _sudoers_arg(arg: str, netdev: str) -> str:
    """One argument in sudoers syntax: its special characters escaped, the netdev placeholder as ``netdev``."""
    escaped = re.sub(r"([\\,:=\s\"*?\[\]!])", r"\\\1", arg)
    return escaped.replace(NETDEV_PLACEHOLDER, netdev)


def sudoers(user: str = "unifab", lldp_socket: Path | None = None) -> str:
    """The sudoers snippet allowing ``user`` exactly the root-marked commands (``/etc/sudoers.d/unifab-agent``).

    Each command is allowed with its exact arguments from :data:`TOOL_DIRS`; where an interface name goes, ``*``
    (sudoers' glob, which also matches spaces), so the forms with an extra argument or with a name starting with
    ``-`` are denied after it (in sudoers the last match wins)."""
    if not _SUDO_USER.fullmatch(user):
        raise UsageError(f"--user {user!r}: expected a login name (lowercase letters, digits, '_' or '-')")
    if lldp_socket is not None and not _SUDOERS_PATH.fullmatch(str(lldp_socket)):
        raise UsageError(
            f"--lldp-socket {lldp_socket}: expected an absolute path of letters, digits, '_', '.', '/', '-'"
        )
    allow: list[str] = []
    deny: list[str] = []
    reasons: dict[str, str] = {}
    for cmd in root_commands(lldp_socket):
        for argv in (cmd.argv, cmd.fallback):
            if argv is None:
                continue
            reasons[argv[0]] = ROOT_REASONS[argv[0]]
            templated = any(NETDEV_PLACEHOLDER in a for a in argv[1:])
            for directory in TOOL_DIRS:
                exe = f"{directory}/{argv[0]}"
                args = " ".join(_sudoers_arg(a, "*") for a in argv[1:])
                allow.append(f"{exe} {args or NO_ARGUMENTS}")
                if templated:
                    deny.append(f"{exe} {' '.join(_sudoers_arg(a, '* *') for a in argv[1:])}")
                    deny.append(f"{exe} {' '.join(_sudoers_arg(a, '-*') for a in argv[1:])}")
    allow, deny = list(dict.fromkeys(allow)), list(dict.fromkeys(deny))  # ethtool -m is both vendors'
    why = [
        line
        for tool, reason in reasons.items()
        for line in textwrap.wrap(f"{tool}: {reason}", 110, initial_indent="#   ", subsequent_indent="#     ")
    ]
    lines = [
        "# unifab agent: what `unifab agent collect --sudo` may run as root. Generated by `unifab agent sudoers`:",
        "# regenerate it rather than edit it. Every command is a read with its exact arguments; '*' stands for one",
        "# interface name (a command with an extra argument, or a name starting with '-', is denied).",
        "# Install: unifab agent sudoers > f && visudo -cf f && install -m 0440 f /etc/sudoers.d/unifab-agent",
        "#",
        "# Why each needs root:",
        *why,
        "",
        "Cmnd_Alias UNIFAB_AGENT_READ = \\\n    " + ", \\\n    ".join(allow),
        "Cmnd_Alias UNIFAB_AGENT_DENY = \\\n    " + ", \\\n    ".join(deny),
        f"Defaults:{user} !requiretty",
        f"{user} ALL = (root) NOPASSWD: UNIFAB_AGENT_READ, !UNIFAB_AGENT_DENY",
    ]
    return "\n".join(lines) + "\n"


def _first_line(data: bytes) -> str:
    for line in data.decode(errors="replace").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
