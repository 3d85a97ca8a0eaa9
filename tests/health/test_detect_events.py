"""Event detectors on real samples: DOM against the module's own levels, Xids per GPU, NCCL errors to a link."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from unifab.health.detect import GPU_XID, NCCL_ERROR, OPTICS, Thresholds
from unifab.health.detect_events import gpu_xid, nccl_errors, optics
from unifab.health.events import ModuleRecord, NcclRecord, XidRecord, wall_time
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric, Gid, Gpu, Host, Link, Nic, Port
from unifab.parse.host import ethtool_module, nccl_debug, xid

SR4 = "host/ethtool_m_qsfp28_100g_sr4_mellanox_cumulus.txt"
DAC = "host/ethtool_m_qsfp_dac_mcp1600_mellanox.txt"
XID119 = "host/dmesg_xid119_gsp_rpc_timeout_xe9680_h100.log"
RX2 = "Rcvr signal avg optical power(Channel 2)  : 0.9798 mW / -0.09 dBm"


def module(text: str, netdev: str = "eth0") -> ModuleRecord:
    return ModuleRecord("gpu001", netdev, ethtool_module.parse(text, "m.txt"), "m.txt")


def test_a_healthy_module_and_a_dac_without_dom_are_quiet(samples: Path) -> None:
    records = [module((samples / SR4).read_text()), module((samples / DAC).read_text(), "eth1")]
    assert optics(records, Thresholds(), 5000.0) == []


def test_rx_power_under_the_modules_own_low_alarm_is_an_alarm(samples: Path) -> None:
    text = (samples / SR4).read_text().replace(RX2, RX2.replace("0.9798 mW / -0.09", "0.0300 mW / -15.23"))
    [symptom] = optics([module(text)], Thresholds(), 5000.0)
    assert (symptom.detector, symptom.entity, symptom.counter) == (OPTICS, "optic:gpu001:eth0", "dom alarm")
    assert symptom.start == 5000.0 and symptom.peak == 2
    assert symptom.notes == ("lane 2 rx power 0.03 mW below the module's low alarm level 0.0467 mW",)


def test_a_warning_level_is_a_warning_symptom_unless_warnings_are_off(samples: Path) -> None:
    text = (samples / SR4).read_text().replace(RX2, RX2.replace("0.9798 mW / -0.09", "0.0800 mW / -10.97"))
    [symptom] = optics([module(text)], Thresholds(), 5000.0)
    assert symptom.counter == "dom warning" and "low warning level 0.0933" in symptom.notes[0]
    assert optics([module(text)], Thresholds(optics_warnings=False), 5000.0) == []


def test_an_alarm_flag_the_module_raised_counts_even_inside_the_levels(samples: Path) -> None:
    flag = "Laser rx power low alarm    (Channel 1)   : Off"
    text = (samples / SR4).read_text().replace(flag, flag.replace("Off", "On"))
    [symptom] = optics([module(text)], Thresholds(), 0.0)
    assert symptom.notes == ("lane 1 rx power low alarm flag on",)


def test_temperature_above_the_warning_level(samples: Path) -> None:
    m = ethtool_module.parse((samples / SR4).read_text())
    hot = ModuleRecord("gpu001", "eth0", dataclasses.replace(m, temperature_c=74.5), "m")
    [symptom] = optics([hot], Thresholds(), 0.0)
    assert "temperature 74.5 C above the module's high warning level 70 C" in symptom.notes


def xids(text: str, host: str = "gpu001") -> list[XidRecord]:
    log = xid.parse(text, "dmesg")
    return [
        XidRecord(host, e, wall_time(e.timestamp if isinstance(e.timestamp, str) else None), "dmesg")
        for e in log.events
    ]


def test_the_real_xid_119_log_is_one_symptom_on_the_gpu_with_the_vendors_action(samples: Path, fabric: Fabric) -> None:
    fabric.hosts["gpu001"].gpus[4] = Gpu("gpu001", 4, pci_bus_id="00000000:9B:00.0")
    [symptom] = gpu_xid(xids((samples / XID119).read_text()), fabric, 0.0)
    assert (symptom.detector, symptom.entity, symptom.counter) == (GPU_XID, "gpu:gpu001:4", "xid 119")
    assert symptom.total == 5 and symptom.start == wall_time("Sun Feb 23 16:24:18 2025")
    assert "GSP_RPC_TIMEOUT" in symptom.notes[0] and "reset the GPU" in symptom.notes[0]


@pytest.mark.parametrize(("code", "mnemonic"), [(79, "FALLEN_OFF_THE_BUS"), (48, "ECC_DBE"), (94, "CONTAINED")])
def test_hardware_xids_fire_once(fabric: Fabric, code: int, mnemonic: str) -> None:
    [symptom] = gpu_xid(xids(f"[  12.5] NVRM: Xid (PCI:0000:18:00): {code}, pid=1, name=x, msg\n"), fabric, 77.0)
    assert symptom.entity == "gpu:gpu001:0000:18:00.0" and mnemonic in symptom.notes[0]
    assert symptom.start == 77.0 and any("no wall-clock" in n for n in symptom.notes)
    assert any("not a GPU nvidia-smi listed" in n for n in symptom.notes)


def test_application_xids_and_a_row_remap_event_are_not_incidents(fabric: Fabric) -> None:
    log = "".join(f"NVRM: Xid (PCI:0000:18:00): {c}, pid=1, name=python, app\n" for c in (13, 31, 43, 45, 63))
    assert gpu_xid(xids(log), fabric, 0.0) == []


def gid_fabric(fabric: Fabric) -> Fabric:
    """Give every NIC of the fixture an IPv4-mapped RoCE v2 GID: 10.0.<host>.<rail>."""
    for h, host in enumerate(sorted(fabric.hosts), start=1):
        for r, nic in sorted(fabric.hosts[host].nics.items()):
            ip = f"10.0.{h}.{int(r[-1]) + 1}"
            octets = [int(x) for x in ip.split(".")]
            gid = f"0000:0000:0000:0000:0000:ffff:{octets[0] << 8 | octets[1]:04x}:{octets[2] << 8 | octets[3]:04x}"
            fabric.hosts[host].nics[r] = dataclasses.replace(nic, gids=(Gid(3, gid, "v2", ip, nic.netdev),))
    return fabric


def warn(host: str, local: str, remote: str, when: str = "2026-11-30 03:00:00") -> str:
    return (
        f"[{when}] {host}:10:11 [0] transport/net_ib.cc:2453 NCCL WARN NET/IB: Got completion from peer "
        f"{remote}<4000> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:{local} "
        f"remoteGids::ffff:{remote} hca mlx5_0"
    )


def nccl(lines: list[str]) -> list[NcclRecord]:
    log = nccl_debug.parse("\n".join(lines) + "\n", "nccl.log")
    return [NcclRecord(e, wall_time(e.timestamp), f"nccl.log:{e.line}") for e in log.errors]


def fabric_with_third_host(fabric: Fabric) -> Fabric:
    """A third host on rail 0 (leaf0 Ethernet64 is the uplink; the test only needs its NIC and link)."""
    fabric.hosts["gpu003"] = Host("gpu003", {"eth0": Nic("gpu003", "eth0", "mlx5_0", 9000, None)})
    fabric.switches["leaf0"].ports["Ethernet16"] = Port("leaf0", "Ethernet16", 9100, 400_000, "up", None)
    fabric.links.append(Link(Endpoint("gpu003", "eth0"), Endpoint("leaf0", "Ethernet16"), frozenset({"lldp"})))
    return gid_fabric(fabric)


def test_errors_from_both_sides_with_two_peers_blame_the_shared_link(fabric: Fabric) -> None:
    f = fabric_with_third_host(fabric)  # gpu001 eth0 = 10.0.1.1, gpu002 eth0 = 10.0.2.1, gpu003 eth0 = 10.0.3.1
    lines = [
        warn("gpu001", "10.0.1.1", "10.0.2.1", "2026-11-30 03:00:30"),
        warn("gpu002", "10.0.2.1", "10.0.1.1", "2026-11-30 03:00:00"),
        warn("gpu003", "10.0.3.1", "10.0.1.1"),
    ]
    [symptom] = nccl_errors(nccl(lines), f, Thresholds(), 0.0)
    assert (symptom.detector, symptom.entity) == (NCCL_ERROR, "link:gpu001:eth0--leaf0:Ethernet0")
    assert symptom.intervals == 2 and symptom.total == 3 and symptom.counter == "status=12"
    assert symptom.start == wall_time("2026-11-30 03:00:00")
    assert any("gpu001:eth0 -> leaf0:Ethernet0 -> leaf0:Ethernet8 -> gpu002:eth0" in n for n in symptom.notes)


def test_a_dead_peer_process_and_a_single_pair_do_not_blame_the_network(fabric: Fabric) -> None:
    f = fabric_with_third_host(fabric)
    dead = [warn("gpu002", "10.0.2.1", "10.0.1.1"), warn("gpu003", "10.0.3.1", "10.0.1.1")]  # gpu001 says nothing
    assert nccl_errors(nccl(dead), f, Thresholds(), 0.0) == []
    pair = [warn("gpu001", "10.0.1.1", "10.0.2.1"), warn("gpu002", "10.0.2.1", "10.0.1.1")]
    assert nccl_errors(nccl(pair), f, Thresholds(), 0.0) == []


def test_errors_whose_gids_the_bundle_does_not_know_are_not_placed(fabric: Fabric) -> None:
    lines = [warn("gpu001", "10.9.9.1", "10.9.9.2"), warn("gpu002", "10.9.9.2", "10.9.9.1")]
    assert nccl_errors(nccl(lines), gid_fabric(fabric), Thresholds(nccl_peers=1), 0.0) == []


def three_leaf_fabric() -> Fabric:
    """Four hosts x three rails (a leaf per rail), every NIC with a RoCE GID 10.0.<host>.<rail + 1>."""
    from tests.health.test_baselines import leaf_fabric

    return gid_fabric(leaf_fabric(hosts=4, leaves=3))


def test_pairs_across_leaves_sharing_only_one_leaf_blame_its_uplinks() -> None:
    f = three_leaf_fabric()
    lines = [  # three of leaf0's NICs (rail 0) fail towards NICs on leaf1 and leaf2, each pair once
        warn("gpu001", "10.0.1.1", "10.0.2.2", "2026-11-30 03:00:10"),
        warn("gpu003", "10.0.3.1", "10.0.4.3", "2026-11-30 03:00:20"),
        warn("gpu002", "10.0.2.1", "10.0.3.2", "2026-11-30 03:00:30"),
    ]
    [symptom] = nccl_errors(nccl(lines), f, Thresholds(), 0.0)
    assert (symptom.detector, symptom.entity, symptom.intervals) == (NCCL_ERROR, "switch:leaf0", 3)
    assert symptom.start == wall_time("2026-11-30 03:00:10")
    assert "share only leaf0 and its uplinks" in symptom.notes[0]
    [incident] = localize(f, [symptom])
    assert (incident.kind, incident.root) == ("switch", "switch:leaf0")
    assert any("which uplink" in n for n in incident.not_explained)


def test_pairs_across_leaves_need_several_near_nics_and_far_leaves() -> None:
    f = three_leaf_fabric()
    dead = [  # one NIC of leaf0 that every peer reports (a dead process): no ECMP blame
        warn("gpu002", "10.0.2.2", "10.0.1.1"),
        warn("gpu003", "10.0.3.3", "10.0.1.1"),
        warn("gpu004", "10.0.4.2", "10.0.1.1"),
    ]
    assert nccl_errors(nccl(dead), f, Thresholds(), 0.0) == []
    two_leaves = [  # every pair between leaf0 and leaf1: both leaves are common, nothing to tell them apart
        warn("gpu001", "10.0.1.1", "10.0.2.2"),
        warn("gpu003", "10.0.3.1", "10.0.4.2"),
        warn("gpu002", "10.0.2.1", "10.0.3.2"),
    ]
    assert nccl_errors(nccl(two_leaves), f, Thresholds(), 0.0) == []
    two_pairs = [warn("gpu001", "10.0.1.1", "10.0.2.2"), warn("gpu003", "10.0.3.1", "10.0.4.3")]
    assert nccl_errors(nccl(two_pairs), f, Thresholds(), 0.0) == []


def _timed(text: str, when: float | None) -> ModuleRecord:
    return dataclasses.replace(module(text), time=when)


def test_readings_over_rounds_date_the_alarm_and_count_its_run(samples: Path) -> None:
    """Rounds at 100 (clean), 200 and 300 (rx power under the low alarm), and the bundle's own reading (no time,
    judged at the series' end, 400) still under it: the alarm started at 200 and lasted 3 readings."""
    clean = (samples / SR4).read_text()
    dark = clean.replace(RX2, RX2.replace("0.9798 mW / -0.09", "0.0300 mW / -15.23"))
    records = [_timed(dark, None), _timed(dark, 300.0), _timed(clean, 100.0), _timed(dark, 200.0)]
    [symptom] = optics(records, Thresholds(), 400.0)
    assert (symptom.start, symptom.end, symptom.intervals, symptom.counter) == (200.0, 400.0, 3, "dom alarm")
    assert symptom.notes[-1] == "beyond its levels in the last 3 of 4 readings"


def test_an_alarm_that_cleared_in_a_later_round_is_quiet(samples: Path) -> None:
    clean = (samples / SR4).read_text()
    dark = clean.replace(RX2, RX2.replace("0.9798 mW / -0.09", "0.0300 mW / -15.23"))
    assert optics([_timed(dark, 100.0), _timed(clean, 200.0)], Thresholds(), 300.0) == []
    # a warning that became an alarm is one run: it started with the warning
    warn = clean.replace(RX2, RX2.replace("0.9798 mW / -0.09", "0.0800 mW / -10.97"))
    [symptom] = optics([_timed(warn, 100.0), _timed(dark, 200.0)], Thresholds(), 300.0)
    assert (symptom.start, symptom.counter, symptom.intervals) == (100.0, "dom alarm", 2)
    # with warnings off, only the alarm counts
    [symptom] = optics([_timed(warn, 100.0), _timed(dark, 200.0)], Thresholds(optics_warnings=False), 300.0)
    assert (symptom.start, symptom.intervals) == (200.0, 1)
