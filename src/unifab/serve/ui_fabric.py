"""The fabric pages of the web UI: the rail map, a leaf, the link list and link debugger, jobs, a job, incidents.

Server-rendered like the rest of :mod:`unifab.serve.ui` (same roles, same escaping: every device string
passes :func:`unifab.report.text.display` and autoescape). Lists are paged on the server (links by cursor,
a leaf's links and a job's findings by page), so no page carries the whole fabric; the rail map is one
cell per leaf, not one per cable. The one script is the copy button of the fix commands.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from unifab.api import check_catalog
from unifab.report import railmap
from unifab.serve.api_fabric import index_of, rail_title
from unifab.serve.auth import READ
from unifab.serve.fabric_views import FabricIndex
from unifab.serve.health_view import PLOT_HEIGHT, PLOT_WIDTH
from unifab.serve.routing import SEVERITIES, guarded
from unifab.serve.service import Server
from unifab.serve.ui import render

__all__ = ["fabric_ui_router"]

PAGE_SIZE = 50


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def _no_fabric(request: Request) -> HTMLResponse:
    return render(request, "error.html", status=404, message="no snapshot yet: ingest a bundle first")


def _sides(doc: dict[str, Any]) -> tuple[str, str]:
    """The NIC end on the left when there is one, the switch end on the right."""
    return ("b", "a") if doc["b"]["kind"] == "host" and doc["a"]["kind"] != "host" else ("a", "b")


def fabric_ui_router() -> APIRouter:
    ui = APIRouter(include_in_schema=False)

    @guarded(ui, "get", "/railmap", READ, response_class=HTMLResponse)
    def railmap_page(request: Request) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        doc = railmap.grid_json(index.grid(), rail_title(index))
        return render(request, "railmap.html", doc=doc, colors=railmap.COLORS, tints=railmap.TINTS)

    @guarded(ui, "get", "/leaves/{name}", READ, response_class=HTMLResponse)
    def leaf_page(request: Request, name: str, cursor: str | None = None) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        cell = index.grid().leaves.get(name)
        if cell is None:
            return render(request, "error.html", status=404, message=f"no leaf {name!r} on the rail map")
        try:
            links, next_cursor = index.page_links(
                device=name, flagged=False, severity=None, kind=None, cursor=cursor, limit=PAGE_SIZE
            )
        except (ValueError, TypeError):
            links, next_cursor = [], None
        next_url = f"/leaves/{quote(name, safe='')}?" + urlencode({"cursor": next_cursor}) if next_cursor else None
        return render(
            request,
            "leaf.html",
            leaf=cell,
            hosts=sorted(cell.hosts),
            uplinks=railmap.uplinks_text(cell),
            links=links,
            next_url=next_url,
            node_severity=index.node_severity,
        )

    @guarded(ui, "get", "/links", READ, response_class=HTMLResponse)
    def links_page(
        request: Request,
        device: Annotated[str, Query(max_length=300)] = "",
        flagged: bool = True,
        severity: str = "",
        cursor: str | None = None,
    ) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        if severity not in SEVERITIES:
            severity = ""
        filters = {"device": device.strip(), "flagged": "1" if flagged else "0", "severity": severity}
        try:
            links, next_cursor = index.page_links(
                device=filters["device"] or None,
                flagged=flagged,
                severity=severity or None,
                kind=None,
                cursor=cursor,
                limit=PAGE_SIZE,
            )
        except (ValueError, TypeError):
            links, next_cursor = [], None
        next_url = None
        if next_cursor:
            next_url = "/links?" + urlencode({**{k: v for k, v in filters.items() if v}, "cursor": next_cursor})
        return render(request, "links.html", links=links, filters=filters, severities=SEVERITIES, next_url=next_url)

    @guarded(ui, "get", "/links/{link_id:path}", READ, response_class=HTMLResponse)
    def link_page(request: Request, link_id: str) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        found = index.links.get(link_id)
        if found is None:
            return render(request, "error.html", status=404, message=f"no link {link_id!r}")
        doc = index.link_detail(found)
        left, right = _sides(doc)
        titles = {cid: spec.title for cid, spec in check_catalog().items()}
        return render(request, "link.html", link=doc, left=left, right=right, titles=titles)

    @guarded(ui, "get", "/jobs", READ, response_class=HTMLResponse)
    def jobs_page(request: Request, cursor: str | None = None) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        try:
            jobs, next_cursor = index.page_jobs(cursor, PAGE_SIZE)
        except (ValueError, TypeError):
            jobs, next_cursor = [], None
        next_url = "/jobs?" + urlencode({"cursor": next_cursor}) if next_cursor else None
        return render(request, "jobs.html", jobs=jobs, next_url=next_url, severities=SEVERITIES)

    @guarded(ui, "get", "/jobs/{job_id:path}", READ, response_class=HTMLResponse)
    def job_page(request: Request, job_id: str, page: Annotated[int, Query(ge=1, le=100_000)] = 1) -> HTMLResponse:
        index = index_of(_server(request))
        if index is None:
            return _no_fabric(request)
        job = index.find_job(job_id)
        if job is None:
            return render(request, "error.html", status=404, message=f"no job {job_id!r}")
        return render(request, "job.html", **_job_context(index, job_id, page))

    @guarded(ui, "get", "/incidents", READ, response_class=HTMLResponse)
    def incidents_page(request: Request) -> HTMLResponse:
        view = _server(request).health_view()
        if view is None:
            return render(request, "incidents.html", summary=None, problems=[], incidents=[], width=0, height=0)
        doc = view.document()
        items = [
            {"doc": d, "plots": {(p.entity, p.counter): p for p in view.plots(incident)}}
            for d, incident in zip(doc["incidents"], view.result.incidents, strict=True)
        ]
        return render(
            request,
            "incidents.html",
            summary=doc["summary"],
            problems=doc["problems"],
            incidents=items,
            width=PLOT_WIDTH,
            height=PLOT_HEIGHT,
        )

    return ui


def _job_context(index: FabricIndex, job_id: str, page: int) -> dict[str, Any]:
    job = index.find_job(job_id)
    assert job is not None
    found = index.job_findings(job)
    doc = index.job_detail(job, 0)
    start = (page - 1) * PAGE_SIZE
    shown = [_row(index, f) for f in found[start : start + PAGE_SIZE]]
    next_url = f"/jobs/{quote(job.id, safe=':/')}?page={page + 1}" if start + PAGE_SIZE < len(found) else None
    return {"job": doc, "rows": shown, "total": len(found), "next_url": next_url, "severities": SEVERITIES}


def _row(index: FabricIndex, f: Any) -> dict[str, Any]:
    """A job finding with the link it is on (for the link debugger), when it is about one."""
    link = next((e for e in f.entities if e in index.links), None)
    return {"check": f.check, "severity": f.severity.value, "message": f.message, "link": link, "key": f.key}
