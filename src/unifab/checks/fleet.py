"""Fleet lifecycle compliance: the versions devices run, against the intent's baseline or their group's majority.

``FLEET-FIRMWARE`` (NIC firmware; host and SONiC switch optics: part and revision against a baseline, module
firmware also by its vendor + part group's majority), ``FLEET-DRIVER`` (NIC driver /
OFED, GPU driver, CUDA, and the NCCL library: the user-space half of the same stack, which jobs load with the
driver and whose ranks must agree), ``FLEET-OS`` (switch OS image). Groups and the baseline grammar are in
:mod:`unifab.checks.fleet_versions`.

* **With a baseline** (``fabric.yaml`` ``fleet:``): a device a baseline group selects runs a version the group does
  not allow: an error. The last group in file order that selects the device and names the field decides.
* **Without one** for a device and field: in a group that should be uniform, the devices on other versions than
  the group's most common one (ties: the newest) are the stragglers: a warning, with the group's distribution
  (``28.39.1002: 511 hosts, 28.36.1010: 1 host``) as evidence. One host of 512 on older NIC firmware is the one
  rank every collective waits for.

NCCL's release comes from the ``NCCL version`` lines of the bundle's job logs (``telemetry/nccl/*.log``): each run
is a group, so the hosts of one job on another release than the rest of it are the stragglers; a host no log
names has no NCCL fact. Everything is linear in the devices.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field

from unifab.checks.context import CheckContext
from unifab.checks.fleet_versions import FIELDS, OPTIC_FIELDS, Fact, allowed, fleet_facts, selects, version_key
from unifab.checks.memo import run_memo
from unifab.checks.registry import CheckSpec
from unifab.checks.topology_coverage import shown
from unifab.model import Finding, Fix, Nic, Severity, VersionRule
from unifab.render import host_script as hs

__all__ = [
    "CHECKS",
    "Deviation",
    "GroupView",
    "check_driver",
    "check_firmware",
    "check_os",
    "fleet_groups",
    "fleet_judgement",
    "units",
]

_SAFE_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_SONIC_PORT = re.compile(r"Ethernet[0-9]{1,5}")  # (fullmatch) a port name safe to put in an sfputil command
MELLANOX_MODELS = ("ConnectX", "BlueField")

IMPACT = {
    "nic_firmware": "firmware differs from its peers in congestion control, PFC and RoCE defaults and in the bugs "
    "fixed in one release: the one slow or misbehaving rank every collective waits for",
    "nic_driver": "another driver release changes DCQCN defaults, counters and fixes on this host alone",
    "gpu_driver": "jobs built for the fleet's driver may fail or run differently here; NCCL and GPUDirect RDMA "
    "depend on the driver",
    "cuda": "the driver's CUDA version decides which job containers run here; a job fails on this host alone",
    "nccl": "ranks of one job on different NCCL releases can disagree on protocols, tuning and fixed bugs: the job "
    "hangs at init or in a collective, or waits for the one slow rank",
    "switch_os": "a switch on another release can differ in buffer, ECN and PFC behaviour and in bugs the rest of "
    "the fabric has fixed",
    "transceiver_part": "an optic outside the qualified list is a link the vendor's interoperability matrix does "
    "not cover",
    "transceiver_revision": "an optic revision outside the qualified list is a link the vendor's matrix does not cover",
    "transceiver_firmware": "module firmware differs in DSP tuning, link training and fixed bugs: the optic that "
    "flaps, trains to errors or drops lanes where its peers of the same part do not",
}


def units(unit: str) -> str:
    """``hosts``, ``switches``."""
    return unit + ("es" if unit.endswith(("s", "sh", "ch")) else "s")


@dataclass(slots=True)
class GroupView:
    """One group's versions: how many devices (and NICs) run each, which is the majority."""

    field: str
    group: tuple[str, ...]
    label: str
    devices: dict[str, set[str]] = dc_field(default_factory=dict)  # version -> devices
    weight: Counter[str] = dc_field(default_factory=Counter)  # version -> NICs (per-NIC fields) or devices

    def count(self, version: str | None) -> int:
        """How many of the group run ``version``: its optics for an optic field, else its devices."""
        if version is None:
            return 0
        return self.weight[version] if self.field in OPTIC_FIELDS else len(self.devices.get(version, ()))

    @property
    def target(self) -> str:
        """The most common version (by NICs for per-NIC fields); a tie goes to the newest."""
        return max(self.weight, key=lambda v: (self.weight[v], version_key(v), v))

    def distribution(self) -> dict[str, str]:
        """``{version: "511 hosts"}``, outliers (least common) first."""
        unit = FIELDS[self.field].unit
        out = {}
        for version in sorted(self.weight, key=lambda v: (self.weight[v], version_key(v))):
            n = len(self.devices[version])
            text = f"{n} {unit if n == 1 else units(unit)}"
            part = FIELDS[self.field].part
            if part is not None:
                text += f" ({self.weight[version]} {part}{'' if self.weight[version] == 1 else 's'})"
            out[version] = text
        return out


