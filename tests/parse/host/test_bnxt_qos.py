"""Tests for the Broadcom ``niccli getqos`` / bnxt_re CC configfs parser.

No sample of ours exists. ``THOR2_DEFAULT`` is reconstructed from public captures of ``niccli -dev 1
getqos`` on a BCM57608 (Thor2) with the RoCE profile (an AMD Instinct cluster-networking guide and a
collector's test fixture; repositories not recorded): RoCE DSCP 26 on priority 3 -> TC1, CNP DSCP 48 on
priority 7 -> TC2 strict, PFC on 3. The other getqos texts vary it the way ``bnxt_setupcc.sh``
(lykeioner/driver ``bnxt_re/bnxt_setupcc.sh`` 233.2.82.0, host-nic-roce.md §2.10) configures a NIC.
The configfs files follow bnxt_re ``configfs.c`` (``%#x`` reads, the ``apply`` summary format).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.bnxt_qos import AppEntry, BnxtCc, BnxtQos, BnxtTc, dump, dump_tree, parse, parse_tree

THOR2_DEFAULT = """\
IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:2
         TC Bandwidth: 50% 50% 0%
         TSA_MAP: 0:ets 1:ets 2:strict
IEEE 8021QAZ PFC TLV:
         PFC enabled: 3
IEEE 8021QAZ APP TLV:
         APP#0:
          Priority: 7
          Sel: 5
          DSCP: 48

         APP#1:
          Priority: 3
          Sel: 5
          DSCP: 26

         APP#2:
          Priority: 3
          Sel: 3
          UDP or DCCP: 4791

TC Rate Limit: 100% 100% 100% 0% 0% 0% 0% 0%
"""

# bnxt_setupcc.sh -m 3 -r 3 -s 26 with CNP service type 0: two ETS TCs (L2 / RoCE 50/50), RoCE v2 UDP port
# and DSCP APP entries for priority 3; the CNP DSCP/priority then go through the configfs tree below.
SETUPCC_TWO_TCS = """\
IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0
         TC Bandwidth: 50% 50%
         TSA_MAP: 0:ets 1:ets
IEEE 8021QAZ PFC TLV:
         PFC enabled: 3
IEEE 8021QAZ APP TLV:
         APP#0:
          Priority: 3
          Sel: 3
          UDP or DCCP: 4791

         APP#1:
          Priority: 3
          Sel: 5
          DSCP: 26

TC Rate Limit: 100% 100% 0% 0% 0% 0% 0% 0%
"""

# -m 2 (CC only): PFC off, no APP TLVs; an old RoCE v1 Ethertype entry left behind
NO_PFC = """\
IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0
         TC Bandwidth: 100%
         TSA_MAP: 0:ets
IEEE 8021QAZ PFC TLV:
         PFC enabled: none
IEEE 8021QAZ APP TLV:
         APP#0:
          Priority: 3
          Sel: 1
          Ethertype: 0x8915
