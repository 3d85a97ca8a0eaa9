"""The versions a fleet runs, grouped where they should be uniform, and the baseline grammar that judges them.

A **fact** is one device's version of one field in one group: a host's NIC firmware on its NICs of one model and
PSID, a host's NIC driver, GPU driver or CUDA, the NCCL release its processes of one run printed, a switch's OS
image, an optic's part, revision or firmware (a host NIC's from ``ethtool -m``, a SONiC switch port's from STATE_DB
``TRANSCEIVER_INFO`` / ``TRANSCEIVER_FIRMWARE_INFO``). Groups are what should run one version: the same device kind
and the same model (NIC part id + PSID, driver module, GPU model, switch OS + platform; for an optic's revision and
firmware its vendor + part number, hosts' and switches' optics together: one cable part is one part at both ends), and
for NCCL the run (one log under ``telemetry/nccl/``: NCCL comes with the job, so two jobs may rightly load two
releases, but the ranks of one job must agree). An optic's part and revision are judged against a baseline only (a
fleet rightly mixes parts and vendor revisions of one part); its firmware, which is upgraded in place, also by its
group's majority. EOS and NVUE switch optics are not read (``show inventory`` / ``nv show interface <if>
transceiver`` are not collected). Everything here is linear in the devices.

**Version patterns** (``fleet.groups[i].<field>`` in ``fabric.yaml``, a string or a list; a version is allowed
when any list item matches):

* ``re:<regex>`` -- the whole version matches the regular expression;
* a glob (``22.39.*``, ``4.3[12].*``) -- shell-style, case-sensitive;
* comparisons joined by commas, all of which must hold: ``>=22.39.1002``, ``>=4.31,<4.33``, ``!=535.54.03``
  (``>=``, ``<=``, ``>``, ``<``, ``==``, ``!=``); versions compare number by number (``28.39.1002`` >
  ``28.9.9999``), letters after numbers, and text before the first number (``SONiC.``, ``Cumulus Linux``) is
  ignored;
* anything else is the exact version.

**Selectors** (``fleet.groups[i].match``): ``kind`` (host, switch), ``role`` (host, leaf, spine), ``name``,
``os`` (a switch's OS), ``platform`` (a switch's platform or model), ``nic_model`` (``ConnectX-7`` or the part id
``4129``), ``psid`` (``MT_0000000838``), ``gpu_model``; each a glob or ``re:<regex>``; all given must match, and a
selector the fact does not have (``psid`` of a switch) does not match.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field

from unifab.model import Fabric, Host, Nic, Transceiver, VersionRule

__all__ = [
    "FIELDS",
    "NIC_MODELS",
    "OPTIC_FIELDS",
    "SELECTORS",
    "Fact",
    "Field",
    "allowed",
    "fleet_facts",
    "nic_model",
    "pattern_problem",
    "selector_problem",
    "selects",
    "version_key",
]


@dataclass(frozen=True, slots=True)
class Field:
    check: str
    title: str  # "NIC firmware"
    unit: str  # what a device of the distribution is: "host", "switch", "device" (hosts and switches)
    uniform: bool = True  # False: judged against a baseline only (no majority)
    part: str | None = None  # what one fact counts besides its device ("NIC", "optic"), for the distribution


OPTIC_FIELDS = ("transceiver_part", "transceiver_revision", "transceiver_firmware")
FIELDS: dict[str, Field] = {
    "nic_firmware": Field("FLEET-FIRMWARE", "NIC firmware", "host", part="NIC"),
    "transceiver_part": Field("FLEET-FIRMWARE", "transceiver part number", "device", uniform=False, part="optic"),
    "transceiver_revision": Field("FLEET-FIRMWARE", "transceiver revision", "device", uniform=False, part="optic"),
    "transceiver_firmware": Field("FLEET-FIRMWARE", "transceiver firmware", "device", part="optic"),
    "nic_driver": Field("FLEET-DRIVER", "NIC driver", "host"),
    "gpu_driver": Field("FLEET-DRIVER", "GPU driver", "host"),
    "cuda": Field("FLEET-DRIVER", "CUDA version", "host"),
    "nccl": Field("FLEET-DRIVER", "NCCL version", "host"),
    "switch_os": Field("FLEET-OS", "switch OS", "switch"),
}
SELECTORS = ("kind", "role", "name", "os", "platform", "nic_model", "psid", "gpu_model")

# PCI device ids (ibv_devinfo vendor_part_id) of the NICs a fleet groups by model
NIC_MODELS = {
    4115: "ConnectX-4",
    4117: "ConnectX-4 Lx",
    4119: "ConnectX-5",
    4121: "ConnectX-5 Ex",
    4123: "ConnectX-6",
    4125: "ConnectX-6 Dx",
    4127: "ConnectX-6 Lx",
    4129: "ConnectX-7",
    4131: "ConnectX-8",
    41686: "BlueField-2",
    41692: "BlueField-3",
    0x1760: "BCM57608",
}
NCCL_LOGS = "telemetry/nccl"  # layout.NCCL_LOG_DIR: a run's group is named by its log
_OPS = (">=", "<=", "==", "!=", ">", "<")
_TOKEN = re.compile(r"\d+|[A-Za-z]+")
MAX_PATTERN = 200


@dataclass(frozen=True, slots=True)
class Fact:
    """One device's version of one field in one group (its NICs of that group when the field is per NIC)."""

    field: str
    kind: str  # "host" | "switch"
    device: str
    group: tuple[str, ...]  # what must be uniform, e.g. ("ConnectX-7", "MT_0000000838")
    version: str
    entities: tuple[str, ...]  # nic:h:mlx5_0 ... | host:h | switch:s | optic:h:eth0 | optic:s:Ethernet8
    attrs: dict[str, str] = dc_field(default_factory=dict)  # selector values of this fact
    nics: tuple[Nic, ...] = ()  # the NICs of a per-NIC fact (for their fix commands)

    @property
    def label(self) -> str:
        return " ".join(g for g in self.group if g) or "all"


