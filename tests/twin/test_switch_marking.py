"""A twin switch's ECN mark mode is rendered into its RoCE WRED profile, and nothing else changes."""

from __future__ import annotations

import json

import pytest

from unifab.twin.cluster import PARTIAL_MARK_MODES, build
from unifab.twin.switch_files import config_db


@pytest.mark.parametrize("mode", PARTIAL_MARK_MODES)
def test_a_marked_spine_renders_its_mode_and_nothing_else_changes(mode: str) -> None:
    cluster = build(64)
    spine = cluster.switches["spine02"]
    clean = json.loads(config_db(spine))
    assert spine.ecn_mark_mode == "ecn_all" and "ecn" in clean["WRED_PROFILE"]["ROCE_Q3"]
    spine.ecn_mark_mode = mode
    marked = json.loads(config_db(spine))
    assert marked["WRED_PROFILE"]["ROCE_Q3"]["ecn"] == mode
    marked["WRED_PROFILE"]["ROCE_Q3"]["ecn"] = clean["WRED_PROFILE"]["ROCE_Q3"]["ecn"]
    assert marked == clean
