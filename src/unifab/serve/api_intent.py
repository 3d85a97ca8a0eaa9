"""``PUT /api/v1/intent`` and ``GET /api/v1/intent``: the fabric's intent file (``fabric.yaml``), held by the server.

The intent is what the fabric is checked against (the QoS profile, thresholds, the version baseline) and what
``POST /api/v1/render`` renders when its body names no intent. An upload is the YAML text itself; it is parsed by
the library's loader (:func:`unifab.api.parse_intent`) first, and refused whole with 422 and one located line
per problem (``fabric.yaml:3: not valid YAML: ...``) when it does not load. A good one is ingested like any
other bundle part (the ``fabric.yaml`` part, so every replica catches up to it and the fabric is re-checked
against it) and audited as ``intent.put`` (its sha256 and size, the snapshot that carried it). Putting the
intent the server already holds changes nothing (200, ``"changed": false``).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from typing_extensions import TypedDict

from unifab.api import IntentError, parse_intent
from unifab.serve.auth import INTENT, READ
from unifab.serve.ingest import IngestError, pack_tar
from unifab.serve.render_view import MAX_INTENT_BYTES
from unifab.serve.routing import guarded, principal_of
from unifab.serve.service import Server

__all__ = ["INTENT_FILE", "IntentDoc", "intent_router", "stored_intent"]

INTENT_FILE = "fabric.yaml"
MEDIA = ("application/yaml", "application/x-yaml", "text/yaml", "text/plain")


class IntentDoc(TypedDict):
    intent: str  # the fabric.yaml text
    sha256: str
    bytes: int
    snapshot_id: str | None  # the snapshot that stored it (None when it came with an older bundle upload)
    changed: bool  # PUT: False when the server already held exactly this text


def stored_intent(server: Server) -> bytes | None:
    """The fabric.yaml the server's bundle holds now (caught up from the store), or ``None``."""
    server.catch_up()
    return server.bundle_parts().get(INTENT_FILE, {}).get(INTENT_FILE)


def _doc(body: bytes, snapshot_id: str | None, changed: bool) -> IntentDoc:
    return {
        "intent": body.decode("utf-8", "replace"),
        "sha256": hashlib.sha256(body).hexdigest(),
        "bytes": len(body),
        "snapshot_id": snapshot_id,
        "changed": changed,
    }


def intent_router() -> APIRouter:
    api = APIRouter(prefix="/api/v1")

    def srv(request: Request) -> Server:
        server: Server = request.app.state.server
        return server

    @guarded(api, "get", "/intent", READ, tags=["intent"], responses={404: {"description": "no intent held"}})
    def get_intent(request: Request) -> IntentDoc:
        """The intent file the fabric is checked against now."""
        server = srv(request)
        body = stored_intent(server)
        if body is None:
            raise HTTPException(404, "the server holds no intent: PUT /api/v1/intent, or ingest a bundle with one")
        part = server.store.part_snapshot(INTENT_FILE)
        return _doc(body, part, False)

    @guarded(
        api,
        "put",
        "/intent",
        INTENT,
        tags=["intent"],
        responses={
            200: {"description": "stored (changed: true), or the server held exactly this intent already"},
            400: {"description": "not UTF-8 text"},
            413: {"description": "larger than the server accepts"},
            415: {"description": "not a YAML or text media type"},
            422: {"description": "the intent does not load: one located line per problem"},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "description": "the fabric.yaml text (docs/intent.md)",
                "content": {"application/yaml": {"schema": {"type": "string"}}},
            }
        },
    )
    async def put_intent(request: Request) -> IntentDoc:
        """Store the intent (operator, admin): validated by the library's loader, re-checked, audited."""
        server = srv(request)
        media = request.headers.get("content-type", "application/yaml").split(";")[0].strip().lower()
        if media not in MEDIA:
            raise HTTPException(415, f"send the intent as application/yaml (or text/plain), not {media[:60]!r}")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_INTENT_BYTES:
                raise HTTPException(413, f"the intent is larger than {MAX_INTENT_BYTES:,} bytes")
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HTTPException(400, f"{INTENT_FILE}: not UTF-8 text (byte {exc.start})") from None
        try:
            parse_intent(text, INTENT_FILE)
        except IntentError as exc:
            raise HTTPException(422, list(exc.problems)) from None
        data = bytes(body)
        if await run_in_threadpool(stored_intent, server) == data:
            return _doc(data, server.store.part_snapshot(INTENT_FILE), False)
        principal = principal_of(request)
        digest = hashlib.sha256(data).hexdigest()
        snapshot_id = f"intent:{digest[:16]}:{secrets.token_hex(4)}"
        try:
            _created, doc = await run_in_threadpool(
                server.ingest, pack_tar({INTENT_FILE: data}), snapshot_id, principal
            )
        except IngestError as exc:
            raise HTTPException(exc.status, exc.message) from None
        detail: dict[str, Any] = {"sha256": digest, "bytes": len(data), "snapshot": doc["id"], "mode": doc["mode"]}
        server.store.audit_entry(principal.token_id, "intent.put", INTENT_FILE, detail, datetime.now(UTC))
        return _doc(data, doc["id"], True)

    return api
