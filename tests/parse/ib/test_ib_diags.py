"""The infiniband-diags parsers (sminfo, perfquery, ibqueryerrors, iblinkinfo, ibstat/ibstatus, the ibnodes
family, ibnetdiscover -p/-l/-g) over the real captures in tests/data/samples/ib: goldens, values read off the
captures by hand, variants the captures lack, and errors naming the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib import (
    iblinkinfo,
    ibnetdiscover,
    ibnetdiscover_ports,
    ibnodes,
    ibqueryerrors,
    ibstat,
    perfquery,
    saquery,
    sminfo,
)

GOLDEN = Path(__file__).parent / "golden"

CASES = [
    ("sminfo_sim", sminfo),
    ("perfquery_sim_hca_errors", perfquery),
    ("perfquery_sim_switchport_errors", perfquery),
    ("perfquery_x_sim_switchport", perfquery),
    ("perfquery_a_sim_switch", perfquery),
    ("perfquery_x_a_l_sim_switch", perfquery),
    ("ibqueryerrors_sim_rail_faulty", ibqueryerrors),
    ("iblinkinfo_sim_rail_faulty", iblinkinfo),
    ("iblinkinfo_l_sim_rail_faulty", iblinkinfo),
    ("ibstat_sim_ARTIFACTS", ibstat),
    ("ibstatus_h100_ndr", ibstat),
    ("saquery_nr_sim", saquery),
    ("ibswitches_sim", ibnodes),
    ("ibhosts_sim", ibnodes),
    ("ibnetdiscover_l_sim_rail_faulty", ibnodes),
    ("ibnetdiscover_p_sim_rail_faulty", ibnetdiscover_ports),
    ("ibnetdiscover_g_sim_rail_faulty", ibnetdiscover),
]


def _read(samples: Path, name: str) -> str:
    return (samples / "ib" / f"{name}.txt").read_text()


def _compact(record: Any) -> Any:
    """Port listings in full for cabled ports; the hundreds of empty switch ports as (node, port, state) rows."""
    if isinstance(record, iblinkinfo.IbLinkInfo):
        loose = [(p.node_description, p.port, p.state, p.phys_state) for p in record.ports if not p.connected]
        return {"connected": record.connected(), "unconnected": loose}
    if isinstance(record, ibnetdiscover_ports.PortReport):
        rows = [(p.description, p.guid, p.port, p.width, p.speed) for p in record.ports if not p.connected]
        return {"connected": record.connected(), "unconnected": rows}
    return record


@pytest.mark.parametrize(("name", "module"), CASES, ids=[c[0] for c in CASES])
def test_golden(samples: Path, golden: Any, name: str, module: Any) -> None:
    golden(GOLDEN / f"{name}.json", _compact(module.parse(_read(samples, name), name)))


# --- sminfo ---------------------------------------------------------------------------------------------------


def test_sminfo_sample(samples: Path) -> None:
    sm = sminfo.parse(_read(samples, "sminfo_sim"))
    assert (sm.sm_lid, sm.sm_guid, sm.activity_count, sm.priority, sm.state) == (1, 0xA088C20300B10001, 1553, 0, 3)
    assert (sm.state_name, sm.role, sm.is_master) == ("SMINFO_MASTER", "master", True)


def test_sminfo_standby_with_prompt() -> None:
    text = (
        "root@ufm:~# sminfo 5\n"
        "sminfo: sm lid 5 sm guid 0x98039b0300671b2a, activity count 7 priority 14 state 2 SMINFO_STANDBY\n"
    )
    sm = sminfo.parse(text)
    assert (sm.sm_lid, sm.priority, sm.role) == (5, 14, "standby")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("sminfo: iberror: failed: query\n", 1),
        ("\nsminfo: sm lid 1 sm guid 0x1, activity count 1 priority 0 state 9 X\n", 2),
        ("sminfo: sm lid 1 sm guid 0x1, activity count 1 priority 99 state 3 SMINFO_MASTER\n", 1),
        ("sminfo: sm lid 1 sm guid 0x1, activity count 1 priority 0 state 3 SMINFO_MASTER\n" * 2, 2),
    ],
)
def test_sminfo_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        sminfo.parse(text, "sm.txt")
    assert (exc.value.source, exc.value.line) == ("sm.txt", line)


# --- perfquery ------------------------------------------------------------------------------------------------


def test_perfquery_saturation_and_bits(samples: Path) -> None:
    block = perfquery.parse(_read(samples, "perfquery_sim_switchport_errors")).blocks[0]
    assert (block.kind, block.lid, block.port, block.cap_mask) == ("basic", 3, 2, 0x1300)
    assert block.counters["SymbolErrorCounter"] == 65535 and block.saturated("SymbolErrorCounter")
    assert block.counters["LinkErrorRecoveryCounter"] == 255 and block.saturated("LinkErrorRecoveryCounter")
    assert block.counters["LinkDownedCounter"] == 12 and not block.saturated("LinkDownedCounter")
    assert "PortSelect" not in block.counters and "CounterSelect2" not in block.counters
    assert len(block.counters) == 18
    assert perfquery.COUNTER_BITS["LocalLinkIntegrityErrors"] == 4 and perfquery.COUNTER_BITS["PortXmitWait"] == 32
    hca = perfquery.parse(_read(samples, "perfquery_sim_hca_errors")).blocks[0]
    assert (hca.lid, hca.port, hca.counters["PortRcvErrors"], hca.counters["LocalLinkIntegrityErrors"]) == (
        22,
        1,
        347,
        3,
    )


def test_perfquery_extended_and_all_ports(samples: Path) -> None:
    ext = perfquery.parse(_read(samples, "perfquery_x_sim_switchport")).blocks[0]
    assert (ext.kind, ext.cap_mask2, ext.counters["PortXmitData"], ext.bits("PortXmitData")) == (
        "extended",
        0,
        3600,
        64,
    )
    agg = perfquery.parse(_read(samples, "perfquery_a_sim_switch"))
    assert [b.port for b in agg.blocks] == [255] and agg.blocks[0].all_ports
    assert agg.blocks[0].counters["SymbolErrorCounter"] == 65535
    each = perfquery.parse(_read(samples, "perfquery_x_a_l_sim_switch"))
    assert [b.port for b in each.blocks] == list(range(1, 41))
    assert {b.kind for b in each.blocks} == {"extended"}
    assert each.block(2, "extended") is not None and each.block(2) is None


def test_perfquery_pasted_runs_and_a_bad_block() -> None:
    good = "# Port counters: Lid 7 port 1 (CapMask: 0x1400)\nPortSelect:.....1\nSymbolErrorCounter:......3\n"
    bad = "# Port counters: Lid 7 port 2\nSymbolErrorCounter:......3x\n"
    text = "$ perfquery 7 1\n" + good + "$ perfquery 7 2\n" + bad
    with pytest.raises(ParseError) as exc:
        perfquery.parse(text, "pq.txt")
    assert exc.value.line == 7
    problems = ParseProblems("pq.txt")
    result = perfquery.parse(text, "pq.txt", problems)
    assert [(b.port, b.counters) for b in result.blocks] == [(1, {"SymbolErrorCounter": 3})]
    assert [(p.line, p.skipped) for p in problems.problems] == [(7, "the basic counters of lid 7 port 2")]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("SymbolErrorCounter:.....1\n", 1),
        ("# Port counters: Lid 1 port 1\nLinkDownedCounter:.....256\n", 2),
        ("# Port counters: Lid 1 port 1\nnot a counter line\n", 2),
        ("# Port counters: Lid 1 port 1\n", 1),
    ],
)
def test_perfquery_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        perfquery.parse(text, "pq.txt")
    assert exc.value.line == line


# --- ibqueryerrors --------------------------------------------------------------------------------------------


def test_ibqueryerrors_sample(samples: Path) -> None:
    r = ibqueryerrors.parse(_read(samples, "ibqueryerrors_sim_rail_faulty"))
    assert (r.nodes_checked, r.bad_nodes, r.ports_checked, r.bad_ports) == (43, 4, 511, 4)
    ca, leaf = r.nodes[0], r.nodes[1]
    assert (ca.guid, ca.description, ca.is_switch) == (None, "dgx-002 mlx5_1", False)
    assert (ca.ports[0].guid, ca.ports[0].port) == (0xA088C20300B10013, 1)
    assert ca.ports[0].counters == {"SymbolErrorCounter": 4312, "PortRcvErrors": 347, "LocalLinkIntegrityErrors": 3}
    assert (leaf.guid, [p.port for p in leaf.ports]) == (0xB83FD20300A10001, [None, 2])
    assert r.nodes[3].ports[1].counters == {"PortXmitWait": 123456789}


def test_ibqueryerrors_clean_fabric_with_thresholds() -> None:
    text = (
        "## Summary: 12 nodes checked, 0 bad nodes found\n##          168 ports checked, 0 ports have errors beyond "
        "threshold\n## Thresholds: SymbolErrorCounter=10 LinkDownedCounter=2\n## Suppressed: PortXmitWait\n"
    )
    r = ibqueryerrors.parse(text)
    assert (r.nodes, r.bad_nodes, r.ports_checked) == ((), 0, 168)
    assert (r.thresholds, r.suppressed) == ({"SymbolErrorCounter": 10, "LinkDownedCounter": 2}, ("PortXmitWait",))


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("   GUID 0x1 port 1: [SymbolErrorCounter == 1]\n", 1),
        ('Errors for "h"\n   GUID 0x1 port 1: garbage\n', 2),
        ('Errors for "h"\n   GUID 0xZZ port 1: [X == 1]\n', 2),
        ('Errors for "h"\nwhat is this\n', 2),
    ],
)
def test_ibqueryerrors_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        ibqueryerrors.parse(text)
    assert exc.value.line == line


# --- iblinkinfo -----------------------------------------------------------------------------------------------


def test_iblinkinfo_sample(samples: Path) -> None:
    r = iblinkinfo.parse(_read(samples, "iblinkinfo_sim_rail_faulty"))
    assert len(r.ports) == 31 + 12 * 40 and len(r.connected()) == 2 * 63
    slow = [p for p in r.connected() if p.width != "4X"]
    assert [(p.node_description, p.port, p.width, p.speed, p.rate_gbps) for p in slow] == [
        ("dgx-002 mlx5_1", 1, "1X", "HDR", 50.0),
        ("MF0;ib-leaf-r1:MQM8700/U1", 2, "1X", "HDR", 50.0),
    ]
    down = next(p for p in r.ports if p.node_description == "MF0;ib-leaf-r2:MQM8700/U1" and p.port == 4)
    assert (down.state, down.phys_state, down.connected, down.width, down.node_guid) == (
        "Down",
        "Polling",
        False,
        None,
        0xB83FD20300A10002,
    )
    first = r.ports[0]
    assert (first.node_kind, first.port_guid, first.lid, first.remote_lid, first.remote_port) == (
        "ca",
        0xA088C20300B1003F,
        43,
        11,
        4,
    )
    assert (first.lane_gbps, first.comment) == (53.125, "Could be 12X")


def test_iblinkinfo_line_mode_matches_plain(samples: Path) -> None:
    plain = iblinkinfo.parse(_read(samples, "iblinkinfo_sim_rail_faulty"))
    line = iblinkinfo.parse(_read(samples, "iblinkinfo_l_sim_rail_faulty"))

    def key(p: iblinkinfo.LinkInfoPort) -> tuple[object, ...]:
        return (p.node_description, p.port, p.width, p.speed, p.state, p.remote_description, p.remote_port)

    assert sorted(map(key, plain.ports)) == sorted(map(key, line.ports))
    assert all(p.node_kind is None and p.port_guid is not None for p in line.ports)
    assert all(p.remote_guid is not None for p in line.connected())


def test_iblinkinfo_variants() -> None:
    text = (
        "$ iblinkinfo -p\n"
        "Switch: 0x0002c90200482d08 MF0;sw-ib-01:MQM9700/U1:\n"
        "     5    7[  ] ==( 4X       106.25 Gbps Active/  LinkUp) (HOQ:18 VL_Stall:7)==>"
        '      9    1[  ] "n7 mlx5_0" ( )\n'
        "     5    8[  ] ==( 4X  10.0 Gbps (FDR10) Active/  LinkUp)==>"
        '      12    1[  ] "n8 mlx5_0" (Could be 14.0625 Gbps)\n'
        '     5    9[  ] ==( 4X        53.125 Gbps Initialize/  LinkUp)==>    "Port not available"\n'
        '     5   10[  ] ==(                Down/Disabled)==>             [  ] "" ( )\n'
    )
    ports = iblinkinfo.parse(text).ports
    assert [(p.speed, p.rate_gbps, p.hoq, p.vl_stall) for p in ports[:2]] == [
        ("NDR", 400.0, 18, 7),
        ("FDR10", 40.0, None, None),
    ]
    assert ports[1].comment == "Could be 14.0625 Gbps"
    assert (ports[2].state, ports[2].available, ports[2].connected) == ("Initialize", False, False)
    assert (ports[3].state, ports[3].phys_state) == ("Down", "Disabled")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ('     5    7[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==>  9 1[  ] "x" ( )\n', 1),
        ("CA: h mlx5_0:\n      0x1     1    1[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==>  garbage\n", 2),
        ("CA: h mlx5_0:\nrandom text\n", 2),
    ],
)
def test_iblinkinfo_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        iblinkinfo.parse(text)
    assert exc.value.line == line


# --- ibstat / ibstatus ----------------------------------------------------------------------------------------

IBSTATUS = """Infiniband device 'mlx5_0' port 1 status:
	default gid:	 fe80:0000:0000:0000:a088:c203:0074:cfda
	base lid:	 0x32
	sm lid:		 0x1
	state:		 4: ACTIVE
	phys state:	 5: LinkUp
	rate:		 400 Gb/sec (4X NDR)
	link_layer:	 InfiniBand

