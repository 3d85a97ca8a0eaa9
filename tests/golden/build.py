"""Bundles whose findings are pinned byte for byte (tests/test_golden_findings.py), and the tool that pins them.

The cases are twins over every switch OS and NIC variant with every scenario injected, and bundles assembled
from the real switch and InfiniBand samples. The pinned documents were written by the code before the
architecture was restructured; a restructuring must reproduce them exactly. Only stable library calls are
used (twin ``generate``, ``load_bundle``, ``run_checks``, the findings ``document``) so that an older tree
can write the same files: ``PYTHONPATH=<old tree>/src python tests/golden/build.py --write DIR``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "data" / "samples"
FINDINGS = HERE / "findings"

TWINS: dict[str, dict[str, Any]] = {
    "twin-sonic-mlx5-ofed": {"switch_os": "sonic", "nic_vendor": "mlx5", "nic_driver": "ofed"},
    "twin-eos-mixed-mixed": {"switch_os": "eos", "nic_vendor": "mixed", "nic_driver": "mixed"},
    "twin-nvue-mixed-mixed": {"switch_os": "nvue", "nic_vendor": "mixed", "nic_driver": "mixed"},
    "twin-mixed-mlx5-upstream": {"switch_os": "mixed", "nic_vendor": "mlx5", "nic_driver": "upstream"},
    "twin-mixed-bnxt": {"switch_os": "mixed", "nic_vendor": "bnxt", "nic_driver": "ofed"},
}
SONIC_CONFIGS = (
    "sonic_config_db_dellz9264_qos_full.json",
    "sonic_config_db_legacy_bracket_refs_3_0_1_subset.json",
    "sonic_config_db_mock_sn3800_qos_subset.json",
)
EOS_CONFIGS = ("eos_avd_intended_qos.cfg", "eos_rocm_doc_arista7388_roce_dcqcn.cfg")


def _twin(out: Path, params: dict[str, Any]) -> None:
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    generate(
        out,
        128,
        11,
        tuple(SCENARIOS),
        nic_vendor=params["nic_vendor"],
        nic_driver=params["nic_driver"],
        switch_os=params["switch_os"],
    )


def _samples_switches(out: Path) -> None:
    for i, name in enumerate(SONIC_CONFIGS):
        target = out / "switches" / f"sonic{i}" / "sonic"
        target.mkdir(parents=True)
        shutil.copy(SAMPLES / "switch" / "sonic" / name, target / "config_db.json")
    shutil.copy(
        SAMPLES / "switch" / "sonic" / "sonic_appl_db_lldp_entry_table_subset.json",
        out / "switches" / "sonic0" / "sonic" / "appl_db.json",
    )
    for i, name in enumerate(EOS_CONFIGS):
        target = out / "switches" / f"eos{i}" / "eos"
        target.mkdir(parents=True)
        shutil.copy(SAMPLES / "switch" / "eos" / name, target / "running-config.txt")
    eos = SAMPLES / "switch" / "eos"
    shutil.copy(
        eos / "eos-4.23.5M_leaf01_show_interfaces.json", out / "switches" / "eos0" / "eos" / "show-interfaces.json"
    )
    shutil.copy(
        eos / "eos-4.23.5M_leaf01_show_lldp_neighbors_detail.json",
        out / "switches" / "eos0" / "eos" / "show-lldp-neighbors-detail.json",
    )


def _samples_ib(out: Path) -> None:
    from unifab.parse.ib import ibnetdiscover
    from unifab.parse.plan import cabling

    (out / "ib").mkdir(parents=True)
    shutil.copy(SAMPLES / "ib" / "ibnetdiscover_sim_rail_faulty.txt", out / "ib" / "ibnetdiscover.txt")
    clean = SAMPLES / "ib" / "ibnetdiscover_sim_rail_clean.txt"
    named = ibnetdiscover.named_links(ibnetdiscover.parse(clean.read_text(), str(clean)))
    cables = tuple(cabling.PlannedCable(lk.a_node, lk.a_port, lk.b_node, lk.b_port, None) for lk in named)
    (out / "plan").mkdir()
    (out / "plan" / "cabling.csv").write_text(cabling.dump(cables))


CASES: dict[str, Callable[[Path], None]] = {
    **{name: (lambda out, p=params: _twin(out, p)) for name, params in TWINS.items()},
    "samples-switches": _samples_switches,
    "samples-ib": _samples_ib,
}


def findings_json(case: str, workdir: Path) -> str:
    """The findings document of one case, with the bundle path written as the case name."""
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.jsonify import dumps
    from unifab.report.findings_json import document

    bundle = workdir / case
    CASES[case](bundle)
    return dumps(document(case, run_checks(load_bundle(bundle)))) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, default=FINDINGS, help="directory for <case>.json")
    parser.add_argument("--work", type=Path, required=True, help="empty scratch directory for the bundles")
    args = parser.parse_args()
    args.write.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (args.write / f"{case}.json").write_text(findings_json(case, args.work))
        print(case, file=sys.stderr)


if __name__ == "__main__":
    main()
