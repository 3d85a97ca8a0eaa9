"""Shared measuring tools: timed child processes with their peak memory, fits, the machine's description.

Everything here is measurement plumbing; nothing knows about a particular figure.
"""

from __future__ import annotations

import math
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class ChildRun:
    """One child process: wall time, peak resident memory and what it printed."""

    argv: tuple[str, ...]
    returncode: int
    wall_s: float
    peak_rss_bytes: int
    user_s: float
    sys_s: float
    stdout: bytes
    stderr: bytes
    timed_out: bool
    disk_read_bytes: int = 0  # fetched from storage (ru_inblock * 512): ~0 when the page cache had it all

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode >= 0

    def describe_failure(self) -> str:
        if self.timed_out:
            return f"timed out after {self.wall_s:.0f} s"
        tail = self.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return f"exit {self.returncode}: " + " | ".join(tail)


def run_child(
    argv: Sequence[str],
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
) -> ChildRun:
    """Run ``argv`` to completion, timing it with ``perf_counter`` and reading its own ``ru_maxrss``.

    ``os.wait4`` returns the rusage of exactly this child (and anything it waited for), so the peak
    memory is the child's, not the harness's. Output goes to unnamed temporary files rather than
    pipes so a chatty child can never block. On timeout the child's whole process group is killed.
    """
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            stdout=out,
            stderr=err,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildRun(
            argv=tuple(argv),
            returncode=proc.returncode,
            wall_s=wall,
            peak_rss_bytes=usage.ru_maxrss * 1024,  # Linux reports KiB
            user_s=usage.ru_utime,
            sys_s=usage.ru_stime,
            stdout=out.read(),
            stderr=err.read(),
            timed_out=timed_out.is_set(),
            disk_read_bytes=usage.ru_inblock * 512,
        )


def best_of(runs: Sequence[ChildRun]) -> ChildRun:
    """The fastest successful run (the least disturbed by the rest of the machine)."""
    good = [r for r in runs if r.ok]
    if not good:
        raise ValueError("no successful run")
    return min(good, key=lambda r: r.wall_s)


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median of nothing")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def time_calls(fn: Callable[[], object], *, min_total_s: float, min_calls: int = 3) -> tuple[float, int]:
    """Seconds per call of ``fn`` (best of batches) after at least ``min_total_s`` of calls."""
    fn()  # warm-up: imports, caches
    calls, total = 0, 0.0
    best = math.inf
    while calls < min_calls or total < min_total_s:
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        total += elapsed
        calls += 1
    return best, calls


@dataclass(frozen=True, slots=True)
class Fit:
    """``y = a * x**exponent`` fitted by least squares on log-log."""

    exponent: float
    coefficient: float
    r2: float
    points: int

    def predict(self, x: float) -> float:
        return float(self.coefficient * x**self.exponent)


def fit_power_law(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """Least-squares line through ``(log x, log y)``; needs two or more distinct positive x."""
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len({p[0] for p in pts}) < 2:
        raise ValueError("need at least two distinct positive x values")
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((p[1] - my) ** 2 for p in pts)
    ss_res = sum((p[1] - (intercept + slope * p[0])) ** 2 for p in pts)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit(exponent=slope, coefficient=math.exp(intercept), r2=r2, points=n)


# ---------------------------------------------------------------------------------------------- machine


def _cpu_model(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
            return value.strip()
    return platform.processor() or platform.machine()


def _mem_total_bytes(meminfo: str) -> int | None:
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            return int(parts[1]) * 1024
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine_description(scratch: Path | None = None) -> dict[str, object]:
    """What the numbers were measured on: CPU, cores, memory, OS, Python, commit, load, file system."""
    mem = _mem_total_bytes(_read("/proc/meminfo"))
    status = _git("status", "--porcelain", "--untracked-files=no")
    desc: dict[str, object] = {
        "cpu": _cpu_model(_read("/proc/cpuinfo")),
        "cores": os.cpu_count(),
        "memory_gib": round(mem / 2**30, 1) if mem else None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
    }
    if scratch is not None:
        desc["scratch_fs"] = _fs_type(scratch)
    try:
        from importlib.metadata import version

        desc["unifab_version"] = version("unifab")
    except Exception:
        pass
    return desc


def _fs_type(path: Path) -> str | None:
    """File system type of the mount holding ``path`` (from /proc/mounts, longest prefix)."""
    best, kind = "", None
    target = str(path.resolve())
    for line in _read("/proc/mounts").splitlines():
        parts = line.split()
        inside = len(parts) >= 3 and (target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"))
        if inside and len(parts[1]) >= len(best):
            best, kind = parts[1], parts[2]
    return kind


def unifab_argv() -> list[str]:
    """How to start the product's CLI: the console script next to this interpreter."""
    script = Path(sys.executable).parent / "unifab"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from unifab.cli import main; main()"]


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def human_seconds(s: float) -> str:
    if s < 1:
        return f"{s * 1000:.1f} ms"
    if s < 120:
        return f"{s:.2f} s"
    return f"{s / 60:.1f} min"


def log(message: str) -> None:
    """Progress for people; stdout is kept for the one-line-per-figure summary."""
    print(f"  … {message}", file=sys.stderr, flush=True)
