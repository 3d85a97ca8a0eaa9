"""``/metrics``: unifab's view of the fabric in the Prometheus exposition format (prometheus-client).

Counts that live in the store (open findings by check and severity, devices by how long ago they were
collected) are read from it at scrape time by :class:`StoreCollector`, so every replica reports the same
numbers; links by QoS status come from the live fabric (:class:`LinkCollector`, caught up from the store
first, so every replica agrees once it has caught up); what happens in this process (ingests, their
latency, re-check time) is counted here. Each server
has its own :class:`~prometheus_client.CollectorRegistry` (tests build several apps in one process).

A device's age is taken from its collector's time (``collect.json``); a device whose bundle does not say
(a twin, a hand-made bundle) counts from when the server received it.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from unifab.serve.store import Store

__all__ = ["AGE_BUCKETS", "CONTENT_TYPE", "LINK_STATUSES", "LinkCollector", "Metrics", "StoreCollector", "age_bucket"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
AGE_BUCKETS = ((300, "5m"), (3600, "1h"), (86400, "1d"), (7 * 86400, "7d"))


def age_bucket(seconds: float) -> str:
    """The smallest bucket holding ``seconds`` (``5m``, ``1h``, ``1d``, ``7d``), else ``older``."""
    for limit, label in AGE_BUCKETS:
        if seconds <= limit:
            return label
    return "older"


class StoreCollector(Collector):
    """Gauges computed from the store when scraped."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        findings = GaugeMetricFamily(
            "unifab_findings_open", "Open findings by check and severity.", labels=["check", "severity"]
        )
        for check, severity, n in self.store.open_counts():
            findings.add_metric([check, severity], n)
        yield findings
        now = datetime.now(UTC)
        tally: Tally[tuple[str, str]] = Tally()
        for kind, collected, received in self.store.device_times():
            when = collected or received
            tally[(kind, age_bucket((now - when).total_seconds()))] += 1
        devices = GaugeMetricFamily(
            "unifab_devices",
            "Devices by kind and by how long ago they were collected (at most 5m, 1h, 1d, 7d, or older).",
            labels=["kind", "age"],
        )
        for (kind, age), n in sorted(tally.items()):
            devices.add_metric([kind, age], n)
        yield devices


LINK_STATUSES = ("ok", "info", "warning", "error", "critical")
LinkCounts = Callable[[], dict[tuple[str, str, str], int]]


class LinkCollector(Collector):
    """``unifab_links``: links by fabric, kind and QoS status, from the live fabric (caught up from the store).

    Aggregate counts, never one series per link: at 100,000 links a per-link label would be 100,000 series per
    scrape per replica; the operator reads *which* links from ``GET /api/v1/links?flagged=true&severity=``.
    At most 2 fabrics x 3 kinds x 5 statuses = 30 series; every status of a (fabric, kind) that has links is
    reported, 0 included, so a series does not vanish when its last link heals.
    """

    def __init__(self, counts: LinkCounts) -> None:
        self.counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauge = GaugeMetricFamily(
            "unifab_links",
            "Links (cables planned or seen) by fabric (roce, ib), kind (host: NIC to switch; fabric: switch to "
            "switch; other) and QoS status: the worst open finding on the link, its NIC or its port, ok for none.",
            labels=["fabric", "kind", "status"],
        )
        counts = self.counts()
        for fabric, kind in sorted({(f, k) for f, k, _ in counts}):
            for status in LINK_STATUSES:
                gauge.add_metric([fabric, kind, status], counts.get((fabric, kind, status), 0))
        yield gauge


class Metrics:
    """This process's registry: the store's gauges, the live fabric's links, ingest counters and latencies."""

    def __init__(self, store: Store, links: LinkCounts | None = None) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(StoreCollector(store))
        if links is not None:
            self.registry.register(LinkCollector(links))
        self.ingests = Counter(
            "unifab_ingests", "Snapshot uploads by result.", labelnames=["result"], registry=self.registry
        )
        self.ingest_seconds = Histogram(
            "unifab_ingest_seconds",
            "Time to ingest a snapshot: unpack, validate, re-check, store.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.recheck_seconds = Histogram(
            "unifab_recheck_seconds",
            "Time the incremental session took to re-read and re-check after an ingest.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
