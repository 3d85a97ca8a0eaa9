"""Read a bundle directory (the design's offline snapshot layout) into a :class:`Fabric`.

Every file goes through the same parsers used for real device output. A file that cannot be read
or parsed becomes an ``INPUT-UNREADABLE`` finding naming the file and line; a file the layout
requires but that is absent becomes ``INPUT-MISSING``. Neither stops the rest of the bundle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from unifab.collect.host import load_host
from unifab.errors import BundleError, ParseError
from unifab.model import Endpoint, Fabric, Finding, Link, Severity, Switch
from unifab.parse.plan import cabling
from unifab.render.profile import QosProfile

T = TypeVar("T")

BUNDLE_DIRS = ("hosts", "switches", "plan", "ib")
ProgressHook = Callable[[str, int], None]  # (phase, number of items done since last call)


@dataclass(slots=True)
class Problems:
    """Input findings gathered while reading; paths are bundle-relative."""

    root: Path
    findings: list[Finding] = field(default_factory=list)

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def unreadable(self, path: Path, reason: str, line: int | None = None, device: str | None = None) -> None:
        where = self.rel(path) + (f":{line}" if line is not None else "")
        subject = {"kind": "file", "path": self.rel(path)}
        if device:
            subject["device"] = device
        self.findings.append(
            Finding(
                check="INPUT-UNREADABLE",
                severity=Severity.ERROR,
                subject=subject,
                message=f"{where}: {reason}",
                evidence={"file": self.rel(path), "line": line, "reason": reason},
                entities=(f"file:{self.rel(path)}",),
            )
        )

    def missing(self, path: Path, why: str, device: str) -> None:
        self.findings.append(
            Finding(
                check="INPUT-MISSING",
                severity=Severity.WARNING,
                subject={"kind": "file", "path": self.rel(path), "device": device},
                message=f"{self.rel(path)} is missing: {why}",
                evidence={"file": self.rel(path)},
                entities=(f"file:{self.rel(path)}",),
            )
        )

    def parse_file(self, path: Path, parser: Callable[[str, str], T], device: str | None = None) -> T | None:
        """Read and parse one file; on any failure record a finding and return ``None``."""
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.unreadable(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", device=device)
            return None
        except OSError as exc:
            self.unreadable(path, f"cannot read: {exc.strerror}", device=device)
            return None
        try:
            return parser(text, self.rel(path))
        except ParseError as exc:
            self.unreadable(path, exc.expected, line=exc.line, device=device)
            return None


def load_bundle(root: Path, progress: ProgressHook | None = None) -> Fabric:
    """Assemble a fabric snapshot from ``root``; raises :class:`BundleError` if it is not a bundle."""
    if not root.exists():
        raise BundleError(f"bundle not found: {root}")
    if not root.is_dir():
        raise BundleError(f"not a bundle directory: {root}")
    if not any((root / d).is_dir() for d in BUNDLE_DIRS):
        raise BundleError(f"not a bundle: {root} has none of {', '.join(d + '/' for d in BUNDLE_DIRS)}")
    problems = Problems(root)
    fabric = Fabric()
    host_links: list[Link] = []
    for host_dir in _subdirs(root / "hosts"):
        host, links = load_host(host_dir, problems)
        fabric.hosts[host.name] = host
        host_links.extend(links)
        if progress:
            progress("hosts", 1)
    switch_links: list[Link] = []
    for switch_dir in _subdirs(root / "switches"):
        switch, links = _load_switch(switch_dir, problems)
        if switch is not None:
            fabric.switches[switch.name] = switch
        switch_links.extend(links)
        if progress:
            progress("switches", 1)
    ib_file = root / "ib" / "ibnetdiscover.txt"
    if ib_file.is_file():
        switch_links.extend(_load_ib(ib_file, fabric, problems))
    planned = _load_plan(root / "plan", problems)
    fabric.links = _merge_links(host_links + switch_links, planned)
    if (root / "scheduler").is_dir():
        from unifab.collect.scheduler import load_jobs

        fabric.jobs = load_jobs(root / "scheduler", problems)
    if (root / "fabric.yaml").is_file():
        fabric.qos_intent = _load_intent(root / "fabric.yaml", problems)
    fabric.input_findings = problems.findings
    return fabric


def _load_intent(path: Path, problems: Problems) -> QosProfile | None:
    """The fabric-wide QoS of the bundle's intent file; each problem in it is an INPUT-UNREADABLE finding."""
    from unifab.errors import IntentError
    from unifab.intent import load_intent

    try:
        return load_intent(path).base_profile()
    except IntentError as exc:
        for problem in exc.problems:
            line, _, reason = problem.removeprefix(f"{path}:").partition(": ")
            if line.isdigit():
                problems.unreadable(path, reason, line=int(line))
            else:
                problems.unreadable(path, problem.removeprefix(f"{path}: "))
        return None


