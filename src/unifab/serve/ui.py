"""The web UI: server-rendered Jinja pages over the same store and roles as the API, no build step.

Pages: the overview (open findings by severity and by check, devices, the last snapshot and what it
changed, the running jobs that open findings impact, the InfiniBand silo when there is one), the findings
table (filters by check, severity, device, job, state and a time range; cursor pagination, so no page loads
the whole fabric), the device list (with the fabric each device is on) and a device page (its model and its
findings). Every page needs a reading role, from a Bearer header or the login cookie; ``/login`` takes a
token and sets that cookie, ``/logout`` clears it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from unifab.api import check_catalog
from unifab.report.text import display
from unifab.serve.auth import READ
from unifab.serve.routing import COOKIE, SEVERITIES, device_model, guarded, job_scope, parse_time
from unifab.serve.service import Server
from unifab.serve.store import TIME_FIELDS, Page
from unifab.serve.store_views import FABRICS, changes, fabrics

__all__ = ["render", "ui_router"]

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _finalize(value: Any) -> Any:
    """Every ``{{ ... }}``: device text with its control characters made visible (newlines and tabs kept for
    the ``<pre>`` blocks of commands, evidence and diffs), then autoescaped; markup made here passes as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return display(value, keep="\n\t")
    return value


_env = Environment(
    loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]), auto_reload=False, finalize=_finalize
)
PAGE_SIZE = 50
IMPACTED_ITEMS = 20  # impacted jobs the overview lists; the count and /jobs cover the rest


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    nonce = getattr(request.state, "csp_nonce", "")
    html = _env.get_template(template).render(nonce=nonce, request_path=request.url.path, **context)
    return HTMLResponse(html, status_code=status)


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def ui_router() -> APIRouter:
    ui = APIRouter(include_in_schema=False)

    @guarded(ui, "get", "/", READ, response_class=HTMLResponse)
    def overview(request: Request) -> HTMLResponse:
        server = _server(request)
        store = server.store
        summary = {**store.summary(), **fabrics(store), "changes": changes(store)}
        titles = {cid: spec.title for cid, spec in check_catalog().items()}
        index = server.fabric_index()
        impacted = None
        if index is not None:  # the job page's findings per job, worst job first (FabricIndex.impacted_jobs)
            rows = index.impacted_jobs()
            impacted = {"items": rows[:IMPACTED_ITEMS], "total": len(rows), "jobs": len(index.job_ids)}
        return render(
            request, "overview.html", summary=summary, titles=titles, severities=SEVERITIES, impacted=impacted
        )

    @guarded(ui, "get", "/findings", READ, response_class=HTMLResponse)
    def findings_page(
        request: Request,
        check: str = "",
        severity: str = "",
        device: str = "",
        state: Annotated[str, Query(pattern="^(open|cleared|all)$")] = "open",
        q: Annotated[str, Query(max_length=200)] = "",
        job: Annotated[str, Query(max_length=300)] = "",
        since: Annotated[str, Query(max_length=64)] = "",
        until: Annotated[str, Query(max_length=64)] = "",
        time: Annotated[str, Query(pattern=f"^({'|'.join(TIME_FIELDS)})$")] = "first_seen",
        cursor: str | None = None,
    ) -> HTMLResponse:
        server = _server(request)
        if severity and severity not in SEVERITIES:
            severity = ""
        filters = {
            "check": check,
            "severity": severity,
            "device": device.strip(),
            "state": state,
            "q": q.strip(),
            "job": job.strip(),
            "since": since.strip(),
            "until": until.strip(),
            "time": time if since.strip() or until.strip() else "",
        }
        problem = None
        try:
            start, end = parse_time("since", since), parse_time("until", until)
            scope = job_scope(server, job)
        except HTTPException as exc:  # shown above the table, the filters kept for the person to fix
            problem, start, end, scope = str(exc.detail), None, None, None
        try:
            page = server.store.findings(
                check=[check] if check else (),
                severity=[severity] if severity else (),
                device=device.strip() or None,
                state=state,
                cursor=cursor,
                limit=PAGE_SIZE,
                q=q.strip() or None,
                since=start,
                until=end,
                time=time,
                job=scope,
            )
        except (ValueError, TypeError):
            return RedirectResponse("/findings", status_code=303)  # type: ignore[return-value]
        if problem is not None:
            page = Page([], None)
        next_url = None
        if page.next_cursor:
            next_url = "/findings?" + urlencode({**{k: v for k, v in filters.items() if v}, "cursor": page.next_cursor})
        return render(
            request,
            "findings.html",
            page=page,
            filters=filters,
            checks=server.store.finding_checks(),
            severities=SEVERITIES,
            next_url=next_url,
            times=TIME_FIELDS,
            problem=problem,
            status=422 if problem else 200,
        )

    @guarded(ui, "get", "/devices", READ, response_class=HTMLResponse)
    def devices_page(request: Request, kind: str = "", fabric: str = "", cursor: str | None = None) -> HTMLResponse:
        kind = kind if kind in ("host", "switch") else ""
        fabric = fabric if fabric in FABRICS else ""
        try:
            page = _server(request).store.devices(
                kind=kind or None, fabric=fabric or None, cursor=cursor, limit=PAGE_SIZE
            )
        except ValueError:
            return RedirectResponse("/devices", status_code=303)  # type: ignore[return-value]
        next_url = None
        if page.next_cursor:
            chosen = {k: v for k, v in {"kind": kind, "fabric": fabric}.items() if v}
            next_url = "/devices?" + urlencode({**chosen, "cursor": page.next_cursor})
        return render(request, "devices.html", page=page, kind=kind, fabric=fabric, next_url=next_url)

    @guarded(ui, "get", "/devices/{name}", READ, response_class=HTMLResponse)
    def device_page(request: Request, name: str) -> HTMLResponse:
        server = _server(request)
        row = server.store.device(name)
        if row is None:
            return render(request, "error.html", status=404, message=f"no device {name!r}")
        detail = device_model(server, name)
        found = server.store.findings(device=name, state="open", limit=200)
        return render(request, "device.html", device=row, model=detail["model"], findings=found)

    @guarded(ui, "get", "/history", READ, response_class=HTMLResponse)
    def history_page(request: Request, key: Annotated[str, Query(max_length=4000)] = "") -> HTMLResponse:
        """One finding key's occurrences over the snapshots (the events of /api/v1/findings/history)."""
        store = _server(request).store
        current = store.finding(key) if key else None
        events = store.finding_history(key, limit=500) if key else None
        if current is None and not (events and events.items):
            return render(request, "error.html", status=404, message=f"no finding with key {key!r}")
        return render(request, "history.html", key=key, current=current, events=events)

    @ui.get("/login", response_class=HTMLResponse)
    def login_form(request: Request) -> HTMLResponse:
        return render(request, "login.html", error=None)

    @ui.post("/login", response_class=HTMLResponse)
    async def login(request: Request) -> Response:
        body = await request.body()
        if len(body) > 4096:
            return render(request, "login.html", status=413, error="too long")
        token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
        principal = _server(request).authenticate(token) if token else None
        if principal is None:
            return render(request, "login.html", status=401, error="that token is not valid")
        if principal.role not in READ:
            return render(request, "login.html", status=403, error=f"role {principal.role!r} cannot use the UI")
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/"
        )
        return response

    @ui.post("/logout")
    def logout() -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    return ui
