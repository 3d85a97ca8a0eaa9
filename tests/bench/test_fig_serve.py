"""bench/fig_serve.py's workload and baseline on a small twin (the servers themselves run in the figure)."""

from __future__ import annotations

from pathlib import Path

from bench.fig_serve import CHANGE, ROUTES, _p99, host_uploads, measure_baseline

from unifab.serve.ingest import parse_upload


def test_host_uploads_and_the_baseline(tmp_path: Path) -> None:
    from unifab.twin.generate import generate

    bundle = tmp_path / "b"
    generate(bundle, gpus=32, seed=1)
    before = {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()}
    uploads = host_uploads(bundle, 3)
    assert [sid for sid, _ in uploads] == ["bench-gpu001-mtu", "bench-gpu002-mtu", "bench-gpu003-mtu"]
    for sid, data in uploads:
        host = sid.removeprefix("bench-").removesuffix("-mtu")
        upload = parse_upload(data, sid, 1 << 30)
        assert list(upload.parts) == [f"hosts/{host}"]
        assert upload.parts[f"hosts/{host}"][f"hosts/{host}/{CHANGE[0]}"] == CHANGE[1]
    base = measure_baseline(bundle, uploads)
    assert base.snapshots == 3 and base.load_s > 0 and base.per_s > 0
    import unifab

    clean = len(unifab.run_checks(unifab.load_snapshot(bundle).fabric))
    assert base.findings > clean  # the MTU changes made findings
    assert {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()} == before  # restored byte for byte


def test_p99_and_routes() -> None:
    assert _p99([float(i) for i in range(1, 101)]) == 99.0
    assert _p99([5.0]) == 5.0
    assert all(path.startswith("/api/v1/") for path, _ in ROUTES.values())
