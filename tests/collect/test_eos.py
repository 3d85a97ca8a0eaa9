"""Arista EOS → model: the real EOS samples read through a bundle, with hand-checked values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bundle_paths import within

from unifab.collect.bundle import load_bundle
from unifab.collect.eos import eos_lldp_links, switch_from_eos, switch_from_eos_config
from unifab.collect.problems import Problems
from unifab.model import Endpoint, PfcWatchdog, Switch
from unifab.parse.switch import eos_config

IDENTITY = {i: i for i in range(8)}


def _eos_dir(root: Path, switch: str) -> Path:
    path = root / "switches" / switch / "eos"
    path.mkdir(parents=True)
    return path


def _config(text: str) -> Switch:
    return switch_from_eos_config("sw", "switches/sw/eos/running-config.txt", eos_config.parse(text, "cfg"))


def test_rocm_roce_profile(samples: Path, tmp_path: Path) -> None:
    """AMD's Arista 7388 RoCE config: a qos profile with trust DSCP, PFC on 3 and ECN in segments."""
    eos = _eos_dir(tmp_path, "arista7388")
    shutil.copy(samples / "switch/eos/eos_rocm_doc_arista7388_roce_dcqcn.cfg", eos / "running-config.txt")
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    sw = fabric.switches["arista7388"]
    assert (sw.os, sw.config_file) == ("eos", "switches/arista7388/eos/running-config.txt")
    assert (sw.platform, sw.version, sw.hwsku) == (None, None, None)
    assert sorted(sw.ports) == ["Ethernet2/5/1", "Ethernet2/5/5"]
    port = sw.ports["Ethernet2/5/1"]
    assert (port.mtu, port.speed_mbps, port.admin_status, port.fec, port.description) == (
        9214,
        200_000,
        "up",
        None,
        None,
    )
    q = port.qos
    assert q is not None
    assert (q.trust, q.dscp_map_name) == ("dscp", "global")
    # no `qos map dscp` in the file: EOS's default DSCP/8 map with 0-7 and 8-15 swapped
    assert (q.dscp_to_tc[26], q.dscp_to_tc[48], q.dscp_to_tc[0], q.dscp_to_tc[8]) == (3, 6, 1, 0)
    assert q.tc_to_queue == IDENTITY and q.tc_to_pg == IDENTITY
    assert q.pfc_enabled == {3}
    assert q.pfcwd is None and q.pfcwd_priorities == frozenset()
    assert q.cable_len_m is None and q.headroom == {}
    assert sorted(q.queues) == list(range(8))
    roce = q.queues[3]
    # uc-tx-queue 3: ECN 2000..10000 segments, probability 20; a segment has no settled byte size
    assert roce.ecn_enabled and roce.wred_profile == "QOS_ROCE_DCQCN"
    assert (roce.ecn_min_bytes, roce.ecn_max_bytes, roce.ecn_max_probability) == (None, None, 20)
    assert roce.scheduler_type == "STRICT"  # no `no priority`: EOS's default strict priority
    assert not q.queues[0].ecn_enabled and q.queues[0].scheduler_type == "STRICT"
    assert sw.ports["Ethernet2/5/5"].qos == q


def test_avd_intended_qos(samples: Path) -> None:
    """AVD's golden QoS config: global maps, `all off`, profiles with kbytes/segments thresholds, trust cos."""
    sw = _config((samples / "switch/eos/eos_avd_intended_qos.cfg").read_text())
    assert sorted(sw.ports) == ["Ethernet1", "Ethernet3", "Ethernet4", "Ethernet6", "Ethernet7", "Port-Channel3"]
    e1 = sw.ports["Ethernet1"]
    assert (e1.mtu, e1.speed_mbps, e1.description) == (1500, None, "P2P_LINK_TO_DC1-SPINE1_Ethernet1")
    q = e1.qos
    assert q is not None and q.trust == "dscp"
    # `qos map dscp 18 20 22 26 ... to traffic-class 4 drop-precedence 2`, `46 to 5`, 8 in the TC1 list;
    # 48 is in no list, so EOS's default (48 / 8 = 6) holds
    assert (q.dscp_to_tc[26], q.dscp_to_tc[46], q.dscp_to_tc[8], q.dscp_to_tc[48]) == (4, 5, 1, 6)
    assert q.tc_to_queue == IDENTITY | {6: 2}  # `qos map traffic-class 6 to tx-queue 2`
    assert q.pfc_enabled == frozenset()  # `priority-flow-control all off`
    # profile `test`: tx-queue 1 `no priority` / 50 %, tx-queue 2 strict with ECN in kbytes, tx-queue 4 ECN in segments
    assert (q.queues[1].scheduler_type, q.queues[1].weight, q.queues[1].ecn_enabled) == ("DWRR", 50, False)
    q2 = q.queues[2]
    assert (q2.scheduler_type, q2.ecn_enabled, q2.wred_profile, q2.ecn_max_probability) == ("STRICT", True, "test", 90)
    assert (q2.ecn_min_bytes, q2.ecn_max_bytes) == (None, None)  # 320 kbytes: 1000- or 1024-based is unsettled
    assert q.queues[4].ecn_enabled and q.queues[4].ecn_min_bytes is None
    # Ethernet6: trust cos → PCP, so the DSCP map does not apply; profile `experiment` tx-queue 3 round robin 30 %
    e6 = sw.ports["Ethernet6"].qos
    assert e6 is not None
    assert (e6.trust, e6.dscp_map_name, e6.dscp_to_tc) == ("pcp", None, {})
    assert (e6.queues[3].scheduler_type, e6.queues[3].weight) == ("DWRR", 30)
    assert not e6.queues[2].ecn_enabled  # `random-detect ecn count` alone does not turn ECN on
    # Ethernet3: a port-channel member, a switchport by default: trust CoS, switched MTU 9214
    e3 = sw.ports["Ethernet3"]
    assert e3.qos is not None and (e3.qos.trust, e3.mtu) == ("pcp", 9214)
    assert "Management1" not in sw.ports


