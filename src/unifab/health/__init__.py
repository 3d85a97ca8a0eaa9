"""Health: counter series → detectors → one root cause per incident → the jobs it hurts → the action to take.

``series`` (the columns and the counter arithmetic), ``openmetrics`` (the bundle's telemetry files), ``detect``
(pure detectors), ``localize`` (root cause through the Fabric's links, job impact, actions), ``prometheus`` (the
same series from a Prometheus-compatible TSDB), ``engine`` (all of it, and the JSON document), ``thresholds`` (the
intent's ``health:`` section), ``stream`` and ``replay`` (the detectors one sample at a time, and when each
incident would have been raised), ``baselines`` and ``score`` (the benchmark's per-port alerts and 007, and the
scoring against a twin's truth). docs/health.md.
"""

__all__ = []
