"""What every check sees: the fabric, the host↔leaf link index and the fabric's baseline."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from unifab.model import Fabric, Link, Nic, PfcWatchdog, Port, PortQos, QueueQos, Switch
from unifab.profile import QosProfile
from unifab.render.switch_cli import SwitchCli, for_os

__all__ = [
    "DEFAULT_CNP_DSCP",
    "DEFAULT_ROCE_DSCP",
    "Baseline",
    "CheckContext",
    "CnpQueue",
    "H",
    "NicLink",
    "PortLink",
    "cnp_queue",
    "fabric_baseline",
    "intent_baseline",
    "majority",
    "overrides_fabric_dscp",
    "roce_dscp_of",
]

H = TypeVar("H", bound=Hashable)

DEFAULT_ROCE_DSCP = 26  # NVIDIA's RoCE default (TOS 106), reference host-nic-roce §5.1
DEFAULT_CNP_DSCP = 48  # ConnectX firmware default CNP_DSCP


@dataclass(frozen=True, slots=True)
class NicLink:
    """A cable from a host NIC to a switch port, with both ends resolved in the model."""

    nic: Nic
    port: Port
    link: Link


@dataclass(frozen=True, slots=True)
class PortLink:
    """A cable between two switch ports, with both ends resolved in the model."""

    a: Port
    b: Port
    link: Link


@dataclass(frozen=True, slots=True)
class Baseline:
    """The fabric's intended values, taken from the majority of what its devices do.

    Without an intent file the majority is the best witness of intent: one deviating device is
    the one to fix. Every value is ``None`` when nothing in the fabric reports it.
    """

    roce_dscp: int
    nic_roce_prio: int | None
    nic_pfc: frozenset[int] | None
    nic_mtu: int | None
    switch_roce_tc: int | None
    switch_pfc: frozenset[int] | None
    switch_mtu: int | None
    roce_wred_profile: str | None
    nic_trust: str | None = None
    switch_trust: str | None = None
    cnp_dscp: int = DEFAULT_CNP_DSCP
    cnp_scheduler: str | None = None  # the strict scheduler profile CNP queues use
    pfcwd: PfcWatchdog | None = None
    switch_dscp_map: str | None = None
    roce_ecn_thresholds: tuple[int, int] | None = None  # (min, max) bytes most RoCE queues mark at

    @property
    def pfc(self) -> frozenset[int] | None:
        """Lossless priorities both sides should enable (the NICs' majority breaks a fleet-wide tie)."""
        return self.nic_pfc if self.nic_pfc is not None else self.switch_pfc


def majority(values: Iterable[H | None]) -> H | None:
    """Most common non-None value; ties go to the value seen first (inputs are in sorted order)."""
    counts = Counter(v for v in values if v is not None)
    return counts.most_common(1)[0][0] if counts else None


@dataclass(frozen=True, slots=True)
class CheckContext:
    fabric: Fabric
    nic_links: tuple[NicLink, ...]
    baseline: Baseline
    port_links: tuple[PortLink, ...] = ()
    hosts_behind: dict[str, tuple[str, ...]] = field(default_factory=dict)  # switch -> hosts cabled to it
    uplink_count: dict[str, int] = field(default_factory=dict)  # switch -> its switch↔switch links
    # Fabric-wide values computed elsewhere, by ``"<check>:<field>"``: a context holding only some links
    # (the incremental re-check) still compares them with the whole fabric's majority.
    fabric_values: dict[str, object] = field(default_factory=dict)
    clis: dict[str, tuple[Switch | None, SwitchCli]] = field(default_factory=dict)  # cli()'s, by switch

    @classmethod
    def build(cls, fabric: Fabric) -> CheckContext:
        nic_links, port_links = _resolve_links(fabric)
        behind: dict[str, set[str]] = {}
        for lk in nic_links:
            behind.setdefault(lk.port.switch, set()).add(lk.nic.host)
        uplinks: dict[str, int] = {}
        for pl in port_links:
            for port in (pl.a, pl.b):
                uplinks[port.switch] = uplinks.get(port.switch, 0) + 1
        hosts = {switch: tuple(sorted(names)) for switch, names in behind.items()}
        return cls(fabric, nic_links, fabric_baseline(fabric, nic_links), port_links, hosts, uplinks)

    def os_of(self, switch: str) -> str | None:
        """The switch's OS (its platform's name); ``None`` for a switch that was not collected."""
        found = self.fabric.switches.get(switch)
        return found.os if found is not None else None

    def cli(self, switch: str) -> SwitchCli:
        """The fix-command dialect of a switch, by its platform, bound to the switch's own objects (the names
        its maps, profiles and schedulers have on THAT switch, never the fabric's majority). One per switch
        record: checks ask for it port by port, and a replaced record (the incremental re-check) gets a new one."""
        found = self.fabric.switches.get(switch)
        known = self.clis.get(switch)
        if known is not None and known[0] is found:
            return known[1]
        cli = for_os(found.os if found is not None else None, switch, found)
        self.clis[switch] = (found, cli)
        return cli

    def path_impact(self, pl: PortLink) -> dict[str, object]:
        """Who a bad switch↔switch link hurts: the hosts behind its leaf end and its share of their ECMP paths."""
        leaf = next((p.switch for p in (pl.a, pl.b) if p.switch in self.hosts_behind), None)
        if leaf is None:
            return {}
        uplinks = self.uplink_count.get(leaf, 1)
        return {
            "leaf": leaf,
            "hosts": list(self.hosts_behind[leaf]),
            "ecmp_share": f"1 of {uplinks} uplinks of {leaf}",
        }


@dataclass(frozen=True, slots=True)
class CnpQueue:
    """Where a switch port queues CNPs (their DSCP's TC and egress queue), and what makes them wait there."""

    tc: int | None
    index: int | None
    queue: QueueQos | None
    problems: tuple[str, ...]  # empty: a strict queue of a class PFC does not pause


def cnp_queue(q: PortQos, cnp_dscp: int) -> CnpQueue:
    """The queue CNPs of ``cnp_dscp`` take on a port, judged: strict priority and not PFC-paused."""
    tc = q.dscp_to_tc.get(cnp_dscp)
    index = q.tc_to_queue.get(tc, tc) if tc is not None else None
    queue = q.queues.get(index) if index is not None else None
    problems = []
    if queue is None or queue.scheduler_type != "STRICT":
        problems.append(f"queue {index} is {queue.scheduler_type if queue else 'unconfigured'}, not strict")
    if tc is not None and tc in q.pfc_enabled:
        problems.append(f"TC {tc} is PFC-paused")
    return CnpQueue(tc, index, queue, tuple(problems))


def roce_dscp_of(nic: Nic, baseline: Baseline) -> int:
    """The DSCP this NIC's RoCE traffic carries: its TOS override, else the fabric's."""
    if nic.qos is not None and nic.qos.traffic_class is not None:
        return nic.qos.traffic_class >> 2
    return baseline.roce_dscp


def overrides_fabric_dscp(nic: Nic, baseline: Baseline) -> bool:
    """The NIC's global TOS override sends RoCE with a DSCP other than the fabric's (QOS-TC-OVERRIDE)."""
    return roce_dscp_of(nic, baseline) != baseline.roce_dscp


def _resolve_links(fabric: Fabric) -> tuple[tuple[NicLink, ...], tuple[PortLink, ...]]:
    """Split links into NIC↔port and port↔port, both ends known; one pass, sorted by link id."""
    nic_links: list[NicLink] = []
    port_links: list[PortLink] = []
    for link in sorted(fabric.links, key=lambda lk: lk.id):
        a_port, b_port = fabric.port_at(link.a), fabric.port_at(link.b)
        if a_port is not None and b_port is not None:
            port_links.append(PortLink(a_port, b_port, link))
            continue
        for nic_end, port in ((link.a, b_port), (link.b, a_port)):
            nic = fabric.nic_at(nic_end)
            if nic is not None and port is not None:
                nic_links.append(NicLink(nic, port, link))
                break
    return tuple(nic_links), tuple(port_links)


def fabric_baseline(fabric: Fabric, links: tuple[NicLink, ...]) -> Baseline:
    """The intent's values where the bundle has ``fabric.yaml``, else the majority of the devices."""
    found = _baseline(links)
    return found if fabric.qos_intent is None else intent_baseline(fabric.qos_intent, found)


def intent_baseline(profile: QosProfile, found: Baseline) -> Baseline:
    """``profile`` as the baseline: every value the intent states replaces the majority's. The names of
    objects (WRED profile, DSCP map, CNP scheduler) stay the majority's for the record; fixes never use them:
    each switch's dialect names its own (:meth:`CheckContext.cli`)."""
    roce_ecn = next((e for e in profile.ecn if e.queue == profile.roce_queue), None)
    wd = profile.pfcwd
    return replace(
        found,
        roce_dscp=profile.roce_dscp,
        nic_roce_prio=profile.roce_priority,
        nic_pfc=profile.lossless_priorities,
        nic_mtu=profile.host_mtu,
        switch_roce_tc=profile.roce_priority,  # switches classify DSCP into the priority's TC (PFC acts on it)
        switch_pfc=profile.lossless_priorities,
        switch_mtu=profile.switch_mtu,
        nic_trust="dscp",
        switch_trust="dscp",
        cnp_dscp=profile.cnp_dscp,
        pfcwd=PfcWatchdog(wd.action, wd.detection_ms, wd.restoration_ms) if wd is not None else found.pfcwd,
        roce_ecn_thresholds=(roce_ecn.min_bytes, roce_ecn.max_bytes) if roce_ecn else found.roce_ecn_thresholds,
    )


def _baseline(links: tuple[NicLink, ...]) -> Baseline:
    nics = [lk.nic for lk in links]
    ports = [lk.port for lk in links]
    dscp = _roce_dscp(nics, ports)
    switch_tc = majority(p.qos.dscp_to_tc.get(dscp) for p in ports if p.qos)
    wred = None
    if switch_tc is not None:
        wred = majority(
            q.wred_profile
            for p in ports
            if p.qos and (q := p.qos.queues.get(p.qos.tc_to_queue.get(switch_tc, switch_tc))) and q.ecn_enabled
        )
    cnp = majority(n.qos.cnp_dscp for n in nics if n.qos)
    cnp_dscp = DEFAULT_CNP_DSCP if cnp is None else cnp
    cnp_scheduler = majority(
        q.scheduler
        for p in ports
        if p.qos
        and (tc := p.qos.dscp_to_tc.get(cnp_dscp)) is not None
        and (q := p.qos.queues.get(p.qos.tc_to_queue.get(tc, tc)))
        and q.scheduler_type == "STRICT"
    )
    return Baseline(
        nic_trust=majority(n.qos.trust for n in nics if n.qos),
        switch_trust=majority(p.qos.trust for p in ports if p.qos),
        cnp_dscp=cnp_dscp,
        cnp_scheduler=cnp_scheduler,
        pfcwd=majority(p.qos.pfcwd for p in ports if p.qos),
        switch_dscp_map=majority(p.qos.dscp_map_name for p in ports if p.qos),
        roce_ecn_thresholds=_ecn_thresholds(ports, switch_tc),
        roce_dscp=dscp,
        nic_roce_prio=majority(n.qos.dscp2prio.get(dscp) for n in nics if n.qos and n.qos.trust == "dscp"),
        nic_pfc=majority(n.qos.pfc_enabled for n in nics if n.qos),
        nic_mtu=majority(n.mtu for n in nics),
        switch_roce_tc=switch_tc,
        switch_pfc=majority(p.qos.pfc_enabled for p in ports if p.qos),
        switch_mtu=majority(p.mtu for p in ports),
        roce_wred_profile=wred,
    )


def _roce_dscp(nics: list[Nic], ports: list[Port]) -> int:
    """The fabric's RoCE DSCP, from the best witness available.

    1. NICs' global TOS overrides, when most NICs carry one (a fleet that sets traffic_class);
    2. else the one DSCP (other than the CNP's) that most switch ports classify into a lossless TC;
    3. else the overrides that exist, else NVIDIA's default 26.
    """
    overrides = [n.qos.traffic_class for n in nics if n.qos and n.qos.traffic_class is not None]
    tclass = majority(overrides)
    if tclass is not None and 2 * len(overrides) > len(nics):
        return tclass >> 2
    lossless = majority(
        frozenset(d for d, tc in p.qos.dscp_to_tc.items() if tc in p.qos.pfc_enabled)
        for p in ports
        if p.qos and p.qos.trust == "dscp"
    )
    candidates = sorted((lossless or frozenset()) - {DEFAULT_CNP_DSCP})
    if len(candidates) == 1:
        return candidates[0]
    return DEFAULT_ROCE_DSCP if tclass is None else tclass >> 2


def _ecn_thresholds(ports: list[Port], tc: int | None) -> tuple[int, int] | None:
    def thresholds(port: Port) -> tuple[int, int] | None:
        if port.qos is None or tc is None:
            return None
        queue = port.qos.queues.get(port.qos.tc_to_queue.get(tc, tc))
        if queue is None or queue.ecn_min_bytes is None or queue.ecn_max_bytes is None:
            return None
        return (queue.ecn_min_bytes, queue.ecn_max_bytes)

    return majority(thresholds(p) for p in ports)
