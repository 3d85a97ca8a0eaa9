"""Hostile device names through every fix of every check: no fix or verify line carries a shell metacharacter,
a newline or a terminal escape from a device name unquoted.

The fabric is a twin with every scenario injected (each check has one, so each check that emits fixes fires),
SONiC and a mixed SONiC / EOS / NVUE one, whose ports, netdevs, RDMA devices and some host names are then
renamed to hostile names (``Ethernet0;sudo reboot``, ``eth2;reboot``, ``mlx5_3$(id)``, names with newlines,
backticks, ESC). The checks are enumerated from the registry, so a new check is covered without editing this
file. A name may appear shell-quoted in a shell line (``shlex``), never in an EOS CLI line (validated names
only), or the fix is refused (a comment, or no command) — it may never reach a line raw.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.registry import registry
from unifab.checks.runner import run_checks
from unifab.model import Fabric, Finding

# What each kind of name gets appended; every payload would do harm if a shell or a CLI read it raw.
PORT_PAYLOADS = (";sudo reboot", "\nshutdown", "`reboot`", "$(id)", "\x1b[2J", " | sh")
NETDEV_PAYLOADS = (";reboot", "$(id)", "`id`", "\nreboot", "\x1b]0;x\x07", "&&reboot")
RDMA_PAYLOADS = ("$(id)", ";reboot", "`id`", "\nid", "\x1b[31m", "' ; id '")
HOST_PAYLOADS = (";reboot", "$(touch /tmp/pwned)")
PAYLOADS = (*PORT_PAYLOADS, *NETDEV_PAYLOADS, *RDMA_PAYLOADS, *HOST_PAYLOADS)
# What a payload leaves outside quotes when its own quotes close the line's (``'mlx5_5' ; id ''``)
CORES = ("; id",)

_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")


def _renamer(names: dict[str, str]) -> Any:
    def text(s: str) -> str:
        if s in names:
            return names[s]
        return _TOKEN.sub(lambda m: names.get(m.group(0), m.group(0)), s)  # ids, HCA lists, paths

    def walk(obj: Any) -> Any:
        if isinstance(obj, str):
            return text(obj)
        if is_dataclass(obj) and not isinstance(obj, type):
            return replace(obj, **{f.name: walk(getattr(obj, f.name)) for f in fields(obj) if f.init})  # type: ignore[type-var]
        if isinstance(obj, dict):
            return {walk(k): walk(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple | set | frozenset):
            return type(obj)(walk(x) for x in obj)
        return obj

    return walk


def _hostile(fabric: Fabric) -> Fabric:
    """``fabric`` with every port, netdev and RDMA device, and a few hosts, renamed to a hostile name."""
    names: dict[str, str] = {}
    ports = sorted({p for sw in fabric.switches.values() for p in sw.ports})
    netdevs = sorted({n.netdev for h in fabric.hosts.values() for n in h.nics.values()})
    rdma = sorted({n.rdma_dev for h in fabric.hosts.values() for n in h.nics.values() if n.rdma_dev})
    for group, payloads in ((ports, PORT_PAYLOADS), (netdevs, NETDEV_PAYLOADS), (rdma, RDMA_PAYLOADS)):
        for i, name in enumerate(group):
            names.setdefault(name, name + payloads[i % len(payloads)])
    for i, host in enumerate(sorted(fabric.hosts)[1:3]):
        names[host] = host + HOST_PAYLOADS[i]
    renamed: Fabric = _renamer(names)(fabric)
    return renamed


@cache
def _findings(switch_os: str, root: Path) -> dict[str, list[Finding]]:
    from unifab.collect.bundle import load_bundle
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    bundle = root / f"twin-{switch_os}"
    generate(bundle, gpus=128, seed=11, scenarios=tuple(SCENARIOS), switch_os=switch_os)
    fabric = _hostile(load_bundle(bundle))
    fabric.input_findings = []
    by_check: dict[str, list[Finding]] = {}
    for f in run_checks(fabric):
        by_check.setdefault(f.check, []).append(f)
    return by_check


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Finding]]:
    """Each check's findings of both hostile twins; a finding of the all-SONiC twin is tagged ``sonic`` (its
    switch fixes are shell lines whatever OS the same switch has in the mixed twin)."""
    root = tmp_path_factory.mktemp("hostile-names")
    merged: dict[str, list[Finding]] = {}
    for switch_os in ("sonic", "mixed"):
        for check, fs in _findings(switch_os, root).items():
            merged.setdefault(check, []).extend(fs)
            _SONIC_TWIN.update(id(f) for f in fs if switch_os == "sonic")
    return merged


_SONIC_TWIN: set[int] = set()  # ids of the findings of the all-SONiC twin


def _unquoted(line: str) -> str | None:
    """What a POSIX shell reads outside quotes in ``line`` (quoted parts removed); ``None`` when it does not
    parse (an unbalanced quote: the rest of the line, or the next lines, would be read as the shell likes)."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n:
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                return None
            i = end + 1
        elif c == '"':  # inside double quotes $( and ` still run: keep what is inside
            end = i + 1
            while end < n and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            if end >= n:
                return None
            inner = line[i + 1 : end]
            if "$" in inner or "`" in inner:
                out.append(inner)
            i = end + 1
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            break  # a comment
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _problems(finding: Finding, shell_devices: set[str], cli_devices: set[str]) -> list[str]:
    bad = []
    for fix in finding.fix:
        for line in fix.commands:
            where = f"{finding.check} fix on {fix.device!r}: {line!r}"
            if any(ch in line for ch in "\n\r\x1b\x07\x00"):
                bad.append(f"{where}: a newline or control character in a command line")
                continue
            stripped = line.lstrip()
            if stripped.startswith(("#", "!")):
                continue  # a comment (a refused name is shown, not run)
            if fix.device in cli_devices:  # EOS CLI: no quoting exists, only validated names may appear
                hits = [p for p in (*PAYLOADS, *CORES) if p in line]
                if hits:
                    bad.append(f"{where}: {hits[0]!r} from a device name in an EOS CLI line")
                continue
            plain = _unquoted(line)
            if plain is None:
                bad.append(f"{where}: an unbalanced quote")
                continue
            hits = [p for p in (*PAYLOADS, *CORES) if p in plain]
            if hits:
                bad.append(f"{where}: {hits[0]!r} from a device name outside shell quotes")
            try:
                shlex.split(line, comments=True)
            except ValueError as exc:
                bad.append(f"{where}: not a shell line ({exc})")
    return bad


