"""Figure — ``unifab serve``: ingest + re-check throughput and API p99, one and two replicas.

The workload is what a fleet of host agents sends: one snapshot per host, each carrying that host's part of
the bundle with one real change (``eth0``'s MTU dropped to 1500, a ``QOS-MTU`` finding), every host once, so
the final state does not depend on the order the uploads land in. It is posted over HTTP from 4 client
threads to real ``unifab serve`` processes (uvicorn, started here) after the whole bundle was ingested once:

* **1 replica, SQLite** — the embedded default;
* **1 replica, PostgreSQL** and **2 replicas, PostgreSQL** — on a throw-away database this figure creates on
  the local server (127.0.0.1:5432, as ``tests/serve`` does) and drops; uploads alternate between the replicas.

An upload is answered once a re-check has covered it, so snapshots/s is ingest *and* re-check. The baseline,
measured in the same run, is unifab reading the same bundle from disk with its loader: the incremental
:class:`unifab.api.Session` loads it (read + parse + every check) and then applies the same host changes from
disk (``Session.update_paths``). Ratios: the server's snapshots/s over the session's, the session's full load
over the server's first ingest of the whole bundle, and the session's full load over the API's p99 (how much
sooner an answer comes from the server than from re-reading the bundle). After the workload every replica's
open findings must equal the session's (1 = yes).

The API p99 is measured sequentially over keep-alive connections (round-robin over the replicas), 200 requests
per route at full size: the summary, a page of 100 findings, a filtered findings page, a page of devices and a
page of flagged links.

Standalone (without ``bench.runner``): ``python -m bench.fig_serve --gpus 256``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import human_seconds, log, unifab_argv
from bench.context import Context
from bench.results import FigureResult, Row, Target

NAME = "serve"
TITLE = "unifab serve: ingest + re-check throughput and API p99 on one and two replicas, vs reading from disk"

FULL_SIZE = 4096
QUICK_SIZE = 256
FULL_SNAPSHOTS = 200  # host snapshots posted (distinct hosts; a 4,096-GPU twin has 512)
CLIENT_THREADS = 4
FULL_REQUESTS = 200  # per route, for the p99
QUICK_REQUESTS = 40
PG_ADMIN = os.environ.get("UNIFAB_BENCH_PG", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")
SAME = Target("==", 1.0)
CHANGE = ("sys/class/net/eth0/mtu", b"1500\n")


def size(ctx: Context) -> int:
    if ctx.sizes:
        return ctx.sizes[0]
    return QUICK_SIZE if ctx.quick else FULL_SIZE


def twin_sizes(ctx: Context) -> list[int]:
    return [size(ctx)]


# ------------------------------------------------------------------------------------------ workload


def host_uploads(bundle: Path, count: int) -> list[tuple[str, bytes]]:
    """(snapshot id, tar.gz of one host's part with the change) for ``count`` distinct hosts, built up front."""
    from unifab.serve.ingest import pack_tar

    out = []
    hosts = sorted(p for p in (bundle / "hosts").iterdir() if (p / CHANGE[0]).is_file())
    for host_dir in hosts[:count]:
        files = {
            f"hosts/{host_dir.name}/{p.relative_to(host_dir).as_posix()}": p.read_bytes()
            for p in host_dir.rglob("*")
            if p.is_file()
        }
        files[f"hosts/{host_dir.name}/{CHANGE[0]}"] = CHANGE[1]
        out.append((f"bench-{host_dir.name}-mtu", pack_tar(files)))
    return out


@dataclass(slots=True)
class Baseline:
    load_s: float  # Session(bundle): read + parse + every check, from disk
    update_s: float  # the host changes applied from disk, one update_paths each, in total
    findings: int  # after the changes
    snapshots: int

    @property
    def per_s(self) -> float:
        return self.snapshots / self.update_s


def measure_baseline(bundle: Path, uploads: list[tuple[str, bytes]]) -> Baseline:
    """The same bundle and the same host changes through unifab's loader, from disk; the files are restored."""
    from unifab.api import Session

    start = time.perf_counter()
    session = Session(bundle)
    load_s = time.perf_counter() - start
    changed = [bundle / "hosts" / sid.removeprefix("bench-").removesuffix("-mtu") / CHANGE[0] for sid, _ in uploads]
    originals = {p: p.read_bytes() for p in changed}
    try:
        start = time.perf_counter()
        for path in changed:
            path.write_bytes(CHANGE[1])
            session.update_paths([path])
        update_s = time.perf_counter() - start
        findings = len(session.findings)
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
    return Baseline(load_s, update_s, findings, len(changed))


# ------------------------------------------------------------------------------------------ servers


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def pg_database() -> Iterator[str | None]:
    """A new, empty database on the local PostgreSQL, dropped afterwards; ``None`` when there is no server."""
    try:
        import psycopg

        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except Exception as exc:
        log(f"no PostgreSQL at {PG_ADMIN!r}: {exc}")
        yield None
        return
    name = f"unifab_bench_{secrets.token_hex(6)}"
    info = admin.info
    try:
        admin.execute(f'CREATE DATABASE "{name}"')
        yield f"postgresql://{info.user}@{info.host}:{info.port}/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@dataclass(slots=True)
class Replicas:
    """``count`` ``unifab serve`` processes on one store, and an admin token for them."""

    db: str
    count: int
    work: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    token: str = ""

    def start(self) -> None:
        made = subprocess.run(
            [*unifab_argv(), "serve", "token", "create", "--role", "admin", "--db", self.db],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        self.token = made.stdout.strip()
        for i in range(self.count):
            port = _free_port()
            log_file = (self.work / f"replica-{i}.log").open("wb")
            self.procs.append(
                subprocess.Popen(
                    [*unifab_argv(), "serve", "--db", self.db, "--port", str(port)],
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            self.urls.append(f"http://127.0.0.1:{port}")
        import httpx

        for proc, url in zip(self.procs, self.urls, strict=True):
            deadline = time.monotonic() + 300
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"unifab serve exited with {proc.returncode}; see {self.work}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"unifab serve did not answer {url} in 300 s")
                time.sleep(0.3)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass(slots=True)
class Measured:
    first_ingest_s: float
    snapshots_per_s: float
    wall_s: float
    p99_ms: dict[str, float]
    open_findings: list[int]  # per replica, after the workload


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))]


ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "summary": ("/api/v1/summary", {}),
    "findings page of 100": ("/api/v1/findings", {"limit": 100}),
    "findings filtered (error+, QOS-MTU)": ("/api/v1/findings", {"check": "QOS-MTU", "severity": "error"}),
    "devices page of 100": ("/api/v1/devices", {"limit": 100}),
    "flagged links page of 100": ("/api/v1/links", {"flagged": "true", "limit": 100}),
}


