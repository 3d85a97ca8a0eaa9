"""Detectors over events and readings (:mod:`unifab.health.events`): optics DOM, GPU Xids, NCCL completion errors.

* **HEALTH-OPTICS**: a module's DOM against *its own* levels (the thresholds in its EEPROM, as ``ethtool -m``
  prints them) and its own alarm/warning flags: per lane rx and tx power and bias, and the module's temperature
  and voltage. Beyond an alarm level (or an alarm flag on) is an alarm; beyond a warning level is a warning (a
  symptom too unless ``optics_warnings`` is off). A module without DOM (a passive DAC: no lanes, temperature 0)
  has nothing to judge. A module's readings are judged in time order: the bundle's own reading has no time of its
  own (it is dated by the time the caller gives, the series' end) and each round's reading has its round's time.
  The latest reading decides (a module back inside its levels is quiet: the alarm cleared); the symptom starts at
  the first of the unbroken run of readings beyond a level that ends at the latest, and counts them (intervals).
* **HEALTH-GPU-XID**: Xids the catalog (:mod:`unifab.health.xid_catalog`) treats as faults, per GPU (the Xid's PCI
  address joined to ``nvidia-smi``'s ``pci_bus_id``); one occurrence is enough, application Xids never are.
* **HEALTH-NCCL-ERROR**: each completion error is put on its NIC pair (the local GID, else the host and ``hca``;
  the remote GID, else the peer address, against the GIDs of ``show_gids``) and the pair's path (each NIC's link
  to its leaf; between two leaves, their uplinks, by ECMP any of them). A NIC's link is blamed when errors
  name at least ``nccl_peers`` distinct peers through it **and** come from both of its sides (the NIC reported
  some, its peers reported it): a peer whose process died makes every rank talking to it report errors, but it
  reports none itself, and that is not the network. Errors left over, between NICs on different leaves, whose only
  common element is one leaf (many pairs, from several of its NICs to several other leaves) are put on that
  leaf's uplinks (``switch:<leaf>``; ECMP hides which one).
* **HEALTH-NCCL-ERROR** from NCCL RAS reports: a job process RAS names, on each GPU it manages (``gpu:<host>:<n>``,
  counter ``ras_dead`` or ``ras_missing``), when the latest report of its job names it and either RAS declared it
  dead (unreachable for 60 s: RAS's own verdict) or it has been missing in at least :data:`RAS_MISSING_REPORTS`
  reports in a row (NCCL's guide: a process missing from one query may answer the next). A process the latest
  report no longer names answered again: quiet. The symptom starts at the first report of the unbroken run.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from unifab.health.detect import GPU_XID, NCCL_ERROR, OPTICS, Symptom, Thresholds
from unifab.health.events import ModuleRecord, NcclRecord, RasRecord, RasReportRecord, XidRecord
from unifab.health.xid_catalog import ACTIONS, lookup
from unifab.model import Endpoint, Fabric, Link, Nic
from unifab.parse.host.ethtool_module import Flags, Levels
from unifab.parse.host.xid import normalize_pci

__all__ = ["RAS_MISSING_REPORTS", "gpu_xid", "nccl_errors", "optics", "ras_processes"]

RAS_MISSING_REPORTS = 2  # RAS reports in a row that must name a process missing (not dead) before it is a symptom

_FLAG_NAMES = (("high_alarm", "high alarm"), ("low_alarm", "low alarm"), ("high_warning", "high warning"))


def _judge(what: str, value: float | None, unit: str, levels: Levels | None, flags: Flags | None) -> tuple[int, str]:
    """(2 alarm | 1 warning | 0 fine, why) for one monitored value."""
    found: list[tuple[int, str]] = []
    if value is not None and levels is not None:
        for level, bound, high in (
            (2, levels.high_alarm, True),
            (2, levels.low_alarm, False),
            (1, levels.high_warning, True),
            (1, levels.low_warning, False),
        ):
            if bound is not None and (value > bound if high else value < bound):
                side, name = ("above", "high") if high else ("below", "low")
                kind = "alarm" if level == 2 else "warning"
                found.append(
                    (level, f"{what} {value:g} {unit} {side} the module's {name} {kind} level {bound:g} {unit}")
                )
                break
    if flags is not None:
        for attr, name in (*_FLAG_NAMES, ("low_warning", "low warning")):
            if getattr(flags, attr):
                found.append((2 if "alarm" in attr else 1, f"{what} {name} flag on"))
                break
    return max(found, key=lambda f: f[0], default=(0, ""))


def _module_findings(record: ModuleRecord) -> list[tuple[int, str]]:
    m = record.module
    th = m.thresholds
    out: list[tuple[int, str]] = []
    if m.lanes or (m.temperature_c or 0.0) != 0.0:
        out.append(_judge("temperature", m.temperature_c, "C", th.temperature_c if th else None, m.temperature_flags))
        out.append(_judge("voltage", m.voltage_v, "V", th.voltage_v if th else None, m.voltage_flags))
    for lane in m.lanes:
        tag = f"lane {lane.lane}"
        out.append(
            _judge(f"{tag} rx power", lane.rx_power_mw, "mW", th.rx_power_mw if th else None, lane.rx_power_flags)
        )
        out.append(
            _judge(f"{tag} tx power", lane.tx_power_mw, "mW", th.tx_power_mw if th else None, lane.tx_power_flags)
        )
        out.append(_judge(f"{tag} bias", lane.bias_ma, "mA", th.bias_ma if th else None, lane.bias_flags))
    return [f for f in out if f[0]]


def optics(modules: Iterable[ModuleRecord], t: Thresholds, when: float) -> list[Symptom]:
    """HEALTH-OPTICS over every module's readings (see the module docstring); ``when``: the time of a reading
    that has none (the bundle's own)."""
    readings: dict[tuple[str, str], list[tuple[float, int, ModuleRecord]]] = {}
    for record in modules:
        # a round's reading and the bundle's own at the same time: the bundle's is the later (it was read last)
        key = (when, 1) if record.time is None else (record.time, 0)
        readings.setdefault((record.host, record.netdev), []).append((*key, record))
    floor = 1 if t.optics_warnings else 2
    out = []
    for (host, netdev), timed in readings.items():
        timed.sort(key=lambda r: r[:2])
        judged = [(at, _module_findings(record)) for at, _, record in timed]
        levels = [max((level for level, _ in found), default=0) for _, found in judged]
        if levels[-1] < floor:
            continue
        run = len(levels)
        while run > 0 and levels[run - 1] >= floor:
            run -= 1
        found = judged[-1][1]
        worst = levels[-1]
        notes = tuple(why for level, why in sorted(found, key=lambda f: -f[0]))
        if len(judged) > 1:
            notes += (f"beyond its levels in the last {len(levels) - run} of {len(levels)} readings",)
        counter = "dom alarm" if worst == 2 else "dom warning"
        entity = f"optic:{host}:{netdev}"
        start, end = judged[run][0], judged[-1][0]
        symptom = Symptom(
            OPTICS,
            entity,
            Endpoint(host, netdev),
            counter,
            start,
            end,
            float(len(found)),
            len(levels) - run,
            float(worst),
            0,
            notes,
        )
        out.append(symptom)
    return sorted(out, key=lambda s: s.entity)


def gpu_xid(records: Iterable[XidRecord], fabric: Fabric, when: float) -> list[Symptom]:
    by_gpu: dict[tuple[str, str], list[XidRecord]] = {}
    for r in records:
        if lookup(r.event.xid).incident:
            by_gpu.setdefault((r.host, r.event.pci_bus_id), []).append(r)
    out = []
    for (host, pci), group in sorted(by_gpu.items()):
        h = fabric.hosts.get(host)
        gpu = next((g for g in h.gpus.values() if _bdf(g.pci_bus_id) == pci), None) if h else None
        ident = str(gpu.index) if gpu is not None else pci
        times = [r.time for r in group if r.time is not None]
        codes = sorted({r.event.xid for r in group}, key=[r.event.xid for r in group].index)
        notes = []
        for code in codes:
            info = lookup(code)
            action = ACTIONS.get(info.immediate, "look the Xid up in NVIDIA's Xid catalog")
            notes.append(f"Xid {code} {info.mnemonic}: {info.meaning}; vendor action: {action}")
        if gpu is None:
            notes.append(f"PCI {pci} is not a GPU nvidia-smi listed on {host}")
        if not times:
            notes.append("the log prints no wall-clock time: the start is when telemetry begins")
        start, end = (min(times), max(times)) if times else (when, when)
        counter = "xid " + ",".join(str(c) for c in codes)
        out.append(
            Symptom(
                GPU_XID,
                f"gpu:{host}:{ident}",
                Endpoint(host, f"gpu{ident}"),
                counter,
                start,
                end,
                float(len(group)),
                len(group),
                0.0,
                0,
                tuple(notes),
            )
        )
    return out


def _bdf(text: str | None) -> str | None:
    return normalize_pci(f"PCI:{text}") if text else None


def _gid_key(text: str | None) -> ipaddress.IPv6Address | ipaddress.IPv4Address | None:
    if not text:
        return None
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


@dataclass(slots=True)
class _Side:
    reported: set[str] = field(default_factory=set)  # peers this NIC reported errors against
    reported_by: set[str] = field(default_factory=set)  # NICs that reported errors against this one
    records: list[NcclRecord] = field(default_factory=list)


class _Nics:
    def __init__(self, fabric: Fabric) -> None:
        self.by_gid: dict[object, Nic] = {}
        self.by_dev: dict[tuple[str, str], Nic] = {}
        for host in fabric.hosts.values():
            for nic in host.nics.values():
                if nic.rdma_dev:
                    self.by_dev[(nic.host, nic.rdma_dev)] = nic
                for gid in nic.gids:
                    for text in (gid.gid, gid.ipv4):
                        if (key := _gid_key(text)) is not None:
                            self.by_gid.setdefault(key, nic)

    def local(self, r: NcclRecord) -> Nic | None:
        key = _gid_key(r.error.local_gid)
        found = self.by_gid.get(key) if key is not None else None
        if found is not None or not r.error.hca:
            return found
        host = r.error.host
        return self.by_dev.get((host, r.error.hca)) or self.by_dev.get((host.split(".", 1)[0], r.error.hca))

    def remote(self, r: NcclRecord) -> Nic | None:
        for text in (r.error.remote_gid, r.error.peer):
            key = _gid_key(text)
            if key is not None and key in self.by_gid:
                return self.by_gid[key]
        return None


def _path(nic: Nic, other: Nic, link_of: dict[Endpoint, Link], fabric: Fabric) -> str:
    def leaf(n: Nic) -> Endpoint | None:
        link = link_of.get(n.endpoint)
        return None if link is None else (link.b if link.a == n.endpoint else link.a)

    a, b = leaf(nic), leaf(other)
    hops = [str(nic.endpoint), str(a) if a else "?"]
    if a is not None and b is not None and a.node != b.node:
        hops.append(f"ECMP over {a.node}'s uplinks to {b.node}")
    hops += [str(b) if b else "?", str(other.endpoint)]
    return " -> ".join(hops)


def nccl_errors(records: Sequence[NcclRecord], fabric: Fabric, t: Thresholds, when: float) -> list[Symptom]:
    nics = _Nics(fabric)
    link_of: dict[Endpoint, Link] = {}
    for link in fabric.links:
        link_of.setdefault(link.a, link)
        link_of.setdefault(link.b, link)
    sides: dict[str, _Side] = {}
    by_id: dict[str, Nic] = {}
    pairs: dict[tuple[str, str], list[NcclRecord]] = {}
    for r in records:
        local, remote = nics.local(r), nics.remote(r)
        if local is None or remote is None or local.id == remote.id:
            continue
        by_id[local.id], by_id[remote.id] = local, remote
        pairs.setdefault((min(local.id, remote.id), max(local.id, remote.id)), []).append(r)
        a, b = sides.setdefault(local.id, _Side()), sides.setdefault(remote.id, _Side())
        a.reported.add(remote.id)
        b.reported_by.add(local.id)
        a.records.append(r)
        b.records.append(r)
    out = []
    for nic_id, side in sorted(sides.items()):
        peers = side.reported | side.reported_by
        blamed = link_of.get(by_id[nic_id].endpoint)
        if blamed is None or len(peers) < t.nccl_peers or not side.reported or not side.reported_by:
            continue
        times = [r.time for r in side.records if r.time is not None]
        statuses = sorted({f"status={r.error.status}" for r in side.records})
        notes = [f"{len(peers)} peers: " + ", ".join(sorted(peers)[:6])]
        notes += [_path(by_id[nic_id], by_id[p], link_of, fabric) for p in sorted(peers)[:3]]
        if not times:
            notes.append("the log prints no time stamps: the start is when telemetry begins")
        start, end = (min(times), max(times)) if times else (when, when)
        out.append(
            Symptom(
                NCCL_ERROR,
                blamed.id,
                by_id[nic_id].endpoint,
                ",".join(statuses),
                start,
                end,
                float(len(side.records)),
                len(peers),
                0.0,
                0,
                tuple(notes),
            )
        )
    taken = {s.endpoint for s in out}  # pairs of a NIC whose link is blamed are explained
    # a NIC several peers report while it reports nothing is a dead process, not the network: its pairs go too
    dead = {n for n, side in sides.items() if not side.reported and len(side.reported_by) >= 2}
    rest = {
        p: rs
        for p, rs in pairs.items()
        if not {by_id[p[0]].endpoint, by_id[p[1]].endpoint} & taken and not dead.intersection(p)
    }
    return out + _ecmp(rest, by_id, link_of, t, when)


def _ecmp(
    pairs: dict[tuple[str, str], list[NcclRecord]],
    by_id: dict[str, Nic],
    link_of: dict[Endpoint, Link],
    t: Thresholds,
    when: float,
) -> list[Symptom]:
    """NIC pairs on different leaves whose errors share one leaf and nothing else: that leaf's uplinks (ECMP).

    A leaf is blamed when at least ``max(3, nccl_peers + 1)`` failing pairs cross it, from at least two of its
    own NICs (one NIC would be that NIC's link) to at least two NICs on at least two other leaves (with one, both
    leaves are common); pairs with a dead process (a NIC its peers report, reporting nothing) are left out first.
    NCCL alone cannot tell which uplink: ECMP hashed each pair onto one of them.
    """

    def leaf(nic: Nic) -> str | None:
        link = link_of.get(nic.endpoint)
        return None if link is None else (link.b if link.a == nic.endpoint else link.a).node

    through: dict[str, list[tuple[tuple[str, str], str, str]]] = {}  # leaf -> (pair, near NIC, far leaf)
    for pair in pairs:
        a, b = by_id[pair[0]], by_id[pair[1]]
        la, lb = leaf(a), leaf(b)
        if la is None or lb is None or la == lb:
            continue
        through.setdefault(la, []).append((pair, a.id, lb))
        through.setdefault(lb, []).append((pair, b.id, la))
    out = []
    for name, crossing in sorted(through.items()):
        near = {n for _, n, _ in crossing}
        far = {f for _, _, f in crossing}
        far_nics = {x for p, n, _ in crossing for x in p if x != n}
        if len(crossing) < max(3, t.nccl_peers + 1) or len(near) < 2 or len(far) < 2 or len(far_nics) < 2:
            continue
        records = [r for p, _, _ in crossing for r in pairs[p]]
        times = [r.time for r in records if r.time is not None]
        start, end = (min(times), max(times)) if times else (when, when)
        notes = (
            f"{len(crossing)} NIC pairs from {len(near)} of {name}'s NICs to {len(far)} other leaves share only "
            f"{name} and its uplinks (ECMP): one uplink of {name}, or {name} itself",
            *(f"{p[0]} <-> {p[1]}" for p, _, _ in crossing[:4]),
        )
        statuses = ",".join(sorted({f"status={r.error.status}" for r in records}))
        out.append(
            Symptom(
                NCCL_ERROR,
                f"switch:{name}",
                Endpoint(name, ""),
                statuses,
                start,
                end,
                float(len(records)),
                len(crossing),
                0.0,
                0,
                notes,
            )
        )
    return out


def ras_processes(records: Iterable[RasRecord], reports: Iterable[RasReportRecord], fabric: Fabric) -> list[Symptom]:
    """HEALTH-NCCL-ERROR for the job processes NCCL RAS keeps naming (see the module): one symptom per GPU."""
    times: dict[str, list[float]] = {}  # a job's (a report directory's) report times, in order
    for report in reports:
        times.setdefault(report.label, []).append(report.time)
    for series in times.values():
        series.sort()
    named: dict[tuple[str, str, int], dict[float, RasRecord]] = {}  # (job, host, pid) -> report time -> record
    for r in records:
        if r.host is not None:
            named.setdefault((r.label, r.host, r.process.pid), {})[r.time] = r
    out: list[Symptom] = []
    for (label, host, pid), by_time in sorted(named.items()):
        series = times.get(label, sorted(by_time))
        run: list[RasRecord] = []
        for when in reversed(series):  # the unbroken run of reports naming it that ends at the latest
            if when not in by_time:
                break
            run.append(by_time[when])
        run.reverse()
        if not run:
            continue  # the latest report no longer names it: it answered again
        latest = run[-1]
        dead = latest.process.state == "dead"
        if not dead and len(run) < RAS_MISSING_REPORTS:
            continue
        state = "declared dead (unreachable via the RAS network for 60 s)" if dead else "missing"
        gpus = latest.process.gpus or (-1,)
        h = fabric.hosts.get(host)
        for gpu in gpus:
            ident = str(gpu) if gpu >= 0 else "?"
            notes = [
                f"process {pid} on {host} (RAS address {latest.process.node}) managing GPU {ident}: {state} in the"
                f" last {len(run)} of {len(series)} RAS reports",
                f"first named at {run[0].where}",
            ]
            if h is not None and gpu >= 0 and gpu not in h.gpus:
                notes.append(f"GPU {gpu} is not a GPU nvidia-smi listed on {host}")
            out.append(
                Symptom(
                    NCCL_ERROR,
                    f"gpu:{host}:{ident}",
                    Endpoint(host, f"gpu{ident}"),
                    "ras_dead" if dead else "ras_missing",
                    run[0].time,
                    latest.time,
                    float(len(run)),
                    len(run),
                    0.0,
                    0,
                    tuple(notes),
                )
            )
    return out
