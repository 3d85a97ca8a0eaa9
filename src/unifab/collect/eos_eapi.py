"""Live Arista EOS eAPI: JSON-RPC 2.0 ``runCmds`` over HTTPS, and the bundle collector for one EOS switch.

The client posts ``{"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": [...],
"format": "json"|"text"}, "id": ...}`` to ``<scheme>://<host>[:port]/command-api`` with HTTP basic auth.
Credentials come from the arguments, else from ``UNIFAB_EOS_USERNAME``/``UNIFAB_EOS_PASSWORD``. TLS
certificates are verified by default (system trust store); pass ``verify="<CA file>"`` for a private CA,
or ``verify=False`` to turn checking off explicitly.

Exceptions (every message names the device, the URL and what happened)::

    UnifabError
    └── EapiError               any failure talking to one device
        ├── EapiUnreachable     connection refused or reset, DNS, TLS handshake, timeout, the total deadline
        ├── EapiAuthError       HTTP 401/403, or no credentials given
        ├── EapiCommandError    the JSON-RPC reply carries an error object (code, message, CLI errors)
        └── EapiResponseError   an answer that is not an eAPI JSON-RPC reply (HTTP status, JSON, shape, a body
                                that cannot be decoded, a reply over the byte cap)

Every reply is streamed under the client's :class:`~unifab.collect.limits.Budget`: ``timeout`` bounds each
connect and read, ``deadline_s`` the client's whole life (every request; a server that drips bytes is cut
off), ``max_bytes`` what the device may send in all (decoded; a larger ``Content-Length`` is refused unread).

:func:`collect_eos` runs the bundle's EOS commands and writes ``switches/<name>/eos/{running-config.txt,
show-interfaces.json, show-lldp-neighbors-detail.json, show-version.json}`` under a bundle directory.
"""

from __future__ import annotations

import itertools
import os
import re
import ssl
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import orjson

from unifab.collect.limits import DEFAULT_DEADLINE_S, DEFAULT_MAX_BYTES, Budget, BudgetExceeded, HttpReply, http_read
from unifab.collect.staging import write_file
from unifab.errors import UnifabError, UsageError

__all__ = [
    "BUNDLE_FILES",
    "COUNTER_FILES",
    "ENV_PASSWORD",
    "ENV_USERNAME",
    "EapiAuthError",
    "EapiClient",
    "EapiCommandError",
    "EapiError",
    "EapiResponseError",
    "EapiUnreachable",
    "collect_eos",
]

ENV_USERNAME = "UNIFAB_EOS_USERNAME"
ENV_PASSWORD = "UNIFAB_EOS_PASSWORD"
DEFAULT_TIMEOUT_S = 10.0
RUNNING_CONFIG = "show running-config"
# bundle file name -> command run with format json (the running-config is fetched as text)
BUNDLE_FILES: dict[str, str] = {
    "show-interfaces.json": "show interfaces",
    "show-lldp-neighbors-detail.json": "show lldp neighbors detail",
    "show-version.json": "show version",
}
# counters a round of `unifab health` reads (health/snapshot_series.py): asked for in a request of their own, so a
# platform that has no such command (EOS answers "invalid command") costs that file, not the device's configuration
COUNTER_FILES: dict[str, str] = {
    "show-interfaces-counters-queue-detail.json": "show interfaces counters queue detail",
}
RUNNING_CONFIG_FILE = "running-config.txt"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")


class EapiError(UnifabError):
    """Talking to one EOS device over eAPI failed; ``device`` is its name."""

    def __init__(self, device: str, message: str) -> None:
        self.device = device
        super().__init__(f"eAPI {device}: {message}")


class EapiUnreachable(EapiError):
    """No HTTP answer: connection refused or reset, name resolution, TLS handshake, or timeout."""


class EapiAuthError(EapiError):
    """The device refused the credentials (HTTP 401/403), or none were given."""


class EapiCommandError(EapiError):
    """The device answered with a JSON-RPC error object (a command failed or was refused)."""

    def __init__(self, device: str, code: int | None, message: str, errors: tuple[str, ...]) -> None:
        self.code = code
        self.error_message = message
        self.errors = errors
        detail = f"; {'; '.join(errors)}" if errors else ""
        super().__init__(device, f"command failed (JSON-RPC error {code}): {message}{detail}")


