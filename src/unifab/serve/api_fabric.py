"""The fabric routes of the REST API: links, jobs, topology, render, one check, a finding's history.

Each list is paged by an opaque cursor (``next_cursor``); every route needs a reading role (render too: it
computes, it changes nothing). Shapes are the library's documents: a finding is :class:`unifab.api.FindingDoc`
(with its evidence captioned per end, as the HTML report draws it), a NIC or port is its model, the rail map
is what ``unifab topo show --format json`` prints and the SVG what ``--rail-map`` writes, a rendered device
is a row of ``unifab render --format json`` with its files and diff.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from fastapi import APIRouter, Body, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from typing_extensions import TypedDict

from unifab.api import FindingDoc, check_catalog
from unifab.report import railmap
from unifab.serve.api_intent import stored_intent
from unifab.serve.auth import READ
from unifab.serve.fabric_views import FabricIndex
from unifab.serve.render_view import MAX_INTENT_BYTES, RenderError, device_rows
from unifab.serve.routing import guarded
from unifab.serve.service import Server

__all__ = ["fabric_router", "index_of", "rail_title"]

Limit = Annotated[int, Query(ge=1, le=500)]
Cursor = Annotated[str | None, Query(max_length=2000, description="next_cursor of the page before")]
SEVERITY_PATTERN = "^(critical|error|warning|info)$"


class EvidenceBox(TypedDict):
    label: str  # the device and end the evidence names: "leaf-su1-r3 · Ethernet12"
    end: str | None  # "switch end", "host end", "switch", "host", "job"
    caption: str
    body: str  # JSON text


class LiveFinding(TypedDict):
    key: str
    finding: FindingDoc
    evidence: list[EvidenceBox]


class LinkEnd(TypedDict):
    device: str | None  # host:<name> | switch:<name>; None for a node that was not collected
    node: str
    port: str
    kind: str  # host | switch | unknown


class LinkEndDetail(LinkEnd):
    model: dict[str, Any] | None  # the NIC or port as the library models it


class LinkSummary(TypedDict):
    id: str
    kind: str  # host (NIC to switch) | fabric (switch to switch) | other
    a: LinkEnd
    b: LinkEnd
    sources: list[str]  # lldp, plan
    cable_m: float | None
    severity: str  # worst finding on the link, its ends' NIC or port; "ok" for none
    findings: int


class CompareRow(TypedDict):
    field: str
    label: str
    a: Any
    b: Any
    differs: bool


class LinkDetail(TypedDict):
    id: str
    kind: str
    a: LinkEndDetail
    b: LinkEndDetail
    sources: list[str]
    cable_m: float | None
    severity: str
    findings: int
    compare: list[CompareRow]
    items: list[LiveFinding]


class LinksPage(TypedDict):
    items: list[LinkSummary]
    next_cursor: str | None


class Verdict(TypedDict):
    network: str  # likely | possible | unlikely
    summary: str


class JobSummary(TypedDict):
    id: str
    name: str | None
    hosts: int
    fabrics: list[str]  # the fabrics its collectives run over: the kinds (roce, ib) of the NICs NCCL_IB_HCA selects
    by_severity: dict[str, int]
    verdict: Verdict


class IncidentsPage(TypedDict):
    source: str
    summary: dict[str, Any] | None  # None before the first snapshot
    problems: list[str]
    incidents: list[dict[str, Any]]


class JobsPage(TypedDict):
    items: list[JobSummary]
    next_cursor: str | None


class JobDetail(TypedDict):
    id: str
    name: str | None
    hosts: list[str]
    fabrics: list[str]
    by_severity: dict[str, int]
    verdict: Verdict
    job: dict[str, Any]  # the library's Job model
    leaves: list[str]
    items: list[LiveFinding]
    truncated: bool


class GraphNode(TypedDict):
    id: str
    name: str
    kind: str
    severity: str


class GraphEdge(TypedDict):
    id: str
    source: str
    source_port: str
    target: str
    target_port: str
    kind: str
    sources: list[str]
    severity: str
    findings: int


class Graph(TypedDict):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    next_cursor: str | None


class RenderRequest(TypedDict):
    intent: NotRequired[str]  # the intent file's text (fabric.yaml, docs/intent.md); default: PUT /intent's


class RenderedDevice(TypedDict):
    kind: str
    device: str
    os: str
    files: list[str]
    changed_lines: int
    error: str | None
    notes: list[str]  # why a rendered value is not the intent's (a platform's lower MTU on a port and its peer)
    outputs: dict[str, str]  # file name -> rendered text
    diff: str  # unified diff of the device's files, current -> once applied


class RenderPage(TypedDict):
    nccl_env: str
    items: list[RenderedDevice]
    next_cursor: str | None


class HistoryEvent(TypedDict):
    id: int
    event: str  # opened | changed | cleared
    at: str
    snapshot_id: str
    severity: str
    message: str


class FindingHistory(TypedDict):
    key: str
    current: dict[str, Any] | None  # the finding item of /findings (its latest occurrence), None if unknown
    events: list[HistoryEvent]
    next_cursor: str | None


class CheckDetail(TypedDict):
    id: str
    title: str
    why: str
    fix: str
    open_findings: int


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def index_of(server: Server) -> FabricIndex | None:
    return server.fabric_index()


def _cursor_error(exc: Exception) -> HTTPException:
    return HTTPException(400, f"cursor: {exc}" if isinstance(exc, ValueError) else "cursor: malformed cursor")


def rail_title(index: FabricIndex) -> str:
    grid = index.grid()
    units, rails = len(grid.units), len(grid.rails)
    return f"Rail map: {units} scalable unit{'s' * (units != 1)} × {rails} rail{'s' * (rails != 1)}"


def fabric_router() -> APIRouter:
    api = APIRouter(prefix="/api/v1")

    @guarded(api, "get", "/links", READ, tags=["fabric"])
    def links(
        request: Request,
        device: Annotated[str | None, Query(max_length=300, description="host:<h>, switch:<s> or a name")] = None,
        flagged: Annotated[bool, Query(description="only links with a finding")] = False,
        severity: Annotated[str | None, Query(pattern=SEVERITY_PATTERN, description="at least this bad")] = None,
        kind: Annotated[str | None, Query(pattern="^(host|fabric|other)$")] = None,
        cursor: Cursor = None,
        limit: Limit = 100,
    ) -> LinksPage:
        """Cables (planned or seen), each with both ends and the worst finding on it, in link-id order."""
        index = index_of(_server(request))
        if index is None:
            return {"items": [], "next_cursor": None}
        try:
            items, next_cursor = index.page_links(
                device=device, flagged=flagged, severity=severity, kind=kind, cursor=cursor, limit=limit
            )
        except (ValueError, TypeError) as exc:
            raise _cursor_error(exc) from None
        return {"items": items, "next_cursor": next_cursor}  # type: ignore[typeddict-item]

    @guarded(api, "get", "/links/{link_id:path}", READ, tags=["fabric"], responses={404: {"description": "none"}})
    def link(request: Request, link_id: str) -> LinkDetail:
        """One link (``link:<a>--<b>``): both ends' NIC / port QoS side by side, what differs, every finding
        on it with its evidence per end and its fix commands."""
        index = index_of(_server(request))
        found = None if index is None else index.links.get(link_id)
        if index is None or found is None:
            raise HTTPException(404, f"no link {link_id!r} (links are named link:<node>:<port>--<node>:<port>)")
        doc: LinkDetail = index.link_detail(found)  # type: ignore[assignment]
        return doc

    @guarded(api, "get", "/incidents", READ, tags=["health"])
    def incidents(request: Request) -> IncidentsPage:
        """Incidents from the telemetry the current snapshot carries (``telemetry/``: counter series, kernel and
        NCCL logs, rounds), as ``unifab health`` gives them for the bundle: one root cause each, its symptoms,
        the jobs it hurts and the actions to take (docs/health.md)."""
        server = _server(request)
        view = server.health_view()
        if view is None:
            return {"source": "unifab-serve", "summary": None, "problems": [], "incidents": []}
        doc: IncidentsPage = view.document()  # type: ignore[assignment]
        return doc

    @guarded(api, "get", "/jobs", READ, tags=["jobs"])
    def jobs(request: Request, cursor: Cursor = None, limit: Limit = 100) -> JobsPage:
        """The scheduler's jobs with a verdict each: is the network the likely cause of their trouble?"""
        index = index_of(_server(request))
        if index is None:
            return {"items": [], "next_cursor": None}
        try:
            items, next_cursor = index.page_jobs(cursor, limit)
        except (ValueError, TypeError) as exc:
            raise _cursor_error(exc) from None
        return {"items": items, "next_cursor": next_cursor}  # type: ignore[typeddict-item]

    @guarded(api, "get", "/jobs/{job_id:path}", READ, tags=["jobs"], responses={404: {"description": "none"}})
    def job(
        request: Request, job_id: str, limit: Annotated[int, Query(ge=1, le=1000, description="findings")] = 200
    ) -> JobDetail:
        """One job (``job:slurm:1001`` or ``slurm:1001``): the findings on its hosts' NICs, their links and
        their leaves' uplinks (``unifab check --job``), and the verdict."""
        index = index_of(_server(request))
        found = None if index is None else index.find_job(job_id)
        if index is None or found is None:
            raise HTTPException(404, f"no job {job_id!r} (jobs are named job:slurm:<id> or job:k8s:<ns>/<name>)")
        doc: JobDetail = index.job_detail(found, limit)  # type: ignore[assignment]
        return doc

    @guarded(api, "get", "/topology", READ, tags=["topology"])
    def topology(
        request: Request,
        device: Annotated[str | None, Query(max_length=300, description="only this device's links")] = None,
        cursor: Cursor = None,
        limit: Limit = 500,
    ) -> Graph:
        """Nodes and edges: a page of links (the whole fabric's, or one device's) and the nodes at their ends."""
        index = index_of(_server(request))
        if index is None:
            return {"nodes": [], "edges": [], "next_cursor": None}
        try:
            nodes, edges, next_cursor = index.graph(device, cursor, limit)
        except (ValueError, TypeError) as exc:
            raise _cursor_error(exc) from None
        return {"nodes": nodes, "edges": edges, "next_cursor": next_cursor}  # type: ignore[typeddict-item]

    @guarded(api, "get", "/topology/railmap", READ, tags=["topology"])
    def railmap_json(request: Request) -> dict[str, Any]:
        """Scalable units by rails, a cell per leaf with its worst finding (``unifab topo show --format json``)."""
        index = index_of(_server(request))
        if index is None:
            raise HTTPException(404, "no snapshot yet")
        return railmap.grid_json(index.grid(), rail_title(index))

    @guarded(
        api,
        "get",
        "/topology/railmap.svg",
        READ,
        tags=["topology"],
        response_class=Response,
        responses={200: {"content": {"image/svg+xml": {}}}, 404: {"description": "no snapshot yet"}},
    )
    def railmap_svg(request: Request) -> Response:
        """The rail map as the report draws it (``unifab topo show --rail-map``)."""
        index = index_of(_server(request))
        if index is None:
            raise HTTPException(404, "no snapshot yet")
        svg = railmap.render_svg(index.grid(), rail_title(index))
        return Response(svg, media_type="image/svg+xml")

    @guarded(
        api,
        "post",
        "/render",
        READ,
        tags=["render"],
        responses={404: {"description": "no snapshot yet"}, 422: {"description": "the intent has problems"}},
    )
    async def render(
        request: Request,
        body: Annotated[RenderRequest, Body()],
        device: Annotated[list[str] | None, Query(description="only these devices; repeatable")] = None,
        changed: Annotated[bool, Query(description="only devices the intent changes")] = False,
        cursor: Cursor = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 20,
    ) -> RenderPage:
        """Render an intent for the fabric's devices (``unifab render --bundle``): each device's files and
        its diff against what it runs now, and the NCCL environment. Without ``intent`` in the body: the
        intent the server holds (``PUT /api/v1/intent``, or the bundle's fabric.yaml)."""
        server = _server(request)
        text = body.get("intent")
        if text is None:
            held = await run_in_threadpool(stored_intent, server)
            if held is None:
                raise HTTPException(422, ["intent: none given and none held (PUT /api/v1/intent first)"])
            text = held.decode("utf-8", "replace")
        if len(text.encode()) > MAX_INTENT_BYTES:
            raise HTTPException(413, f"the intent is larger than {MAX_INTENT_BYTES:,} bytes")
        index = await run_in_threadpool(index_of, server)
        if index is None:
            raise HTTPException(404, "no snapshot yet: there are no devices to render for")
        parts = server.bundle_parts()
        try:
            made = await run_in_threadpool(server.renders.plan, index.key, text, index.fabric, parts)
            rows, next_cursor = device_rows(
                made, devices=device or [], changed_only=changed, cursor=cursor, limit=limit
            )
        except RenderError as exc:
            raise HTTPException(422, exc.problems) from None
        except (ValueError, TypeError) as exc:
            raise _cursor_error(exc) from None
        return {"nccl_env": made.nccl_env, "items": rows, "next_cursor": next_cursor}  # type: ignore[typeddict-item]

    @guarded(api, "get", "/checks/{check_id}", READ, tags=["checks"], responses={404: {"description": "none"}})
    def check(request: Request, check_id: str) -> CheckDetail:
        """One check of the catalog and its count of open findings."""
        spec = check_catalog().get(check_id)
        if spec is None:
            raise HTTPException(404, f"no check {check_id!r}; GET /api/v1/checks lists them")
        summary = _server(request).store.summary()
        opened = sum(summary["by_check"].get(check_id, {}).values())
        return {"id": spec.id, "title": spec.title, "why": spec.why, "fix": spec.fix, "open_findings": opened}

    @guarded(api, "get", "/findings/history", READ, tags=["findings"], responses={404: {"description": "unknown key"}})
    def finding_history(
        request: Request,
        key: Annotated[str, Query(min_length=1, max_length=4000, description="the finding's key")],
        cursor: Cursor = None,
        limit: Limit = 100,
    ) -> FindingHistory:
        """Every transition of one finding key over the snapshots (opened, changed, cleared), oldest first,
        and its current row (first_seen / last_seen / cleared_at of the latest occurrence)."""
        store = _server(request).store
        current = store.finding(key)
        try:
            page = store.finding_history(key, cursor=cursor, limit=limit)
        except (ValueError, TypeError) as exc:
            raise _cursor_error(exc) from None
        if current is None and not page.items:
            raise HTTPException(404, f"no finding with key {key!r}")
        return {"key": key, "current": current, "events": page.items, "next_cursor": page.next_cursor}  # type: ignore[typeddict-item]

    return api