# Cases where the test finds unsafe output in files this test may not change; each reason names the place.
KNOWN_UNSAFE: dict[str, str] = {}  # check id -> why its fix is still unsafe (xfail, strict)

FIX_CHECKS = sorted(spec.id for spec in registry().values() if spec.run is not None)


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_UNSAFE[c])) if c in KNOWN_UNSAFE else c
        for c in FIX_CHECKS
    ],
)
def test_no_hostile_name_reaches_a_fix_line_raw(check: str, findings: dict[str, list[Finding]]) -> None:
    fs = findings.get(check, [])
    if not any(f.fix for f in fs):
        pytest.skip(f"{check}: no finding with a fix in the hostile twins (the check emits none here)")
    problems = []
    for f in fs:
        shell: set[str] = set()
        cli: set[str] = set()
        for fix in f.fix:
            (cli if _is_eos(fix.device) and id(f) not in _SONIC_TWIN else shell).add(fix.device)
        problems += _problems(f, shell, cli)
    assert problems == [], "\n".join(problems[:10])


def _is_eos(device: str) -> bool:
    """Whether ``device`` is an EOS switch of the mixed twin (its fixes are EOS CLI, not shell)."""
    return device in _eos_switches()


@cache
def _eos_switches() -> frozenset[str]:
    from unifab.twin.cluster import build

    cluster = build(128, switch_os="mixed")
    return frozenset(name for name, sw in cluster.switches.items() if sw.os == "eos")


def test_the_hostile_twins_exercise_most_checks_that_fix(findings: dict[str, list[Finding]]) -> None:
    """Most checks with fixes fire in the hostile twins (so the per-check test above is not all skips)."""
    fired = [c for c in FIX_CHECKS if any(f.fix for f in findings.get(c, []))]
    assert len(fired) >= len(FIX_CHECKS) // 2, fired


def test_the_shell_parser_of_this_test_sees_quoting_as_a_shell_does() -> None:
    assert _unquoted("ethtool 'eth2;reboot'") == "ethtool "
    assert _unquoted("ethtool eth2;reboot") == "ethtool eth2;reboot"
    assert _unquoted('echo "$(id)"') == "echo $(id)"
    assert _unquoted("echo 'x") is None
    assert _unquoted("# show lldp neighbors Ethernet0;sudo reboot") == ""
