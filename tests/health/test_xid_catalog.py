"""The Xid catalog: the vendor's meaning and action, and which Xids are faults unifab reports."""

from __future__ import annotations

import pytest

from unifab.health.xid_catalog import ACTIONS, CATALOG, lookup


@pytest.mark.parametrize(
    ("xid", "mnemonic", "immediate"),
    [
        (79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "RESTART_BM"),
        (48, "ROBUST_CHANNEL_GPU_ECC_DBE", "WORKFLOW_XID_48"),
        (94, "ROBUST_CHANNEL_CONTAINED_ERROR", "RESTART_APP"),
        (95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "RESET_GPU"),
        (119, "GSP_RPC_TIMEOUT", "RESET_GPU"),
        (147, "NVLINK_TREX_ERROR", "WORKFLOW_NVLINK5_ERR"),
    ],
)
def test_faults_carry_the_catalogs_mnemonic_and_action(xid: int, mnemonic: str, immediate: str) -> None:
    info = lookup(xid)
    assert (info.mnemonic, info.immediate, info.incident) == (mnemonic, immediate, True)


def test_application_and_informational_xids_are_not_faults() -> None:
    assert [x for x in (13, 31, 43, 45, 63, 154) if lookup(x).incident] == []


def test_an_unknown_xid_is_reported_and_every_bucket_has_words() -> None:
    unknown = lookup(9999)
    assert unknown.incident and unknown.mnemonic == "UNKNOWN"
    assert {i.immediate for i in CATALOG.values()} <= set(ACTIONS)
