"""``show interfaces``: :func:`interfaces_from`.

With a :class:`~unifab.errors.ParseProblems` collector an interface entry that cannot be read (a value of
the wrong type) costs that interface, named by its key path; a reply without ``interfaces`` or with only
bad entries raises.
"""

from __future__ import annotations

from unifab.errors import ParseProblems
from unifab.parse._json import child
from unifab.parse.switch.eos_json.access import as_list, as_object, member, opt_int, opt_str
from unifab.parse.switch.eos_json.commands import SHOW_INTERFACES
from unifab.parse.switch.eos_json.records import EosInterfaces, EosInterfaceStatus

__all__ = ["interfaces_from"]

# interfaceCounters sub-objects flattened into EosInterfaceStatus.counters (their keys do not clash)
_COUNTER_DETAILS = ("inputErrorsDetail", "outputErrorsDetail")


def _ipv4(addresses: object, path: str, source: str) -> tuple[str, ...]:
    if addresses is None:
        return ()
    out: list[str] = []
    for i, entry in enumerate(as_list(addresses, path, source)):
        ep = child(path, i)
        primary = as_object(entry, ep, source).get("primaryIp")
        if primary is None:
            continue
        pp = child(ep, "primaryIp")
        p = as_object(primary, pp, source)
        address = opt_str(p, "address", pp, source)
        mask = opt_int(p, "maskLen", pp, source)
        if address and address != "0.0.0.0" and mask is not None:
            out.append(f"{address}/{mask}")
    return tuple(out)


def _interface(name: str, value: object, path: str, source: str) -> EosInterfaceStatus:
    e = as_object(value, path, source)
    counters: dict[str, int] = {}
    raw_counters = e.get("interfaceCounters")
    if raw_counters is not None:
        cp = child(path, "interfaceCounters")
        c = as_object(raw_counters, cp, source)
        for key, v in c.items():
            if key in _COUNTER_DETAILS:
                dp = child(cp, key)
                for dk, dv in as_object(v, dp, source).items():
                    if isinstance(dv, int) and not isinstance(dv, bool):
                        counters[dk] = dv
            elif isinstance(v, int) and not isinstance(v, bool):
                counters[key] = v
    bandwidth = opt_int(e, "bandwidth", path, source)
    speed = bandwidth // 10**6 if bandwidth and bandwidth > 0 and bandwidth % 10**6 == 0 else None
    membership = opt_str(e, "interfaceMembership", path, source)
    members = e.get("memberInterfaces")
    return EosInterfaceStatus(
        name=name,
        description=opt_str(e, "description", path, source),
        mtu=opt_int(e, "mtu", path, source),
        bandwidth_bps=bandwidth,
        speed_mbps=speed,
        line_protocol_status=opt_str(e, "lineProtocolStatus", path, source),
        interface_status=opt_str(e, "interfaceStatus", path, source),
        hardware=opt_str(e, "hardware", path, source),
        forwarding_model=opt_str(e, "forwardingModel", path, source),
        duplex=opt_str(e, "duplex", path, source),
        physical_address=opt_str(e, "physicalAddress", path, source),
        burned_in_address=opt_str(e, "burnedInAddress", path, source),
        member_of=membership.removeprefix("Member of ").strip() or None if membership else None,
        members=tuple(as_object(members, child(path, "memberInterfaces"), source)) if members is not None else (),
        ipv4_addresses=_ipv4(e.get("interfaceAddress"), child(path, "interfaceAddress"), source),
        rx_pause=counters.get("rxPause"),
        tx_pause=counters.get("txPause"),
        counters=counters,
    )


def interfaces_from(
    obj: object, source: str = "<input>", path: str = "", problems: ParseProblems | None = None
) -> EosInterfaces:
    """Read a decoded ``show interfaces`` reply."""
    log = problems if problems is not None else ParseProblems.strict(source)
    root = as_object(obj, path, source)
    body = member(root, "interfaces", path, source, SHOW_INTERFACES)
    ip = child(path, "interfaces")
    out: dict[str, EosInterfaceStatus] = {}
    for name, v in body.items():
        with log.skipping(f"interface {name}"):
            out[name] = _interface(name, v, child(ip, name), source)
    if body and not out:
        raise log.problems[0].error()
    return EosInterfaces(out)
