"""Read a large bundle's device directories on every core: hosts and switches parsed in a process pool.

Each device directory is read by the same reader the serial path uses (:func:`~unifab.collect.host.load_host`,
the switch readers of :mod:`unifab.collect.bundle`), each in a worker with its own :class:`Problems`; the
parent takes the results back in device order, so the fabric and its ``INPUT-*`` findings are exactly those of
the serial read (same objects by value, same findings in the same order). What the worker's source refused
(:attr:`~unifab.sources.DirectorySource.refused`) comes back with the device and is merged the same way.

The pool is used only when it pays: more than :data:`POOL_MIN_DEVICES` devices and more than one usable core.
``UNIFAB_LOAD_WORKERS=1`` (or ``0``) forces the serial read; ``UNIFAB_LOAD_WORKERS=N`` caps the workers at N.

A bad file in a device stays that device's ``INPUT-*`` finding (the readers catch it in the worker as they
would in the parent). Anything else going wrong with a chunk of devices in the pool (a worker killed, a result
that cannot be sent back) is no verdict on the devices: the parent reads that chunk itself, serially, so the
outcome is always the serial outcome.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from unifab.collect.problems import Problems
from unifab.model import Finding, Link
from unifab.sources import SourcePath, batched

__all__ = [
    "POOL_MIN_DEVICES",
    "WORKERS_ENV",
    "DeviceRead",
    "Reader",
    "collect_young",
    "gc_paused",
    "pool_workers",
    "read_devices",
]

POOL_MIN_DEVICES = 256  # fewer devices than this are read serially: the pool's start-up would cost more
WORKERS_ENV = "UNIFAB_LOAD_WORKERS"  # 1 (or 0): always serial; N: at most N workers

# (device directory, problems) -> (the device or None, the links it saw)
Reader = Callable[[SourcePath, Problems], tuple[object, list[Link]]]


@dataclass(slots=True)
class DeviceRead:
    """One device directory as read: what the reader returned, its findings, and the paths its source refused."""

    kind: str
    name: str
    device: object
    links: list[Link]
    findings: list[Finding]
    refused: dict[str, str]


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a bundle's devices are read: reading allocates millions of
    objects and frees few cycles, so the collector's full passes cost about a sixth of the read for nothing.
    Reference counting still frees everything else; the collector is back on (if it was) when the block ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def collect_young() -> None:
    """While :func:`gc_paused`: free the cycles the last device's read left (a young-generation pass scans only
    what was allocated since the last one, not the fabric read so far)."""
    if not gc.isenabled():
        gc.collect(1)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_workers(devices: int, workers: int | None = None, min_devices: int | None = None) -> int:
    """How many worker processes to read ``devices`` device directories with; 1 means the serial read.

    ``workers`` (else ``UNIFAB_LOAD_WORKERS``, else every usable core) caps the count; below ``min_devices``
    (default :data:`POOL_MIN_DEVICES`) devices the read is serial.
    """
    threshold = POOL_MIN_DEVICES if min_devices is None else min_devices
    if devices <= max(threshold, 1):
        return 1
    wanted = workers
    if wanted is None:
        configured = os.environ.get(WORKERS_ENV, "").strip()
        if configured:
            if not configured.isdigit():
                from unifab.errors import UsageError

                raise UsageError(f"{WORKERS_ENV} must be a number of worker processes, got {configured!r}")
            wanted = int(configured)
    count = usable_cores() if wanted is None else wanted
    return max(1, min(count, devices))


# --- the worker side --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Worker:
    """What a worker process reads with, set once when it starts."""

    root: SourcePath | None = None
    readers: Mapping[str, Reader] | None = None


_WORKER = _Worker()


def _init_worker(root: SourcePath, readers: Mapping[str, Reader]) -> None:
    _WORKER.root = root
    _WORKER.readers = readers


def _read_one(root: SourcePath, readers: Mapping[str, Reader], kind: str, rel: str) -> DeviceRead:
    """One device directory with a fresh :class:`Problems`, and what its source refused while reading it."""
    source = root.source
    had = getattr(source, "refused", None)
    mine: dict[str, str] = {}
    if had is not None:
        source.refused = mine  # type: ignore[attr-defined]
    try:
        problems = Problems(root)
        device_dir = SourcePath(source, rel)
        with batched(source):
            device, links = readers[kind](device_dir, problems)
    finally:
        if had is not None:
            source.refused = had  # type: ignore[attr-defined]
    return DeviceRead(kind, device_dir.name, device, links, problems.findings, mine)


def _read_chunk(chunk: Sequence[tuple[str, str]]) -> list[DeviceRead]:
    root, readers = _WORKER.root, _WORKER.readers
    assert root is not None and readers is not None, "worker not initialised"
    reads = []
    with gc_paused():
        for kind, rel in chunk:
            reads.append(_read_one(root, readers, kind, rel))
            collect_young()
    return reads


# --- the parent side --------------------------------------------------------------------------------------


def _context() -> multiprocessing.context.BaseContext:
    """``fork`` (the worker inherits the loaded modules: cheapest) unless threads run (a progress bar's), where
    forking is unsafe: then ``forkserver``."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _chunks(jobs: Sequence[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    """Contiguous runs of devices, a few per worker so a slow device does not idle the other cores."""
    size = max(1, min(64, len(jobs) // (workers * 6) or 1))
    return [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]


def read_devices(
    root: SourcePath,
    jobs: Sequence[tuple[str, SourcePath]],
    readers: Mapping[str, Reader],
    workers: int,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[DeviceRead]:
    """Each ``(kind, device directory)`` of ``jobs`` read by ``readers[kind]`` in ``workers`` processes,
    yielded in the order of ``jobs``. The caller merges the findings and refusals (see the module doc)."""
    chunks = _chunks([(kind, path.rel) for kind, path in jobs], workers)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=_context(), initializer=_init_worker, initargs=(root, readers)
    ) as pool:
        futures: list[Future[list[DeviceRead]]] = [pool.submit(_read_chunk, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                reads = future.result()
            except Exception:  # a worker died or a result could not come back: read these here, serially
                reads = [_read_one(root, readers, kind, rel) for kind, rel in chunk]
            for read in reads:
                yield read
                if progress:
                    progress("hosts" if read.kind == "host" else "switches", 1)
