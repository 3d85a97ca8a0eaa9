"""Read-only views of the live fabric for the API and the UI: links with both ends, jobs with a verdict, topology.

:class:`FabricIndex` is built once per state of the live fabric (a new ingest generation, or a re-check
that replaced the findings) in one pass over links and one over findings, and then answers every request
until the fabric changes: a page of links is a bisect into the sorted link ids, a link's findings a dict
lookup by entity, never a scan per row. The index copies the fabric's dicts and lists, so a request reading
it never sees a half-applied update (device objects are replaced, never mutated).

Shapes are the library's: a finding is :class:`unifab.api.FindingDoc`, a NIC or port is its model as
:func:`unifab.jsonify.to_jsonable` prints it, the rail grid is :func:`unifab.report.railmap.grid_json`.
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from unifab.api import Fabric, Finding, FindingDoc
from unifab.checks.context import CheckContext
from unifab.checks.job_nics import job_fabrics
from unifab.checks.runner import scope_to_job
from unifab.jsonify import to_jsonable
from unifab.model import Job, Link, Nic, Port
from unifab.report import railmap
from unifab.report.findings_json import finding_doc, severity_counts
from unifab.report.html import evidence_boxes
from unifab.serve.store import decode_cursor, encode_cursor

V = TypeVar("V")
__all__ = ["OK", "FabricIndex", "Latest", "compare_ends", "job_verdict", "link_kind"]

OK = "ok"
_RANK = {"critical": 4, "error": 3, "warning": 2, "info": 1, OK: 0}


def _worst(levels: Iterable[str]) -> str:
    return max(levels, key=_RANK.__getitem__, default=OK)


@dataclass(slots=True)
class FabricIndex:
    """One state of the live fabric, indexed for the views (see the module docstring)."""

    key: tuple[int, ...]
    fabric: Fabric  # a shallow copy: its own dicts and lists
    findings: list[Finding]
    link_ids: list[str]  # sorted
    links: dict[str, Link]
    by_node: dict[str, list[str]]  # node name -> sorted ids of its links
    by_entity: dict[str, list[int]]  # entity id -> indexes into findings
    job_ids: list[str]  # sorted
    node_severity: dict[str, str]  # entity id host:<h> / switch:<s> -> worst finding about it
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ctx: CheckContext | None = None
    _grid: railmap.RailGrid | None = None
    _jobs: dict[str, list[Finding]] = field(default_factory=dict)
    _status: dict[tuple[str, str, str], int] | None = None
    _impacted: list[dict[str, Any]] | None = None

    @classmethod
    def build(cls, key: tuple[int, ...], fabric: Fabric, findings: list[Finding]) -> FabricIndex:
        # every field carried (the QoS intent, the fleet baseline, the IB subnet), the mutable ones copied
        copy = dataclasses.replace(
            fabric,
            hosts=dict(fabric.hosts),
            switches=dict(fabric.switches),
            links=list(fabric.links),
            input_findings=list(fabric.input_findings),
            jobs=dict(fabric.jobs),
        )
        links = {lk.id: lk for lk in copy.links}
        by_node: dict[str, list[str]] = {}
        for link_id in sorted(links):
            lk = links[link_id]
            by_node.setdefault(lk.a.node, []).append(link_id)
            if lk.b.node != lk.a.node:
                by_node.setdefault(lk.b.node, []).append(link_id)
        by_entity: dict[str, list[int]] = {}
        node_severity: dict[str, str] = {}
        for i, f in enumerate(findings):
            for entity in dict.fromkeys((*f.entities, *_subject_entities(f))):
                by_entity.setdefault(entity, []).append(i)
            for node in _nodes_of(f, copy):
                node_severity[node] = _worst((node_severity.get(node, OK), f.severity.value))
        return cls(
            key, copy, list(findings), sorted(links), links, by_node, by_entity, sorted(copy.jobs), node_severity
        )

    # ------------------------------------------------------------------------------------- links

    def link_entities(self, lk: Link) -> list[str]:
        """The entity ids whose findings concern this cable: the link, each end's NIC or port."""
        out = [lk.id]
        for end in (lk.a, lk.b):
            nic = self.fabric.nic_at(end)
            if nic is not None and nic.rdma_dev:
                out.append(f"nic:{end.node}:{nic.rdma_dev}")
            if end.node in self.fabric.switches:
                out.append(f"port:{end.node}:{end.port}")
        return out

    def link_findings(self, lk: Link) -> list[Finding]:
        seen: dict[int, None] = {}
        for entity in self.link_entities(lk):
            for i in self.by_entity.get(entity, ()):
                seen.setdefault(i, None)
        return [self.findings[i] for i in sorted(seen)]

    def link_summary(self, lk: Link) -> dict[str, Any]:
        found = self.link_findings(lk)
        return {
            "id": lk.id,
            "kind": link_kind(lk, self.fabric),
            "a": self._end(lk.a.node, lk.a.port),
            "b": self._end(lk.b.node, lk.b.port),
            "sources": sorted(lk.sources),
            "cable_m": lk.cable_m,
            "severity": _worst(f.severity.value for f in found),
            "findings": len(found),
        }

    def link_detail(self, lk: Link) -> dict[str, Any]:
        """Both ends' model and QoS side by side, the fields that differ, and every finding with its fixes."""
        found = self.link_findings(lk)
        doc = self.link_summary(lk)
        for side, end in (("a", lk.a), ("b", lk.b)):
            nic, port = self.fabric.nic_at(end), self.fabric.port_at(end)
            doc[side]["model"] = to_jsonable(nic if nic is not None else port)
        doc["compare"] = compare_ends(
            self.fabric.nic_at(lk.a) or self.fabric.port_at(lk.a),
            self.fabric.nic_at(lk.b) or self.fabric.port_at(lk.b),
        )
        doc["items"] = [finding_item(f) for f in found]
        return doc

    def link_status(self) -> dict[tuple[str, str, str], int]:
        """Links by (fabric, kind, status): ``roce``/``ib``, ``host``/``fabric``/``other``, and the worst finding
        on the link, its NIC or its port (``ok`` for none), as the link list shows it; computed once per state."""
        with self._lock:
            if self._status is not None:
                return self._status
        counts: dict[tuple[str, str, str], int] = {}
        for lk in self.links.values():
            worst = _worst(f.severity.value for f in self.link_findings(lk))
            key = (self.fabric.link_fabric(lk), link_kind(lk, self.fabric), worst)
            counts[key] = counts.get(key, 0) + 1
        with self._lock:
            self._status = counts
        return counts

    def _end(self, node: str, port: str) -> dict[str, Any]:
        if node in self.fabric.hosts:
            kind = "host"
        elif node in self.fabric.switches:
            kind = "switch"
        else:
            kind = "unknown"  # planned or seen, but not collected
        device = f"{kind}:{node}" if kind != "unknown" else None
        return {"device": device, "node": node, "port": port, "kind": kind}

    def page_links(
        self,
        *,
        device: str | None,
        flagged: bool,
        severity: str | None,
        kind: str | None,
        cursor: str | None,
        limit: int,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of link summaries in id order, filtered; the cursor is the last id of the page."""
        ids = self.by_node.get(_short(device), []) if device else self.link_ids
        start = 0
        if cursor:
            (after,) = decode_cursor(cursor, 1)
            start = bisect.bisect_right(ids, str(after))
        items: list[dict[str, Any]] = []
        last = None
        for link_id in ids[start:]:
            lk = self.links[link_id]
            if kind and link_kind(lk, self.fabric) != kind:
                continue
            summary = self.link_summary(lk)
            if flagged and not summary["findings"]:
                continue
            if severity and _RANK[summary["severity"]] < _RANK[severity]:
                continue
            if len(items) == limit:
                return items, encode_cursor([last])
            items.append(summary)
            last = link_id
        return items, None

    # ------------------------------------------------------------------------------------- jobs

    def context(self) -> CheckContext:
        with self._lock:
            if self._ctx is None:
                self._ctx = CheckContext.build(self.fabric)
            return self._ctx

    def job_findings(self, job: Job) -> list[Finding]:
        """The findings on the job's network (``unifab check --job``'s scope): its hosts' NIC links, the
        uplinks of their leaves, the job's own settings."""
        with self._lock:
            cached = self._jobs.get(job.id)
        if cached is None:
            cached = scope_to_job(self.context(), job, self.findings)
            with self._lock:
                self._jobs[job.id] = cached
        return cached

    def job_summary(self, job: Job) -> dict[str, Any]:
        found = self.job_findings(job)
        return {
            "id": job.id,
            "name": job.name,
            "hosts": len(job.hosts),
            "fabrics": list(job_fabrics(self.fabric, job)),
            "by_severity": severity_counts(found),
            "verdict": job_verdict(found),
        }

    def job_detail(self, job: Job, limit: int) -> dict[str, Any]:
        found = self.job_findings(job)
        doc = self.job_summary(job)
        doc["hosts"] = list(job.hosts)
        doc["job"] = to_jsonable(job)
        doc["items"] = [finding_item(f) for f in found[:limit]]
        doc["truncated"] = len(found) > limit
        hosts = set(job.hosts)
        doc["leaves"] = sorted({lk.port.switch for lk in self.context().nic_links if lk.nic.host in hosts})
        return doc

    def job_hosts_hit(self, job: Job, found: list[Finding]) -> list[str]:
        """The job's hosts that ``found`` (its :meth:`job_findings`) reach: a host at an end of a finding's link,
        every job host cabled to the switch at an end of a switch-to-switch link (a leaf's uplink), the host or
        the leaf's job hosts of an ``INPUT-*`` finding, all of them for a finding about the job itself."""
        hosts = set(job.hosts)
        behind: dict[str, set[str]] = {}
        for nl in self.context().nic_links:
            if nl.nic.host in hosts:
                behind.setdefault(nl.port.switch, set()).add(nl.nic.host)
        hit: set[str] = set()
        for f in found:
            if f.subject.get("kind") == "job":
                hit |= hosts
                continue
            nodes: list[str] = []
            for entity in f.entities:
                lk = self.links.get(entity)
                if lk is not None:
                    ends = [e.node for e in (lk.a, lk.b) if e.node in hosts]
                    nodes += ends or [lk.a.node, lk.b.node]
            if f.check.startswith("INPUT-"):
                nodes.append(_short(str(f.subject.get("device", ""))))
            for node in nodes:
                hit |= {node} if node in hosts else behind.get(node, set())
        return sorted(hit)

    def impacted_jobs(self) -> list[dict[str, Any]]:
        """The running jobs with a finding at warning or above on their network (the job page's findings and
        verdict), worst first (critical, error, then warning; then the most hosts reached): ``id, name, hosts,
        hosts_hit, verdict, by_severity, worst`` (the worst finding: ``key, check, severity, message``).
        Computed once per state of the fabric."""
        with self._lock:
            if self._impacted is not None:
                return self._impacted
        out = []
        for job_id in self.job_ids:
            job = self.fabric.jobs[job_id]
            found = [f for f in self.job_findings(job) if _RANK[f.severity.value] >= _RANK["warning"]]
            if not found:
                continue
            worst = max(found, key=lambda f: _RANK[f.severity.value])  # the first of the worst, in check order
            out.append(
                {
                    **self.job_summary(job),
                    "hosts_hit": len(self.job_hosts_hit(job, found)),
                    "worst": {
                        "key": worst.key,
                        "check": worst.check,
                        "severity": worst.severity.value,
                        "message": worst.message,
                    },
                }
            )
        out.sort(key=lambda j: (-_RANK[j["worst"]["severity"]], -j["hosts_hit"], j["id"]))
        with self._lock:
            self._impacted = out
        return out

    def find_job(self, wanted: str) -> Job | None:
        for job_id in (wanted, f"job:{wanted}"):
            if job_id in self.fabric.jobs:
                return self.fabric.jobs[job_id]
        return None

    def page_jobs(self, cursor: str | None, limit: int) -> tuple[list[dict[str, Any]], str | None]:
        start = 0
        if cursor:
            (after,) = decode_cursor(cursor, 1)
            start = bisect.bisect_right(self.job_ids, str(after))
        chunk = self.job_ids[start : start + limit + 1]
        items = [self.job_summary(self.fabric.jobs[j]) for j in chunk[:limit]]
        return items, encode_cursor([chunk[limit - 1]]) if len(chunk) > limit else None

    # ------------------------------------------------------------------------------------- topology

    def grid(self) -> railmap.RailGrid:
        with self._lock:
            if self._grid is None:
                self._grid = railmap.rail_grid(self.fabric, self.findings)
            return self._grid

    def graph(
        self, device: str | None, cursor: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
        """Nodes and edges: a page of links (all, or one device's) and the devices at their ends."""
        edges, next_cursor = self.page_links(
            device=device, flagged=False, severity=None, kind=None, cursor=cursor, limit=limit
        )
        nodes: dict[str, dict[str, Any]] = {}
        for edge in edges:
            for end in (edge["a"], edge["b"]):
                name = end["node"]
                if name not in nodes:
                    entity = end["device"]
                    nodes[name] = {
                        "id": entity or f"unknown:{name}",
                        "name": name,
                        "kind": end["kind"],
                        "severity": self.node_severity.get(entity, OK) if entity else OK,
                    }
        out_edges = [
            {
                "id": e["id"],
                "source": e["a"]["node"],
                "source_port": e["a"]["port"],
                "target": e["b"]["node"],
                "target_port": e["b"]["port"],
                "kind": e["kind"],
                "sources": e["sources"],
                "severity": e["severity"],
                "findings": e["findings"],
            }
            for e in edges
        ]
        return list(nodes.values()), out_edges, next_cursor


class Latest(Generic[V]):
    """The newest value built from the live fabric (its index, its health view), rebuilt when the fabric's state
    key changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: tuple[tuple[int, ...], V] | None = None

    def get(self, key: tuple[int, ...], build: Callable[[], V]) -> V:
        with self._lock:
            if self._held is None or self._held[0] != key:
                self._held = (key, build())
            return self._held[1]


def finding_item(f: Finding) -> dict[str, Any]:
    """A finding of the live fabric: its key, the library's document, and its evidence captioned per end."""
    doc: FindingDoc = finding_doc(f)
    boxes = [{"label": b.label, "end": b.end, "caption": b.caption, "body": b.body} for b in evidence_boxes(f)]
    return {"key": f.key, "finding": doc, "evidence": boxes}


def link_kind(lk: Link, fabric: Fabric) -> str:
    """``host``: a NIC to a switch port; ``fabric``: switch to switch; ``other`` for anything else."""
    a_host, b_host = lk.a.node in fabric.hosts, lk.b.node in fabric.hosts
    if a_host != b_host:
        return "host"
    return "fabric" if not a_host else "other"


def _nic_qos(nic: Nic, name: str) -> Any:
    return None if nic.qos is None else getattr(nic.qos, name)


def _port_qos(port: Port, name: str) -> Any:
    return None if port.qos is None else getattr(port.qos, name)


def _value(end: Nic | Port | None, name: str) -> Any:
    if end is None:
        return None
    if name in ("mtu", "speed_mbps"):
        return getattr(end, name)
    if name in ("trust", "pfc_enabled", "cable_len_m"):
        return _nic_qos(end, name) if isinstance(end, Nic) else _port_qos(end, name)
    if name == "ecn":
        if isinstance(end, Nic):
            return None if end.qos is None or end.qos.ecn_np_enabled is None else sorted(end.qos.ecn_np_enabled)
        if end.qos is None:
            return None
        return sorted(i for i, q in end.qos.queues.items() if q.ecn_enabled)
    if name == "state":
        return end.port_state if isinstance(end, Nic) else end.admin_status
    return None


COMPARED = (
    ("mtu", "MTU"),
    ("speed_mbps", "speed (Mb/s)"),
    ("trust", "trust"),
    ("pfc_enabled", "PFC priorities"),
    ("ecn", "ECN priorities / queues"),
    ("cable_len_m", "cable length (m)"),
    ("state", "state"),
)


def compare_ends(a: Nic | Port | None, b: Nic | Port | None) -> list[dict[str, Any]]:
    """The QoS fields of both ends side by side; ``differs`` where the two ends disagree.

    A host's MTU is its IP MTU and a switch port's its L2 frame size, so between a NIC and a port the MTU
    differs only when the NIC's is larger. The state (``ACTIVE`` against ``up``) and the cable length (a
    switch rounds it up to its buffer profile's bucket) are shown, not compared: QOS-CABLE-LEN judges that.
    """
    mixed = isinstance(a, Nic) != isinstance(b, Nic)
    rows = []
    for name, label in COMPARED:
        va, vb = to_jsonable(_value(a, name)), to_jsonable(_value(b, name))
        if va is None or vb is None or name in ("state", "cable_len_m"):
            differs = False
        elif name == "mtu" and mixed:
            nic_mtu, port_mtu = (va, vb) if isinstance(a, Nic) else (vb, va)
            differs = isinstance(nic_mtu, int) and isinstance(port_mtu, int) and nic_mtu > port_mtu
        elif name == "ecn" and mixed:
            differs = not va or not vb  # ECN on one end only: the other end never marks or never reacts
        else:
            differs = va != vb
        rows.append({"field": name, "label": label, "a": va, "b": vb, "differs": differs})
    return rows


def job_verdict(found: list[Finding]) -> dict[str, Any]:
    """ "Is it the network?": ``likely`` with a finding at error or above on the job's network, ``possible``
    with warnings only, ``unlikely`` with none (or only information)."""
    counts = severity_counts(found)
    bad = counts.get("critical", 0) + counts.get("error", 0)
    if bad:
        checks = sorted({f.check for f in found if f.severity.value in ("critical", "error")})
        return {
            "network": "likely",
            "summary": f"{bad} finding(s) at error or above on this job's network: {', '.join(checks[:6])}"
            + (" …" if len(checks) > 6 else ""),
        }
    if counts.get("warning", 0):
        return {"network": "possible", "summary": f"{counts['warning']} warning(s) on this job's network, no error"}
    return {"network": "unlikely", "summary": "no finding at warning or above on this job's hosts, NICs and links"}


def _short(device: str | None) -> str:
    """``host:gpu001`` / ``switch:leaf1`` / a bare name → the node name."""
    if not device:
        return ""
    kind, sep, rest = device.partition(":")
    return rest if sep and kind in ("host", "switch") else device


def _subject_entities(f: Finding) -> list[str]:
    """A link subject as a link entity too (``{a, b}`` ends), for findings whose entities name other things."""
    a, b = f.subject.get("a"), f.subject.get("b")
    if f.subject.get("kind") != "link" or not a or not b:
        return []
    first, second = sorted((a, b))
    return [f"link:{first}--{second}"]


def _nodes_of(f: Finding, fabric: Fabric) -> set[str]:
    out: set[str] = set()
    for text in (*f.entities, *f.subject.values()):
        kind, _, rest = text.partition(":")
        names: list[str] = []
        if kind == "link":
            names = [end.partition(":")[0] for end in rest.split("--")]
        elif kind in ("host", "switch"):
            names = [rest]
        elif kind in ("nic", "gpu", "port", "optic"):
            names = [rest.partition(":")[0]]
        for name in names:
            if name in fabric.hosts:
                out.add(f"host:{name}")
            elif name in fabric.switches:
                out.add(f"switch:{name}")
    return out
