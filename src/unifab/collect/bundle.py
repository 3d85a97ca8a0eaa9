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

from unifab.errors import BundleError, ParseError
from unifab.model import Endpoint, EtsClass, Fabric, Finding, Host, Link, Nic, NicQos, Severity, Switch
from unifab.parse.host import ibdev2netdev, lldpcli, mlnx_qos, sysfs_ecn, traffic_class
from unifab.parse.plan import cabling

T = TypeVar("T")

BUNDLE_DIRS = ("hosts", "switches", "plan")
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
        host, links = _load_host(host_dir, problems)
        fabric.hosts[host.name] = host
        host_links.extend(links)
        if progress:
            progress("hosts", 1)
    for switch_dir in _subdirs(root / "switches"):
        switch = _load_switch(switch_dir, problems)
        if switch is not None:
            fabric.switches[switch.name] = switch
        if progress:
            progress("switches", 1)
    planned = _load_plan(root / "plan", problems)
    fabric.links = _merge_links(host_links, planned)
    fabric.input_findings = problems.findings
    return fabric


def count_devices(root: Path) -> int:
    """Number of host and switch directories, for sizing a progress bar."""
    return sum(1 for d in ("hosts", "switches") for _ in _subdirs(root / d))


def _subdirs(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.iterdir() if p.is_dir())


def _read_tree(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in sorted(path.rglob("*")) if p.is_file()}


def _load_host(host_dir: Path, problems: Problems) -> tuple[Host, list[Link]]:
    name = host_dir.name
    cmd = host_dir / "cmd"
    sys_net = host_dir / "sys" / "class" / "net"
    rdma_of: dict[str, str] = {}
    ibdev_file = cmd / "ibdev2netdev.txt"
    if ibdev_file.is_file():
        rows = problems.parse_file(ibdev_file, ibdev2netdev.parse, device=name) or ()
        rdma_of = {r.netdev: r.rdma_dev for r in rows}
    qos_dir = cmd / "mlnx_qos"
    qos_files = {p.stem: p for p in qos_dir.glob("*.txt")} if qos_dir.is_dir() else {}
    nics: dict[str, Nic] = {}
    for netdev in sorted(set(rdma_of) | set(qos_files)):
        rdma = rdma_of.get(netdev)
        qos_path = qos_files.get(netdev, qos_dir / f"{netdev}.txt")
        if netdev not in qos_files:
            problems.missing(qos_path, f"RDMA NIC {netdev} has no mlnx_qos output", device=name)
        nics[netdev] = Nic(
            host=name,
            netdev=netdev,
            rdma_dev=rdma,
            mtu=_read_mtu(sys_net / netdev / "mtu", problems, name),
            qos=_nic_qos(host_dir, netdev, rdma, qos_path, problems) if netdev in qos_files else None,
        )
    links: list[Link] = []
    lldp_file = cmd / "lldpcli.json"
    if lldp_file.is_file():
        for nb in problems.parse_file(lldp_file, lldpcli.parse, device=name) or ():
            remote_port = nb.port_id if nb.port_id_type in ("ifname", "local") else nb.port_descr
            if nb.system_name and remote_port:
                links.append(
                    Link(
                        Endpoint(name, nb.local_port),
                        Endpoint(nb.system_name, remote_port),
                        frozenset({"lldp"}),
                    )
                )
    return Host(name, nics), links


def _read_mtu(path: Path, problems: Problems, device: str) -> int | None:
    if not path.is_file():
        return None

    def parse_mtu(text: str, source: str) -> int:
        try:
            return int(text.strip())
        except ValueError:
            raise ParseError(source, f"expected an MTU in bytes, got {text.strip()!r}", line=1) from None

    return problems.parse_file(path, parse_mtu, device=device)


def _nic_qos(host_dir: Path, netdev: str, rdma: str | None, qos_path: Path, problems: Problems) -> NicQos | None:
    device = host_dir.name
    qos = problems.parse_file(qos_path, mlnx_qos.parse, device=device)
    if qos is None:
        return None
    ecn_dir = host_dir / "sys" / "class" / "net" / netdev / "ecn"
    ecn: sysfs_ecn.SysfsEcn | None = None
    if ecn_dir.is_dir():
        try:
            ecn = sysfs_ecn.parse_tree(_read_tree(ecn_dir), problems.rel(ecn_dir))
        except ParseError as exc:
            problems.unreadable(ecn_dir, exc.expected, line=exc.line, device=device)
        except (OSError, UnicodeDecodeError) as exc:
            problems.unreadable(ecn_dir, f"cannot read: {exc}", device=device)
    tclass: traffic_class.TrafficClass | None = None
    if rdma is not None:
        tc_file = host_dir / "sys" / "class" / "infiniband" / rdma / "tc" / "1" / "traffic_class"
        if tc_file.is_file():
            tclass = problems.parse_file(tc_file, traffic_class.parse, device=device)
    np = ecn.roce_np if ecn else None
    rp = ecn.roce_rp if ecn else None
    return NicQos(
        trust=qos.trust,
        dscp2prio=qos.dscp2prio,
        pfc_enabled=frozenset(qos.pfc_enabled),
        prio_tc=qos.prio_tc,
        cable_len_m=qos.cable_len,
        ecn_np_enabled=np.enabled if np else None,
        ecn_rp_enabled=rp.enabled if rp else None,
        cnp_dscp=np.params.get("cnp_dscp") if np else None,
        cnp_prio=np.params.get("cnp_802p_prio") if np else None,
        traffic_class=tclass.global_tclass if tclass else None,
        ets=tuple(EtsClass(t.tc, t.tsa, t.bw) for t in qos.tcs),
        rx_buffer_sizes=qos.buffers.sizes if qos.buffers else None,
        prio2buffer=qos.buffers.prio2buffer if qos.buffers else None,
    )


def _load_switch(switch_dir: Path, problems: Problems) -> Switch | None:
    from unifab.collect.sonic import switch_from_config_db

    config_db = switch_dir / "sonic" / "config_db.json"
    if config_db.is_file():
        return switch_from_config_db(switch_dir.name, config_db, problems)
    problems.missing(config_db, "no supported switch configuration found", device=switch_dir.name)
    return None


def _load_plan(plan_dir: Path, problems: Problems) -> list[Link]:
    csv_file = plan_dir / "cabling.csv"
    if not csv_file.is_file():
        return []
    cables = problems.parse_file(csv_file, cabling.parse) or ()
    return [
        Link(Endpoint(c.a_node, c.a_port), Endpoint(c.z_node, c.z_port), frozenset({"plan"}), c.cable_m) for c in cables
    ]


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
