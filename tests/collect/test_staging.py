"""BundleWriter on a real filesystem: staged devices renamed into place, other-OS directories unifab wrote
removed, what it did not write kept or refused, a killed run repaired, one writer per bundle, the manifest,
and the stale marker the bundle reader turns into INPUT-STALE."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from unifab.collect import staging
from unifab.collect.bundle import load_bundle
from unifab.collect.staging import BundleWriter, DeviceRefused, exchange, os_dirs_written, write_file
from unifab.errors import UsageError

CONFIG_DB = b'{"DEVICE_METADATA": {"localhost": {"hostname": "sw1", "hwsku": "ACS-MSN2700"}}}\n'
RUNNING_CONFIG = b"hostname sw1\n!\ninterface Ethernet1/1\n   mtu 9214\n!\nend\n"


def _stage(writer: BundleWriter, stage: Path, name: str, os_name: str, files: dict[str, bytes]) -> None:
    device = stage / "switches" / name
    (device / os_name).mkdir(parents=True)
    for rel, data in files.items():
        write_file(device / os_name / rel, data)
    record = {"version": 1, "collector": f"{os_name}-live", "os": os_name, "finished": "2030-01-02T00:00:00Z"}
    write_file(device / "collect.json", orjson.dumps(record))


def _previous(out: Path, name: str, os_name: str, collector: str | None, files: dict[str, bytes]) -> Path:
    device = out / "switches" / name
    (device / os_name).mkdir(parents=True)
    for rel, data in files.items():
        (device / os_name / rel).write_bytes(data)
    if collector is not None:
        (device / "collect.json").write_bytes(
            orjson.dumps({"version": 1, "collector": collector, "finished": "2030-01-01T00:00:00Z"})
        )
    return device


def test_a_new_device_is_renamed_into_place(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with BundleWriter(out) as writer, writer.stage("sw1") as stage:
        _stage(writer, stage, "sw1", "sonic", {"config_db.json": CONFIG_DB})
        writer.install("sw1", "sonic", stage)
    assert (out / "switches/sw1/sonic/config_db.json").read_bytes() == CONFIG_DB
    assert list((out / ".unifab-staging").iterdir()) == [out / ".unifab-staging/lock"]  # no stage left
    assert "sw1" in load_bundle(out).switches


def test_recollect_as_another_os_drops_the_old_os_and_keeps_what_unifab_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})
    (device / "notes.txt").write_text("rack 4, left\n")
    (device / "dellos10").mkdir()
    (device / "dellos10" / "config.txt").write_text("not ours\n")
    with BundleWriter(out) as writer, writer.stage("sw1") as stage:
        _stage(writer, stage, "sw1", "eos", {"running-config.txt": RUNNING_CONFIG})
        writer.install("sw1", "eos", stage)
    assert sorted(p.name for p in device.iterdir()) == ["collect.json", "dellos10", "eos", "notes.txt"]
    assert (device / "notes.txt").read_text() == "rack 4, left\n"
    assert (device / "dellos10/config.txt").read_text() == "not ours\n"
    assert orjson.loads((device / "collect.json").read_bytes())["os"] == "eos"
    assert load_bundle(out).switches["sw1"].os == "eos"


def test_same_os_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": b"{}\n", "counters_db.json": b"{}\n"})
    with BundleWriter(out) as writer, writer.stage("sw1") as stage:
        _stage(writer, stage, "sw1", "sonic", {"config_db.json": CONFIG_DB})
        writer.install("sw1", "sonic", stage)
    assert sorted(p.name for p in (device / "sonic").iterdir()) == ["config_db.json"]  # no file of the old one
    assert (device / "sonic/config_db.json").read_bytes() == CONFIG_DB


@pytest.mark.parametrize("os_dir", ["sonic", "nvue"])
def test_an_os_directory_unifab_did_not_write_is_refused_untouched(tmp_path: Path, os_dir: str) -> None:
    """A twin's or a hand-copied sonic/ (no collect.json names it) is neither replaced nor removed."""
    out = tmp_path / "b"
    device = _previous(out, "sw1", os_dir, None, {"config.yaml": b"- set: {}\n", "config_db.json": CONFIG_DB})
    before = {p: p.read_bytes() for p in device.rglob("*") if p.is_file()}
    with BundleWriter(out) as writer, writer.stage("sw1") as stage:
        _stage(writer, stage, "sw1", "sonic", {"config_db.json": b"{}\n"})
        with pytest.raises(DeviceRefused, match=f"switches/sw1/{os_dir}/ holds files unifab collect did not write"):
            writer.install("sw1", "sonic", stage)
    assert {p: p.read_bytes() for p in device.rglob("*") if p.is_file()} == before


def test_without_rename_exchange_two_renames_and_a_killed_run_is_repaired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})
    monkeypatch.setattr(staging, "exchange", lambda a, b: False)  # a filesystem without RENAME_EXCHANGE
    with BundleWriter(out) as writer, writer.stage("sw1") as stage:
        _stage(writer, stage, "sw1", "sonic", {"config_db.json": b'{"PORT": {}}\n'})
        writer.install("sw1", "sonic", stage)
    assert (device / "sonic/config_db.json").read_bytes() == b'{"PORT": {}}\n'
    # A run killed between its two renames: the device directory sits in a stage as previous/, none in place.
    stage = out / ".unifab-staging" / "sw1.k1ll3d"
    stage.mkdir()
    device.rename(stage / "previous")
    assert not device.exists()
    with BundleWriter(out):
        pass
    assert (device / "sonic/config_db.json").read_bytes() == b'{"PORT": {}}\n'
    assert not stage.exists()


