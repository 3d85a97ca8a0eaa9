"""A twin's fault timelines written as collection rounds (``--telemetry rounds``) give ``unifab health`` the same
root causes, starts and jobs as the same twin read from ``telemetry/*.om``."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.bundle import load_bundle
from unifab.health.snapshot_series import ROUNDS_DIR, read_rounds
from unifab.parse.host import ethtool_stats
from unifab.parse.switch import eos_json, sonic_counters_db
from unifab.parse.switch.eos_json.records import EosQueueCounters
from unifab.sources import as_source_path
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate
from unifab.twin.telemetry_rounds import round_name, write_rounds

TWIN = ["--gpus", "64", "--su-hosts", "2", "--switch-os", "eos", "--quiet"]


def _health(bundle: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["health", str(bundle), "--format", "json", "--quiet"])
    assert result.exit_code == 1, result.output
    doc: dict[str, Any] = orjson.loads(result.stdout)
    return doc


def _roots(doc: dict[str, Any]) -> dict[str, tuple[str, str, list[str]]]:
    return {i["root_cause"]["id"]: (i["root_cause"]["kind"], i["start"], i["jobs"]) for i in doc["incidents"]}


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _assert_truth(doc: dict[str, Any], truth: dict[str, Any]) -> None:
    roots = _roots(doc)
    assert set(roots) == {f["root_cause"]["id"] for f in truth["faults"]}, roots
    for fault in truth["faults"]:
        kind, start, jobs = roots[fault["root_cause"]["id"]]
        assert kind == fault["root_cause"]["kind"] and jobs == fault["jobs"], fault
        assert abs(_epoch(start) - _epoch(fault["start"])) <= truth["telemetry"]["step_s"], fault


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same twin (seed 1, 4 faults: link-flap, optic-dirty, lossless-drops, host-dead) as .om and as rounds."""
    base = tmp_path_factory.mktemp("rounds")
    runner = CliRunner()
    for name, telemetry in (("om", "openmetrics"), ("rounds", "rounds")):
        args = ["twin", "generate", "--out", str(base / name), "--seed", "1", "--faults", "4", *TWIN]
        result = runner.invoke(app, [*args, "--telemetry", telemetry])
        assert result.exit_code == 0, result.output
    return base / "om", base / "rounds"


def test_rounds_only_writes_no_openmetrics_and_real_format_files(pair: tuple[Path, Path]) -> None:
    om, rounds = pair
    assert not list((rounds / "telemetry").glob("*.om")) and list((om / "telemetry").glob("*.om"))
    assert not (om / ROUNDS_DIR).exists()
    truth = orjson.loads((rounds / "truth.json").read_bytes())
    assert truth["faults"] == orjson.loads((om / "truth.json").read_bytes())["faults"]
    first = round_name(_epoch(truth["telemetry"]["start"]))
    assert len(list((rounds / ROUNDS_DIR).iterdir())) == truth["telemetry"]["samples"]
    host = sorted((rounds / ROUNDS_DIR / first / "hosts").iterdir())[0]
    stats = ethtool_stats.parse((host / "cmd/ethtool-S/eth2.txt").read_text())
    assert {"rx_symbol_err_phy", "rx_crc_errors_phy", "tx_prio3_pause_duration"} <= set(stats)
    assert (host / "sys/class/net/eth2/carrier_changes").read_text().strip().isdigit()
    switch = sorted((rounds / ROUNDS_DIR / first / "switches").iterdir())[0]
    reply = orjson.loads((switch / "eos/show-interfaces.json").read_bytes())
    assert all("linkStatusChanges" in e["interfaceCounters"] for e in reply["interfaces"].values())


def test_rounds_give_the_same_root_causes_as_openmetrics(pair: tuple[Path, Path]) -> None:
    om, rounds = pair
    truth = orjson.loads((om / "truth.json").read_bytes())
    from_om, from_rounds = _health(om), _health(rounds)
    _assert_truth(from_om, truth)
    _assert_truth(from_rounds, truth)
    assert _roots(from_rounds) == _roots(from_om)
    assert from_rounds["problems"] == [] and from_rounds["summary"]["gaps"] > 0


