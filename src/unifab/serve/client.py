"""Sending bundles to ``unifab serve``: what ``unifab check --push`` and ``unifab collect --push`` use.

A push is one ``POST /api/v1/snapshots`` of a tar.gz of the bundle layout
(:func:`unifab.serve.ingest.pack_directory`: deterministic, so the same files are the same snapshot and a
retry stores nothing twice). The token comes from ``UNIFAB_TOKEN`` or a file (``--token-file``; its first
line). Every way a push can fail is one :class:`PushError` line the command line prints (exit 2): no
token, a refused token (401), a role or scope that may not send this (403), too large (413), an upload
the server refuses (4xx), a server error, or a server that cannot be reached. httpx is imported only when
a push happens.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from unifab.serve.ingest import pack_directory

__all__ = ["TOKEN_ENV", "PushError", "push", "push_directory", "read_token", "response_detail", "snapshots_url"]

TOKEN_ENV = "UNIFAB_TOKEN"
_WHY = {
    401: "the server does not accept the token",
    403: "the token may not send this",
    413: "the upload is too large for the server",
}


class PushError(Exception):
    """A push that did not store anything, as one line for the user."""


def read_token(token_file: Path | None) -> str:
    """The token: the first line of ``token_file`` if given, else ``$UNIFAB_TOKEN``."""
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise PushError(f"{token_file}: cannot read the token: {getattr(exc, 'strerror', None) or exc}") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise PushError(f"{token_file}: the file is empty (it should hold the token on its first line)")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise PushError(f"--push needs a token: set {TOKEN_ENV} or pass --token-file (unifab serve token create)")
    return token


def snapshots_url(url: str) -> str:
    """``http://host:8080`` (or ``…/api/v1/snapshots``) → the ingest endpoint."""
    if not url.startswith(("http://", "https://")):
        raise PushError(f"--push {url!r}: expected an http:// or https:// URL of a unifab serve")
    base = url.rstrip("/")
    return base if base.endswith("/api/v1/snapshots") else f"{base}/api/v1/snapshots"


def push(
    url: str, data: bytes, token: str, *, snapshot_id: str | None = None, timeout: float = 300.0
) -> dict[str, Any]:
    """POST ``data`` (a tar.gz) to the server; its snapshot document, or :class:`PushError`."""
    import httpx

    target = snapshots_url(url)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"}
    if snapshot_id:
        headers["X-Unifab-Snapshot-Id"] = snapshot_id
    try:
        response = httpx.post(target, content=data, headers=headers, timeout=timeout)
    except httpx.ConnectError as exc:
        reason = "connection refused" if "refused" in str(exc).lower() else str(exc) or exc.__class__.__name__
        raise PushError(f"cannot reach {target}: {reason}") from None
    except httpx.TimeoutException:
        raise PushError(f"{target}: no answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise PushError(f"{target}: {exc.__class__.__name__}: {exc}") from None
    if response.status_code in (200, 201, 202):
        doc: dict[str, Any] = response.json()
        return doc
    detail = response_detail(response)
    why = _WHY.get(response.status_code, "the server refused the upload")
    if response.status_code >= 500:
        why = "the server failed"
    raise PushError(f"{target}: {why} ({response.status_code}): {detail}")


def push_directory(url: str, bundle: Path, token: str, parts: list[str] | None = None) -> dict[str, Any]:
    """Push a bundle directory (or only ``parts`` of it: ``hosts/<h>``, ``switches/<s>``, ...)."""
    return push(url, pack_directory(bundle, parts), token)


def response_detail(response: Any) -> str:
    """The one line a server's error answer says (its ``detail``), cut short; what a push prints."""
    try:
        body = response.json()
    except ValueError:
        return str(response.text[:200]).strip() or "no detail"
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])[:300]
    return str(body)[:200]
