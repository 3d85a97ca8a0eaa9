"""Hypothesis strategies for switch rendering: valid :class:`QosProfile` records and port sets per OS.

Valid means what a fabric can run: RoCE and CNP on distinct DSCPs (0-63) and priorities (0-7), the
lossless set holding the RoCE priority and not the CNP one, RoCE/CNP queues as ``priority_to_tc``
says, ECN with min < max and a marking probability of 1-100 %, a watchdog within SONiC's ranges and
a switch MTU every OS accepts (EOS tops out at 9214).
"""

from __future__ import annotations

from hypothesis import strategies as st

from unifab.profile import EcnQueue, EtsWeight, PortSpec, QosProfile, WatchdogProfile

SPEEDS = (10_000, 25_000, 40_000, 50_000, 100_000, 200_000, 400_000, 800_000)
PORT_PREFIX = {"sonic": "Ethernet", "eos": "Ethernet", "nvue": "swp"}


@st.composite
def profiles(draw: st.DrawFn) -> QosProfile:
    roce_dscp, cnp_dscp = draw(st.lists(st.integers(0, 63), min_size=2, max_size=2, unique=True))
    roce_prio, cnp_prio = draw(st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True))
    others = draw(st.sets(st.integers(0, 7).filter(lambda p: p != cnp_prio), max_size=2))
    lossless = frozenset({roce_prio, *others})
    dscp = {d: draw(st.integers(0, 7)) for d in range(64)} | {roce_dscp: roce_prio, cnp_dscp: cnp_prio}
    identity = draw(st.booleans())
    order = list(range(8)) if identity else draw(st.permutations(list(range(8))))
    prio_to_tc = dict(enumerate(order))
    roce_q, cnp_q = prio_to_tc[roce_prio], prio_to_tc[cnp_prio]
    ets_queues = sorted({roce_q, cnp_q, *draw(st.sets(st.integers(0, 7), max_size=3))})
    ets = tuple(
        EtsWeight(q, "strict", 0) if q == cnp_q else EtsWeight(q, "ets", draw(st.integers(1, 100))) for q in ets_queues
    )
    ecn = []
    for q in sorted({roce_q, *draw(st.sets(st.integers(0, 7).filter(lambda q: q != cnp_q), max_size=1))}):
        low = draw(st.integers(1_000, 5_000_000))
        ecn.append(EcnQueue(q, low, draw(st.integers(low + 1, 20_000_000)), draw(st.integers(1, 100))))
    pfcwd = draw(
        st.none()
        | st.builds(
            WatchdogProfile,
            detection_ms=st.integers(100, 5000),
            restoration_ms=st.integers(100, 60000),
            action=st.sampled_from(("drop", "forward", "alert")),
        )
    )
    switch_mtu = draw(st.integers(1500, 9214))
    return QosProfile(
        name=draw(st.from_regex(r"[A-Z][A-Z0-9_]{0,11}", fullmatch=True)),
        roce_dscp=roce_dscp,
        roce_priority=roce_prio,
        lossless_priorities=lossless,
        roce_queue=roce_q,
        cnp_dscp=cnp_dscp,
        cnp_priority=cnp_prio,
        cnp_queue=cnp_q,
        dscp_to_priority=dscp,
        priority_to_tc=prio_to_tc,
        ets=ets,
        ecn=tuple(ecn),
        dcqcn={},
        host_mtu=min(9000, switch_mtu),
        switch_mtu=switch_mtu,
        pfcwd=pfcwd,
        cable_length_m=draw(st.integers(1, 300)),
        nccl_ib_tc=(roce_dscp << 2) | 2,
    )


@st.composite
def port_sets(draw: st.DrawFn, device_os: str) -> list[PortSpec]:
    numbers = draw(st.lists(st.integers(0, 511), min_size=1, max_size=6, unique=True))
    return [
        PortSpec(
            name=f"{PORT_PREFIX[device_os]}{n}",
            speed_mbps=draw(st.sampled_from(SPEEDS)),
            role=draw(st.sampled_from(("host", "fabric"))),
            cable_m=draw(st.none() | st.integers(1, 300)),
        )
        for n in numbers
    ]
