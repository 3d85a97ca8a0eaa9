"""Planned cabling from a NetBox or Nautobot source of truth, over its REST API.

``GET <base>/api/dcim/cables/?limit=<n>`` with ``Authorization: Token <token>``, following each page's
``next`` URL until it is null. Nautobot answers the same endpoint; its 2.x API nests related objects
only when asked; the device name sits two levels down (cable → termination → device), so the request
adds ``depth=2``.
Pages are read by the pure parser :mod:`unifab.parse.plan.netbox_cables`. The whole fetch runs under one
:class:`~unifab.collect.limits.Budget`: ``timeout_s`` per connect and read, ``deadline_s`` for every page
together (a server that drips bytes is cut off), ``max_bytes`` for all pages (decoded; a page announcing
more is refused unread). Every failure, transport, decoding or limit, is a :class:`SourceOfTruthError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from unifab.collect.limits import DEFAULT_MAX_BYTES, Budget, BudgetExceeded, HttpReply, http_read
from unifab.errors import UnifabError
from unifab.parse.plan import netbox_cables
from unifab.parse.plan.netbox_cables import NetboxCable

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGES",
    "TOKEN_ENV",
    "Fetched",
    "SourceOfTruthError",
    "cables_url",
    "fetch_cables",
]

DEFAULT_PAGE_SIZE = 1000
DEFAULT_DEADLINE_S = 600.0  # every page of a large instance together
MAX_PAGES = 10_000  # a `next` chain longer than this is a loop, not a cabling plan
TOKEN_ENV = "UNIFAB_NETBOX_TOKEN"


class SourceOfTruthError(UnifabError):
    """The API refused, failed or answered something that is not a cables page (names the URL)."""


@dataclass(frozen=True, slots=True)
class Fetched:
    cables: tuple[NetboxCable, ...]
    pages: int
    count: int | None  # what the first page said the total is


def cables_url(base: str, page_size: int = DEFAULT_PAGE_SIZE, nautobot: bool = False) -> str:
    """The first page's URL from a base such as ``https://netbox.example.com`` (``/api`` optional)."""
    root = base.rstrip("/")
    if not root.endswith("/api"):
        root += "/api"
    return f"{root}/dcim/cables/?limit={page_size}" + ("&depth=2" if nautobot else "")


def fetch_cables(
    base: str,
    token: str,
    *,
    nautobot: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    timeout_s: float = 30.0,
    transport: httpx.BaseTransport | None = None,
    verify: bool = True,
    deadline_s: float | None = DEFAULT_DEADLINE_S,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> Fetched:
    """Every cable of the instance, page by page; raises :class:`SourceOfTruthError` naming the failing URL."""
    if page_size < 1:
        raise SourceOfTruthError(f"page size must be at least 1, got {page_size}")
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    url: str | None = cables_url(base, page_size, nautobot)
    cables: list[NetboxCable] = []
    seen: set[str] = set()
    count: int | None = None
    pages = 0
    with (
        Budget(deadline_s, max_bytes) as budget,
        httpx.Client(headers=headers, timeout=timeout_s, transport=transport, verify=verify) as client,
    ):
        while url is not None:
            if url in seen or pages >= MAX_PAGES:
                raise SourceOfTruthError(f"{url}: the 'next' links loop back to a page already read")
            seen.add(url)
            page = _page(client, url, budget, timeout_s)
            pages += 1
            if count is None:
                count = page.count
            cables.extend(page.cables)
            url = page.next
    return Fetched(tuple(cables), pages, count)


def _page(client: httpx.Client, url: str, budget: Budget, timeout_s: float) -> netbox_cables.CablesPage:
    try:
        response = http_read(client, "GET", url, budget, per_read_timeout=timeout_s)
    except BudgetExceeded as exc:
        raise SourceOfTruthError(f"{url}: {exc.reason}") from None
    except httpx.HTTPError as exc:  # transport, TLS, a body that cannot be decoded
        raise SourceOfTruthError(f"{url}: {type(exc).__name__}: {exc}") from None
    if response.status != 200:
        raise SourceOfTruthError(f"{url}: HTTP {response.status} {response.reason}{_detail(response)}")
    try:
        text = response.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceOfTruthError(f"{url}: the page is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return netbox_cables.parse(text, url)


def _detail(response: HttpReply) -> str:
    """NetBox and Nautobot explain refusals as ``{"detail": "Invalid token"}``."""
    hint = " (check the API token and its permissions)" if response.status in (401, 403) else ""
    try:
        body: Any = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        return hint
    detail = body.get("detail") if isinstance(body, dict) else None
    return (f": {detail}" if isinstance(detail, str) else "") + hint