def measure_server(
    replicas: Replicas, bundle_upload: bytes, uploads: list[tuple[str, bytes]], requests: int
) -> Measured:
    import httpx

    auth = {"Authorization": f"Bearer {replicas.token}"}
    timeout = httpx.Timeout(1800.0)
    start = time.perf_counter()
    r = httpx.post(f"{replicas.urls[0]}/api/v1/snapshots", content=bundle_upload, headers=auth, timeout=timeout)
    first_ingest_s = time.perf_counter() - start
    if r.status_code != 201:
        raise RuntimeError(f"the bundle ingest answered {r.status_code}: {r.text[:300]}")
    clients = [httpx.Client(base_url=u, headers=auth, timeout=timeout) for u in replicas.urls]
    lock = threading.Lock()
    failures: list[str] = []

    def post(i: int) -> None:
        sid, data = uploads[i]
        resp = clients[i % len(clients)].post("/api/v1/snapshots", content=data, headers={"X-Unifab-Snapshot-Id": sid})
        if resp.status_code != 201:
            with lock:
                failures.append(f"{sid}: {resp.status_code} {resp.text[:200]}")

    try:
        start = time.perf_counter()
        with ThreadPoolExecutor(CLIENT_THREADS) as pool:
            list(pool.map(post, range(len(uploads))))
        wall = time.perf_counter() - start
        if failures:
            raise RuntimeError(f"{len(failures)} host snapshots were not stored: {failures[0]}")
        p99: dict[str, float] = {}
        for name, (path, params) in ROUTES.items():
            clients[0].get(path, params=params)  # warm: the fabric index after the last ingest
            samples = []
            for i in range(requests):
                t0 = time.perf_counter()
                resp = clients[i % len(clients)].get(path, params=params)
                samples.append(time.perf_counter() - t0)
                if resp.status_code != 200:
                    raise RuntimeError(f"GET {path} answered {resp.status_code}: {resp.text[:200]}")
            p99[name] = _p99(samples) * 1000
        opened = [int(c.get("/api/v1/summary").json()["findings"]["open"]) for c in clients]
    finally:
        for c in clients:
            c.close()
    return Measured(first_ingest_s, len(uploads) / wall, wall, p99, opened)


# ------------------------------------------------------------------------------------------------ run


def _configs(work: Path) -> Iterator[tuple[str, Callable[[], contextlib.AbstractContextManager[str | None]], int]]:
    @contextlib.contextmanager
    def sqlite() -> Iterator[str | None]:
        yield str(work / "serve.db")

    yield "1 replica (SQLite)", sqlite, 1
    yield "1 replica (PostgreSQL)", pg_database, 1
    yield "2 replicas (PostgreSQL)", pg_database, 2


