"""Building findings: one per link with evidence from both ends, or one per shared switch setting."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from unifab.checks.context import CheckContext, NicLink, PortLink
from unifab.model import Finding, Fix, Port, Severity
from unifab.render.nic_cli import dcbx_of
from unifab.render.switch_cli import finish

__all__ = [
    "NIC_KEYS",
    "PORT_KEYS",
    "SwitchWide",
    "finish_fixes",
    "link_finding",
    "merge_switch_wide",
    "port_link_finding",
    "sides_to_fix",
]

NIC_KEYS = ("device", "nic", "netdev")
PORT_KEYS = ("device", "port")


def link_finding(
    check: str,
    severity: Severity,
    lk: NicLink,
    message: str,
    nic_evidence: dict[str, Any],
    port_evidence: dict[str, Any],
    fixes: Iterable[Fix],
    impact: str,
) -> Finding:
    nic, port = lk.nic, lk.port
    return Finding(
        check=check,
        severity=severity,
        subject={"kind": "link", "a": str(nic.endpoint), "b": str(port.endpoint)},
        message=message,
        evidence={
            "a": {"device": nic.host, "nic": nic.id, "netdev": nic.netdev, **_dcbx(nic.qos, nic), **nic_evidence},
            "b": {"device": port.switch, "port": port.id, **port_evidence},
        },
        fix=tuple(fixes),
        impact={"summary": impact},
        entities=(lk.link.id,),
    )


def _dcbx(qos: object, nic: Any) -> dict[str, Any]:
    """The NIC's DCBX mode when collected: with "fw" the switch's TLVs override the OS-side settings."""
    mode = dcbx_of(nic) if qos is not None else None
    return {} if mode is None else {"dcbx": mode}


def merge_switch_wide(switch: str, config: str, message: str, group: list[Finding]) -> Finding:
    """One finding for a switch-wide setting (a map, a profile) that is wrong on many links.

    ``group`` holds the per-link findings; the merged one keeps the worst severity, the common
    evidence of both sides, the shared fix and every affected link.
    """
    first = group[0]
    severity = max((f.severity for f in group), key=lambda s: s.rank)
    links = sorted(e for f in group for e in f.entities)
    return Finding(
        check=first.check,
        severity=severity,
        subject={"kind": "switch", "id": f"switch:{switch}", "config": config},
        message=f"{message}; {len(links)} host links depend on it",
        evidence={
            "a": {k: v for k, v in first.evidence["a"].items() if k not in NIC_KEYS},
            "b": {"device": switch, **{k: v for k, v in first.evidence["b"].items() if k not in PORT_KEYS}},
            "links": links,
        },
        fix=first.fix,
        impact={**first.impact, "links": len(links)},
        entities=tuple(links),
    )


class SwitchWide:
    """Collects per-link findings caused by one shared switch setting, to emit each setting once."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str, str], list[Finding]] = {}

    def add(self, switch: str, config: str, message: str, finding: Finding) -> None:
        self._groups.setdefault((switch, config, message), []).append(finding)

    def findings(self) -> Iterator[Finding]:
        for (switch, config, message), group in self._groups.items():
            yield group[0] if len(group) == 1 else merge_switch_wide(switch, config, message, group)


def port_link_finding(
    check: str,
    severity: Severity,
    pl: PortLink,
    message: str,
    field: str,
    a_value: Any,
    b_value: Any,
    fixes: Iterable[Fix],
    impact: str,
    affected: dict[str, Any] | None = None,
) -> Finding:
    """A finding about one switch↔switch link: ``field`` as each end reports it; ``affected`` says who it hurts."""
    return Finding(
        check=check,
        severity=severity,
        subject={"kind": "link", "a": str(pl.a.endpoint), "b": str(pl.b.endpoint)},
        message=message,
        evidence={
            "a": {"device": pl.a.switch, "port": pl.a.id, field: a_value},
            "b": {"device": pl.b.switch, "port": pl.b.id, field: b_value},
        },
        fix=tuple(fixes),
        impact={"summary": impact, **(affected or {})},
        entities=(pl.link.id,),
    )


def sides_to_fix(pl: PortLink, a_value: Any, b_value: Any, fabric_value: Any) -> list[Port]:
    """The end(s) of a switch link that differ from the fabric's value (both when it is unknown)."""
    return [port for port, value in ((pl.a, a_value), (pl.b, b_value)) if fabric_value is None or value != fabric_value]


def finish_fixes(ctx: CheckContext, finding: Finding) -> Finding:
    """``finding`` with every switch fix group closed by its platform's save step (``config save -y``,
    ``end`` + ``write memory``, ``nv config apply -y`` + ``nv config save``); the dialects already close
    theirs, this also closes groups a check wrote by hand. Verify-only groups stay as they are."""
    fixes = tuple(
        Fix(fx.device, finish(ctx.os_of(fx.device), fx.commands)) if fx.device in ctx.fabric.switches else fx
        for fx in finding.fix
    )
    return finding if fixes == finding.fix else replace(finding, fix=fixes)