def nic_model(nic: Nic) -> str | None:
    part = nic.vendor_part_id
    if part is None:
        return None
    return NIC_MODELS.get(part, f"part {part}")


def _gpu_model(host: Host) -> str:
    names = sorted({g.name for g in host.gpus.values() if g.name})
    return names[0] if names else ""


def fleet_facts(fabric: Fabric, leaves: Iterable[str] = ()) -> Iterator[Fact]:
    """Every version fact of the fabric, hosts then switches in name order (``leaves``: switches cabled to hosts)."""
    for name in sorted(fabric.hosts):
        yield from _host_facts(fabric.hosts[name])
    leaf_set = set(leaves)
    for name in sorted(fabric.switches):
        sw = fabric.switches[name]
        attrs = {"kind": "switch", "role": "leaf" if name in leaf_set else "spine", "name": name, "os": sw.os}
        platform = sw.platform or sw.hwsku
        if platform:
            attrs["platform"] = platform
        if sw.version:
            yield Fact("switch_os", "switch", name, (sw.os, platform or ""), sw.version, (f"switch:{name}",), attrs)
        for port in sw.ports.values():
            if port.transceiver is not None:
                yield from _optic_facts("switch", name, port.name, port.transceiver, attrs)


def _optic_facts(
    kind: str, device: str, port: str, t: Transceiver, attrs: dict[str, str], nics: tuple[Nic, ...] = ()
) -> Iterator[Fact]:
    """An optic's part (group: vendor), revision and firmware (group: vendor + part), each where known."""
    if not t.part_number:
        return
    optic = (f"optic:{device}:{port}",)
    yield Fact("transceiver_part", kind, device, (t.vendor or "",), t.part_number, optic, attrs, nics)
    group = (t.vendor or "", t.part_number)
    if t.revision:
        yield Fact("transceiver_revision", kind, device, group, t.revision, optic, attrs, nics)
    if t.firmware:
        yield Fact("transceiver_firmware", kind, device, group, t.firmware, optic, attrs, nics)


