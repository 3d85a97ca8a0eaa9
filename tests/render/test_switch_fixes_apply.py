"""Switch-side fixes, applied to the switch's recorded state and read back through unifab's own parsers.

An operator pastes a finding's fix group; these tests do the same to a copy of a twin bundle: ``nv set`` /
``nv unset`` are staged on the ``config.yaml`` tree and land only with ``nv config apply``; ``sonic-db-cli
CONFIG_DB hset`` and ``sudo config interface mtu`` edit ``config_db.json``. The bundle is then re-read and
re-checked: every finding whose fixes are all switch-side is gone, no new finding appears, and no port the
fixes do not name changes. Every group must end with the platform's save step.
"""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_eos import FakeEos

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, Finding
from unifab.twin.generate import generate

SCENARIOS = (
    "pfc-mismatch",
    "trust-pcp",
    "cable-len",
    "ecn-off",
    "cnp-not-strict",
    "ets-switch",
    "pfcwd-off",
    "mtu-mismatch",
    "dscp-lossy",
    "spine-dscp-lossy",
    "ecn-colour",
    "ecn-thresh",
    "pfc-lossy",
    "uplink-mtu",
    "uplink-ecn",
    "uplink-pfc",
    "uplink-trust",
    "uplink-cnp",
    "uplink-pfcwd",
    "headroom-short",
    "uplink-headroom",
)
SEED = 13  # every per-link scenario breaks the switch end on this seed (pfc-mismatch, trust, cable, MTU)


# --- NVUE: a staged revision, applied by `nv config apply` ---------------------------------------------


def _nv_path(tree: dict[str, Any], words: list[str], unset: bool) -> None:
    """``words`` as a path into the ``set`` tree; the last word is a value, a collection member, or a key."""
    collections = {"switch-priority": ("pfc",), "traffic-class": ("congestion-control", "egress-scheduler")}
    node = tree
    if not unset and len(words) == 1:
        node.setdefault(words[0], {})
        return
    for i, word in enumerate(words):
        rest = words[i + 1 :]
        parents = collections.get(word)
        in_collection = parents is not None and any(p in words[:i] for p in parents)
        if unset and not rest:
            node.pop(word, None)
            return
        if len(rest) == 1 and rest[0] in _BARE and not unset:
            node.setdefault(word, {}).setdefault(rest[0], {})
            return
        if len(rest) == 1 and not in_collection and not unset:
            node[word] = rest[0]
            return
        if len(rest) == 1 and in_collection:
            members = node.setdefault(word, {})
            if unset:
                members.pop(rest[0], None)
            else:
                members[rest[0]] = {}
            return
        if unset and word not in node:
            return
        node = node.setdefault(word, {})


_BARE = frozenset({"pfc-watchdog"})  # set without a value: an empty object


class FakeNv:
    """``nv`` over a switch's ``nvue/config.yaml``: set/unset stage, apply commits, save records it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.doc = yaml.safe_load(path.read_text())
        self.pending: dict[str, Any] | None = None
        self.applied = self.saved = 0

    def _body(self) -> dict[str, Any]:
        return next(item["set"] for item in self.doc if "set" in item)

    def run(self, command: str) -> None:
        if command.startswith("#"):
            return
        words = shlex.split(command)
        assert words[0] == "nv", command
        if words[1:3] == ["config", "apply"]:
            assert self.pending is not None, "nv config apply without staged changes"
            next(item for item in self.doc if "set" in item)["set"] = self.pending
            self.path.write_text(yaml.safe_dump(self.doc, sort_keys=False))
            self.pending, self.applied = None, self.applied + 1
            return
        if words[1:3] == ["config", "save"]:
            assert self.pending is None, "nv config save with changes not applied"
            self.saved += 1
            return
        assert words[1] in ("set", "unset"), command
        if self.pending is None:
            self.pending = copy.deepcopy(self._body())
        _nv_path(self.pending, words[2:], unset=words[1] == "unset")


# --- SONiC: CONFIG_DB edits ------------------------------------------------------------------------------


class FakeSonic:
    """``sonic-db-cli CONFIG_DB hset`` and ``sudo config interface mtu`` over ``sonic/config_db.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: dict[str, dict[str, dict[str, str]]] = json.loads(path.read_text())
        self.changed = self.saved = 0

    def run(self, command: str) -> None:
        if command.startswith("#"):
            return
        words = shlex.split(command)
        if words[:3] == ["sonic-db-cli", "CONFIG_DB", "hset"]:
            table, _, key = words[3].partition("|")
            fields = words[4:]
            assert fields and len(fields) % 2 == 0, command
            row = self.db.setdefault(table, {}).setdefault(key, {})
            row.update(zip(fields[::2], fields[1::2], strict=True))
        elif words[:4] == ["sudo", "config", "interface", "mtu"]:
            self.db["PORT"][words[4]]["mtu"] = words[5]
        elif words == ["sudo", "config", "save", "-y"]:
            self.saved += 1
            return
        else:
            raise AssertionError(f"not a command the fake SONiC knows: {command}")
        self.changed += 1
        self.path.write_text(json.dumps(self.db, indent=1, sort_keys=True))


