"""``QOS-HEADROOM`` on switch↔switch links (leaf↔spine, spine↔super-spine).

Uplinks carry the longest cables (30-100 m) and so need the largest PFC headroom; a spine whose lossless
profile was sized for 5 m host cables drops RoCE from every leaf behind it. Each end of every port link is
judged with the same buffer model as a host-facing port (:mod:`unifab.checks.headroom` passes its judge in):
the link's speed, that port's ``CABLE_LENGTH`` (else the plan's ``cable_m``, else the assumed default — the
evidence names which), and the other switch port's MTU shown as the peer's. As on host links, the judged port
is the finding's ``b`` (its evidence: the buffer model, the inputs and the requirement) and its peer the ``a``.

A profile that is short on many ports of one switch (one ``BUFFER_PROFILE`` shared by every uplink) is one
finding about that switch, naming every link, with the profile's one atomic write and each port's own cable
length or PG binding; a single port is a link finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from unifab.checks.context import CheckContext, PortLink
from unifab.checks.uplink_qos import PerSwitch, Wrong
from unifab.model import Finding, Fix, Link, Port, Severity

__all__ = ["Emit", "Judge", "uplink_headroom"]


class Emit(Protocol):
    """Builds the finding about one switch port's PG for the link it serves.

    ``message`` names the port; ``summary`` says the same without it (the switch-wide message of a group);
    ``config`` is the shared setting at fault (``BUFFER_PROFILE|<name>``, ``BUFFER_PG|<pg>``)."""

    def __call__(
        self,
        severity: Severity,
        message: str,
        summary: str,
        config: str,
        port_evidence: dict[str, Any],
        fixes: list[Fix],
        impact: dict[str, Any],
    ) -> Finding: ...


Judge = Callable[[Port, Link, Emit], Iterator[Finding]]

IMPACT = (
    "packets a spine or leaf port receives after it sends XOFF overflow the lossless PG and are dropped; every "
    "flow crossing the link falls into go-back-N retransmission"
)


def _peer(port: Port) -> dict[str, Any]:
    return {"mtu": port.mtu, "speed_mbps": port.speed_mbps}


def uplink_headroom(ctx: CheckContext, judge: Judge) -> Iterator[Finding]:
    """Both ends of every switch↔switch link, through ``judge`` (the host-side buffer rule), grouped per switch."""
    by_setting: dict[tuple[str, str], list[tuple[Wrong, str]]] = {}
    seen: set[str] = set()
    for pl in ctx.port_links:
        for port, other in ((pl.a, pl.b), (pl.b, pl.a)):
            if port.id in seen or port.switch not in ctx.fabric.switches:
                continue
            seen.add(port.id)
            for wrong, config, summary in _judged(pl, port, other, judge):
                by_setting.setdefault((port.switch, config), []).append((wrong, summary))
    out = PerSwitch("QOS-HEADROOM", Severity.ERROR, IMPACT, judged_as_b=True)
    for (switch, config), group in by_setting.items():
        # ports sharing a profile may need different amounts (other cables): the largest need's write goes last,
        # so the profile ends at what every port needs, and the group speaks of the worst port
        group.sort(key=lambda item: item[0].impact.get("shortfall_bytes", 0))
        worst = group[-1][1]
        more = f" (the worst of {len(group)})" if len({s for _, s in group}) > 1 else ""
        for wrong, _ in group:
            out.add(config, f"{switch} {config} on switch-link ports: {worst}{more}", wrong)
    yield from out.findings(ctx)


def _judged(pl: PortLink, port: Port, other: Port, judge: Judge) -> list[tuple[Wrong, str, str]]:
    found: list[tuple[Wrong, str, str]] = []

    def emit(
        severity: Severity,
        message: str,
        summary: str,
        config: str,
        port_evidence: dict[str, Any],
        fixes: list[Fix],
        impact: dict[str, Any],
    ) -> Finding:
        commands = tuple(c for fix in fixes for c in fix.commands)
        extra = {k: v for k, v in impact.items() if k != "summary"}
        wrong = Wrong(
            pl,
            port,
            f"{message} (switch link to {other.endpoint})",
            port_evidence,
            commands,
            severity=severity,
            impact=extra,
            peer=_peer(other),
        )
        found.append((wrong, config, summary))
        # what the judge yields is not used: the findings are built per switch once every end is judged
        return Finding("QOS-HEADROOM", severity, {"kind": "port", "id": port.id}, message)

    for _ in judge(port, pl.link, emit):
        pass
    return found
