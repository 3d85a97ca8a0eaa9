"""The HTTP face of :class:`~unifab.serve.service.Server`: the REST API under ``/api/v1``, /metrics, health.

Every route but ``/healthz``, ``/metrics`` (unless configured otherwise) and the login form needs a role:
routes are declared through :func:`guarded`, which adds the role check and records the allowed roles in
the OpenAPI operation as ``x-unifab-roles`` (tests/serve walks the route table with it). A token comes as
``Authorization: Bearer <token>``; the web UI's login stores the same token in an HttpOnly, SameSite=Strict
cookie that is honoured for GET requests only, so a cookie can never authorize a change (no CSRF surface).

Response shapes are the library's: a finding is the object ``unifab check --format json`` prints
(:class:`unifab.api.FindingDoc`), wrapped with its first/last seen times.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, NotRequired

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import Field, StringConstraints
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from typing_extensions import TypedDict

from unifab.api import FindingDoc, check_catalog
from unifab.serve.api_fabric import fabric_router
from unifab.serve.api_intent import intent_router
from unifab.serve.auth import ADMIN, INGEST, READ, ROLES
from unifab.serve.ingest import DEVICE_NAME, IngestError
from unifab.serve.metrics import CONTENT_TYPE
from unifab.serve.routing import SEVERITIES, device_model, guarded, job_scope, parse_time, principal_of
from unifab.serve.service import Server, Settings
from unifab.serve.store import TIME_FIELDS, Heartbeat
from unifab.serve.store_views import changes, fabrics
from unifab.serve.ui import render, ui_router
from unifab.serve.ui_fabric import fabric_ui_router
from unifab.serve.work import QUEUED

__all__ = ["DROPPED_HEADER", "SecurityHeaders", "create_app"]

DROPPED_HEADER = "X-Unifab-Dropped-Snapshots"


class FindingItem(TypedDict):
    key: str  # Finding.key: check id + subject, stable across snapshots
    state: str  # open | cleared
    first_seen: str
    last_seen: str
    cleared_at: str | None
    finding: FindingDoc  # exactly the object unifab check --format json prints


class FindingsPage(TypedDict):
    items: list[FindingItem]
    next_cursor: str | None


class AgentDoc(TypedDict):
    host: str
    last_seen: str
    version: str
    spool_depth: int
    spool_bytes: int
    dropped: int
    last_snapshot: str | None
    interval: float | None
    actor: str  # the token id that sent the last heartbeat


class DeviceItem(TypedDict):
    name: str
    kind: str
    os: str | None
    collected_at: str | None
    received_at: str
    origin: dict[str, Any]
    snapshot_id: str
    fabric: str | None  # roce | ib | roce+ib (a host with RoCE NICs and an InfiniBand HCA)


class DevicesPage(TypedDict):
    items: list[DeviceItem]
    next_cursor: str | None


class DeviceDetail(DeviceItem):
    open_findings: int
    model: dict[str, Any] | None  # the device as the library models it (unifab.model.Host / Switch)
    agent: NotRequired[AgentDoc | None]  # a host's agent, once it sent a heartbeat


class HeartbeatRequest(TypedDict):
    version: Annotated[str, StringConstraints(min_length=1, max_length=50)]
    spool_depth: Annotated[int, Field(ge=0, le=2**31 - 1)]  # snapshots waiting in the agent's spool
    spool_bytes: Annotated[int, Field(ge=0, le=2**62)]
    dropped: Annotated[int, Field(ge=0, le=2**62)]  # dropped in total because the spool was full
    last_snapshot: NotRequired[Annotated[str, StringConstraints(max_length=200)] | None]
    interval: NotRequired[Annotated[float, Field(gt=0, le=10**7)] | None]


class AgentsPage(TypedDict):
    items: list[AgentDoc]
    next_cursor: str | None


class SnapshotDoc(TypedDict):
    id: str
    received_at: str
    devices: list[str]
    units: list[str]
    size: int
    mode: str
    seconds: float
    findings: int
    duplicate: bool


class CheckDoc(TypedDict):
    id: str
    title: str
    why: str
    fix: str


class FindingCounts(TypedDict):
    open: int
    cleared: int
    by_severity: dict[str, int]


class ChangeRow(TypedDict):
    key: str
    check: str
    severity: str
    message: str
    at: str | None


class Changes(TypedDict):
    snapshot: dict[str, Any]  # id, received_at, mode of the latest snapshot
    opened: int
    changed: int
    cleared: int
    items: dict[str, list[ChangeRow]]  # opened, cleared: the first rows, worst first


class Summary(TypedDict):
    findings: FindingCounts
    by_check: dict[str, dict[str, int]]
    devices: dict[str, int]
    last_snapshot: dict[str, Any] | None
    changes: Changes | None  # what the latest snapshot changed
    fabrics: dict[str, dict[str, int]]  # devices by fabric (roce, ib) and kind
    ib_findings: dict[str, int]  # the InfiniBand silo's open findings by severity


class TokenRequest(TypedDict):
    role: str
    name: str
    hosts: NotRequired[list[str]]  # limit the token to ingesting these hosts' parts


class TokenCreated(TypedDict):
    id: str
    role: str
    token: str  # shown once
    hosts: list[str] | None


class TokenInfo(TypedDict):
    id: str
    role: str
    name: str
    created_at: str
    revoked_at: str | None
    hosts: list[str] | None


class SecurityHeaders:
    """Pure ASGI middleware: a per-response CSP nonce (``request.state.csp_nonce``) and the security headers.

    The pages load nothing from elsewhere; their one inline stylesheet and their one small inline script
    (the copy buttons, ``ui_script.js``) carry the nonce, so no other script or inline handler can run.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["csp_nonce"] = nonce
        csp = (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; img-src 'self' data:; "
            "form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'"
        )

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(settings: Settings | None = None, server: Server | None = None) -> FastAPI:
    """The application over a new :class:`Server` (or the one given); the store is migrated before it returns."""
    server = server or Server(settings or Settings())

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        server.start_polling()
        yield
        server.close()

    app = FastAPI(
        title="unifab",
        version="1",
        summary="The single pane over an AI cluster's fabric: snapshots, devices, findings, checks.",
        openapi_url=None,  # served under /api/v1 behind a role, below
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.server = server
    app.add_middleware(SecurityHeaders)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        """JSON for the API; for a page a person opened, the login form (401) or a short error page."""
        if request.url.path.startswith("/api/") or request.url.path in ("/metrics", "/healthz"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        template = "login.html" if exc.status_code == 401 else "error.html"
        return render(request, template, status=exc.status_code, error=None, message=str(exc.detail))

    app.include_router(fabric_router())  # before /api/v1/findings: /findings/history is not a finding
    app.include_router(_api_router(app))
    app.include_router(intent_router())
    app.include_router(_public_router(server))
    app.include_router(ui_router())
    app.include_router(fabric_ui_router())
    return app


def _public_router(server: Server) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz", tags=["health"])
    def health() -> dict[str, str | None]:
        return {"status": "ok", "schema": server.store.revision()}

    if server.settings.metrics_public:

        @router.get("/metrics", tags=["metrics"], response_class=Response)
        def metrics() -> Response:
            return Response(server.metrics.exposition(), media_type=CONTENT_TYPE)

    else:

        @guarded(router, "get", "/metrics", READ, tags=["metrics"], response_class=Response)
        def metrics_guarded() -> Response:
            return Response(server.metrics.exposition(), media_type=CONTENT_TYPE)

    return router


def _api_router(app: FastAPI) -> APIRouter:
    api = APIRouter(prefix="/api/v1")

    def srv(request: Request) -> Server:
        server: Server = request.app.state.server
        return server

    @guarded(api, "get", "/openapi.json", READ, tags=["meta"], include_in_schema=False)
    def openapi() -> dict[str, Any]:
        return app.openapi()

    @guarded(api, "get", "/summary", READ, tags=["fabric"])
    def summary(request: Request) -> Summary:
        """Open findings by severity and by check, devices by kind and by fabric, the last snapshot, and what
        it changed (the findings it opened and cleared)."""
        store = srv(request).store
        doc: Summary = {**store.summary(), **fabrics(store), "changes": changes(store)}  # type: ignore[typeddict-item]
        return doc

    @guarded(api, "get", "/devices", READ, tags=["fabric"])
    def devices(
        request: Request,
        kind: Annotated[str | None, Query(pattern="^(host|switch)$")] = None,
        fabric: Annotated[str | None, Query(pattern="^(roce|ib)$", description="on this fabric")] = None,
        cursor: str | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> DevicesPage:
        """Devices by name; each says which fabric it is on (``roce``, ``ib``, ``roce+ib``)."""
        page = _paged(lambda: srv(request).store.devices(kind=kind, fabric=fabric, cursor=cursor, limit=limit))
        return {"items": page.items, "next_cursor": page.next_cursor}

    @guarded(api, "get", "/devices/{name}", READ, tags=["fabric"], responses={404: {"description": "no such device"}})
    def device(request: Request, name: str) -> DeviceDetail:
        """One device (``host:<name>`` or ``switch:<name>``) with its model and its count of open findings."""
        server = srv(request)
        row = server.store.device(name)
        if row is None:
            raise HTTPException(404, f"no device {name!r} (devices are named host:<name> or switch:<name>)")
        agent = server.store.agent(name.partition(":")[2]) if name.startswith("host:") else None
        return {**row, **device_model(server, name), "agent": agent}  # type: ignore[typeddict-item]

    @guarded(api, "get", "/findings", READ, tags=["findings"])
    def findings(
        request: Request,
        check: Annotated[list[str] | None, Query(description="check id; repeatable")] = None,
        severity: Annotated[list[str] | None, Query(description="critical|error|warning|info; repeatable")] = None,
        device: Annotated[str | None, Query(description="host:<name>, switch:<name> or a bare name")] = None,
        state: Annotated[str, Query(pattern="^(open|cleared|all)$")] = "open",
        q: Annotated[str | None, Query(max_length=200, description="text in the message or key")] = None,
        job: Annotated[str | None, Query(max_length=300, description="job:slurm:<id> or slurm:<id>")] = None,
        since: Annotated[str | None, Query(max_length=64, description="ISO-8601; `time` at or after it")] = None,
        until: Annotated[str | None, Query(max_length=64, description="ISO-8601; `time` before it")] = None,
        time: Annotated[str, Query(pattern=f"^({'|'.join(TIME_FIELDS)})$", description="what since/until bound")] = (
            "first_seen"
        ),
        cursor: str | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> FindingsPage:
        """Findings in report order (worst first), filtered; ``next_cursor`` fetches the next page.

        ``job``: the findings on the job's network (``unifab check --job``), and the cleared ones about its
        hosts. ``since``/``until`` bound ``time``: ``first_seen``, ``last_seen`` or ``cleared`` (cleared_at)."""
        bad = [s for s in severity or () if s not in SEVERITIES]
        if bad:
            raise HTTPException(422, f"unknown severity {bad[0]!r}; expected one of {', '.join(SEVERITIES)}")
        start, end = parse_time("since", since), parse_time("until", until)
        server = srv(request)
        scope = job_scope(server, job)
        page = _paged(
            lambda: server.store.findings(
                check=check or (),
                severity=severity or (),
                device=device,
                state=state,
                cursor=cursor,
                limit=limit,
                q=q or None,
                since=start,
                until=end,
                time=time,
                job=scope,
            )
        )
        return {"items": page.items, "next_cursor": page.next_cursor}

    @guarded(api, "get", "/checks", READ, tags=["checks"])
    def checks() -> list[CheckDoc]:
        """The check catalog (what ``unifab checks`` lists): id, title, why it hurts, how to fix it."""
        return [{"id": s.id, "title": s.title, "why": s.why, "fix": s.fix} for s in check_catalog().values()]

    @guarded(
        api,
        "post",
        "/snapshots",
        INGEST,
        tags=["ingest"],
        status_code=201,
        responses={
            200: {"description": "a snapshot with this id was already stored; nothing changed"},
            202: {"description": "stored; no re-check has covered it yet (mode: queued)"},
            400: {"description": "not a tar archive, a link or a path escaping it"},
            403: {"description": "the token may not send one of the parts (an agent token limited to hosts)"},
            413: {"description": "larger than the server accepts"},
            422: {"description": "a file outside the bundle layout, or not what its name says"},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "description": "a tar.gz of the bundle layout (docs/bundle.md): a whole bundle or some devices",
                "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
            },
            "parameters": [
                {
                    "name": "X-Unifab-Snapshot-Id",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "the snapshot's id (default: the upload's sha256); a retry with it stores nothing",
                },
                {
                    "name": DROPPED_HEADER,
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string", "pattern": "^[0-9]{1,12}$"},
                    "description": "how many snapshots the agent dropped before this one (its spool was full); "
                    "recorded in the ingest's audit entry as dropped_before",
                },
            ],
        },
    )
    async def post_snapshot(request: Request) -> JSONResponse:
        """Ingest a bundle (or part of one): validate, re-check incrementally, update the findings' times."""
        server = srv(request)
        limit = server.settings.max_upload_bytes
        too_big = HTTPException(413, f"the upload is larger than the {limit:,} bytes this server accepts")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise too_big
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise too_big
        principal = principal_of(request)
        snapshot_id = request.headers.get("x-unifab-snapshot-id")
        dropped_text = request.headers.get(DROPPED_HEADER, "0").strip() or "0"
        if not dropped_text.isdigit() or len(dropped_text) > 12:
            raise HTTPException(400, f"{DROPPED_HEADER} must be a count of snapshots, got {dropped_text[:40]!r}")
        try:
            created, doc = await run_in_threadpool(
                server.ingest, bytes(body), snapshot_id, principal, dropped=int(dropped_text)
            )
        except IngestError as exc:
            raise HTTPException(exc.status, exc.message) from None
        status = (202 if doc["mode"] == QUEUED else 201) if created else 200
        return JSONResponse(doc, status_code=status)

    @guarded(api, "get", "/snapshots/{snapshot_id}", READ, tags=["ingest"], responses={404: {"description": "none"}})
    def snapshot(request: Request, snapshot_id: str) -> SnapshotDoc:
        doc = srv(request).store.snapshot(snapshot_id)
        if doc is None:
            raise HTTPException(404, f"no snapshot {snapshot_id!r}")
        return {**doc, "duplicate": False}  # type: ignore[typeddict-item]

    @guarded(
        api,
        "post",
        "/agents/{host}/heartbeat",
        INGEST,
        tags=["agents"],
        responses={403: {"description": "the token may not speak for this host"}, 422: {"description": "bad body"}},
    )
    def heartbeat(request: Request, host: str, body: HeartbeatRequest) -> AgentDoc:
        """A host agent is alive: its version, spool depth and dropped total (``unifab agent run``)."""
        if not DEVICE_NAME.fullmatch(host):
            raise HTTPException(422, f"{host[:80]!r} is not a host name")
        beat = Heartbeat(
            host=host,
            version=body["version"],
            spool_depth=body["spool_depth"],
            spool_bytes=body["spool_bytes"],
            dropped=body["dropped"],
            last_snapshot=body.get("last_snapshot"),
            interval=body.get("interval"),
        )
        try:
            doc: AgentDoc = srv(request).heartbeat(beat, principal_of(request))  # type: ignore[assignment]
        except IngestError as exc:
            raise HTTPException(exc.status, exc.message) from None
        return doc

    @guarded(api, "get", "/agents", READ, tags=["agents"])
    def agent_list(
        request: Request, cursor: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 100
    ) -> AgentsPage:
        """Every host agent that sent a heartbeat: last seen, version, spool depth, dropped snapshots."""
        page = _paged(lambda: srv(request).store.agents(cursor=cursor, limit=limit))
        return {"items": page.items, "next_cursor": page.next_cursor}

    @guarded(api, "post", "/tokens", ADMIN, tags=["admin"], status_code=201)
    def create_token(request: Request, body: TokenRequest) -> TokenCreated:
        """A new token (its secret is in this response only)."""
        if body["role"] not in ROLES:
            raise HTTPException(422, f"unknown role {body['role']!r}; roles are {', '.join(ROLES)}")
        hosts = body.get("hosts") or None
        bad = [h for h in hosts or () if not DEVICE_NAME.fullmatch(h)]
        if bad:
            raise HTTPException(422, f"{bad[0]!r} is not a host name")
        made = srv(request).create_token(body["role"], body["name"], principal_of(request).token_id, hosts)
        return {
            "id": made.id,
            "role": body["role"],
            "token": made.token,
            "hosts": sorted(set(hosts)) if hosts else None,
        }

    @guarded(api, "get", "/tokens", ADMIN, tags=["admin"])
    def list_tokens(request: Request) -> list[TokenInfo]:
        """Every token (id, role, name, hosts, created, revoked); never a secret or a hash."""
        rows: list[TokenInfo] = srv(request).store.token_list()  # type: ignore[assignment]
        return rows

    @guarded(api, "delete", "/tokens/{token_id}", ADMIN, tags=["admin"], status_code=204, responses={404: {}})
    def revoke_token(request: Request, token_id: str) -> Response:
        """Revoke a token: every replica refuses it from the next request on."""
        if not srv(request).revoke_token(token_id, principal_of(request).token_id):
            raise HTTPException(404, f"no live token {token_id!r}")
        return Response(status_code=204)

    @guarded(api, "get", "/audit", ADMIN, tags=["admin"])
    def audit(
        request: Request, cursor: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 100
    ) -> dict[str, Any]:
        """Every change (ingest, re-check, token, intent), newest first."""
        page = _paged(lambda: srv(request).store.audit_log(cursor=cursor, limit=limit))
        return {"items": page.items, "next_cursor": page.next_cursor}

    return api


def _paged(fetch: Callable[[], Any]) -> Any:
    try:
        return fetch()
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    except TypeError:  # a cursor that decodes but holds values of the wrong type
        raise HTTPException(400, "malformed cursor") from None
