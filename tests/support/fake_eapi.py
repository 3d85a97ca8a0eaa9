"""A real local eAPI endpoint for tests: ``http.server`` in a thread answering JSON-RPC ``runCmds``.

It checks basic auth and answers with the corpus's captured replies (leaf01 of the SuzieQ capture,
AMD's RoCE running-config), and a JSON-RPC error shaped as EOS sends it for commands it does not know.
A switch cannot run here, so its recorded answers are replayed.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import orjson

EOS = Path("switch") / "eos"
USER, PASSWORD = "admin", "s3cret"


def replies(samples: Path) -> dict[str, Any]:
    """Command -> the captured reply served for it (leaf01 of the SuzieQ capture, AMD's RoCE config)."""
    gather = (samples / EOS / "suzieq_gather_eos" / "device.output").read_text()
    decoder, i, records = json.JSONDecoder(), 0, []
    while gather[i:].strip():  # concatenated JSON lists, one per host
        chunk, i = decoder.raw_decode(gather, len(gather) - len(gather[i:].lstrip()))
        records += chunk
    version = next(r["data"] for r in records if r["hostname"] == "leaf01" and r["cmd"] == "show version")
    return {
        "show interfaces": orjson.loads((samples / EOS / "eos-4.23.5M_leaf01_show_interfaces.json").read_bytes()),
        "show lldp neighbors detail": orjson.loads(
            (samples / EOS / "eos-4.23.5M_leaf01_show_lldp_neighbors_detail.json").read_bytes()
        ),
        "show version": version,
        "show running-config": (samples / EOS / "eos_rocm_doc_arista7388_roce_dcqcn.cfg").read_text(),
        "show interfaces counters queue detail": orjson.loads(
            (samples / EOS / "eos_show_interfaces_counters_queue_detail.json").read_bytes()
        )["fixtures"]["success-all"],
    }


class EapiHandler(BaseHTTPRequestHandler):
    replies: ClassVar[dict[str, Any]] = {}
    requests: ClassVar[list[dict[str, Any]]] = []
    delay_s: ClassVar[float] = 0.0
    raw_answer: ClassVar[tuple[int, bytes] | None] = None

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.delay_s:
            time.sleep(self.delay_s)
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.path != "/command-api":
            self._send(404, b"not found", "text/plain")
            return
        if self.headers.get("Authorization") != expected:
            self._send(401, b"<html>Unauthorized</html>", "text/html")
            return
        if self.raw_answer is not None:
            self._send(*self.raw_answer)
            return
        request = orjson.loads(body)
        type(self).requests.append(request)
        params = request["params"]
        results: list[Any] = []
        for i, cmd in enumerate(params["cmds"]):
            if cmd == "enable":
                results.append({})
            elif cmd in self.replies and (params["format"] == "json") == (cmd != "show running-config"):
                reply = self.replies[cmd]
                results.append({"output": reply} if params["format"] == "text" else reply)
            else:
                data = [*results, {"errors": [f"Invalid input (at token 1: '{cmd.split()[-1]}')"]}]
                message = f"CLI command {i + 1} of {len(params['cmds'])} '{cmd}' failed: invalid command"
                error = {"code": 1002, "message": message, "data": data}
                self._send(200, orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}))
                return
        self._send(200, orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": results}))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that gave up is fine
        return


def make_handler(samples: Path) -> type[EapiHandler]:
    return type("Handler", (EapiHandler,), {"replies": replies(samples), "requests": [], "delay_s": 0.0})


def serve(handler: type[EapiHandler], tls: ssl.SSLContext | None = None) -> Iterator[int]:
    server = _Server(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
