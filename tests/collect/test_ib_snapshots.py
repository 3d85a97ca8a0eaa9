"""Without ``ib/perfquery.txt`` the newest ``ib/perfquery/<unix time>.txt`` snapshot holds a port's counters
(IB-COUNTERS judges one snapshot); a file name that is not a time is never the newest."""

from __future__ import annotations

import shutil
from pathlib import Path

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.ib import PERFQUERY_FILE, SNAPSHOT_DIR, snapshot_time


def _bundle(tmp: Path, samples: Path, times: tuple[str, ...]) -> Path:
    src = samples / "ib" / "perfquery_series_sim"
    root = tmp / "b"
    (root / SNAPSHOT_DIR).mkdir(parents=True)
    shutil.copy(samples / "ib" / "ibnetdiscover_sim_rail_series.txt", root / "ib" / "ibnetdiscover.txt")
    for t in times:
        shutil.copy(src / f"{t}.txt", root / SNAPSHOT_DIR / f"{t}.txt")
    return root


def _counters(root: Path) -> dict[str, dict[str, int]]:
    return {f.subject["id"]: f.evidence["counters"] for f in run_checks(load_bundle(root)) if f.check == "IB-COUNTERS"}


def test_the_newest_snapshot_is_judged(tmp_path: Path, samples: Path) -> None:
    root = _bundle(tmp_path, samples, ("1764547200", "1764547260"))
    (root / SNAPSHOT_DIR / "notes.txt").write_text("not a snapshot\n")
    found = _counters(root)
    assert found["port:ib-leaf-r1:2"] == {"SymbolErrorCounter": 65535, "LinkDownedCounter": 9, "PortXmitWait": 901000}
    assert found["nic:dgx-002:mlx5_1"] == {"LinkErrorRecoveryCounter": 255, "PortRcvErrors": 19}
    fabric = load_bundle(root)
    assert fabric.ib is not None and f"{SNAPSHOT_DIR}/1764547260.txt" in fabric.ib.files


def test_after_a_clear_the_newest_snapshot_is_clean(tmp_path: Path, samples: Path) -> None:
    root = _bundle(tmp_path, samples, ("1764547200", "1764547260", "1764547320"))
    assert _counters(root) == {}  # perfquery -R: 4 symbol errors, 500 wait ticks are below threshold


def test_perfquery_txt_wins_over_snapshots(tmp_path: Path, samples: Path) -> None:
    root = _bundle(tmp_path, samples, ("1764547320",))
    shutil.copy(samples / "ib" / "perfquery_series_sim" / "1764547260.txt", root / PERFQUERY_FILE)
    assert "port:ib-leaf-r1:2" in _counters(root)
    assert snapshot_time("1764547320.txt") == 1764547320.0 and snapshot_time("notes.txt") is None