WATCHDOG_CONFIG = """\
qos profile test_with_pfc
   priority-flow-control on
   priority-flow-control priority 0 no-drop
   priority-flow-control priority 1 drop
   priority-flow-control pause watchdog
   priority-flow-control pause watchdog port action drop
   priority-flow-control pause watchdog port timer timeout 0.05 polling-interval auto recovery-time 1.11 forced
!
interface Ethernet9
   service-profile test_with_pfc
!
interface Ethernet10
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control pause watchdog
!
interface Ethernet11
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   tx-queue 3
      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes max-mark-probability 100
!
interface Ethernet12
   shutdown
   no switchport
   qos trust disabled
   speed forced 100gfull
!
priority-flow-control pause watchdog default timeout 0.2
priority-flow-control pause watchdog default recovery-time 1.22
priority-flow-control pause watchdog action no-drop
"""


def test_pfc_watchdog_ecn_bytes_and_trust_disabled() -> None:
    """Watchdog seconds → ms and actions; ECN thresholds in `bytes` reach the model (the AVD profile lines)."""
    sw = _config(WATCHDOG_CONFIG)
    e9, e10, e11, e12 = (sw.ports[f"Ethernet{i}"].qos for i in (9, 10, 11, 12))
    assert e9 is not None and e10 is not None and e11 is not None and e12 is not None
    # the profile's port timer: timeout 0.05 s, recovery 1.11 s, action drop
    assert e9.pfc_enabled == {0}
    assert e9.pfcwd == PfcWatchdog("drop", 50, 1110) and e9.pfcwd_priorities == {0}
    # global defaults: timeout 0.2 s, recovery 1.22 s, action no-drop (keep forwarding)
    assert e10.pfcwd == PfcWatchdog("forward", 200, 1220) and e10.pfcwd_priorities == {3}
    # watchdog not enabled on the port
    assert e11.pfcwd is None and e11.pfcwd_priorities == frozenset()
    q3 = e11.queues[3]
    assert (q3.ecn_min_bytes, q3.ecn_max_bytes, q3.ecn_max_probability) == (150_000, 1_500_000, 100)
    assert q3.wred_profile is None  # set on the interface, not shared through a profile
    assert (e12.trust, e12.dscp_to_tc) == (None, {})
    port12 = sw.ports["Ethernet12"]
    assert (port12.admin_status, port12.speed_mbps, port12.mtu) == ("down", 100_000, 1500)


LEAF01_CONFIG = """\
hostname leaf01
!
interface Ethernet1
   no switchport
!
interface Ethernet2
   description to spine02
   mtu 9000
   no switchport
!
interface Ethernet3
   no switchport
!
"""


def _show_version(samples: Path, host: str) -> object:
    """The `show version` reply SuzieQ captured from ``host`` (its gather holds the eAPI JSON as is)."""
    text = (samples / "switch/eos/suzieq_gather_eos/device.output").read_text()
    decoder, i = json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        records, i = decoder.raw_decode(text, i)
        for r in records:
            if r["hostname"] == host and r["devtype"] == "eos" and r["cmd"] == "show version":
                return r["data"]
    raise AssertionError(f"no show version for {host}")


