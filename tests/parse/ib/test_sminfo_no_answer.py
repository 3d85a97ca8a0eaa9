"""sminfo when no subnet manager answers (infiniband-diags 44.0 under ibsim, ``2>&1``): a reading, not a bad file."""

from __future__ import annotations

import pytest

from unifab.parse.ib import sminfo

NEVER_SWEPT = (
    "ibwarn: [23244] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0)\nsminfo: iberror: failed: query\n"
)
SM_GONE = "ibwarn: [23258] mad_rpc: _do_madrpc failed; dport (Lid 5)\nsminfo: iberror: failed: query\n"
MASTER = "sminfo: sm lid 1 sm guid 0x100001, activity count 179 priority 5 state 3 SMINFO_MASTER\n"


@pytest.mark.parametrize("text", [NEVER_SWEPT, SM_GONE, "sminfo: iberror: failed: query", f"$ sminfo\n{SM_GONE}"])
def test_the_tool_s_failure_is_no_answer(text: str) -> None:
    assert sminfo.no_answer(text)


@pytest.mark.parametrize("text", [MASTER, "", "ibwarn: [1] something\n", "sminfo: iberror: failed: query\nmore text\n"])
def test_anything_else_is_not(text: str) -> None:
    assert not sminfo.no_answer(text)