def fleet_groups(ctx: CheckContext) -> tuple[list[Fact], dict[tuple[str, tuple[str, ...]], GroupView]]:
    """Every fact and its groups, one pass (once per check run: the three FLEET checks share it)."""
    return run_memo("fleet_groups", ctx, lambda: _fleet_groups(ctx))


def _fleet_groups(ctx: CheckContext) -> tuple[list[Fact], dict[tuple[str, tuple[str, ...]], GroupView]]:
    facts = list(fleet_facts(ctx.fabric, ctx.hosts_behind))
    groups: dict[tuple[str, tuple[str, ...]], GroupView] = {}
    for f in facts:
        view = groups.get((f.field, f.group))
        if view is None:
            view = groups[(f.field, f.group)] = GroupView(f.field, f.group, f.label)
        view.devices.setdefault(f.version, set()).add(f.device)
        view.weight[f.version] += len(f.entities) if f.field == "nic_firmware" else 1
    return facts, groups


def _rule_for(rules: tuple[VersionRule, ...], fact: Fact) -> tuple[VersionRule, tuple[str, ...]] | None:
    found = None
    for rule in rules:
        patterns = dict(rule.allowed).get(fact.field)
        if patterns is not None and selects(rule, fact):
            found = (rule, patterns)
    return found


@dataclass(slots=True)
class Deviation:
    facts: list[Fact]
    view: GroupView
    rule: tuple[VersionRule, tuple[str, ...]] | None
    target: str | None


def fleet_judgement(ctx: CheckContext, check: str | None = None) -> list[Deviation]:
    """Every device and field off its baseline or in its group's minority, facts of one device merged."""
    facts, groups = fleet_groups(ctx)
    rules = ctx.fabric.fleet_baseline
    out: dict[tuple[str, str, tuple[str, ...]], Deviation] = {}
    for f in facts:
        spec = FIELDS[f.field]
        if check is not None and spec.check != check:
            continue
        view = groups[(f.field, f.group)]
        rule = _rule_for(rules, f) if rules else None
        if rule is not None:
            if allowed(f.version, rule[1]):
                continue
            target = _baseline_target(view, rule[1])
        elif spec.uniform and len(view.weight) > 1 and f.version != view.target:
            target = view.target
        else:
            continue
        key = (f.device, f.field, f.group)
        if key in out:
            out[key].facts.append(f)
        else:
            out[key] = Deviation([f], view, rule, target)
    return list(out.values())


