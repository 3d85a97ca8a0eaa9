"""Ground truth on every NIC kind and driver stack: each scenario lands where the NIC and switch can express it
(or is skipped, saying why), and ``check`` finds every injection and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.twin.twin_skips import expected_skips

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.twin.generate import generate
from unifab.twin.nic_variants import host_variant
from unifab.twin.scenarios import SCENARIOS

CASES = [  # (NIC vendor, NIC driver, switch OS, GPUs, seed): a handful of bundles over every axis
    ("mixed", "mixed", "sonic", 128, 1),
    ("mixed", "mixed", "eos", 256, 2),
    ("mixed", "mixed", "nvue", 384, 3),
    pytest.param("mixed", "mixed", "mixed", 512, 4, marks=pytest.mark.slow),
    ("bnxt", "ofed", "eos", 128, 5),
    ("bnxt", "ofed", "mixed", 256, 6),
    ("mlx5", "upstream", "nvue", 128, 7),
    ("mlx5", "upstream", "sonic", 256, 8),
]


def _variant(host: str, vendor: str, driver: str) -> tuple[str, str]:
    return host_variant(int(host.removeprefix("gpu")) - 1, vendor, driver)


@pytest.mark.parametrize(("vendor", "driver", "switch_os", "gpus", "seed"), CASES)
def test_recall_and_precision_per_nic_variant(
    tmp_path: Path, vendor: str, driver: str, switch_os: str, gpus: int, seed: int
) -> None:
    result = generate(
        tmp_path / "b",
        gpus=gpus,
        seed=seed,
        scenarios=tuple(SCENARIOS),
        switch_os=switch_os,
        nic_vendor=vendor,
        nic_driver=driver,
    )
    truth = result.truth
    skipped = {s["scenario"]: s["why"] for s in truth["skipped"]}
    injected = {m["scenario"] for m in truth["misconfigurations"]}
    # exactly the scenarios whose declared needs (twin.scenarios.NEEDS) these NICs and switches do not meet
    assert truth["skipped"] == expected_skips(gpus, switch_os, vendor, driver)
    assert injected | set(skipped) == set(SCENARIOS) and not injected & set(skipped)
    assert all(why.startswith("no ") for why in skipped.values())  # says which device kind is missing
    # each NIC-side injection sits on a NIC that has the setting
    for m in truth["misconfigurations"]:
        if m["scenario"] in ("tc-override", "dcqcn-off", "bnxt-dcqcn-off", "cable-len") and m["side"] == "nic":
            kind, stack = _variant(m["subject"]["a"].split(":")[0], vendor, driver)
            assert m["scenario"] not in ("tc-override", "dcqcn-off") or (kind, stack) == ("mlx5", "ofed")
            assert m["scenario"] != "bnxt-dcqcn-off" or kind == "bnxt"
            assert m["scenario"] != "cable-len" or kind == "mlx5"
    expected = {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}
    findings = run_checks(load_bundle(tmp_path / "b"))
    found = {(f.check, e) for f in findings for e in f.entities}
    assert found - expected == set(), "precision"
    assert expected - found == set(), "recall"
