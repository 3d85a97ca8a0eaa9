"""Incremental re-check: load a bundle once, then re-read one device and update the findings.

A :class:`Session` keeps the parsed fabric, the resolved links, the baseline as counters and the
findings of every check. ``update_host(name)`` / ``update_switch(name)`` / ``update_paths(paths)``
re-read only that device's files with the bundle loader's own readers and re-run only what the change
can move (see :mod:`unifab.session.scope`). The result always equals a full
``load_bundle`` + ``run_checks`` of the changed bundle:

* links touching the device keep their ends → their per-link checks re-run, the rest are kept;
* the device's cables, or which of its ends resolve, change → every check re-runs on the parsed fabric
  (no file is re-read);
* the baseline or a switch-link majority moves (or ties, so only the ordered pass can tell) → every
  check re-runs, again without re-reading;
* a path outside ``hosts/`` and ``switches/`` (plan, scheduler, intent) → the bundle is re-read.

Cost of the usual case is proportional to the device's links and the findings, never to the fabric.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar, cast

import orjson

from unifab import layout
from unifab.checks.context import Baseline, CheckContext, NicLink, PortLink, intent_baseline
from unifab.checks.memo import run_scope
from unifab.checks.registry import CheckSpec, registry
from unifab.collect.bundle import (
    BUNDLE_DIRS,
    device_origin,
    load_intent_parts,
    load_plan,
    load_snapshot,
    load_switch,
    merge_links,
    report_never_collected,
)
from unifab.collect.host import load_host
from unifab.collect.parallel import collect_young, gc_paused, pool_workers, read_devices
from unifab.collect.problems import Problems
from unifab.collect.record_cache import CacheStats, RecordCache
from unifab.errors import BundleError
from unifab.jsonify import to_jsonable
from unifab.model import Fabric, Finding, Host, Link, Switch, host_id, switch_id
from unifab.session.counts import BaselineCounts, PortCounts, ordered_port_values
from unifab.session.scope import (
    KEYS,
    Probe,
    Resolved,
    Scope,
    cabling_key,
    degraded_key,
    scope_of,
    uplinks_key,
)
from unifab.snapshot import Snapshot
from unifab.sources import Source, SourcePath, as_source_path, batched

__all__ = [
    "IB_FILE",
    "INTENT",
    "INTENT_KEY",
    "PLAN_KEY",
    "SCHEDULER_KEY",
    "DeviceKey",
    "Session",
    "T",
    "Update",
    "diff_findings",
    "finding_key",
]

T = TypeVar("T")
DeviceKey = tuple[str, str]  # ("host" | "switch", name)
HOST, SWITCH = "host", "switch"
PLAN_KEY: DeviceKey = ("plan", "")
SCHEDULER_KEY: DeviceKey = ("scheduler", "")
INTENT_KEY: DeviceKey = ("intent", "")
MANIFEST_KEY: DeviceKey = ("manifest", "")  # collect-manifest.json: switches whose only collect failed
NCCL_KEY: DeviceKey = ("nccl", "")  # telemetry/nccl/*.log: each host's NCCL release (FLEET-DRIVER)
INTENT = layout.INTENT
IB_FILE = layout.IBNETDISCOVER  # IB views merge into hosts: such bundles are re-read whole


@dataclass(slots=True)
class Update:
    """The findings after a change, and what changed in them."""

    findings: list[Finding]
    added: list[Finding]
    removed: list[Finding]
    devices: list[str]  # "host:<name>" / "switch:<name>" re-read, or "bundle" when all of it was
    mode: str  # "incremental", "recheck" (all checks, no re-read) or "reload" (bundle re-read)
    seconds: float = 0.0


@dataclass(slots=True)
class _Diff:
    old: list[Finding] = field(default_factory=list)
    new: list[Finding] = field(default_factory=list)


def finding_key(f: Finding) -> bytes:
    """A hashable, order-independent identity of a finding (its full JSON with sorted keys)."""
    return orjson.dumps(to_jsonable(f), option=orjson.OPT_SORT_KEYS)


def diff_findings(old: Sequence[Finding], new: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(added, removed) between two finding lists, as multisets."""
    old_keys = Counter(finding_key(f) for f in old)
    new_keys = Counter(finding_key(f) for f in new)
    added_left = new_keys - old_keys
    removed_left = old_keys - new_keys
    added: list[Finding] = []
    removed: list[Finding] = []
    for f, bucket, out in ((f, added_left, added) for f in new):
        k = finding_key(f)
        if bucket[k] > 0:
            bucket[k] -= 1
            out.append(f)
    for f in old:
        k = finding_key(f)
        if removed_left[k] > 0:
            removed_left[k] -= 1
            removed.append(f)
    return added, removed


