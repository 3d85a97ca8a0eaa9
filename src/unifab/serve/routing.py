"""What the API and the UI routes share: reading a token, the role check, and a device's model.

:func:`guarded` declares a route behind :func:`require` and records the allowed roles in its OpenAPI
operation as ``x-unifab-roles``, which is how tests/serve walks the route table. A token comes as
``Authorization: Bearer <token>``, or for GET requests only as the UI's login cookie.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request

from unifab.jsonify import to_jsonable
from unifab.serve.auth import Principal
from unifab.serve.service import Server
from unifab.serve.store import JobScope

__all__ = [
    "COOKIE",
    "ROLE_KEY",
    "SEVERITIES",
    "device_model",
    "guarded",
    "job_scope",
    "parse_time",
    "principal_of",
    "require",
    "token_of",
]

COOKIE = "unifab_token"
ROLE_KEY = "x-unifab-roles"
SEVERITIES = ("critical", "error", "warning", "info")


def token_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if request.method in ("GET", "HEAD"):
        return request.cookies.get(COOKIE) or None
    return None


def require(roles: Sequence[str]) -> Callable[[Request], Principal]:
    """A dependency admitting a valid token whose role is in ``roles``: 401 without one, 403 otherwise."""
    allowed = tuple(roles)

    def dependency(request: Request) -> Principal:
        server: Server = request.app.state.server
        token = token_of(request)
        if token is None:
            raise HTTPException(
                401, "a token is required (Authorization: Bearer <token>)", {"WWW-Authenticate": "Bearer"}
            )
        principal = server.authenticate(token)
        if principal is None:
            raise HTTPException(401, "the token is not valid", {"WWW-Authenticate": "Bearer"})
        if principal.role not in allowed:
            raise HTTPException(403, f"role {principal.role!r} may not do this; it needs one of {', '.join(allowed)}")
        request.state.principal = principal
        return principal

    return dependency


def guarded(router: APIRouter, method: str, path: str, roles: Sequence[str], **kwargs: Any) -> Callable[..., Any]:
    """``router.<method>(path)`` behind :func:`require`, with the roles in the OpenAPI operation."""
    extra = {ROLE_KEY: list(roles), **kwargs.pop("openapi_extra", {})}
    decorator: Callable[..., Any] = getattr(router, method)(
        path, dependencies=[Depends(require(roles))], openapi_extra=extra, **kwargs
    )
    return decorator


def principal_of(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


def device_model(server: Server, name: str) -> dict[str, Any]:
    """The library's model of one device from the live fabric (caught up from the store first: another
    replica may have ingested it), and its count of open findings."""
    server.catch_up()
    kind, _, short = name.partition(":")
    found = server.live.device(kind, short)
    return {
        "model": None if found is None else to_jsonable(found),
        "open_findings": server.store.count_open(device=name),
    }


def parse_time(name: str, value: str | None) -> datetime | None:
    """An ISO-8601 time of a query parameter (``2026-01-05T12:00:00Z``, ``2026-01-05``; no zone means UTC);
    :class:`HTTPException` 422 naming the parameter for anything else."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        when = datetime.fromisoformat(text)
        return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: year 1 with an offset east of UTC
        raise HTTPException(
            422, f"{name}: {text[:60]!r} is not an ISO-8601 time (e.g. 2026-01-05T12:00:00Z or 2026-01-05)"
        ) from None


def job_scope(server: Server, job: str | None) -> JobScope | None:
    """The findings filter of one job (:class:`JobScope`) from the live fabric; 404 for a job it does not have."""
    if job is None or not job.strip():
        return None
    index = server.fabric_index()
    found = None if index is None else index.find_job(job.strip())
    if index is None or found is None:
        raise HTTPException(404, f"no job {job[:200]!r} (jobs are named job:slurm:<id> or job:k8s:<ns>/<name>)")
    keys = frozenset(f.key for f in index.job_findings(found))
    return JobScope(keys, tuple(f"host:{h}" for h in found.hosts))