def _baseline_target(view: GroupView, patterns: tuple[str, ...]) -> str | None:
    """The version to move to: the group's most common allowed one, else an exact version the baseline names."""
    seen = sorted(view.weight, key=lambda v: (view.weight[v], version_key(v)), reverse=True)
    fine = [v for v in seen if allowed(v, patterns)]
    if fine:
        return fine[0]
    exact = [p for p in patterns if not p.startswith(("re:", ">", "<", "=", "!")) and not set(p) & set("*?[")]
    return exact[0] if exact else None


def _finding(d: Deviation) -> Finding:
    first = d.facts[0]
    spec = FIELDS[first.field]
    versions = sorted({f.version for f in d.facts}, key=version_key)
    entities = tuple(dict.fromkeys(e for f in d.facts for e in f.entities))
    what = f"{spec.title} {', '.join(versions)}"
    on = ""
    if spec.part is not None:
        devs = [e.rsplit(":", 1)[-1] for e in entities]
        on = f" on {', '.join(devs)} ({len(devs)} {spec.part}{'' if len(devs) == 1 else 's'})"
    distribution = d.view.distribution()
    evidence: dict[str, object] = {
        "field": first.field,
        "group": d.view.label,
        "version": versions[0] if len(versions) == 1 else versions,
        "distribution": distribution,
    }
    if d.rule is not None:
        rule, patterns = d.rule
        severity = Severity.ERROR
        evidence |= {"allowed": list(patterns), "baseline": rule.where}
        message = (
            f"{first.device} runs {what}{on}, which the fleet baseline ({rule.where}) does not allow for "
            f"{d.view.label}: allowed {', '.join(patterns)}"
        )
    else:
        severity = Severity.WARNING
        optics = first.field in OPTIC_FIELDS
        total = sum(d.view.weight.values()) if optics else sum(len(v) for v in d.view.devices.values())
        same = d.view.count(d.target)
        evidence["expected"] = d.target
        message = (
            f"{first.device} runs {what}{on}; {same} of {total} {'optics' if optics else units(spec.unit)} of its "
            f"group ({d.view.label}) run "
            f"{d.target} ({'; '.join(f'{v}: {n}' for v, n in distribution.items())})"
        )
    nics = tuple({n.id: n for f in d.facts for n in f.nics}.values())
    return Finding(
        check=spec.check,
        severity=severity,
        subject={"kind": first.kind, "device": first.device, "field": first.field, "group": d.view.label},
        message=message,
        evidence=evidence,
        fix=_fixes(first, nics, d.target, d.rule[1] if d.rule else (), entities),
        impact={"summary": IMPACT[first.field], "devices_in_group": sum(len(v) for v in d.view.devices.values())},
        entities=entities,
    )


# --- fixes ---------------------------------------------------------------------------------------------------


def _want(target: str | None, patterns: tuple[str, ...]) -> str:
    if target is not None:
        return target
    return f"a version the baseline allows ({', '.join(patterns)})"


def _fixes(
    fact: Fact, nics: tuple[Nic, ...], target: str | None, patterns: tuple[str, ...], entities: tuple[str, ...] = ()
) -> tuple[Fix, ...]:
    want = _want(target, patterns)
    safe = target if target is not None and _SAFE_VERSION.fullmatch(target) else None
    if fact.field == "nic_firmware":
        return (Fix(fact.device, _nic_firmware(fact, nics, want)),)
    if fact.field == "nic_driver":
        driver = fact.group[0]
        lines = [
            f"# install the {driver} driver release {want} (MLNX_OFED / DOCA-OFED for mlx5_core, the vendor "
            "package otherwise), then reload it:"
        ]
        if driver == "mlx5_core":
            lines.append("/etc/init.d/openibd restart")
        if re.fullmatch(r"[a-z0-9_]{1,32}", driver):
            lines.append(f"modinfo -F version {driver}")
        return (Fix(fact.device, tuple(lines)),)
    if fact.field == "nccl":
        return (
            Fix(
                fact.device,
                (
                    f"# run the job with NCCL {want} on this host, as the rest of its run does: the same job "
                    "image, or the host's libnccl2 package and LD_LIBRARY_PATH (the NCCL_DEBUG=INFO line "
                    "'NCCL version ...' shows which release a rank loaded)",
                    "ldconfig -p | grep libnccl",
                ),
            ),
        )
    if fact.field in ("gpu_driver", "cuda"):
        what = "NVIDIA data-center driver" + (f" {want}" if fact.field == "gpu_driver" else f" whose CUDA is {want}")
        return (
            Fix(
                fact.device,
                (
                    f"# install the {what} (the branch the rest of the group runs), then reboot the host",
                    "nvidia-smi --query-gpu=driver_version --format=csv,noheader",
                ),
            ),
        )
    if fact.field == "switch_os":
        return (Fix(fact.device, _switch_os(fact, want, safe)),)
    if fact.field == "transceiver_firmware":
        return (Fix(fact.device, _optic_firmware(fact, entities or fact.entities, want)),)
    return (Fix(fact.device, (f"# replace the optic with a qualified part / revision: {want}",)),)


