"""The live adapters under a total deadline and a byte cap, against real hostile servers on loopback.

The servers (tests/collect/conftest.py) drip a reply one byte every 0.25 s (the body, or the status line and
headers themselves), announce or stream 2 GiB, send a body that is not the gzip it claims, or send bytes that
are not RESP. Per-read timeouts are set longer than a drip, so only the total deadline can end a read.
"""

from __future__ import annotations

import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from fake_netbox import TOKEN
from redis_service import RedisServer
from redis_sonic import database_config, open_test_dbs

from unifab.collect.eos_eapi import EapiClient, EapiResponseError, EapiUnreachable
from unifab.collect.limits import Budget, BudgetExceeded
from unifab.collect.netbox import SourceOfTruthError, fetch_cables
from unifab.collect.sonic_redis import SonicRedis, SonicRedisError

DEADLINE_S = 1.5
SLACK_S = 1.5  # scheduling on a busy machine; a dripping server would otherwise hold the read for ever
MIB = 2**20


def _eapi(port: int, **kwargs: Any) -> EapiClient:
    return EapiClient(
        "127.0.0.1", name="leaf01", port=port, scheme="http", username="u", password="p", timeout=10, **kwargs
    )


# --- the total deadline -----------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", ["drip_body", "drip_headers"])
def test_eapi_drip_is_cut_off_by_the_total_deadline(hostile: Any, behaviour: str) -> None:
    port = hostile.start(behaviour)
    started = time.monotonic()
    with _eapi(port, deadline_s=DEADLINE_S) as client, pytest.raises(EapiUnreachable) as info:
        client.show("show version")
    elapsed = time.monotonic() - started
    assert elapsed < DEADLINE_S + SLACK_S, f"held for {elapsed:.1f} s"
    assert "1.5 s deadline" in str(info.value) and "leaf01" in str(info.value)


def test_eapi_deadline_covers_every_request_of_the_client(hostile: Any) -> None:
    """The deadline is the client's whole life: a second request gets only what is left."""
    port = hostile.start("drip_body")
    with _eapi(port, deadline_s=DEADLINE_S) as client:
        time.sleep(DEADLINE_S)
        started = time.monotonic()
        with pytest.raises(EapiUnreachable, match="deadline"):
            client.show("show version")
        assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("adapter", ["eapi", "redis"])
