"""NetBox/Nautobot collector against a real local HTTP server replaying recorded cables."""

from __future__ import annotations

import pytest
from fake_netbox import TOKEN, recorded, serve

from unifab.collect.netbox import SourceOfTruthError, cables_url, fetch_cables
from unifab.errors import ParseError


def test_follows_next_through_every_page() -> None:
    with serve(recorded("pynetbox_cables.json")) as (url, handler):
        fetched = fetch_cables(url, TOKEN, page_size=2)
    assert (fetched.pages, fetched.count) == (2, 3)
    assert [c.id for c in fetched.cables] == ["1", "2", "3"]
    assert handler.requests == ["/api/dcim/cables/?limit=2", "/api/dcim/cables/?limit=2&offset=2"]


def test_nautobot_asks_for_depth_and_reads_its_shape() -> None:
    with serve(recorded("pynautobot_cables.json")) as (url, handler):
        fetched = fetch_cables(url + "/api/", TOKEN, nautobot=True, page_size=1)
    assert fetched.pages == 3
    assert fetched.cables[2].b[0].device == "tst1-test6"
    assert handler.requests[0] == "/api/dcim/cables/?limit=1&depth=2"
    assert "depth=2" in handler.requests[2]  # NetBox-style next links keep the query


def test_wrong_token_is_one_clear_error() -> None:
    with serve(recorded("pynetbox_cables.json")) as (url, _), pytest.raises(SourceOfTruthError) as err:
        fetch_cables(url, "wrong")
    message = str(err.value)
    assert message.startswith(f"{url}/api/dcim/cables/?limit=1000: HTTP 403 Forbidden: Invalid token")
    assert "check the API token" in message


def test_unreachable_and_not_an_api() -> None:
    with serve([]) as (url, _):
        pass  # closed: nothing listens on the port any more
    with pytest.raises(SourceOfTruthError, match="ConnectError"):
        fetch_cables(url, TOKEN, timeout_s=2)
    with serve(recorded("pynetbox_cables.json")) as (url, _), pytest.raises(SourceOfTruthError, match="HTTP 404"):
        fetch_cables(url + "/netbox", TOKEN)


def test_a_page_that_is_not_cables_names_the_url() -> None:
    with serve([{"name": "no id"}]) as (url, _), pytest.raises(ParseError) as err:
        fetch_cables(url, TOKEN)
    assert err.value.source == cables_url(url)
    assert err.value.key == "results[0].id"


def test_cables_url() -> None:
    assert cables_url("https://nb.example.com/") == "https://nb.example.com/api/dcim/cables/?limit=1000"
    assert cables_url("https://nb.example.com/api", 50, nautobot=True) == (
        "https://nb.example.com/api/dcim/cables/?limit=50&depth=2"
    )
