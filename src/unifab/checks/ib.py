"""InfiniBand subnet checks: the subnet manager, duplicate GUIDs and LIDs, PMA error counters, MTU and the jobs' SL.

Every IB port (an HCA port, ``Nic.ib``; a switch port, ``Port.ib``) carries an :class:`~unifab.model.IbPort` read
from ``ib/`` (``collect/ib.py``); the subnet's SMs are ``Fabric.ib``. Fixes are in the IB operator's tools:
``sminfo``, ``smpquery``, ``perfquery``, ``ibportstate``, ``mlxlink``, ``flint`` and OpenSM's configuration.

* **IB-SM** — sminfo was collected and no SM is master (nothing assigns LIDs or routes: ports stay in
  Initialize), two SMs are master at once (split subnets merged, or an SM that does not hear the other), or the
  SMs that decide the election share one priority, so the lowest port GUID wins: an arbitrary choice that moves
  when a card is replaced. The finding names the SM that wins.
* **IB-DUPLICATE** — one node GUID, port GUID or LID held by two devices. The SM routes by LID and identifies
  ports by GUID: one of the two is unreachable or receives the other's traffic.
* **IB-COUNTERS** — PMA error counters of one snapshot beyond threshold: SymbolErrorCounter, LinkDownedCounter,
  LinkErrorRecoveryCounter, PortRcvErrors, LocalLinkIntegrityErrors, ExcessiveBufferOverrunErrors (the link),
  PortXmitDiscards, PortRcvRemotePhysicalErrors (a symptom of another link or of congestion) and PortXmitWait
  (congestion). The plain counters are 4 to 32 bits wide and saturate: a saturated one is "at least N". One
  snapshot shows what accumulated since the last clear; rates per interval are ``unifab health``'s.
* **IB-MTU** — an HCA or switch port whose active MTU is below the one most IB ports run (or the intent's).
* **IB-SL** — a job that runs NCCL over IB whose ranks set different NCCL_IB_SL values, or an SL the intent (or
  the fabric's other jobs) does not use. On IB, NCCL_IB_TC is the GRH traffic class and selects no SL: a job that
  sets only it runs on SL 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from unifab.checks.context import CheckContext
from unifab.checks.job_nics import job_fabrics
from unifab.checks.registry import CheckSpec
from unifab.errors import UsageError
from unifab.model import (
    Endpoint,
    Fabric,
    Finding,
    Fix,
    IbPort,
    IbSm,
    Job,
    Link,
    Severity,
    nic_id,
    port_id,
    switch_id,
)
from unifab.parse.ib._common import LANE_GBPS, lanes
from unifab.render.host_script import q
from unifab.render.host_script import rdma_dev as hs_rdma_dev

__all__ = [
    "CHECKS",
    "COUNTER_RULES",
    "IbEnd",
    "PlannedRate",
    "below_plan",
    "check_counters",
    "check_duplicate",
    "check_mtu",
    "check_sl",
    "check_sm",
    "ib_ends",
    "job_on_ib",
    "planned_rate",
]


@dataclass(frozen=True, slots=True)
class IbEnd:
    """One IB port of the model: an HCA port (``host`` set) or a switch port."""

    device: str
    port: str
    info: IbPort
    entity: str  # nic:<host>:<dev> | port:<switch>:<n>
    host: bool
    link: str | None  # the id of the cable at this end, when one is known

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.device, self.port)


def ib_ends(fabric: Fabric) -> list[IbEnd]:
    """Every IB port with an :class:`IbPort`, HCAs first, in name order (one pass over links for the cable ids)."""
    cable: dict[Endpoint, str] = {}
    for lk in sorted(fabric.links, key=lambda k: ("lldp" not in k.sources, k.id)):
        for end in (lk.a, lk.b):
            cable.setdefault(end, lk.id)
    out: list[IbEnd] = []
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        for key, nic in sorted(host.nics.items()):
            if nic.ib is not None:
                entity = nic_id(host.name, nic.rdma_dev or key)
                out.append(IbEnd(host.name, key, nic.ib, entity, True, cable.get(Endpoint(host.name, key))))
    for sw in sorted(fabric.switches.values(), key=lambda s: s.name):
        for name, port in sorted(sw.ports.items(), key=lambda kv: (len(kv[0]), kv[0])):
            if port.ib is not None:
                out.append(
                    IbEnd(sw.name, name, port.ib, port_id(sw.name, name), False, cable.get(Endpoint(sw.name, name)))
                )
    return out


def _dev(end: IbEnd) -> str | None:
    """The RDMA device name of an HCA end, through the host-script gate; ``None`` when it does not pass."""
    try:
        return q(hs_rdma_dev(end.port))
    except UsageError:
        return None


def _port_num(end: IbEnd) -> int:
    return end.info.port_num if end.info.port_num is not None else (1 if end.host else int(end.port))


def _read_port(end: IbEnd) -> tuple[str, ...]:
    """The commands that show an IB port's state, width, speed and MTU (smpquery) and its optic (mlxlink)."""
    lid, port = end.info.lid, _port_num(end)
    out: list[str] = []
    if lid is not None:
        out.append(f"smpquery portinfo {lid} {port}")
    if end.host and (dev := _dev(end)) is not None:
        out.append(f"mlxlink -d {dev} -m -c")
    elif lid is not None:
        out.append(f"mlxlink -d lid-{lid} -p {port} -m -c")
    return tuple(out) or (f"# {end.device} port {end.port}: no LID known; find it with ibnetdiscover",)


