"""TOPO-DEGRADED against the plan's IB rates (``plan/ibnetdiscover.txt``): a link below the width or speed its plan
gives it is found even when every peer runs as slow; without the plan file the peers decide, as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ib_netfile import rail_fabric
from ibsim import ibsim_fabric

from unifab.checks.ib import PlannedRate, below_plan, planned_rate
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.ib import PLAN_IB_FILE
from unifab.model import IbPort
from unifab.twin.generate import generate


def _degraded(bundle: Path) -> dict[str, str]:
    return {e: f.message for f in run_checks(load_bundle(bundle)) if f.check == "TOPO-DEGRADED" for e in f.entities}


def test_links_below_plan_are_found_only_with_the_plan(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=128, seed=7, scenarios=("ib-below-plan",), fabric="ib")
    truth = {e for m in result.truth["misconfigurations"] for e in m["entities"]}
    assert len(truth) == 3
    fabric = load_bundle(tmp_path / "b")
    assert fabric.ib is not None and PLAN_IB_FILE in fabric.ib.files
    assert {lid for lid, rate in fabric.ib.planned_rates.items() if rate == ("4X", "NDR")} == truth
    assert set(fabric.ib.planned_rates.values()) == {("4X", "NDR"), ("4X", "HDR")}
    found = _degraded(tmp_path / "b")
    assert set(found) == truth
    assert all("runs at 4X HDR, 200G, the plan says 4X NDR, 400G" in m for m in found.values())
    [finding] = [f for f in run_checks(fabric) if f.check == "TOPO-DEGRADED"][:1]
    assert finding.evidence["planned"] == {"width": "4X", "speed": "NDR"}
    (tmp_path / "b" / PLAN_IB_FILE).unlink()
    assert _degraded(tmp_path / "b") == {}  # every peer on the leaf trains 4X HDR: only the plan tells


def test_a_degraded_link_names_the_plan(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=128, seed=5, scenarios=("ib-degraded-link",), fabric="ib")
    [m] = result.truth["misconfigurations"]
    found = _degraded(tmp_path / "b")
    assert set(found) == set(m["entities"])
    assert "the plan says 4X HDR, 200G" in found[m["entities"][0]]


def test_planned_rate_of_a_link_the_plan_lacks(tmp_path: Path) -> None:
    generate(tmp_path / "b", gpus=64, seed=0, fabric="ib")
    fabric = load_bundle(tmp_path / "b")
    assert fabric.ib is not None
    some = next(lk for lk in fabric.links if lk.id in fabric.ib.planned_rates)
    assert planned_rate(fabric, some) == PlannedRate("4X", "HDR")
    assert len(fabric.ib.planned_rates) == sum(1 for lk in fabric.links if "plan" in lk.sources)


@pytest.mark.parametrize(
    ("plan", "width", "speed", "mbps", "below"),
    [
        (("4X", "NDR"), "4X", "HDR", 200_000, True),
        (("4X", "NDR"), "8X", "HDR", 400_000, True),  # same rate, but not the planned lanes' speed
        (("4X", "HDR"), "4X", "NDR", 400_000, False),  # above plan is not degraded
        (("4X", "HDR"), "4X", "HDR", 200_000, False),
        (("4X", "XDR"), "4X", "NDR", 400_000, True),
        (("4X", "HDR"), None, None, 100_000, True),  # no width/speed known: the rate decides
        (("4X", "HDR"), None, None, 200_000, False),
    ],
)
def test_below_plan(plan: tuple[str, str], width: str | None, speed: str | None, mbps: int, below: bool) -> None:
    end = IbPort(width=width, speed=speed)
    assert below_plan(PlannedRate(*plan), mbps, end, end) is below


def test_planned_rate_text() -> None:
    assert (PlannedRate("4X", "NDR").mbps, PlannedRate("4X", "NDR").text) == (400_000, "4X NDR, 400G")
    assert PlannedRate("1X", "SDR").text == "1X SDR, 2G"


def test_real_fabric_against_its_accepted_topology(tmp_path: Path) -> None:
    """The plan is ``ibnetdiscover`` of the fabric as accepted (every link 4X HDR, run on ibsim); later every HCA
    link of leaf r1 trains 4X EDR. Its peers on the leaf are all as slow, so only the plan shows them."""
    hosts = 4
    slow = {("S-leaf-r1", h): ("4X", "EDR") for h in range(1, hosts + 1)}
    accepted, later = rail_fabric(hosts, 2, 1), rail_fabric(hosts, 2, 1, link_rates=slow)
    root = tmp_path / "b"
    (root / "plan").mkdir(parents=True)
    (root / "ib").mkdir()
    for fab, target in ((accepted, root / PLAN_IB_FILE), (later, root / "ib" / "ibnetdiscover.txt")):
        with ibsim_fabric(tmp_path / target.parent.name, fab.text, attach=fab.first_ca().id) as sim:
            sim.sweep()
            target.write_text(sim.run(["ibnetdiscover"]))
    expected = {f"link:gpu{h:03d}:mlx5_1--ib-leaf-r1:{h}" for h in range(1, hosts + 1)}
    found = _degraded(root)
    assert set(found) == expected
    assert all("runs at 4X EDR, 100G, the plan says 4X HDR, 200G" in m for m in found.values())
    (root / PLAN_IB_FILE).unlink()
    assert _degraded(root) == {}