def test_a_name_lookup_that_never_answers_is_cut_off_by_the_deadline(
    monkeypatch: pytest.MonkeyPatch, adapter: str
) -> None:
    """getaddrinfo cannot be interrupted: the lookup runs in a thread the deadline abandons (the resolver of
    this machine cannot be made to hang, so the lookup is the one thing replaced here)."""
    release = threading.Event()
    real = socket.getaddrinfo
    name = "leaf01.fabric.example"

    def hanging(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == name:
            release.wait(30)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    started = time.monotonic()
    try:
        if adapter == "eapi":
            with (
                EapiClient(name, name="leaf01", username="u", password="p", timeout=10, deadline_s=DEADLINE_S) as c,
                pytest.raises(EapiUnreachable) as info,
            ):
                c.show("show version")
        else:
            reader = SonicRedis("leaf01", host=name, port=1, database_config=database_config(1),
                                timeout_s=10, deadline_s=DEADLINE_S)  # fmt: skip
            with reader, pytest.raises(SonicRedisError) as info:
                reader.config_db_hashes()
    finally:
        release.set()
    assert time.monotonic() - started < DEADLINE_S + SLACK_S
    assert f"name lookup of {name}" in str(info.value)


def test_a_name_is_looked_up_once_and_the_server_reached(hostile: Any) -> None:
    """``localhost`` is resolved under the budget and the request still reaches the server (which then sends
    a body that is not the gzip it claims: a response error, so the connection was made)."""
    port = hostile.start("bad_gzip")
    with (
        EapiClient("localhost", name="leaf01", port=port, scheme="http", username="u", password="p") as client,
        pytest.raises(EapiResponseError),
    ):
        client.show("show version")
    budget = Budget(deadline_s=DEADLINE_S)
    assert budget.resolve("127.0.0.1", 80) == "127.0.0.1" and budget.resolve("[::1]", 80) == "::1"


def test_netbox_drip_is_cut_off(hostile: Any) -> None:
    port = hostile.start("drip_body")
    started = time.monotonic()
    with pytest.raises(SourceOfTruthError, match="deadline"):
        fetch_cables(f"http://127.0.0.1:{port}", TOKEN, timeout_s=10, deadline_s=DEADLINE_S)
    assert time.monotonic() - started < DEADLINE_S + SLACK_S


def test_redis_drip_is_cut_off(hostile: Any) -> None:
    port = hostile.start("drip_resp")
    reader = SonicRedis("leaf1", port=port, database_config=database_config(port), timeout_s=10, deadline_s=DEADLINE_S)
    started = time.monotonic()
    with reader, pytest.raises(SonicRedisError, match="deadline") as info:
        reader.config_db_hashes()
    assert time.monotonic() - started < DEADLINE_S + SLACK_S
    assert info.value.kind == "unreachable"


# --- the byte cap -------------------------------------------------------------------------------------------


def test_eapi_refuses_a_2gib_reply_unread(hostile: Any) -> None:
    port = hostile.start("announce_2gib")
    tracemalloc.start()
    try:
        with _eapi(port, max_bytes=64 * MIB) as client, pytest.raises(EapiResponseError) as info:
            client.show("show version")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "announced 2,147,483,648 bytes" in str(info.value) and "67,108,864" in str(info.value)
    assert peak < 8 * MIB


def test_eapi_stops_reading_a_stream_at_the_cap(hostile: Any) -> None:
    port = hostile.start("stream_2gib_chunked")
    tracemalloc.start()
    try:
        with _eapi(port, max_bytes=4 * MIB) as client, pytest.raises(EapiResponseError) as info:
            client.show("show version")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "sent more than 4,194,304 bytes" in str(info.value)
    assert peak < 24 * MIB  # the cap plus a chunk or two, not 2 GiB


def test_netbox_refuses_a_2gib_page(hostile: Any) -> None:
    port = hostile.start("announce_2gib")
    with pytest.raises(SourceOfTruthError, match="too large"):
        fetch_cables(f"http://127.0.0.1:{port}", TOKEN, max_bytes=MIB)


@pytest.fixture
def dbs(redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    yield from open_test_dbs(redis_server)


def test_redis_reply_over_the_cap(redis_server: RedisServer, dbs: dict[str, redis.Redis]) -> None:
    dbs["CONFIG_DB"].hset("PORT|Ethernet0", mapping={"description": "x" * (2 * MIB)})
    config = database_config(redis_server.port)
    with SonicRedis("leaf1", database_config=config, max_bytes=MIB) as reader, pytest.raises(SonicRedisError) as info:
        reader.config_db_hashes()
    assert "too large" in str(info.value) and info.value.kind == "error"


# --- bytes that are not what they claim ---------------------------------------------------------------------


def test_eapi_bad_gzip_is_a_response_error(hostile: Any) -> None:
    port = hostile.start("bad_gzip")
    with _eapi(port) as client, pytest.raises(EapiResponseError, match="cannot be decoded"):
        client.show("show version")


def test_netbox_bad_gzip_is_a_source_of_truth_error(hostile: Any) -> None:
    port = hostile.start("bad_gzip")
    with pytest.raises(SourceOfTruthError, match="DecodingError"):
        fetch_cables(f"http://127.0.0.1:{port}", TOKEN)


def test_redis_bytes_that_are_not_resp(hostile: Any) -> None:
    port = hostile.start("not_resp")
    with (
        SonicRedis("leaf1", port=port, database_config=database_config(port), timeout_s=3) as reader,
        pytest.raises(SonicRedisError, match="not a Redis reply") as info,
    ):
        reader.config_db_hashes()
    assert info.value.kind == "unsupported"


# --- the budget itself ----------------------------------------------------------------------------------------


def test_budget_counts_and_trips_once() -> None:
    with Budget(deadline_s=60, max_bytes=10) as budget:
        budget.take(10)
        with pytest.raises(BudgetExceeded) as info:
            budget.take(1)
        assert not info.value.deadline
        assert budget.tripped is info.value or budget.tripped is not None
        with pytest.raises(BudgetExceeded):
            budget.check()  # once over, it stays over


def test_budget_timeout_never_exceeds_what_is_left() -> None:
    with Budget(deadline_s=0.2, max_bytes=None) as budget:
        assert budget.timeout(10) <= 0.2
        assert budget.timeout(None) <= 0.2
        time.sleep(0.25)
        with pytest.raises(BudgetExceeded) as info:
            budget.timeout(10)
        assert info.value.deadline


def test_budget_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="positive"):
        Budget(deadline_s=0)
    with pytest.raises(ValueError, match="at least 1"):
        Budget(max_bytes=0)


def test_unbounded_budget_leaves_a_good_server_alone(redis_server: RedisServer, dbs: dict[str, redis.Redis]) -> None:
    dbs["CONFIG_DB"].hset("PORT|Ethernet0", mapping={"mtu": "9100"})
    config = database_config(redis_server.port)
    with SonicRedis("leaf1", database_config=config, deadline_s=None, max_bytes=None) as reader:
        assert reader.config_db_hashes() == {"PORT|Ethernet0": {"mtu": "9100"}}
