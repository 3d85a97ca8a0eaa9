"""NVIDIA Cumulus NVUE → model: the reconstructed ``nv config show -o yaml`` documents and a real lldpd capture.

No real ``nv config show -o yaml`` exists in the sample corpus; the two YAML files next to the NVUE
parser's golden tests are written from NVIDIA's documentation examples (see their headers), and the
values below are checked by hand against those commands and NVUE's documented defaults.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bundle_paths import within

from unifab.collect.bundle import load_bundle
from unifab.collect.nvue import nvue_lldp_links, switch_from_nvue
from unifab.collect.problems import Problems
from unifab.model import Endpoint, PfcWatchdog, Switch

GOLDEN = Path(__file__).resolve().parents[1] / "parse" / "switch" / "golden"


def _switch(tmp_path: Path, name: str, yaml_file: str) -> tuple[Switch, Problems]:
    nvue_dir = tmp_path / "switches" / name / "nvue"
    nvue_dir.mkdir(parents=True)
    shutil.copy(GOLDEN / yaml_file, nvue_dir / "config.yaml")
    problems = Problems(within(tmp_path))
    sw = switch_from_nvue(name, within(tmp_path, nvue_dir), problems)
    assert sw is not None
    return sw, problems


def test_roce_leaf(tmp_path: Path) -> None:
    """`nv set qos roce mode lossless-single-ipool` with an uplink ECN profile and a 200 ms x 5 watchdog."""
    sw, problems = _switch(tmp_path, "leaf01", "nvue_roce_leaf_reconstructed.yaml")
    assert problems.findings == []
    assert (sw.os, sw.config_file, sw.version) == ("nvue", "switches/leaf01/nvue/config.yaml", "Cumulus Linux 5.16.0")
    assert sorted(sw.ports, key=lambda n: int(n[3:])) == [f"swp{i}" for i in range(1, 65)]  # not eth0, lo
    down, up = sw.ports["swp1"], sw.ports["swp33"]
    assert (down.mtu, down.speed_mbps, up.speed_mbps) == (9216, 400_000, 800_000)
    assert (down.fec, down.admin_status, down.description) == (None, None, None)
    q = down.qos
    assert q is not None
    # RoCE defaults: trust pcp,dscp (RoCEv2 is classified by DSCP), DSCP -> SP dscp >> 3
    assert (q.trust, q.dscp_map_name) == ("dscp", "default-global")
    assert (q.dscp_to_tc[26], q.dscp_to_tc[48], q.dscp_to_tc[22]) == (3, 6, 2)
    # SP3 -> TC3, SP6 -> TC6, every other switch priority -> TC0
    assert q.tc_to_queue == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert q.tc_to_pg == {i: i for i in range(8)}
    assert q.pfc_enabled == {3} and q.cable_len_m == 100  # lossless: PFC rx+tx on SP3, cable-length 100
    assert q.pfcwd == PfcWatchdog(None, 1000, None) and q.pfcwd_priorities == {3}  # 200 ms x robustness 5
    assert q.headroom == {}
    assert sorted(q.queues) == list(range(8))
    for tc in (0, 3):  # ECN on TC0 and TC3: 150000 / 1500000 B, probability 100; ETS DWRR 50 %
        queue = q.queues[tc]
        assert (queue.ecn_enabled, queue.ecn_min_bytes, queue.ecn_max_bytes, queue.ecn_max_probability) == (
            True,
            150_000,
            1_500_000,
            100,
        )
        assert (queue.scheduler_type, queue.weight, queue.wred_profile) == ("DWRR", 50, "default-global")
    assert (q.queues[6].scheduler_type, q.queues[6].ecn_enabled) == ("STRICT", False)  # CNP
    assert q.queues[1].scheduler_type is None and not q.queues[1].ecn_enabled
    # swp33-64 name the uplink-ecn profile: TC3 only (the profile replaces the default set), 300000 / 3000000 B
    uq = up.qos
    assert uq is not None
    assert not uq.queues[0].ecn_enabled
    assert (uq.queues[3].wred_profile, uq.queues[3].ecn_min_bytes, uq.queues[3].ecn_max_bytes) == (
        "uplink-ecn",
        300_000,
        3_000_000,
    )


def test_qos_doc_examples(tmp_path: Path) -> None:
    """The CL 5.16 QoS page's commands without RoCE: trust l3, custom PFC profile, one-way PFC, two schedulers."""
    sw, problems = _switch(tmp_path, "sw", "nvue_qos_doc_examples_reconstructed.yaml")
    assert problems.findings == []
    assert sorted(sw.ports) == [f"swp{i}" for i in range(1, 8)]
    swp1, swp5, swp6, swp7 = (sw.ports[f"swp{i}"] for i in (1, 5, 6, 7))
    assert (swp1.mtu, swp5.mtu, swp1.speed_mbps) == (9216, 9000, None)  # speed not configured (auto)
    q1 = swp1.qos
    assert q1 is not None
    assert q1.trust == "dscp"
    assert (q1.dscp_to_tc[22], q1.dscp_to_tc[26], q1.dscp_to_tc[48]) == (4, 3, 6)  # `dscp 22 switch-priority 4`
    assert q1.tc_to_queue == {0: 0, 1: 1, 2: 7, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}  # `switch-priority 2 traffic-class 7`
    # my_pfc_ports on swp1-4,6: SP 3,5, rx/tx on by default, cable-length 10 m by default
    assert (q1.pfc_enabled, q1.cable_len_m) == (frozenset({3, 5}), 10)
    assert q1.pfcwd == PfcWatchdog(None, 1000, None) and q1.pfcwd_priorities == {3, 5}
    assert swp6.qos is not None and swp6.qos.pfcwd is None and swp6.qos.pfcwd_priorities == frozenset()
    # swp5, swp7 keep default-global PFC: SP0 with tx only (rx disable) is not lossless -> no PFC; cable 50
    assert swp5.qos is not None and (swp5.qos.pfc_enabled, swp5.qos.cable_len_m) == (frozenset(), 50)
    # congestion-control default-global TC 4,5,7 at 40000 / 200000 B replaces the default TC0
    assert [tc for tc, queue in q1.queues.items() if queue.ecn_enabled] == [4, 5, 7]
    assert (q1.queues[4].ecn_min_bytes, q1.queues[4].ecn_max_bytes) == (40_000, 200_000)
    # egress-scheduler default-global: 0,1,5,7 strict; 2,6 DWRR 30 %; 3,4 DWRR 20 %
    types = {tc: (queue.scheduler_type, queue.weight) for tc, queue in q1.queues.items()}
    assert types == {
        0: ("STRICT", None),
        1: ("STRICT", None),
        2: ("DWRR", 30),
        3: ("DWRR", 20),
        4: ("DWRR", 20),
        5: ("STRICT", None),
        6: ("DWRR", 30),
        7: ("STRICT", None),
    }
    # swp7's list2: 2,5 DWRR 50 %, 6 strict, the rest unscheduled by the profile
    q7 = swp7.qos
    assert q7 is not None
    assert {tc: queue.scheduler_type for tc, queue in q7.queues.items()} == {
        0: None,
        1: None,
        2: "DWRR",
        3: None,
        4: None,
        5: "DWRR",
        6: "STRICT",
        7: None,
    }
    assert q7.queues[6].scheduler == "list2"


