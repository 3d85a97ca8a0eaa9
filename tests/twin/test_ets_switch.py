"""ets-switch: a leaf port toward a NIC schedules the RoCE queue DWRR with weight 0, on every switch OS the twin
writes; QOS-ETS (:func:`unifab.checks.host_qos._switch_ets`) reports exactly that port, and its fix clears it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.render.test_switch_fixes_apply import _apply, _switch_only

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.parse.switch import eos_config
from unifab.twin.cluster import ROCE_PRIO
from unifab.twin.generate import generate
from unifab.twin.scenarios import NEEDS, SCENARIOS


def _one(tmp_path: Path, switch_os: str, seed: int = 5) -> tuple[Path, dict[str, Any]]:
    bundle = tmp_path / "b"
    result = generate(bundle, gpus=64, seed=seed, scenarios=("ets-switch",), switch_os=switch_os)
    [truth] = result.truth["misconfigurations"]
    assert result.truth["skipped"] == []
    return bundle, truth


def test_registered_for_every_switch_os() -> None:
    assert "ets-switch" in SCENARIOS and "ets-switch" not in NEEDS  # SONiC, EOS and NVUE all express it


@pytest.mark.parametrize("switch_os", ["sonic", "eos", "nvue", "mixed"])
def test_found_exactly_on_the_broken_port(tmp_path: Path, switch_os: str) -> None:
    bundle, truth = _one(tmp_path, switch_os)
    leaf = truth["subject"]["id"].removeprefix("port:").split(":")[0]
    assert truth["check"] == "QOS-ETS" and truth["side"] == "switch" and truth["device"] == leaf
    assert truth["entities"] == [truth["subject"]["id"]]
    findings = run_checks(load_bundle(bundle))
    assert [(f.check, f.entities) for f in findings] == [("QOS-ETS", (truth["subject"]["id"],))]
    [finding] = findings
    b = finding.evidence["b"]
    assert (b["device"], b["queue"], b["scheduler_type"], b["weight"]) == (leaf, ROCE_PRIO, "DWRR", 0)
    assert {x.device for x in finding.fix} == {leaf}


def test_written_state_per_os(tmp_path: Path) -> None:
    """What each writer makes of it: SONiC binds the queue to a weight-0 DWRR scheduler, EOS overrides the
    interface's tx-queue share, NVUE binds the port to its own egress-scheduler profile."""
    bundle, truth = _one(tmp_path / "sonic", "sonic")
    leaf, port = truth["subject"]["id"].removeprefix("port:").split(":")
    db = json.loads((bundle / "switches" / leaf / "sonic" / "config_db.json").read_text())
    assert db["QUEUE"][f"{port}|{ROCE_PRIO}"]["scheduler"] == "ROCE_DWRR_0"
    assert db["SCHEDULER"]["ROCE_DWRR_0"] == {"type": "DWRR", "weight": "0"}
    assert [k for k, v in db["QUEUE"].items() if v.get("scheduler") == "ROCE_DWRR_0"] == [f"{port}|{ROCE_PRIO}"]

    bundle, truth = _one(tmp_path / "eos", "eos")
    leaf, port = truth["subject"]["id"].removeprefix("port:").split(":")
    cfg = eos_config.parse((bundle / "switches" / leaf / "eos" / "running-config.txt").read_text())
    queue = cfg.interfaces[port].qos.tx_queues[ROCE_PRIO]
    assert (queue.bandwidth_percent, queue.strict, queue.ecn) == (0, None, None)  # no priority stays the profile's

    bundle, truth = _one(tmp_path / "nvue", "nvue")
    leaf, port = truth["subject"]["id"].removeprefix("port:").split(":")
    doc = yaml.safe_load((bundle / "switches" / leaf / "nvue" / "config.yaml").read_text())
    body = next(item["set"] for item in doc if "set" in item)
    bound = body["interface"][port]["qos"]["egress-scheduler"]["profile"]
    assert bound == "ROCE-roce-dwrr0"
    classes = body["qos"]["egress-scheduler"][bound]["traffic-class"]
    assert classes[str(ROCE_PRIO)] == {"mode": "dwrr", "bw-percent": 0}
    intent = body["qos"]["egress-scheduler"]["ROCE"]["traffic-class"]
    assert {tc: v for tc, v in classes.items() if tc != str(ROCE_PRIO)} == {
        tc: v for tc, v in intent.items() if tc != str(ROCE_PRIO)
    }


# EOS and NVUE: _switch_ets renders only a comment ("give the RoCE queue N a non-zero DWRR weight"), which
# changes nothing; SONiC's hset on the queue's scheduler does.


@pytest.mark.parametrize(
    "switch_os",
    ["sonic", "eos", "nvue"],
)
def test_applied_fix_clears_the_finding(tmp_path: Path, switch_os: str) -> None:
    bundle, _ = _one(tmp_path, switch_os)
    fabric = load_bundle(bundle)
    before = run_checks(fabric)
    fixable = _switch_only(fabric, before)
    assert [f.check for f in fixable] == ["QOS-ETS"]
    _apply(bundle, fabric, fixable)
    after = run_checks(load_bundle(bundle))
    assert after == [], [(f.check, f.entities) for f in after]