def _subject(end: IbEnd) -> dict[str, str]:
    return {"kind": "nic" if end.host else "port", "id": end.entity}


# --- the plan's IB link rates (TOPO-DEGRADED) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedRate:
    """The width and speed ``plan/ibnetdiscover.txt`` gives one cable (``4X``, ``NDR``)."""

    width: str
    speed: str

    @property
    def mbps(self) -> int:
        return int((lanes(self.width) or 0) * LANE_GBPS.get(self.speed, 0.0) * 1000)

    @property
    def text(self) -> str:
        return f"{self.width} {self.speed}, {self.mbps // 1000}G"


def planned_rate(fabric: Fabric, link: Link) -> PlannedRate | None:
    """The rate the plan gives ``link``, ``None`` without one (no plan file, or the cable is not in it)."""
    rates = fabric.ib.planned_rates if fabric.ib is not None else {}
    found = rates.get(link.id)
    if found is None or lanes(found[0]) is None or found[1] not in LANE_GBPS:
        return None
    return PlannedRate(*found)


def below_plan(plan: PlannedRate, mbps: int, *ends: IbPort | None) -> bool:
    """Whether a link trained below its plan: fewer lanes or a slower lane than planned on either end (``8X HDR``
    for a planned ``4X NDR`` is below plan though its rate is equal), or, with no width/speed known, a lower rate."""
    trained = [
        (n, LANE_GBPS[e.speed]) for e in ends if e is not None and (n := lanes(e.width)) and e.speed in LANE_GBPS
    ]
    if not trained:
        return mbps < plan.mbps
    want_lanes, want_lane = lanes(plan.width) or 0, LANE_GBPS[plan.speed]
    return any(n < want_lanes or lane < want_lane for n, lane in trained)


# --- IB-SM --------------------------------------------------------------------------------------------------


def _sm_node(fabric: Fabric, ends: list[IbEnd], sm: IbSm) -> str | None:
    """The device an SM runs on: the host or switch holding its port GUID (or, failing that, its LID)."""
    for end in ends:
        if sm.guid in (end.info.port_guid, end.info.node_guid):
            return end.device
    for end in ends:
        if end.info.lid == sm.lid and not end.host:
            return end.device
    for sw in fabric.switches.values():
        if sw.guid == sm.guid:
            return sw.name
    return None