def _host_facts(host: Host) -> Iterator[Fact]:
    base = {"kind": "host", "role": "host", "name": host.name}
    nics = [host.nics[k] for k in sorted(host.nics)]
    by: dict[tuple[str, tuple[str, ...], str], list[Nic]] = {}
    attrs_of: dict[tuple[str, tuple[str, ...], str], dict[str, str]] = {}
    for nic in nics:
        model = nic_model(nic)
        attrs = dict(base)
        if model is not None:
            attrs["nic_model"] = model
            attrs["nic_part"] = str(nic.vendor_part_id)
        if nic.board_id:
            attrs["psid"] = nic.board_id
        key: tuple[str, tuple[str, ...], str]
        if nic.fw_ver and model is not None:
            key = ("nic_firmware", (model, nic.board_id or ""), nic.fw_ver)
            by.setdefault(key, []).append(nic)
            attrs_of[key] = attrs
        if nic.driver_version and nic.driver:
            key = ("nic_driver", (nic.driver,), nic.driver_version)
            by.setdefault(key, []).append(nic)
            attrs_of[key] = {**base, "os": nic.driver, **({"nic_model": model} if model else {})}
    for (name, group, version), members in by.items():
        ids = tuple(n.id for n in members) if name == "nic_firmware" else (host.id,)
        yield Fact(name, "host", host.name, group, version, ids, attrs_of[(name, group, version)], tuple(members))
    for nic in nics:
        if nic.transceiver is not None:
            attrs = {**base, **({"nic_model": m} if (m := nic_model(nic)) else {})}
            yield from _optic_facts("host", host.name, nic.netdev, nic.transceiver, attrs, (nic,))
    gpu = _gpu_model(host)
    gattrs = {**base, **({"gpu_model": gpu} if gpu else {})}
    if host.gpu_driver:
        yield Fact("gpu_driver", "host", host.name, (gpu,), host.gpu_driver, (host.id,), gattrs)
    if host.cuda_version:
        yield Fact("cuda", "host", host.name, (gpu,), host.cuda_version, (host.id,), gattrs)
    for log, release in host.nccl_versions:
        yield Fact("nccl", "host", host.name, (f"{NCCL_LOGS}/{log}",), release, (host.id,), gattrs)


# --- the grammar -------------------------------------------------------------------------------------------


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key of a version: numbers numerically, letters after numbers, text before the first number ignored."""
    tokens = _TOKEN.findall(version)
    first = next((i for i, t in enumerate(tokens) if t.isdigit()), len(tokens))
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in tokens[first:])


def _compare(version: str, op: str, other: str) -> bool:
    a, b = version_key(version), version_key(other)
    return {
        ">=": a >= b,
        "<=": a <= b,
        ">": a > b,
        "<": a < b,
        "==": a == b,
        "!=": a != b,
    }[op]


def _clause(text: str) -> tuple[str, str] | None:
    for op in _OPS:
        if text.startswith(op):
            return op, text[len(op) :].strip()
    return None


def _is_comparison(pattern: str) -> bool:
    return pattern.startswith(_OPS)


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` is not a version pattern (see the module doc), ``None`` when it is one."""
    if not isinstance(pattern, str) or not pattern.strip():
        return f"a version pattern must be a non-empty string; got {pattern!r}"
    if len(pattern) > MAX_PATTERN:
        return f"a version pattern is at most {MAX_PATTERN} characters"
    if pattern.startswith("re:"):
        try:
            re.compile(pattern[3:])
        except re.error as exc:
            return f"{pattern!r} is not a regular expression after 're:' ({exc})"
        return None
    if _is_comparison(pattern):
        for part in pattern.split(","):
            clause = _clause(part.strip())
            if clause is None or not clause[1] or not version_key(clause[1]):
                return (
                    f"{pattern!r}: each comma-separated part must be an operator ({', '.join(_OPS)}) and a version "
                    "with a number, e.g. '>=22.39.1002'"
                )
    return None


def selector_problem(pattern: object) -> str | None:
    if not isinstance(pattern, str) or not pattern:
        return f"a selector must be a non-empty string (a glob or re:<regex>); got {pattern!r}"
    if pattern.startswith("re:"):
        try:
            re.compile(pattern[3:])
        except re.error as exc:
            return f"{pattern!r} is not a regular expression after 're:' ({exc})"
    return None


def _matches(value: str, pattern: str) -> bool:
    if pattern.startswith("re:"):
        return re.fullmatch(pattern[3:], value) is not None
    return fnmatch.fnmatchcase(value, pattern)


def allowed(version: str, patterns: Iterable[str]) -> bool:
    """Whether ``version`` matches any of ``patterns``."""
    for pattern in patterns:
        if pattern.startswith("re:"):
            if re.fullmatch(pattern[3:], version) is not None:
                return True
        elif _is_comparison(pattern):
            clauses = [_clause(p.strip()) for p in pattern.split(",")]
            if all(c is not None and _compare(version, *c) for c in clauses):
                return True
        elif fnmatch.fnmatchcase(version, pattern):
            return True
    return False


def selects(rule: VersionRule, fact: Fact) -> bool:
    """Whether every selector of ``rule`` matches ``fact`` (``nic_model`` also by the NIC's part id)."""
    for key, pattern in rule.select:
        value = fact.attrs.get(key)
        if key == "nic_model" and value is not None and _matches(fact.attrs.get("nic_part", ""), pattern):
            continue
        if value is None or not _matches(value, pattern):
            return False
    return True
