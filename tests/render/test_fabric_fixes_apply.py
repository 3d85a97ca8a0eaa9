"""A whole NVUE-only fabric put right by pasting unifab's fixes: switch groups through the fake ``nv`` and NIC
groups through the fake NIC tools, in rounds as an operator would (a fix may uncover the next one), until
nothing with a fix is left. Every QoS scenario a NIC or an NVUE switch can express is injected at once.
"""

from __future__ import annotations

from pathlib import Path

from test_nic_cli import NIC_SCENARIOS, _nic_fixes
from test_nic_cli import _apply as apply_nic_fixes
from test_switch_fixes_apply import SCENARIOS as SWITCH_SCENARIOS
from test_switch_fixes_apply import _apply as apply_switch_fixes
from test_switch_fixes_apply import _switch_only

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.twin.generate import generate


def test_every_fix_of_an_nvue_only_fabric_applied_leaves_it_clean(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    scenarios = tuple(dict.fromkeys((*SWITCH_SCENARIOS, *NIC_SCENARIOS)))
    result = generate(bundle, gpus=64, seed=13, scenarios=scenarios, switch_os="nvue")
    injected = {m["check"] for m in result.truth["misconfigurations"]}
    assert {"QOS-PFC-MISMATCH", "QOS-ECN-OFF", "QOS-TRUST", "QOS-CABLE-LEN"} <= injected
    fabric = load_bundle(bundle)
    findings = first = run_checks(fabric)
    for round_ in range(1, 4):
        switch_side = _switch_only(fabric, findings)
        nic_side = _nic_fixes(fabric, findings)
        if not switch_side and not nic_side:
            break
        fakes = apply_switch_fixes(bundle, fabric, switch_side)
        assert all(fake.pending is None and fake.saved == fake.applied for fake in fakes.values())
        if nic_side:
            apply_nic_fixes(tmp_path / f"nic-round{round_}", bundle, nic_side)
        fabric = load_bundle(bundle)
        findings = run_checks(fabric)
    left = [(f.check, f.entities, [x.device for x in f.fix]) for f in findings]
    assert first and left == [], f"still reported after every fix was applied: {left}"
