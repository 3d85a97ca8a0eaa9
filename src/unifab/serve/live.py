"""The fabric the server holds: its current bundle (in memory, by part) and an incremental :class:`Session`.

:class:`BundleFiles` is a :class:`unifab.api.Source` over the parts uploads delivered; a part is replaced
whole. The :class:`Session` reads through it, so after an upload of ``hosts/gpu017`` only that host is
re-read and only what it can move is re-checked (``Session.update_paths``); a plan, scheduler or intent
part re-reads the bundle. The session is not thread-safe, and neither is this class: the server holds
:attr:`LiveFabric.lock` around every change and every read of the session.

:attr:`LiveFabric.generation` is the newest ingest generation of the store's ``device_files`` the fabric
has caught up with (every replica catches up from the store before it answers from or re-checks its
fabric); :attr:`LiveFabric.unreported` holds what was applied since the last re-check round was written.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from unifab.api import BundleError, Finding, MemorySource, Session, Snapshot, SourcePath, findings_document
from unifab.layout import TELEMETRY_DIR
from unifab.model import FABRIC_KINDS, Host, Switch
from unifab.serve.store import CurrentFinding, DeviceState
from unifab.sources import Stamp

if TYPE_CHECKING:
    from unifab.collect.record_cache import CacheStats, RecordCache

__all__ = [
    "Applied",
    "BundleFiles",
    "LiveFabric",
    "combined",
    "current_findings",
    "device_states",
    "devices_of",
    "host_fabric",
    "ib_switches",
]

_SEVERITY_ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}
_DEVICE_TOPS = {"hosts": "host", "switches": "switch"}


class BundleFiles:
    """A bundle assembled from parts (``hosts/<h>``, ``switches/<s>``, ``plan``, ...), each a MemorySource."""

    def __init__(self, label: str = "unifab-serve") -> None:
        self._label = label
        self._parts: dict[str, MemorySource] = {}
        self._raw: dict[str, dict[str, bytes]] = {}
        self._tops: dict[str, set[str]] = {}  # "hosts" -> host names; "plan" -> {} ...

    @property
    def label(self) -> str:
        return self._label

    def parts(self) -> dict[str, dict[str, bytes]]:
        return dict(self._raw)

    def replace(self, parts: dict[str, dict[str, bytes] | None]) -> None:
        """Put each part in place of the one before (``None`` removes it)."""
        for part, files in parts.items():
            top, _, name = part.partition("/")
            if files is None:
                self._parts.pop(part, None)
                self._raw.pop(part, None)
                names = self._tops.get(top)
                if names is not None:
                    names.discard(name)
                    if not names and top in _DEVICE_TOPS:
                        del self._tops[top]
                if top not in _DEVICE_TOPS:
                    self._tops.pop(top, None)
                continue
            self._parts[part] = MemorySource(files, self._label)
            self._raw[part] = files
            names = self._tops.setdefault(top, set())
            if name:
                names.add(name)

    def _part(self, rel: str) -> MemorySource | None:
        head, _, rest = rel.partition("/")
        if head in _DEVICE_TOPS:
            name = rest.partition("/")[0]
            return self._parts.get(f"{head}/{name}") if name else None
        return self._parts.get(head)

    def read_bytes(self, rel: str) -> bytes:
        source = self._part(rel)
        if source is None:
            raise FileNotFoundError(f"{self._label}: no file {rel}")
        return source.read_bytes(rel)

    def kind(self, rel: str) -> str | None:
        if rel == "" or (rel in _DEVICE_TOPS and rel in self._tops):
            return "dir"
        source = self._part(rel)
        return None if source is None else source.kind(rel)

    def names(self, rel: str) -> list[str]:
        if rel == "":
            return sorted(self._tops)
        if rel in _DEVICE_TOPS:
            return sorted(self._tops.get(rel, ()))
        source = self._part(rel)
        return [] if source is None else source.names(rel)

    def stamp(self, rel: str) -> Stamp | None:
        source = self._part(rel)
        return None if source is None else source.stamp(rel)


def _changed_paths(parts: dict[str, dict[str, bytes]], previous: dict[str, dict[str, bytes] | None]) -> list[str]:
    """What the session re-reads: each part, except ``telemetry``, named by the files that differ from the part
    before (most of it is read by health alone; a changed NCCL log under it re-reads the bundle)."""
    out: list[str] = []
    for part in sorted(parts):
        if part == TELEMETRY_DIR:
            old, new = previous.get(part) or {}, parts[part]
            out += sorted(rel for rel in old.keys() | new.keys() if old.get(rel) != new.get(rel))
        else:
            out.append(part)
    return out


@dataclass(frozen=True, slots=True)
class Applied:
    mode: str  # "load" (the first part), or the session's update mode
    seconds: float
    findings: list[Finding]


_MODE_RANK = {"incremental": 0, "recheck": 1, "reload": 2, "load": 3}


def combined(applied: list[Applied]) -> tuple[str, float]:
    """The mode and time of several applies reported as one (the widest mode, the summed time)."""
    if not applied:
        return "recheck", 0.0
    return max((a.mode for a in applied), key=_MODE_RANK.__getitem__), sum(a.seconds for a in applied)


class LiveFabric:
    """The current bundle and its session (see the module docstring)."""

    def __init__(self, cache: RecordCache | None = None, cache_stats: CacheStats | None = None) -> None:
        """``cache``: what a full load (the first part, a reload) reads each device through, keyed by content;
        ``cache_stats`` (a fresh one with a cache) counts what those loads did with it."""
        self.files = BundleFiles()
        if cache is not None and cache_stats is None:
            from unifab.collect.record_cache import CacheStats

            cache_stats = CacheStats()
        self.cache, self.cache_stats = cache, cache_stats
        self.session: Session | None = None
        self.lock = threading.RLock()
        self.generation = -1  # nothing read from the store yet (rows from before generations are 0)
        self.unreported: list[Applied] = []

    def apply(self, parts: dict[str, dict[str, bytes]]) -> Applied:
        """Put the parts in place and re-check; on any error the fabric is as it was before."""
        previous: dict[str, dict[str, bytes] | None] = {p: self.files.parts().get(p) for p in parts}
        start = time.perf_counter()
        self.files.replace(dict(parts))
        try:
            if self.session is None:
                self.session = self._session()
                mode = "load"
            else:
                mode = self.session.update_paths(_changed_paths(parts, previous)).mode
        except Exception:
            self.files.replace(previous)
            self.reload()
            raise
        return Applied(mode, time.perf_counter() - start, list(self.session.findings))

    def reload(self) -> None:
        """A fresh session over the files as they are now (after putting parts back)."""
        try:
            self.session = self._session() if self.files.parts() else None
        except BundleError:
            self.session = None

    def _session(self) -> Session:
        return Session(SourcePath(self.files), cache=self.cache, cache_stats=self.cache_stats)

    def findings(self) -> list[Finding]:
        return [] if self.session is None else list(self.session.findings)

    def device(self, kind: str, name: str) -> Host | Switch | None:
        """The current model of ``host``/``switch`` ``name`` (device objects are replaced, never mutated)."""
        with self.lock:
            if self.session is None:
                return None
            fabric = self.session.fabric
            return fabric.hosts.get(name) if kind == "host" else fabric.switches.get(name)

    def snapshot(self) -> Snapshot | None:
        return None if self.session is None else self.session.snapshot()


def devices_of(
    finding: Finding, hosts: set[str] | dict[str, Any], switches: set[str] | dict[str, Any]
) -> tuple[str, ...]:
    """Entity ids of the devices a finding is about, from its entities and subject (``link:a:p--b:q`` → both)."""
    nodes: set[str] = set()
    texts = [*finding.entities, *finding.subject.values()]
    for text in texts:
        kind, _, rest = text.partition(":")
        if kind == "link":
            nodes.update(end.partition(":")[0] for end in rest.split("--"))
        elif kind in ("host", "switch"):
            nodes.add(rest)
        elif kind in ("nic", "gpu", "port", "optic"):
            nodes.add(rest.partition(":")[0])
        else:
            nodes.add(kind)  # "gpu002:eth6" in a link subject, or a bare name
    out = []
    for node in nodes:
        if node in hosts:
            out.append(f"host:{node}")
        elif node in switches:
            out.append(f"switch:{node}")
    return tuple(sorted(out))


def current_findings(findings: list[Finding], snapshot: Snapshot | None) -> list[CurrentFinding]:
    """The findings as the store keeps them: document from ``findings_document``, a digest, the devices."""
    docs = findings_document("unifab-serve", findings)["findings"]
    hosts = snapshot.fabric.hosts if snapshot else {}
    switches = snapshot.fabric.switches if snapshot else {}
    out = []
    for finding, doc in zip(findings, docs, strict=True):
        body = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
        out.append(
            CurrentFinding(
                key=finding.key,
                check=finding.check,
                severity=finding.severity.value,
                severity_order=_SEVERITY_ORDER[finding.severity.value],
                subject=dict(finding.subject),
                message=finding.message,
                document=dict(doc),
                digest=hashlib.sha256(body).hexdigest(),
                devices=devices_of(finding, hosts, switches),
            )
        )
    return out


def device_states(snapshot: Snapshot | None, devices: list[str], snapshot_id: str) -> list[DeviceState]:
    """The store's rows for ``devices`` (entity ids) as the snapshot has them."""
    if snapshot is None:
        return []
    out = []
    for name in devices:
        kind, _, short = name.partition(":")
        origin = snapshot.origin(name)
        part = f"{'hosts' if kind == 'host' else 'switches'}/{short}"
        if kind == "switch":
            switch = snapshot.fabric.switches.get(short)
            os_name = switch.os if switch else None
            fabric = switch.fabric if switch else None
            if switch is not None and switch.fabric == "ib":
                part = "ib"  # an InfiniBand switch is read from the subnet's files, not a directory of its own
        else:
            os_name = "linux"
            fabric = host_fabric(snapshot.fabric.hosts.get(short))
        out.append(
            DeviceState(
                name=name,
                kind=kind,
                os=os_name,
                collected_at=origin.collected_at if origin else None,
                origin={
                    "snapshot": snapshot_id,
                    "collector": origin.collector if origin else None,
                    "part": part,
                },
                fabric=fabric,
            )
        )
    return out


def host_fabric(host: Host | None) -> str | None:
    """``roce``, ``ib`` or ``roce+ib`` (RoCE NICs and an InfiniBand HCA) from a host's NICs; ``None``: none."""
    kinds = {nic.fabric for nic in host.nics.values()} if host is not None else set()
    if not kinds:
        return None
    return "+".join(k for k in FABRIC_KINDS if k in kinds)


def ib_switches(snapshot: Snapshot | None) -> list[str]:
    """Entity ids of the InfiniBand switches (platform ``ib``, read from the bundle's ``ib/`` part)."""
    if snapshot is None:
        return []
    return [f"switch:{name}" for name, sw in sorted(snapshot.fabric.switches.items()) if sw.fabric == "ib"]
