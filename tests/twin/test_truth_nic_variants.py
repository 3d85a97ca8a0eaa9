"""Ground truth on every NIC kind and driver stack: each scenario lands where the NIC and switch can express it
(or is skipped, saying why), and ``check`` finds every injection and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def _expected_skips(vendor: str, driver: str, switch_os: str) -> set[str]:
    skips = set()
    if vendor == "bnxt" or (vendor, driver) == ("mlx5", "upstream"):
        skips.add("tc-override")  # the traffic_class override is MLNX_OFED sysfs
    if (vendor, driver) == ("mlx5", "upstream"):
        skips.add("dcqcn-off")  # upstream cc_params has no per-priority enable
    if vendor == "bnxt":
        skips.add("dcbx-fw")  # niccli getqos prints no DCBX mode (mlnx_qos "DCBX mode:" only)
    if (vendor, switch_os) == ("bnxt", "eos"):
        skips.add("cable-len")  # neither Thor nor EOS has a cable-length setting
    if switch_os in ("eos", "nvue"):
        skips |= {"headroom-short", "uplink-fec"}
    return skips


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
    assert set(skipped) == _expected_skips(vendor, driver, switch_os)
    assert injected | set(skipped) == set(SCENARIOS) and not injected & set(skipped)
    assert all(why.startswith("no ") for why in skipped.values())  # says which device kind is missing
    # each NIC-side injection sits on a NIC that has the setting
    for m in truth["misconfigurations"]:
        if m["scenario"] in ("tc-override", "dcqcn-off", "cable-len") and m["side"] == "nic":
            kind, stack = _variant(m["subject"]["a"].split(":")[0], vendor, driver)
            assert m["scenario"] != "tc-override" or (kind, stack) == ("mlx5", "ofed")
            assert m["scenario"] != "dcqcn-off" or stack != "upstream"
            assert m["scenario"] != "cable-len" or kind == "mlx5"
    expected = {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}
    findings = run_checks(load_bundle(tmp_path / "b"))
    found = {(f.check, e) for f in findings for e in f.entities}
    assert found - expected == set(), "precision"
    assert expected - found == set(), "recall"
