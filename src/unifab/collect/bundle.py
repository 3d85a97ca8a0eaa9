"""Read a bundle directory (the design's offline snapshot layout) into a :class:`Fabric`.

Every file goes through the same parsers used for real device output. A file that cannot be read
or parsed becomes an ``INPUT-UNREADABLE`` finding naming the file and line; a file read in part (a
SONiC database with one bad row or dangling reference: see docs/parsers.md) gives what could be read
and an ``INPUT-PARTIAL`` finding per skipped row; a file the layout requires but that is absent
becomes ``INPUT-MISSING``. None of them stops the rest of the bundle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TypeVar, cast

import orjson

from unifab import layout
from unifab.collect.host import load_host
from unifab.collect.parallel import Reader, cache_use, collect_young, gc_paused, pool_workers, read_devices
from unifab.collect.problems import MAX_REASON, Problems
from unifab.collect.record_cache import CacheStats, RecordCache
from unifab.collect.shared_parts import share_switch_parts
from unifab.errors import BundleError
from unifab.model import Endpoint, Fabric, Finding, Host, Link, Severity, Switch, VersionRule
from unifab.parse.plan import cabling
from unifab.platforms import PLATFORMS
from unifab.profile import QosProfile
from unifab.snapshot import DeviceOrigin, Snapshot
from unifab.sources import DirectorySource, Source, SourcePath, as_source_path, batched

__all__ = [
    "BUNDLE_DIRS",
    "SWITCH_READERS",
    "ProgressHook",
    "SwitchReader",
    "T",
    "count_devices",
    "device_origin",
    "load_bundle",
    "load_intent_file",
    "load_intent_parts",
    "load_plan",
    "load_snapshot",
    "load_switch",
    "merge_links",
]

T = TypeVar("T")

BUNDLE_DIRS = layout.BUNDLE_DIRS
ProgressHook = Callable[[str, int], None]  # (phase, number of items done since last call)


def load_bundle(
    location: str | os.PathLike[str] | Source | SourcePath,
    progress: ProgressHook | None = None,
    *,
    workers: int | None = None,
    pool_min_devices: int | None = None,
    cache: RecordCache | None = None,
    cache_stats: CacheStats | None = None,
) -> Fabric:
    """Assemble a fabric from a bundle (a directory, an archive or any :class:`~unifab.sources.Source`).

    A bundle of more than ``pool_min_devices`` devices (default :data:`~unifab.collect.parallel.POOL_MIN_DEVICES`)
    is read on ``workers`` processes (default: ``UNIFAB_LOAD_WORKERS``, else every usable core; 1 is serial),
    with the same result as the serial read (:mod:`unifab.collect.parallel`). With ``cache`` (a directory
    bundle only; :mod:`unifab.collect.record_cache`) each unchanged device directory is taken from it, with the
    same result again; ``cache_stats`` counts what the cache did. Raises :class:`BundleError` if it is not a
    bundle.
    """
    try:
        root = as_source_path(location)
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    if not root.exists():
        raise BundleError(f"bundle not found: {root}")
    if not root.is_dir():
        raise BundleError(f"not a bundle directory: {root}")
    if not any((root / d).is_dir() for d in BUNDLE_DIRS):
        raise BundleError(f"not a bundle: {root} has none of {', '.join(d + '/' for d in BUNDLE_DIRS)}")
    problems = Problems(root)
    fabric = Fabric()
    host_links: list[Link] = []
    switch_links: list[Link] = []
    host_dirs = list(_subdirs(root / layout.HOSTS))
    switch_dirs = list(_subdirs(root / layout.SWITCHES))
    pool = pool_workers(len(host_dirs) + len(switch_dirs), workers, pool_min_devices)
    with gc_paused():
        _read_devices(
            root,
            host_dirs,
            switch_dirs,
            pool,
            fabric,
            problems,
            (host_links, switch_links),
            progress,
            cache,
            cache_stats,
        )
    if (root / layout.IB_DIR).is_dir():
        from unifab.collect.ib import load_ib

        switch_links.extend(load_ib(root, fabric, problems))  # ib/ files and the hosts' ibstat (collect/ib.py)
    planned = _load_plan(root / layout.PLAN_DIR, problems)
    fabric.links = _merge_links(host_links + switch_links, planned)
    if (root / layout.SCHEDULER).is_dir():
        from unifab.collect.scheduler import load_jobs

        fabric.jobs = load_jobs(root / layout.SCHEDULER, problems)
    if (root / layout.NCCL_LOG_DIR).is_dir():
        from unifab.collect.nccl_versions import read_nccl_versions

        read_nccl_versions(root, fabric, problems)  # the NCCL release of each host's ranks (FLEET-DRIVER)
    if (root / layout.INTENT).is_file():
        fabric.qos_intent, fabric.fleet_baseline = load_intent_parts(root / layout.INTENT, problems)
    report_never_collected(root, {d.name for d in switch_dirs}, problems)
    if isinstance(root.source, DirectorySource):
        _report_refused(root, root.source.refused, problems)
    fabric.input_findings = problems.findings
    return fabric


def _read_devices(
    root: SourcePath,
    host_dirs: list[SourcePath],
    switch_dirs: list[SourcePath],
    pool: int,
    fabric: Fabric,
    problems: Problems,
    gathered: tuple[list[Link], list[Link]],
    progress: ProgressHook | None,
    cache: RecordCache | None = None,
    cache_stats: CacheStats | None = None,
) -> None:
    """Every host and switch directory into ``fabric``: on ``pool`` processes (more than 1), else serially;
    through the record cache when there is one (then per device, as the pool reads, even on one process)."""
    host_links, switch_links = gathered
    if cache is not None and cache_use(root, cache) is None:
        cache = None  # not a directory: nothing to stat, nothing cached
    if pool > 1 or cache is not None:
        jobs = [("host", d) for d in host_dirs] + [("switch", d) for d in switch_dirs]
        stats = cache_stats if cache_stats is not None else CacheStats()
        reads = read_devices(root, jobs, _READERS, pool, progress, cache=cache, cache_stats=stats)
        for read in reads:
            problems.findings.extend(read.findings)
            refused = getattr(root.source, "refused", None)
            if refused is not None:
                for rel, reason in read.refused.items():
                    refused.setdefault(rel, reason)
            if read.kind == "host":
                read_host = cast(Host, read.device)
                fabric.hosts[read_host.name] = read_host
                host_links.extend(read.links)
            else:
                if read.device is not None:
                    read_switch = cast(Switch, read.device)
                    fabric.switches[read_switch.name] = read_switch
                switch_links.extend(read.links)
        if cache is not None and stats.stored:
            stats.evicted += cache.evict()
    else:
        for host_dir in host_dirs:
            with batched(root.source):  # each of its directories listed once (unifab.sources.DirectorySource)
                host, links = load_host(host_dir, problems)
            fabric.hosts[host.name] = host
            host_links.extend(links)
            collect_young()
            if progress:
                progress("hosts", 1)
        for switch_dir in switch_dirs:
            with batched(root.source):
                switch, links = load_switch(switch_dir, problems)
            if switch is not None:
                fabric.switches[switch.name] = switch
            switch_links.extend(links)
            collect_young()
            if progress:
                progress("switches", 1)


def report_never_collected(root: SourcePath, present: Collection[str], problems: Problems) -> None:
    """``INPUT-MISSING`` for each switch whose ``unifab collect`` failed and that has no data in the bundle at
    all (``collect-manifest.json`` records the attempt; a device with earlier data is ``INPUT-STALE`` instead):
    a device that was never read must not vanish from the report because its directory does not exist."""
    path = root / layout.COLLECT_MANIFEST
    doc = _json_record(path, problems)
    if doc is None:
        return
    devices = doc.get("devices")
    if not isinstance(devices, dict):
        problems.unreadable(path, "expected a JSON object with a 'devices' object")
        return
    for name, entry in sorted(devices.items()):
        if not isinstance(entry, dict) or entry.get("result") != "failed" or name in present:
            continue
        if not name or "/" in name or name in (".", ".."):
            problems.unreadable(path, f"device name {name!r} cannot name a switch directory")
            continue
        when = _text(entry.get("finished")) or _text(entry.get("started")) or "an unrecorded time"
        why = (_text(entry.get("reason")) or "no reason recorded")[:MAX_REASON]
        problems.missing(
            root / layout.SWITCHES / name,
            f"{name} was never collected: the collect at {when} failed ({why}); nothing of it was checked",
            device=name,
        )


def _report_refused(root: SourcePath, refused: dict[str, str], problems: Problems) -> None:
    """One INPUT-UNREADABLE per path the directory source refused (a directory that cannot be listed, a link
    out of the bundle, a FIFO) that no reader reported already, nor an ancestor of it."""
    reported = {str(f.subject.get("path", "")) for f in problems.findings}
    reported |= {str(f.evidence.get("file", "")) for f in problems.findings}
    for rel, reason in sorted(refused.items()):
        if not rel or rel in reported or any(rel.startswith(r + "/") for r in reported if r):
            continue
        what = "directory" if root.source.kind(rel) == "dir" else "file"
        problems.unreadable(root / rel, f"cannot read this {what}: {reason}")
        reported.add(rel)


def load_snapshot(
    location: str | os.PathLike[str] | Source | SourcePath,
    progress: ProgressHook | None = None,
    read_at: datetime | None = None,
) -> Snapshot:
    """:func:`load_bundle` with each device's origin and the time it was read: an immutable :class:`Snapshot`."""
    try:
        root = as_source_path(location)
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    fabric = load_bundle(root, progress)
    origins = {
        f"{kind}:{device.name}": device_origin(device, kind)
        for kind, top in (("host", layout.HOSTS), ("switch", layout.SWITCHES))
        for device in _subdirs(root / top)
    }
    return Snapshot(fabric, read_at or datetime.now(UTC), str(root), MappingProxyType(origins))