def _sm_text(sm: IbSm, node: str | None) -> str:
    return f"{sm.guid} (lid {sm.lid}, priority {sm.priority}{', on ' + node if node else ''})"


def _sm_evidence(sm: IbSm, node: str | None) -> dict[str, Any]:
    return {
        "guid": sm.guid,
        "lid": sm.lid,
        "priority": sm.priority,
        "state": sm.state,
        "activity_count": sm.activity_count,
        "device": node,
        "file": sm.source,
    }


def _sm_fix(node: str | None, sm: IbSm, commands: tuple[str, ...]) -> Fix:
    return Fix(node or f"sm:{sm.guid}", commands)


OPENSM_CONF = "/etc/opensm/opensm.conf"


def _priority_steps(ctx: CheckContext, node: str | None, sm: IbSm, priority: int) -> tuple[str, ...]:
    """Set an SM's sm_priority: OpenSM on a host through its config file (written with the running defaults
    first when the host has none), then a restart; an SM elsewhere (a managed switch's) named for its owner."""
    if node is not None and node in ctx.fabric.hosts:
        return (
            f"test -f {OPENSM_CONF} || opensm -c {OPENSM_CONF}  # the defaults, once, to edit",
            f"sed -i 's/^sm_priority .*/sm_priority {priority}/' {OPENSM_CONF}",
            "systemctl restart opensm",
        )
    return (f"# {OPENSM_CONF} (or the switch's SM settings) on the SM of {sm.guid}: sm_priority {priority}",)


def check_sm(ctx: CheckContext) -> Iterator[Finding]:
    """No master SM, two masters, or the deciding SMs tied on priority (the lowest GUID wins the election)."""
    ib = ctx.fabric.ib
    if ib is None or not ib.sm_collected:
        return
    ends = ib_ends(ctx.fabric)
    nodes = {sm.guid: _sm_node(ctx.fabric, ends, sm) for sm in ib.sms}
    masters = [sm for sm in ib.sms if sm.state == "master"]
    if not masters:
        yield Finding(
            check="IB-SM",
            severity=Severity.CRITICAL,
            subject={"kind": "fabric", "id": "fabric:ib"},
            message="no subnet manager is master: "
            + (", ".join(f"{_sm_text(sm, nodes[sm.guid])} is {sm.state}" for sm in ib.sms) or "sminfo found none"),
            evidence={"sms": [_sm_evidence(sm, nodes[sm.guid]) for sm in ib.sms], "files": list(ib.files)},
            fix=(
                Fix(
                    "fabric:ib",
                    (
                        "sminfo  # from any host on the fabric: which SM answers, and its state",
                        "systemctl start opensm  # on the host (or `ib sm` on the switch) meant to run the SM",
                    ),
                ),
            ),
            impact={
                "summary": "without a master SM no LIDs are assigned and no routes computed: new ports stay in "
                "Initialize and a fabric change is never routed around",
                "action": "start the subnet manager",
            },
            entities=("fabric:ib",),
        )
        return
    if len(masters) > 1:
        names = ", ".join(_sm_text(sm, nodes[sm.guid]) for sm in masters)
        keep = max(masters, key=lambda sm: (sm.priority, -int(sm.guid, 16)))
        yield Finding(
            check="IB-SM",
            severity=Severity.CRITICAL,
            subject={"kind": "sm", "id": f"sm:{masters[0].guid}", "with": ",".join(f"sm:{m.guid}" for m in masters)},
            message=f"{len(masters)} subnet managers are master at once: {names}",
            evidence={"masters": [_sm_evidence(sm, nodes[sm.guid]) for sm in masters], "keep": keep.guid},
            fix=tuple(
                _sm_fix(
                    nodes[sm.guid],
                    sm,
                    (
                        f"sminfo {sm.lid}  # confirm it is master",
                        "systemctl stop opensm  # two masters: keep one SM per subnet; a standby here needs "
                        "sm_priority below the master's in /etc/opensm/opensm.conf",
                    ),
                )
                for sm in masters
                if sm is not keep
            ),
            impact={
                "summary": "two masters assign LIDs and program routes independently: duplicate LIDs, routes that "
                "flip between them and ports that lose connectivity on every sweep",
                "action": f"keep {keep.guid} as the only master and stop or demote the others",
            },
            entities=tuple(sorted(f"sm:{sm.guid}" for sm in masters)),
        )
    active = [sm for sm in ib.sms if sm.state in ("master", "standby", "discovering")]
    if len(active) < 2:
        return
    top = max(sm.priority for sm in active)
    tied = sorted((sm for sm in active if sm.priority == top), key=lambda sm: int(sm.guid, 16))
    if len(tied) < 2:
        return
    winner = tied[0]
    yield Finding(
        check="IB-SM",
        severity=Severity.WARNING,
        subject={"kind": "sm", "id": f"sm:{winner.guid}", "priority": str(top)},
        message=f"subnet managers {', '.join(_sm_text(sm, nodes[sm.guid]) for sm in tied)} share priority {top}: "
        f"the election falls to the lowest GUID, {winner.guid}"
        + (f" on {nodes[winner.guid]}" if nodes[winner.guid] else ""),
        evidence={"tied": [_sm_evidence(sm, nodes[sm.guid]) for sm in tied], "winner": winner.guid},
        fix=tuple(
            _sm_fix(
                nodes[sm.guid],
                sm,
                (
                    *_priority_steps(ctx, nodes[sm.guid], sm, 15 if sm is winner else max(0, top - 1 - i)),
                    f"sminfo {sm.lid}  # priority and state after the restart",
                ),
            )
            for i, sm in enumerate(tied)
        ),
        impact={
            "summary": "which SM is master depends on the GUIDs: replacing a card or a switch moves the master "
            "without anyone deciding it, and a handover re-sweeps the subnet",
            "action": "give the intended master the highest sm_priority and each standby a distinct lower one",
        },
        entities=tuple(sorted(f"sm:{sm.guid}" for sm in tied)),
    )


