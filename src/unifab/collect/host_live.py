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

Nothing here raises for what the host lacks: a missing tool, a non-zero exit, a timeout, empty output or an
unreadable file becomes an entry of ``collect.json``'s ``missing`` list (``{"path": ..., "reason": ...}``), which the
bundle reader reports as ``INPUT-MISSING``. Only unusable arguments raise :class:`~unifab.errors.UsageError`.
The host directory is written beside the bundle first and moved into place at the end, replacing an older one.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import orjson

from unifab import layout
from unifab.errors import ParseError, UsageError
from unifab.parse.host import ibdev2netdev, lspci

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HOSTNAME_CHARS",
    "HOST_COMMANDS",
    "CollectReport",
    "Command",
    "CommandResult",
    "CommandRunner",
    "Missing",
    "SubprocessRunner",
    "collect_host",
    "nic_commands",
]

DEFAULT_TIMEOUT_S = 30.0
HOSTNAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass(frozen=True, slots=True)
class Command:
    path: str  # where its stdout goes, relative to the host directory
    argv: tuple[str, ...]
    empty_ok: bool = False  # an empty stdout is a valid reading (a kernel log without messages)
    fallback: tuple[str, ...] | None = None  # run when argv's tool is not installed


HOST_COMMANDS = (
    Command(layout.IBDEV2NETDEV, ("ibdev2netdev",)),
    Command(layout.SHOW_GIDS, ("show_gids",)),
    Command(layout.IBV_DEVINFO, ("ibv_devinfo",)),
    Command(layout.RDMA_STATISTIC, ("rdma", "statistic", "show")),
    Command(layout.LSPCI, ("lspci", "-D", "-nn", "-vvv")),
    Command(layout.NVIDIA_SMI_Q, ("nvidia-smi", "-q", "-x")),
    Command(layout.NVIDIA_SMI_TOPO, ("nvidia-smi", "topo", "-m")),
    Command(layout.DMESG, ("dmesg",), empty_ok=True),
    Command(layout.UNAME, ("uname", "-r")),
    Command(layout.LLDPCLI, ("lldpcli", "-f", "json0", "show", "neighbors", "details")),
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
        )
    else:
        qos = Command(f"{layout.MLNX_QOS_DIR}/{netdev}.txt", ("mlnx_qos", "-i", netdev))
    return (
        qos,
        Command(f"{layout.ETHTOOL_S_DIR}/{netdev}.txt", ("ethtool", "-S", netdev)),
        Command(f"{layout.ETHTOOL_M_DIR}/{netdev}.txt", ("ethtool", "-m", netdev)),
        Command(f"{layout.ETHTOOL_A_DIR}/{netdev}.txt", ("ethtool", "-a", netdev)),
    )


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

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        exe = shutil.which(argv[0], path=self.path)
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
) -> CollectReport:
    """Collect this host into ``out_dir/hosts/<hostname>/``; see the module docstring."""
    name = hostname if hostname is not None else socket.gethostname().split(".")[0]
    if not name or name in (".", "..") or not set(name) <= HOSTNAME_CHARS:
        raise UsageError(f"--hostname must be a plain host name (letters, digits, '-', '_', '.'), got {name!r}")
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a directory")
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} exists and is not a directory")
    if timeout <= 0:
        raise UsageError(f"the command timeout must be positive, got {timeout}")
    try:
        (out_dir / "hosts").mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".collect-{name}-", dir=out_dir))
    except OSError as exc:
        raise UsageError(f"cannot write to --out {out_dir}: {exc.strerror}") from None
    started = _now()
    target = out_dir / "hosts" / name
    try:
        collector = _Collector(root, staging, run or SubprocessRunner(), timeout)
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

    def command(self, cmd: Command) -> bytes | None:
        argv = cmd.argv
        result = self.run(argv, self.timeout)
        if result.not_found and cmd.fallback is not None:
            argv = cmd.fallback
            result = self.run(argv, self.timeout)
        shown = " ".join(argv)
        if result.not_found:
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
        outputs = {cmd.path: self.command(cmd) for cmd in HOST_COMMANDS}
        devices = self.rdma_devices()
        netdevs = self.rdma_netdevs(devices, outputs.get(layout.IBDEV2NETDEV))
        drivers: set[str] = set()
        for dev in devices:
            drivers.update(self.rdma_device(dev))
        for netdev, dev in sorted(netdevs.items()):
            self.copy(f"{layout.SYS_NET}/{netdev}/mtu", required=True)
            self.copy_dir(f"{layout.SYS_NET}/{netdev}/ecn")
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
            for name in ("state", "phys_state", "rate", "link_layer"):
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


def _first_line(data: bytes) -> str:
    for line in data.decode(errors="replace").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
