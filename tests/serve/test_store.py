"""The store over real SQLite and real PostgreSQL: migrations, findings' lifecycle, paging, tokens, audit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from unifab.serve.schema import metadata
from unifab.serve.store import CurrentFinding, DeviceState, IngestRecord, Store, database_url

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def finding(
    key: str, severity: str = "error", devices: tuple[str, ...] = ("host:gpu001",), msg: str = "m"
) -> CurrentFinding:
    check = key.split("|", 1)[0]
    order = {"critical": 0, "error": 1, "warning": 2, "info": 3}[severity]
    doc: dict[str, Any] = {"check": check, "severity": severity, "subject": {"kind": "x"}, "message": msg}
    return CurrentFinding(key, check, severity, order, {"kind": "x"}, msg, doc, f"{key}{severity}{msg}", devices)


def record(sid: str, when: datetime, found: list[CurrentFinding], **kw: Any) -> IngestRecord:
    return IngestRecord(
        snapshot_id=sid,
        received_at=when,
        size=10,
        actor="t",
        mode="load",
        seconds=0.1,
        units=kw.get("units", {"hosts/gpu001": b"tar"}),
        devices=kw.get("devices", [DeviceState("host:gpu001", "host", "linux", None, {})]),
        findings=found,
    )


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store.open(db_url)
    yield s  # type: ignore[misc]
    s.close()


def test_migration_creates_the_schema_and_is_idempotent(store: Store) -> None:
    assert store.revision() == "0005"
    assert set(store.table_names()) == set(metadata.tables) | {"alembic_version"}
    store.migrate()  # again: nothing to do
    assert store.revision() == "0005"


def test_the_migrated_columns_match_the_metadata(store: Store) -> None:
    from sqlalchemy import inspect

    inspector = inspect(store.engine)
    for name, table in metadata.tables.items():
        migrated = {c["name"]: c["nullable"] for c in inspector.get_columns(name)}
        assert migrated == {c.name: bool(c.nullable) for c in table.columns}, name


def test_sqlite_runs_in_wal_mode(tmp_path: Any) -> None:
    s = Store.open(str(tmp_path / "plain-path.db"))  # a plain path means a SQLite file
    with s.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
    s.close()


def test_database_url_forms() -> None:
    assert database_url("postgresql://h/db") == "postgresql+psycopg://h/db"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"
    assert database_url("x.db").startswith("sqlite:////")


def test_findings_open_stay_clear_and_reopen(store: Store) -> None:
    a, b = finding("QOS-MTU|a"), finding("QOS-PFC|b", "critical")
    store.record_ingest(record("s1", T0, [a, b]))
    rows = {r["key"]: r for r in store.findings(state="all").items}
    assert rows["QOS-MTU|a"]["first_seen"] == T0.isoformat() and rows["QOS-MTU|a"]["state"] == "open"

    # still there an hour later: last_seen moves, first_seen stays; b is gone: cleared
    t1 = T0 + timedelta(hours=1)
    store.record_ingest(record("s2", t1, [a]))
    rows = {r["key"]: r for r in store.findings(state="all").items}
    assert (rows["QOS-MTU|a"]["first_seen"], rows["QOS-MTU|a"]["last_seen"]) == (T0.isoformat(), t1.isoformat())
    assert rows["QOS-PFC|b"]["state"] == "cleared" and rows["QOS-PFC|b"]["cleared_at"] == t1.isoformat()
    assert rows["QOS-PFC|b"]["last_seen"] == T0.isoformat()
    assert [r["key"] for r in store.findings(state="cleared").items] == ["QOS-PFC|b"]

    # b comes back: a new occurrence (first_seen now, open again); a changes its message: updated in place
    t2 = T0 + timedelta(hours=2)
    store.record_ingest(record("s3", t2, [finding("QOS-MTU|a", msg="new text"), b]))
    rows = {r["key"]: r for r in store.findings(state="all").items}
    assert rows["QOS-PFC|b"]["state"] == "open" and rows["QOS-PFC|b"]["first_seen"] == t2.isoformat()
    assert rows["QOS-MTU|a"]["first_seen"] == T0.isoformat()
    assert rows["QOS-MTU|a"]["finding"]["message"] == "new text"
    assert store.summary()["findings"] == {
        "open": 2,
        "cleared": 0,
        "by_severity": {"critical": 1, "error": 1, "warning": 0, "info": 0},
    }
    actions = [e["action"] for e in store.audit_log().items]
    assert actions == ["ingest", "ingest", "ingest"]
    assert store.audit_log().items[0]["detail"] == {"opened": 1, "changed": 1, "cleared": 0}


def test_a_duplicate_snapshot_id_writes_nothing(store: Store) -> None:
    store.record_ingest(record("s1", T0, [finding("QOS-MTU|a")]))
    with pytest.raises(IntegrityError):
        store.record_ingest(record("s1", T0 + timedelta(hours=1), [finding("QOS-OTHER|z")]))
    assert [r["key"] for r in store.findings(state="all").items] == ["QOS-MTU|a"]
    assert len(store.audit_log().items) == 1


def test_cursor_pages_cover_every_finding_once_in_order(store: Store) -> None:
    found = [
        finding(f"{check}|{i:03d}", severity)
        for i in range(37)
        for check, severity in (("QOS-A", "critical"), ("TOPO-B", "warning"), ("LINK-C", "error"))
    ]
    store.record_ingest(record("s1", T0, found))
    seen, cursor, pages = [], None, 0
    while True:
        page = store.findings(limit=10, cursor=cursor)
        seen += [r["key"] for r in page.items]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 12 and len(seen) == len(set(seen)) == 111
    expected = sorted(found, key=lambda f: (f.severity_order, f.check, f.key))
    assert seen == [f.key for f in expected]
    with pytest.raises(ValueError, match="cursor"):
        store.findings(cursor="not-a-cursor")


def test_filters_by_check_severity_and_device(store: Store) -> None:
    store.record_ingest(
        record(
            "s1",
            T0,
            [
                finding("QOS-MTU|1", "critical", ("host:gpu001", "switch:leaf1")),
                finding("QOS-MTU|2", "error", ("host:gpu002",)),
                finding("TOPO-RAIL|3", "error", ("switch:leaf1",)),
            ],
        )
    )

    def keys(**kw: Any) -> list[str]:
        return [r["key"] for r in store.findings(**kw).items]

    assert keys(check=["QOS-MTU"]) == ["QOS-MTU|1", "QOS-MTU|2"]
    assert keys(severity=["error"]) == ["QOS-MTU|2", "TOPO-RAIL|3"]
    assert keys(device="leaf1") == ["QOS-MTU|1", "TOPO-RAIL|3"]
    assert keys(device="switch:leaf1", severity=["error"]) == ["TOPO-RAIL|3"]
    assert keys(device="host:gpu003") == []
    assert store.count_open(device="switch:leaf1") == 2
    with pytest.raises(ValueError, match="state"):
        store.findings(state="bogus")


def test_devices_are_the_latest_per_device_and_page(store: Store) -> None:
    devs = [DeviceState(f"host:gpu{i:03d}", "host", "linux", None, {"n": i}) for i in range(1, 6)]
    store.record_ingest(record("s1", T0, [], devices=devs))
    later = T0 + timedelta(minutes=5)
    collected = T0 + timedelta(minutes=4)
    store.record_ingest(
        record("s2", later, [], devices=[DeviceState("host:gpu002", "host", "linux", collected, {"n": 22})])
    )
    page1 = store.devices(limit=3)
    page2 = store.devices(limit=3, cursor=page1.next_cursor)
    assert [d["name"] for d in page1.items + page2.items] == [d.name for d in devs] and page2.next_cursor is None
    gpu2 = store.device("host:gpu002")
    assert gpu2 is not None
    assert (gpu2["snapshot_id"], gpu2["collected_at"], gpu2["origin"]) == ("s2", collected.isoformat(), {"n": 22})
    assert store.devices(kind="switch").items == []


def test_tokens_are_stored_hashed_and_audited(store: Store) -> None:
    from unifab.serve.auth import new_token, split_token, verify_secret

    made = new_token()
    store.add_token(made.id, made.hash, "viewer", "ci", "cli", T0)
    row = store.token(made.id)
    assert row is not None and row["role"] == "viewer"
    assert made.token not in str(row) and row["hash"].startswith("$argon2")
    parsed = split_token(made.token)
    assert parsed is not None and parsed[0] == made.id
    assert verify_secret(row["hash"], parsed[1]) and not verify_secret(row["hash"], parsed[1] + "x")
    assert store.audit_log().items[0]["action"] == "token.create"
    assert store.token("000000000000") is None


def test_finding_history_keeps_every_occurrence(store: Store) -> None:
    key = "QOS-MTU|a"
    store.record_ingest(record("s1", T0, [finding(key)]))
    store.record_ingest(record("s2", T0 + timedelta(hours=1), [finding(key, msg="other text")]))
    store.record_ingest(record("s3", T0 + timedelta(hours=2), []))
    store.record_ingest(record("s4", T0 + timedelta(hours=3), [finding(key, severity="critical")]))
    events = store.finding_history(key).items
    assert [(e["event"], e["snapshot_id"], e["severity"]) for e in events] == [
        ("opened", "s1", "error"),
        ("changed", "s2", "error"),
        ("cleared", "s3", "error"),
        ("opened", "s4", "critical"),
    ]
    assert events[1]["message"] == "other text" and events[2]["at"].startswith("2026-01-05T14:00")
    # the findings row tells only the latest occurrence; the events tell both
    row = store.finding(key)
    assert row is not None and row["first_seen"].startswith("2026-01-05T15:00") and row["state"] == "open"
    first = store.finding_history(key, limit=2)
    assert len(first.items) == 2 and first.next_cursor
    rest = store.finding_history(key, cursor=first.next_cursor, limit=2)
    assert [e["event"] for e in rest.items] == ["cleared", "opened"] and rest.next_cursor is None
    assert store.finding_history("QOS-MTU|none").items == [] and store.finding("QOS-MTU|none") is None


def test_migration_0003_backfills_history_from_the_findings(db_url: str) -> None:
    """A store written before 0003 (findings, no events) gets an opened (and cleared) event per row."""
    from alembic import command
    from alembic.config import Config

    from unifab.serve.store import MIGRATIONS

    old = Store.open(db_url, migrate=False)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with old.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0002")
    with old.engine.begin() as conn:
        for key, cleared in (("QOS-MTU|open", None), ("QOS-MTU|gone", T0 + timedelta(hours=1))):
            conn.execute(
                text(
                    'INSERT INTO findings (key, "check", severity, severity_order, subject, message, document, digest,'
                    " first_seen, last_seen, cleared_at, snapshot_id) VALUES (:k, 'QOS-MTU', 'error', 1, '{}', 'm',"
                    " '{}', 'd', :t, :t, :c, 's0')"
                ),
                {"k": key, "t": T0, "c": cleared},
            )
    old.close()
    store = Store.open(db_url)
    try:
        assert store.revision() == "0005"
        assert [e["event"] for e in store.finding_history("QOS-MTU|open").items] == ["opened"]
        assert [e["event"] for e in store.finding_history("QOS-MTU|gone").items] == ["opened", "cleared"]
    finally:
        store.close()


def test_findings_search_matches_message_or_key_literally(store: Store) -> None:
    store.record_ingest(
        record(
            "s1",
            T0,
            [
                finding("QOS-MTU|gpu001", msg="Ethernet8 MTU 1500 is below"),
                finding("QOS-TRUST|gpu002", msg="trust pcp_100%"),
            ],
        )
    )
    assert [f["key"] for f in store.findings(q="mtu 1500").items] == ["QOS-MTU|gpu001"]
    assert [f["key"] for f in store.findings(q="gpu002").items] == ["QOS-TRUST|gpu002"]
    assert [f["key"] for f in store.findings(q="_100%").items] == ["QOS-TRUST|gpu002"]
    assert store.findings(q="1_0").items == []  # "_" is a character, not a wildcard
