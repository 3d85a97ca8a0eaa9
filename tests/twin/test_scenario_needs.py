"""Scenario needs: which device kinds a cluster holds, and when a scenario's needs are met."""

from __future__ import annotations

import pytest
from tests.twin.twin_skips import expected_skips

from unifab.twin.cluster import build
from unifab.twin.nic_variants import apply_nic_variants
from unifab.twin.scenario_needs import Kinds, Needs
from unifab.twin.scenarios import NEEDS, SCENARIOS


def _kinds(switch_os: str = "sonic", vendor: str = "mlx5", driver: str = "ofed") -> Kinds:
    cluster = build(128, switch_os=switch_os)
    apply_nic_variants(cluster, vendor, driver)
    return Kinds.of(cluster)


def test_kinds_of_a_mixed_cluster() -> None:
    kinds = _kinds("mixed", "mixed", "mixed")
    assert kinds.nics == {("mlx5", "ofed"), ("mlx5", "upstream"), ("bnxt", "bnxt")}
    assert kinds.leaf_os == kinds.spine_os == {"sonic", "eos", "nvue"}
    assert ("sonic", "sonic") in kinds.uplink_os and ("eos", "nvue") in kinds.uplink_os


def test_needs_are_met_by_one_device_of_the_kind_or_the_alternative() -> None:
    bnxt = Needs("no bnxt", nic_vendor=frozenset({"bnxt"}))
    ofed = Needs("no OFED mlx5", nic_vendor=frozenset({"mlx5"}), nic_driver=frozenset({"ofed"}))
    assert not bnxt.met(_kinds()) and bnxt.met(_kinds(vendor="mixed"))
    assert ofed.met(_kinds()) and not ofed.met(_kinds(driver="upstream")) and not ofed.met(_kinds(vendor="bnxt"))
    sonic_both = Needs("no SONiC uplink", uplink_os=frozenset({"sonic"}))
    assert sonic_both.met(_kinds("mixed")) and not sonic_both.met(_kinds("eos"))
    either = Needs("no mlx5", nic_vendor=frozenset({"mlx5"}), otherwise=Needs("no SONiC", leaf_os=frozenset({"sonic"})))
    assert either.met(_kinds("eos")) and either.met(_kinds(vendor="bnxt")) and not either.met(_kinds("eos", "bnxt"))


def test_needs_say_which_device_kind_is_missing() -> None:
    """Every declared need names a kind of device; the default twin (mlx5 on MLNX_OFED, SONiC) lacks only bnxt."""
    assert set(NEEDS) <= set(SCENARIOS) and all(n.why.startswith("no ") for n in NEEDS.values())
    assert [s["scenario"] for s in expected_skips(64)] == ["bnxt-dcqcn-off"]
    with pytest.raises(ValueError, match="names the missing kind"):
        Needs("SONiC missing", leaf_os=frozenset({"sonic"}))
    with pytest.raises(ValueError, match="at least one"):
        Needs("no thing")
