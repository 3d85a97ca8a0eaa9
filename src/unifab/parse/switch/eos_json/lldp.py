"""``show lldp neighbors detail``: :func:`lldp_neighbors_from`.

With a :class:`~unifab.errors.ParseProblems` collector a neighbour entry that cannot be read costs that
neighbour (a local port whose entry is not an object, all of that port's); a reply with only bad entries raises.
"""

from __future__ import annotations

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, type_name
from unifab.parse.switch.eos_json.access import as_list, as_object, member, opt_int, opt_str
from unifab.parse.switch.eos_json.commands import SHOW_LLDP_DETAIL
from unifab.parse.switch.eos_json.records import EosLldpNeighbor, EosLldpNeighbors

__all__ = ["lldp_neighbors_from"]


def _port_id(value: str | None) -> str | None:
    if value and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1] or None
    return value


def _neighbor(local: str, value: object, path: str, source: str) -> EosLldpNeighbor:
    n = as_object(value, path, source)
    info_raw = n.get("neighborInterfaceInfo")
    ip = child(path, "neighborInterfaceInfo")
    info = as_object(info_raw, ip, source) if info_raw is not None else {}
    mgmt: list[str] = []
    raw_mgmt = n.get("managementAddresses")
    if raw_mgmt is not None:
        mp = child(path, "managementAddresses")
        for i, m in enumerate(as_list(raw_mgmt, mp, source)):
            address = opt_str(as_object(m, child(mp, i), source), "address", child(mp, i), source)
            if address:
                mgmt.append(address)
    caps: list[str] = []
    raw_caps = n.get("systemCapabilities")
    if raw_caps is not None:
        cp = child(path, "systemCapabilities")
        for cap, enabled in as_object(raw_caps, cp, source).items():
            if not isinstance(enabled, bool):
                raise ParseError(source, f"a boolean, got {type_name(enabled)}", key=child(cp, cap))
            if enabled:
                caps.append(cap)
    return EosLldpNeighbor(
        local_interface=local,
        chassis_id=opt_str(n, "chassisId", path, source),
        chassis_id_type=opt_str(n, "chassisIdType", path, source),
        system_name=opt_str(n, "systemName", path, source),
        system_description=opt_str(n, "systemDescription", path, source),
        port_id=_port_id(opt_str(info, "interfaceId", ip, source)),
        port_id_type=opt_str(info, "interfaceIdType", ip, source),
        port_description=opt_str(info, "interfaceDescription", ip, source),
        max_frame_size=opt_int(info, "maxFrameSize", ip, source),
        management_addresses=tuple(mgmt),
        capabilities=tuple(sorted(caps)),
        ttl=opt_int(n, "ttl", path, source),
    )


def lldp_neighbors_from(
    obj: object, source: str = "<input>", path: str = "", problems: ParseProblems | None = None
) -> EosLldpNeighbors:
    """Read a decoded ``show lldp neighbors detail`` reply."""
    log = problems if problems is not None else ParseProblems.strict(source)
    root = as_object(obj, path, source)
    body = member(root, "lldpNeighbors", path, source, SHOW_LLDP_DETAIL)
    lp = child(path, "lldpNeighbors")
    out: dict[str, tuple[EosLldpNeighbor, ...]] = {}
    bad = 0
    for local, value in body.items():
        p = child(lp, local)
        with log.skipping(f"the LLDP neighbours of {local}") as port:
            entry = as_object(value, p, source)
            ip = child(p, "lldpNeighborInfo")
            infos = as_list(entry.get("lldpNeighborInfo", []), ip, source)
        if port.failed:
            bad += 1
            continue
        neighbors: list[EosLldpNeighbor] = []
        for i, v in enumerate(infos):
            with log.skipping(f"the LLDP neighbour {i} of {local}") as one:
                neighbors.append(_neighbor(local, v, child(ip, i), source))
            bad += one.failed
        out[local] = tuple(neighbors)
    if bad and not any(out.values()):
        raise log.problems[0].error()
    return EosLldpNeighbors(out)
