"""Series from successive snapshots of a bundle's own files (``telemetry/rounds/<unix time>/``), built from the real
samples: the sysfs hw_counters tree of an H100 node, SONiC's COUNTERS_DB and an EOS ``show interfaces`` reply."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import orjson
from tests.health.conftest import small_fabric

from unifab.health.detect import LOSSLESS_DROPS, PFC_STORM, Thresholds, detect
from unifab.health.localize import localize
from unifab.health.openmetrics import Sample, dump
from unifab.health.series import build_store, intervals, read_bundle
from unifab.health.snapshot_series import ROUNDS_DIR, read_rounds, round_time
from unifab.model import Fabric, Port, PortQos, Switch
from unifab.sources import as_source_path

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
HW = SAMPLES / "host" / "sysfs_class_infiniband_h100" / "mlx5_0"
COUNTERS_DB = SAMPLES / "switch" / "sonic" / "sonic_counters_db_mock_pfc_queue_pg.json"
EOS = SAMPLES / "switch" / "eos" / "eos-4.23.5M_leaf01_show_interfaces.json"
# no ethtool -S capture is in the samples: the parser's fullest mlx5 seed (every counter of a current kernel)
ETHTOOL_S = Path(__file__).parents[1] / "parse" / "fuzz_seeds" / "ethtool-S" / "new_kernel.txt"
T0 = 1764547200


def _round(bundle: Path, name: str, oos: int, in_errors: int, changes: int, carrier: int, crc: int) -> Path:
    root = bundle / ROUNDS_DIR / name
    host = root / "hosts" / "gpu001"
    shutil.copytree(HW, host / "sys/class/infiniband/mlx5_0")
    (host / "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence").write_text(f"{oos}\n")
    net = host / "sys/class/net/eth2"
    net.mkdir(parents=True)
    (net / "carrier_changes").write_text(f"{carrier}\n")
    (net / "operstate").write_text("up\n")
    ethtool = host / "cmd/ethtool-S/eth2.txt"
    ethtool.parent.mkdir(parents=True)
    ethtool.write_text(ETHTOOL_S.read_text().replace("rx_crc_errors_phy: 0", f"rx_crc_errors_phy: {crc}"))
    db = orjson.loads(COUNTERS_DB.read_bytes())
    db["COUNTERS:" + db["COUNTERS_PORT_NAME_MAP"]["Ethernet0"]]["SAI_PORT_STAT_IF_IN_ERRORS"] = str(in_errors)
    sonic = root / "switches" / "leaf1" / "sonic" / "counters_db.json"
    sonic.parent.mkdir(parents=True)
    sonic.write_bytes(orjson.dumps(db))
    eos = orjson.loads(EOS.read_bytes())
    eos["interfaces"]["Ethernet1"]["interfaceCounters"]["linkStatusChanges"] = changes
    path = root / "switches" / "leaf2" / "eos" / "show-interfaces.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(eos))
    return root


def _rows(bundle: Path) -> list[tuple[str, int, int, int, int, int]]:
    # (name, out_of_sequence, SONiC in errors, EOS status changes, carrier_changes, crc): a reset, a wrap, a gap
    return [
        (str(T0), 100, 10, 4, 2**32 - 3, 0),
        (str(T0 + 60), 150, 30, 6, 2**32 - 1, 5),
        (f"{T0 + 120}.5", 20, 31, 8, 3, 9),  # out_of_sequence reset (driver reload), carrier_changes wrapped
        # T0 + 180 missing: a gap for every device
        (str(T0 + 240), 40, 40, 8, 5, 9),
    ]


def _bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "b"
    for row in _rows(bundle):
        _round(bundle, *row)
    return bundle


def test_round_names() -> None:
    assert round_time("1764547200") == 1764547200.0
    assert round_time("1764547200.5") == 1764547200.5
    assert round_time("x1764547200") is None
    assert round_time("1764547200.") is None


def test_rounds_become_series_with_resets_wraps_and_gaps(tmp_path: Path) -> None:
    store = read_rounds(as_source_path(_bundle(tmp_path)), Fabric())
    assert store.problems == []
    assert store.files == 4
    oos = store.series[("nic:gpu001:mlx5_0", "out_of_sequence", "")]
    assert oos.times == [T0, T0 + 60, T0 + 120.5, T0 + 240]
    steps = intervals(oos)
    assert [i.delta for i in steps] == [50, 20, 20]  # across the missing round: one increment over the gap
    assert [i.event for i in steps] == ["", "reset", ""]
    assert [i.gap for i in steps] == [False, False, True]
    carrier = store.series[("nic:gpu001:eth2", "carrier_changes", "")]
    assert carrier.spec.width == 32
    assert [i.delta for i in intervals(carrier)[:2]] == [2, 4] and intervals(carrier)[1].event == "wrap"
    assert store.series[("nic:gpu001:eth2", "oper_up", "")].values == [1, 1, 1, 1]
    assert store.series[("nic:gpu001:eth2", "crc_errors", "")].values == [0, 5, 9, 9]
    assert store.series[("nic:gpu001:eth2", "pause_tx_us", "3")].values == [4100500] * 4
    assert store.series[("nic:gpu001:eth2", "pause_rx_us", "3")].values == [5400210] * 4
    assert store.series[("nic:gpu001:eth2", "link_down", "")].values == [1] * 4
    assert store.series[("port:leaf1:Ethernet0", "crc_errors", "")].values == [10, 30, 31, 40]
    flaps = store.series[("port:leaf2:Ethernet1", "carrier_changes", "")]
    assert flaps.values == [4, 6, 8, 8]
    assert ("port:leaf2:Ethernet1", "crc_errors", "") in store.series  # totalInErrors


def test_a_missing_device_is_a_gap_not_a_problem(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    shutil.rmtree(bundle / ROUNDS_DIR / str(T0 + 60) / "switches" / "leaf1")
    store = read_rounds(as_source_path(bundle), Fabric())
    assert store.problems == []
    assert store.series[("port:leaf1:Ethernet0", "crc_errors", "")].times == [T0, T0 + 120.5, T0 + 240]
    assert len(store.series[("nic:gpu001:mlx5_0", "out_of_sequence", "")].times) == 4


def test_a_corrupt_file_costs_that_file_in_that_round(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    bad = bundle / ROUNDS_DIR / str(T0 + 60) / "switches" / "leaf1" / "sonic" / "counters_db.json"
    bad.write_text('{"COUNTERS_PORT_NAME_MAP": {"Ethernet0": ')
    (bundle / ROUNDS_DIR / "yesterday").mkdir()
    store = read_rounds(as_source_path(bundle), Fabric())
    where = f"{ROUNDS_DIR}/{T0 + 60}/switches/leaf1/sonic/counters_db.json"
    assert len([p for p in store.problems if p.startswith(where)]) == 1, store.problems
    assert any(p.startswith(f"{ROUNDS_DIR}/yesterday: expected a round directory") for p in store.problems)
    assert store.series[("port:leaf1:Ethernet0", "crc_errors", "")].times == [T0, T0 + 120.5, T0 + 240]
    assert len(store.series[("port:leaf2:Ethernet1", "carrier_changes", "")].times) == 4  # same round, other files


def test_a_series_the_telemetry_gives_is_kept_from_the_telemetry(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    labels = (("device", "mlx5_0"), ("instance", "gpu001"), ("port", "1"))
    om = [Sample("unifab_rdma_out_of_sequence_total", labels, v, T0 + 30 * i) for i, v in enumerate((1, 2, 3))]
    (bundle / "telemetry" / "gpu001.om").write_text(dump(om, {"unifab_rdma_out_of_sequence"}))
    root = as_source_path(bundle)
    store = read_rounds(root, Fabric(), read_bundle(root, Fabric()))
    assert store.series[("nic:gpu001:mlx5_0", "out_of_sequence", "")].values == [1, 2, 3]
    assert any("also read from telemetry/; the telemetry's were kept" in p for p in store.problems)
    assert ("nic:gpu001:eth2", "carrier_changes", "") in store.series
    assert build_store([], Fabric()).series == {}


def test_pfc_watchdog_storms_that_return_are_the_peers_storm(tmp_path: Path) -> None:
    """SONiC's PFC watchdog counts the storms it detected per queue (PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED). Two
    more on leaf1 Ethernet8 queue 4 within five minutes: the NIC cabled there keeps pausing it, so the incident is
    that NIC's (rule 6), the watchdog's port and queue in the note. A count that does not move is no symptom."""
    db = orjson.loads(COUNTERS_DB.read_bytes())
    queue = "COUNTERS:" + db["COUNTERS_QUEUE_NAME_MAP"]["Ethernet8:4"]
    bundle = tmp_path / "b"
    for n, storms in enumerate((3, 3, 4, 5, 5)):
        db[queue]["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"] = str(storms)
        path = bundle / ROUNDS_DIR / str(T0 + 60 * n) / "switches" / "leaf1" / "sonic" / "counters_db.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(orjson.dumps(db))
    fabric = small_fabric()
    store = read_rounds(as_source_path(bundle), fabric)
    assert store.series[("port:leaf1:Ethernet8", "pfcwd_storms", "4")].values == [3, 3, 4, 5, 5]
    assert store.series[("port:leaf1:Ethernet4", "pfcwd_storms", "3")].values == [2] * 5  # restored, quiet
    [symptom] = [s for s in detect(store) if s.detector == PFC_STORM]
    assert (symptom.entity, symptom.counter, symptom.total) == ("port:leaf1:Ethernet8", "pfcwd_storms{4}", 2)
    assert symptom.notes[0].startswith("leaf1 Ethernet8 queue 4: its PFC watchdog keeps detecting storms")
    [incident] = localize(fabric, [symptom])
    assert (incident.kind, incident.root) == ("nic", "nic:gpu002:mlx5_1")
    assert "sends PFC pause most of the time" in incident.summary
    assert [s.entity for s in incident.symptoms] == ["nic:gpu002:mlx5_1"]
    assert detect(store, replace(Thresholds(), pfcwd_storms=3)) == []  # health.pfc_storm.watchdog_storms


EOS_QUEUES = SAMPLES / "switch" / "eos" / "eos_show_interfaces_counters_queue_detail.json"


def _lossless(fabric: Fabric, switch: str, ports: tuple[str, ...], pfc: frozenset[int]) -> Fabric:
    """``fabric`` with ``pfc`` the PFC-enabled priorities of those ports (queue and PG = the priority)."""
    identity = {p: p for p in range(8)}
    qos = PortQos(None, {}, identity, identity, pfc, {}, None)
    if switch not in fabric.switches:
        fabric.switches[switch] = Switch(switch, "eos", "x", {})
    sw = fabric.switches[switch]
    for name in ports:
        old = sw.ports.get(name) or Port(switch, name, 9214, 400_000, "up", None)
        sw.ports[name] = replace(old, qos=qos)
    return fabric


def test_sonic_drops_in_a_lossless_queue_or_pg_are_the_hop_that_dropped(tmp_path: Path) -> None:
    """SAI_QUEUE_STAT_DROPPED_PACKETS of leaf1 Ethernet8 queue 3 (PFC on for 3 and 4) and its PG 3's ingress drops
    rise round after round: HEALTH-LOSSLESS-DROPS on that port, one incident on the port (rule 5), the host behind
    it named. The lossy queue 0 drops as much and is no series at all."""
    db = orjson.loads(COUNTERS_DB.read_bytes())
    queue = "COUNTERS:" + db["COUNTERS_QUEUE_NAME_MAP"]["Ethernet8:3"]
    lossy = "COUNTERS:" + db["COUNTERS_QUEUE_NAME_MAP"]["Ethernet8:0"]
    pg = "COUNTERS:" + db["COUNTERS_PG_NAME_MAP"]["Ethernet8:3"]
    bundle = tmp_path / "b"
    for n, dropped in enumerate((63, 63, 90, 140, 200)):
        db[queue]["SAI_QUEUE_STAT_DROPPED_PACKETS"] = str(dropped)
        db[lossy]["SAI_QUEUE_STAT_DROPPED_PACKETS"] = str(dropped)
        db[pg]["SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS"] = str(dropped + 40)
        path = bundle / ROUNDS_DIR / str(T0 + 60 * n) / "switches" / "leaf1" / "sonic" / "counters_db.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(orjson.dumps(db))
    fabric = _lossless(small_fabric(), "leaf1", ("Ethernet8",), frozenset({3, 4}))
    store = read_rounds(as_source_path(bundle), fabric)
    assert store.series[("port:leaf1:Ethernet8", "queue_drops", "3")].values == [63, 63, 90, 140, 200]
    assert store.series[("port:leaf1:Ethernet8", "pg_drops", "3")].values == [103, 103, 130, 180, 240]
    assert not any(key[1] == "queue_drops" and key[2] == "0" for key in store.series)
    symptoms = [s for s in detect(store) if s.detector == LOSSLESS_DROPS]
    assert {(s.entity, s.counter, s.total) for s in symptoms} == {
        ("port:leaf1:Ethernet8", "queue_drops{3}", 137),
        ("port:leaf1:Ethernet8", "pg_drops{3}", 137),
    }
    [incident] = localize(fabric, symptoms)
    assert (incident.kind, incident.root, incident.hosts) == ("port", "port:leaf1:Ethernet8", ("gpu002",))
    assert "drops packets of a lossless class" in incident.summary
    assert "no configuration finding on this port's link explains it" in incident.not_explained[-1]
    # without the port's QoS in the bundle no queue is known to be lossless: nothing to judge
    assert not any(k[1] in ("queue_drops", "pg_drops") for k in read_rounds(as_source_path(bundle), Fabric()).series)


def test_eos_drops_in_a_lossless_traffic_class_become_a_series(tmp_path: Path) -> None:
    """The real ``show interfaces counters queue detail`` replies (ANTA's fixtures): the unicast drops of the
    lossless traffic class 1 of each port, one series each; TC0 (lossy) and the multicast queues are not."""
    doc = orjson.loads(EOS_QUEUES.read_bytes())["fixtures"]
    later = orjson.loads(orjson.dumps(doc["failure"]))
    tc1 = later["egressQueueCounters"]["interfaces"]["Ethernet2"]["ucastQueues"]["trafficClasses"]["TC1"]
    bundle = tmp_path / "b"
    for n, reply in enumerate((doc["success-all"], doc["failure"], later, later)):
        if n == 3:
            tc1["dropPrecedences"]["DP0"]["droppedPackets"] = 90
        elif n == 2:
            tc1["dropPrecedences"]["DP0"]["droppedPackets"] = 40
        path = bundle / ROUNDS_DIR / str(T0 + 60 * n) / "switches" / "leaf2" / "eos"
        path.mkdir(parents=True)
        (path / "show-interfaces-counters-queue-detail.json").write_bytes(orjson.dumps(reply))
    fabric = _lossless(small_fabric(), "leaf2", ("Ethernet1", "Ethernet2"), frozenset({1}))
    store = read_rounds(as_source_path(bundle), fabric)
    drops = {k[0]: s.values for k, s in store.series.items() if k[1] == "queue_drops"}
    assert drops == {"port:leaf2:Ethernet1": [0, 0, 0, 0], "port:leaf2:Ethernet2": [0, 2, 40, 90]}
    [symptom] = [s for s in detect(store) if s.detector == LOSSLESS_DROPS]
    assert (symptom.entity, symptom.counter, symptom.total) == ("port:leaf2:Ethernet2", "queue_drops{1}", 90)
    assert store.problems == []