# --- IB-DUPLICATE ---------------------------------------------------------------------------------------------


def _holder(end: IbEnd) -> str:
    """Who holds a GUID or LID: an HCA port (the NIC), or a whole switch (its ports share one GUID and LID)."""
    return end.entity if end.host else switch_id(end.device)


def check_duplicate(ctx: CheckContext) -> Iterator[Finding]:
    """A node GUID, port GUID or LID held by more than one device."""
    ends = ib_ends(ctx.fabric)
    kinds: dict[str, dict[str, dict[str, IbEnd]]] = {"node GUID": {}, "port GUID": {}, "LID": {}}
    for end in ends:
        values = {"node GUID": end.info.node_guid, "port GUID": end.info.port_guid}
        values["LID"] = str(end.info.lid) if end.info.lid else None
        for kind, value in values.items():
            if value is not None:
                kinds[kind].setdefault(value, {}).setdefault(_holder(end), end)
    for kind, by_value in kinds.items():
        for value, holders in sorted(by_value.items()):
            if len(holders) < 2:
                continue
            if kind == "port GUID" and value in kinds["node GUID"] and len(kinds["node GUID"][value]) > 1:
                continue  # the node GUID finding already names it (switches and HCAs reuse it as port GUID)
            yield _duplicate_finding(kind, value, holders)