def _optic_firmware(fact: Fact, entities: tuple[str, ...], want: str) -> tuple[str, ...]:
    """SONiC: sfputil's CDB firmware upgrade (download, run, commit) per port; elsewhere the vendor's tool."""
    vendor, part = fact.group
    if fact.kind == "switch" and fact.attrs.get("os") == "sonic":
        lines = [f"# FW_FILE=the {vendor} {part} module firmware image {want} (from the module vendor); per port:"]
        for port in (e.rsplit(":", 1)[-1] for e in entities):
            if not _SONIC_PORT.fullmatch(port):
                lines.append(f"# {shown(port)}: not a port name safe to name in a command")
                continue
            lines += [f"sudo sfputil show fwversion {port}", f'sudo sfputil firmware upgrade {port} "$FW_FILE"']
        return tuple(lines)
    return (f"# update the {vendor} {part} module firmware to {want} with the vendor's tool, then re-seat or reset it",)


def _nic_firmware(fact: Fact, nics: tuple[Nic, ...], want: str) -> tuple[str, ...]:
    model = fact.group[0]
    psid = fact.group[1] if len(fact.group) > 1 else ""
    lines: list[str] = []
    if model.startswith(MELLANOX_MODELS):
        lines.append(
            f"# FW_IMAGE=the {model} firmware image {want} for PSID {psid or '(see mstflint query)'} "
            "(NVIDIA publishes one per PSID); burn it and reset each NIC:"
        )
        for nic in nics:
            dev = _nic_device(nic)
            if dev is None:
                lines.append(f"# {nic.id}: no PCI address or RDMA name safe to name in a command")
                continue
            lines += [
                f"mstflint -d {dev} query",
                f'mlxfwmanager -d {dev} -u -y -i "$FW_IMAGE"',
                f"mstfwreset -d {dev} -y reset",
            ]
        return tuple(lines)
    names = ", ".join(n.rdma_dev or n.netdev for n in nics)
    return (
        f"# update the {model} firmware of {names} to {want} with the vendor's tool (Broadcom: niccli), then reboot",
    )


def _nic_device(nic: Nic) -> str | None:
    if nic.pci_address and _BDF.fullmatch(nic.pci_address):
        return nic.pci_address
    if nic.rdma_dev:
        try:
            return hs.rdma_dev(nic.rdma_dev)
        except ValueError:
            return None
    return None


