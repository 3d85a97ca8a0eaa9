"""Series from successive snapshots of a bundle's own files (``telemetry/rounds/<unix time>/``), built from the real
samples: the sysfs hw_counters tree of an H100 node, SONiC's COUNTERS_DB and an EOS ``show interfaces`` reply."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import orjson
from tests.health.conftest import small_fabric

from unifab.health.detect import PFC_STORM, Thresholds, detect
from unifab.health.localize import localize
from unifab.health.openmetrics import Sample, dump
from unifab.health.series import build_store, intervals, read_bundle
from unifab.health.snapshot_series import ROUNDS_DIR, read_rounds, round_time
from unifab.model import Fabric
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
