"""``unifab_links`` on /metrics: links by fabric, kind and QoS status, as aggregate counts (bounded labels),
equal to what the links API lists and to the library's links, on a RoCE twin and a mixed RoCE + IB twin."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from unifab.serve.app import create_app
from unifab.serve.metrics import LINK_STATUSES
from unifab.serve.service import Settings, pack_directory


def link_series(client: TestClient) -> dict[tuple[str, str, str], float]:
    text = client.get("/metrics").text
    (family,) = [f for f in text_string_to_metric_families(text) if f.name == "unifab_links"]
    return {(s.labels["fabric"], s.labels["kind"], s.labels["status"]): s.value for s in family.samples}


def all_links(client: TestClient, auth: dict[str, str]) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/v1/links", params=params, headers=auth).json()
        items += page["items"]
        if not (cursor := page["next_cursor"]):
            return items


@pytest.mark.parametrize("fabric", ["roce", "mixed"])
def test_links_by_qos_status(tmp_path: Path, small_twin: Path, fabric: str) -> None:
    import unifab

    bundle = small_twin
    if fabric == "mixed":
        from unifab.twin.generate import generate

        bundle = tmp_path / "mixed"
        generate(bundle, gpus=32, seed=2, scenarios=("ib-missing-cable", "ib-mtu", "mtu-mismatch"), fabric="mixed")
    app = create_app(Settings(db=str(tmp_path / "s.db")))
    auth = {"Authorization": f"Bearer {app.state.server.create_token('viewer', 'v', 't').token}"}
    with TestClient(app) as client:
        assert link_series(client) == {}  # no fabric yet: no series
        admin = app.state.server.create_token("admin", "a", "t").token
        posted = client.post(
            "/api/v1/snapshots", content=pack_directory(bundle), headers={"Authorization": f"Bearer {admin}"}
        )
        assert posted.status_code == 201
        series = link_series(client)
        listed = all_links(client, auth)

    model = unifab.load_snapshot(bundle).fabric
    assert sum(series.values()) == len(listed) == len(model.links)
    assert len(series) <= 2 * 3 * len(LINK_STATUSES)  # bounded: never one series per link
    assert {s for _, _, s in series} == set(LINK_STATUSES)  # every status of a present (fabric, kind), 0 too
    by_fabric = Counter(model.link_fabric(lk) for lk in model.links)
    assert {f: sum(v for (fab, _, _), v in series.items() if fab == f) for f in by_fabric} == dict(by_fabric)
    expected = Counter((lk["kind"], lk["severity"]) for lk in listed)
    got = Counter()
    for (_fab, kind, status), v in series.items():
        got[(kind, status)] += int(v)
    assert +got == +expected
    assert sum(v for (_, _, s), v in series.items() if s != "ok") > 0  # the scenarios flag some links
    if fabric == "mixed":
        assert sum(v for (f, _, s), v in series.items() if f == "ib") > 0
