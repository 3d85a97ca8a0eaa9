"""IB PMA counter series from successive perfquery snapshots (``ib/perfquery/<unix time>.txt``): the stored ibsim
snapshots (a rise, 16/8-bit saturation, ``perfquery -R``), and the real perfquery run against ibsim at several
moments with the counters set through ibsim's console, read back exactly and fed to health's detectors."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ib_netfile import rail_fabric
from ibsim import ibsim_fabric

from unifab.collect.bundle import load_bundle
from unifab.health.detect import FEC, LINK_FLAP, detect
from unifab.health.ib_series import SNAPSHOT_DIR, read_ib_snapshots, snapshot_time, wait_shares
from unifab.health.series import SeriesStore, intervals
from unifab.parse.ib import perfquery
from unifab.sources import as_source_path

LEAF_PORT, HCA = "port:ib-leaf-r1:2", "nic:dgx-002:mlx5_1"


def _bundle(tmp: Path, samples: Path) -> Path:
    src = samples / "ib" / "perfquery_series_sim"
    root = tmp / "bundle"
    (root / SNAPSHOT_DIR).mkdir(parents=True)
    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_series.txt", root / "ib" / "ibnetdiscover.txt")
    for f in src.glob("1*.txt"):
        shutil.copy(f, root / SNAPSHOT_DIR / f.name)
    return root


def _printed(samples: Path, name: str, lid: int, port: int, kind: str = "basic") -> list[int]:
    """What perfquery printed for one counter, snapshot after snapshot (read independently of ib_series)."""
    out = []
    for f in sorted((samples / "ib" / "perfquery_series_sim").glob("1*.txt")):
        block = next(b for b in perfquery.parse(f.read_text()).blocks if (b.lid, b.port, b.kind) == (lid, port, kind))
        out.append(block.counters[name])
    return out


def _store(tmp: Path, samples: Path) -> SeriesStore:
    root = _bundle(tmp, samples)
    fabric = load_bundle(root)
    return read_ib_snapshots(as_source_path(root), fabric)


def test_snapshot_names() -> None:
    assert (snapshot_time("1764547200.txt"), snapshot_time("1764547200.25.txt")) == (1764547200.0, 1764547200.25)
    assert snapshot_time("perfquery.txt") is None and snapshot_time("1764547200.om") is None


def test_stored_snapshots_saturation_and_reset(tmp_path: Path, samples: Path) -> None:
    store = _store(tmp_path, samples)
    assert store.problems == [] and store.files == 3
    sym = store.series[(LEAF_PORT, "symbol_errors", "")]
    assert (sym.spec.width, sym.spec.saturates, sym.metric) == (16, True, "perfquery:SymbolErrorCounter")
    printed = _printed(samples, "SymbolErrorCounter", 3, 2)
    assert printed == [120, 65535, 4]  # set through ibsim: a rise onto the 16-bit top, then perfquery -R
    steps = intervals(sym)
    assert [(i.delta, i.event) for i in steps] == [(65535 - 120, "saturated"), (4, "reset")]
    recov = intervals(store.series[(HCA, "link_error_recovery", "")])
    assert [(i.delta, i.event) for i in recov] == [(5, "saturated"), (0, "reset")]  # 8 bits: 250 -> 255 -> 0
    flaps = intervals(store.series[(LEAF_PORT, "link_down", "")])
    assert [(i.delta, i.event) for i in flaps] == [(6, ""), (0, "reset")]
    data = store.series[(LEAF_PORT, "xmit_data", "")]
    assert (data.spec.width, data.spec.saturates) == (64, False)  # the extended copy, in every snapshot
    assert data.values == [float(v) for v in _printed(samples, "PortXmitData", 3, 2, "extended")]


def test_xmit_wait_share(tmp_path: Path, samples: Path) -> None:
    shares = wait_shares(_store(tmp_path, samples))
    wait = _printed(samples, "PortXmitWait", 3, 2)
    data = _printed(samples, "PortXmitData", 3, 2, "extended")
    first = shares[LEAF_PORT][0]
    dw, dd = wait[1] - wait[0], data[1] - data[0]
    assert (first.wait, first.data, first.share) == (dw, dd, dw / (dw + dd))
    assert first.share is not None and 0.4 < first.share < 0.6  # 900000 ticks waited against ~900000 words sent
    second = shares[LEAF_PORT][1]
    assert (second.wait, second.share) == (wait[2], wait[2] / (wait[2] + data[2] - data[1]))  # reset: the new value
    assert all(s.share == 0 for s in shares[HCA] if s.share is not None)  # the HCA never waited


def test_bad_snapshot_names_and_unknown_lids(tmp_path: Path, samples: Path) -> None:
    root = _bundle(tmp_path, samples)
    (root / SNAPSHOT_DIR / "yesterday.txt").write_text("x\n")
    (root / SNAPSHOT_DIR / "1764547999.txt").write_text(
        "# Port counters: Lid 999 port 1\nSymbolErrorCounter:......3\n"
        "# Port counters: Lid 3 port 2\nLinkDownedCounter:....x\n"
    )
    store = read_ib_snapshots(as_source_path(root), load_bundle(root))
    assert store.files == 4
    assert any("yesterday.txt: expected a snapshot named <unix time>.txt" in p for p in store.problems)
    assert any(
        "1764547999.txt: 1 counter block(s) name a LID the fabric does not have: lid 999 port 1" in p
        for p in store.problems
    )
    bad = f"{SNAPSHOT_DIR}/1764547999.txt:4: expected LinkDownedCounter as a non-negative integer, got 'x'"
    assert f"{bad} (the basic counters of lid 3 port 2 skipped)" in store.problems


def _lids(topology: str) -> dict[str, int]:
    """Each node's LID as ibnetdiscover printed it (a switch's on its header, a CA's on the switch port line)."""
    from unifab.parse.ib import ibnetdiscover

    out: dict[str, int] = {}
    for node in ibnetdiscover.parse(topology).nodes:
        if node.lid is not None and node.description:
            out[node.description] = node.lid
        for p in node.ports:
            if p.remote_lid is not None and p.remote_description:
                out.setdefault(p.remote_description, p.remote_lid)
    return out