def count_devices(root: Path) -> int:
    """Number of host and switch directories, for sizing a progress bar."""
    return sum(1 for d in ("hosts", "switches") for _ in _subdirs(root / d))


def _subdirs(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.iterdir() if p.is_dir())


def _load_switch(switch_dir: Path, problems: Problems) -> tuple[Switch | None, list[Link]]:
    """One switch directory: the first OS whose configuration is present, and the links its LLDP saw.

    ``sonic/config_db.json``, else ``eos/running-config.txt`` (+ ``show-interfaces.json``,
    ``show-version.json``, ``show-lldp-neighbors-detail.json``), else ``nvue/config.yaml``
    (``nv config show -o yaml``, + ``lldpcli.json``). With none of them: INPUT-MISSING naming the
    file expected for the OS directory that is there (SONiC's when there is none).
    """
    from unifab.collect.eos import RUNNING_CONFIG, eos_lldp_links, switch_from_eos
    from unifab.collect.nvue import CONFIG_FILE, nvue_lldp_links, switch_from_nvue
    from unifab.collect.sonic import sonic_lldp_links, switch_from_config_db

    name = switch_dir.name
    config_db = switch_dir / "sonic" / "config_db.json"
    eos_dir, nvue_dir = switch_dir / "eos", switch_dir / "nvue"
    if config_db.is_file():
        appl_db = config_db.with_name("appl_db.json")
        links = sonic_lldp_links(name, appl_db, problems) if appl_db.is_file() else []
        return switch_from_config_db(name, config_db, problems), links
    if (eos_dir / RUNNING_CONFIG).is_file():
        return switch_from_eos(name, eos_dir, problems), eos_lldp_links(name, eos_dir, problems)
    if (nvue_dir / CONFIG_FILE).is_file():
        return switch_from_nvue(name, nvue_dir, problems), nvue_lldp_links(name, nvue_dir, problems)
    expected = config_db
    if eos_dir.is_dir() and not config_db.parent.is_dir():
        expected = eos_dir / RUNNING_CONFIG
    elif nvue_dir.is_dir() and not config_db.parent.is_dir():
        expected = nvue_dir / CONFIG_FILE
    problems.missing(
        expected,
        "no supported switch configuration found (sonic/config_db.json, eos/running-config.txt or nvue/config.yaml)",
        device=name,
    )
    return None, []


def _load_ib(path: Path, fabric: Fabric, problems: Problems) -> list[Link]:
    """``ib/ibnetdiscover.txt``: IB hosts' NICs, IB switches (those not already under ``switches/``), cables."""
    from unifab.collect.ib import ib_view, merge_hosts
    from unifab.parse.ib import ibnetdiscover

    topology = problems.parse_file(path, ibnetdiscover.parse)
    if topology is None:
        return []
    view = ib_view(topology, problems.rel(path))
    merge_hosts(fabric.hosts, view.hosts)
    for name, switch in view.switches.items():
        fabric.switches.setdefault(name, switch)
    return view.links