def test_bundle_with_lldpd_neighbors(samples: Path, tmp_path: Path) -> None:
    """`nvue/config.yaml` plus lldpd's view (`lldpcli -f json`, port-id subtype mac from the hosts)."""
    nvue_dir = tmp_path / "switches" / "leaf01" / "nvue"
    nvue_dir.mkdir(parents=True)
    shutil.copy(GOLDEN / "nvue_roce_leaf_reconstructed.yaml", nvue_dir / "config.yaml")
    shutil.copy(samples / "host/lldpcli_neighbors_details_switch.json", nvue_dir / "lldpcli.json")
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    assert fabric.switches["leaf01"].os == "nvue"
    links = nvue_lldp_links("leaf01", within(tmp_path, nvue_dir), Problems(within(tmp_path)))
    # the hosts send their MAC as port id: the remote port is the port description (the netdev)
    assert sorted((lk.a, lk.b) for lk in links) == [
        (Endpoint("leaf01", "swp1"), Endpoint("gpu-node-001", "ens1np0")),
        (Endpoint("leaf01", "swp2"), Endpoint("gpu-node-001", "ens2np0")),
    ]
    assert {lk.id for lk in fabric.links} == {lk.id for lk in links}


def test_unreadable_and_missing_config(tmp_path: Path) -> None:
    bad = tmp_path / "switches" / "bad" / "nvue"
    bad.mkdir(parents=True)
    (bad / "config.yaml").write_text("- set:\n    interface:\n      swp1:\n        link:\n          mtu: big\n")
    (tmp_path / "switches" / "empty" / "nvue").mkdir(parents=True)
    fabric = load_bundle(tmp_path)
    by_path = {f.subject["path"]: f.check for f in fabric.input_findings}
    assert by_path == {
        "switches/bad/nvue/config.yaml": "INPUT-UNREADABLE",
        "switches/empty/nvue/config.yaml": "INPUT-MISSING",
    }
    assert fabric.switches == {}
