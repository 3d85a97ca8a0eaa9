"""Tests for the ``ibv_devinfo`` parser.

No sample of ours exists: the inputs are reconstructed from the grammar in host-nic-roce.md §2.8 and
the printf formats of rdma-core ``libibverbs/examples/devinfo.c`` (TAB runs, ``name (enum)`` values).
Values (GUIDs, firmware, board ids) are made up in the style of ConnectX-6/7 hosts.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.ibv_devinfo import MTU_ENUM, PORT_STATES, TRANSPORTS, IbvDevice, IbvPort, dump, parse


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "devinfo.txt")
    return info.value


# Reconstructed shape (§2.8 + devinfo.c): a RoCE ConnectX-7 (Ethernet link layer, netdev MTU 9000 ->
# active_mtu 4096), a second one on MTU 1500 (active_mtu 1024) and an InfiniBand ConnectX-6 with LIDs.
THREE_DEVICES = text(
    "hca_id:\tmlx5_0",
    "\ttransport:\t\t\tInfiniBand (0)",
    "\tfw_ver:\t\t\t\t28.39.1002",
    "\tnode_guid:\t\t\tb83f:d203:00a1:b2c4",
    "\tsys_image_guid:\t\t\tb83f:d203:00a1:b2c4",
    "\tvendor_id:\t\t\t0x02c9",
    "\tvendor_part_id:\t\t\t4129",
    "\thw_ver:\t\t\t\t0x0",
    "\tboard_id:\t\t\tMT_0000000838",
    "\tphys_port_cnt:\t\t\t1",
    "\t\tport:\t1",
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
    "\t\t\tmax_mtu:\t\t4096 (5)",
    "\t\t\tactive_mtu:\t\t4096 (5)",
    "\t\t\tsm_lid:\t\t\t0",
    "\t\t\tport_lid:\t\t0",
    "\t\t\tport_lmc:\t\t0x00",
    "\t\t\tlink_layer:\t\tEthernet",
    "",
    "hca_id:\tmlx5_1",
    "\ttransport:\t\t\tInfiniBand (0)",
    "\tfw_ver:\t\t\t\t28.39.1002",
    "\tnode_guid:\t\t\tb83f:d203:00a1:b2c5",
    "\tsys_image_guid:\t\t\tb83f:d203:00a1:b2c4",
    "\tvendor_id:\t\t\t0x02c9",
    "\tvendor_part_id:\t\t\t4129",
    "\thw_ver:\t\t\t\t0x0",
    "\tboard_id:\t\t\tMT_0000000838",
    "\tphys_port_cnt:\t\t\t1",
    "\t\tport:\t1",
    "\t\t\tstate:\t\t\tPORT_DOWN (1)",
    "\t\t\tmax_mtu:\t\t4096 (5)",
    "\t\t\tactive_mtu:\t\t1024 (3)",
    "\t\t\tsm_lid:\t\t\t0",
    "\t\t\tport_lid:\t\t0",
    "\t\t\tport_lmc:\t\t0x00",
    "\t\t\tlink_layer:\t\tEthernet",
    "",
    "hca_id:\tmlx5_2",
    "\ttransport:\t\t\tInfiniBand (0)",
    "\tfw_ver:\t\t\t\t20.35.1012",
    "\tnode_guid:\t\t\t0c42:a103:0065:1f30",
    "\tsys_image_guid:\t\t\t0c42:a103:0065:1f30",
    "\tvendor_id:\t\t\t0x02c9",
    "\tvendor_part_id:\t\t\t4123",
    "\thw_ver:\t\t\t\t0x0",
    "\tboard_id:\t\t\tMT_0000000223",
    "\tphys_port_cnt:\t\t\t2",
    "\t\tport:\t1",
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
    "\t\t\tmax_mtu:\t\t4096 (5)",
    "\t\t\tactive_mtu:\t\t4096 (5)",
    "\t\t\tsm_lid:\t\t\t1",
    "\t\t\tport_lid:\t\t17",
    "\t\t\tport_lmc:\t\t0x00",
    "\t\t\tlink_layer:\t\tInfiniBand",
    "",
    "\t\tport:\t2",
    "\t\t\tstate:\t\t\tPORT_INIT (2)",
    "\t\t\tmax_mtu:\t\t4096 (5)",
    "\t\t\tactive_mtu:\t\t4096 (5)",
    "\t\t\tsm_lid:\t\t\t1",
    "\t\t\tport_lid:\t\t65535",
    "\t\t\tport_lmc:\t\t0x02",
    "\t\t\tlink_layer:\t\tInfiniBand",
    "",
)


def test_three_devices() -> None:
    devices = parse(THREE_DEVICES)
    assert [d.hca_id for d in devices] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    cx7 = devices[0]
    assert cx7 == IbvDevice(
        hca_id="mlx5_0",
        transport="InfiniBand",
        fw_ver="28.39.1002",
        node_guid="b83f:d203:00a1:b2c4",
        sys_image_guid="b83f:d203:00a1:b2c4",
        vendor_id="0x02c9",
        vendor_part_id=4129,
        hw_ver="0x0",
        board_id="MT_0000000838",
        phys_port_cnt=1,
        ports=(IbvPort(1, "PORT_ACTIVE", 4096, 4096, 0, 0, 0, "Ethernet"),),
    )
    assert devices[1].ports[0].active_mtu == 1024 and devices[1].ports[0].state == "PORT_DOWN"
    ib = devices[2]
    assert ib.vendor_part_id == 4123 and ib.phys_port_cnt == 2
    assert [(p.port, p.link_layer, p.sm_lid, p.port_lid, p.port_lmc) for p in ib.ports] == [
        (1, "InfiniBand", 1, 17, 0),
        (2, "InfiniBand", 1, 65535, 2),
    ]


def test_render_reproduces_the_tool_output() -> None:
    assert dump(parse(THREE_DEVICES)) == THREE_DEVICES


def test_spaces_and_crlf_read_the_same() -> None:
    assert parse(THREE_DEVICES.expandtabs(8).replace("\n", "\r\n")) == parse(THREE_DEVICES)


def test_no_fw_ver_and_no_board_id() -> None:
    # devinfo.c prints fw_ver only when non-empty and board_id only when sysfs has it (soft-RoCE rxe)
    raw = text(
        "hca_id:\trxe0",
        "\ttransport:\t\t\tInfiniBand (0)",
        "\tnode_guid:\t\t\t5054:00ff:fe12:3456",
        "\tsys_image_guid:\t\t\t0000:0000:0000:0000",
        "\tvendor_id:\t\t\t0xffffff",
        "\tvendor_part_id:\t\t\t0",
        "\thw_ver:\t\t\t\t0x0",
        "\tphys_port_cnt:\t\t\t1",
        "\t\tport:\t1",
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
        "\t\t\tmax_mtu:\t\t4096 (5)",
        "\t\t\tactive_mtu:\t\t1024 (3)",
        "\t\t\tsm_lid:\t\t\t0",
        "\t\t\tport_lid:\t\t0",
        "\t\t\tport_lmc:\t\t0x00",
        "\t\t\tlink_layer:\t\tEthernet",
        "",
    )
    (rxe,) = parse(raw)
    assert (rxe.fw_ver, rxe.board_id, rxe.vendor_id) == (None, None, "0xffffff")
    assert dump((rxe,)) == raw


# Reconstructed ``ibv_devinfo -v -d mlx5_0`` excerpt: device limits and capability flag lines (no colon)
# before the port, port details and GIDs after link_layer. These are accepted and not recorded.
VERBOSE = THREE_DEVICES.split("\thw_ver:")[0] + text(
    "\thw_ver:\t\t\t\t0x0",
    "\tboard_id:\t\t\tMT_0000000838",
    "\tphys_port_cnt:\t\t\t1",
    "\tmax_mr_size:\t\t\t0xffffffffffffffff",
    "\tmax_qp:\t\t\t\t131072",
    "\tdevice_cap_flags:\t\t0x25361c36",
    "\t\t\t\t\tBAD_PKEY_CNTR",
    "\t\t\t\t\tPORT_ACTIVE_EVENT",
    "\tatomic_cap:\t\t\tATOMIC_HCA (1)",
    "\tgeneral_odp_caps:",
    "\t\t\t\t\tODP_SUPPORT",
    "\ttag matching not supported",
    "\tcompletion_timestamp_mask not supported",
    "\t\tport:\t1",
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
    "\t\t\tmax_mtu:\t\t4096 (5)",
    "\t\t\tactive_mtu:\t\t4096 (5)",
    "\t\t\tsm_lid:\t\t\t0",
    "\t\t\tport_lid:\t\t0",
    "\t\t\tport_lmc:\t\t0x00",
    "\t\t\tlink_layer:\t\tEthernet",
    "\t\t\tmax_msg_sz:\t\t0x40000000",
    "\t\t\tport_cap_flags:\t\t0x04010000",
    "\t\t\tmax_vl_num:\t\tinvalid value (0)",
    "\t\t\tactive_width:\t\t4X (2)",
    "\t\t\tactive_speed:\t\t100.0 Gbps (128)",
    "\t\t\tphys_state:\t\tLINK_UP (5)",
    "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:ba3f:d2ff:fea1:b2c4, RoCE v1",
    "\t\t\tGID[  3]:\t\t0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v2",
    "",
)


def test_verbose_output_reads_the_same_fields() -> None:
    (device,) = parse(VERBOSE)
    assert device == parse(THREE_DEVICES)[0]


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n", "  \n\t\n"])
def test_empty_text(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


def test_text_before_the_first_device() -> None:
    err = parse_error("No IB devices found\n")
    assert err.line == 1 and "hca_id" in err.expected


def test_truncated_after_a_port_line() -> None:
    raw = THREE_DEVICES.split("\t\t\tmax_mtu")[0]
    err = parse_error(raw)
    assert err.line == 11 and "'max_mtu:' in port 1 of mlx5_0" in err.expected


def test_truncated_before_the_ports() -> None:
    err = parse_error(THREE_DEVICES.split("\t\tport:")[0])
    assert err.line == 1 and "ports 1..1 under device mlx5_0" in err.expected


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("4096 (5)", "4000 (5)", 13, "'max_mtu: <256..4096> (<1..5>)'"),
        ("active_mtu:\t\t1024 (3)", "active_mtu:\t\t1024 (5)", 33, "'active_mtu: <256..4096>"),
        ("PORT_ACTIVE (4)", "PORT_ACTIVE", 12, "'state: <name> (<n>)'"),
        ("sm_lid:\t\t\t1", "sm_lid:\t\t\tone", 53, "a number after 'sm_lid:'"),
        ("b83f:d203:00a1:b2c4", "b83f:d203:00a1", 4, "'node_guid: xxxx:xxxx:xxxx:xxxx'"),
        ("0x02c9", "02c9", 6, "0x... number after 'vendor_id:'"),
        ("phys_port_cnt:\t\t\t2", "phys_port_cnt:\t\t\t1", 39, "ports 1..1 under device mlx5_2"),
        ("hca_id:\tmlx5_1", "hca_id:\tmlx5_0", 20, "new device name"),
        ("port:\t2", "port:\t1", 58, "new port number"),
        ("\tvendor_part_id:\t\t\t4129", "vendor_part_id:\t\t\t4129", 7, "indented line"),
        ("\thw_ver:\t\t\t\t0x0\n", "\thw_ver:\t\t\t\t0x0\n\thw_ver:\t\t\t\t0x1\n", 9, "'hw_ver' once"),
    ],
)
def test_errors_name_the_line(old: str, new: str, line: int, message: str) -> None:
    """The line of the bad value itself (of the block when a key is missing or the block is wrong)."""
    err = parse_error(THREE_DEVICES.replace(old, new, 1))
    assert err.line == line, err
    assert message in err.expected


# --- round trip -----------------------------------------------------------------------------------

GUID = st.lists(st.text("0123456789abcdef", min_size=4, max_size=4), min_size=4, max_size=4).map(":".join)
WORD = st.from_regex(r"[A-Za-z0-9_.-]{1,16}", fullmatch=True)


@st.composite
def ports(draw: st.DrawFn, number: int) -> IbvPort:
    return IbvPort(
        port=number,
        state=draw(st.sampled_from(sorted(PORT_STATES))),
        max_mtu=draw(st.sampled_from(sorted(MTU_ENUM))),
        active_mtu=draw(st.sampled_from(sorted(MTU_ENUM))),
        sm_lid=draw(st.integers(0, 0xFFFF)),
        port_lid=draw(st.integers(0, 0xFFFF)),
        port_lmc=draw(st.integers(0, 7)),
        link_layer=draw(st.sampled_from(["Ethernet", "InfiniBand"])),
    )


@st.composite
def devices(draw: st.DrawFn, name: str) -> IbvDevice:
    count = draw(st.integers(1, 3))
    return IbvDevice(
        hca_id=name,
        transport=draw(st.sampled_from(sorted(TRANSPORTS))),
        fw_ver=draw(st.none() | WORD),
        node_guid=draw(GUID),
        sys_image_guid=draw(GUID),
        vendor_id=f"0x{draw(st.integers(0, 0xFFFFFF)):04x}",
        vendor_part_id=draw(st.integers(0, 0xFFFF)),
        hw_ver=f"0x{draw(st.integers(0, 0xFF)):X}",
        board_id=draw(st.none() | WORD),
        phys_port_cnt=count,
        ports=tuple(draw(ports(n)) for n in range(1, count + 1)),
    )


@st.composite
def outputs(draw: st.DrawFn) -> tuple[IbvDevice, ...]:
    names = draw(st.lists(st.from_regex(r"mlx5_[0-9]{1,2}", fullmatch=True), min_size=1, max_size=3, unique=True))
    return tuple(draw(devices(n)) for n in names)


@given(outputs())
def test_round_trip(devs: tuple[IbvDevice, ...]) -> None:
    out = dump(devs)
    assert parse(out) == devs
    assert parse(out.expandtabs(8)) == devs