def _load_plan(plan_dir: Path, problems: Problems) -> list[Link]:
    """``plan/cabling.csv`` and ``plan/topology.dot`` (PTM), merged.

    Both may be present: a cable in either is planned. Where the two disagree about a port (the dot file
    cables it to another peer than the CSV does), the CSV's cable is kept (it is unifab's own format and
    carries cable lengths) and the dot file's cable becomes an ``INPUT-UNREADABLE`` finding naming both files.
    """
    from unifab.parse.plan import topology_dot

    planned: dict[str, Link] = {}
    at: dict[Endpoint, Link] = {}
    csv_file, dot_file = plan_dir / "cabling.csv", plan_dir / "topology.dot"
    if csv_file.is_file():
        for c in problems.parse_file(csv_file, cabling.parse) or ():
            link = Link(Endpoint(c.a_node, c.a_port), Endpoint(c.z_node, c.z_port), frozenset({"plan"}), c.cable_m)
            planned.setdefault(link.id, link)
            at.setdefault(link.a, link)
            at.setdefault(link.b, link)
    dot = problems.parse_file(dot_file, topology_dot.parse) if dot_file.is_file() else None
    for cable in dot.cables if dot is not None else ():
        link = Link(Endpoint(cable.a_node, cable.a_port), Endpoint(cable.z_node, cable.z_port), frozenset({"plan"}))
        if link.id in planned:
            continue
        clash = next((at[end] for end in (link.a, link.b) if end in at and at[end].id != link.id), None)
        if clash is not None:
            _plan_conflict(problems, dot_file, csv_file, cable.line, link, clash)
            continue
        planned[link.id] = link
        at.setdefault(link.a, link)
        at.setdefault(link.b, link)
    return list(planned.values())


def _plan_conflict(problems: Problems, dot_file: Path, csv_file: Path, line: int, dot: Link, kept: Link) -> None:
    dot_rel, csv_rel = problems.rel(dot_file), problems.rel(csv_file)
    shared = dot.a if dot.a in (kept.a, kept.b) else dot.b
    reason = (
        f"cable {dot.a} -- {dot.b} disagrees with {csv_rel}, which cables {shared} to "
        f"{kept.b if kept.a == shared else kept.a}; the {csv_rel} cable is kept"
    )
    problems.findings.append(
        Finding(
            check="INPUT-UNREADABLE",
            severity=Severity.ERROR,
            subject={"kind": "file", "path": dot_rel, "conflicts_with": csv_rel},
            message=f"{dot_rel}:{line}: {reason}",
            evidence={
                "file": dot_rel,
                "line": line,
                "other_file": csv_rel,
                "reason": reason,
                "dot": f"{dot.a} -- {dot.b}",
                "csv": f"{kept.a} -- {kept.b}",
            },
            entities=(f"file:{dot_rel}", f"file:{csv_rel}"),
        )
    )


def _merge_links(discovered: list[Link], planned: list[Link]) -> list[Link]:
    """One link per cable: the same ends seen by LLDP and in the plan merge their sources."""
    merged: dict[str, Link] = {}
    for link in (*discovered, *planned):
        known = merged.get(link.id)
        if known is None:
            merged[link.id] = link
        else:
            cable = known.cable_m if known.cable_m is not None else link.cable_m
            merged[link.id] = Link(known.a, known.b, known.sources | link.sources, cable)
    return list(merged.values())


def load_switch(switch_dir: Path, problems: Problems) -> tuple[Switch | None, list[Link]]:
    """One switch directory exactly as :func:`load_bundle` reads it (to re-read a single device)."""
    return _load_switch(switch_dir, problems)


def load_plan(plan_dir: Path, problems: Problems) -> list[Link]:
    """The planned cables exactly as :func:`load_bundle` reads them."""
    return _load_plan(plan_dir, problems)


def merge_links(discovered: list[Link], planned: list[Link]) -> list[Link]:
    """One link per cable, merged exactly as :func:`load_bundle` merges them."""
    return _merge_links(discovered, planned)


def load_intent_file(path: Path, problems: Problems) -> QosProfile | None:
    """The bundle's ``fabric.yaml`` exactly as :func:`load_bundle` reads it."""
    return _load_intent(path, problems)