class EapiResponseError(EapiError):
    """The answer is not an eAPI JSON-RPC reply: unexpected HTTP status, not JSON, or the wrong shape."""


class EapiClient:
    """One EOS device's eAPI endpoint. Use as a context manager, or call :meth:`close`.

    ``enable`` sends ``enable`` before the commands (as pyeapi does), so users below privilege 15
    can read the running-config; its empty result is dropped.
    """

    def __init__(
        self,
        host: str,
        *,
        name: str | None = None,
        username: str | None = None,
        password: str | None = None,
        scheme: str = "https",
        port: int | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        verify: bool | str | Path = True,
        enable: bool = True,
        env: Mapping[str, str] | None = None,
        deadline_s: float | None = DEFAULT_DEADLINE_S,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
    ) -> None:
        env = os.environ if env is None else env
        self.host = host
        self.name = name or host
        if not _SAFE_NAME.fullmatch(self.name):
            raise UsageError(f"EOS device name {self.name!r} cannot name a bundle directory")
        if scheme not in ("https", "http"):
            raise UsageError(f"eAPI scheme must be 'https' or 'http', got {scheme!r}")
        netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
        self.url = f"{scheme}://{netloc}{f':{port}' if port is not None else ''}/command-api"
        self.username = username if username is not None else env.get(ENV_USERNAME)
        password = password if password is not None else env.get(ENV_PASSWORD)
        if not self.username or password is None:
            raise EapiAuthError(
                self.name,
                f"no credentials for {self.url}: pass username/password or set {ENV_USERNAME} and {ENV_PASSWORD}",
            )
        self.timeout = timeout
        self.enable = enable
        self._ids = itertools.count(1)
        self.budget = Budget(deadline_s, max_bytes)
        self._client = httpx.Client(
            auth=httpx.BasicAuth(self.username, password),
            timeout=httpx.Timeout(timeout),
            verify=_ssl_verify(verify),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )

    # -- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        self.budget.close()
        self._client.close()

    def __enter__(self) -> EapiClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- requests ------------------------------------------------------------------------------------

    def run_cmds(self, cmds: Sequence[str], fmt: str = "json") -> list[Any]:
        """Run ``cmds`` in one request; one result per command (``{"output": text}`` for ``fmt="text"``)."""
        if fmt not in ("json", "text"):
            raise UsageError(f"eAPI format must be 'json' or 'text', got {fmt!r}")
        sent = ["enable", *cmds] if self.enable else list(cmds)
        request_id = f"unifab-{next(self._ids)}"
        payload = {
            "jsonrpc": "2.0",
            "method": "runCmds",
            "params": {"version": 1, "cmds": sent, "format": fmt},
            "id": request_id,
        }
        response = self._post(orjson.dumps(payload))
        results = self._results(response, request_id, len(sent))
        return results[1:] if self.enable else results

    def show(self, cmd: str) -> dict[str, Any]:
        """One command's JSON result (an object)."""
        result = self.run_cmds([cmd])[0]
        if not isinstance(result, dict):
            raise EapiResponseError(self.name, f"{cmd!r} returned {type(result).__name__}, expected a JSON object")
        return result

    def running_config(self) -> str:
        """``show running-config`` as text."""
        result = self.run_cmds([RUNNING_CONFIG], fmt="text")[0]
        output = result.get("output") if isinstance(result, dict) else None
        if not isinstance(output, str):
            raise EapiResponseError(self.name, f"{RUNNING_CONFIG!r} in text format returned no 'output' string")
        return output

    # -- internals -----------------------------------------------------------------------------------

    def _post(self, body: bytes) -> HttpReply:
        where = f"{self.url}"
        try:
            return http_read(self._client, "POST", self.url, self.budget, per_read_timeout=self.timeout, content=body)
        except BudgetExceeded as exc:
            if exc.deadline:
                raise EapiUnreachable(self.name, f"{where}: {exc.reason}") from None
            raise EapiResponseError(self.name, f"{where}: {exc.reason}") from None
        except httpx.DecodingError as exc:
            raise EapiResponseError(
                self.name, f"{where} answered a body that cannot be decoded ({_reason(exc)})"
            ) from None
        except httpx.TimeoutException as exc:
            raise EapiUnreachable(
                self.name, f"no answer from {where} within {self.timeout:g}s ({type(exc).__name__})"
            ) from exc
        except httpx.ConnectError as exc:
            if _is_tls_error(exc):
                raise EapiUnreachable(self.name, f"TLS handshake with {where} failed: {_reason(exc)}") from exc
            raise EapiUnreachable(self.name, f"cannot connect to {where}: {_reason(exc)}") from exc
        except httpx.TransportError as exc:
            raise EapiUnreachable(self.name, f"transport error talking to {where}: {_reason(exc)}") from exc
        except httpx.HTTPError as exc:  # anything else httpx refuses (a redirect loop, a malformed URL)
            raise EapiResponseError(self.name, f"{where}: {type(exc).__name__}: {_reason(exc)}") from None

    def _results(self, response: HttpReply, request_id: str, expected: int) -> list[Any]:
        where = self.url
        status = response.status
        if status in (401, 403):
            raise EapiAuthError(self.name, f"{where} refused the credentials of user {self.username!r} (HTTP {status})")
        if status != 200:
            raise EapiResponseError(self.name, f"{where} answered HTTP {status} {response.reason}".rstrip())
        try:
            body = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            raise EapiResponseError(self.name, f"{where} answered something that is not JSON ({exc.msg})") from None
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
            raise EapiResponseError(self.name, f"{where} answered JSON that is not a JSON-RPC 2.0 response")
        error = body.get("error")
        if error is not None:
            raise _command_error(self.name, error)
        if body.get("id") != request_id:
            raise EapiResponseError(self.name, f"{where} answered id {body.get('id')!r} to request {request_id!r}")
        result = body.get("result")
        if not isinstance(result, list) or len(result) != expected:
            got = f"{len(result)} results" if isinstance(result, list) else "no result list"
            raise EapiResponseError(self.name, f"{where} answered {got} for {expected} commands")
        return result