def test_real_perfquery_snapshots_feed_health(tmp_path: Path) -> None:
    """Five rounds 60 s apart: the leaf port's SymbolErrorCounter rises by 100 a round (HEALTH-FEC), the HCA's
    LinkDownedCounter by 2 a round until it saturates at 255; the series read back exactly what ibsim was told."""
    fab = rail_fabric(2, 2, 1)
    root = tmp_path / "bundle"
    (root / SNAPSHOT_DIR).mkdir(parents=True)
    symbol = [0, 100, 200, 300, 400]
    downed = [249, 251, 253, 255, 255]
    with ibsim_fabric(tmp_path / "ibsim", fab.text, attach=fab.first_ca().id) as sim:
        sim.sweep()
        topology = sim.run(["ibnetdiscover"])
        (root / "ib" / "ibnetdiscover.txt").write_text(topology)
        lids = _lids(topology)
        leaf, hca = lids["MF0;ib-leaf-r1:MQM8700/U1"], lids["gpu002 mlx5_1"]
        for i, (s, d) in enumerate(zip(symbol, downed, strict=True)):
            sim.console(f'PerformanceSet "S-leaf-r1"[2] PortCounters.SymbolErrorCounter={s}')
            sim.console(f'PerformanceSet "H-gpu002-mlx5_1"[1] PortCounters.LinkDownedCounter={d}')
            text = sim.run(["perfquery", str(leaf), "2"]) + sim.run(["perfquery", str(hca), "1"])
            (root / SNAPSHOT_DIR / f"{1764547200 + 60 * i}.txt").write_text(text)
    store = read_ib_snapshots(as_source_path(root), load_bundle(root))
    assert store.problems == []
    sym = store.series[("port:ib-leaf-r1:2", "symbol_errors", "")]
    assert sym.values == [float(v) for v in symbol] and sym.times == [1764547200.0 + 60 * i for i in range(5)]
    down = store.series[("nic:gpu002:mlx5_1", "link_down", "")]
    assert [(i.delta, i.event) for i in intervals(down)] == [(2, ""), (2, ""), (2, "saturated"), (None, "saturated")]
    found = {(s.detector, s.entity) for s in detect(store)}
    assert (FEC, "port:ib-leaf-r1:2") in found
    assert (LINK_FLAP, "nic:gpu002:mlx5_1") in found  # 6 link-downs in 4 minutes, the last interval unknown


@pytest.mark.parametrize("name", ["1764547200.txt"])
def test_no_snapshot_dir_is_an_empty_store(tmp_path: Path, name: str) -> None:
    root = tmp_path / "bundle"
    (root / "ib").mkdir(parents=True)
    (root / "ib" / name).write_text("not a snapshot: outside ib/perfquery/\n")
    store = read_ib_snapshots(as_source_path(root), load_bundle(root))
    assert (len(store), store.files, store.problems) == (0, 0, [])


def test_a_telemetry_series_is_kept(tmp_path: Path, samples: Path) -> None:
    from unifab.health.series import METRICS, Series
    from unifab.model import Endpoint

    root = _bundle(tmp_path, samples)
    spec = METRICS["node_infiniband_symbol_error_total"]
    own = Series(HCA, Endpoint("dgx-002", "mlx5_1"), "symbol_errors", "", spec, "node_infiniband_symbol_error_total")
    own.times, own.values = [1.0, 2.0], [0.0, 0.0]
    store = SeriesStore(series={own.key: own})
    read_ib_snapshots(as_source_path(root), load_bundle(root), store)
    assert store.series[own.key] is own
    assert store.problems == [f"{SNAPSHOT_DIR}: 1 counter series also read from telemetry/; the telemetry's were kept"]
    assert store.series[(HCA, "rcv_errors", "")].metric == "perfquery:PortRcvErrors"
