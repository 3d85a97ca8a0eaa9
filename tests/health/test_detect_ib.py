"""InfiniBand credit starvation and error counters over real perfquery rounds (infiniband-diags against ibsim,
counters set through its console: tests/data/samples/ib/perfquery_series_sim.source.txt), and over rounds in the
same format whose XmitWait spreads upstream from a slow receiver (the twin's ib/perfquery/)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.health.detect import FEC, PFC_STORM, Thresholds, detect
from unifab.health.detect_ib import IB_CONGESTION, congested_ports, ib_congestion
from unifab.health.ib_series import read_ib_snapshots
from unifab.health.series import SeriesStore
from unifab.sources import as_source_path
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ibsim import ibsim_fabric

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "ib"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> SeriesStore:
    bundle = tmp_path_factory.mktemp("real") / "b"
    (bundle / "ib" / "perfquery").mkdir(parents=True)
    shutil.copy(SAMPLES / "ibnetdiscover_sim_rail_series.txt", bundle / "ib" / "ibnetdiscover.txt")
    for snapshot in (SAMPLES / "perfquery_series_sim").glob("1*.txt"):
        shutil.copy(snapshot, bundle / "ib" / "perfquery" / snapshot.name)
    store = read_ib_snapshots(as_source_path(bundle), load_bundle(bundle))
    assert store.problems == []
    return store


def test_a_port_waiting_for_credits_blames_the_hca_it_feeds(real: SeriesStore) -> None:
    # leaf-r1 port 2: XmitWait 1000 -> 901000 while it sent 900000 words (share 0.5), then after perfquery -R
    # 500 ticks against 432 words; its peer dgx-002 mlx5_1 never waited: the slow receiver
    t = Thresholds(ib_wait_intervals=2)
    (symptom,) = ib_congestion(real.series.values(), t)
    assert (symptom.detector, symptom.entity, symptom.counter) == (PFC_STORM, "nic:dgx-002:mlx5_1", "xmit_wait")
    assert symptom.intervals == 2 and 0.5 <= symptom.peak < 0.55
    assert "port:ib-leaf-r1:2 waited" in symptom.notes[0]


def test_the_same_rounds_are_no_congestion_under_the_defaults_or_a_higher_share(real: SeriesStore) -> None:
    assert ib_congestion(real.series.values(), Thresholds()) == []  # two intervals, three needed
    assert congested_ports(real.series.values(), Thresholds(ib_wait_intervals=1, ib_wait_share=0.6)) == []


def test_retrains_and_receive_errors_are_judged_as_a_marginal_link(real: SeriesStore) -> None:
    # dgx-002 mlx5_1: LinkErrorRecoveryCounter 250 -> 255 (saturated) in one minute: five retrains
    found = {(s.detector, s.entity, s.counter) for s in detect(real)}
    assert (FEC, "nic:dgx-002:mlx5_1", "link_error_recovery") in found
    # PortRcvErrors 7 -> 19 in one interval only: not yet persistent; under a looser rule it is
    assert (FEC, "nic:dgx-002:mlx5_1", "rcv_errors") not in found
    loose = Thresholds(error_intervals=1, error_total=10)
    assert (FEC, "nic:dgx-002:mlx5_1", "rcv_errors") in {(s.detector, s.entity, s.counter) for s in detect(real, loose)}
    assert not any(s.counter == "link_error_recovery" for s in detect(real, Thresholds(flap_events=6)))


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> tuple[SeriesStore, dict[str, object]]:
    bundle = tmp_path_factory.mktemp("slow") / "b"
    generate(bundle, 32, 3, fabric="ib")
    (fault,) = [f for f in write_faults(bundle, 3, 3) if f["kind"] == "ib-slow-receiver"]
    return read_ib_snapshots(as_source_path(bundle), load_bundle(bundle)), fault


def test_congestion_spreading_upstream_is_one_symptom_on_the_slow_receiver(
    slow: tuple[SeriesStore, dict[str, object]],
) -> None:
    store, fault = slow
    ports = congested_ports(store.series.values(), Thresholds())
    assert len(ports) >= 2  # the leaf port feeding the HCA and the spine ports feeding that leaf
    (symptom,) = ib_congestion(store.series.values(), Thresholds())
    assert {"kind": "nic", "id": symptom.entity} == fault["root_cause"]
    victims = {p.entity for p in ports} - {p.entity for p in ports if p.peer == symptom.entity}
    assert victims and all(v in symptom.notes[-1] for v in victims)


def test_a_stricter_share_finds_only_the_port_at_the_bottom(slow: tuple[SeriesStore, dict[str, object]]) -> None:
    store, fault = slow
    ports = congested_ports(store.series.values(), Thresholds(ib_wait_share=0.72))
    assert [p.peer for p in ports] == [fault["root_cause"]["id"]]  # type: ignore[index]
    assert congested_ports(store.series.values(), Thresholds(ib_wait_share=0.96)) == []


def test_real_perfquery_of_a_simulated_fabric_shows_the_slow_receiver(tmp_path: Path) -> None:
    """ibsim's PMA holds the counters (set through its console between rounds), the real perfquery reads them:
    leaf-r1 port 2 waits for the credits of dgx-002 mlx5_1, spine-4 port 2 (feeding leaf-r1) waits behind it."""
    net = (SAMPLES / "ibsim_rail_fabric_faulty.net").read_text()
    bundle = tmp_path / "b"
    (bundle / "ib" / "perfquery").mkdir(parents=True)
    with ibsim_fabric(tmp_path / "sim", net, attach="H-dgx001-mlx5_0") as sim:
        sim.sweep()
        (bundle / "ib" / "ibnetdiscover.txt").write_text(sim.run(["ibnetdiscover"]))
        fabric = load_bundle(bundle)
        hca = fabric.hosts["dgx-002"].nics["mlx5_1"].ib
        assert hca is not None and hca.lid is not None
        ports = [
            ("S-leaf-r1", fabric.switches["ib-leaf-r1"].lid, 2, 800_000, 100_000),  # share 0.89
            ("S-spine-4", fabric.switches["ib-spine-4"].lid, 2, 500_000, 200_000),  # share 0.71
            ("H-dgx002-mlx5_1", hca.lid, 1, 0, 1_000_000),  # sends freely, waits for nothing
        ]
        for i in range(5):
            text = ""
            for node, lid, port, wait, data in ports:
                if i:
                    sim.console(f'PerformanceSet "{node}"[{port}] PortCounters.PortXmitWait={wait * i}')
                    sim.console(f'PerformanceSet "{node}"[{port}] PortCounters.PortXmitData={data * i}')
                    sim.console(f'PerformanceSet "{node}"[{port}] PortCountersExtended.PortXmitData={data * i}')
                text += sim.run(["perfquery", str(lid), str(port)])
                text += sim.run(["perfquery", "-x", str(lid), str(port)])
            (bundle / "ib" / "perfquery" / f"{1764547200 + 60 * i}.txt").write_text(text)
    store = read_ib_snapshots(as_source_path(bundle), fabric)
    assert store.problems == []
    (symptom,) = ib_congestion(store.series.values(), Thresholds())
    assert symptom.entity == "nic:dgx-002:mlx5_1" and symptom.intervals == 4
    assert "port:ib-leaf-r1:2 waited" in symptom.notes[0]
    assert symptom.notes[-1] == "upstream victims (waiting behind it): port:ib-spine-4:2"
    # the spine's share (0.71) is under a stricter rule: the leaf port alone, still blaming the HCA
    strict = Thresholds(ib_wait_share=0.8)
    assert [p.entity for p in congested_ports(store.series.values(), strict)] == ["port:ib-leaf-r1:2"]
    assert ib_congestion(store.series.values(), Thresholds(ib_wait_share=0.95)) == []


def test_the_congestion_symptom_is_the_stuck_receiver_id_localize_knows() -> None:
    assert IB_CONGESTION == PFC_STORM
