"""Schemathesis against the app's own OpenAPI document, in process (ASGI), over a real SQLite store holding
the twin: every operation, a bounded number of generated requests each (valid and not), and no answer may be
a server error. An admin token, so that no route stops at 403 before its own checks run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings

from unifab.serve.app import create_app
from unifab.serve.service import Settings

EXAMPLES = 20


@schemathesis.serializer("application/gzip")
def _gzip(_ctx: Any, value: Any) -> bytes:
    """POST /snapshots takes raw bytes: send what was generated as it is."""
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module")
def app_and_token(tmp_path_factory: pytest.TempPathFactory, twin_upload: bytes) -> Iterator[tuple[FastAPI, str]]:
    app = create_app(Settings(db=str(tmp_path_factory.mktemp("fuzz") / "serve.db")))
    token = app.state.server.create_token("admin", "fuzz", "test").token
    with TestClient(app) as client:
        r = client.post("/api/v1/snapshots", content=twin_upload, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text
    yield app, token
    app.state.server.close()


def test_no_generated_request_gets_a_server_error(app_and_token: tuple[FastAPI, str]) -> None:
    app, token = app_and_token
    auth = {"Authorization": f"Bearer {token}"}
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app, headers=auth)
    failures: list[str] = []
    labels: list[str] = []
    start = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        labels.append(operation.label)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,  # the same requests on every run: a failure here reproduces
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate],
        )
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            response = case.call(headers=auth)
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.path} {case.path_parameters} {case.query}: {response.status_code}"
                )

        run()
    assert failures == []
    assert {"GET /api/v1/links/{link_id}", "POST /api/v1/render", "GET /api/v1/findings/history"} <= set(labels)
    assert time.monotonic() - start < 60
