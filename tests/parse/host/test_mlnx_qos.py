"""Tests for the ``mlnx_qos -i <netdev>`` parser: real samples, constructed variants, errors, round trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sample_edit import replace_line

from unifab.errors import ParseError, ParseProblems
from unifab.jsonify import to_jsonable
from unifab.parse.host import mlnx_qos
from unifab.parse.host.mlnx_qos import Buffers, MlnxQos, TcConfig, dump, parse

GOLDEN = Path(__file__).parent / "golden"
CX4 = "host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"
HUSKY = "host/mlnx_qos_os_dcbx_husky_partial.txt"

DEFAULT_MAP = {d: d >> 3 for d in range(64)}  # what `mlnx_qos --trust dscp` installs


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "t.txt")
    return info.value


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden"),
    [(CX4, "mlnx_qos_os_dcbx_tsa_vendor_cx4.json"), (HUSKY, "mlnx_qos_os_dcbx_husky_partial.json")],
)
def test_golden(samples: Path, sample: str, golden: str) -> None:
    record = parse((samples / sample).read_text(), sample)
    assert to_jsonable(record) == json.loads((GOLDEN / golden).read_text())


def test_cx4_values(samples: Path) -> None:
    q = parse((samples / CX4).read_text())
    assert (q.dcbx, q.trust, q.cable_len, q.buffers, q.notices) == ("os", "dscp", 7, None, ())
    assert q.pfc_enabled == (3,)
    assert q.dscp2prio == DEFAULT_MAP and q.dscp2prio[26] == 3
    assert q.prio_tc == {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    assert [t.tc for t in q.tcs] == list(range(8))
    assert {(t.tsa, t.bw, t.ratelimit_gbps) for t in q.tcs} == {("vendor", None, None)}


def test_husky_partial_missing_sections_are_empty(samples: Path) -> None:
    q = parse((samples / HUSKY).read_text())
    assert (q.dcbx, q.trust, q.dscp2prio) == ("os", "dscp", DEFAULT_MAP)
    assert (q.pfc_enabled, q.prio_tc, q.tcs, q.buffers, q.cable_len) == ((), {}, (), None, None)


def test_render_reproduces_samples(samples: Path) -> None:
    husky = (samples / HUSKY).read_text()
    assert dump(parse(husky)) == husky  # real TABs: byte for byte
    cx4 = (samples / CX4).read_text()
    assert dump(parse(cx4)).expandtabs(8) == cx4  # the note author expanded the TABs


@pytest.mark.parametrize("sample", [CX4, HUSKY])
def test_samples_round_trip(samples: Path, sample: str) -> None:
    q = parse((samples / sample).read_text())
    assert parse(dump(q)) == q


# --- constructed variants -------------------------------------------------------------------------

FW_BUFFERS = text(
    "DCBX mode: Firmware controlled",
    "Priority trust state: dscp",
    "dscp2prio mapping:",
    "\tprio:0 dscp:07,06,05,04,03,02,01,00,",
    "\tprio:3 dscp:26,",
    "\tprio:6 dscp:48,",
    "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016",
    "Cable len: 7",
    "PFC configuration:",
    "\tpriority    0   1   2   3   4   5   6   7",
    "\tenabled     0   0   0   1   0   0   0   0   ",
    "\tbuffer      0   0   0   1   0   0   0   0   ",
    "tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%",
    "\t priority:  0",
    "\t priority:  1",
    "\t priority:  2",
    "\t priority:  4",
    "\t priority:  5",
    "\t priority:  7",
    "tc: 3 ratelimit: 25.5 Gbps, tsa: ets, bw: 50%",
    "\t priority:  3",
    "tc: 6 ratelimit: unlimited, tsa: strict",
    "\t priority:  6",
)


def test_firmware_dcbx_buffers_ets_and_rate() -> None:
    q = parse(FW_BUFFERS)
    assert q.dcbx == "fw"
    assert q.dscp2prio == {**dict.fromkeys(range(8), 0), 26: 3, 48: 6}
    assert q.buffers == Buffers((130944, 130944, 0, 0, 0, 0, 0, 0), 262016, (0, 0, 0, 1, 0, 0, 0, 0))
    assert q.pfc_enabled == (3,)
    assert q.tcs == (
        TcConfig(0, "ets", 50, None, (0, 1, 2, 4, 5, 7)),
        TcConfig(3, "ets", 50, 25.5, (3,)),
        TcConfig(6, "strict", None, None, (6,)),
    )
    assert q.prio_tc == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert dump(q) == FW_BUFFERS


def test_buffer_total_variants() -> None:
    # sysfs-era mlnx_qos prints no total; an older one called it total_size.
    none = FW_BUFFERS.replace("max_buffer_size=262016", "")
    old = FW_BUFFERS.replace("max_buffer_size", "total_size")
    buffers_none, buffers_old = parse(none).buffers, parse(old).buffers
    assert buffers_none is not None and buffers_none.max_buffer_size is None
    assert buffers_old is not None and buffers_old.max_buffer_size == 262016
    assert dump(parse(none)) == none


WRAPPED = text(
    "DCBX mode: OS controlled",
    "Priority trust state: dscp",
    "dscp2prio mapping:",
    "\tprio:0 dscp:63,62,61,60,59,58,57,56,",
    "\tprio:0 dscp:55,54,53,52,51,50,49,48,",
    "\tprio:0 dscp:47,45,44,43,42,41,40,39,",
    "\tprio:0 dscp:38,37,36,35,34,33,32,31,",
    "\tprio:0 dscp:30,29,28,27,25,24,23,22,",
    "\tprio:0 dscp:21,20,19,18,17,16,15,14,",
    "\tprio:0 dscp:13,12,11,10,09,08,07,06,",
    "\tprio:0 dscp:05,04,03,02,01,00,",
    "\tprio:3 dscp:26,",
    "\tprio:5 dscp:46,",
)


def test_wrapped_dscp2prio_lines_add_up() -> None:
    q = parse(WRAPPED)
    assert q.dscp2prio == {d: {26: 3, 46: 5}.get(d, 0) for d in range(64)}
    assert dump(q) == WRAPPED  # descending, 8 per line, the rest on another prio:0 line


# Shape seen in a public capture after `--dscp2prio set,30,6` (sysfs-era buffers, no total): the moved DSCP
# comes first, so a wrapped line is not in descending order.
MOVED_DSCP = text(
    "DCBX mode: OS controlled",
    "Priority trust state: dscp",
    "dscp2prio mapping:",
    "        prio:0 dscp:07,06,05,04,03,02,01,00,",
    "        prio:1 dscp:15,14,13,12,11,10,09,08,",
    "        prio:2 dscp:23,22,21,20,19,18,17,16,",
    "        prio:3 dscp:31,29,28,27,26,25,24,",
    "        prio:4 dscp:39,38,37,36,35,34,33,32,",
    "        prio:5 dscp:47,46,45,44,43,42,41,40,",
    "        prio:6 dscp:30,55,54,53,52,51,50,49,",
    "        prio:6 dscp:48,",
    "        prio:7 dscp:63,62,61,60,59,58,57,56,",
    "Receive buffer size (bytes): 80256,80256,896,80256,896,896,896,896,",
    "Cable len: 7",
    "PFC configuration:",
    "        priority    0   1   2   3   4   5   6   7",
    "        enabled     0   0   0   1   0   0   0   0   ",
    "        buffer      0   2   5   7   1   2   3   6   ",
    "tc: 0 ratelimit: unlimited, tsa: vendor",
    "         priority:  1",
    "tc: 1 ratelimit: unlimited, tsa: vendor",
    "         priority:  0",
)


def test_wrapped_line_in_any_order() -> None:
    q = parse(MOVED_DSCP)
    assert q.dscp2prio == {**DEFAULT_MAP, 30: 6}
    assert q.buffers == Buffers((80256, 80256, 896, 80256, 896, 896, 896, 896), None, (0, 2, 5, 7, 1, 2, 3, 6))
    out = dump(q)
    assert "\tprio:6 dscp:55,54,53,52,51,50,49,48,\n\tprio:6 dscp:30,\n" in out
    assert parse(out) == q


def test_old_skprio_lines_are_skipped() -> None:
    # Early mlnx_qos (tc_wrap era): no DCBX/trust lines, skprio lists under each TC.
    raw = text(
        "PFC configuration:",
        "\tpriority    0   1   2   3   4   5   6   7",
        "\tenabled     0   0   0   0   0   0   0   0",
        "",
        "tc: 0 ratelimit: unlimited, tsa: vendor",
        "\t priority:  1",
        "tc: 1 ratelimit: unlimited, tsa: vendor",
        "\t priority:  0",
        "\t skprio: 0",
        "\t skprio: 2 (tos: 8)",
    )
    q = parse(raw)
    assert (q.dcbx, q.trust, q.prio_tc) == (None, None, {0: 1, 1: 0})


def test_exactly_eight_dscps_stay_on_one_line() -> None:
    q = MlnxQos(None, "dscp", dict.fromkeys(range(8), 2), (), {}, (), None, None, ())
    assert dump(q) == text("Priority trust state: dscp", "dscp2prio mapping:", "\tprio:2 dscp:07,06,05,04,03,02,01,00,")


NOTICES = text(
    "****** WARNING: lldpad service is running and may overwrite your settings ******",
    "",
    "Priority trust state is not supported on your system",
    "Buffers commands are not supported on your system",
    "DCBX mode: OS controlled",
    "Priority trust state: none",
    "Cable len: 0",
    "PFC configuration:",
    "\tpriority    0   1   2   3   4   5   6   7",
    "\tenabled     0   0   0   0   0   0   0   0   ",
    "tc: 0 ratelimit: unlimited, tsa: strict",
    "\t priority:  0",
    "\t priority:  1",
    "\t priority:  2",
    "\t priority:  3",
    "\t priority:  4",
    "\t priority:  5",
    "\t priority:  6",
    "\t priority:  7",
)


def test_notices_before_dcbx() -> None:
    q = parse(NOTICES)
    assert q.notices == (
        mlnx_qos.LLDPAD_WARNING,
        "Priority trust state is not supported on your system",
        "Buffers commands are not supported on your system",
    )
    assert (q.dcbx, q.trust, q.dscp2prio, q.buffers, q.cable_len, q.pfc_enabled) == (
        "os",
        "none",
        {},
        None,
        0,
        (),
    )
    assert q.prio_tc == dict.fromkeys(range(8), 0)
    assert dump(q) == NOTICES


def test_notice_after_dcbx_is_an_error() -> None:
    err = parse_error(text("DCBX mode: OS controlled", "Buffers commands are not supported on your system"))
    assert err.line == 2 and "before 'DCBX mode:'" in err.expected


NO_RATE = text(
    "Rate limit is not supported on your system!",
    "DCBX mode: OS controlled",
    "Priority trust state: pcp",
    "Cable len: 7",
    "PFC configuration:",
    "\tpriority    0   1   2   3   4   5   6   7",
    "\tenabled     0   0   0   1   0   0   0   0   ",
    "ets, bw: 50%",
    "\t priority:  0",
    "\t priority:  1",
    "\t priority:  2",
    "ets, bw: 50%",
    "\t priority:  3",
    "strict",
    "vendor",
    "unknown",
    "\t priority:  4",
)


def test_tc_lines_without_prefix_take_tc_from_order() -> None:
    q = parse(NO_RATE)
    assert q.notices == (mlnx_qos.RATE_UNSUPPORTED,)
    assert q.tcs == (
        TcConfig(0, "ets", 50, None, (0, 1, 2)),
        TcConfig(1, "ets", 50, None, (3,)),
        TcConfig(2, "strict", None, None, ()),
        TcConfig(3, "vendor", None, None, ()),
        TcConfig(4, "unknown", None, None, (4,)),
    )
    assert q.prio_tc == {0: 0, 1: 0, 2: 0, 3: 1, 4: 4}
    assert dump(q) == NO_RATE


def test_trust_pcp_has_no_dscp2prio() -> None:
    q = parse(NO_RATE)
    assert (q.trust, q.dscp2prio) == ("pcp", {})


def test_all_tcs_mode_prints_empty_tcs() -> None:
    # `mlnx_qos -a`: every TC gets a line, unmapped ones have no priority lines under them.
    mapped = {0: 1, 1: 0, 2: 2, 3: 3}  # tc -> its one priority
    lines = ["DCBX mode: OS controlled", "Priority trust state: pcp"]
    for tc in range(8):
        lines.append(f"tc: {tc} ratelimit: unlimited, tsa: vendor")
        lines += [f"\t priority:  {mapped[tc]}"] if tc in mapped else []
    raw = text(*lines)
    q = parse(raw)
    assert [t.priorities for t in q.tcs] == [(1,), (0,), (2,), (3,), (), (), (), ()]
    assert q.prio_tc == {0: 1, 1: 0, 2: 2, 3: 3}
    assert dump(q) == raw


def test_tcs_keep_printed_order() -> None:
    # Python 3 mlnx_qos before `sorted(tc2up)` printed TCs in first-use order (prio 0 -> tc 1 first).
    q = parse(
        text(
            "tc: 1 ratelimit: unlimited, tsa: vendor",
            "\t priority:  0",
            "tc: 0 ratelimit: 1.0 Gbps, tsa: vendor",
        )
    )
    assert [t.tc for t in q.tcs] == [1, 0] and q.tcs[1].ratelimit_gbps == 1.0


def test_default_priority_section_is_skipped() -> None:
    raw = FW_BUFFERS.replace("Receive buffer", "default priority:\n\tprio:3\nReceive buffer")
    assert parse(raw) == parse(FW_BUFFERS)


def test_whitespace_variants_give_the_same_record() -> None:
    mangled = "\n\n" + FW_BUFFERS.expandtabs(8).replace(": ", ":   ").replace("\n", "  \r\n\r\n")
    assert parse(mangled) == parse(FW_BUFFERS)


def test_only_notices_is_valid() -> None:
    q = parse(
        text(
            "Buffers commands are not supported on your system",
            "ETS features are not supported on your system",
        )
    )
    assert q.dcbx is None and len(q.notices) == 2


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n", "  \r\n\t\n"])
def test_empty_text(raw: str) -> None:
    err = parse_error(raw)
    assert (err.source, err.line) == ("t.txt", 1) and "empty" in err.expected


def test_garbled_enabled_row() -> None:
    err = parse_error(FW_BUFFERS.replace("enabled     0   0   0   1", "enabled     0   0   01"))
    assert err.line == 11 and "expected 8 values 0..1 after 'enabled'" in err.expected
    assert str(err).startswith("t.txt:11: ")


def test_enabled_value_out_of_range() -> None:
    err = parse_error(FW_BUFFERS.replace("enabled     0   0   0   1", "enabled     0   0   0   2"))
    assert err.line == 11


def test_non_number_dscp() -> None:
    err = parse_error(FW_BUFFERS.replace("prio:3 dscp:26,", "prio:3 dscp:2x,"))
    assert err.line == 5 and "DSCP" in err.expected and "'2x'" in err.expected


def test_dscp_out_of_range() -> None:
    assert parse_error(FW_BUFFERS.replace("prio:6 dscp:48,", "prio:6 dscp:64,")).line == 6


def test_dscp_on_two_priorities() -> None:
    assert parse_error(FW_BUFFERS.replace("prio:6 dscp:48,", "prio:6 dscp:26,")).line == 6


def test_short_buffer_sizes() -> None:
    err = parse_error(FW_BUFFERS.replace("130944,130944,0,", "130944,130944,"))
    assert err.line == 7 and "8 comma-separated sizes" in err.expected


def test_bad_tsa() -> None:
    err = parse_error(FW_BUFFERS.replace("tsa: strict", "tsa: wfq"))
    assert err.line == 22 and "'strict'" in err.expected


def test_priority_in_two_tcs() -> None:
    assert parse_error(FW_BUFFERS + "\t priority:  0\n").line == 24


def test_concatenated_dumps() -> None:
    err = parse_error(FW_BUFFERS + FW_BUFFERS)
    assert err.line == 24 and "only once" in err.expected


def test_unknown_line() -> None:
    err = parse_error(text("DCBX mode: OS controlled", "Priority trust state: dscp", "hello"))
    assert err.line == 3 and "'hello'" in err.expected


def test_bad_dcbx_and_trust() -> None:
    assert parse_error("DCBX mode: sometimes\n").line == 1
    assert parse_error("DCBX mode: OS controlled\nPriority trust state: maybe\n").line == 2


def test_priority_line_before_any_tc() -> None:
    assert parse_error(text("Cable len: 7", "\t priority:  3")).line == 2


# --- round trip -----------------------------------------------------------------------------------

NOTICE_CHOICES = (
    mlnx_qos.LLDPAD_WARNING,
    "Priority trust state is not supported on your system",
    "Buffers commands are not supported on your system",
    mlnx_qos.RATE_UNSUPPORTED,
)
PRIO = st.integers(0, 7)


@st.composite
def records(draw: st.DrawFn) -> MlnxQos:
    notices = tuple(n for n in NOTICE_CHOICES if draw(st.booleans()))
    no_rate = mlnx_qos.RATE_UNSUPPORTED in notices  # TC lines lose their prefix: TC number = position
    trust = draw(st.sampled_from([None, "pcp", "dscp", "none"]))
    dscp2prio = dict(sorted(draw(st.dictionaries(st.integers(0, 63), PRIO)).items())) if trust == "dscp" else {}
    tc_ids = draw(st.lists(PRIO, unique=True, max_size=8))
    if no_rate:
        tc_ids = list(range(len(tc_ids)))
    owners = draw(st.lists(st.sampled_from([None, *tc_ids]), min_size=8, max_size=8))
    rate = st.none() if no_rate else st.none() | st.integers(0, 4000).map(lambda k: k / 10)
    tcs = []
    for tc in tc_ids:
        tsa = draw(st.sampled_from(["ets", "strict", "vendor", "unknown"]))
        bw = draw(st.integers(0, 100)) if tsa == "ets" else None
        prios = tuple(p for p, owner in enumerate(owners) if owner == tc)
        tcs.append(TcConfig(tc, tsa, bw, draw(rate), prios))
    buffers = draw(
        st.none()
        | st.builds(
            Buffers,
            st.tuples(*[st.integers(0, 2**32 - 1)] * 8),
            st.none() | st.integers(0, 2**32 - 1),
            st.none() | st.tuples(*[PRIO] * 8),
        )
    )
    return MlnxQos(
        dcbx=draw(st.sampled_from([None, "os", "fw"])),
        trust=trust,
        dscp2prio=dscp2prio,
        pfc_enabled=tuple(sorted(draw(st.sets(PRIO)))),
        prio_tc={p: tc for p, tc in enumerate(owners) if tc is not None},
        tcs=tuple(tcs),
        buffers=buffers,
        cable_len=draw(st.none() | st.integers(0, 0xFFFF)),
        notices=notices,
    )


@given(records())
def test_round_trip(q: MlnxQos) -> None:
    out = dump(q)
    assume(out.strip())
    assert parse(out) == q
    assert parse(out.expandtabs(8).replace("\n", " \r\n")) == q


# --- partial mode: one bad line costs what it holds ---------------------------------------------------------


def test_partial_bad_tc_line_costs_that_tc_block(samples: Path) -> None:
    raw = (samples / CX4).read_text()
    whole = parse(raw)
    broken, line = replace_line(raw, "tc: 3 ratelimit", "tc: 3 ratelimit: unlimited, tsa: sometimes")
    with pytest.raises(ParseError):
        parse(broken, "q.txt")  # without a collector: strict
    log = ParseProblems("q.txt")
    q = parse(broken, "q.txt", log)
    ((problem,),) = (log.problems,)
    assert (problem.line, problem.source) == (line, "q.txt") and "'ets, bw: N%'" in problem.expected
    # priority 3 (under the lost block) is not read into tc 2 above it; every other value as before
    assert q.tcs == tuple(t for t in whole.tcs if t.tc != 3)
    assert q.prio_tc == {p: tc for p, tc in whole.prio_tc.items() if p != 3}
    assert replace(q, tcs=whole.tcs, prio_tc=whole.prio_tc) == whole


def test_partial_lost_header_is_inferred_and_buffer_row_costs_that_row(samples: Path) -> None:
    raw = (samples / CX4).read_text()
    whole = parse(raw)
    broken, pfc_line = replace_line(raw, "PFC configuration:", "PFC c0nfiguration")
    broken, cable_line = replace_line(broken, "Cable len:", "Cable len: 7m")
    log = ParseProblems("q.txt")
    q = parse(broken, "q.txt", log)
    assert [p.line for p in log.problems] == [cable_line, pfc_line]
    assert q.pfc_enabled == (3,)  # the rows under the lost "PFC configuration:" header are read
    assert replace(q, cable_len=whole.cable_len) == whole


@pytest.mark.parametrize(
    ("needle", "replacement"),
    [
        ("Priority trust state:", "Priority trust state: dscp?"),  # would read as trust None: a mismatch
        ("prio:3 dscp", "\tprio:3 dscp:31,30,29,28,27,2x,25,24,"),  # DSCP 26 would read as unmapped
        ("prio:3 dscp", "\x01 garbled \x01"),
        ("enabled", "\tenabled     0   0   0   1   0   0   x   0"),  # would read as no priority enabled
    ],
)
def test_partial_values_the_record_cannot_leave_unknown_cost_the_file(
    samples: Path, needle: str, replacement: str
) -> None:
    broken, line = replace_line((samples / CX4).read_text(), needle, replacement)
    with pytest.raises(ParseError) as info:
        parse(broken, "q.txt", ParseProblems("q.txt"))
    assert info.value.line == line


def test_partial_nothing_read_raises() -> None:
    log = ParseProblems("q.txt")
    with pytest.raises(ParseError) as info:
        parse("garbage\nmore garbage\n", "q.txt", log)
    assert info.value.line == 1
