"""Trust, the RoCE DSCP map, the CNP queue and the PFC watchdog are judged on switch↔switch links too.

Each test breaks a spine's recorded CONFIG_DB (a twin's SONiC spine, the format the real samples are in) the
way the review found it silent: a spine mapping DSCP 26 to a lossy TC, a spine uplink without the watchdog,
an uplink bound to no DSCP map, the CNP queue left to DWRR. One switch-wide finding per broken setting, naming
every link it affects; a single broken port is a link finding; a clean twin has none of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding
from unifab.twin.generate import generate

SPINE = "spine01"
UPLINK_CHECKS = ("QOS-TRUST", "QOS-DSCP-MAP", "QOS-CNP", "QOS-PFCWD")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uplink") / "b"
    generate(out, gpus=64, seed=2)
    return out


def _broken(clean: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[Finding]:
    import shutil

    bundle = tmp_path / "b"
    shutil.copytree(clean, bundle)
    path = bundle / "switches" / SPINE / "sonic" / "config_db.json"
    db = json.loads(path.read_text())
    edit(db)
    path.write_text(json.dumps(db))
    return [f for f in run_checks(load_bundle(bundle)) if f.check in UPLINK_CHECKS]


def _spine_links(clean: Path) -> list[str]:
    fabric = load_bundle(clean)
    return sorted(lk.id for lk in fabric.links if SPINE in (lk.a.node, lk.b.node))


def test_a_clean_fabric_has_no_uplink_findings(clean: Path) -> None:
    assert [f for f in run_checks(load_bundle(clean)) if f.check in UPLINK_CHECKS] == []


def test_a_spine_mapping_roce_to_a_lossy_tc_is_one_critical_switch_finding(clean: Path, tmp_path: Path) -> None:
    def lossy(db: dict[str, Any]) -> None:
        db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"

    [finding] = _broken(clean, tmp_path, lossy)
    assert finding.check == "QOS-DSCP-MAP" and finding.severity.value == "critical"
    assert finding.subject == {"kind": "switch", "id": f"switch:{SPINE}", "config": "DSCP_TO_TC_MAP|ROCE"}
    assert list(finding.entities) == _spine_links(clean)
    assert "maps RoCE DSCP 26 to TC 1" in finding.message and "lossy" in finding.message
    [fix] = finding.fix
    assert fix.device == SPINE
    assert sum("DSCP_TO_TC_MAP|ROCE" in c for c in fix.commands) == 1, "the shared map is fixed once"
    assert fix.commands[-1] == "sudo config save -y"


def test_one_uplink_without_the_watchdog_is_a_link_finding(clean: Path, tmp_path: Path) -> None:
    port = "Ethernet0"

    def unwatched(db: dict[str, Any]) -> None:
        db["PFC_WD"].pop(port)
        db["PORT_QOS_MAP"][port].pop("pfcwd_sw_enable")

    [finding] = _broken(clean, tmp_path, unwatched)
    assert finding.check == "QOS-PFCWD" and finding.subject["kind"] == "link"
    assert f"{SPINE}:{port}" in (finding.subject["a"], finding.subject["b"])
    assert "switch link" in finding.message and finding.impact.get("ecmp_share")
    commands = finding.fix[0].commands
    assert any("PFC_WD" in c and port in c for c in commands) and commands[-1] == "sudo config save -y"


def test_every_uplink_of_a_spine_bound_to_no_map_is_one_trust_finding(clean: Path, tmp_path: Path) -> None:
    def untrusted(db: dict[str, Any]) -> None:
        for entry in db["PORT_QOS_MAP"].values():
            entry.pop("dscp_to_tc_map", None)

    [finding] = _broken(clean, tmp_path, untrusted)
    assert finding.check == "QOS-TRUST" and finding.subject["kind"] == "switch"
    assert list(finding.entities) == _spine_links(clean)
    ports = finding.evidence["ports"]
    assert len(ports) == len(_spine_links(clean))
    commands = finding.fix[0].commands
    assert all(any(p in c and "dscp_to_tc_map" in c for c in commands) for p in ports), "each port is rebound"


def test_a_cnp_queue_on_dwrr_on_every_uplink_is_one_finding(clean: Path, tmp_path: Path) -> None:
    def dwrr(db: dict[str, Any]) -> None:
        db["SCHEDULER"]["ROCE_STRICT"] = {"type": "DWRR", "weight": "1"}

    [finding] = _broken(clean, tmp_path, dwrr)
    assert finding.check == "QOS-CNP" and finding.subject["kind"] == "switch"
    assert "not strict" in finding.message and list(finding.entities) == _spine_links(clean)


def test_uplinks_whose_watchdog_only_alerts_are_one_finding_with_every_ports_fix(clean: Path, tmp_path: Path) -> None:
    def alert(db: dict[str, Any]) -> None:
        for key, row in db["PFC_WD"].items():
            if key != "GLOBAL":
                row["action"] = "alert"

    [finding] = _broken(clean, tmp_path, alert)
    assert finding.check == "QOS-PFCWD" and finding.subject["kind"] == "switch"
    assert "action alert does not break a storm" in finding.message
    assert list(finding.entities) == _spine_links(clean)
    commands = finding.fix[0].commands
    assert all(any(f"PFC_WD|{p}" in c and "'action' 'drop'" in c for c in commands) for p in finding.evidence["ports"])
    assert "not broken" in finding.evidence["b"]["pfcwd"]["action_effect"]
