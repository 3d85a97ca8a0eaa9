"""Health evidence that is not a counter: Xid lines of kernel logs, NCCL completion errors, transceiver DOM.

:func:`read_events` reads, from a bundle:

* ``telemetry/kernel/*.log`` (``journalctl -k -o short-iso`` and the other kernel-log forms
  :mod:`unifab.parse.host.xid` reads; the host is the journal's host field, never the file name) and each host's
  ``hosts/<host>/cmd/dmesg.txt`` (plain ``dmesg``: the time of an event is known only when the log prints a
  wall-clock stamp);
* ``telemetry/nccl/*.log``: ``NCCL_DEBUG=INFO|WARN`` output of jobs (:mod:`unifab.parse.host.nccl_debug`);
* ``telemetry/nccl-ras/[<job>/]<unix time>.txt``: NCCL RAS client reports (:mod:`unifab.parse.host.nccl_ras`), each
  dated by its name: every process a report names as missing or dead, placed on its host by the RAS address (a
  host's name, or an address of its RDMA GID tables) and on its GPU by the NVML index;
* ``telemetry/dcgm/*.om``: dcgm-exporter scrapes with timestamps. ``DCGM_FI_DEV_XID_ERRORS`` is a gauge holding
  the last Xid a GPU raised (0 for none), so each change to a non-zero value is one Xid event, at the sample's
  time; the GPU is its ``pci_bus_id`` label (dcgm-exporter 3.3 and later), else its ``UUID`` or ``gpu`` index
  matched to ``nvidia-smi`` on the host its ``Hostname`` label names;
* ``hosts/<host>/cmd/ethtool-m/<netdev>.txt`` of every NIC of the Fabric (:mod:`unifab.parse.host.ethtool_module`),
  and the same file in each round (``telemetry/rounds/<unix time>/hosts/<host>/...``,
  :mod:`unifab.health.snapshot_series`): one dated reading per round, so HEALTH-OPTICS knows when a module crossed
  its levels and whether it is still beyond them.

A file that cannot be read or parsed is one problem (file, line, what was expected); the rest is read.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from unifab import layout
from unifab.errors import ParseError, ParseProblems
from unifab.health.openmetrics import Sample
from unifab.health.openmetrics import parse as parse_openmetrics
from unifab.health.snapshot_series import ROUNDS_DIR, round_dirs, round_time
from unifab.model import Fabric
from unifab.parse.host import ethtool_module, nccl_debug, nccl_ras, xid
from unifab.sources import SourcePath

__all__ = ["DCGM_XID", "EventStore", "ModuleRecord", "NcclRecord", "XidRecord", "dcgm_xids", "read_events", "wall_time"]


@dataclass(frozen=True, slots=True)
class XidRecord:
    host: str
    event: xid.XidEvent
    time: float | None  # epoch seconds; None when the log printed no wall-clock time
    where: str  # file:line


@dataclass(frozen=True, slots=True)
class NcclRecord:
    error: nccl_debug.NcclCompletionError
    time: float | None
    where: str


@dataclass(frozen=True, slots=True)
class RasRecord:
    """A process one NCCL RAS report names as missing or dead, at the report's time, on its host when known."""

    process: nccl_ras.RasProcess
    time: float
    host: str | None  # None: the RAS address is no address of the bundle's hosts
    where: str  # file:line
    label: str = ""  # the report's directory under nccl-ras/ (one job's queries)


@dataclass(frozen=True, slots=True)
class RasReportRecord:
    """One RAS report read: when, and the records it gave (a report naming nobody says the job answered)."""

    time: float
    where: str
    label: str  # the directory under nccl-ras/ ("" for a report directly in it): one job's queries


@dataclass(frozen=True, slots=True)
class ModuleRecord:
    host: str
    netdev: str
    module: ethtool_module.ModuleEeprom
    where: str
    time: float | None = None  # a round's time; None: the bundle's own reading (dated by the series' end)


