"""How long ``unifab serve``'s fabric routes and pages take on a twin of N GPUs (one process, SQLite).

Run from the repository root: ``python -m bench.serve_pages --gpus 2048`` (default 512). It generates a twin,
ingests it in process (FastAPI's test client: no network in the timing), then times the first request after
the ingest (which builds the fabric index), and the median of repeated requests for a page of links, one
link, the jobs, one job, the rail map (JSON, SVG, page), the link list page and a link debugger page. Prints
one JSON object; the point is that a page costs the same whatever the fabric's size (bounded by its page
size), while the first request after an ingest grows with the fabric.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["main", "measure"]


def _median_ms(call: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def measure(gpus: int, repeat: int, scratch: Path) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from unifab.serve.app import create_app
    from unifab.serve.service import Settings, pack_directory
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    bundle = scratch / "bundle"
    generate(bundle, gpus=gpus, seed=3, scenarios=tuple(SCENARIOS))
    app = create_app(Settings(db=str(scratch / "serve.db"), recheck_wait=600))
    out: dict[str, Any] = {"gpus": gpus}
    with TestClient(app) as client:
        server = app.state.server
        auth = {"Authorization": f"Bearer {server.create_token('admin', 'bench', 'bench').token}"}
        t0 = time.perf_counter()
        r = client.post("/api/v1/snapshots", content=pack_directory(bundle), headers=auth)
        out["ingest_s"] = round(time.perf_counter() - t0, 2)
        assert r.status_code == 201, r.text

        def get(path: str, **params: Any) -> Any:
            response = client.get(path, params=params, headers=auth)
            assert response.status_code == 200, (path, response.status_code, response.text[:200])
            return response

        t0 = time.perf_counter()
        first = get("/api/v1/links", flagged=True).json()
        out["first_request_after_ingest_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["links"] = len(server.fabric_index().link_ids)
        link_id = first["items"][0]["id"]
        jobs = get("/api/v1/jobs").json()["items"]
        timed: dict[str, Callable[[], Any]] = {
            "api_links_page_100": lambda: get("/api/v1/links", limit=100),
            "api_links_flagged_100": lambda: get("/api/v1/links", flagged=True, limit=100),
            "api_link": lambda: get(f"/api/v1/links/{link_id}"),
            "api_jobs": lambda: get("/api/v1/jobs"),
            "api_railmap_json": lambda: get("/api/v1/topology/railmap"),
            "api_railmap_svg": lambda: get("/api/v1/topology/railmap.svg"),
            "api_topology_500": lambda: get("/api/v1/topology", limit=500),
            "ui_railmap": lambda: get("/railmap"),
            "ui_links": lambda: get("/links"),
            "ui_link_debugger": lambda: get("/links/" + quote(link_id, safe="")),
        }
        if jobs:
            job_id = jobs[0]["id"]
            timed["api_job"] = lambda: get(f"/api/v1/jobs/{job_id}")
            timed["ui_job"] = lambda: get(f"/jobs/{job_id}")
        out["median_ms"] = {name: _median_ms(call, repeat) for name, call in timed.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve_pages", description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="unifab-bench-serve-") as scratch:
        result = measure(args.gpus, args.repeat, Path(scratch))
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
