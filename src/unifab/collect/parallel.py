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

With a :class:`~unifab.collect.record_cache.RecordCache`, each device is first looked up by its files' stamps
(:func:`~unifab.collect.record_cache.device_key`, in the worker, so the ``stat`` calls are spread over the cores
too), or for a bundle in memory by its content (:func:`~unifab.collect.record_cache.content_key`); an
unchanged device comes back as its stored pickle, which only the parent loads.
A changed one is read as above, and its read pickled once: for the entry and for the way back to the parent.
The same happens in-process when ``workers`` is 1.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass

from unifab.collect.problems import Problems
from unifab.collect.record_cache import CacheStats, RecordCache, content_key, device_key, dumps
from unifab.model import Finding, Link
from unifab.sources import DirectorySource, SourcePath, batched, max_file_bytes

__all__ = [
    "POOL_MIN_DEVICES",
    "WORKERS_ENV",
    "DeviceRead",
    "Reader",
    "cache_use",
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
    cache: _CacheUse | None = None


@dataclass(frozen=True, slots=True)
class _CacheUse:
    """The cache and the bundle's identity in it (computed once in the parent)."""

    cache: RecordCache
    bundle_dir: str  # "" for a bundle in memory: its devices are keyed by content (record_cache.content_key)
    bundle_real: str
    label: str
    max_file_bytes: int


_WORKER = _Worker()

# what a device's read comes back as: its DeviceRead, or (with the cache) its pickle and what the cache did
_Result = tuple[str, DeviceRead | bytes]
_HIT, _STORED, _MISSED, _BYPASSED = "hits", "stored", "missed", "bypassed"


def _init_worker(root: SourcePath, readers: Mapping[str, Reader], cache: _CacheUse | None = None) -> None:
    _WORKER.root = root
    _WORKER.readers = readers
    _WORKER.cache = cache


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


def _entry_kind(kind: str, readers: Mapping[str, Reader]) -> str:
    """The kind of device and the reader that reads it, as the cache tells entries apart."""
    reader = readers[kind]
    return f"{kind}:{getattr(reader, '__module__', '?')}.{getattr(reader, '__qualname__', '?')}"


def _read_cached(root: SourcePath, readers: Mapping[str, Reader], use: _CacheUse, kind: str, rel: str) -> _Result:
    """One device through the cache: its stored pickle when its files are unchanged, else read (and stored)."""
    key = device_key(use.bundle_dir, rel) if use.bundle_dir else content_key(root.source, rel)
    if key is None:
        return _BYPASSED, _read_one(root, readers, kind, rel)
    entry_kind = f"{_entry_kind(kind, readers)}:{use.max_file_bytes}"
    payload = use.cache.lookup(use.bundle_real, use.label, entry_kind, rel, key)
    if payload is not None:
        return _HIT, payload
    payload = dumps(_read_one(root, readers, kind, rel))
    stored = use.cache.store(use.bundle_real, use.label, entry_kind, rel, key, payload)
    return (_STORED if stored else _MISSED), payload


def _read_any(root: SourcePath, readers: Mapping[str, Reader], use: _CacheUse | None, kind: str, rel: str) -> _Result:
    if use is None:
        return _BYPASSED, _read_one(root, readers, kind, rel)
    return _read_cached(root, readers, use, kind, rel)


def _read_chunk(chunk: Sequence[tuple[str, str]]) -> list[_Result]:
    root, readers, use = _WORKER.root, _WORKER.readers, _WORKER.cache
    assert root is not None and readers is not None, "worker not initialised"
    reads = []
    with gc_paused():
        for kind, rel in chunk:
            reads.append(_read_any(root, readers, use, kind, rel))
            collect_young()
    return reads


def _loaded(
    root: SourcePath, readers: Mapping[str, Reader], kind: str, rel: str, result: _Result, stats: CacheStats | None
) -> DeviceRead:
    """The parent's :class:`DeviceRead` of one result: a pickle is loaded, and a pickle that does not load into
    this device's read (it passed its entry's checks, so this is a bug's trace, not a change) is read afresh."""
    state, value = result
    if isinstance(value, bytes):
        try:
            read = pickle.loads(value)
        except Exception:  # any failure to load is a miss, never a traceback
            read = None
        if not isinstance(read, DeviceRead) or read.kind != kind or read.name != rel.rpartition("/")[2]:
            state, read = _MISSED, _read_one(root, readers, kind, rel)
        value = read
    if stats is not None:
        setattr(stats, state, getattr(stats, state) + 1)
    return value


def cache_use(root: SourcePath, cache: RecordCache | None) -> _CacheUse | None:
    """How ``cache`` serves the bundle at ``root``: ``None`` (no cache) for a bundle below the source's root; a
    directory's devices are keyed by their files' stamps, any other source's (held in memory) by content."""
    source = root.source
    if cache is None or root.rel:
        return None
    if isinstance(source, DirectorySource):
        bundle_dir = str(source.root)
        return _CacheUse(cache, bundle_dir, os.path.realpath(bundle_dir), source.label, source.max_file_bytes)
    return _CacheUse(cache, "", f"content:{source.label}", source.label, max_file_bytes())


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
    *,
    cache: RecordCache | None = None,
    cache_stats: CacheStats | None = None,
) -> Iterator[DeviceRead]:
    """Each ``(kind, device directory)`` of ``jobs`` read by ``readers[kind]`` in ``workers`` processes (in
    this one when ``workers`` is 1), yielded in the order of ``jobs``, through ``cache`` when given (see the
    module doc; ``cache_stats`` counts what it did). The caller merges the findings and refusals."""
    use = cache_use(root, cache)
    rels = [(kind, path.rel) for kind, path in jobs]
    if workers <= 1:
        for kind, rel in rels:
            read = _loaded(root, readers, kind, rel, _read_any(root, readers, use, kind, rel), cache_stats)
            collect_young()
            yield read
            if progress:
                progress("hosts" if read.kind == "host" else "switches", 1)
        return
    chunks = _chunks(rels, workers)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=_context(), initializer=_init_worker, initargs=(root, readers, use)
    ) as pool:
        futures: list[Future[list[_Result]] | None] = []
        for chunk in chunks:
            try:
                futures.append(pool.submit(_read_chunk, chunk))
            except BrokenProcessPool:  # a worker died while the rest was still being handed out
                futures.append(None)
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                if future is None:
                    raise BrokenProcessPool("not submitted")
                results = future.result()
            except Exception:  # a worker died or a result could not come back: read these here, serially
                results = [_read_any(root, readers, use, kind, rel) for kind, rel in chunk]
            for (kind, rel), result in zip(chunk, results, strict=True):
                read = _loaded(root, readers, kind, rel, result, cache_stats)
                yield read
                if progress:
                    progress("hosts" if read.kind == "host" else "switches", 1)
