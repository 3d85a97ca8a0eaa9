"""Who owns a NIC's QoS (QOS-DCBX) and whether the RoCE class has bandwidth guaranteed (QOS-ETS).

**DCBX.** ``mlnx_qos`` prints ``DCBX mode: OS controlled`` or ``Firmware controlled``. With firmware DCBX the NIC
takes its PFC/ETS/APP settings from the switch's DCBX TLVs and what the host sets is overridden; with OS control the
host's settings stand. The fabric's intent says which it wants (``fabric.yaml`` ``qos.dcbx``, default ``os``:
unifab renders ``mlnx_qos`` commands, which only stick under OS control); without an intent file the NICs' majority
is the baseline. NICs whose tool does not print a mode (Broadcom) are not judged.

**ETS.** On the NIC, the TC the RoCE priority maps to (``mlnx_qos`` ``prio_tc``; ``niccli`` on Broadcom) must be
``ets`` with a non-zero share or ``strict``, and the TC of the CNP priority must not be a weighted (``ets``) class:
CNPs must leave ahead of data. ``vendor`` TSA (mlx5's out-of-box, and the CNP class under firmware DCBX) is the
firmware's own scheduling and is not judged. On the switch, the RoCE queue's DWRR/WRR weight must be non-zero.
The switch's CNP queue being strict is QOS-CNP's (:mod:`unifab.checks.congestion`), not repeated here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from unifab.checks.context import CheckContext, majority
from unifab.checks.registry import CheckSpec
from unifab.errors import UsageError
from unifab.model import EtsClass, Finding, Fix, Nic, Port, Severity
from unifab.render import host_script as hs
from unifab.render.nic_cli import BNXT, dcbx_of, dialect_of

__all__ = ["CHECKS", "DEFAULT_DCBX", "check_dcbx", "check_ets", "wanted_dcbx"]

DEFAULT_DCBX = "os"
_WEIGHTED = ("DWRR", "WRR")
ROCE_SHARE = 50  # percent: the RoCE class's ETS share the NIC fix sets too


def wanted_dcbx(ctx: CheckContext) -> str | None:
    """The DCBX mode the fabric wants: the intent's, else the NICs' majority (None when no NIC reports one)."""
    intent = ctx.fabric.qos_intent
    if intent is not None:
        mode = getattr(intent, "dcbx", None)
        return mode if isinstance(mode, str) else DEFAULT_DCBX
    return majority(dcbx_of(n) for h in sorted(ctx.fabric.hosts) for n in ctx.fabric.hosts[h].nics.values())


def _dcbx_fix(nic: Nic, want: str) -> Fix:
    try:
        netdev = hs.q(hs.netdev(nic.netdev))
    except UsageError as e:
        return Fix(nic.host, (f"# not rendered for {nic.netdev!r}: {' '.join(str(e).split())}",))
    if want == "os":
        commands = (
            f"mlnx_qos -i {netdev} -d os",
            "# the firmware takes DCBX back at the next boot while its LLDP DCBX agent is on: for good, "
            "mlxconfig -d <dev> set LLDP_NB_DCBX_P1=0 (then a firmware reset), or run mlnx_qos -d os at boot",
        )
    else:
        commands = (
            f"mlnx_qos -i {netdev} -d fw",
            "# firmware DCBX needs the NIC's LLDP DCBX agent (mlxconfig LLDP_NB_DCBX_P1=1, DCBX_WILLING_P1=1) and "
            "the switch port sending the DCBX PFC/ETS/APP TLVs",
        )
    return Fix(nic.host, commands)


def check_dcbx(ctx: CheckContext) -> Iterator[Finding]:
    """A NIC's DCBX owner (OS or firmware) must be the one the fabric's QoS is managed by."""
    want = wanted_dcbx(ctx)
    if want is None:
        return
    source = "fabric.yaml qos.dcbx" if ctx.fabric.qos_intent is not None else "most NICs of the fabric"
    for name in sorted(ctx.fabric.hosts):
        host = ctx.fabric.hosts[name]
        for netdev in sorted(host.nics):
            nic = host.nics[netdev]
            mode = dcbx_of(nic) if nic.qos is not None else None
            if mode is None or mode == want or dialect_of(nic) == BNXT:
                continue
            fw = mode == "fw"
            yield Finding(
                check="QOS-DCBX",
                severity=Severity.ERROR if fw else Severity.WARNING,
                subject={"kind": "nic", "id": nic.id},
                message=f"{nic.id} ({nic.netdev}) DCBX is {'firmware' if fw else 'OS'} controlled; {source} "
                f"wants {'OS' if want == 'os' else 'firmware'} control",
                evidence={
                    "a": {"device": nic.host, "nic": nic.id, "netdev": nic.netdev, "dcbx": mode},
                    "b": {"dcbx": want, "from": source},
                },
                fix=(_dcbx_fix(nic, want),),
                impact={
                    "summary": "the switch's DCBX TLVs override the host's PFC, ETS and DSCP settings: the QoS the "
                    "host was configured with is not what the NIC runs"
                    if fw
                    else "the NIC ignores the QoS the switch advertises over DCBX, so a change made on the "
                    "switch never reaches it and the two ends drift apart"
                },
                entities=(nic.id,),
            )


def _tc_of(prio_tc: dict[int, int], ets: tuple[EtsClass, ...], prio: int) -> EtsClass | None:
    tc = prio_tc.get(prio)
    return next((e for e in ets if e.tc == tc), None) if tc is not None else None


def _nic_ets_problems(nic: Nic, roce_prio: int) -> tuple[list[str], dict[str, Any]]:
    qos = nic.qos
    assert qos is not None
    roce = _tc_of(qos.prio_tc, qos.ets, roce_prio)
    cnp = _tc_of(qos.prio_tc, qos.ets, qos.cnp_prio) if qos.cnp_prio is not None else None
    problems = []
    if roce is not None and roce.tsa == "ets" and not roce.bw_percent:
        problems.append(f"RoCE priority {roce_prio} is in TC {roce.tc}, an ETS class with 0% bandwidth")
    if cnp is not None and cnp.tsa == "ets" and (roce is None or cnp.tc != roce.tc):
        problems.append(f"CNP priority {qos.cnp_prio} is in TC {cnp.tc}, a weighted ETS class, not strict")
    elif cnp is not None and roce is not None and cnp.tc == roce.tc and cnp.tsa == "ets":
        problems.append(f"CNP priority {qos.cnp_prio} shares ETS TC {cnp.tc} with RoCE data, not a strict class")
    evidence = {
        "roce_priority": roce_prio,
        "cnp_priority": qos.cnp_prio,
        "ets": [{"tc": e.tc, "tsa": e.tsa, "bw_percent": e.bw_percent} for e in qos.ets],
        "prio_tc": {str(p): tc for p, tc in sorted(qos.prio_tc.items())},
    }
    return problems, evidence


def _nic_ets_fix(nic: Nic, roce_prio: int) -> Fix:
    """``mlnx_qos --tsa/--tcbw`` with the RoCE TC at 50 % (the rest shared by the other ETS classes) and the CNP TC
    strict; Broadcom's niccli takes the same shape (``ets -tsa ... -tcbw ...``)."""
    qos = nic.qos
    assert qos is not None
    roce_tc = qos.prio_tc.get(roce_prio)
    cnp_tc = qos.prio_tc.get(qos.cnp_prio) if qos.cnp_prio is not None else None
    tsa = {e.tc: e.tsa for e in qos.ets}
    tsa.update({tc: "ets" for tc in range(8) if tc not in tsa})
    if roce_tc is not None and tsa.get(roce_tc) not in ("strict",):
        tsa[roce_tc] = "ets"
    if cnp_tc is not None and cnp_tc != roce_tc:
        tsa[cnp_tc] = "strict"
    tsa = {tc: ("ets" if v == "vendor" else v) for tc, v in tsa.items()}
    others = [tc for tc in range(8) if tsa[tc] == "ets" and tc != roce_tc]
    bw = dict.fromkeys(range(8), 0)
    if roce_tc is not None and tsa[roce_tc] == "ets":
        bw[roce_tc] = ROCE_SHARE if others else 100
    rest = 100 - sum(bw.values())
    for i, tc in enumerate(others):
        bw[tc] = rest // len(others) + (1 if i < rest % len(others) else 0)
    try:
        netdev = hs.q(hs.netdev(nic.netdev))
    except UsageError as e:
        return Fix(nic.host, (f"# not rendered for {nic.netdev!r}: {' '.join(str(e).split())}",))
    tsa_csv = ",".join(tsa[tc] for tc in range(8))
    bw_csv = ",".join(str(bw[tc]) for tc in range(8))
    if dialect_of(nic) == BNXT:
        ets_list = ",".join(f"{tc}:{tsa[tc]}" for tc in range(8))
        return Fix(nic.host, (f"niccli -dev {netdev} ets -tsa {ets_list} -tcbw {bw_csv}",))
    commands: tuple[str, ...] = (f"mlnx_qos -i {netdev} --tsa {tsa_csv} --tcbw {bw_csv}",)
    if dcbx_of(nic) == "fw":
        commands = (
            "# DCBX is firmware controlled: the switch's ETS TLV overrides this; set ETS on the switch port or hand "
            "DCBX to the OS first",
            f"mlnx_qos -i {netdev} -d os",
            *commands,
        )
    return Fix(nic.host, commands)


