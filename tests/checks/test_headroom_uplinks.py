"""QOS-HEADROOM on switch↔switch links: each end's lossless PGs against the same buffer model as a host port.

Each test breaks a spine's recorded CONFIG_DB (a twin's SONiC SN5600 spine, read through the real parsers) the way
uplinks go wrong: the uplink profile sized for host cables, a port whose cable is known only from the plan and is
longer than its profile's bucket, the lossless PGs missing. A setting shared by many uplinks is one switch finding;
the fixes applied to config_db.json clear it.
"""

from __future__ import annotations

import csv
import json
import shlex
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding, Severity
from unifab.twin.generate import generate

SPINE = "spine01"
UPLINK_PROFILE = "pg_lossless_400000_40m_profile"
ROW_40M = {"xoff": 283_648, "size": 303_104, "xon": 19_456}  # ACS-SN5600 pg_profile_lookup.ini, 400000 40m


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uplink-headroom") / "b"
    generate(out, gpus=64, seed=2)
    return out


def _config(bundle: Path, switch: str = SPINE) -> Path:
    return bundle / "switches" / switch / "sonic" / "config_db.json"


def _broken(clean: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    bundle = tmp_path / "b"
    shutil.copytree(clean, bundle)
    path = _config(bundle)
    db = json.loads(path.read_text())
    edit(db)
    path.write_text(json.dumps(db))
    return bundle


def _headroom(bundle: Path) -> list[Finding]:
    return [f for f in run_checks(load_bundle(bundle)) if f.check == "QOS-HEADROOM"]


def _spine_links(bundle: Path) -> list[str]:
    return sorted(lk.id for lk in load_bundle(bundle).links if SPINE in (lk.a.node, lk.b.node))


def _apply(bundle: Path, finding: Finding) -> None:
    """Apply a fix's ``sonic-db-cli CONFIG_DB hset`` commands to the switch's config_db.json (comments skipped)."""
    for fix in finding.fix:
        path = _config(bundle, fix.device)
        db = json.loads(path.read_text())
        for command in fix.commands:
            if command.startswith("#") or command == "sudo config save -y":
                continue
            words = shlex.split(command)
            assert words[:3] == ["sonic-db-cli", "CONFIG_DB", "hset"], command
            table, key = words[3].split("|", 1)
            db.setdefault(table, {}).setdefault(key, {}).update(dict(zip(words[4::2], words[5::2], strict=True)))
        path.write_text(json.dumps(db))


def test_a_clean_twin_has_no_headroom_findings_on_any_tier(clean: Path) -> None:
    assert _headroom(clean) == []


def test_uplink_profile_sized_for_host_cables_is_one_switch_finding(clean: Path, tmp_path: Path) -> None:
    def host_sized(db: dict[str, Any]) -> None:  # the 400G 5 m row on a profile every 40 m uplink uses
        db["BUFFER_PROFILE"][UPLINK_PROFILE] |= {"xoff": "231424", "size": "250880"}

    bundle = _broken(clean, tmp_path, host_sized)
    [finding] = _headroom(bundle)
    assert finding.subject == {"kind": "switch", "id": f"switch:{SPINE}", "config": f"BUFFER_PROFILE|{UPLINK_PROFILE}"}
    assert list(finding.entities) == _spine_links(bundle)
    assert finding.severity is Severity.WARNING  # above the spp-50 floor, short of the SKU's row
    assert "xoff 231424 B is 52224 B below the 283648 B" in finding.message
    assert "switch links depend on it" in finding.message
    evidence = finding.evidence["b"]
    assert evidence["formula"] == "pg_profile_lookup.ini" and evidence["table_row"]["cable"] == "40m"
    assert evidence["inputs"]["cable_m"] == {"value": 40, "source": "CABLE_LENGTH Ethernet0"}
    assert len(finding.evidence["ports"]) == len(_spine_links(bundle))
    [fix] = finding.fix
    writes = [c for c in fix.commands if f"BUFFER_PROFILE|{UPLINK_PROFILE}" in c]
    assert len(writes) == 1, "the shared profile is written once, all fields in one hset"
    fields = dict(zip(shlex.split(writes[0])[4::2], shlex.split(writes[0])[5::2], strict=True))
    assert fields == {"xoff": "283648", "size": "303104"}
    _apply(bundle, finding)
    assert _headroom(bundle) == []
    profile = load_bundle(bundle).switches[SPINE].ports["Ethernet0"].qos
    assert profile is not None and profile.headroom[3].xoff == ROW_40M["xoff"]


def test_uplink_cable_known_only_from_the_plan_uses_the_plans_length(clean: Path, tmp_path: Path) -> None:
    """A 100 m uplink without CABLE_LENGTH on the spine: the plan's length, rounded up to the table's 300 m
    bucket, is what the 40 m profile is judged against; the fix writes the bucket and the 300 m row."""
    port = "Ethernet0"

    def no_cable(db: dict[str, Any]) -> None:
        db["CABLE_LENGTH"]["AZURE"].pop(port)

    bundle = _broken(clean, tmp_path, no_cable)
    plan = bundle / "plan" / "cabling.csv"
    rows = list(csv.DictReader(plan.open()))
    for row in rows:
        if (row["z_node"], row["z_port"]) == (SPINE, port):
            row["cable_m"] = "100"
    with plan.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    [finding] = _headroom(bundle)
    assert finding.subject["kind"] == "link" and f"{SPINE}:{port}" in finding.subject.values()
    assert "(switch link to leaf-su1-r0:Ethernet256)" in finding.message
    assert finding.subject == {"kind": "link", "a": "leaf-su1-r0:Ethernet256", "b": f"{SPINE}:{port}"}
    spine_end, leaf_end = finding.evidence["b"], finding.evidence["a"]
    assert spine_end["inputs"]["cable_m"] == {"value": 100, "source": "plan cable_m (no CABLE_LENGTH on the port)"}
    assert spine_end["table_row"]["cable"] == "300m"
    assert leaf_end["mtu"] == 9100, "the peer's MTU is the other switch port's"
    commands = finding.fix[0].commands
    assert any("CABLE_LENGTH|AZURE" in c and "300m" in c for c in commands)
    _apply(bundle, finding)
    assert _headroom(bundle) == []


def test_every_uplink_without_lossless_pgs_is_one_critical_finding(clean: Path, tmp_path: Path) -> None:
    def no_pgs(db: dict[str, Any]) -> None:
        db["BUFFER_PG"] = {k: v for k, v in db["BUFFER_PG"].items() if not k.endswith("|3")}

    bundle = _broken(clean, tmp_path, no_pgs)
    [finding] = _headroom(bundle)
    assert finding.severity is Severity.CRITICAL
    assert finding.subject == {"kind": "switch", "id": f"switch:{SPINE}", "config": "BUFFER_PG|3"}
    assert list(finding.entities) == _spine_links(bundle)
    commands = finding.fix[0].commands
    ports = finding.evidence["ports"]
    assert all(any(f"BUFFER_PG|{p}|3" in c and UPLINK_PROFILE in c for c in commands) for p in ports)
    _apply(bundle, finding)
    assert _headroom(bundle) == []


def test_a_pfc_fix_on_an_uplink_binds_the_headroom_it_makes_lossless(clean: Path, tmp_path: Path) -> None:
    """A leaf uplink with PFC off and no lossless PG: enabling PFC alone would leave PG 3 without headroom, so
    the PFC fix also binds the PG to the table profile; applied, neither finding is left."""
    bundle = tmp_path / "b"
    shutil.copytree(clean, bundle)
    leaf, port = "leaf-su1-r0", "Ethernet256"
    path = _config(bundle, leaf)
    db = json.loads(path.read_text())
    db["PORT_QOS_MAP"][port] |= {"pfc_enable": "", "pfcwd_sw_enable": ""}
    db["BUFFER_PG"].pop(f"{port}|3")
    path.write_text(json.dumps(db))
    findings = [f for f in run_checks(load_bundle(bundle)) if f.check in ("QOS-PFC-MISMATCH", "QOS-HEADROOM")]
    [pfc] = [f for f in findings if f.check == "QOS-PFC-MISMATCH"]
    assert not [f for f in findings if f.check == "QOS-HEADROOM"], "PFC off: nothing is lossless yet"
    [fix] = [x for x in pfc.fix if x.device == leaf]
    assert any(f"BUFFER_PG|{port}|3" in c and UPLINK_PROFILE in c for c in fix.commands)
    _apply(bundle, replace(pfc, fix=(fix,)))
    after = [f for f in run_checks(load_bundle(bundle)) if f.check in ("QOS-PFC-MISMATCH", "QOS-HEADROOM")]
    assert after == []


def test_a_grouped_uplink_finding_survives_an_incremental_update(clean: Path, tmp_path: Path) -> None:
    """The spine's one finding covers a link of every leaf: re-reading one leaf must not cut it to that leaf's
    link (a session re-check equals a full check)."""
    from unifab.session.incremental import Session

    def host_sized(db: dict[str, Any]) -> None:
        db["BUFFER_PROFILE"][UPLINK_PROFILE] |= {"xoff": "231424", "size": "250880"}

    bundle = _broken(clean, tmp_path, host_sized)
    session = Session(bundle)
    session.update_switch("leaf-su1-r3")
    session.update_host("gpu001")
    mine = sorted(f.key for f in session.findings if f.check in ("QOS-HEADROOM", "QOS-PFCWD", "QOS-CNP", "QOS-TRUST"))
    assert mine == sorted(f.key for f in _headroom(bundle))
    assert [f.subject["kind"] for f in session.findings if f.check == "QOS-HEADROOM"] == ["switch"]