def _switch_os(fact: Fact, want: str, safe: str | None) -> tuple[str, ...]:
    os_name = fact.group[0]
    if os_name == "sonic":
        return (
            f"# SONIC_IMAGE=URL or path of the SONiC image {want} for platform {fact.group[1] or 'of this switch'}",
            'sudo sonic-installer install -y "$SONIC_IMAGE"',
            "sudo sonic-installer list",
            "# reboot into it (sonic-installer install makes it the next boot image)",
        )
    if os_name == "eos" and safe is not None:
        return (
            f"! copy EOS-{safe}.swi (or EOS64-{safe}.swi) to flash: first, then boot it at the next reload",
            f"boot system flash:EOS-{safe}.swi",
        )
    if os_name == "nvue" and safe is not None:
        release = safe.rsplit(" ", 1)[-1]
        return (
            f"# fetch it first: nv action fetch system image <URL of cumulus-linux-{release}-mlx-amd64.bin>",
            f"nv action install system image files cumulus-linux-{release}-mlx-amd64.bin",
        )
    if os_name == "nvue" and want.startswith("Cumulus Linux "):
        release = want.rsplit(" ", 1)[-1]
        if _SAFE_VERSION.fullmatch(release):
            return (
                f"# fetch it first: nv action fetch system image <URL of cumulus-linux-{release}-mlx-amd64.bin>",
                f"nv action install system image files cumulus-linux-{release}-mlx-amd64.bin",
            )
    return (f"# install {os_name} {want} with the platform's image installer, then reload",)


# --- the checks ----------------------------------------------------------------------------------------------


def _run(ctx: CheckContext, check: str) -> Iterator[Finding]:
    for deviation in fleet_judgement(ctx, check):
        yield _finding(deviation)


def check_firmware(ctx: CheckContext) -> Iterator[Finding]:
    """NIC firmware off the baseline or in its group's minority (group: NIC model + PSID); optics off the baseline,
    and optic firmware in the minority of its vendor + part."""
    return _run(ctx, "FLEET-FIRMWARE")


def check_driver(ctx: CheckContext) -> Iterator[Finding]:
    """NIC driver, GPU driver, CUDA and NCCL off the baseline or in the group's minority (NCCL: of its run)."""
    return _run(ctx, "FLEET-DRIVER")


def check_os(ctx: CheckContext) -> Iterator[Finding]:
    """Switch OS images off the baseline or in the minority of their OS + platform."""
    return _run(ctx, "FLEET-OS")


CHECKS = (
    CheckSpec(
        "FLEET-FIRMWARE",
        "A NIC's firmware (or an optic's part, revision or firmware) is off the fleet baseline or differs from its "
        "group's",
        "NICs of one model and PSID should run one firmware: a straggler differs in RoCE, PFC and congestion "
        "control defaults and in fixed bugs, and every collective waits for its rank. Optics of one part should run "
        "one module firmware (SONiC STATE_DB TRANSCEIVER_FIRMWARE_INFO).",
        "Burn the group's firmware for the NIC's PSID (mstflint / mlxfwmanager -i, then mstfwreset), upgrade the "
        "optic's module firmware (SONiC: sfputil firmware upgrade), or set the allowed versions in fabric.yaml "
        "fleet:.",
        check_firmware,
    ),
    CheckSpec(
        "FLEET-DRIVER",
        "A host's NIC driver, GPU driver, CUDA or NCCL is off the fleet baseline or differs from its group's",
        "A driver release changes DCQCN defaults, counters, NCCL and GPUDirect RDMA behaviour on that host alone; "
        "a job built for the fleet's CUDA may not start there; ranks of one job on different NCCL releases hang or "
        "wait for the odd one.",
        "Install the group's driver release (MLNX_OFED / DOCA-OFED, the NVIDIA driver branch) and reload or "
        "reboot, run the job's ranks with one NCCL, or set the allowed versions in fabric.yaml fleet:.",
        check_driver,
    ),
    CheckSpec(
        "FLEET-OS",
        "A switch's OS image is off the fleet baseline or differs from its OS and platform group's",
        "A switch on another release differs in buffer, ECN and PFC behaviour and in bugs the rest of the fabric "
        "has fixed.",
        "Install the group's image (sonic-installer install, EOS boot system, nv action install system image) at "
        "a maintenance window, or set the allowed versions in fabric.yaml fleet:.",
        check_os,
    ),
)