def test_show_outputs_fill_what_the_config_leaves_out(samples: Path, tmp_path: Path) -> None:
    """vEOS leaf01 (SuzieQ lab): oper MTU where the config has none, version and model, LLDP links."""
    eos = _eos_dir(tmp_path, "leaf01")
    (eos / "running-config.txt").write_text(LEAF01_CONFIG)
    src = samples / "switch/eos"
    shutil.copy(src / "eos-4.23.5M_leaf01_show_interfaces.json", eos / "show-interfaces.json")
    shutil.copy(src / "eos-4.23.5M_leaf01_show_lldp_neighbors_detail.json", eos / "show-lldp-neighbors-detail.json")
    (eos / "show-version.json").write_text(json.dumps(_show_version(samples, "leaf01")))
    problems = Problems(within(tmp_path))
    sw = switch_from_eos("leaf01", within(tmp_path, eos), problems)
    assert problems.findings == [] and sw is not None
    assert (sw.platform, sw.version) == ("vEOS", "4.23.5M")
    e1, e2, e3 = sw.ports["Ethernet1"], sw.ports["Ethernet2"], sw.ports["Ethernet3"]
    assert e1.mtu == 1500 and e3.mtu == 9214  # oper MTU (a port-channel member) over the routed default 1500
    assert (e2.mtu, e2.description) == (9000, "to spine02")  # the config wins where it speaks
    assert e1.description is None and e1.speed_mbps is None  # oper "" and bandwidth 0 (vEOS) are unknown
    links = eos_lldp_links("leaf01", within(tmp_path, eos), problems)
    assert {(str(lk.a), str(lk.b)) for lk in links} == {
        ("leaf01:Ethernet1", "spine01:Ethernet1"),
        ("leaf01:Ethernet2", "spine02:Ethernet1"),
        ("leaf01:Ethernet5", "leaf02:Ethernet5"),
        ("leaf01:Ethernet6", "leaf02:Ethernet6"),
    }
    assert all(lk.sources == {"lldp"} for lk in links)
    # through the bundle reader the LLDP links join the fabric's links
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    assert {lk.id for lk in fabric.links} == {lk.id for lk in links}


def test_lldp_remote_port_from_mac_peer_and_domain(samples: Path, tmp_path: Path) -> None:
    """A host sending its MAC as port id is named by its port description; the system name loses its domain."""
    eos = _eos_dir(tmp_path, "sw1")
    text = (samples / "switch/eos/eos_show_lldp_neighbors_detail.json").read_text()
    (eos / "show-lldp-neighbors-detail.json").write_text(text.replace('"some-switch"', '"some-switch.example.net"'))
    links = eos_lldp_links("sw1", within(tmp_path, eos), Problems(within(tmp_path)))
    assert sorted((lk.a, lk.b) for lk in links) == [
        (Endpoint("sw1", "Ethernet1/1"), Endpoint("some-server", "eth0")),
        (Endpoint("sw1", "Ethernet26/1"), Endpoint("some-other-switch", "et-0/0/20")),
        (Endpoint("sw1", "Ethernet27/1"), Endpoint("some-switch", "et-0/0/20")),
    ]


def test_unreadable_and_missing_inputs(tmp_path: Path) -> None:
    bad = _eos_dir(tmp_path, "bad")
    (bad / "running-config.txt").write_text("interface Ethernet1\n   mtu lots\n")
    (bad / "show-lldp-neighbors-detail.json").write_text("{not json")
    (_eos_dir(tmp_path, "empty") / "show-version.json").write_text("{}")
    fabric = load_bundle(tmp_path)
    by_path = {f.subject["path"]: f for f in fabric.input_findings}
    assert set(by_path) == {
        "switches/bad/eos/running-config.txt",
        "switches/bad/eos/show-lldp-neighbors-detail.json",
        "switches/empty/eos/running-config.txt",
    }
    assert by_path["switches/bad/eos/running-config.txt"].check == "INPUT-UNREADABLE"
    assert by_path["switches/bad/eos/running-config.txt"].evidence["line"] == 2
    assert by_path["switches/empty/eos/running-config.txt"].check == "INPUT-MISSING"
    assert fabric.switches == {} and fabric.links == []


@pytest.mark.parametrize("missing", ["show-interfaces.json", "show-version.json"])
def test_show_outputs_are_optional(tmp_path: Path, missing: str) -> None:
    eos = _eos_dir(tmp_path, "sw")
    (eos / "running-config.txt").write_text("interface Ethernet1\n   mtu 9214\n")
    other = {"show-interfaces.json": '{"interfaces": {}}', "show-version.json": '{"modelName": "DCS-7280"}'}
    for name, body in other.items():
        if name != missing:
            (eos / name).write_text(body)
    problems = Problems(within(tmp_path))
    sw = switch_from_eos("sw", within(tmp_path, eos), problems)
    assert problems.findings == [] and sw is not None
    assert sw.ports["Ethernet1"].mtu == 9214
