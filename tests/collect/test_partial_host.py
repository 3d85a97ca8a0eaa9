"""A host file read in part: one bad row of a twin host's captures is an INPUT-PARTIAL naming the file and line,
and the rest of the host (that file's other rows included) reads as before. ``ip -d link`` gives each NIC its
operstate and carrier, which the topology's dark-port rule uses where the RDMA port state does not say."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.checks.topology_common import dark_reason, host_port_dark
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, Host, Severity

HOST = "gpu001"


@pytest.fixture(scope="module")
def whole(small: Path) -> Host:
    fabric = load_bundle(small)
    assert fabric.input_findings == []
    return fabric.hosts[HOST]


def _set_line(bundle: Path, rel: str, pick: Callable[[str], bool], edit: Callable[[str], str]) -> int:
    path = bundle / "hosts" / HOST / rel
    lines = path.read_text().split("\n")
    number = next(i for i, line in enumerate(lines) if pick(line))
    lines[number] = edit(lines[number])
    path.write_text("\n".join(lines))
    return number + 1


def _partial(fabric: Fabric, rel: str, line: int) -> None:
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.severity is Severity.WARNING
    assert finding.subject["path"] == f"hosts/{HOST}/{rel}" and finding.subject["device"] == HOST
    assert finding.evidence["line"] == line and f"{rel}:{line}: expected" in finding.message


def test_bad_ethtool_counter_costs_that_counter(bundle: Path, whole: Host) -> None:
    rel = "cmd/ethtool-S/eth2.txt"
    line = _set_line(bundle, rel, lambda s: "rx_prio3_pause:" in s, lambda s: "     rx_prio3_pause: many")
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)
    host = fabric.hosts[HOST]
    before = whole.nics["eth2"].counters
    assert host.nics["eth2"].counters == {k: v for k, v in before.items() if k != "ethtool:rx_prio3_pause"}
    assert {n: nic for n, nic in host.nics.items() if n != "eth2"} == {
        n: nic for n, nic in whole.nics.items() if n != "eth2"
    }


def test_bad_gid_row_costs_that_gid(bundle: Path, whole: Host) -> None:
    rel = "cmd/show_gids.txt"
    line = _set_line(bundle, rel, lambda s: s.startswith("mlx5_3\t"), lambda s: s.replace("fe80:", "fz80:"))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)
    gids = fabric.hosts[HOST].nics["eth3"].gids
    assert len(gids) == len(whole.nics["eth3"].gids) - 1
    assert {n: nic for n, nic in fabric.hosts[HOST].nics.items() if n != "eth3"} == {
        n: nic for n, nic in whole.nics.items() if n != "eth3"
    }


def test_bad_ibv_devinfo_value_costs_that_device(bundle: Path, whole: Host) -> None:
    rel = "cmd/ibv_devinfo.txt"
    seen: list[str] = []

    def pick(line: str) -> bool:
        seen.append(line)
        return "active_mtu" in line and sum("hca_id" in s for s in seen) == 2

    line = _set_line(bundle, rel, pick, lambda s: s.replace("(", "[", 1))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)
    nics = fabric.hosts[HOST].nics
    lost = [n for n in nics if nics[n].active_mtu != whole.nics[n].active_mtu]
    assert len(lost) == 1 and nics[lost[0]].active_mtu is None
    assert all(nics[n].fw_ver == whole.nics[n].fw_ver for n in nics if n not in lost)


def test_bad_ip_link_header_costs_that_link(bundle: Path, whole: Host) -> None:
    rel = "cmd/ip-d-link.txt"
    line = _set_line(bundle, rel, lambda s: ": eth4: " in s, lambda s: s.replace(" mtu ", " mtux "))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)
    nics = fabric.hosts[HOST].nics
    assert (nics["eth4"].max_mtu, nics["eth4"].operstate, nics["eth4"].carrier) == (None, None, None)
    assert all(nics[n] == whole.nics[n] for n in nics if n != "eth4")


def test_ip_link_gives_operstate_and_carrier(whole: Host) -> None:
    assert {(n.operstate, n.carrier) for n in whole.nics.values()} == {("UP", True)}


def test_twin_dark_port_has_no_carrier(tmp_path: Path) -> None:
    from unifab.twin.generate import generate

    out = tmp_path / "bundle"
    generate(out, gpus=16, seed=3, scenarios=("host-port-down",))
    fabric = load_bundle(out)
    dark = [nic for host in fabric.hosts.values() for nic in host.nics.values() if nic.port_state == "DOWN"]
    assert dark and all((nic.operstate, nic.carrier) == ("DOWN", False) for nic in dark)


def test_dark_rule_uses_carrier_where_the_port_state_does_not_say(whole: Host) -> None:
    nic = whole.nics["eth0"]
    assert not host_port_dark(nic)
    no_state = replace(nic, port_state=None)
    assert not host_port_dark(no_state)  # carrier up
    assert dark_reason(replace(no_state, carrier=False, operstate="DOWN")) == (
        "no carrier: ip link state DOWN, RDMA port state not collected"
    )
    assert host_port_dark(replace(nic, carrier=False, operstate="LOWERLAYERDOWN"))  # RoCE: the netdev has no link
    assert (
        dark_reason(replace(no_state, carrier=None, operstate="DOWN"))
        == "ip link state DOWN, RDMA port state not collected"
    )
    assert not host_port_dark(replace(no_state, carrier=None, operstate="UNKNOWN"))
    assert dark_reason(replace(nic, port_state="DOWN", carrier=True)) == "RDMA port DOWN"
    # InfiniBand: IPoIB has no carrier while the port waits for the SM (INIT has light): the RDMA state decides
    ib = replace(nic, link_layer="InfiniBand", port_state="INIT", carrier=False, operstate="DOWN")
    assert not host_port_dark(ib)


def test_bad_ecn_enable_file_costs_that_point_enabled_set_not_the_nic(bundle: Path, whole: Host) -> None:
    rel = "sys/class/net/eth2/ecn/roce_np/enable/3"
    (bundle / "hosts" / HOST / rel).write_text("on\n")
    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.severity is Severity.WARNING
    assert finding.subject["path"] == f"hosts/{HOST}/{rel}" and finding.subject["device"] == HOST
    assert finding.evidence["line"] == 1 and "expected an integer" in finding.message
    qos, before = fabric.hosts[HOST].nics["eth2"].qos, whole.nics["eth2"].qos
    assert qos is not None and before is not None and before.ecn_np_enabled is not None
    # whether ECN is on for priority 3 is unknown: the NP set is unknown, not "3 off"; the rest reads as before
    assert qos == replace(before, ecn_np_enabled=None)
    assert {n: nic for n, nic in fabric.hosts[HOST].nics.items() if n != "eth2"} == {
        n: nic for n, nic in whole.nics.items() if n != "eth2"
    }


def test_bad_ecn_parameter_file_costs_that_parameter(bundle: Path, whole: Host) -> None:
    rel = "sys/class/net/eth2/ecn/roce_np/cnp_dscp"
    (bundle / "hosts" / HOST / rel).write_text("0x30\n")
    fabric = load_bundle(bundle)
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL" and finding.subject["path"] == f"hosts/{HOST}/{rel}"
    qos, before = fabric.hosts[HOST].nics["eth2"].qos, whole.nics["eth2"].qos
    assert qos is not None and before is not None and before.cnp_dscp is not None
    assert qos == replace(before, cnp_dscp=None)


def test_bad_mlnx_qos_line_costs_that_row_not_the_nic(bundle: Path, whole: Host) -> None:
    rel = "cmd/mlnx_qos/eth2.txt"
    line = _set_line(bundle, rel, lambda s: s.strip().startswith("buffer "), lambda s: s.replace("1", "9", 1))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)  # INPUT-PARTIAL at that line, not INPUT-UNREADABLE for the file
    qos, before = fabric.hosts[HOST].nics["eth2"].qos, whole.nics["eth2"].qos
    assert qos is not None and before is not None and before.prio2buffer is not None
    # which buffer each priority uses is unknown; trust, DSCP map, PFC, ETS, buffer sizes and cable read as before
    assert qos == replace(before, prio2buffer=None)
    assert {n: nic for n, nic in fabric.hosts[HOST].nics.items() if n != "eth2"} == {
        n: nic for n, nic in whole.nics.items() if n != "eth2"
    }


def test_bad_mlnx_qos_tc_line_costs_that_tc(bundle: Path, whole: Host) -> None:
    rel = "cmd/mlnx_qos/eth3.txt"
    line = _set_line(bundle, rel, lambda s: s.startswith("tc: 3 "), lambda s: s.replace("ets, bw: ", "ets, bw: -"))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)
    qos, before = fabric.hosts[HOST].nics["eth3"].qos, whole.nics["eth3"].qos
    assert qos is not None and before is not None
    lost = replace(before, ets=tuple(e for e in before.ets if e.tc != 3), prio_tc={**before.prio_tc})
    del lost.prio_tc[3]  # priority 3 was under tc 3: not read into tc 2
    assert qos == lost


def test_bad_nvidia_smi_value_costs_that_field(bundle: Path, whole: Host) -> None:
    rel = "cmd/nvidia-smi-q.xml"
    line = _set_line(bundle, rel, lambda s: "<max_link_width>" in s, lambda s: s.replace("16x", "16y"))
    fabric = load_bundle(bundle)
    _partial(fabric, rel, line)  # the first GPU's max link width is unknown; every GPU and NIC is still read
    gpus = fabric.hosts[HOST].gpus
    assert gpus.keys() == whole.gpus.keys() and {i: g for i, g in gpus.items() if i} == {
        i: g for i, g in whole.gpus.items() if i
    }
    assert fabric.hosts[HOST].nics == whole.nics