Infiniband device 'mlx5_bond_0' port 1 status:
	default gid:	 fe80:0000:0000:0000:0000:0000:0000:0000
	base lid:	 0x0
	sm lid:		 0x0
	state:		 1: DOWN
	phys state:	 3: Disabled
	rate:		 200 Gb/sec (2X NDR)
	link_layer:	 Ethernet
"""


def test_ibstat_sample(samples: Path) -> None:
    ca = ibstat.parse(_read(samples, "ibstat_sim_ARTIFACTS")).cas[0]
    assert (ca.name, ca.ca_type, ca.nports, ca.node_guid) == ("ibsim0", "simulator", 1, 0xA088C20300B10000)
    port = ca.ports[0]
    assert (port.state, port.physical_state, port.rate_gbps, port.base_lid, port.sm_lid) == (
        "Active",
        "LinkUp",
        104.0,
        1,
        1,
    )
    assert (port.capability_mask, port.port_guid, port.is_infiniband) == (0x0050C04A, 0xA088C20300B10001, True)


def test_ibstatus() -> None:
    r = ibstat.parse(IBSTATUS, "ibstatus.txt")
    ib, roce = r.cas[0].ports[0], r.cas[1].ports[0]
    assert (ib.state, ib.physical_state, ib.rate_gbps, ib.width, ib.speed, ib.lanes, ib.base_lid) == (
        "Active",
        "LinkUp",
        400.0,
        "4X",
        "NDR",
        4,
        0x32,
    )
    assert (roce.state, roce.physical_state, roce.width, roce.is_infiniband) == ("Down", "Disabled", "2X", False)
    assert r.ca("mlx5_bond_0") is r.cas[1]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("hello\n", 1),
        ("CA 'mlx5_0'\n\tNode GUID: 0xnothex\n", 2),
        ("CA 'mlx5_0'\n\tPort 1:\n\t\tBase lid: many\n", 3),
        ("Infiniband device 'mlx5_0' port 1 status:\n\trate:\t fast\n", 2),
    ],
)
def test_ibstat_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        ibstat.parse(text)
    assert exc.value.line == line


# --- ibnodes, ibnetdiscover -p / -g ----------------------------------------------------------------------------


def test_ibnodes_samples(samples: Path) -> None:
    switches = ibnodes.parse(_read(samples, "ibswitches_sim")).nodes
    assert len(switches) == 12 and switches[0] == ibnodes.IbNodeEntry(
        "switch", 0xB83FD20300A10007, 40, "MF0;ib-leaf-r7:MQM8700/U1", None, None, 11, 0, False
    )
    hosts = ibnodes.parse(_read(samples, "ibhosts_sim")).nodes
    assert len(hosts) == 31 and {h.kind for h in hosts} == {"ca"}
    listing = ibnodes.parse(_read(samples, "ibnetdiscover_l_sim_rail_faulty"))
    assert len(listing.of_kind("ca")) == 31 and len(listing.of_kind("switch")) == 12
    assert {(n.devid, n.vendid) for n in listing.of_kind("switch")} == {(0xCF08, 0x2C9)}
    assert {n.guid for n in listing.of_kind("ca")} == {h.guid for h in hosts}


def test_ibnodes_router_and_bad_line() -> None:
    text = 'Router\t: 0x0002c90300000001 ports 2 "gw-1"\nSwitch\t: 0xZZ ports 40 "x" base port 0 lid 1 lmc 0\n'
    problems = ParseProblems("n.txt")
    r = ibnodes.parse(text, "n.txt", problems)
    assert [(n.kind, n.nports) for n in r.nodes] == [("router", 2)]
    assert [p.line for p in problems.problems] == [2]
    with pytest.raises(ParseError) as exc:
        ibnodes.parse(text, "n.txt")
    assert exc.value.line == 2


def test_ports_report_sample(samples: Path) -> None:
    r = ibnetdiscover_ports.parse(_read(samples, "ibnetdiscover_p_sim_rail_faulty"))
    assert len(r.ports) == 511 and len(r.connected()) == 126
    degraded = [p for p in r.connected() if p.width != "4X"]
    assert {(p.description, p.port, p.width, p.speed, p.rate_gbps) for p in degraded} == {
        ("dgx-002 mlx5_1", 1, "1X", "HDR", 50.0),
        ("MF0;ib-leaf-r1:MQM8700/U1", 2, "1X", "HDR", 50.0),
    }
    loose = next(p for p in r.ports if not p.connected)
    assert (loose.kind, loose.lid, loose.port, loose.remote_guid) == ("switch", 11, 40, None)


def test_grouped_topology_reads_like_the_plain_one(samples: Path) -> None:
    grouped = ibnetdiscover.parse(_read(samples, "ibnetdiscover_g_sim_rail_faulty"))
    plain = ibnetdiscover.parse(_read(samples, "ibnetdiscover_sim_rail_faulty"))
    assert {(n.id, n.description, n.chassis) for n in grouped.nodes} == {
        (n.id, n.description, None) for n in plain.nodes
    }
    assert set(ibnetdiscover.named_links(grouped)) == set(ibnetdiscover.named_links(plain))


def test_grouped_chassis_variant() -> None:
    text = (
        "\nChassis 1 (guid 0x0008f104003f15c3)\n\n# Spine Nodes\n"
        "vendid=0x8f1\ndevid=0x5a30\nsysimgguid=0x8f104003f15c3\t\t# Chassis 1\n"
        "switchguid=0x8f10400411f56(8f10400411f56)\t# ISR9288/ISR9096 Voltaire sLB-24D Spine 2\n"
        'Switch\t24 "S-0008f10400411f56"\t\t# "ISR9288 Voltaire sFB-12D" base port 0 lid 64 lmc 0\n'
        '[12][ext 3]\t"S-0008f10400410015"[1]\t\t# "ISR9288/ISR9096 Voltaire sLB-24D" lid 6 4xSDR s=1 w=2 v=4\n'
        "\nNon-Chassis Nodes\n"
    )
    node = ibnetdiscover.parse(text).nodes[0]
    assert (node.chassis, node.lid, node.ports[0].ext_port, node.ports[0].width, node.ports[0].speed) == (
        1,
        64,
        3,
        4,
        "SDR",
    )
