"""ECN colour semantics on a SONiC twin whose leaf runs the real Dell Z9264 ``AZURE_LOSSLESS`` WRED profile.

SAI marks only the colours its ``ecn_mark_mode`` names (RoCE is green), and ``wred_green_enable`` without green
marking drops RoCE on a lossless queue. The fix (``ecn ecn_all`` on that switch's own profile) is applied to
``config_db.json`` and the bundle re-read and re-checked: the finding is gone and nothing else changed.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import orjson
import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding, Severity
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle

DELL = Path("switch") / "sonic" / "sonic_config_db_dellz9264_qos_full.json"
NEW = {"QOS-ECN-COLOR", "QOS-WRED-DROP"}


def _bundle(tmp_path: Path, samples: Path, **wred: str) -> tuple[Path, str]:
    """A twin whose first leaf's RoCE queues use the Dell sample's AZURE_LOSSLESS, with ``wred`` changed."""
    dell = orjson.loads((samples / DELL).read_bytes())
    write_bundle(build(8), tmp_path)
    path = sorted(tmp_path.glob("switches/leaf*/sonic/config_db.json"))[0]
    db: dict[str, Any] = orjson.loads(path.read_bytes())
    (old,) = db["WRED_PROFILE"]
    db["WRED_PROFILE"] = {"AZURE_LOSSLESS": dell["WRED_PROFILE"]["AZURE_LOSSLESS"] | wred}
    for row in db["QUEUE"].values():
        if row.get("wred_profile") == old:
            row["wred_profile"] = "AZURE_LOSSLESS"
    path.write_bytes(orjson.dumps(db))
    return path, path.parents[1].name


def _apply(path: Path, findings: list[Finding]) -> None:
    """``sonic-db-cli CONFIG_DB hset`` applied to config_db.json (the save step and comments pass)."""
    db = orjson.loads(path.read_bytes())
    for f in findings:
        for fix in f.fix:
            assert fix.commands[-1] == "sudo config save -y", fix.commands
            for command in fix.commands[:-1]:
                words = shlex.split(command)
                assert words[:3] == ["sonic-db-cli", "CONFIG_DB", "hset"], command
                table, key = words[3].split("|", 1)
                db.setdefault(table, {}).setdefault(key, {}).update(zip(words[4::2], words[5::2], strict=True))
    path.write_bytes(orjson.dumps(db))


def _keys(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.check, f.key) for f in findings}


def test_the_real_profile_marks_green_and_is_clean(tmp_path: Path, samples: Path) -> None:
    _, leaf = _bundle(tmp_path, samples)
    fabric = load_bundle(tmp_path)
    q = fabric.switches[leaf].ports["Ethernet0"].qos
    assert q is not None and (q.queues[3].ecn_mode, q.queues[3].wred_green_enable) == ("ecn_all", True)
    assert not {f.check for f in run_checks(fabric)} & NEW


@pytest.mark.parametrize(
    ("wred", "expected"),
    [
        ({"ecn": "ecn_yellow"}, {"QOS-ECN-COLOR", "QOS-WRED-DROP"}),
        ({"ecn": "ecn_yellow_red", "wred_green_enable": "false"}, {"QOS-ECN-COLOR"}),
        ({"ecn": "ecn_none"}, {"QOS-WRED-DROP", "QOS-ECN-OFF"}),
    ],
    ids=["yellow-only", "yellow-red-no-green-wred", "no-marking-green-wred"],
)
def test_colour_findings_and_their_fix_clears_them(
    tmp_path: Path, samples: Path, wred: dict[str, str], expected: set[str]
) -> None:
    clean = tmp_path / "clean"
    _bundle(clean, samples)
    baseline = _keys(run_checks(load_bundle(clean)))
    broken = tmp_path / "broken"
    path, leaf = _bundle(broken, samples, **wred)
    fabric = load_bundle(broken)
    before = run_checks(fabric)
    mine = [f for f in before if (f.check, f.key) not in baseline]
    assert {f.check for f in mine} == expected
    for f in mine:
        assert f.severity is Severity.ERROR
    for f in (f for f in mine if f.check in NEW):
        assert f.subject == {"kind": "switch", "id": f"switch:{leaf}", "config": "WRED_PROFILE|AZURE_LOSSLESS"}
        b = f.evidence["b"]
        assert (b["ecn_mode"], b["wred_profile"]) == (wred["ecn"], "AZURE_LOSSLESS")
        assert b["ports"] == ["Ethernet0 (queue 3)", "Ethernet256 (queue 3)"]  # the NIC link and the uplink
        assert len(f.entities) == 2
        assert f.fix[0].device == leaf
        assert f.fix[0].commands == (
            "sonic-db-cli CONFIG_DB hset 'WRED_PROFILE|AZURE_LOSSLESS' 'ecn' 'ecn_all'",
            "sudo config save -y",
        )

    _apply(path, mine)
    after_fabric = load_bundle(broken)
    assert _keys(run_checks(after_fabric)) == baseline
    changed = {
        p.id
        for name, s in fabric.switches.items()
        for p in s.ports.values()
        if after_fabric.switches[name].ports[p.name] != p
    }
    assert {c.rsplit(":", 1)[-1] for c in changed} <= {"Ethernet0", "Ethernet256"}
    assert all(c.startswith(f"port:{leaf}:") for c in changed)