def device_origin(device_dir: SourcePath, kind: str) -> DeviceOrigin:
    """Where a device directory's files came from, and when its collector says it read them (``collect.json``)."""
    collector: str | None = None
    collected_at: datetime | None = None
    record = device_dir / layout.COLLECT_JSON
    if record.is_file():
        try:
            doc = orjson.loads(record.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            doc = None  # the reader reports an unreadable collect.json; the origin just stays unknown
        if isinstance(doc, dict):
            collector = doc.get("collector") if isinstance(doc.get("collector"), str) else None
            finished = doc.get("finished")
            if isinstance(finished, str):
                try:
                    collected_at = datetime.fromisoformat(finished.replace("Z", "+00:00"))
                except ValueError:
                    collected_at = None
    return DeviceOrigin(f"{kind}:{device_dir.name}", str(device_dir), collector, collected_at)


def _load_intent(path: SourcePath, problems: Problems) -> QosProfile | None:
    """The fabric-wide QoS of the bundle's intent file; each problem in it is an INPUT-UNREADABLE finding."""
    return load_intent_parts(path, problems)[0]


def load_intent_parts(path: SourcePath, problems: Problems) -> tuple[QosProfile | None, tuple[VersionRule, ...]]:
    """The intent file's fabric-wide QoS (``None`` for a file with only ``fleet:``) and its fleet baseline; each
    problem in it is an INPUT-UNREADABLE finding (and neither is taken)."""
    from unifab.errors import IntentError
    from unifab.intent import parse_intent

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.unreadable(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return None, ()
    try:
        intent = parse_intent(text, str(path))
        return intent.qos_profile(), intent.fleet
    except IntentError as exc:
        for problem in exc.problems:
            line, _, reason = problem.removeprefix(f"{path}:").partition(": ")
            if line.isdigit():
                problems.unreadable(path, reason, line=int(line))
            else:
                problems.unreadable(path, problem.removeprefix(f"{path}: "))
        return None, ()


def count_devices(location: str | os.PathLike[str] | Source | SourcePath) -> int:
    """Number of host and switch directories, for sizing a progress bar."""
    try:
        root = as_source_path(location)
    except ValueError:
        return 0
    return sum(1 for d in (layout.HOSTS, layout.SWITCHES) for _ in _subdirs(root / d))


def _subdirs(path: SourcePath) -> Iterator[SourcePath]:
    with batched(path.source):
        found = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
    yield from found


SwitchReader = Callable[[str, SourcePath, Problems], tuple[Switch | None, list[Link]]]


def _read_sonic(name: str, switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    from unifab.collect.sonic import sonic_lldp_links, switch_from_config_db

    config_db = switch_dir / "sonic" / "config_db.json"
    appl_db = config_db.with_name("appl_db.json")
    links = sonic_lldp_links(name, appl_db, problems) if appl_db.is_file() else []
    return switch_from_config_db(name, config_db, problems), links


def _read_eos(name: str, switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    from unifab.collect.eos import eos_lldp_links, switch_from_eos

    eos_dir = switch_dir / "eos"
    return switch_from_eos(name, eos_dir, problems), eos_lldp_links(name, eos_dir, problems)


def _read_nvue(name: str, switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    from unifab.collect.nvue import nvue_lldp_links, switch_from_nvue

    nvue_dir = switch_dir / "nvue"
    return switch_from_nvue(name, nvue_dir, problems), nvue_lldp_links(name, nvue_dir, problems)


def _read_junos(name: str, switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    from unifab.collect.junos import junos_lldp_links, switch_from_junos

    junos_dir = switch_dir / "junos"
    return switch_from_junos(name, junos_dir, problems), junos_lldp_links(name, junos_dir, problems)


# The reader of each platform that lives in a switch directory (see unifab.platforms), in the order tried.
SWITCH_READERS: dict[str, SwitchReader] = {
    "sonic": _read_sonic,
    "eos": _read_eos,
    "nvue": _read_nvue,
    "junos": _read_junos,
}


def _load_switch(switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    """One switch directory: the first platform whose configuration file is there, and the links its LLDP saw.

    Without one, an ``INPUT-MISSING`` names the device and what was looked for; an OS directory no platform
    declares (``dellos10/``, say) is named as such, never read as another OS. A switch whose last ``unifab
    collect`` failed (``collect.json``'s ``last_attempt``) is read as it is, with an ``INPUT-STALE``.
    """
    name = switch_dir.name
    _report_stale(switch_dir, problems)
    for os_name, reader in SWITCH_READERS.items():
        config_file = PLATFORMS[os_name].config_file
        if config_file is not None and (switch_dir / config_file).is_file():
            return reader(name, switch_dir, problems)
    present = [p.name for p in switch_dir.iterdir() if p.is_dir()]
    known = [os_name for os_name in present if os_name in SWITCH_READERS]
    files = [str(PLATFORMS[o].config_file) for o in SWITCH_READERS]
    wanted = f"{', '.join(files[:-1])} or {files[-1]}"
    if present and not known:
        problems.missing(
            switch_dir / present[0],
            f"switch OS directory {present[0]!r} is not one unifab reads (it reads {wanted})",
            device=name,
        )
    else:  # the platform's directory is there without its configuration, or nothing is
        expected = PLATFORMS[known[0] if known else next(iter(SWITCH_READERS))].config_file
        problems.missing(switch_dir / str(expected), f"no supported switch configuration found ({wanted})", device=name)
    return None, []


def _json_record(path: SourcePath, problems: Problems, device: str | None = None) -> dict[str, Any] | None:
    """A record unifab wrote (``collect.json``, ``collect-manifest.json``) as a JSON object; ``None`` when it is
    absent, or unreadable (then an ``INPUT-UNREADABLE`` says why)."""
    if not path.is_file():
        return None
    try:
        doc = orjson.loads(path.read_bytes())
    except OSError as exc:
        problems.unreadable(path, f"cannot read: {exc.strerror or exc}", device=device)
        return None
    except orjson.JSONDecodeError as exc:
        problems.unreadable(path, f"expected a JSON object ({exc.msg})", line=exc.lineno, device=device)
        return None
    if not isinstance(doc, dict):
        problems.unreadable(path, "expected a JSON object", device=device)
        return None
    return doc


def _report_stale(switch_dir: SourcePath, problems: Problems) -> None:
    """``INPUT-STALE`` when the switch's ``collect.json`` records a failed last attempt (the files are older)."""
    record = switch_dir / layout.COLLECT_JSON
    doc = _json_record(record, problems, device=switch_dir.name)
    if doc is None:
        return
    attempt = doc.get("last_attempt")
    if not isinstance(attempt, dict) or attempt.get("result") != "failed":
        return
    problems.stale(
        record,
        switch_dir.name,
        data_from=_text(doc.get("finished")),
        failed_at=_text(attempt.get("finished")) or _text(attempt.get("started")),
        reason=_text(attempt.get("reason")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _load_plan(plan_dir: SourcePath, problems: Problems) -> list[Link]:
    """``plan/cabling.csv`` and ``plan/topology.dot`` (PTM), merged.

    Both may be present: a cable in either is planned. Where the two disagree about a port (the dot file
    cables it to another peer than the CSV does), the CSV's cable is kept (it is unifab's own format and
    carries cable lengths) and the dot file's cable becomes an ``INPUT-UNREADABLE`` finding naming both files.
    """
    from unifab.parse.plan import topology_dot

    planned: dict[str, Link] = {}
    at: dict[Endpoint, Link] = {}
    csv_file = plan_dir / layout.CABLING_CSV.removeprefix(f"{layout.PLAN_DIR}/")
    dot_file = plan_dir / layout.TOPOLOGY_DOT.removeprefix(f"{layout.PLAN_DIR}/")
    if csv_file.is_file():
        for c in problems.parse_file(csv_file, cabling.parse) or ():
            link = Link(Endpoint(c.a_node, c.a_port), Endpoint(c.z_node, c.z_port), frozenset({"plan"}), c.cable_m)
            planned.setdefault(link.id, link)
            at.setdefault(link.a, link)
            at.setdefault(link.b, link)
    dot = problems.parse_file(dot_file, topology_dot.parse) if dot_file.is_file() else None
    for cable in dot.cables if dot is not None else ():
        link = Link(Endpoint(cable.a_node, cable.a_port), Endpoint(cable.z_node, cable.z_port), frozenset({"plan"}))
        if link.id in planned:
            continue
        clash = next((at[end] for end in (link.a, link.b) if end in at and at[end].id != link.id), None)
        if clash is not None:
            _plan_conflict(problems, dot_file, csv_file, cable.line, link, clash)
            continue
        planned[link.id] = link
        at.setdefault(link.a, link)
        at.setdefault(link.b, link)
    return list(planned.values())


def _plan_conflict(
    problems: Problems, dot_file: SourcePath, csv_file: SourcePath, line: int, dot: Link, kept: Link
) -> None:
    dot_rel, csv_rel = problems.rel(dot_file), problems.rel(csv_file)
    shared = dot.a if dot.a in (kept.a, kept.b) else dot.b
    reason = (
        f"cable {dot.a} -- {dot.b} disagrees with {csv_rel}, which cables {shared} to "
        f"{kept.b if kept.a == shared else kept.a}; the {csv_rel} cable is kept"
    )
    problems.findings.append(
        Finding(
            check="INPUT-UNREADABLE",
            severity=Severity.ERROR,
            subject={"kind": "file", "path": dot_rel, "conflicts_with": csv_rel},
            message=f"{dot_rel}:{line}: {reason}",
            evidence={
                "file": dot_rel,
                "line": line,
                "other_file": csv_rel,
                "reason": reason,
                "dot": f"{dot.a} -- {dot.b}",
                "csv": f"{kept.a} -- {kept.b}",
            },
            entities=(f"file:{dot_rel}", f"file:{csv_rel}"),
        )
    )


def _merge_links(discovered: list[Link], planned: list[Link]) -> list[Link]:
    """One link per cable: the same ends seen by LLDP and in the plan merge their sources."""
    merged: dict[str, Link] = {}
    kinds: dict[frozenset[str], frozenset[str]] = {}  # one set per combination of sources, not one per link
    for link in (*discovered, *planned):
        known = merged.get(link.id)
        if known is None:
            merged[link.id] = link
        else:
            cable = known.cable_m if known.cable_m is not None else link.cable_m
            sources = known.sources | link.sources
            merged[link.id] = Link(known.a, known.b, kinds.setdefault(sources, sources), cable)
    return list(merged.values())


def load_switch(switch_dir: SourcePath, problems: Problems) -> tuple[Switch | None, list[Link]]:
    """One switch directory exactly as :func:`load_bundle` reads it (to re-read a single device)."""
    switch, links = _load_switch(switch_dir, problems)
    return share_switch_parts(switch), links


# what the pool's workers read each kind of device directory with (module-level functions: picklable); the
# incremental session reads with the same two, so the record cache's entries serve both
_READERS: dict[str, Reader] = {"host": load_host, "switch": load_switch}


def load_plan(plan_dir: SourcePath, problems: Problems) -> list[Link]:
    """The planned cables exactly as :func:`load_bundle` reads them."""
    return _load_plan(plan_dir, problems)


def merge_links(discovered: list[Link], planned: list[Link]) -> list[Link]:
    """One link per cable, merged exactly as :func:`load_bundle` merges them."""
    return _merge_links(discovered, planned)


def load_intent_file(path: SourcePath, problems: Problems) -> QosProfile | None:
    """The bundle's ``fabric.yaml`` exactly as :func:`load_bundle` reads it."""
    return _load_intent(path, problems)
