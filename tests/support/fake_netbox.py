"""A real local NetBox-like endpoint for tests: ``http.server`` in a thread serving ``/api/dcim/cables/``.

It replays the cables of a recorded list response (``tests/collect/data/netbox/*.json``), paginated the
way NetBox paginates (``limit``/``offset``, absolute ``next``/``previous`` URLs, ``count`` of all), checks
``Authorization: Token <t>`` and refuses a wrong token with NetBox's 403 ``{"detail": "Invalid token"}``.
A NetBox instance cannot run here, so its recorded objects are served.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlencode, urlsplit

DATA = Path(__file__).resolve().parents[1] / "collect" / "data" / "netbox"
TOKEN = "0123456789abcdef0123456789abcdef01234567"


def recorded(name: str) -> list[dict[str, Any]]:
    """The ``results`` of one recorded list response."""
    results: list[dict[str, Any]] = json.loads((DATA / name).read_text())["results"]
    return results


class NetboxHandler(BaseHTTPRequestHandler):
    cables: ClassVar[list[dict[str, Any]]] = []
    requests: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        url = urlsplit(self.path)
        if self.headers.get("Authorization") != f"Token {TOKEN}":
            self._send(403, {"detail": "Invalid token"})
            return
        if url.path != "/api/dcim/cables/":
            self._send(404, {"detail": "Not found."})
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        limit, offset = int(query.get("limit", "50")), int(query.get("offset", "0"))
        page = self.cables[offset : offset + limit]
        base = f"http://{self.headers['Host']}{url.path}"

        def link(at: int) -> str:
            return f"{base}?{urlencode({**query, 'limit': limit, 'offset': at})}"

        nxt = link(offset + limit) if offset + limit < len(self.cables) else None
        prev = link(max(0, offset - limit)) if offset > 0 else None
        self._send(200, {"count": len(self.cables), "next": nxt, "previous": prev, "results": page})


@contextmanager
def serve(cables: list[dict[str, Any]]) -> Iterator[tuple[str, type[NetboxHandler]]]:
    """A server on a free local port; yields its base URL and the handler class (for recorded requests)."""
    handler = type("Handler", (NetboxHandler,), {"cables": cables, "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
