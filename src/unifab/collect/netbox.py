"""Planned cabling from a NetBox or Nautobot source of truth, over its REST API.

``GET <base>/api/dcim/cables/?limit=<n>`` with ``Authorization: Token <token>``, following each page's
``next`` URL until it is null. Nautobot answers the same endpoint; its 2.x API nests related objects
only when asked; the device name sits two levels down (cable → termination → device), so the request
adds ``depth=2``.
Pages are read by the pure parser :mod:`unifab.parse.plan.netbox_cables`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from unifab.errors import UnifabError
from unifab.parse.plan import netbox_cables
from unifab.parse.plan.netbox_cables import NetboxCable

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGES", "TOKEN_ENV", "Fetched", "SourceOfTruthError", "cables_url", "fetch_cables"]

DEFAULT_PAGE_SIZE = 1000
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
    with httpx.Client(headers=headers, timeout=timeout_s, transport=transport, verify=verify) as client:
        while url is not None:
            if url in seen or pages >= MAX_PAGES:
                raise SourceOfTruthError(f"{url}: the 'next' links loop back to a page already read")
            seen.add(url)
            page = _page(client, url)
            pages += 1
            if count is None:
                count = page.count
            cables.extend(page.cables)
            url = page.next
    return Fetched(tuple(cables), pages, count)


def _page(client: httpx.Client, url: str) -> netbox_cables.CablesPage:
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise SourceOfTruthError(f"{url}: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise SourceOfTruthError(f"{url}: HTTP {response.status_code} {response.reason_phrase}{_detail(response)}")
    return netbox_cables.parse(response.text, url)


def _detail(response: httpx.Response) -> str:
    """NetBox and Nautobot explain refusals as ``{"detail": "Invalid token"}``."""
    hint = " (check the API token and its permissions)" if response.status_code in (401, 403) else ""
    try:
        body: Any = response.json()
    except ValueError:
        return hint
    detail = body.get("detail") if isinstance(body, dict) else None
    return (f": {detail}" if isinstance(detail, str) else "") + hint
