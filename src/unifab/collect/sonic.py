"""SONiC CONFIG_DB → vendor-neutral switch model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from unifab.model import Port, PortQos, QueueQos, Switch
from unifab.parse.switch import sonic_qos

if TYPE_CHECKING:
    from unifab.collect.bundle import Problems

ECN_OFF = (None, "ecn_none")


def switch_from_config_db(name: str, path: Path, problems: Problems) -> Switch | None:
    """Parse ``config_db.json``; ``None`` (and an input finding) when it cannot be read."""
    resolved = problems.parse_file(path, sonic_qos.parse, device=name)
    if resolved is None:
        return None
    return switch_from_sonic(name, problems.rel(path), resolved)


def switch_from_sonic(name: str, config_file: str, sw: sonic_qos.SonicSwitch) -> Switch:
    ports: dict[str, Port] = {}
    for port_name in sorted(set(sw.ports) | set(sw.port_qos)):
        port = sw.ports.get(port_name)
        q = sw.port_qos.get(port_name)
        ports[port_name] = Port(
            switch=name,
            name=port_name,
            mtu=port.mtu if port else None,
            speed_mbps=port.speed_mbps if port else None,
            admin_status=port.admin_status if port else None,
            qos=_port_qos(q) if q else None,
        )
    return Switch(name=name, os="sonic", config_file=config_file, ports=ports, hwsku=sw.hwsku)


def _port_qos(q: sonic_qos.SonicPortQos) -> PortQos:
    return PortQos(
        dscp_map_name=q.dscp_to_tc_map,
        dscp_to_tc=q.dscp_to_tc,
        tc_to_pg=q.tc_to_pg,
        tc_to_queue=q.tc_to_queue,
        pfc_enabled=q.pfc_enable,
        queues={
            i: QueueQos(i, queue.ecn not in ECN_OFF, queue.wred_profile, queue.scheduler_type)
            for i, queue in q.queues.items()
        },
        cable_len_m=q.cable_length_m,
    )