def test_down_devices_dom_ecn_and_logs_from_rounds(tmp_path: Path) -> None:
    """A second seed with the other kinds: devices that stop (a leaf, a host, a NIC), an optic's DOM, ECN absent,
    and the log-borne Xid and NCCL faults beside the rounds."""
    om = tmp_path / "om"
    generate(om, 64, 3, su_hosts=2, switch_os="eos")
    kinds = ["leaf-down", "host-down", "nic-down", "optic-dom", "ecn-absent", "gpu-xid-79", "nccl-bad-link"]
    faults = write_faults(om, len(kinds), 3, kinds=kinds)
    written = write_rounds(om)
    assert written and all(ROUNDS_DIR in str(p) for p in written)
    rounds = tmp_path / "rounds"
    shutil.copytree(om, rounds)
    shutil.rmtree(om / ROUNDS_DIR)
    for path in (rounds / "telemetry").glob("*.om"):
        path.unlink()
    truth = orjson.loads((om / "truth.json").read_bytes())
    assert [f["kind"] for f in faults] == kinds
    from_om, from_rounds = _health(om), _health(rounds)
    _assert_truth(from_rounds, truth)
    assert _roots(from_rounds) == _roots(from_om)


def test_sonic_rounds_and_what_they_cannot_show(tmp_path: Path) -> None:
    """SONiC's COUNTERS_DB carries the port errors (a dirty optic at the switch end is found) but no link-down
    count: a flapping host link is seen from the NIC's end only."""
    bundle = tmp_path / "b"
    generate(bundle, 64, 2, su_hosts=2, switch_os="sonic")
    faults = write_faults(bundle, 2, 2, kinds=["optic-dirty", "lossless-drops"])
    write_rounds(bundle)
    for path in (bundle / "telemetry").glob("*.om"):
        path.unlink()
    _assert_truth(_health(bundle), orjson.loads((bundle / "truth.json").read_bytes()))
    assert len(faults) == 2
    first = sorted((bundle / ROUNDS_DIR).iterdir())[0]
    switch = sorted((first / "switches").iterdir())[0]
    counters = sonic_counters_db.parse((switch / "sonic/counters_db.json").read_bytes())
    assert counters.ports and all(p.in_errors is not None for p in counters.ports.values())
    store = read_rounds(as_source_path(bundle), load_bundle(bundle))
    ports = {s.counter for s in store.series.values() if s.entity.startswith("port:")}
    assert {"crc_errors", "fec_uncorrectable", "pause_tx_us", "oper_up"} <= ports and "link_down" not in ports


def test_telemetry_option_is_checked(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["twin", "generate", "--out", str(tmp_path / "x"), "--telemetry", "csv", *TWIN])
    assert bad.exit_code == 2 and "expected openmetrics, rounds or both" in bad.stderr
    alone = runner.invoke(app, ["twin", "generate", "--out", str(tmp_path / "y"), "--telemetry", "rounds", *TWIN])
    assert alone.exit_code == 2 and "only with --faults" in alone.stderr


def test_both_keeps_the_openmetrics_beside_the_rounds(tmp_path: Path) -> None:
    out = tmp_path / "b"
    args = ["twin", "generate", "--out", str(out), "--gpus", "16", "--su-hosts", "2", "--switch-os", "eos"]
    result = CliRunner().invoke(app, [*args, "--faults", "1", "--telemetry", "both", "--quiet"])
    assert result.exit_code == 0, result.output
    oms = {p.name for p in (out / "telemetry").glob("*.om")}
    truth = orjson.loads((out / "truth.json").read_bytes())
    first = sorted((out / ROUNDS_DIR).iterdir())[0]
    devices = {p.name for kind in ("hosts", "switches") for p in (first / kind).iterdir()}
    assert oms == {f"{d}.om" for d in devices}  # every device with a timeline, in both forms
    assert len(list((out / ROUNDS_DIR).iterdir())) == truth["telemetry"]["samples"]
    store = read_rounds(as_source_path(out), load_bundle(out))
    assert store.problems == [] and len(store) > 0