def _roce_prio(ctx: CheckContext) -> int | None:
    """The RoCE priority: the intent's, else the baseline's (cabled NICs), else what most DSCP-trusting NICs map the
    fabric's RoCE DSCP to (a bundle of hosts without LLDP)."""
    intent = ctx.fabric.qos_intent
    if intent is not None:
        return intent.roce_priority
    if ctx.baseline.nic_roce_prio is not None:
        return ctx.baseline.nic_roce_prio
    dscp = ctx.baseline.roce_dscp
    return majority(
        n.qos.dscp2prio.get(dscp)
        for h in sorted(ctx.fabric.hosts)
        for n in ctx.fabric.hosts[h].nics.values()
        if n.qos is not None and n.qos.trust == "dscp"
    )


def _switch_ets(ctx: CheckContext) -> Iterator[Finding]:
    tc = ctx.baseline.switch_roce_tc
    if tc is None:
        return
    seen: set[str] = set()
    for lk in ctx.nic_links:
        port: Port = lk.port
        if port.qos is None or port.id in seen:
            continue
        seen.add(port.id)
        index = port.qos.tc_to_queue.get(tc, tc)
        queue = port.qos.queues.get(index)
        if queue is None or queue.scheduler_type not in _WEIGHTED or queue.weight != 0:
            continue
        # the RoCE queue at the share the NIC side gives its class (ETS 50 %), in the switch's own language
        fixes = [Fix(port.switch, ctx.cli(port.switch).queue_weight(port.name, index, ROCE_SHARE))]
        yield Finding(
            check="QOS-ETS",
            severity=Severity.ERROR,
            subject={"kind": "port", "id": port.id},
            message=f"{port.endpoint} RoCE queue {index} is {queue.scheduler_type} with weight 0: no bandwidth "
            "guaranteed",
            evidence={
                "b": {
                    "device": port.switch,
                    "port": port.id,
                    "tc": tc,
                    "queue": index,
                    "scheduler": queue.scheduler,
                    "scheduler_type": queue.scheduler_type,
                    "weight": queue.weight,
                }
            },
            fix=tuple(fixes),
            impact={"summary": "under load the RoCE queue is served last: lossless traffic is paused, not sent"},
            entities=(port.id,),
        )


