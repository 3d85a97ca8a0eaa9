"""COVERAGE: a planned device that was not collected, and what that leaves unchecked.

The plan (``plan/cabling.csv``, ``plan/topology.dot``) names every device the fabric should have. One that
has no readable files in the bundle (never collected, or its configuration unreadable: the ``INPUT-*``
finding says which) is one ``COVERAGE`` finding: how many of its planned links are confirmed anyway by the
LLDP of their other end, how many nothing confirms, and which checks cannot judge those links without its
side. It is a warning when a job's hosts are behind those links (a host link of a job host, or an uplink
of a leaf that job hosts are cabled to), otherwise info.

A device the plan cables to a collected host is a switch; one a job names is a host; otherwise it is a host
when its planned ports carry the names collected hosts give their NICs and no collected switch gives its
ports, a switch in every other case (a spine).

Linear: one pass over the links indexes them by device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from unifab.checks.context import CheckContext
from unifab.checks.registry import CheckSpec
from unifab.model import Fabric, Finding, Fix, Link, Severity

__all__ = ["CHECKS", "HOST_SIDE_CHECKS", "SWITCH_SIDE_CHECKS", "check_coverage", "collect_fix", "shown"]

# Checks that need a switch's own files to judge its links (its ports' QoS, speed, FEC, buffers, uplinks).
SWITCH_SIDE_CHECKS = (
    "QOS-TRUST",
    "QOS-PFC-MISMATCH",
    "QOS-PFC-LOSSY-ROCE",
    "QOS-DSCP-MAP",
    "QOS-PFCWD",
    "QOS-ECN-OFF",
    "QOS-ECN-THRESH",
    "QOS-ECN-COLOR",
    "QOS-WRED-DROP",
    "QOS-CNP",
    "QOS-HEADROOM",
    "QOS-MTU",
    "QOS-CABLE-LEN",
    "LINK-SPEED",
    "LINK-FEC",
    "TOPO-DEGRADED",
    "TOPO-UPLINKS",
)
# Checks that need a host's own files (its NICs' QoS and DCQCN, GPUs, PCIe) to judge its links.
HOST_SIDE_CHECKS = (
    "QOS-TRUST",
    "QOS-PFC-MISMATCH",
    "QOS-PFC-LOSSY-ROCE",
    "QOS-DSCP-MAP",
    "QOS-TC-OVERRIDE",
    "QOS-GLOBAL-PAUSE",
    "QOS-DCQCN-OFF",
    "QOS-CNP",
    "QOS-HEADROOM",
    "QOS-MTU",
    "QOS-CABLE-LEN",
    "TOPO-DEGRADED",
    "TOPO-PCIE-AFFINITY",
    "TOPO-NCCL-HCA",
)


def shown(name: str) -> str:
    """A device-derived name as it may appear in a comment line: itself when plain, else its ``repr``
    (no newline, escape or control character reaches a fix line)."""
    return name if name.isprintable() and "#" not in name else repr(name)


def collect_fix(name: str, role: str) -> Fix:
    """What to do about a device that was not collected: collect it (a comment; no command is guessed)."""
    how = (
        "run 'unifab agent collect' on it, or add it to the bundle's hosts/"
        if role == "host"
        else "add it to the inventory of 'unifab collect --inventory FILE --out BUNDLE', or add its files under "
        "switches/"
    )
    return Fix(name, (f"# {shown(name)} is in the plan but was not collected: {how}; then check again",))


@dataclass(slots=True)
class _Uncollected:
    links: dict[str, Link] = field(default_factory=dict)  # planned links, by id
    peers_are_hosts: bool = False
    ports: set[str] = field(default_factory=set)


def _index(fabric: Fabric) -> tuple[dict[str, _Uncollected], dict[str, set[str]]]:
    """Planned devices not collected (with their planned links), and the hosts cabled to each collected switch."""
    found: dict[str, _Uncollected] = {}
    behind: dict[str, set[str]] = {}
    for lk in fabric.links:
        for end, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if other.node in fabric.hosts and end.node not in fabric.hosts:
                behind.setdefault(end.node, set()).add(other.node)
            if "plan" not in lk.sources or end.node in fabric.hosts or end.node in fabric.switches:
                continue
            dev = found.setdefault(end.node, _Uncollected())
            dev.links[lk.id] = lk
            dev.ports.add(end.port)
            dev.peers_are_hosts |= other.node in fabric.hosts
    return found, behind


@dataclass(frozen=True, slots=True)
class _Names:
    """Names collected devices use: job hosts, NIC netdevs, switch ports (to tell an uncollected device's role)."""

    job_hosts: frozenset[str]
    netdevs: frozenset[str]
    ports: frozenset[str]

    @classmethod
    def of(cls, fabric: Fabric) -> _Names:
        return cls(
            frozenset(h for job in fabric.jobs.values() for h in job.hosts),
            frozenset(n for h in fabric.hosts.values() for n in h.nics),
            frozenset(p for sw in fabric.switches.values() for p in sw.ports),
        )

    def role(self, name: str, dev: _Uncollected) -> str:
        if dev.peers_are_hosts:
            return "switch"
        if name in self.job_hosts:
            return "host"
        return "host" if dev.ports and dev.ports <= self.netdevs and not dev.ports & self.ports else "switch"


def _input_files(fabric: Fabric) -> dict[str, list[str]]:
    """device -> bundle paths its INPUT-* findings name (why it could not be read)."""
    out: dict[str, list[str]] = {}
    for f in fabric.input_findings:
        device, path = f.subject.get("device"), f.subject.get("path")
        if device and path:
            out.setdefault(device, []).append(path)
    return out


def check_coverage(ctx: CheckContext) -> Iterator[Finding]:
    """One finding per planned device that was not collected: its links left unverified, the checks not run."""
    fabric = ctx.fabric
    found, behind = _index(fabric)
    if not found:
        return
    job_hosts: dict[str, list[str]] = {}  # host -> jobs running on it
    for job_id in sorted(fabric.jobs):
        for host in fabric.jobs[job_id].hosts:
            job_hosts.setdefault(host, []).append(job_id)
    inputs = _input_files(fabric)
    names = _Names.of(fabric)
    for name in sorted(found):
        dev = found[name]
        role = names.role(name, dev)
        links = sorted(dev.links.values(), key=lambda lk: lk.id)
        seen = [lk for lk in links if "lldp" in lk.sources]
        unseen = [lk for lk in links if "lldp" not in lk.sources]
        reached: set[str] = set()  # collected hosts behind its links
        for lk in links:
            other = lk.b if lk.a.node == name else lk.a
            reached |= {other.node} if other.node in fabric.hosts else behind.get(other.node, set())
        if role == "host":
            reached.add(name)
        jobs = sorted({j for h in reached for j in job_hosts.get(h, ())})
        checks = HOST_SIDE_CHECKS if role == "host" else SWITCH_SIDE_CHECKS
        seen_text = f"{len(seen)} confirmed by the other end's LLDP" if seen else "none confirmed by LLDP"
        job_text = f"; jobs behind them: {', '.join(jobs)}" if jobs else ""
        yield Finding(
            check="COVERAGE",
            severity=Severity.WARNING if jobs else Severity.INFO,
            subject={"kind": role, "id": f"{role}:{name}"},
            message=f"{name} is planned but was not collected: {len(links)} planned link"
            f"{'s' if len(links) != 1 else ''} unchecked at its end ({seen_text}, {len(unseen)} seen by neither "
            f"end), {len(checks)} checks cannot judge them{job_text}",
            evidence={
                "a": {
                    "device": name,
                    "role": role,
                    "collected": False,
                    **({"input_files": sorted(inputs[name])} if name in inputs else {}),
                },
                "b": {
                    "planned_links": len(links),
                    "confirmed_by_other_end": len(seen),
                    "seen_by_neither_end": [lk.id for lk in unseen],
                    "checks_not_run": list(checks),
                    "jobs": jobs,
                    "hosts_behind": len(reached),
                },
                "plan": [f"{lk.a} -- {lk.b}" for lk in links],
                "discovered": [f"{lk.a} -- {lk.b}" for lk in seen],
            },
            fix=(collect_fix(name, role),),
            impact={
                "summary": f"{len(links)} links are judged from one side only: their {role} end's QoS, speed and "
                "buffers are unknown, so a misconfiguration there goes unreported"
                + (f"; {len(jobs)} jobs run behind them" if jobs else ""),
                "action": f"collect {name} and check again",
                **({"jobs": jobs} if jobs else {}),
            },
            entities=(f"{role}:{name}",),
        )


CHECKS = (
    CheckSpec(
        "COVERAGE",
        "A planned device was not collected (or could not be read); what it leaves unchecked",
        "Every check that needs that device's side skips its links: a misconfiguration there goes unreported, and "
        "cables only its LLDP would confirm stay unverified. A warning when jobs run behind those links, info "
        "otherwise. A cable the other end's LLDP sees is still verified; the finding counts both kinds.",
        "Collect the device (unifab collect for switches, unifab agent collect for hosts) and check again; the "
        "finding lists its planned links and the checks that could not run.",
        check_coverage,
    ),
)
