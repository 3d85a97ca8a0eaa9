"""``bnxt_qos.render`` / ``render_tree``: getqos text and configfs files written from records read back the same."""

from __future__ import annotations

import pytest

from unifab.parse.host.bnxt_qos import BnxtCc, BnxtQos, parse, parse_tree, render, render_tree

# the getqos texts of test_bnxt_qos.py (a BCM57608 capture and two bnxt_setupcc.sh variants of it)
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


def test_thor2_capture_renders_byte_for_byte() -> None:
    assert render(parse(THOR2_DEFAULT)) == THOR2_DEFAULT


@pytest.mark.parametrize("raw", [THOR2_DEFAULT, SETUPCC_TWO_TCS, NO_PFC])
def test_getqos_round_trips(raw: str) -> None:
    record = parse(raw)
    assert parse(render(record), "rendered") == record


def test_cc_tree_round_trips() -> None:
    cc = BnxtCc(1, {"cc_mode": 1, "cnp_dscp": 48, "cnp_prio": 6, "ecn_enable": 1, "roce_dscp": 26}, {"ecn_enable": "1"})
    record = BnxtQos(None, {}, (), {}, (), (), (BnxtCc(None, {"ecn_marking": 0}, {}), cc))  # port-less first
    files = render_tree(record)
    assert files["ports/1/cc/cnp_dscp"] == "0x30\n" and files["ecn_marking"] == "0\n"
    assert parse_tree(files, "cc") == record
