"""``ibstatus`` over a real NDR host and ``saquery`` node records: the stored captures (values read off them by
hand), the real ibstatus script run again over the real H100 sysfs copy (in a user+mount namespace), and the
real ``saquery NR <lid>`` against ibsim, which must name every node exactly as the NETFILE does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from ib_netfile import rail_fabric
from ibsim import ibsim_fabric

from unifab.errors import ParseError
from unifab.parse.ib import ibnodes, ibstat, saquery

IB_DEVICES = ("mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9")


def test_ibstatus_of_a_real_ndr_host(samples: Path) -> None:
    r = ibstat.parse((samples / "ib" / "ibstatus_h100_ndr.txt").read_text(), "ibstatus")
    ib = [c for c in r.cas if c.ports[0].is_infiniband]
    assert [c.name for c in ib] == list(IB_DEVICES)
    for ca in ib:
        p = ca.ports[0]
        assert (p.state, p.physical_state, p.rate_gbps, p.width, p.speed, p.lanes) == (
            "Active",
            "LinkUp",
            400.0,
            "4X",
            "NDR",
            4,
        )
        assert (p.base_lid, p.sm_lid, p.gid) == (None, None, None)  # "unknown": the copy has no lid/gids files
    bond = r.ca("mlx5_bond_0")
    assert bond is not None
    assert (bond.ports[0].width, bond.ports[0].speed, bond.ports[0].is_infiniband) == ("2X", "NDR", False)


def _unshare_ok() -> bool:
    if shutil.which("unshare") is None or shutil.which("ibstatus") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], check=False, capture_output=True).returncode == 0


def test_real_ibstatus_over_the_real_sysfs_copy(samples: Path) -> None:
    """The installed ibstatus script reads the H100 copy bind-mounted on /sys/class/infiniband (a private mount
    namespace: the machine's sysfs is untouched) and prints exactly the stored capture."""
    if not _unshare_ok():
        pytest.skip("needs ibstatus (infiniband-diags) and unprivileged user+mount namespaces (unshare -rm)")
    sysfs = (samples / "host" / "sysfs_class_infiniband_h100").resolve()
    script = (
        'mount -t tmpfs none /sys/class && mkdir /sys/class/infiniband && mount --bind "$1" /sys/class/infiniband '
        "&& exec ibstatus"
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(sysfs)], check=True, capture_output=True, text=True
    )
    assert done.stdout == (samples / "ib" / "ibstatus_h100_ndr.txt").read_text()
    speeds = {(c.name, c.ports[0].speed) for c in ibstat.parse(done.stdout, "ibstatus").cas}
    assert speeds == {(d, "NDR") for d in (*IB_DEVICES, "mlx5_bond_0")}


def test_ibstatus_unknown_rate_and_state_are_none() -> None:
    text = "Infiniband device 'mlx5_2' port 1 status:\n\tstate:\t\t unknown\n\trate:\t\t unknown\n"
    p = ibstat.parse(text).cas[0].ports[0]
    assert (p.state, p.rate_gbps, p.width) == (None, None, None)


def test_saquery_node_records(samples: Path) -> None:
    r = saquery.parse((samples / "ib" / "saquery_nr_sim.txt").read_text(), "saquery")
    nodes = r.node_records()
    assert [(n.lid, n.kind, n.num_ports, n.port_num, n.description) for n in nodes] == [
        (1, "ca", 1, 1, "dgx-001 mlx5_0"),
        (11, "switch", 40, 0, "MF0;ib-leaf-r7:MQM8700/U1"),
        (16, "switch", 40, 0, "MF0;ib-spine-3:MQM8700/U1"),
    ]
    ca = nodes[0]
    assert (ca.node_guid, ca.port_guid, ca.device_id, ca.vendor_id) == (
        0xA088C20300B10000,
        0xA088C20300B10001,
        0x101B,
        0x2C9,
    )
    assert nodes[1].node_guid == nodes[1].port_guid == 0xB83FD20300A10007


def test_saquery_sm_ports_listing() -> None:
    text = (
        "IsSM ports\nPortInfoRecord dump:\n\t\tEndPortLid..............1\n\t\tPortNum.................1\n"
        "\t\tcapability_mask.........0x50C04A\n\nIsSMdisabled ports\n"
    )
    r = saquery.parse(text)
    assert [(x.kind, x.fields["EndPortLid"], x.fields["capability_mask"]) for x in r.records] == [
        ("PortInfoRecord", "1", "0x50C04A")
    ]
    assert r.node_records() == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("\t\tlid.....................1\n", 1),
        ("NodeRecord dump:\n\t\tthis is not a field\n", 2),
        ("NodeRecord dump:\n\t\tlid.....................x\n", 1),
        ("\nNodeRecord dump:\n\t\tlid.....................1\n\t\tnode_type...............Toaster\n", 2),
    ],
)
def test_saquery_errors(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        saquery.parse(text, "sa.txt").node_records()
    assert (exc.value.source, exc.value.line) == ("sa.txt", line)


def test_real_saquery_names_every_node(tmp_path: Path) -> None:
    """``saquery NR <lid>`` of every LID the SM assigned reads back the NETFILE's nodes, GUIDs and descriptions."""
    fab = rail_fabric(3, 2, 1)
    with ibsim_fabric(tmp_path / "ibsim", fab.text, attach=fab.first_ca().id) as sim:
        sim.sweep()
        sim.start_sm()
        lids = {n.lid for n in ibnodes.parse(sim.run(["ibswitches"])).nodes}
        switch_lids = {lid for lid in lids if lid is not None}
        every = range(1, len(fab.nodes) + 1)  # opensm packs the LIDs from 1 (LMC 0)
        records = [saquery.parse(sim.run(["saquery", "NR", str(lid)]), f"saquery NR {lid}") for lid in every]
    nodes = [n for r in records for n in r.node_records()]
    assert {(n.node_guid, n.kind, n.num_ports, n.description) for n in nodes} == {
        (n.guid, n.kind, n.nports, n.description) for n in fab.nodes
    }
    assert {n.lid for n in nodes if n.kind == "switch"} == switch_lids
    assert all(n.port_guid == (n.node_guid if n.kind == "switch" else n.node_guid + 1) for n in nodes)


# ibstat of a real ConnectX-7 NDR port, as quoted in deepseek-ai/DeepEP issue #303 (the simulator's CAs print
# 'Rate: 104'; ibstat prints only the rate, never width or speed: NDR is what 400 on a 4X port means).
IBSTAT_CX7_NDR = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.43.2026
\tHardware version: 0
\tNode GUID: 0xa088c2030074cfda
\tSystem image GUID: 0xa088c2030074cfda
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 50
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0xa088c2030074cfda
\t\tLink layer: InfiniBand
"""


def test_ibstat_of_a_real_cx7_ndr_port() -> None:
    ca = ibstat.parse(IBSTAT_CX7_NDR, "ibstat").cas[0]
    assert (ca.name, ca.ca_type, ca.firmware, ca.node_guid) == ("mlx5_0", "MT4129", "28.43.2026", 0xA088C2030074CFDA)
    p = ca.ports[0]
    assert (p.state, p.rate_gbps, p.width, p.speed, p.base_lid, p.sm_lid, p.is_infiniband) == (
        "Active",
        400.0,
        None,
        None,
        50,
        1,
        True,
    )
