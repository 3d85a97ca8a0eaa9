"""SONiC CONFIG_DB → vendor-neutral switch model.

The databases are read in part when part of them is bad: a row, a dangling reference or a key the parser
cannot read costs what it touches (a port's QoS, one neighbour) and becomes an ``INPUT-PARTIAL`` finding;
the rest of the switch is read and checked (docs/parsers.md, "Partial results").
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from unifab.model import (
    Endpoint,
    Headroom,
    Link,
    PfcWatchdog,
    Port,
    PortQos,
    QueueQos,
    Switch,
    SwitchBuffers,
    Transceiver,
)
from unifab.parse.switch import sonic_interfaces_status, sonic_lldp, sonic_qos, sonic_state_db, sonic_version
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems

__all__ = [
    "CONFIG_DB_NOT_CHECKED",
    "ECN_OFF",
    "LLDP_NOT_CHECKED",
    "SHOW_INTERFACES_STATUS",
    "SHOW_VERSION",
    "STATE_DB",
    "sonic_lldp_links",
    "switch_from_config_db",
    "switch_from_sonic",
]

ECN_OFF = (None, "ecn_none")
# What an INPUT-PARTIAL finding of each file says cannot be checked on what was skipped.
CONFIG_DB_NOT_CHECKED = "the QoS, PFC, ECN, buffer and headroom checks skip what was not read"
LLDP_NOT_CHECKED = "the cabling and topology checks do not see that neighbour"
SHOW_VERSION = "show-version.txt"  # `show version` beside config_db.json: the image (Switch.version)
# `show interfaces status` beside config_db.json (optional, an operator's capture): the speed of the CONFIG_DB
# ports whose PORT row has none. Not their MTU: a PORT row without one runs SONiC's default (sonic_qos.DEFAULT_MTU,
# what portmgrd sets), which the reader already applies, so the table cannot add to it.
SHOW_INTERFACES_STATUS = "show-interfaces-status.txt"
# STATE_DB beside config_db.json (what `unifab collect` writes from Redis): the ports' pluggable modules
# (TRANSCEIVER_INFO, TRANSCEIVER_FIRMWARE_INFO); nothing else of it is read here.
STATE_DB = "state_db.json"


def switch_from_config_db(name: str, path: SourcePath, problems: Problems) -> Switch | None:
    """Parse ``config_db.json``; ``None`` (and an input finding) when nothing in it can be read.

    What cannot be read of it (a row, a reference) is an ``INPUT-PARTIAL`` finding each; a port whose QoS
    rows were skipped is kept with its QoS unknown (``qos`` ``None``), so the checks skip it.
    """
    resolved = problems.parse_file_partial(path, sonic_qos.parse, device=name, not_checked=CONFIG_DB_NOT_CHECKED)
    if resolved is None:
        return None
    switch = switch_from_sonic(name, problems.rel(path), resolved)
    version_path = path.with_name(SHOW_VERSION)
    if version_path.is_file():
        version = problems.parse_file(version_path, sonic_version.parse, device=name)
        if version is not None:
            switch = replace(
                switch,
                version=version.software_version,
                platform=switch.platform or version.platform,
                hwsku=switch.hwsku or version.hwsku,
            )
    status_path = path.with_name(SHOW_INTERFACES_STATUS)
    if status_path.is_file() and any(p.speed_mbps is None for p in switch.ports.values()):
        rows = problems.parse_file(
            status_path,
            sonic_interfaces_status.parse,
            device=name,
            not_checked="the speed-dependent checks (headroom, cable length) skip the ports without a speed",
        )
        switch = _fill_from_status(switch, rows or ())
    state_path = path.with_name(STATE_DB)
    if state_path.is_file():
        modules = problems.parse_file_partial(
            state_path,
            sonic_state_db.parse_transceivers,
            device=name,
            not_checked="the fleet checks do not see the optics of the ports whose transceiver was skipped",
        )
        switch = _fill_transceivers(switch, modules or {})
    return switch


def _fill_transceivers(switch: Switch, modules: dict[str, sonic_state_db.SonicTransceiver]) -> Switch:
    """The CONFIG_DB ports take the module STATE_DB names for them; ports it does not list are not added."""
    if not any(n in switch.ports for n in modules):
        return switch
    ports = {
        n: replace(p, transceiver=_transceiver(modules[n])) if n in modules else p for n, p in switch.ports.items()
    }
    return replace(switch, ports=ports)


def _transceiver(m: sonic_state_db.SonicTransceiver) -> Transceiver:
    return Transceiver(
        identifier=m.type,
        vendor=m.manufacturer,
        part_number=m.model,
        serial_number=m.serial,
        revision=m.revision,
        temperature_c=None,
        voltage_v=None,
        firmware=m.active_firmware,
        inactive_firmware=m.inactive_firmware,
    )


def _fill_from_status(switch: Switch, rows: tuple[sonic_interfaces_status.SonicInterfaceStatus, ...]) -> Switch:
    """The CONFIG_DB ports without a speed take it from ``show interfaces status``; what CONFIG_DB sets is never
    overridden, and ports it does not list (port channels, other ASICs') are not added."""
    speeds = {r.name: r.speed_mbps for r in rows if r.speed_mbps is not None}
    ports = {
        n: replace(p, speed_mbps=speeds[n]) if p.speed_mbps is None and n in speeds else p
        for n, p in switch.ports.items()
    }
    return replace(switch, ports=ports)


def switch_from_sonic(name: str, config_file: str, sw: sonic_qos.SonicSwitch) -> Switch:
    ports: dict[str, Port] = {}
    dynamic = sw.buffer_model == "dynamic"
    for port_name in sorted(set(sw.ports) | set(sw.port_qos)):
        port = sw.ports.get(port_name)
        q = sw.port_qos.get(port_name)
        ports[port_name] = Port(
            switch=name,
            name=port_name,
            mtu=port.mtu if port else None,
            speed_mbps=port.speed_mbps if port else None,
            admin_status=port.admin_status if port else None,
            qos=_port_qos(q, sw, dynamic) if q else None,
            fec=port.fec if port else None,
            description=port.description if port else None,
        )
    return Switch(
        name=name,
        os="sonic",
        config_file=config_file,
        ports=ports,
        hwsku=sw.hwsku,
        platform=sw.platform,
        buffers=_buffers(sw.buffer_inputs),
        pfcwd_poll_ms=_int(sw.pfc_wd.get("GLOBAL", {}).get("POLL_INTERVAL")),
        pfcwd_default=None if sw.default_pfcwd_status is None else sw.default_pfcwd_status.lower() == "enable",
    )


def _buffers(inputs: sonic_qos.SonicBufferInputs | None) -> SwitchBuffers | None:
    """The buffer model and headroom inputs; ``None`` when a fragment says neither model nor pattern.

    ``buffer_model`` when configured; else a ``LOSSLESS_TRAFFIC_PATTERN`` (only the dynamic model has one) says
    dynamic; else a full CONFIG_DB without the field is SONiC's default, traditional.
    """
    if inputs is None:
        return None
    if inputs.buffer_model is not None:
        model, source = inputs.buffer_model, "DEVICE_METADATA|localhost buffer_model"
    elif inputs.traffic_pattern:
        model, source = "dynamic", "inferred: LOSSLESS_TRAFFIC_PATTERN|AZURE exists only in the dynamic model"
    elif inputs.device_metadata:
        model, source = "traditional", "DEVICE_METADATA|localhost has no buffer_model: SONiC's default"
    else:
        return None
    return SwitchBuffers(
        model=model,
        lossless_mtu=inputs.lossless_mtu,
        small_packet_percentage=inputs.small_packet_percentage,
        over_subscribe_ratio=inputs.over_subscribe_ratio,
        lossless_pool_size=inputs.lossless_pool_size,
        lossless_pool_xoff=inputs.lossless_pool_xoff,
        model_source=source,
    )


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def _queue(queue: sonic_qos.SonicQueue) -> QueueQos:
    marks = queue.ecn not in ECN_OFF
    return QueueQos(
        index=queue.index,
        ecn_enabled=marks,
        wred_profile=queue.wred_profile,
        scheduler_type=queue.scheduler_type,
        ecn_min_bytes=queue.green_min_threshold if marks else None,
        ecn_max_bytes=queue.green_max_threshold if marks else None,
        ecn_max_probability=queue.green_drop_probability if marks else None,
        weight=queue.weight,
        scheduler=queue.scheduler,
        ecn_mode=queue.ecn,
        wred_green_enable=queue.wred_green_enable,
    )


def _headroom(profile_name: str, sw: sonic_qos.SonicSwitch, dynamic_model: bool) -> Headroom:
    if profile_name == "NULL":
        return Headroom(None, None, None, None, dynamic=True)
    fields = sw.buffer_profiles.get(profile_name, {})
    return Headroom(
        profile=profile_name,
        size=_int(fields.get("size")),
        xon=_int(fields.get("xon")),
        xoff=_int(fields.get("xoff")),
        dynamic=fields.get("headroom_type") == "dynamic" or (dynamic_model and "xoff" not in fields),
    )


def _pfcwd(port: str, sw: sonic_qos.SonicSwitch) -> PfcWatchdog | None:
    fields = sw.pfc_wd.get(port)
    if fields is None:
        return None
    return PfcWatchdog(
        action=fields.get("action"),
        detection_ms=_int(fields.get("detection_time")),
        restoration_ms=_int(fields.get("restoration_time")),
    )


def _port_qos(q: sonic_qos.SonicPortQos, sw: sonic_qos.SonicSwitch, dynamic_model: bool) -> PortQos:
    return PortQos(
        dscp_map_name=q.dscp_to_tc_map,
        dscp_to_tc=q.dscp_to_tc,
        tc_to_pg=q.tc_to_pg,
        tc_to_queue=q.tc_to_queue,
        pfc_enabled=q.pfc_enable,
        queues={i: _queue(queue) for i, queue in q.queues.items()},
        cable_len_m=q.cable_length_m,
        trust="dscp" if q.dscp_to_tc_map else None,
        headroom={pg: _headroom(profile, sw, dynamic_model) for pg, profile in q.buffer_pg.items()},
        pfcwd=_pfcwd(q.port, sw),
        pfcwd_priorities=q.pfcwd_sw_enable,
    )


def sonic_lldp_links(name: str, appl_db: SourcePath, problems: Problems) -> list[Link]:
    """Links the switch's LLDP neighbors show (APPL_DB ``LLDP_ENTRY_TABLE``).

    Switches send port names (port id subtype ifname/local); hosts running lldpd send their MAC as
    port id and the interface name as port description, so the description names the far port then.
    """
    neighbors = problems.parse_file_partial(appl_db, sonic_lldp.parse, device=name, not_checked=LLDP_NOT_CHECKED)
    neighbors = neighbors or ()
    links = []
    for nb in neighbors:
        remote_port = nb.port_id if nb.port_id_subtype in ("ifname", "local") else nb.port_descr
        if nb.system_name and remote_port:
            remote = Endpoint(nb.system_name.split(".")[0], remote_port.strip())
            links.append(Link(Endpoint(name, nb.local_port), remote, frozenset({"lldp"})))
    return links