def test_a_pfc_storm_from_sonic_rounds_carries_the_leafs_watchdog(tmp_path: Path) -> None:
    """The stuck receiver's leaf runs SONiC: its rounds' COUNTERS_DB holds the PFC watchdog's storm count on the
    NIC's queue (the real field names, read back by the real parser), and the incident is the NIC's with the
    watchdog's storms among its symptoms."""
    bundle = tmp_path / "b"
    generate(bundle, 128, 2, su_hosts=4, switch_os="sonic")
    [fault] = write_faults(bundle, 1, 2, kinds=["pfc-storm"])
    write_rounds(bundle)
    for path in (bundle / "telemetry").glob("*.om"):
        path.unlink()
    doc = _health(bundle)
    _assert_truth(doc, orjson.loads((bundle / "truth.json").read_bytes()))
    [incident] = [i for i in doc["incidents"] if i["root_cause"]["id"] == fault["root_cause"]["id"]]
    [watchdog] = [s for s in incident["symptoms"] if s["counter"] == "pfcwd_storms{3}"]
    assert watchdog["entity"] == fault["root_cause"]["id"]
    assert "its PFC watchdog keeps detecting storms" in watchdog["notes"][0]
    last = sorted((bundle / ROUNDS_DIR).iterdir())[-1]
    leaf = watchdog["notes"][0].split()[0]
    counters = sonic_counters_db.parse((last / "switches" / leaf / "sonic/counters_db.json").read_bytes())
    stormed = [q.pfcwd for p in counters.ports.values() for q in p.queues.values() if q.pfcwd is not None]
    assert len(stormed) == 1 and (stormed[0].deadlock_detected or 0) >= 2


@pytest.mark.parametrize("switch_os", ["sonic", "eos"])
def test_a_port_dropping_in_its_lossless_queue_from_rounds(tmp_path: Path, switch_os: str) -> None:
    """A leaf port whose lossless queue drops (``queue-drops``): the rounds carry the drops in the switch's own
    counters (SONiC COUNTERS_DB ``SAI_QUEUE_STAT_DROPPED_PACKETS`` of the RoCE queue, EOS ``show interfaces counters
    queue detail``), read back by the real parsers; the incident is the port's, with the out-of-sequence packets of
    the NIC it feeds among its symptoms, and the few drops of the noise elsewhere are no incident."""
    bundle = tmp_path / "b"
    generate(bundle, 64, 4, su_hosts=2, switch_os=switch_os)
    [fault] = write_faults(bundle, 1, 4, kinds=["queue-drops"])
    write_rounds(bundle)
    for path in (bundle / "telemetry").glob("*.om"):
        path.unlink()
    doc = _health(bundle)
    _assert_truth(doc, orjson.loads((bundle / "truth.json").read_bytes()))
    [incident] = doc["incidents"]
    assert {s["counter"] for s in incident["symptoms"]} == {"queue_drops{3}", "out_of_sequence"}
    _, leaf, port = fault["root_cause"]["id"].split(":")
    last = sorted((bundle / ROUNDS_DIR).iterdir())[-1] / "switches" / leaf
    if switch_os == "sonic":
        counters = sonic_counters_db.parse((last / "sonic/counters_db.json").read_bytes())
        assert (counters.ports[port].queues[3].dropped_packets or 0) > 100
    else:
        reply = eos_json.parse((last / "eos/show-interfaces-counters-queue-detail.json").read_text()).data
        assert isinstance(reply, EosQueueCounters) and reply.interfaces[port].unicast_dropped[3] > 100