def _duplicate_finding(kind: str, value: str, holders: dict[str, IbEnd]) -> Finding:
    names = sorted(holders)
    shown = ", ".join(f"{e.device}" + (f" {e.port}" if e.host else "") for e in (holders[n] for n in names))
    fixes: list[Fix] = []
    for name in names:
        end = holders[name]
        if kind == "LID":
            commands: tuple[str, ...] = (
                f"smpquery nodeinfo {value}  # which node answers LID {value}",
                "# on the master SM: opensm --reassign_lids (or remove /var/cache/opensm/guid2lid) and restart it",
            )
        elif end.host and (dev := _dev(end)) is not None:
            commands = (
                f"flint -d {dev} query  # the GUIDs burnt into the adapter's firmware",
                "# burn the adapter's own GUIDs back (flint ... sg) per the vendor's RMA/firmware procedure",
            )
        else:
            commands = (f"smpquery nodeinfo {end.info.lid or '<lid>'}  # the node's GUIDs",)
        fixes.append(Fix(end.device, commands))
    return Finding(
        check="IB-DUPLICATE",
        severity=Severity.CRITICAL,
        subject={"kind": "lid" if kind == "LID" else "guid", "id": value},
        message=f"{kind} {value} is held by {len(holders)} devices: {shown}",
        evidence={
            "kind": kind,
            "value": value,
            "holders": [
                {"entity": n, "device": holders[n].device, "port": holders[n].port, "lid": holders[n].info.lid}
                for n in names
            ],
        },
        fix=tuple(fixes),
        impact={
            "summary": "the SM routes by LID and names ports by GUID: traffic for one of them reaches the other, "
            "or one is unreachable, and sweeps flap between them",
            "action": "give each device its own GUID / LID",
        },
        entities=tuple(names),
    )


# --- IB-COUNTERS ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CounterRule:
    name: str
    threshold: int  # beyond it (value > threshold) the counter is reported
    severity: Severity
    meaning: str


# ibqueryerrors' default threshold is 0 for every counter; SymbolErrorCounter and PortXmitWait take the values of
# the commented examples in the shipped /etc/infiniband-diags/error_thresholds (a few symbol errors come with link
# training; some wait is normal on a busy port).
COUNTER_RULES = (
    CounterRule("SymbolErrorCounter", 10, Severity.ERROR, "symbol errors on the wire (cable, optic or connector)"),
    CounterRule("LinkErrorRecoveryCounter", 0, Severity.ERROR, "link retraining events"),
    CounterRule("LinkDownedCounter", 0, Severity.ERROR, "link-down events (flaps)"),
    CounterRule("PortRcvErrors", 0, Severity.ERROR, "packets received with errors"),
    CounterRule("LocalLinkIntegrityErrors", 0, Severity.ERROR, "local physical errors beyond the link's limit"),
    CounterRule("ExcessiveBufferOverrunErrors", 0, Severity.ERROR, "receive buffer overruns (flow control lost)"),
    CounterRule("PortXmitDiscards", 0, Severity.WARNING, "packets discarded on transmit (port down or stuck)"),
    CounterRule(
        "PortRcvRemotePhysicalErrors", 0, Severity.WARNING, "packets marked bad upstream (another link is bad)"
    ),
    CounterRule("PortXmitWait", 1000, Severity.WARNING, "ticks with data to send and no credits (congestion)"),
)