def _resolve(fabric: Fabric, link: Link) -> Resolved | None:
    """One link's ends in the model, exactly as ``context._resolve_links`` resolves them."""
    a_port, b_port = fabric.port_at(link.a), fabric.port_at(link.b)
    if a_port is not None and b_port is not None:
        return PortLink(a_port, b_port, link)
    for nic_end, port in ((link.a, b_port), (link.b, a_port)):
        nic = fabric.nic_at(nic_end)
        if nic is not None and port is not None:
            return NicLink(nic, port, link)
    return None


def _shape(r: Resolved | None) -> tuple[object, ...] | None:
    """Which ends a resolved link joins (not their settings): a change here regroups the fabric."""
    if r is None:
        return None
    if isinstance(r, NicLink):
        return ("n", r.nic.endpoint, r.port.endpoint)
    return ("p", r.a.endpoint, r.b.endpoint)


class Session:
    """A loaded bundle whose findings follow single-device changes (see the module docstring)."""

    def __init__(
        self,
        location: str | os.PathLike[str] | Source | SourcePath,
        *,
        cache: RecordCache | None = None,
        cache_stats: CacheStats | None = None,
    ) -> None:
        """``cache``: the parsed-record cache the first load reads through (``unifab check --watch --cache``), so
        a watch over an unchanged bundle starts in little more than a ``stat`` per file; updates re-read the
        changed device itself. ``cache_stats`` counts what that load did with it."""
        self._cache, self._cache_stats = cache, cache_stats
        try:
            self.source_root = as_source_path(location)
        except ValueError as exc:
            raise BundleError(str(exc)) from None
        # where a directory bundle lives, to relate absolute changed paths to it (None for other sources)
        self.root: Path | None = location if isinstance(location, Path) else None
        self.specs: dict[str, CheckSpec] = {k: s for k, s in registry().items() if s.run is not None}
        # the checks the last update re-ran over the whole fabric, and how often each was since loading
        self.last_whole: tuple[str, ...] = ()
        self.whole_runs: Counter[str] = Counter()
        self._whole_now: list[str] = []
        self._load_all()

    # ------------------------------------------------------------------------------------- loading

    def _load_all(self) -> None:
        """Read the whole bundle, device by device, with the readers and in the order ``load_bundle`` uses."""
        root = self.source_root
        if not root.exists():
            raise BundleError(f"bundle not found: {root}")
        if not root.is_dir():
            raise BundleError(f"not a bundle directory: {root}")
        if not any((root / d).is_dir() for d in BUNDLE_DIRS):
            raise BundleError(f"not a bundle: {root} has none of {', '.join(d + '/' for d in BUNDLE_DIRS)}")
        self._whole_only = (root / IB_FILE).is_file()
        if self._whole_only:
            self._load_whole()
            return
        self.fabric = Fabric()
        self._read_at = datetime.now(UTC)
        self._origins = {
            f"{kind}:{d.name}": device_origin(d, kind)
            for kind, top in ((HOST, layout.HOSTS), (SWITCH, layout.SWITCHES))
            for d in _subdirs(root / top)
        }
        self._inputs: dict[DeviceKey, list[Finding]] = {}
        self._contrib: dict[DeviceKey, list[Link]] = {}
        host_dirs = _subdirs(root / layout.HOSTS)
        switch_dirs = _subdirs(root / layout.SWITCHES)
        with gc_paused():  # unifab.collect.parallel.gc_paused: reading frees few cycles
            self._load_devices(host_dirs, switch_dirs, pool_workers(len(host_dirs) + len(switch_dirs)))
        problems = Problems(root)
        self._contrib[PLAN_KEY] = load_plan(root / layout.PLAN_DIR, problems)
        self._inputs[PLAN_KEY] = problems.findings
        problems = Problems(root)
        report_never_collected(root, {d.name for d in switch_dirs}, problems)
        self._inputs[MANIFEST_KEY] = problems.findings
        if (root / layout.SCHEDULER).is_dir():
            from unifab.collect.scheduler import load_jobs

            problems = Problems(root)
            self.fabric.jobs = load_jobs(root / layout.SCHEDULER, problems)
            self._inputs[SCHEDULER_KEY] = problems.findings
        if (root / layout.NCCL_LOG_DIR).is_dir():
            from unifab.collect.nccl_versions import read_nccl_versions

            problems = Problems(root)
            read_nccl_versions(root, self.fabric, problems)
            self._inputs[NCCL_KEY] = problems.findings
        if (root / INTENT).is_file():
            problems = Problems(root)
            self.fabric.qos_intent, self.fabric.fleet_baseline = load_intent_parts(root / INTENT, problems)
            self._inputs[INTENT_KEY] = problems.findings
        self._relink()

    def _load_devices(self, host_dirs: list[SourcePath], switch_dirs: list[SourcePath], workers: int) -> None:
        """Every host and switch directory, with its links and findings kept per device."""
        root = self.source_root
        if workers > 1 or self._cache is not None:  # every core (unifab.collect.parallel) and/or the record cache
            jobs = [("host", d) for d in host_dirs] + [("switch", d) for d in switch_dirs]
            readers = {"host": load_host, "switch": load_switch}
            stats = self._cache_stats
            for read in read_devices(root, jobs, readers, workers, cache=self._cache, cache_stats=stats):
                key = (HOST if read.kind == "host" else SWITCH, read.name)
                if read.kind == "host":
                    host = cast(Host, read.device)
                    self.fabric.hosts[host.name] = host
                elif read.device is not None:
                    read_switch = cast(Switch, read.device)
                    self.fabric.switches[read_switch.name] = read_switch
                self._contrib[key] = read.links
                self._inputs[key] = read.findings
        else:
            for host_dir in host_dirs:
                host, links, found = _read_host(root, host_dir.name)
                self.fabric.hosts[host.name] = host
                self._contrib[(HOST, host_dir.name)] = links
                self._inputs[(HOST, host_dir.name)] = found
                collect_young()
            for switch_dir in switch_dirs:
                switch, links, found = _read_switch(root, switch_dir.name)
                if switch is not None:
                    self.fabric.switches[switch.name] = switch
                self._contrib[(SWITCH, switch_dir.name)] = links
                self._inputs[(SWITCH, switch_dir.name)] = found
                collect_young()

    def _load_whole(self) -> None:
        """A bundle with an IB discovery (its hosts merge IB views): read and check it whole, each time."""
        from unifab.checks.runner import run_checks

        snapshot = load_snapshot(self.source_root)
        self.fabric = snapshot.fabric
        self._read_at = snapshot.read_at
        self._origins = dict(snapshot.origins)
        self.findings = run_checks(self.fabric)

    def _relink(self) -> None:
        """Merge every device's cables, resolve them, and run every check (the parsed fabric, no re-read)."""
        discovered = [lk for key, links in self._contrib.items() if key[0] in (HOST, SWITCH) for lk in links]
        self.fabric.links = merge_links(discovered, self._contrib.get(PLAN_KEY, []))
        self._flatten_inputs()
        self._ctx = CheckContext.build(self.fabric)
        self._resolved: dict[str, Resolved] = {}
        self._links = {lk.id: lk for lk in self.fabric.links}
        self._whole: CheckContext | None = None
        self._node_links: dict[str, list[str]] = {}  # node -> ids of links with an end on it (sorted)
        self._switch_nic_links: dict[str, list[str]] = {}  # switch -> ids of its host links (sorted)
        self._host_nic_links: dict[str, list[str]] = {}
        for link in sorted(self.fabric.links, key=lambda lk: lk.id):
            for node in {link.a.node, link.b.node}:
                self._node_links.setdefault(node, []).append(link.id)
        for nl in self._ctx.nic_links:
            self._resolved[nl.link.id] = nl
            self._switch_nic_links.setdefault(nl.port.switch, []).append(nl.link.id)
            self._host_nic_links.setdefault(nl.nic.host, []).append(nl.link.id)
        self._switch_port_links: dict[str, list[str]] = {}  # switch -> ids of its switch links (sorted)
        for pl in self._ctx.port_links:
            self._resolved[pl.link.id] = pl
            for sw in dict.fromkeys((pl.a.switch, pl.b.switch)):
                self._switch_port_links.setdefault(sw, []).append(pl.link.id)
        self._jobs_of: dict[str, list[str]] = {}
        for job in self.fabric.jobs.values():
            for host in dict.fromkeys(job.hosts):
                self._jobs_of.setdefault(host, []).append(job.id)
        self._counts = BaselineCounts.build(self._ctx.nic_links)
        self._ports = PortCounts(self._ctx.port_links)
        self._port_values = ordered_port_values(self._ctx.port_links)
        # The counters mirror the majority baseline; when the context builds it otherwise (an intent file),
        # every change takes the full path instead of trusting them.
        self._counted = self._baseline_now() == self._ctx.baseline
        with run_scope():
            self._by_spec = {spec_id: _run(spec, self._ctx) for spec_id, spec in self.specs.items()}
        self.findings = self._assemble()

    def _baseline_now(self) -> Baseline | None:
        """The baseline from the counters, with the intent's values over the majority's as the context does."""
        found = self._counts.baseline()
        if found is None or self.fabric.qos_intent is None:
            return found
        return intent_baseline(self.fabric.qos_intent, found)

    def _flatten_inputs(self) -> None:
        # a switch the manifest says was never collected that has since been written is read, not missing
        never = self._inputs.get(MANIFEST_KEY, [])
        self._inputs[MANIFEST_KEY] = [f for f in never if (SWITCH, str(f.subject.get("device"))) not in self._inputs]
        self._input_list = [f for found in self._inputs.values() for f in found]
        self.fabric.input_findings = self._input_list

    def _assemble(self) -> list[Finding]:
        out = list(self._input_list)
        for found in self._by_spec.values():
            out.extend(found)
        return sorted(out, key=Finding.sort_key)

    def _full_ctx(self) -> CheckContext:
        """The check context over every link, from the maintained resolutions (no re-resolving)."""
        if self._whole is not None:
            return self._whole
        nic = tuple(sorted((r for r in self._resolved.values() if isinstance(r, NicLink)), key=lambda r: r.link.id))
        port = tuple(sorted((r for r in self._resolved.values() if isinstance(r, PortLink)), key=lambda r: r.link.id))
        self._whole = dataclasses.replace(self._ctx, nic_links=nic, port_links=port)
        return self._whole

    # ------------------------------------------------------------------------------------- updates

    def update_host(self, name: str) -> Update:
        """Re-read ``hosts/<name>/`` and return the updated findings."""
        return self._timed([(HOST, name)])

    def update_switch(self, name: str) -> Update:
        """Re-read ``switches/<name>/`` and return the updated findings."""
        return self._timed([(SWITCH, name)])

    def update_paths(self, paths: Iterable[Path | str]) -> Update:
        """Re-read the devices owning ``paths`` (absolute, or relative to the bundle); other paths re-read all."""
        devices: dict[DeviceKey, None] = {}
        for raw in paths:
            path = Path(raw)
            if path.is_absolute():
                if self.root is None or not path.is_relative_to(self.root.absolute()):
                    return self.reload()
                path = path.relative_to(self.root.absolute())
            parts = path.parts
            if len(parts) >= 2 and parts[0] in (layout.HOSTS, layout.SWITCHES):
                devices[(HOST if parts[0] == layout.HOSTS else SWITCH, parts[1])] = None
            elif len(parts) >= 2 and parts[0] == layout.TELEMETRY_DIR and "/".join(parts[:2]) != layout.NCCL_LOG_DIR:
                continue  # counter series, kernel logs, rounds: read by unifab health, by no check (NCCL logs
                # give the NCCL versions FLEET-DRIVER judges: a change there re-reads)
            else:
                return self.reload()
        return self._timed(list(devices))

    def snapshot(self) -> Snapshot:
        """The fabric as it stands now, frozen: later updates never change a snapshot already handed out."""
        f = self.fabric
        fabric = dataclasses.replace(
            f,
            hosts=dict(f.hosts),
            switches=dict(f.switches),
            links=list(f.links),
            input_findings=list(f.input_findings),
            jobs=dict(f.jobs),
        )
        origins = MappingProxyType(dict(sorted(self._origins.items())))
        return Snapshot(fabric, self._read_at, str(self.source_root), origins)

    def reload(self) -> Update:
        """Re-read the whole bundle (a plan, scheduler or intent change) and re-run every check."""
        start = time.perf_counter()
        before = self.findings
        self._load_all()
        added, removed = diff_findings(before, self.findings)
        return Update(self.findings, added, removed, ["bundle"], "reload", time.perf_counter() - start)

    def _timed(self, keys: list[DeviceKey]) -> Update:
        if self._whole_only:
            return self.reload()
        start = time.perf_counter()
        diff = _Diff()
        self._whole_now = []
        modes = []
        for key in keys:
            modes.append(self._update_device(key, diff))
        self.last_whole = tuple(dict.fromkeys(self._whole_now))
        self.whole_runs.update(self.last_whole)
        added, removed = diff_findings(diff.old, diff.new)
        mode = "incremental" if all(m == "incremental" for m in modes) else "recheck"
        return Update(self.findings, added, removed, [f"{k}:{n}" for k, n in keys], mode, time.perf_counter() - start)

    def _update_device(self, key: DeviceKey, diff: _Diff) -> str:
        kind, name = key
        device_dir = self.source_root / (layout.HOSTS if kind == HOST else layout.SWITCHES) / name
        self._whole = None
        self._read_at = datetime.now(UTC)
        if not device_dir.is_dir():
            self._origins.pop(f"{kind}:{name}", None)
            if key not in self._contrib:
                return "incremental"  # never known, still absent
            self._forget(key)
            return self._recheck_all(diff)
        self._origins[f"{kind}:{name}"] = device_origin(device_dir, kind)
        if kind == HOST:
            host, links, found = _read_host(self.source_root, name)
            new_obj: Host | Switch | None = host
        else:
            new_obj, links, found = _read_switch(self.source_root, name)
        old_obj = self.fabric.hosts.get(name) if kind == HOST else self.fabric.switches.get(name)
        if isinstance(new_obj, Host) and (self.source_root / layout.NCCL_LOG_DIR).is_dir():
            new_obj = self._with_nccl_versions(new_obj, old_obj)
        old_found = tuple(self._inputs.get(key, []))
        known = key in self._contrib
        same_cables = known and self._contrib[key] == links
        self._contrib[key] = links
        if not known:
            self._contrib = _in_load_order(self._contrib)
        self._set_inputs(key, found, diff)
        if not known or not same_cables or (old_obj is None) != (new_obj is None) or new_obj is None:
            self._put(kind, name, new_obj)
            return self._recheck_all(diff)

        affected = self._node_links.get(name, [])
        old_links = [self._resolved[lid] for lid in affected if lid in self._resolved]
        ends = {end for lid in affected for end in (self._links[lid].a, self._links[lid].b) if end.node == name}
        old_cabling = cabling_key(self.fabric, kind, name, ends)
        old_degraded = degraded_key(old_links)
        old_uplinks = uplinks_key(self.fabric, name) if kind == SWITCH else ()
        old_probe = Probe(self.fabric, kind, name, tuple(old_links), old_found, self._ctx.baseline)
        old_keys = {cid: fn(old_probe) for cid, fn in KEYS.items() if cid in self.specs}
        self._put(kind, name, new_obj)
        new_resolved = {lid: _resolve(self.fabric, self._links[lid]) for lid in affected}
        if any(_shape(self._resolved.get(lid)) != _shape(r) for lid, r in new_resolved.items()):
            return self._recheck_all(diff)
        new_links: list[Resolved] = []
        for lid, r in new_resolved.items():
            if r is not None:
                self._resolved[lid] = r
                new_links.append(r)
        old_nic = [r for r in old_links if isinstance(r, NicLink)]
        new_nic = [r for r in new_links if isinstance(r, NicLink)]
        self._counts.replace(old_nic, new_nic)
        self._ports.replace(
            [r for r in old_links if isinstance(r, PortLink)], [r for r in new_links if isinstance(r, PortLink)]
        )
        baseline = self._baseline_now() if self._counted else None
        port_values = self._ports.values()
        if baseline != self._ctx.baseline or port_values != self._port_values:
            return self._recheck_all(diff)

        sub = dataclasses.replace(
            self._ctx,
            nic_links=tuple(new_nic),
            port_links=tuple(r for r in new_links if isinstance(r, PortLink)),
            fabric_values=dict(self._port_values),
        )
        new_probe = Probe(self.fabric, kind, name, tuple(new_links), tuple(found), self._ctx.baseline)
        touched = set(affected)
        switches = sorted({r.port.switch for r in new_nic})
        with run_scope():  # the cabling checks share one diff of the whole fabric
            for spec_id, spec in self.specs.items():
                scope = scope_of(spec_id)
                if spec_id in old_keys and KEYS[spec_id](new_probe) != old_keys[spec_id]:
                    self._rerun_whole(spec, diff)
                elif scope is Scope.LINK:
                    self._rerun(spec, sub, touched, diff)
                elif scope in (Scope.SWITCH, Scope.TIERS):
                    ids = sorted({lid for s in switches for lid in self._switch_nic_links.get(s, [])})
                    group = tuple(r for lid in ids if isinstance(r := self._resolved[lid], NicLink))
                    self._rerun(spec, dataclasses.replace(sub, nic_links=group, port_links=()), set(ids), diff)
                elif scope is Scope.PER_SWITCH:
                    if kind == SWITCH:
                        self._rerun_switch(spec, name, diff)
                elif scope is Scope.JOBS:
                    self._rerun_jobs(spec, kind, name, diff)
                elif scope is Scope.HOST:
                    if kind == HOST:
                        self._rerun_host(spec, name, old_obj, diff)
                elif scope is Scope.UPLINKS:
                    if kind == SWITCH and uplinks_key(self.fabric, name) != old_uplinks:
                        self._rerun_whole(spec, diff)
                elif scope is Scope.CABLING:
                    if cabling_key(self.fabric, kind, name, ends) != old_cabling:
                        self._rerun_whole(spec, diff)
                elif scope is Scope.DEGRADED:
                    if degraded_key(new_links) != old_degraded:
                        self._rerun_whole(spec, diff)
                elif scope is not Scope.KEYED:  # KEYED: its projection did not move, its findings stand
                    self._rerun_whole(spec, diff)
        self.findings = self._assemble()
        return "incremental"

    # ------------------------------------------------------------------------------------- helpers

    def _put(self, kind: str, name: str, obj: Host | Switch | None) -> None:
        if kind == HOST:
            assert isinstance(obj, Host)
            is_new = name not in self.fabric.hosts
            self.fabric.hosts[name] = obj
            if is_new:
                self.fabric.hosts = dict(sorted(self.fabric.hosts.items()))
            return
        if obj is None:
            self.fabric.switches.pop(name, None)
            return
        assert isinstance(obj, Switch)
        is_new = name not in self.fabric.switches
        self.fabric.switches[name] = obj
        if is_new:
            self.fabric.switches = dict(sorted(self.fabric.switches.items()))

    def _forget(self, key: DeviceKey) -> None:
        kind, name = key
        self._contrib.pop(key, None)
        self._inputs.pop(key, None)
        if kind == HOST:
            self.fabric.hosts.pop(name, None)
        else:
            self.fabric.switches.pop(name, None)

    def _set_inputs(self, key: DeviceKey, found: list[Finding], diff: _Diff) -> None:
        old = self._inputs.get(key, [])
        if old == found and key in self._inputs:
            return
        diff.old.extend(old)
        diff.new.extend(found)
        is_new = key not in self._inputs
        self._inputs[key] = found
        if is_new:
            self._inputs = _in_load_order(self._inputs)
        self._flatten_inputs()

    def _with_nccl_versions(self, host: Host, old: Host | Switch | None) -> Host:
        """``host`` with the NCCL releases ``telemetry/nccl/`` gives it: they do not live in the host's
        directory (a change of the logs re-reads the bundle), so a re-read host keeps what it had; a host new
        to the session gets its own from the logs (their problems are already the NCCL_KEY inputs)."""
        if isinstance(old, Host):
            return dataclasses.replace(host, nccl_versions=old.nccl_versions)
        from unifab.collect.nccl_versions import read_nccl_versions

        alone = Fabric(hosts={host.name: host})
        read_nccl_versions(self.source_root, alone, Problems(self.source_root))
        return alone.hosts[host.name]

    def _recheck_all(self, diff: _Diff) -> str:
        """Every check over the parsed fabric; the diff covers all findings."""
        old_specs = [f for found in self._by_spec.values() for f in found]
        self._whole_now.extend(self.specs)
        self._relink()
        diff.old.extend(old_specs)
        diff.new.extend(f for found in self._by_spec.values() for f in found)
        return "recheck"

    def _rerun(self, spec: CheckSpec, ctx: CheckContext, links: set[str], diff: _Diff) -> None:
        """Replace the findings of ``spec`` about ``links`` by a run over a context holding only those links."""
        current = self._by_spec[spec.id]
        kept = [f for f in current if links.isdisjoint(f.entities)]
        dropped = [f for f in current if not links.isdisjoint(f.entities)]
        fresh = _run(spec, ctx)
        self._by_spec[spec.id] = kept + fresh
        diff.old.extend(dropped)
        diff.new.extend(fresh)

    def _rerun_whole(self, spec: CheckSpec, diff: _Diff) -> None:
        self._whole_now.append(spec.id)
        fresh = _run(spec, self._full_ctx())
        diff.old.extend(self._by_spec[spec.id])
        diff.new.extend(fresh)
        self._by_spec[spec.id] = fresh

    def _rerun_host(self, spec: CheckSpec, name: str, old: Host | Switch | None, diff: _Diff) -> None:
        """Re-run a per-host check for one host, over a fabric view holding that host, its links and its jobs.

        The host's findings are those about the host, one of its NICs or one of its GPUs (before or after)."""
        host = self.fabric.hosts[name]
        links = [self._links[lid] for lid in self._node_links.get(name, [])]
        jobs = {jid: self.fabric.jobs[jid] for jid in self._jobs_of.get(name, [])}
        fabric = dataclasses.replace(self.fabric, hosts={name: host}, links=links, jobs=jobs)
        ctx = dataclasses.replace(self._ctx, fabric=fabric, nic_links=(), port_links=())
        owned = {host_id(name)}
        for h in (host, old):
            if isinstance(h, Host):
                owned.update(nic.id for nic in h.nics.values())
                owned.update(gpu.id for gpu in h.gpus.values())
        self._replace_owned(spec, ctx, lambda f: f.subject.get("id") in owned, diff)

    def _rerun_switch(self, spec: CheckSpec, name: str, diff: _Diff) -> None:
        """Re-run a per-switch check over the switch's host and switch links; its own findings are replaced."""
        nic_ids = self._switch_nic_links.get(name, [])
        port_ids = self._switch_port_links.get(name, [])
        nic = tuple(r for lid in nic_ids if isinstance(r := self._resolved[lid], NicLink))
        port = tuple(r for lid in port_ids if isinstance(r := self._resolved[lid], PortLink))
        ctx = dataclasses.replace(self._ctx, nic_links=nic, port_links=port)
        subject = switch_id(name)
        self._replace_owned(spec, ctx, lambda f: f.subject.get("id") == subject, diff)

    def _replace_owned(self, spec: CheckSpec, ctx: CheckContext, owns: Callable[[Finding], bool], diff: _Diff) -> None:
        """The findings of ``spec`` that ``owns`` picks, replaced by those a run over ``ctx`` gives (the run's
        others are about devices outside the view, whose findings stand)."""
        current = self._by_spec[spec.id]
        dropped = [f for f in current if owns(f)]
        kept = [f for f in current if not owns(f)]
        fresh = [f for f in _run(spec, ctx) if owns(f)]
        self._by_spec[spec.id] = kept + fresh
        diff.old.extend(dropped)
        diff.new.extend(fresh)

    def _rerun_jobs(self, spec: CheckSpec, kind: str, name: str, diff: _Diff) -> None:
        """Re-run a per-job check for the jobs on the changed host, or on the hosts behind the changed switch."""
        hosts = [name] if kind == HOST else list(self._ctx.hosts_behind.get(name, ()))
        job_ids = {j for h in hosts for j in self._jobs_of.get(h, [])}
        if not job_ids:
            return
        jobs = {jid: job for jid, job in self.fabric.jobs.items() if jid in job_ids}
        job_hosts = {h for job in jobs.values() for h in job.hosts}
        ids = sorted(lid for h in job_hosts for lid in self._host_nic_links.get(h, []))
        nic = tuple(r for lid in ids if isinstance(r := self._resolved[lid], NicLink))
        links = [self._links[lid] for lid in sorted({lid for h in job_hosts for lid in self._node_links.get(h, [])})]
        fabric = dataclasses.replace(self.fabric, jobs=jobs, links=links)
        ctx = dataclasses.replace(self._ctx, fabric=fabric, nic_links=nic, port_links=())
        current = self._by_spec[spec.id]
        dropped = [f for f in current if not job_ids.isdisjoint(f.entities)]
        kept = [f for f in current if job_ids.isdisjoint(f.entities)]
        fresh = _run(spec, ctx)
        self._by_spec[spec.id] = kept + fresh
        diff.old.extend(dropped)
        diff.new.extend(fresh)


def _in_load_order(per_device: dict[DeviceKey, T]) -> dict[DeviceKey, T]:
    """Per-device data in the loader's order: hosts, switches (each by name), plan, scheduler."""
    rank = {HOST: 0, SWITCH: 1, "plan": 2, "scheduler": 3, "intent": 4}
    return dict(sorted(per_device.items(), key=lambda kv: (rank.get(kv[0][0], 5), kv[0][1])))


def _subdirs(path: SourcePath) -> list[SourcePath]:
    return sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []


def _read_host(root: SourcePath, name: str) -> tuple[Host, list[Link], list[Finding]]:
    problems = Problems(root)
    with batched(root.source):  # its directories listed once, for this read only (a later one sees changes)
        host, links = load_host(root / layout.HOSTS / name, problems)
    return host, links, problems.findings


def _read_switch(root: SourcePath, name: str) -> tuple[Switch | None, list[Link], list[Finding]]:
    problems = Problems(root)
    with batched(root.source):
        switch, links = load_switch(root / layout.SWITCHES / name, problems)
    return switch, links, problems.findings


def _run(spec: CheckSpec, ctx: CheckContext) -> list[Finding]:
    if spec.run is None:
        return []
    return list(spec.run(ctx))
