"""The overview's reads over real SQLite and real PostgreSQL: what the last snapshot changed, devices by fabric,
the InfiniBand silo's findings, and the findings' time and job filters."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from unifab.serve.store import CurrentFinding, DeviceState, IngestRecord, JobScope, Store
from unifab.serve.store_views import changes, fabrics

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}


def finding(key: str, severity: str = "error", devices: tuple[str, ...] = ("host:gpu001",)) -> CurrentFinding:
    check = key.split("|", 1)[0]
    doc: dict[str, Any] = {"check": check, "severity": severity, "subject": {"kind": "x"}, "message": key}
    return CurrentFinding(key, check, severity, ORDER[severity], {"kind": "x"}, key, doc, key + severity, devices)


def record(sid: str, when: datetime, found: list[CurrentFinding], **kw: Any) -> IngestRecord:
    return IngestRecord(
        snapshot_id=sid,
        received_at=when,
        size=10,
        actor="t",
        mode="load",
        seconds=0.1,
        units={"hosts/gpu001": b"tar"},
        devices=kw.get("devices", [DeviceState("host:gpu001", "host", "linux", None, {}, "roce")]),
        findings=found,
    )


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store.open(db_url)
    yield s
    s.close()


def keys(store: Store, **kw: object) -> list[str]:
    return [f["key"] for f in store.findings(limit=500, **kw).items]  # type: ignore[arg-type]


def test_changes_name_what_the_latest_snapshot_opened_and_cleared(store: Store) -> None:
    assert changes(store) is None  # nothing ingested yet
    a, b, c = (finding(f"QOS-MTU|n={i}", severity) for i, severity in ((1, "warning"), (2, "critical"), (3, "info")))
    store.record_ingest(record("s1", T0, [a, b]))
    first = changes(store)
    assert first is not None and first["snapshot"]["id"] == "s1"
    assert (first["opened"], first["cleared"], first["changed"]) == (2, 0, 0)
    assert [r["key"] for r in first["items"]["opened"]] == [b.key, a.key]  # worst first
    assert first["items"]["opened"][0]["check"] == "QOS-MTU"

    store.record_ingest(record("s2", T0 + timedelta(minutes=5), [b, c]))  # a went, c came
    second = changes(store)
    assert second is not None and second["snapshot"]["id"] == "s2"
    assert (second["opened"], second["cleared"]) == (1, 1)
    assert [r["key"] for r in second["items"]["opened"]] == [c.key]
    assert [r["key"] for r in second["items"]["cleared"]] == [a.key]

    store.record_ingest(record("s3", T0 + timedelta(minutes=9), [b, c]))  # nothing changed
    third = changes(store)
    assert third is not None and (third["opened"], third["cleared"], third["items"]["opened"]) == (0, 0, [])


def test_changes_carry_a_bounded_list_but_complete_counts(store: Store) -> None:
    many = [finding(f"QOS-ECN|n={i:03}", "warning") for i in range(30)]
    store.record_ingest(record("s1", T0, many))
    doc = changes(store, limit=5)
    assert doc is not None and doc["opened"] == 30 and len(doc["items"]["opened"]) == 5


def test_devices_by_fabric_and_the_infiniband_findings(store: Store) -> None:
    rows = [
        DeviceState("host:gpu001", "host", "linux", None, {}, "roce+ib"),
        DeviceState("host:gpu002", "host", "linux", None, {}, "roce"),
        DeviceState("switch:leaf01", "switch", "sonic", None, {}, "roce"),
        DeviceState("switch:ib-leaf01", "switch", "ib", None, {}, "ib"),
    ]
    found = [
        finding("IB-SM|subnet=x", "critical", devices=()),
        finding("TOPO-MISSING|link=ib", "error", devices=("switch:ib-leaf01", "host:gpu001")),
        finding("QOS-MTU|nic=gpu002", "error", devices=("host:gpu002",)),
    ]
    store.record_ingest(record("s1", T0, found, devices=rows))
    doc = fabrics(store)
    assert doc["fabrics"] == {"roce": {"host": 2, "switch": 1}, "ib": {"host": 1, "switch": 1}}
    assert doc["ib_findings"] == {"critical": 1, "error": 1, "warning": 0, "info": 0}
    assert [d["name"] for d in store.devices(fabric="ib").items] == ["host:gpu001", "switch:ib-leaf01"]
    assert [d["fabric"] for d in store.devices(kind="host").items] == ["roce+ib", "roce"]


def test_findings_by_time_on_each_column(store: Store) -> None:
    t1, t2, t3 = (T0 + timedelta(hours=h) for h in (1, 2, 3))
    a, b = finding("QOS-MTU|n=a"), finding("QOS-MTU|n=b")
    store.record_ingest(record("s0", T0, [a]))  # a opens at T0
    store.record_ingest(record("s1", t1, [a, b]))  # b opens at t1
    store.record_ingest(record("s2", t2, [b]))  # a clears at t2; b seen at t2
    store.record_ingest(record("s3", t3, [b]))  # b seen at t3
    assert keys(store, state="all", since=t1) == [b.key]  # first_seen at or after t1
    assert keys(store, state="all", until=t1) == [a.key]  # until is exclusive
    assert keys(store, state="all", since=T0, until=t3) == [a.key, b.key]
    assert keys(store, state="all", time="last_seen", since=t3) == [b.key]
    assert keys(store, state="all", time="last_seen", until=t2) == [a.key]  # a was last seen at t1
    assert keys(store, state="all", time="cleared", since=t1) == [a.key]  # only cleared findings have one
    assert keys(store, state="all", time="cleared", since=t3) == []
    with pytest.raises(ValueError, match="time must be one of"):
        store.findings(time="seen")


def test_findings_by_job_scope(store: Store) -> None:
    on_job = finding("QOS-PFC|nic=gpu001:eth0", devices=("host:gpu001",))
    elsewhere = finding("QOS-PFC|nic=gpu009:eth0", devices=("host:gpu009",))
    gone = finding("QOS-ECN|nic=gpu001:eth1", devices=("host:gpu001",))
    store.record_ingest(record("s0", T0, [on_job, elsewhere, gone]))
    store.record_ingest(record("s1", T0 + timedelta(minutes=1), [on_job, elsewhere]))
    scope = JobScope(frozenset({on_job.key}), ("host:gpu001",))
    assert keys(store, job=scope) == [on_job.key]
    assert keys(store, job=scope, state="all") == [gone.key, on_job.key]  # its hosts' cleared findings too
    assert keys(store, job=JobScope(frozenset(), ("host:gpu777",))) == []
