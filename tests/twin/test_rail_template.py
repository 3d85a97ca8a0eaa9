"""The rail-optimized template plan: SuperPOD numbers, equality with the twin's plan, input validation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from unifab.errors import UsageError
from unifab.parse.plan import cabling
from unifab.twin import rail_template


def test_superpod_su1_numbers() -> None:
    """DGX SuperPOD H100 reference, SU 1: 32 node slots, 8 leaves of 32 down + 32 up, 256 spine-leaf cables."""
    shape = rail_template.shape(256, rails=8, su_hosts=32, spines=4)
    cables = rail_template.plan(shape)
    host = [c for c in cables if c.a_node.startswith("gpu")]
    uplinks = [c for c in cables if not c.a_node.startswith("gpu")]
    assert (shape.hosts, shape.leaves, len(host), len(uplinks)) == (32, 8, 256, 256)
    per_leaf_down = Counter(c.z_node for c in host)
    per_leaf_up = Counter(c.a_node for c in uplinks)
    assert set(per_leaf_down.values()) == set(per_leaf_up.values()) == {32}
    assert set(Counter(c.z_node for c in uplinks).values()) == {64}  # 4 spines, 8 uplinks from each leaf


def test_rail_alignment_and_port_is_host_slot() -> None:
    cables = rail_template.plan(rail_template.shape(512, su_hosts=32))
    by_nic = {(c.a_node, c.a_port): (c.z_node, c.z_port) for c in cables if c.a_node.startswith("gpu")}
    assert by_nic[("gpu033", "eth5")] == ("leaf-su2-r5", "Ethernet0")  # first host of SU 2, rail 5
    assert by_nic[("gpu064", "eth7")] == ("leaf-su2-r7", "Ethernet248")  # slot 31
    assert {port for (_, port) in by_nic.values() if port} == {f"Ethernet{8 * s}" for s in range(32)}


def test_twin_bundle_plan_equals_the_template(twin_bundle: Path) -> None:
    """The session twin: 128 GPUs, 32 hosts per SU, 8 spines (scenarios change cabling, never the plan)."""
    twin_plan = (twin_bundle / "plan" / "cabling.csv").read_text()
    assert cabling.dump(rail_template.plan(rail_template.shape(128, 8, 32))) == twin_plan


def test_four_rail_hosts() -> None:
    cables = rail_template.plan(rail_template.shape(64, rails=4, su_hosts=4, spines=2))
    assert {c.a_port for c in cables if c.a_node.startswith("gpu")} == {"eth0", "eth1", "eth2", "eth3"}
    assert rail_template.shape(64, rails=4, su_hosts=4, spines=2).leaves == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((100, 8, 32, None), "--gpus must be a positive multiple of 8 (GPUs per host), got 100"),
        ((0, 8, 32, None), "--gpus must be a positive multiple of 8"),
        ((64, 3, 32, None), "--rails must be one of 1, 2, 4, 8"),
        ((64, 8, 0, None), "--su-size must be at least 1 host, got 0"),
        ((64, 8, 32, 9), "--spines must be 1..8 (each leaf has 8 uplinks), got 9"),
        ((64, 8, 32, 0), "--spines must be 1..8"),
    ],
)
def test_validation_is_one_clear_message(args: tuple[int, int, int, int | None], message: str) -> None:
    with pytest.raises(UsageError) as err:
        rail_template.shape(*args)
    assert str(err.value).startswith(message)