def _switch_only(fabric: Fabric, findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.fix and all(x.device in fabric.switches for x in f.fix)]


def _key(f: Finding) -> tuple[str, tuple[str, ...]]:
    return (f.check, f.entities)


def _may_change(fabric: Fabric, findings: list[Finding]) -> set[str]:
    """Port ids a fix may touch: the ports a link finding names; every port of a switch whose shared object
    (a DSCP map, a WRED profile) a switch-wide finding fixes."""
    out = set()
    for f in findings:
        if f.subject.get("kind") == "switch":
            switch = f.subject["id"].removeprefix("switch:")
            out |= {p.id for p in fabric.switches[switch].ports.values()}
        for side in ("a", "b"):
            if "port" in f.evidence.get(side, {}):
                out.add(f.evidence[side]["port"])
    return out


def _apply(bundle: Path, fabric: Fabric, findings: list[Finding]) -> dict[str, Any]:
    fakes: dict[str, Any] = {}
    for f in findings:
        for fix in f.fix:
            switch = fabric.switches[fix.device]
            if switch.os == "nvue":
                fake: Any = fakes.setdefault(
                    fix.device, FakeNv(bundle / "switches" / fix.device / "nvue" / "config.yaml")
                )
                assert fix.commands[-2:] == ("nv config apply -y", "nv config save"), fix.commands
            elif switch.os == "eos":
                fake = fakes.setdefault(
                    fix.device, FakeEos(bundle / "switches" / fix.device / "eos" / "running-config.txt")
                )
                assert fix.commands[0] == "configure" and fix.commands[-2:] == ("end", "write memory"), fix.commands
            else:
                assert switch.os == "sonic"
                fake = fakes.setdefault(
                    fix.device, FakeSonic(bundle / "switches" / fix.device / "sonic" / "config_db.json")
                )
                assert fix.commands[-1] == "sudo config save -y", fix.commands
            for command in fix.commands:
                fake.run(command)
    return fakes


def _ports(fabric: Fabric) -> dict[str, Any]:
    return {p.id: p for s in fabric.switches.values() for p in s.ports.values()}


@pytest.mark.parametrize("switch_os", ["nvue", "sonic", "eos", "mixed"])
def test_applied_switch_fixes_clear_their_findings_and_change_nothing_else(switch_os: str, tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=SEED, scenarios=SCENARIOS, switch_os=switch_os)
    fabric = load_bundle(bundle)
    before = run_checks(fabric)
    fixable = _switch_only(fabric, before)
    if switch_os == "nvue":  # the four kinds the NVUE fixes used to leave untouched, and the rest
        assert {"QOS-PFC-MISMATCH", "QOS-ECN-OFF", "QOS-TRUST", "QOS-CABLE-LEN"} <= {f.check for f in fixable}
    assert fixable
    fakes = _apply(bundle, fabric, fixable)
    for name, fake in fakes.items():
        if isinstance(fake, FakeNv):
            assert fake.pending is None and fake.applied >= 1 and fake.saved == fake.applied, name
        elif isinstance(fake, FakeEos):
            assert fake.mode is None and fake.saved >= 1, name
        else:
            assert fake.saved >= 1, name
    after_fabric = load_bundle(bundle)
    after = run_checks(after_fabric)
    left = {_key(f) for f in fixable} & {_key(f) for f in after}
    assert not left, f"still reported after the fix: {sorted(left)}"
    assert {_key(f) for f in after} <= {_key(f) for f in before}, "a switch fix left a new finding behind"
    touched = _may_change(fabric, fixable)
    old, new = _ports(fabric), _ports(after_fabric)
    assert old.keys() == new.keys()
    changed = {pid for pid in old if old[pid] != new[pid]}
    assert changed <= touched, f"ports no finding names changed: {sorted(changed - touched)}"