@dataclass(slots=True)
class EventStore:
    xids: list[XidRecord] = field(default_factory=list)
    nccl: list[NcclRecord] = field(default_factory=list)
    modules: list[ModuleRecord] = field(default_factory=list)
    ras: list[RasRecord] = field(default_factory=list)
    ras_reports: list[RasReportRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: int = 0  # log files read under telemetry/ (host files are part of the snapshot, not counted)


_FRACTION = re.compile(r"[.,](\d+)")
_SYSLOG = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d")


def wall_time(text: str | None, year: int | None = None) -> float | None:
    """Epoch seconds of a printed time: ISO 8601 / RFC 3339 (``2026-11-30T03:00:00.123456789Z``, ``2026-03-03
    12:11:38``, ``...+0000``), ``dmesg -T`` (``Sun Feb 23 16:24:18 2025``), or syslog ``Feb 23 16:24:18`` (in
    ``year``). Times without a zone are UTC; None for anything else (``dmesg`` reltime prints minutes only)."""
    if not text:
        return None
    cleaned = _FRACTION.sub(lambda m: "." + m[1][:6], text.strip(), count=1)
    cleaned = cleaned.replace("Z", "+00:00")
    try:
        when = datetime.fromisoformat(cleaned)
    except ValueError:
        when = None
        for fmt in ("%a %b %d %H:%M:%S %Y",):
            try:
                when = datetime.strptime(cleaned, fmt)
            except ValueError:
                continue
        if when is None and year is not None and _SYSLOG.match(cleaned):
            try:
                when = datetime.strptime(f"{year} {cleaned[:15]}", "%Y %b %d %H:%M:%S")
            except ValueError:
                return None
    if when is None:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _read(path: SourcePath, store: EventStore, where: str) -> str | None:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        store.problems.append(f"{where}: {exc}")
        return None
    store.files += where.startswith(layout.TELEMETRY_DIR + "/")
    return text


T = TypeVar("T")


def _in_part(store: EventStore, parse: Callable[[str, str, ParseProblems], T], text: str, where: str) -> T | None:
    """``parse(text)`` read in part: its located problems join the store's; a file it refuses is one problem."""
    problems = ParseProblems(where)
    try:
        record = parse(text, where, problems)
    except ParseError as exc:
        store.problems.append(str(exc))
        return None
    store.problems.extend(str(p) for p in problems.problems)
    return record


def _kernel(
    store: EventStore, text: str, where: str, host: str | None, year: int | None, known: Collection[str] = ()
) -> None:
    log = _in_part(store, xid.parse, text, where)  # a line that does not parse costs its event only
    if log is None:
        return
    for event in log.events:
        owner = event.host or host
        if owner is not None and owner not in known and owner.split(".", 1)[0] in known:
            owner = owner.split(".", 1)[0]  # the journal's FQDN, the bundle's short name
        if owner is None:
            store.problems.append(f"{where}:{event.line}: an Xid line without a host name (journal host field)")
            continue
        stamp = event.timestamp if isinstance(event.timestamp, str) else None
        store.xids.append(XidRecord(owner, event, wall_time(stamp, year), f"{where}:{event.line}"))


def _logs(root: SourcePath, directory: str) -> list[SourcePath]:
    base = root / directory
    if not base.is_dir():
        return []
    return sorted(p for p in base.walk_files() if p.name.endswith(layout.LOG_SUFFIX))


DCGM_XID = "DCGM_FI_DEV_XID_ERRORS"
_DCGM_HOST_LABELS = ("Hostname", "hostname", "host", "instance")
# labels that change with the value (dcgm-exporter 4 names the Xid in err_code/err_msg) or split one GPU (MIG)
_DCGM_VALUE_LABELS = frozenset({"err_code", "err_msg", "GPU_I_ID", "GPU_I_PROFILE"})


def _label(sample: Sample, *names: str) -> str | None:
    found = dict(sample.labels)
    return next((found[n] for n in names if found.get(n)), None)


def _dcgm_gpu(sample: Sample, fabric: Fabric, host: str) -> str | None:
    """The GPU's normalized PCI address: its ``pci_bus_id`` label, else nvidia-smi's for its UUID or index."""
    pci = _label(sample, "pci_bus_id")
    if pci:
        return xid.normalize_pci(f"PCI:{pci}")
    known = fabric.hosts.get(host)
    uuid, index = _label(sample, "UUID", "uuid"), _label(sample, "gpu")
    for gpu in known.gpus.values() if known is not None else ():
        if (uuid and gpu.uuid == uuid) or (not uuid and index is not None and str(gpu.index) == index):
            return xid.normalize_pci(f"PCI:{gpu.pci_bus_id}") if gpu.pci_bus_id else None
    return None


def _dcgm(store: EventStore, text: str, where: str, fabric: Fabric) -> None:
    try:
        samples = parse_openmetrics(text, where)
    except ParseError as exc:
        store.problems.append(str(exc))
        return
    dcgm_xids(store, samples, where, fabric)


def dcgm_xids(store: EventStore, samples: Iterable[Sample], where: str, fabric: Fabric) -> None:
    """Xid events from the DCGM_FI_DEV_XID_ERRORS gauge: one per change to a non-zero value, per GPU (the samples
    of a scrape file, or of a TSDB's range query: :func:`unifab.health.prometheus.read_prometheus_xids`)."""
    last: dict[tuple[tuple[str, str], ...], float] = {}
    unplaced: set[str] = set()
    for sample in sorted((s for s in samples if s.name == DCGM_XID), key=lambda s: s.timestamp or 0.0):
        gpu_key = tuple(kv for kv in sample.labels if kv[0] not in _DCGM_VALUE_LABELS)  # one series per GPU
        before, last[gpu_key] = last.get(gpu_key, 0.0), sample.value
        if sample.value == before or not sample.value or not float(sample.value).is_integer():
            continue
        host = _label(sample, *_DCGM_HOST_LABELS)
        host = host.rsplit(":", 1)[0] if host and host.rsplit(":", 1)[-1].isdigit() else host  # instance host:port
        if host is not None and host not in fabric.hosts and host.split(".", 1)[0] in fabric.hosts:
            host = host.split(".", 1)[0]
        pci = _dcgm_gpu(sample, fabric, host) if host is not None else None
        if host is None or pci is None:
            unplaced.add(f"{where}: {DCGM_XID} of gpu {_label(sample, 'gpu') or '?'} on {host or 'no Hostname'}")
            continue
        code = int(sample.value)
        message = _label(sample, "err_msg") or f"{DCGM_XID} {code}"
        event = xid.XidEvent(0, sample.timestamp, host, pci, code, None, None, message)
        store.xids.append(
            XidRecord(host, event, sample.timestamp, f"{where} ({DCGM_XID}, gpu {_label(sample, 'gpu')})")
        )
    store.problems.extend(
        f"{u}: no host or GPU of the bundle (expected a Hostname and a pci_bus_id, UUID or gpu label naming one)"
        for u in sorted(unplaced)
    )


def _module(store: EventStore, path: SourcePath, where: str, host: str, netdev: str, when: float | None) -> None:
    if not path.is_file() or (text := _read(path, store, where)) is None:
        return
    try:
        store.modules.append(ModuleRecord(host, netdev, ethtool_module.parse(text, where), where, when))
    except ParseError as exc:
        store.problems.append(str(exc))


def _round_modules(root: SourcePath, fabric: Fabric, store: EventStore) -> None:
    """Each round's ``ethtool -m`` of the Fabric's NICs (a round without one is a gap, not a problem). A bad round
    directory name is reported once, by the series reader (:func:`~unifab.health.snapshot_series.read_rounds`)."""
    for when, directory in round_dirs(root, []):
        hosts = directory / layout.HOSTS
        for host_dir in sorted(p for p in hosts.iterdir() if p.is_dir()) if hosts.is_dir() else ():
            host = fabric.hosts.get(host_dir.name)
            modules = host_dir / layout.ETHTOOL_M_DIR
            if host is None or not modules.is_dir():
                continue
            for path in sorted(p for p in modules.iterdir() if p.is_file() and p.name.endswith(".txt")):
                netdev = path.name.removesuffix(".txt")
                if netdev in host.nics:
                    rel = f"{layout.HOSTS}/{host.name}/{layout.ETHTOOL_M_DIR}/{path.name}"
                    _module(store, path, f"{ROUNDS_DIR}/{directory.name}/{rel}", host.name, netdev, when)


def _ras_addresses(fabric: Fabric) -> dict[str, str]:
    """Each address a RAS socket may have -> its host: the host's name and every IP of its NICs' GID tables."""
    out: dict[str, str] = {}
    for name, host in fabric.hosts.items():
        out[name] = name
        for nic in host.nics.values():
            for gid in nic.gids:
                address = gid.ipv4 or _address(gid.gid)
                if address is not None:
                    out.setdefault(address, name)
    return out


def _address(text: str) -> str | None:
    """``text`` as one spelling of an IP address (``::ffff:10.0.0.1`` is ``10.0.0.1``), None when it is none."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return str(mapped or ip)


def _ras(root: SourcePath, fabric: Fabric, store: EventStore) -> None:
    base = root / layout.NCCL_RAS_DIR
    if not base.is_dir():
        return
    addresses = _ras_addresses(fabric)
    for path in sorted(p for p in base.walk_files() if p.name.endswith(".txt")):
        rel = path.relative_to(base)
        where = f"{layout.NCCL_RAS_DIR}/{rel}"
        when = round_time(path.name.removesuffix(".txt"))
        if when is None:
            store.problems.append(f"{where}: expected a RAS report named by its unix time (1764547200.txt)")
            continue
        if (text := _read(path, store, where)) is None:
            continue
        report = _in_part(store, nccl_ras.parse, text, where)  # a bad Process or Rank line costs that line
        if report is None:
            continue
        label = rel.rsplit("/", 1)[0] if "/" in rel else ""
        store.ras_reports.append(RasReportRecord(when, where, label))
        placed = {p.node: addresses.get(_address(p.node) or p.node) for p in report.processes}
        unplaced = sorted(node for node, host in placed.items() if host is None)
        if unplaced:
            store.problems.append(
                f"{where}: RAS names processes on {', '.join(unplaced)}, no host of the bundle (the address of "
                "NCCL's bootstrap interface: a host is known by its name and its RDMA GID addresses)"
            )
        for process in report.processes:
            store.ras.append(RasRecord(process, when, placed[process.node], f"{where}:{process.line}", label))


def read_events(root: SourcePath, fabric: Fabric, year: int | None = None, *, dcgm: bool = True) -> EventStore:
    """Every Xid, NCCL completion error, NCCL RAS report and module DOM reading of a bundle (``year``: for syslog
    times).
    ``dcgm=False``: not the scrapes of ``telemetry/dcgm/`` (the GPU gauges come from a TSDB instead)."""
    store = EventStore()
    for path in _logs(root, layout.KERNEL_LOG_DIR):
        where = f"{layout.KERNEL_LOG_DIR}/{path.relative_to(root / layout.KERNEL_LOG_DIR)}"
        if (text := _read(path, store, where)) is not None:
            _kernel(store, text, where, None, year, fabric.hosts)
    for name in sorted(fabric.hosts):
        host_root = root / layout.HOSTS / name
        dmesg = host_root / layout.DMESG
        where = f"{layout.HOSTS}/{name}/{layout.DMESG}"
        if dmesg.is_file() and (text := _read(dmesg, store, where)) is not None:
            _kernel(store, text, where, name, year)
        for netdev in sorted(fabric.hosts[name].nics):
            path = host_root / layout.ETHTOOL_M_DIR / f"{netdev}.txt"
            where = f"{layout.HOSTS}/{name}/{layout.ETHTOOL_M_DIR}/{netdev}.txt"
            _module(store, path, where, name, netdev, None)
    _round_modules(root, fabric, store)
    for path in _logs(root, layout.NCCL_LOG_DIR):
        where = f"{layout.NCCL_LOG_DIR}/{path.relative_to(root / layout.NCCL_LOG_DIR)}"
        if (text := _read(path, store, where)) is None:
            continue
        log = _in_part(store, nccl_debug.parse, text, where)  # a line that does not parse costs that line only
        if log is None:
            continue
        store.nccl.extend(NcclRecord(e, wall_time(e.timestamp, year), f"{where}:{e.line}") for e in log.errors)
    _ras(root, fabric, store)
    scrapes = root / layout.DCGM_DIR
    for path in (
        sorted(p for p in scrapes.walk_files() if p.name.endswith(layout.TELEMETRY_SUFFIX))
        if dcgm and scrapes.is_dir()
        else ()
    ):
        where = f"{layout.DCGM_DIR}/{path.relative_to(scrapes)}"
        if (text := _read(path, store, where)) is not None:
            _dcgm(store, text, where, fabric)
    return store