def check_counters(ctx: CheckContext) -> Iterator[Finding]:
    """PMA error counters beyond threshold on one port; a saturated counter is reported as 'at least N'."""
    for end in ib_ends(ctx.fabric):
        counters = end.info.counters
        hits = [(r, counters[r.name]) for r in COUNTER_RULES if counters.get(r.name, 0) > r.threshold]
        if not hits:
            continue
        shown = [
            f"{r.name} {'at least ' if r.name in end.info.saturated else ''}{v}"
            + (" (saturated)" if r.name in end.info.saturated else "")
            for r, v in hits
        ]
        severity = max((r.severity for r, _ in hits), key=lambda s: s.rank)
        lid, port = end.info.lid, _port_num(end)
        clear = f"perfquery -R {lid} {port}  # clear the counters after the fix, then watch them" if lid else None
        commands = (
            *(() if lid is None else (f"perfquery -x {lid} {port}  # the counters now",)),
            *_read_port(end),
            "# reseat or replace the cable/optic of this port"
            if severity is Severity.ERROR
            else "# look upstream (PortRcvRemotePhysicalErrors) or at congestion (PortXmitWait) on this path",
            *(() if clear is None else (clear,)),
        )
        saturated = sorted(r.name for r, _ in hits if r.name in end.info.saturated)
        yield Finding(
            check="IB-COUNTERS",
            severity=severity,
            subject=_subject(end),
            message=f"{end.device} port {end.port}"
            + (f" (lid {lid})" if lid is not None else "")
            + f": {', '.join(shown)}",
            evidence={
                "device": end.device,
                "port": end.port,
                "lid": lid,
                "counters": {r.name: v for r, v in hits},
                "thresholds": {r.name: r.threshold for r, _ in hits},
                "saturated": saturated,
                "meaning": {r.name: r.meaning for r, _ in hits},
                "files": sorted(end.info.sources),
            },
            fix=(Fix(end.device, commands),),
            impact={
                "summary": "; ".join(r.meaning for r, _ in hits)
                + (
                    f"; {', '.join(saturated)} saturated: the true count is higher and no longer grows, so clear "
                    "them with perfquery -R after fixing"
                    if saturated
                    else ""
                )
                + ". One snapshot shows what accumulated since the last clear: `unifab health` judges the rate.",
                "action": "reseat or replace the cable/optic" if severity is Severity.ERROR else "find the cause",
            },
            entities=(end.link or end.entity,),
        )


# --- IB-MTU -----------------------------------------------------------------------------------------------------


def _mtu(ctx: CheckContext, end: IbEnd) -> int | None:
    if end.info.mtu is not None:
        return end.info.mtu
    if end.host:
        nic = ctx.fabric.nic_at(end.endpoint)
        return nic.active_mtu if nic is not None else None
    return None


def check_mtu(ctx: CheckContext) -> Iterator[Finding]:
    """An IB port whose active MTU is below the one most IB ports of the fabric run."""
    ends = [(end, m) for end in ib_ends(ctx.fabric) if (m := _mtu(ctx, end)) is not None]
    counts = Counter(m for _, m in ends)
    if not counts:
        return
    want = max(counts, key=lambda m: (counts[m], m))
    low = [(end, mtu) for end, mtu in ends if mtu < want]
    jobs_of = _ib_jobs_by_host(ctx.fabric) if low else {}
    peer_host = _hca_peers(ctx.fabric) if low else {}
    for end, mtu in low:
        host = end.device if end.host else peer_host.get(end.endpoint)
        jobs = jobs_of.get(host, []) if host is not None else []
        lid, port = end.info.lid, _port_num(end)
        commands = (
            *_read_port(end),
            "# the active MTU is the lowest of the HCA's, the switch port's (MtuCap) and the partition's: "
            "set mtu=5 (4096) for the partition in opensm's partitions.conf"
            if want == 4096
            else f"# raise the port's MTU to {want} (the partition's mtu in opensm's partitions.conf)",
            *(() if lid is None else (f"ibportstate {lid} {port} reset  # renegotiate after the change",)),
        )
        yield Finding(
            check="IB-MTU",
            severity=Severity.WARNING,
            subject=_subject(end),
            message=f"{end.device} port {end.port} runs IB MTU {mtu}, the fabric's IB ports run {want}",
            evidence={
                "device": end.device,
                "port": end.port,
                "lid": lid,
                "mtu": mtu,
                "fabric_mtu": want,
                "ports_at_fabric_mtu": counts[want],
                "jobs": jobs,
            },
            fix=(Fix(end.device, commands),),
            impact={
                "summary": f"every message through this port is cut into {mtu}-byte packets: more headers and "
                f"packets per byte, and RDMA peers negotiate the path MTU down to {mtu}"
                + (f"; NCCL over IB of {_listed(jobs)} runs through it" if jobs else ""),
                "action": f"raise the port's MTU to {want}",
            },
            entities=(end.link or end.entity,),
        )