def test_leftover_stages_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})
    (out / ".unifab-staging").mkdir()
    half = out / ".unifab-staging" / "sw1.abc123" / "switches" / "sw1" / "sonic"
    half.mkdir(parents=True)
    (half / "config_db.json").write_bytes(b'{"PORT": {"Ethernet0": {"mt')  # a truncated file: never installed
    with BundleWriter(out):
        pass
    assert not (out / ".unifab-staging" / "sw1.abc123").exists()
    assert (device / "sonic/config_db.json").read_bytes() == CONFIG_DB


def test_one_writer_per_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with BundleWriter(out), pytest.raises(UsageError, match="another unifab collect is writing into"):
        BundleWriter(out).__enter__()
    with BundleWriter(out):  # released
        pass


def test_out_that_cannot_be_a_bundle(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        BundleWriter(a_file).__enter__()
    with pytest.raises(UsageError, match="cannot write to --out"):
        BundleWriter(a_file / "sub").__enter__()


def test_mark_failed_keeps_the_data_and_the_reader_reports_it_stale(tmp_path: Path) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})
    attempt = {"finished": "2030-02-01T00:00:00Z", "result": "failed", "kind": "unreachable", "reason": "refused"}
    with BundleWriter(out) as writer:
        assert writer.mark_failed("sw1", attempt) == "2030-01-01T00:00:00Z"
        assert writer.mark_failed("never-collected", attempt) is None
    assert (device / "sonic/config_db.json").read_bytes() == CONFIG_DB
    assert not (out / "switches/never-collected").exists()
    fabric = load_bundle(out)
    stale = [f for f in fabric.input_findings if f.check == "INPUT-STALE"]
    assert len(stale) == 1
    assert stale[0].subject["device"] == "sw1" and stale[0].severity.value == "error"
    assert "2030-01-01T00:00:00Z" in stale[0].message and "2030-02-01T00:00:00Z" in stale[0].message
    assert "refused" in stale[0].message
    assert "sw1" in fabric.switches  # still read, but never as current


def test_a_broken_switch_collect_json_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "b"
    device = _previous(out, "sw1", "sonic", None, {"config_db.json": CONFIG_DB})
    (device / "collect.json").write_bytes(b'{"last_attempt": ')
    findings = load_bundle(out).input_findings
    assert [(f.check, f.subject["path"]) for f in findings] == [("INPUT-UNREADABLE", "switches/sw1/collect.json")]


def test_manifest_merges_runs(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with BundleWriter(out) as writer:
        writer.write_manifest([{"name": "a", "os": "sonic", "result": "ok", "kind": None}], "T1")
        writer.write_manifest([{"name": "b", "os": "eos", "result": "failed", "stale": False}], "T2")
    doc = orjson.loads((out / "collect-manifest.json").read_bytes())
    assert doc == {
        "version": 1,
        "updated": "T2",
        "devices": {"a": {"os": "sonic", "result": "ok"}, "b": {"os": "eos", "result": "failed", "stale": False}},
    }


def test_os_dirs_written() -> None:
    assert os_dirs_written({"collector": "sonic-redis"}) == {"sonic"}
    assert os_dirs_written({"collector": "eos-eapi", "os": "eos"}) == {"eos"}
    assert os_dirs_written({"os": "../etc"}) == set()
    assert os_dirs_written(None) == set()


def test_exchange_swaps_two_directories(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from-a").touch()
    if not exchange(a, b):
        pytest.skip("this filesystem has no RENAME_EXCHANGE (the two-rename path is tested above)")
    assert [p.name for p in b.iterdir()] == ["from-a"] and not list(a.iterdir())


def test_a_switch_whose_only_collect_failed_is_reported_missing_not_forgotten(tmp_path: Path) -> None:
    """No data was ever written for it, so nothing names it but the manifest: the reader (and a watching
    session) report it as INPUT-MISSING with the attempt's time and reason, until its data arrives."""
    from unifab.session.incremental import Session

    out = tmp_path / "b"
    _previous(out, "sw1", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})
    failed = {"os": "eos", "result": "failed", "finished": "2030-02-01T00:00:00Z", "reason": "connection refused"}
    with BundleWriter(out) as writer:
        writer.write_manifest([{"name": "sw1", "os": "sonic", "result": "ok"}, {"name": "sw2", **failed}], "T")
    for findings in (load_bundle(out).input_findings, Session(out).fabric.input_findings):
        [missing] = [f for f in findings if f.check == "INPUT-MISSING"]
        assert missing.subject == {"kind": "file", "path": "switches/sw2", "device": "sw2"}
        assert "never collected" in missing.message and "connection refused" in missing.message
        assert "2030-02-01T00:00:00Z" in missing.message
    _previous(out, "sw2", "sonic", "sonic-redis", {"config_db.json": CONFIG_DB})  # a later collect succeeded
    assert not [f for f in load_bundle(out).input_findings if "never collected" in f.message]
    (out / "collect-manifest.json").write_bytes(b'{"devices": [')
    assert [f.check for f in load_bundle(out).input_findings] == ["INPUT-UNREADABLE"]