def _ssl_verify(verify: bool | str | Path) -> bool | ssl.SSLContext:
    if isinstance(verify, bool):
        return verify
    try:
        return ssl.create_default_context(cafile=str(verify))
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot use {str(verify)!r} as a CA file: {exc}") from exc


def _is_tls_error(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return "SSL" in str(exc) or "CERTIFICATE" in str(exc).upper()


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _command_error(device: str, error: object) -> EapiCommandError:
    if not isinstance(error, dict):
        return EapiCommandError(device, None, f"malformed error object {error!r}", ())
    code = error.get("code")
    message = error.get("message")
    errors: list[str] = []
    data = error.get("data")
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict) and isinstance(item.get("errors"), list):
                errors.extend(str(e) for e in item["errors"])
    return EapiCommandError(
        device,
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        message if isinstance(message, str) else repr(message),
        tuple(errors),
    )


def collect_eos(client: EapiClient, out_dir: Path) -> Path:
    """Fetch the bundle's EOS files from ``client`` and write them under ``out_dir/switches/<name>/eos``.

    All commands run before anything is written, so a failure leaves no partial device directory; a
    :data:`COUNTER_FILES` command the device does not know costs only its file. Returns the device's ``eos``
    directory.
    """
    cmds = list(BUNDLE_FILES.values())
    results = client.run_cmds(cmds)
    for cmd, result in zip(cmds, results, strict=True):
        if not isinstance(result, dict):
            raise EapiResponseError(client.name, f"{cmd!r} returned {type(result).__name__}, expected a JSON object")
    config = client.running_config()
    replies = dict(zip(BUNDLE_FILES, results, strict=True))
    for filename, cmd in COUNTER_FILES.items():
        try:
            (counters,) = client.run_cmds([cmd])
        except EapiCommandError:  # this platform or release has no such command: the file is not written
            continue
        if isinstance(counters, dict):
            replies[filename] = counters
    dest = out_dir / "switches" / client.name / "eos"
    dest.mkdir(parents=True, exist_ok=True)
    write_file(dest / RUNNING_CONFIG_FILE, (config if config.endswith("\n") else config + "\n").encode("utf-8"))
    for filename, result in replies.items():
        write_file(dest / filename, orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return dest