def test_nvue_fixes_bind_the_ports_own_profiles(tmp_path: Path) -> None:
    """The review's no-ops: each fix now rebinds the broken port instead of editing a fabric-wide name."""
    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=SEED, scenarios=SCENARIOS, switch_os="nvue")
    findings = run_checks(load_bundle(bundle))

    def commands(check: str) -> tuple[str, ...]:
        found = next(
            f for f in findings if f.check == check and f.subject["kind"] == "link" and "swp" in f.subject["b"]
        )
        return next(x.commands for x in found.fix if not x.device.startswith("gpu"))

    pfc = commands("QOS-PFC-MISMATCH")
    port = pfc[-3].split()[3]
    assert pfc[-3] == f"nv set interface {port} qos pfc profile unifab-pfc-3-3m"
    assert "nv unset qos pfc unifab-pfc-3-3m switch-priority" in pfc
    assert "nv set qos pfc unifab-pfc-3-3m switch-priority 3" in pfc
    assert commands("QOS-ECN-OFF")[0].endswith("qos congestion-control profile ROCE")  # the switch's own
    assert commands("QOS-TRUST")[0].endswith("qos mapping profile ROCE")
    assert commands("QOS-CABLE-LEN")[-3].endswith("qos pfc profile unifab-pfc-3-3m")
    assert not any("default-global" in c for f in findings for x in f.fix for c in x.commands)


@pytest.mark.parametrize(
    ("switch_os", "seed", "mode"),
    [("sonic", SEED, "ecn_red"), ("mixed", 3, "ecn_yellow_red"), ("sonic", 2, "ecn_yellow")],
)
def test_colour_fix_marks_green_again_and_leaves_the_fabric_as_its_intent(
    switch_os: str, seed: int, mode: str, tmp_path: Path
) -> None:
    """ecn-colour: a SONiC spine's RoCE WRED profile marks yellow and/or red only (and WRED-drops green). The
    QOS-ECN-COLOR and QOS-WRED-DROP fixes (the profile's ``ecn`` to ecn_all, then config save) clear both, and
    every device then reads back as the same twin without the scenario: nothing else changed."""
    bundle, clean = tmp_path / "b", tmp_path / "clean"
    result = generate(bundle, gpus=64, seed=seed, scenarios=("ecn-colour",), switch_os=switch_os)
    generate(clean, gpus=64, seed=seed, switch_os=switch_os)
    [spine] = {m["device"] for m in result.truth["misconfigurations"]}
    fabric = load_bundle(bundle)
    before = run_checks(fabric)
    assert {f.check for f in before} == {"QOS-ECN-COLOR", "QOS-WRED-DROP"}
    assert {f.evidence["b"]["ecn_mode"] for f in before} == {mode}  # each seed's mode
    assert all(x.device == spine for f in before for x in f.fix)
    fakes = _apply(bundle, fabric, before)
    assert list(fakes) == [spine] and fakes[spine].saved == len(before)
    after = load_bundle(bundle)
    assert run_checks(after) == []
    assert _ports(after) == _ports(load_bundle(clean))
    path = Path("switches", spine, "sonic", "config_db.json")
    assert json.loads((bundle / path).read_text()) == json.loads((clean / path).read_text())


def test_the_fake_eos_keeps_what_it_was_not_told_and_wants_configure_mode(tmp_path: Path) -> None:
    """The fake's own guarantees: a running-config read and written back unchanged parses the same; a line
    pasted without ``configure`` or a line it does not know fails; ``qos map dscp`` moves one code point."""
    from unifab.parse.switch import eos_config

    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=1, switch_os="eos")
    path = next((bundle / "switches").glob("leaf-*/eos/running-config.txt"))
    original = eos_config.parse(path.read_text())
    fake = FakeEos(path)
    for line in ("configure", "end", "write memory"):
        fake.run(line)
    assert eos_config.parse(path.read_text()) == original
    with pytest.raises(AssertionError, match="outside configuration mode"):
        fake.run("interface Ethernet0")
    fake.run("configure")
    with pytest.raises(AssertionError, match="not a configuration line"):
        fake.run("interface Ethernet0")
        fake.run("spanning-tree portfast")
    for line in ("qos map dscp 26 to traffic-class 5", "end", "write memory"):
        fake.run(line)
    moved = eos_config.parse(path.read_text())
    assert moved.qos_maps.dscp_to_tc[26] == 5
    assert {d: t for d, t in moved.qos_maps.dscp_to_tc.items() if d != 26} == {
        d: t for d, t in original.qos_maps.dscp_to_tc.items() if d != 26
    }