def _ib_jobs_by_host(fabric: Fabric) -> dict[str, list[str]]:
    """host -> ids of the jobs whose NCCL runs over IB on it (one pass over the jobs)."""
    out: dict[str, list[str]] = {}
    for job in sorted(fabric.jobs.values(), key=lambda j: j.id):
        if job_on_ib(fabric, job):
            for host in job.hosts:
                out.setdefault(host, []).append(job.id)
    return out


def _hca_peers(fabric: Fabric) -> dict[Endpoint, str]:
    """switch port -> the host whose HCA its cable reaches (one pass over the links)."""
    out: dict[Endpoint, str] = {}
    for lk in fabric.links:
        for near, far in ((lk.a, lk.b), (lk.b, lk.a)):
            if far.node in fabric.hosts and near.node in fabric.switches:
                out.setdefault(near, far.node)
    return out


def _listed(ids: list[str], shown: int = 5) -> str:
    head = ", ".join(ids[:shown])
    return head + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


# --- IB-SL ------------------------------------------------------------------------------------------------------


def job_on_ib(fabric: Fabric, job: Job) -> bool:
    """Whether NCCL runs the job over IB: a host of the job has an IB HCA that NCCL_IB_HCA selects, as NCCL reads
    the list (:func:`unifab.checks.job_nics.job_uses_nic`; any IB HCA when the job sets no NCCL_IB_HCA)."""
    return "ib" in job_fabrics(fabric, job)


def check_sl(ctx: CheckContext) -> Iterator[Finding]:
    """A job on IB whose ranks differ in NCCL_IB_SL, or whose SL is not the intent's (or the other jobs')."""
    fabric = ctx.fabric
    jobs = [j for j in sorted(fabric.jobs.values(), key=lambda j: j.id) if j.env_known and job_on_ib(fabric, j)]
    if not jobs:
        return
    intent = fabric.ib.intent_sl if fabric.ib is not None else None
    sls = Counter(j.nccl_ib_sl or 0 for j in jobs if not j.sl_conflict)
    top = sls.most_common(2)
    majority = top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None
    want = intent if intent is not None else majority
    for job in jobs:
        sl = job.nccl_ib_sl if job.nccl_ib_sl is not None else 0  # NCCL's default SL is 0
        problems = []
        if job.sl_conflict:
            problems.append("its ranks run with different NCCL_IB_SL values")
        if want is not None and sl != want:
            where = "the intent's" if intent is not None else "the one the fabric's other jobs use"
            said = f"NCCL_IB_SL={job.nccl_ib_sl}" if job.nccl_ib_sl is not None else "NCCL_IB_SL is unset (SL 0)"
            problems.append(f"{said}, not {where} SL {want}")
            if job.nccl_ib_sl is None and job.nccl_ib_tc is not None:
                problems.append(f"NCCL_IB_TC={job.nccl_ib_tc} is the GRH traffic class on InfiniBand and selects no SL")
        if not problems:
            continue
        fix_sl = want if want is not None else sl
        yield Finding(
            check="IB-SL",
            severity=Severity.ERROR,
            subject={"kind": "job", "id": job.id},
            message=f"{job.id} ({job.name or 'unnamed'}): {'; '.join(problems)}",
            evidence={
                "a": {"job": job.id, "hosts": len(job.hosts), "nccl_ib_sl": job.nccl_ib_sl, "sl": sl},
                "b": {"intent_sl": intent, "jobs_majority_sl": majority, "jobs_on_ib": len(jobs)},
            },
            fix=(Fix(job.id, (f"export NCCL_IB_SL={fix_sl}",)),),
            impact={
                "summary": "the SL picks the virtual lane (SL2VL) and so the arbitration class of the job's "
                "traffic on every switch: ranks on another SL than the fabric plans for compete with traffic "
                "they were meant to be isolated from, or get a low-priority VL",
                "hosts": list(job.hosts),
            },
            entities=(job.id,),
        )


