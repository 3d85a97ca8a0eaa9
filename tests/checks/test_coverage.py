"""Coverage entries name real link tiers; n/a stands alone."""

from __future__ import annotations

import pytest

from unifab.checks.coverage import COVERAGE, EVERY_TIER, NOT_A_LINK, TIERS, Coverage


def test_tiers_are_named_ones_and_n_a_stands_alone() -> None:
    with pytest.raises(ValueError, match="n/a alone"):
        Coverage(("host↔leaf", NOT_A_LINK))
    with pytest.raises(ValueError, match="n/a alone"):
        Coverage(("leaf-spine",))
    with pytest.raises(ValueError, match="n/a alone"):
        Coverage(())


def test_entries_use_the_named_tiers_in_order() -> None:
    for check_id, cov in COVERAGE.items():
        assert list(cov.tiers) == [t for t in TIERS if t in cov.tiers], check_id
    assert COVERAGE["QOS-ECN-COLOR"].tiers == EVERY_TIER and COVERAGE["QOS-ECN-THRESH"].tiers == ("host↔leaf",)
