"""Reading a bundle's non-counter evidence: kernel logs, NCCL logs, ethtool -m; bad files are located problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.health.events import read_events, wall_time
from unifab.model import Fabric
from unifab.sources import as_source_path

JOURNAL = (
    "2026-11-30T03:10:00+0000 gpu002.cluster.example kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
    "name=<unknown>, "
    "GPU has fallen off the bus.\n"
)
NCCL = (
    "gpu001:10:10 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n"
    "[2026-11-30 03:11:00] gpu001:10:12 [0] transport/net_ib.cc:2453 NCCL WARN NET/IB: Got completion from peer "
    "10.0.2.1<4000> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.1.1 "
    "remoteGids::ffff:10.0.2.1 hca mlx5_0\n"
)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_every_source_is_read_and_dated(tmp_path: Path, fabric: Fabric, samples: Path) -> None:
    write(tmp_path, "telemetry/kernel/anything.log", JOURNAL)
    write(tmp_path, "hosts/gpu001/cmd/dmesg.txt", "[   12.500000] NVRM: Xid (PCI:0000:29:00): 48, pid=1, name=x, DBE\n")
    write(tmp_path, "telemetry/nccl/job-7.log", NCCL)
    sr4 = (samples / "host/ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt").read_text()
    write(tmp_path, "hosts/gpu001/cmd/ethtool-m/eth1.txt", sr4)
    events = read_events(as_source_path(tmp_path), fabric, 2026)
    assert events.problems == [] and events.files == 2  # the two telemetry logs; host files are the snapshot
    by_host = {(r.host, r.event.xid, r.time) for r in events.xids}
    # the journal's FQDN is the bundle's host
    assert by_host == {("gpu002", 79, wall_time("2026-11-30T03:10:00Z")), ("gpu001", 48, None)}
    [error] = events.nccl
    assert error.time == wall_time("2026-11-30T03:11:00Z") and error.where == "telemetry/nccl/job-7.log:2"
    [m] = events.modules
    assert (m.host, m.netdev, m.module.part_number) == ("gpu001", "eth1", "MMA1B00-C100D")


def test_bad_files_are_one_located_problem_each(tmp_path: Path, fabric: Fabric) -> None:
    write(tmp_path, "telemetry/nccl/bad.log", "h:1:2 [0] x.cc:1 NCCL WARN NET/IB: Got completion from peer garbage\n")
    write(tmp_path, "telemetry/kernel/nohost.log", "[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, x\n")
    write(tmp_path, "hosts/gpu001/cmd/ethtool-m/eth0.txt", "not a module\n")
    write(tmp_path, "telemetry/kernel/ok.txt", "ignored: not a .log\n")
    events = read_events(as_source_path(tmp_path), fabric)
    assert events.xids == [] and events.nccl == [] and events.modules == []
    assert len(events.problems) == 3
    assert any(p.startswith("telemetry/nccl/bad.log:1: expected") for p in events.problems)
    assert any("telemetry/kernel/nohost.log:1" in p and "host" in p for p in events.problems)
    assert any("ethtool-m/eth0.txt" in p for p in events.problems)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T03:00:00Z", "2026-11-30T03:00:00+00:00"),
        ("2026-11-30T03:00:00.123456789Z", "2026-11-30T03:00:00.123456+00:00"),
        ("2026-11-30T04:00:00+0100", "2026-11-30T03:00:00+00:00"),
        ("2026-11-30 03:00:00", "2026-11-30T03:00:00+00:00"),
        ("2025-02-23T16:24:18,123456+00:00", "2025-02-23T16:24:18.123456+00:00"),
        ("Sun Feb 23 16:24:18 2025", "2025-02-23T16:24:18+00:00"),
        ("Feb 23 16:24:18", "2026-02-23T16:24:18+00:00"),
    ],
)
def test_wall_time_reads_the_log_time_formats(text: str, expected: str) -> None:
    from datetime import datetime

    assert wall_time(text, 2026) == datetime.fromisoformat(expected).timestamp()


def test_wall_time_without_a_usable_time_is_none() -> None:
    assert wall_time(None) is None and wall_time("Feb23 16:24") is None and wall_time("Feb 23 16:24:18") is None


def test_each_rounds_module_reading_is_dated_by_its_round(tmp_path: Path, fabric: Fabric, samples: Path) -> None:
    """``telemetry/rounds/<t>/hosts/<host>/cmd/ethtool-m/<netdev>.txt``: one reading per round, at ``t``; a host or
    NIC the bundle does not have is not read, and a file that does not parse is a problem naming its round."""
    sr4 = (samples / "host/ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt").read_text()
    write(tmp_path, "hosts/gpu001/cmd/ethtool-m/eth0.txt", sr4)
    for when in ("1764547200", "1764547260.5"):
        write(tmp_path, f"telemetry/rounds/{when}/hosts/gpu001/cmd/ethtool-m/eth0.txt", sr4)
    write(tmp_path, "telemetry/rounds/1764547260.5/hosts/gpu001/cmd/ethtool-m/eth7.txt", sr4)  # no such NIC
    write(tmp_path, "telemetry/rounds/1764547260.5/hosts/gpu404/cmd/ethtool-m/eth0.txt", sr4)  # no such host
    write(tmp_path, "telemetry/rounds/1764547320/hosts/gpu001/cmd/ethtool-m/eth1.txt", "not a module\n")
    events = read_events(as_source_path(tmp_path), fabric)
    assert [(m.netdev, m.time) for m in events.modules] == [
        ("eth0", None),  # the bundle's own reading first, then the rounds in time order
        ("eth0", 1764547200.0),
        ("eth0", 1764547260.5),
    ]
    [problem] = events.problems
    assert problem.startswith("telemetry/rounds/1764547320/hosts/gpu001/cmd/ethtool-m/eth1.txt")
    assert events.files == 3


def test_an_optic_that_went_dark_between_rounds_is_one_incident_from_that_round(
    tmp_path: Path, fabric: Fabric, samples: Path
) -> None:
    """Through the engine: the rounds' readings date the optic's incident (from the first dark round), and the
    replay raises it at that round, not at the end of the telemetry."""
    from unifab.health.engine import read_bundle_series, run_health
    from unifab.health.replay import replay

    clean = (samples / "host/ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt").read_text()
    rx2 = "Rcvr signal avg optical power(Channel 2)  : 0.9798 mW / -0.09 dBm"
    dark = clean.replace(rx2, rx2.replace("0.9798 mW / -0.09", "0.0300 mW / -15.23"))
    for n, text in enumerate((clean, clean, dark, dark, dark)):
        when = 1764547200 + 60 * n
        write(tmp_path, f"telemetry/rounds/{when}/hosts/gpu001/cmd/ethtool-m/eth0.txt", text)
        write(tmp_path, f"telemetry/rounds/{when}/hosts/gpu001/sys/class/net/eth0/carrier_changes", "2\n")
    root = as_source_path(tmp_path)
    store, events = read_bundle_series(root, fabric), read_events(root, fabric)
    [incident] = run_health(fabric, store, (), None, events).incidents
    assert (incident.root, incident.start) == ("optic:gpu001:eth0", 1764547200 + 120)
    assert "beyond its levels in the last 3 of 5 readings" in incident.symptoms[0].notes
    timeline = replay(fabric, store, events)
    assert timeline.first_seen["optic:gpu001:eth0"] == 1764547200 + 120