def check_ets(ctx: CheckContext) -> Iterator[Finding]:
    """The RoCE class must have guaranteed bandwidth on NIC and switch, and the NIC must send CNPs strict."""
    prio = _roce_prio(ctx)
    if prio is not None:
        for name in sorted(ctx.fabric.hosts):
            host = ctx.fabric.hosts[name]
            for netdev in sorted(host.nics):
                nic = host.nics[netdev]
                if nic.qos is None or not nic.qos.ets:
                    continue
                problems, evidence = _nic_ets_problems(nic, prio)
                if not problems:
                    continue
                yield Finding(
                    check="QOS-ETS",
                    severity=Severity.ERROR,
                    subject={"kind": "nic", "id": nic.id},
                    message=f"{nic.id} ({nic.netdev}) ETS: " + "; ".join(problems),
                    evidence={"a": {"device": nic.host, "nic": nic.id, "netdev": nic.netdev, **evidence}},
                    fix=(_nic_ets_fix(nic, prio),),
                    impact={
                        "summary": "the NIC's transmit scheduler gives RoCE (or CNPs) no share of the port: under "
                        "load they wait behind other traffic, RoCE stalls and congestion control reacts late"
                    },
                    entities=(nic.id,),
                )
    yield from _switch_ets(ctx)


CHECKS = (
    CheckSpec(
        "QOS-DCBX",
        "A NIC's DCBX is firmware controlled where the fabric's QoS is set from the host, or the reverse",
        "Under firmware DCBX the switch's TLVs override what the host set (PFC, ETS, trust); under OS control the "
        "NIC ignores what the switch advertises. Either way the NIC does not run the QoS it is managed for.",
        "mlnx_qos -i <if> -d os (or -d fw), and for good the firmware's LLDP_NB_DCBX_P1 with mlxconfig; the intent "
        "says which (fabric.yaml qos.dcbx, default os).",
        check_dcbx,
    ),
    CheckSpec(
        "QOS-ETS",
        "The RoCE traffic class has no guaranteed bandwidth, or the NIC sends CNPs in a weighted class",
        "A 0% ETS share or DWRR weight serves RoCE only when nothing else is queued; CNPs behind data slow DCQCN.",
        "mlnx_qos --tsa/--tcbw (niccli ets on Broadcom) with the RoCE TC ets and a share (e.g. 50%) and the CNP TC "
        "strict; a non-zero weight on the switch's RoCE queue scheduler. The switch's CNP queue is QOS-CNP's.",
        check_ets,
    ),
)