CHECKS = (
    CheckSpec(
        "IB-SM",
        "No InfiniBand subnet manager is master, two are, or the deciding SMs share one priority",
        "Without a master nothing assigns LIDs or routes around a change: new or retrained ports stay in "
        "Initialize; two masters program conflicting LIDs and routes that flip on every sweep; SMs tied on priority "
        "elect the lowest GUID, so replacing hardware moves the master. Reads `sminfo` (ib/sminfo.txt, the master as "
        "the collecting port sees it) and `sminfo <lid>` of each SM (ib/sminfo/<sm>.txt, standbys included).",
        "Run exactly one master SM; give it the highest sm_priority in opensm.conf and each standby a distinct lower "
        "one (check with `sminfo <lid>`).",
        check_sm,
    ),
    CheckSpec(
        "IB-DUPLICATE",
        "An InfiniBand node GUID, port GUID or LID is held by two devices",
        "The SM routes by LID and names ports by GUID: one of the two is unreachable or receives the other's "
        "traffic, and sweeps flap. Reads the GUIDs and LIDs of ibnetdiscover (ib/ibnetdiscover.txt), iblinkinfo "
        "(ib/iblinkinfo.txt) and each host's own view (its sysfs ports/<p>/lid and sm_lid, else ibstat), which see a "
        "CA separately.",
        "Burn the adapter's own GUIDs back (`flint -d <dev> query` shows them); for LIDs have the master SM "
        "reassign them (`opensm --reassign_lids`).",
        check_duplicate,
    ),
    CheckSpec(
        "IB-COUNTERS",
        "InfiniBand PMA error counters beyond threshold on a port (symbol errors, link downed, receive errors, "
        "discards, congestion wait)",
        "Physical errors (SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors) mean "
        "retransmissions and flaps that stall every collective through the link; PortXmitDiscards and "
        "PortRcvRemotePhysicalErrors mean packets lost here or marked bad upstream; PortXmitWait means waiting for "
        "credits (congestion). The narrow counters saturate, so a full one is 'at least' its maximum, and one "
        "snapshot is what accumulated since the last clear (`unifab health` judges rates from ib/perfquery/<t>.txt "
        "snapshots). Reads `perfquery <lid> <port>` runs (ib/perfquery.txt) and ibqueryerrors (ib/ibqueryerrors.txt).",
        "Reseat or replace the cable/optic (`mlxlink -d lid-<lid> -p <port> -m -c`), then clear the counters with "
        "`perfquery -R <lid> <port>` and watch them.",
        check_counters,
    ),
    CheckSpec(
        "IB-MTU",
        "An InfiniBand HCA port runs a lower MTU than the fabric's other HCA ports",
        "Peers negotiate the path MTU down to it: more packets and headers per byte for every transfer through it. "
        "Reads each HCA's active_mtu (hosts/<h>/cmd/ibv_devinfo.txt); the fabric's MTU is what most HCA ports run. "
        "Switch ports are not judged: none of the files unifab reads (ibnetdiscover, iblinkinfo, perfquery) "
        "prints a switch port's MTU.",
        "Set the partition MTU (opensm partitions.conf mtu=5 for 4096) and the port's MTU cap, then "
        "`ibportstate <lid> <port> reset`.",
        check_mtu,
    ),
    CheckSpec(
        "IB-SL",
        "A job on InfiniBand sets different NCCL_IB_SL values on its ranks, or an SL the intent does not allow",
        "The SL selects the virtual lane and its arbitration on every switch: a job on the wrong SL is not isolated "
        "as planned, or lands on a low-priority VL. On IB, NCCL_IB_TC is the GRH traffic class and selects no SL. "
        "Reads the jobs' NCCL environment (scheduler/), the hosts' HCAs and the intent's qos.nccl.sl (fabric.yaml).",
        "Export the fabric's NCCL_IB_SL (fabric.yaml qos.nccl.sl) for every rank of the job.",
        check_sl,
    ),
)
