"""Row-based host parsers read past a bad row: one corrupted row of a real sample costs that row only.

Each case starts from a real capture (tests/data/samples/host, tests/data/wild/host; the ibv_devinfo and
nvidia-smi topo captures are the real ones kept as fuzz seeds, tests/parse/fuzz_seeds), corrupts one row,
and checks that

* without a collector the parser still raises ParseError naming that line (``unifab parse`` is unchanged),
* with a collector it names that line and reads every other row exactly as in the unharmed file,
* a file whose every row is bad still raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host import (
    ethtool_pause,
    ethtool_stats,
    ibdev2netdev,
    ibv_devinfo,
    ip_link,
    lldpcli,
    lspci,
    nvidia_smi_topo,
    nvlink_status,
    rdma_statistic,
    show_gids,
    traffic_class,
)

DATA = Path(__file__).resolve().parents[2] / "data"
SEEDS = Path(__file__).resolve().parents[1] / "fuzz_seeds"


def _text(rel: str) -> str:
    root = SEEDS if rel.startswith("seed:") else DATA
    return (root / rel.removeprefix("seed:")).read_text(encoding="utf-8")


def _corrupt(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


def _drop(text: str, first: int, last: int | None = None) -> str:
    lines = text.split("\n")
    del lines[first - 1 : (last or first)]
    return "\n".join(lines)


def _line_of(text: str, pattern: str, nth: int = 0) -> int:
    hits = [n for n, line in enumerate(text.split("\n"), start=1) if re.search(pattern, line)]
    return hits[nth]


def _lenient(parser: Callable[..., Any], text: str) -> tuple[Any, ParseProblems]:
    log = ParseProblems("sample")
    return parser(text, "sample", log), log


def _one_problem_at(log: ParseProblems, line: int) -> None:
    (problem,) = log.problems
    assert problem.line == line and problem.source == "sample", problem
    assert problem.expected and problem.skipped


# (parser, sample, regex of the line to corrupt, what to write there, lines of the row from that one)
LINE_ROWS: list[tuple[Callable[..., Any], str, str, str, int]] = [
    (
        ethtool_stats.parse,
        "wild/host/ethtool_S_mlx5_grep_blocks_realistic.txt",
        r"rx_prio3_pause:",
        "  rx_prio3_pause: 4x",
        1,
    ),
    (ethtool_stats.parse, "wild/host/lolyu_aoi_ethtool_S_tg3_fenced.txt", r"^\s+\w+: \d+$", "     rx_octets 0", 1),
    (ibdev2netdev.parse, "samples/host/ibdev2netdev_cx4lx.txt", r"mlx5_2", "mlx5_2 port one ==> eth03 (Up)", 1),
    (nvlink_status.parse, "samples/host/nvidia_smi_nvlink_status_a100.txt", r"Link 3:", "         Link 3: fast", 1),
    (ip_link.parse, "samples/host/ntc_linux_ip_link_show.raw", r"^4: br-", "4: br-218f5e637867: <UP> mtux 1500", 2),
    (ip_link.parse, "samples/host/ubuntu-16.04_edge01_ip_-d_address_show.txt", r"^3: ", "3 eth1: <UP> mtu 1500", 0),
]


@pytest.mark.parametrize(
    ("parser", "rel", "pattern", "bad", "span"),
    LINE_ROWS,
    ids=[f"{p.__module__.rsplit('.', 1)[-1]}-{Path(r).stem}" for p, r, *_ in LINE_ROWS],
)
def test_one_bad_line_costs_its_row(parser: Callable[..., Any], rel: str, pattern: str, bad: str, span: int) -> None:
    text = _text(rel)
    line = _line_of(text, pattern)
    broken = _corrupt(text, line, bad)
    with pytest.raises(ParseError) as strict:
        parser(broken, "sample")
    assert strict.value.line == line
    got, log = _lenient(parser, broken)
    _one_problem_at(log, line)
    if span == 0:  # an ip link block: the header and every indented line under it
        lines = text.split("\n")
        span = 1 + next((i for i, raw in enumerate(lines[line:]) if raw and not raw[0].isspace()), len(lines) - line)
    assert got == parser(_drop(text, line, line + span - 1), "sample")
    assert got != parser(text, "sample")


def test_ethtool_stats_a_repeated_counter_costs_the_repeat() -> None:
    text = _text("wild/host/ethtool_S_mlx5_grep_blocks_realistic.txt")
    line = _line_of(text, r"rx_prio3_pause:")
    got, log = _lenient(ethtool_stats.parse, text + "\n     rx_prio3_pause: 7\n")
    assert got == ethtool_stats.parse(text) and log.problems[0].expected == "expected rx_prio3_pause once"
    assert log.problems[0].line == text.count("\n") + 2 != line


def test_show_gids_bad_row_is_counted_by_the_footer() -> None:
    text = _text("samples/host/show_gids_husky.txt")
    line = _line_of(text, r"\t2\t0000:")
    broken = _corrupt(text, line, text.split("\n")[line - 1].replace("c0a8:d3f2", "c0a8:d3"))
    with pytest.raises(ParseError) as strict:
        show_gids.parse(broken)
    assert strict.value.line == line
    got, log = _lenient(show_gids.parse, broken)
    _one_problem_at(log, line)
    whole = show_gids.parse(text)
    assert got == tuple(g for g in whole if g.index != 2) and len(got) == len(whole) - 1
    assert "GID" in log.problems[0].expected


def test_rdma_statistic_bad_value_costs_that_counter() -> None:
    text = _text("samples/host/rdma_statistic_optional_counters_rocep8s0f0.txt")
    line = _line_of(text, r"\bout_of_sequence 0")
    broken = _corrupt(text, line, text.split("\n")[line - 1].replace("out_of_sequence 0", "out_of_sequence x", 1))
    with pytest.raises(ParseError) as strict:
        rdma_statistic.parse(broken)
    assert strict.value.line == line
    got, log = _lenient(rdma_statistic.parse, broken)
    _one_problem_at(log, line)
    (whole,) = rdma_statistic.parse(text).links
    (link,) = got.links
    assert link.counters == {k: v for k, v in whole.counters.items() if k != "out_of_sequence"}
    assert "out_of_sequence" in log.problems[0].skipped


def test_ibv_devinfo_bad_value_costs_that_device() -> None:
    text = _text("seed:ibv-devinfo/three_devices.txt")
    line = _line_of(text, r"active_mtu", nth=1)
    broken = _corrupt(text, line, text.split("\n")[line - 1].replace("(", "[", 1))
    with pytest.raises(ParseError) as strict:
        ibv_devinfo.parse(broken)
    assert strict.value.line == line
    got, log = _lenient(ibv_devinfo.parse, broken)
    _one_problem_at(log, line)
    whole = ibv_devinfo.parse(text)
    assert got == (whole[0], whole[2]) and whole[1].hca_id in log.problems[0].skipped


@pytest.mark.parametrize("seed", ["h100_8nic.txt", "old_4gpu.txt"])
def test_nvidia_smi_topo_bad_row_costs_that_row(seed: str) -> None:
    text = _text(f"seed:nvidia-smi-topo/{seed}")
    line = _line_of(text, r"^\S*GPU1\s")
    broken = _corrupt(
        text, line, re.sub(r"\bSYS\b|\bNODE\b|\bPIX\b|\bSOC\b|\bPHB\b", "S-Y", text.split("\n")[line - 1], count=1)
    )
    with pytest.raises(ParseError) as strict:
        nvidia_smi_topo.parse(broken)
    assert strict.value.line == line
    got, log = _lenient(nvidia_smi_topo.parse, broken)
    _one_problem_at(log, line)
    whole = nvidia_smi_topo.parse(text)
    assert "GPU1" not in got.matrix and {k: v for k, v in whole.matrix.items() if k != "GPU1"} == got.matrix
    assert got.numa_affinity == {k: v for k, v in whole.numa_affinity.items() if k != "GPU1"}
    assert got.nic_legend == whole.nic_legend


@pytest.mark.parametrize(
    "rel", ["samples/host/lldpcli_neighbors_details_switch.json", "samples/host/lldpcli_neighbors_details_host.json"]
)
def test_lldpcli_json_bad_neighbour_costs_that_neighbour(rel: str) -> None:
    doc = json.loads(_text(rel))
    interfaces = doc["lldp"]["interface"]
    whole = lldpcli.parse(_text(rel))
    if not isinstance(interfaces, list) or len(interfaces) < 2:
        pytest.fail(f"{rel}: expected several neighbours to corrupt one of")
    ((port, body),) = interfaces[1].items()
    body["port"]["ttl"] = "forever"
    broken = json.dumps(doc)
    with pytest.raises(ParseError, match="unsigned integer"):
        lldpcli.parse(broken)
    got, log = _lenient(lldpcli.parse, broken)
    (problem,) = log.problems
    assert problem.key is not None and problem.key.startswith("lldp.interface[1]") and port in problem.key
    assert got == whole[:1] + whole[2:]


def test_lldpcli_keyvalue_bad_neighbour_costs_that_neighbour() -> None:
    text = _text("samples/host/lldpcli_neighbors_details_switch.keyvalue.txt")
    whole = lldpcli.parse(text)
    second = whole[1].local_port
    line = _line_of(text, rf"^lldp\.{re.escape(second)}\.port\.ttl=")
    broken = _corrupt(text, line, f"lldp.{second}.port.ttl=soon")
    got, log = _lenient(lldpcli.parse, broken)
    _one_problem_at(log, line)
    assert got == whole[:1] + whole[2:]


def test_small_files_keep_what_has_no_unknown() -> None:
    """ethtool -a and traffic_class: an unknown line is skipped, but a bad required value still raises
    (the record would otherwise say "off" / "no override" where nothing was read)."""
    pause = "Pause parameters for eth3:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\toff\nWhatever:\tx\n"
    got, log = _lenient(ethtool_pause.parse, pause)
    assert (got.rx, got.tx) == (True, False) and log.problems[0].line == 5
    with pytest.raises(ParseError):
        _lenient(ethtool_pause.parse, pause.replace("RX:\t\ton", "RX:\t\tmaybe"))
    tc = "Global tclass=106\ndst_ip=10.0.0.0/8,tclass=96\ndst_ip=10.1.0.0/16,tclass=999\n"
    got_tc, log = _lenient(traffic_class.parse, tc)
    assert got_tc.global_tclass == 106 and len(got_tc.rules) == 1 and log.problems[0].line == 3
    with pytest.raises(ParseError):
        _lenient(traffic_class.parse, "Global tclass=x\n")


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (ethtool_stats.parse, "NIC statistics:\n     a: x\n     b: y\n"),
        (ibdev2netdev.parse, "garbage\nmore garbage\n"),
        (ip_link.parse, "x: y\nz\n"),
        (nvlink_status.parse, "GPU x\n"),
        (rdma_statistic.parse, "nonsense\n"),
        (lldpcli.parse, '{"lldp": {"interface": [{"a": 1, "b": 2}]}}'),
        (show_gids.parse, "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\nmlx5_0\tx\n"),
    ],
)
def test_a_file_with_nothing_usable_still_raises(parser: Callable[..., Any], text: str) -> None:
    with pytest.raises(ParseError):
        _lenient(parser, text)


def test_lldpcli_xml_bad_neighbour_costs_that_neighbour() -> None:
    from unifab.parse.host import lldpcli_xml

    text = _text("samples/host/lldpcli_neighbors_details_host.xml")
    whole = lldpcli_xml.parse(text)
    line = _line_of(text, r"<ttl ", nth=1)
    broken = _corrupt(text, line, text.split("\n")[line - 1].replace(">120<", ">soon<"))
    with pytest.raises(ParseError) as strict:
        lldpcli_xml.parse(broken)
    assert strict.value.line == line
    got, log = _lenient(lldpcli_xml.parse, broken)
    _one_problem_at(log, line)
    assert got == whole[:1] + whole[2:]


# Every line of a real capture in turn replaced by garbage: the parser raises only ParseError (the file then has
# nothing usable, or the line was the header/footer the format needs), or it names that line and nothing else.
EVERY_LINE: list[tuple[Callable[..., Any], str]] = [
    (ethtool_stats.parse, "wild/host/ethtool_S_mlx5_grep_blocks_realistic.txt"),
    (ibdev2netdev.parse, "samples/host/ibdev2netdev_cx4lx.txt"),
    (show_gids.parse, "samples/host/show_gids_husky.txt"),
    (nvlink_status.parse, "samples/host/nvidia_smi_nvlink_status_a100.txt"),
    (rdma_statistic.parse, "samples/host/rdma_statistic_optional_counters_rocep8s0f0.txt"),
    (ip_link.parse, "samples/host/ntc_linux_ip_link_show.raw"),
    (lspci.parse, "samples/host/lspci_vvv_excerpt_h100_cx7_pcieswitch.txt"),
]  # (lldpcli keyvalue is not here: a line without '=' continues the value above, so any text line is valid)


@pytest.mark.parametrize(
    ("parser", "rel"), EVERY_LINE, ids=[f"{p.__module__.rsplit('.', 1)[-1]}-{Path(r).stem}" for p, r in EVERY_LINE]
)
def test_every_single_bad_line_is_named_or_fatal(parser: Callable[..., Any], rel: str) -> None:
    text = _text(rel)
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        broken = _corrupt(text, line, "\x01 not a row of this format \x01")
        log = ParseProblems("sample")
        try:
            parser(broken, "sample", log)
        except ParseError:
            continue
        assert log.problems, (rel, line)
        assert {p.line for p in log.problems} <= {line, None}, (rel, line, [str(p) for p in log.problems])


def test_hw_counters_tree_a_bad_counter_file_costs_that_counter() -> None:
    """A real H100 sysfs copy: one hw_counters file garbled; that counter is skipped, named by its file, and
    every other value of the tree reads as before. Without a collector the tree is still refused."""
    from unifab.parse.host import hw_counters

    root = DATA / "samples" / "host" / "sysfs_class_infiniband_h100" / "mlx5_4"
    files = {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
    bad = "ports/1/hw_counters/roce_slow_restart_cnps"
    broken = {**files, bad: "lots\n"}
    with pytest.raises(ParseError) as strict:
        hw_counters.parse_tree(broken, "mlx5_4")
    assert strict.value.source == f"mlx5_4/{bad}"
    log = ParseProblems("mlx5_4")
    got = hw_counters.parse_tree(broken, "mlx5_4", log)
    (problem,) = log.problems
    assert problem.source == f"mlx5_4/{bad}" and problem.skipped == bad
    whole = hw_counters.parse_tree(files, "mlx5_4")
    (port,), (whole_port,) = got.devices[0].ports, whole.devices[0].ports
    assert "roce_slow_restart_cnps" in whole_port.hw_counters
    assert port.hw_counters == {k: v for k, v in whole_port.hw_counters.items() if k != "roce_slow_restart_cnps"}
    assert port.counters == whole_port.counters and port.state == whole_port.state


LSPCI = "samples/host/lspci_vvv_excerpt_h100_cx7_pcieswitch.txt"


@pytest.mark.parametrize(
    ("pattern", "bad"), [(r"^\t\tLnkCap:\t", "\t\tLnkCap:\tPort #3, Speed fast"), (r"^\tNUMA", "\tNUMA node: x")]
)
def test_lspci_a_bad_device_block_costs_that_device(pattern: str, bad: str) -> None:
    """A real lspci -vvv (PCIe switch, H100, CX-7): one bad line costs the device whose block holds it,
    named by its BDF; the other devices read as in the unharmed file."""
    text = _text(LSPCI)
    line = _line_of(text, pattern)
    broken = _corrupt(text, line, bad)
    with pytest.raises(ParseError) as strict:
        lspci.parse(broken, "sample")
    assert strict.value.line == line
    got, log = _lenient(lspci.parse, broken)
    _one_problem_at(log, line)
    whole = lspci.parse(text)
    lines = text.split("\n")
    header = next(raw for raw in reversed(lines[:line]) if raw and raw[0] not in " \t")
    lost = lspci.normalize_bdf(header.split(" ", 1)[0])
    assert log.problems[0].skipped == f"PCI device {lost}"
    assert [d.bdf for d in got.devices] == [d.bdf for d in whole.devices if d.bdf != lost]
    kept = {d.bdf: d for d in got.devices}
    for d in whole.devices:  # a child of the lost bridge loses only its parent link
        if d.bdf != lost:
            assert kept[d.bdf] == (d if d.parent != lost else replace(d, parent=None))


def test_lspci_a_bad_header_costs_its_block_and_every_bad_block_is_fatal() -> None:
    text = _text(LSPCI)
    headers = [n for n, raw in enumerate(text.split("\n"), start=1) if raw and raw[0] not in " \t"]
    broken = _corrupt(text, headers[1], "$ lspci -vvv -s 1a:00.0")
    got, log = _lenient(lspci.parse, broken)
    _one_problem_at(log, headers[1])
    assert log.problems[0].skipped == f"the device block at line {headers[1]}"
    assert len(got.devices) == len(lspci.parse(text).devices) - 1
    every = text
    for n in headers:
        every = _corrupt(every, n, "not a device")
    with pytest.raises(ParseError):
        lspci.parse(every, "sample", ParseProblems("sample"))
    repeated = text + "\n" + "\n".join(text.split("\n")[headers[0] - 1 : headers[1] - 1])
    got, log = _lenient(lspci.parse, repeated)  # a device printed twice: the repeat is skipped
    assert got == lspci.parse(text) and "again" in log.problems[0].expected