"""


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "getqos.txt")
    return info.value


def test_thor2_default() -> None:
    q = parse(THOR2_DEFAULT)
    assert q.trust == "dscp"
    assert q.dscp2prio == {26: 3, 48: 7}
    assert q.pfc_enabled == (3,)
    assert q.prio_tc == {0: 0, 1: 0, 2: 0, 3: 1, 4: 0, 5: 0, 6: 0, 7: 2}
    assert q.tcs == (BnxtTc(0, "ets", 50, 100), BnxtTc(1, "ets", 50, 100), BnxtTc(2, "strict", 0, 100))
    assert q.apps == (
        AppEntry(7, 5, "DSCP", 48),
        AppEntry(3, 5, "DSCP", 26),
        AppEntry(3, 3, "UDP or DCCP", 4791),
    )
    assert q.cc == ()


def test_setupcc_two_tcs() -> None:
    q = parse(SETUPCC_TWO_TCS)
    assert (q.trust, q.dscp2prio, q.pfc_enabled) == ("dscp", {26: 3}, (3,))
    assert q.tcs == (BnxtTc(0, "ets", 50, 100), BnxtTc(1, "ets", 50, 100))
    assert q.prio_tc[3] == 1 and q.prio_tc[7] == 0


def test_no_pfc_and_ethertype_app() -> None:
    q = parse(NO_PFC)
    assert (q.trust, q.dscp2prio, q.pfc_enabled) == (None, {}, ())
    assert q.apps == (AppEntry(3, 1, "Ethertype", 0x8915),)
    assert q.tcs == (BnxtTc(0, "ets", 100, None),)


def test_whitespace_and_several_pfc_priorities() -> None:
    raw = THOR2_DEFAULT.replace("PFC enabled: 3", "PFC enabled: 4,3").replace("         ", "\t")
    assert parse(raw.replace("\n", "\r\n")).pfc_enabled == (3, 4)
    assert parse(THOR2_DEFAULT.replace("PFC enabled: 3", "PFC enabled: 3 4")).pfc_enabled == (3, 4)


def test_section_order_is_free() -> None:
    ets, rest = THOR2_DEFAULT.split("IEEE 8021QAZ PFC TLV:\n")
    assert parse("IEEE 8021QAZ PFC TLV:\n" + rest + ets) == parse(THOR2_DEFAULT)


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("2:strict", "2:wrr", 4, "ets, strict or vendor"),
        ("3:1 4:0", "3:1 3:0", 2, "each number once after 'PRIO_MAP'"),
        ("3:1 4:0", "3:9 4:0", 2, "a TC (0..7)"),
        ("50% 50% 0%", "50% 50 0%", 3, "percentages"),
        ("PFC enabled: 3", "PFC enabled: 8", 6, "a PFC priority (0..7)"),
        ("PFC enabled: 3", "PFC enabled: 3 3", 6, "each PFC priority once"),
        ("DSCP: 26", "DSCP: 48", 13, "DSCP 48 on one priority"),
        ("DSCP: 26", "DSCP: 64", 13, "DSCP 0..63"),
        ("DSCP: 26", "DSCP: x1a", 13, "a number after 'DSCP'"),
        ("Sel: 3", "Sel: 5", 18, "protocol line matching selector 5"),
        ("          Sel: 3\n", "", 18, "Priority, Sel and a protocol line in APP#2"),
        ("APP#1:", "APP#0:", 13, "APP#0 once"),
        ("TC Rate Limit", "TC Rate Limits", 23, "one protocol line in APP#2, then 'APP#N:'"),
        ("         APP#0:\n", "", 8, "a line of niccli getqos output"),
        (
            "          Priority: 3\n          Sel: 5",
            "          Priority: 3\n          Priority: 3",
            15,
            "one 'Priority'",
        ),
        ("          DSCP: 26\n", "          DSCP: 26\n          UDP: 4791\n", 17, "one protocol line in APP#1"),
    ],
)
def test_errors_name_the_line(old: str, new: str, line: int, message: str) -> None:
    assert old in THOR2_DEFAULT
    err = parse_error(THOR2_DEFAULT.replace(old, new, 1))
    assert (err.source, err.line) == ("getqos.txt", line), err
    assert message in err.expected


def test_sections_appear_once() -> None:
    err = parse_error(THOR2_DEFAULT + "IEEE 8021QAZ PFC TLV:\n")
    assert err.line == 24 and "once" in err.expected


@pytest.mark.parametrize("raw", ["", "\n", "root@host:~# niccli -dev 1 getqos\n"])
def test_nothing_to_read(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1


# --- configfs tree --------------------------------------------------------------------------------

# What bnxt_setupcc.sh leaves in /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/ (it writes hex, the
# driver reads back %#x), plus the read-back of `apply` (configfs.c apply_show) and the dcn table.
CC_TREE = {
    "ports/1/cc/ecn_enable": "0x1\n",
    "ports/1/cc/ecn_marking": "0x1\n",
    "ports/1/cc/cc_mode": "0x1\n",
    "ports/1/cc/cnp_prio": "0x7\n",
    "ports/1/cc/roce_prio": "0x3\n",
    "ports/1/cc/roce_dscp": "0x1a\n",
    "ports/1/cc/cnp_dscp": "0x30\n",
    "ports/1/cc/disable_prio_vlan_tx": "0x1\n",
    "ports/1/cc/advanced": "0\n",
    "ports/1/cc/apply": (
        "ecn status (ecn_enable)\t\t\t\t\t: Enabled\n"
        "ecn marking (ecn_marking)\t\t\t\t: ECT(1)\n"
        "congestion control mode (cc_mode)\t\t\t: DCQCN-P\n"
        "send priority vlan (VLAN 0)\t\t\t\t: Disabled\n"
        "running avg. weight(g)\t\t\t\t\t: 8\n"
        "inactivity threshold (inact_th)\t\t\t\t: 10000 usec\n"
        "initial current rate (init_cr)\t\t\t\t: 0xc8\n"
        "roce prio (roce_prio)\t\t\t\t\t: 3\n"
        "roce dscp (roce_dscp)\t\t\t\t\t: 26\n"
        "cnp prio (cnp_prio)\t\t\t\t\t: 7\n"
        "cnp dscp (cnp_dscp)\t\t\t\t\t: 48\n"
        "slave roce prio (roce_prio)\t\t\t\t: 3\n"
    ),
    "ports/1/cc/dcn": "index   ql_thr(kB)   cr     tr cnp_inc upd_imm\n    7      300   2      2       1       1\n",
    "ports/1/tunables/acc_tx_path": "0\n",
}


def test_cc_tree() -> None:
    q = parse_tree(CC_TREE, "sys/kernel/config/bnxt_re/bnxt_re0")
    assert (q.trust, q.dscp2prio, q.pfc_enabled, q.prio_tc, q.tcs, q.apps) == (None, {}, (), {}, (), ())
    (cc,) = q.cc
    assert cc.port == 1
    assert (cc.roce_dscp, cc.roce_prio, cc.cnp_dscp, cc.cnp_prio, cc.ecn_enable, cc.cc_mode) == (26, 3, 48, 7, 1, 1)
    assert cc.params["disable_prio_vlan_tx"] == 1 and cc.params["advanced"] == 0 and "dcn" not in cc.params
    assert list(cc.params) == sorted(cc.params)
    assert cc.apply_summary["cc_mode"] == "DCQCN-P" and cc.apply_summary["VLAN 0"] == "Disabled"
    assert cc.apply_summary["g"] == "8" and cc.apply_summary["inact_th"] == "10000 usec"
    assert cc.apply_summary["roce_dscp"] == "26" and cc.apply_summary["slave_roce_prio"] == "3"


def test_cc_directory_itself() -> None:
    q = parse_tree({"roce_dscp": "0x1a\n", "cnp_dscp": "0\n"})
    assert q.cc == (BnxtCc(None, {"cnp_dscp": 0, "roce_dscp": 26}, {}),)


@pytest.mark.parametrize(
    ("path", "value", "line", "message"),
    [
        ("ports/1/cc/roce_dscp", "26 decimal\n", 1, "a number ('0x1a' or '0') in roce_dscp"),
        ("ports/1/cc/cc_mode", "\n", 1, "a number"),
        ("ports/1/cc/apply", "ecn status (ecn_enable): Enabled\nno colon here\n", 2, "label (name)"),
        ("ports/1/cc/apply", "a (x): 1\nb (x): 2\n", 2, "'x' once in apply"),
    ],
)
def test_cc_errors_name_the_file(path: str, value: str, line: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_tree(CC_TREE | {path: value}, "bnxt_re0")
    assert (info.value.source, info.value.line) == (f"bnxt_re0/{path}", line)
    assert message in info.value.expected


def test_cc_tree_with_nothing_to_read() -> None:
    with pytest.raises(ParseError) as info:
        parse_tree({"ports/1/tunables/x": "0\n", "ports/1/cc/dcn": "table\n"}, "bnxt_re0")
    assert "ports/<p>/cc/<file>" in info.value.expected


@pytest.mark.parametrize(
    ("path", "value", "line"),
    [("ports/1/cc/ecn_enable", "on\n", 1), ("ports/1/cc/apply", "a (x): 1\nb (x): 2\n", 2)],
)
def test_cc_bad_file_costs_that_value_only(path: str, value: str, line: int) -> None:
    whole = parse_tree(CC_TREE, "bnxt_re0")
    log = ParseProblems("bnxt_re0")
    got = parse_tree(CC_TREE | {path: value}, "bnxt_re0", log)
    (problem,) = log.problems
    assert (problem.source, problem.line, problem.skipped) == (f"bnxt_re0/{path}", line, path)
    (cc,), (before,) = got.cc, whole.cc
    name = path.rpartition("/")[2]
    if name == "apply":
        assert (cc.params, cc.apply_summary) == (before.params, {})
    else:  # the value is unknown, never a default: DCQCN's state is unknown too
        assert cc.params == {k: v for k, v in before.params.items() if k != name}
        assert (cc.ecn_enable, cc.dcqcn_on, before.dcqcn_on) == (None, None, True)


def test_cc_every_file_bad_still_raises() -> None:
    with pytest.raises(ParseError, match="a number"):
        parse_tree({"ports/1/cc/roce_dscp": "x\n"}, "bnxt_re0", ParseProblems("bnxt_re0"))


def test_getqos_stays_all_or_nothing() -> None:
    """A bad APP entry would read as a DSCP left unmapped: getqos takes no collector (see the module doc)."""
    import inspect

    assert "problems" not in inspect.signature(parse).parameters
    with pytest.raises(ParseError):
        parse(THOR2_DEFAULT.replace("DSCP: 26", "DSCP: 99"))


def test_getqos_pasted_with_prompts_blank_lines_and_collapsed_padding() -> None:
    collapsed = "\n".join(" ".join(line.split()) for line in THOR2_DEFAULT.split("\n"))
    pasted = f"$ sudo niccli -dev 1 getqos\n\n{collapsed}\n\nroot@thor01:~#\n"
    assert parse(pasted, "getqos.txt") == parse(THOR2_DEFAULT)


# --- fuzz -----------------------------------------------------------------------------------------


def _only_parse_errors(call: Callable[[], BnxtQos], raw: str = "") -> None:
    try:
        call()
    except ParseError as exc:
        assert exc.source.startswith("fuzz") and exc.expected
        assert exc.line is None or 1 <= exc.line <= max(raw.count("\n") + 2, 2)


PATHS = st.sampled_from([*CC_TREE, "apply", "cc/roce_dscp", "ports/x/cc/a"]) | st.text(max_size=15)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(PATHS, st.text(max_size=40), max_size=5))
def test_random_trees_raise_only_parse_errors(files: dict[str, str]) -> None:
    _only_parse_errors(lambda: parse_tree(files, "fuzz"))


# dump / dump_tree: getqos text and configfs files written from records read back the same


def test_thor2_capture_renders_byte_for_byte() -> None:
    assert dump(parse(THOR2_DEFAULT)) == THOR2_DEFAULT


@pytest.mark.parametrize("raw", [THOR2_DEFAULT, SETUPCC_TWO_TCS, NO_PFC])
def test_getqos_round_trips(raw: str) -> None:
    record = parse(raw)
    assert parse(dump(record), "rendered") == record


def test_cc_tree_round_trips() -> None:
    cc = BnxtCc(1, {"cc_mode": 1, "cnp_dscp": 48, "cnp_prio": 6, "ecn_enable": 1, "roce_dscp": 26}, {"ecn_enable": "1"})
    record = BnxtQos(None, {}, (), {}, (), (), (BnxtCc(None, {"ecn_marking": 0}, {}), cc))  # port-less first
    files = dump_tree(record)
    assert files["ports/1/cc/cnp_dscp"] == "0x30\n" and files["ecn_marking"] == "0\n"
    assert parse_tree(files, "cc") == record