def run(ctx: Context) -> FigureResult:
    from unifab.serve.ingest import pack_directory

    fig = FigureResult(NAME, TITLE)
    gpus = size(ctx)
    case = f"{gpus:,} GPUs"
    twin = ctx.twins.get(gpus, timeout_s=ctx.size_budget_s)
    hosts = sum(1 for p in (twin.path / "hosts").iterdir() if p.is_dir())
    count = min(hosts, QUICK_SIZE // 8 if ctx.quick else FULL_SNAPSHOTS)
    requests = QUICK_REQUESTS if ctx.quick else FULL_REQUESTS
    uploads = host_uploads(twin.path, count)
    bundle_upload = pack_directory(twin.path)
    log(f"{case}: baseline: Session(bundle) from disk, then {len(uploads)} host changes from disk")
    base = measure_baseline(twin.path, uploads)
    base_case = f"{case}, baseline: unifab's loader from disk"
    fig.add(Row(NAME, base_case, "load + parse + every check (Session)", round(base.load_s, 3), "s"))
    fig.add(
        Row(
            NAME,
            base_case,
            "host changes applied (Session.update_paths)",
            round(base.per_s, 1),
            "snapshots/s",
            note=f"{base.snapshots} hosts, one eth0 MTU change each, in {human_seconds(base.update_s)}",
        )
    )
    headline = [f"baseline {base.per_s:,.0f} snapshots/s from disk, load {human_seconds(base.load_s)}"]
    work = Path(tempfile.mkdtemp(prefix="fig-serve-", dir=ctx.scratch))
    try:
        for label, make_db, count_replicas in _configs(work):
            row_case = f"{case}, {label}"
            with make_db() as db:
                if db is None:
                    fig.add(
                        Row(
                            NAME,
                            row_case,
                            "host snapshots ingested + re-checked",
                            None,
                            "snapshots/s",
                            note="no PostgreSQL server at 127.0.0.1:5432",
                        )
                    )
                    continue
                replicas = Replicas(db, count_replicas, work)
                log(f"{row_case}: starting {count_replicas} unifab serve")
                try:
                    replicas.start()
                    got = measure_server(replicas, bundle_upload, uploads, requests)
                finally:
                    replicas.stop()
            _rows(fig, row_case, base, got, len(uploads), requests)
            headline.append(
                f"{label}: {got.snapshots_per_s:,.1f} snapshots/s, summary p99 {got.p99_ms['summary']:.0f} ms"
            )
            if db.endswith(".db"):
                for suffix in ("", "-wal", "-shm"):
                    Path(db + suffix).unlink(missing_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    fig.notes.append(
        "Host snapshots go over HTTP from 4 client threads to real `unifab serve` processes (uvicorn); an "
        "upload is answered once a re-check covered it (docs/serve.md, 'Several replicas'), so snapshots/s is "
        "ingest and re-check. The baseline is the incremental Session of the library reading the same bundle "
        "and the same host changes from disk, in this process. p99 is over sequential keep-alive requests, "
        "round-robin over the replicas, after the workload."
    )
    fig.headline = f"{case}: " + "; ".join(headline)
    return fig


def _rows(fig: FigureResult, case: str, base: Baseline, got: Measured, snapshots: int, requests: int) -> None:
    fig.add(Row(NAME, case, "first ingest of the whole bundle", round(got.first_ingest_s, 2), "s"))
    fig.add(
        Row(
            NAME,
            case,
            "first ingest vs loading from disk",
            round(base.load_s / got.first_ingest_s, 3),
            "×",
            note="Session(bundle) seconds / the server's first ingest seconds (upload, unpack, store, check)",
        )
    )
    fig.add(
        Row(
            NAME,
            case,
            "host snapshots ingested + re-checked",
            round(got.snapshots_per_s, 2),
            "snapshots/s",
            note=f"{snapshots} uploads in {human_seconds(got.wall_s)}, {CLIENT_THREADS} client threads",
        )
    )
    fig.add(
        Row(
            NAME,
            case,
            "throughput vs the loader from disk",
            round(got.snapshots_per_s / base.per_s, 3),
            "×",
            note="server snapshots/s / Session.update_paths snapshots/s",
        )
    )
    for route, ms in got.p99_ms.items():
        fig.add(Row(NAME, case, f"API p99: {route}", round(ms, 2), "ms", note=f"{requests} requests"))
        fig.add(
            Row(
                NAME,
                case,
                f"API p99 vs loading from disk: {route}",
                round(base.load_s * 1000 / ms, 1),
                "×",
                note="Session(bundle) time / p99: how much sooner the server answers than re-reading the bundle",
            )
        )
    same = all(n == base.findings for n in got.open_findings)
    fig.add(
        Row(
            NAME,
            case,
            "open findings equal the loader's after the workload (1 = yes)",
            1.0 if same else 0.0,
            "",
            SAME,
            f"replicas {got.open_findings} vs loader {base.findings}",
        )
    )


def main(argv: list[str] | None = None) -> int:
    """Run this figure alone on a twin of ``--gpus`` (generated in a scratch directory, removed after)."""
    from bench.twins import TwinCache

    parser = argparse.ArgumentParser(prog="python -m bench.fig_serve", description=TITLE)
    parser.add_argument("--gpus", type=int, default=QUICK_SIZE)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="unifab-bench-serve-"))
    try:
        ctx = Context(quick=args.gpus <= QUICK_SIZE, scratch=scratch, twins=TwinCache(scratch), sizes=[args.gpus])
        result = run(ctx)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for row in result.rows:
        sys.stdout.write(f"{row.case:45} | {row.metric:55} | {row.measured():>16} | {row.verdict}\n")
    sys.stdout.write(result.headline + "\n")
    return 0 if not result.missed else 1


if __name__ == "__main__":
    raise SystemExit(main())
