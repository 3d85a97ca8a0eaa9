"""Tests for the RDMA port counters parser: the real H100 sysfs tree, its flattened form, show_counters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host import hw_counters
from unifab.parse.host.hw_counters import (
    CM_GROUPS,
    PHYS_STATES,
    PORT_STATES,
    HwCounters,
    IbDevice,
    IbPort,
    dump,
    dump_tree,
    parse,
    parse_class_tree,
    parse_tree,
)

GOLDEN = Path(__file__).parent / "golden"
GoldenCheck = Callable[[Path, object], None]
TREE = "host/sysfs_class_infiniband_h100"
FLAT = "host/sysfs_class_infiniband_h100_flat.txt"


def read_tree(root: Path) -> dict[str, str]:
    """What ``unifab parse`` hands a tree parser: ``{relative path: contents}`` in sorted order."""
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def h100(samples: Path) -> HwCounters:
    return parse_class_tree(read_tree(samples / TREE), TREE)


# --- real sample ----------------------------------------------------------------------------------


def test_golden(h100: HwCounters, golden: GoldenCheck) -> None:
    golden(GOLDEN / "sysfs_class_infiniband_h100.json", h100)


def test_flat_form_parses_to_the_same_record(samples: Path, h100: HwCounters) -> None:
    assert parse((samples / FLAT).read_text(), FLAT) == h100


def test_parse_tree_tells_the_class_directory_from_a_device_directory(samples: Path, h100: HwCounters) -> None:
    files = read_tree(samples / TREE)
    assert parse_tree(files) == h100
    one = parse_tree({k.removeprefix("mlx5_bond_0/"): v for k, v in files.items() if k.startswith("mlx5_bond_0/")})
    (device,) = one.devices
    assert device.name is None and device == IbDevice(None, *[getattr(h100.devices[-1], f) for f in FIELDS])


FIELDS = ("fw_ver", "board_id", "hca_type", "ports")


def test_h100_values(h100: HwCounters) -> None:
    assert [d.name for d in h100.devices] == [
        "mlx5_0",
        "mlx5_1",
        "mlx5_4",
        "mlx5_5",
        "mlx5_6",
        "mlx5_7",
        "mlx5_8",
        "mlx5_9",
        "mlx5_bond_0",
    ]
    cx7 = h100.devices[0]
    assert (cx7.fw_ver, cx7.board_id, cx7.hca_type) == ("28.41.1000", "MT_0000000838", "MT4129")
    (port,) = cx7.ports
    assert (port.port, port.state, port.phys_state, port.link_layer) == (1, "ACTIVE", "LinkUp", "InfiniBand")
    assert (port.rate_gbps, port.width, port.speed, port.lifespan_ms) == (400.0, "4X", "NDR", 12)
    assert port.counters["port_xmit_wait"] == 2489603687 and port.counters["port_rcv_errors"] == 14
    assert port.hw_counters["rx_write_requests"] == 3809045607 and port.hw_counters["roce_adp_retrans"] == 3
    assert "lifespan" not in port.hw_counters and port.cm_counters == {}
    assert len(port.counters) == 21 and len(port.hw_counters) == 25
    assert h100.devices[1].ports[0].counters["link_downed"] == 255  # the one port that differs
    bond = h100.devices[-1]
    assert (bond.fw_ver, bond.hca_type, bond.board_id) == ("32.38.3056", "MT41692", "MT_0000000884")
    assert (bond.ports[0].rate_gbps, bond.ports[0].width, bond.ports[0].link_layer) == (200.0, "2X", "Ethernet")
    # the capture has no lid, sm_lid, lid_mask_count or sm_sl files (ibstatus of it prints "unknown")
    assert {(p.lid, p.sm_lid, p.lid_mask_count, p.sm_sl) for d in h100.devices for p in d.ports} == {(None,) * 4}


def test_render_tree_writes_the_sample_back(samples: Path, h100: HwCounters) -> None:
    files = read_tree(samples / TREE)
    written = dump_tree(h100)
    assert set(written) == set(files)
    assert all(written[path] == files[path] + "\n" for path in files)  # the capture dropped the newlines
    assert parse_tree(written) == h100
    assert parse(dump(h100)) == h100


# --- constructed variants -------------------------------------------------------------------------


def test_device_directory_with_other_files_and_no_pma() -> None:
    files = {
        "node_guid": "b83f:d203:00a1:b2c4\n",
        "fw_ver": "\n",  # an empty sysfs read is None
        "ports/1/state": "1: DOWN\n",
        "ports/1/phys_state": "3: Disabled\n",
        "ports/1/rate": "2.5 Gb/sec (1X)\n",  # SDR: the kernel prints no speed name
        "ports/1/link_layer": "Ethernet\n",
        "ports/1/counters/port_xmit_data": "N/A (no PMA)\n",
        "ports/1/counters/symbol_error": "0\n",
        "ports/1/gids/0": "fe80:0000:0000:0000:ba3f:d2ff:fea1:b2c4\n",
        "ports/1/gid_attrs/types/0": "IB/RoCE v1\n",
        "ports/2/gids/0": "0000:0000:0000:0000:0000:0000:0000:0000\n",  # a port with nothing we read
    }
    (device,) = parse_tree(files, "sys/class/infiniband/mlx5_3").devices
    assert device == IbDevice(
        None,
        None,
        None,
        None,
        (IbPort(1, "DOWN", "Disabled", 2.5, "1X", None, "Ethernet", None, {}, {"symbol_error": 0}, {}),),
    )
    assert parse_tree(dump_tree(parse_tree(files))) == parse_tree(files)


# an IB port's LID files as drivers/infiniband/core/sysfs.c prints them: lid and sm_lid "0x%x", the others "%u"
LID_FILES = {
    "ports/1/state": "4: ACTIVE\n",
    "ports/1/link_layer": "InfiniBand\n",
    "ports/1/lid": "0x1a\n",
    "ports/1/sm_lid": "0x1\n",
    "ports/1/lid_mask_count": "0\n",
    "ports/1/sm_sl": "0\n",
}


def test_lid_files_of_an_ib_port() -> None:
    (device,) = parse_tree(LID_FILES, "sys/class/infiniband/mlx5_0").devices
    (port,) = device.ports
    assert (port.lid, port.sm_lid, port.lid_mask_count, port.sm_sl) == (26, 1, 0, 0)
    assert dump_tree(parse_tree(LID_FILES)) == LID_FILES  # written back as the kernel prints them
    roce = parse_tree({"ports/1/lid": "0x0\n", "ports/1/sm_lid": "0x0\n", "ports/1/link_layer": "Ethernet\n"})
    assert (roce.devices[0].ports[0].lid, roce.devices[0].ports[0].sm_lid) == (0, 0)  # 0 kept: the file says so
    assert parse_tree({"ports/1/lid": "0xBFFF\n", "ports/1/sm_lid": "0xffff"}).devices[0].ports[0].lid == 0xBFFF


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("lid", "26", "0x<hex> up to 0xffff in lid"),  # decimal: not what the kernel prints
        ("lid", "0x10000", "0x<hex> up to 0xffff in lid"),  # more than 16 bits
        ("sm_lid", "0xg1", "in sm_lid"),
        ("sm_lid", "", "in sm_lid"),  # an empty read
        ("lid_mask_count", "8", "a number 0..7 in lid_mask_count"),
        ("sm_sl", "0x1", "a number 0..15 in sm_sl"),
    ],
)
def test_a_bad_lid_file_costs_that_value_only(name: str, value: str, message: str) -> None:
    from unifab.errors import ParseProblems

    files = {**LID_FILES, f"ports/1/{name}": value + "\n"}
    with pytest.raises(ParseError) as info:
        parse_tree(files, "sys/class/infiniband/mlx5_0")
    assert (info.value.source, info.value.line) == (f"sys/class/infiniband/mlx5_0/ports/1/{name}", 1)
    assert message in info.value.expected
    log = ParseProblems("sys/class/infiniband/mlx5_0")
    (port,) = parse_tree(files, "sys/class/infiniband/mlx5_0", log).devices[0].ports
    (problem,) = log.problems
    assert problem.skipped == f"ports/1/{name}" and problem.source.endswith(f"ports/1/{name}")
    good = parse_tree(LID_FILES).devices[0].ports[0]
    assert getattr(port, name) is None and port.state == "ACTIVE"
    others = [f for f in ("lid", "sm_lid", "lid_mask_count", "sm_sl") if f != name]
    assert [getattr(port, f) for f in others] == [getattr(good, f) for f in others]


# Reconstructed ``show_counters mlx5_2`` (no sample of ours): the mlnx-tools script prints
# "Port <p> hw counters:" and "<file>: <value>" for hw_counters/*, then "Port <p> cm counters:" and
# the files of each /sys/class/infiniband_cm/<dev>/<p>/<group>/ in ls order (names repeat per group).
CM_FILES = ("apr", "dreq", "drep", "lap", "mra", "rej", "rep", "req", "rtu", "sidr_rep", "sidr_req")
SHOW_COUNTERS = (
    "Port 1 hw counters:\n"
    "duplicate_request: 0\n"
    "lifespan: 10\n"
    "local_ack_timeout_err: 3\n"
    "np_cnp_sent: 1200\n"
    "np_ecn_marked_roce_packets: 1180\n"
    "out_of_sequence: 7\n"
    "rp_cnp_handled: 950\n"
    "Port 1 cm counters:\n" + "".join(f"{name}: {g * 100 + i}\n" for g in range(4) for i, name in enumerate(CM_FILES))
)


def test_show_counters() -> None:
    (device,) = parse(SHOW_COUNTERS, "show_counters.txt").devices
    (port,) = device.ports
    assert device.name is None and port.port == 1 and port.lifespan_ms == 10
    assert port.hw_counters == {
        "duplicate_request": 0,
        "local_ack_timeout_err": 3,
        "np_cnp_sent": 1200,
        "np_ecn_marked_roce_packets": 1180,
        "out_of_sequence": 7,
        "rp_cnp_handled": 950,
    }
    assert len(port.cm_counters) == 44
    assert port.cm_counters["cm_rx_duplicates/apr"] == 0 and port.cm_counters["cm_rx_msgs/req"] == 107
    assert port.cm_counters["cm_tx_retries/sidr_req"] == 310
    assert {k.split("/")[0] for k in port.cm_counters} == set(CM_GROUPS)


def test_show_counters_two_ports() -> None:
    raw = "Port 1 hw counters:\nout_of_sequence: 1\nPort 2 hw counters:\nout_of_sequence: 2\n"
    assert [(p.port, p.hw_counters) for p in parse(raw).devices[0].ports] == [
        (1, {"out_of_sequence": 1}),
        (2, {"out_of_sequence": 2}),
    ]


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("mlx5_0/ports/1/state", "ACTIVE", "'<number>: <name>' in state"),
        ("mlx5_0/ports/1/rate", "400 Gbps", "Gb/sec"),
        ("mlx5_0/ports/1/hw_counters/out_of_sequence", "-1", "unsigned integer in hw_counters/out_of_sequence"),
        ("mlx5_0/ports/1/link_layer", "", "empty file"),
    ],
)
def test_tree_errors_name_the_file(samples: Path, path: str, value: str, message: str) -> None:
    files = read_tree(samples / TREE) | {path: value}
    with pytest.raises(ParseError) as info:
        parse_class_tree(files, "sys/class/infiniband")
    assert info.value.source == f"sys/class/infiniband/{path}" and info.value.line == 1
    assert message in info.value.expected


def test_flat_errors_name_the_line(samples: Path) -> None:
    lines = (samples / FLAT).read_text().split("\n")
    lines[40] = lines[40].split(":")[0] + ": lots"
    with pytest.raises(ParseError) as info:
        parse("\n".join(lines), FLAT)
    assert (info.value.source, info.value.line) == (FLAT, 41) and "unsigned integer" in info.value.expected
    with pytest.raises(ParseError) as info:
        parse("mlx5_0/fw_ver: 1\nmlx5_0/board_id MT_1\n", FLAT)
    assert info.value.line == 2 and "path: value" in info.value.expected
    with pytest.raises(ParseError) as info:
        parse("mlx5_0/fw_ver: 1\nmlx5_0/fw_ver: 2\n", FLAT)
    assert info.value.line == 2 and "once" in info.value.expected


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        ("out_of_sequence: 1\nPort 1 hw counters:\n", 1, "Port <p> hw counters:"),
        ("Port 1 hw counters:\nout_of_sequence: x\n", 2, "unsigned integer"),
        ("Port 1 hw counters:\nout_of_sequence 1\n", 2, "'<counter>: <value>'"),
        ("Port 1 hw counters:\nout_of_sequence: 1\nout_of_sequence: 2\n", 3, "once per port"),
        ("Port 1 cm counters:\n" + "req: 1\n" * 5, 6, "at most 4 runs"),
    ],
)
def test_show_counters_errors(raw: str, line: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(raw, "show_counters.txt")
    assert info.value.line == line and message in info.value.expected


@pytest.mark.parametrize("files", [{}, {"node_guid": "x"}, {"mlx5_0": "file at the top"}])
def test_tree_with_nothing_to_read(files: dict[str, str]) -> None:
    with pytest.raises(ParseError):
        parse_tree(files, "tree")


@pytest.mark.parametrize("raw", ["", "\n", "# only a comment\n"])
def test_empty_text(raw: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(raw, "x")
    assert info.value.line == 1 and "empty" in info.value.expected


# --- round trip and fuzz --------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True).filter(lambda s: s != "lifespan")
COUNTS = st.dictionaries(NAMES, st.integers(0, 2**64 - 1), max_size=5)


@st.composite
def ports(draw: st.DrawFn, number: int) -> IbPort:
    rate = draw(st.none() | st.integers(1, 12800).map(lambda h: h / 2))  # the kernel prints N or N.5
    width = None if rate is None else draw(st.none() | st.sampled_from(["1X", "2X", "4X", "8X", "12X"]))
    return IbPort(
        port=number,
        state=draw(st.none() | st.sampled_from(sorted(PORT_STATES.values()))),
        phys_state=draw(st.none() | st.sampled_from(sorted(PHYS_STATES.values()))),
        rate_gbps=rate,
        width=width,
        speed=None if width is None else draw(st.none() | st.sampled_from(["QDR", "FDR", "EDR", "HDR", "NDR", "XDR"])),
        link_layer=draw(st.none() | st.sampled_from(["InfiniBand", "Ethernet"])),
        lifespan_ms=draw(st.none() | st.integers(0, 10_000)),
        hw_counters=dict(sorted(draw(COUNTS).items())),
        counters=dict(sorted(draw(COUNTS).items())),
        cm_counters={},
        lid=draw(st.none() | st.integers(0, 0xFFFF)),
        sm_lid=draw(st.none() | st.integers(0, 0xFFFF)),
        lid_mask_count=draw(st.none() | st.integers(0, 7)),
        sm_sl=draw(st.none() | st.integers(0, 15)),
    )


@st.composite
def devices(draw: st.DrawFn, name: str | None) -> IbDevice:
    numbers = draw(st.lists(st.integers(1, 4), unique=True, max_size=2).map(sorted))
    built = tuple(p for p in (draw(ports(n)) for n in numbers) if p != hw_counters._empty_port(p.port))
    word = st.none() | st.from_regex(r"[A-Za-z0-9_.]{1,12}", fullmatch=True)
    return IbDevice(name, draw(word), draw(word), draw(word), built)


@st.composite
def records(draw: st.DrawFn) -> HwCounters:
    if draw(st.booleans()):
        device = draw(devices(None))
        return HwCounters((device,))
    names = draw(st.lists(st.sampled_from(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10", "mlx5_bond_0"]), unique=True))
    built = [draw(devices(n)) for n in names]
    return HwCounters(tuple(sorted(built, key=lambda d: hw_counters._natural(d.name))))


def _readable(record: HwCounters) -> bool:
    """A record whose files say something (an empty device cannot be written)."""
    return all(d != IbDevice(d.name, None, None, None, ()) for d in record.devices) and bool(record.devices)


@settings(max_examples=200, deadline=None)
@given(records())
def test_round_trip(record: HwCounters) -> None:
    if not _readable(record):
        return
    assert parse_tree(dump_tree(record)) == record
    assert parse(dump(record)) == record


def _only_parse_errors(call: Callable[[], object], source: str, raw: str = "") -> None:
    try:
        call()
    except ParseError as exc:
        assert exc.source.startswith(source) and exc.expected
        assert exc.line is None or 1 <= exc.line <= raw.count("\n") + 2


PATHS = st.sampled_from(
    [
        "fw_ver",
        "ports/1/state",
        "ports/1/phys_state",
        "ports/1/rate",
        "ports/1/link_layer",
        "ports/1/lid",
        "ports/1/sm_lid",
        "ports/1/lid_mask_count",
        "ports/1/hw_counters/out_of_sequence",
        "ports/1/hw_counters/lifespan",
        "ports/2/counters/symbol_error",
        "mlx5_0/ports/1/rate",
        "mlx5_0/ports/x/rate",
        "",
        "/",
    ]
) | st.text(max_size=20)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(PATHS, st.text(max_size=30), max_size=6))
def test_random_trees_raise_only_parse_errors(files: dict[str, str]) -> None:
    _only_parse_errors(lambda: parse_tree(files, "fuzz"), "fuzz")
    _only_parse_errors(lambda: parse_class_tree(files, "fuzz"), "fuzz")
