"""Arista EOS (``switches/<switch>/eos/``) → vendor-neutral switch model, mirroring :mod:`unifab.collect.sonic`.

Files read (the names :mod:`unifab.collect.eos_eapi` writes):

* ``running-config.txt`` (required): ``show running-config``, resolved per interface by
  :func:`unifab.parse.switch.eos_config.parse`;
* ``show-interfaces.json`` (optional): operational MTU, speed and description, used where the
  configuration is silent (no ``mtu``/``speed``/``description`` line);
* ``show-version.json`` (optional): EOS version and the model name (``Switch.platform``); else
  ``show-version.txt``, the same command as CLI text;
* ``show-lldp-neighbors-detail.json`` (optional): the LLDP neighbors, as :class:`~unifab.model.Link`
  (:func:`eos_lldp_links`).

Mapping decisions (the model's SONiC-shaped fields from EOS's vocabulary):

* Ports are the ``Ethernet*`` and ``Port-Channel*`` interfaces of the configuration (subinterfaces
  excluded). ``admin_status`` is ``down`` for ``shutdown``, else ``up``. ``fec`` is ``None``: the
  configuration parser does not read ``error-correction encoding`` and ``show interfaces`` has no FEC.
* ``trust``: EOS ``dscp`` → ``"dscp"``, ``cos`` → ``"pcp"``, ``disabled`` → ``None``; where the
  config is silent the parser's EOS default applies (DSCP on routed ports, CoS on switchports).
* ``dscp_to_tc``: EOS has one global DSCP → traffic-class map (``qos map dscp ...`` over EOS's
  default). A port uses it only when it trusts DSCP, so a port that does not gets ``{}`` (as SONiC
  does without a bound map). ``dscp_map_name`` is ``"global"`` for DSCP-trusting ports, so checks
  treat the switch-wide map as one shared setting.
* ``tc_to_queue``: ``qos map traffic-class N to tx-queue M`` over the identity default.
* ``tc_to_pg``: the identity. EOS priority groups are implicit (not configurable): PFC priority *n*
  is traffic class *n* (reference switch-qos §2.4 [I]).
* ``pfc_enabled``: the ``no-drop`` priorities when PFC is on at the port (and not ``all off``).
* ``queues``: every unicast tx-queue 0..7 (EOS has eight; an unconfigured queue takes the EOS
  defaults: strict priority, no ECN). ``scheduler_type`` is ``"STRICT"`` for ``priority strict``
  (or the default), ``"DWRR"`` for ``no priority`` (weighted round robin by ``bandwidth percent``,
  which becomes ``weight``). ECN thresholds become bytes only when configured in ``bytes``: the byte
  size of ``kbytes``/``mbytes`` (1000- or 1024-based), ``segments`` and time units is not settled in
  any primary source (reference switch-qos §2.2), so for those ``ecn_min_bytes``/``ecn_max_bytes`` are
  ``None`` and the configured value stays out of the model (see the parsed :class:`EosThreshold`).
  ``wred_profile`` is the ``qos profile`` the queue's ECN settings come from (``None`` when they are
  set on the interface itself); ``ecn_max_probability`` is ``max-mark-probability``.
* ``pfcwd``: when ``priority-flow-control pause watchdog`` is on at the port, a
  :class:`PfcWatchdog` with the stuck-queue action (``drop`` → ``drop``, ``no-drop`` → ``forward``,
  ``notify-only`` → ``alert``, ``errdisable`` kept as is), ``timeout`` as ``detection_ms`` and
  ``recovery-time`` as ``restoration_ms`` (EOS seconds → ms); ``pfcwd_priorities`` is then the port's
  ``pfc_enabled``. Watchdog off: ``None`` and no priorities.
* ``cable_len_m`` is ``None`` (EOS has no cable length) and ``headroom`` is ``{}``: PFC headroom is
  platform-managed on EOS, so the headroom check skips these ports.
* ``service-policy type qos`` policy-maps can reclassify traffic; they are not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from unifab.model import Endpoint, Link, PfcWatchdog, Port, PortQos, QueueQos, Switch
from unifab.parse.switch import eos_config, eos_json, eos_version_text
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems

__all__ = [
    "EOS_QUEUES",
    "GLOBAL_DSCP_MAP",
    "LLDP_FILE",
    "PFCWD_ACTIONS",
    "RUNNING_CONFIG",
    "SHOW_INTERFACES",
    "SHOW_VERSION",
    "SHOW_VERSION_TEXT",
    "eos_lldp_links",
    "switch_from_eos",
    "switch_from_eos_config",
]

RUNNING_CONFIG = "running-config.txt"
SHOW_INTERFACES = "show-interfaces.json"
SHOW_VERSION = "show-version.json"
SHOW_VERSION_TEXT = "show-version.txt"  # `show version` as CLI text, read when the eAPI reply is absent
LLDP_FILE = "show-lldp-neighbors-detail.json"

EOS_QUEUES = range(8)  # unicast tx-queues of an EOS port
GLOBAL_DSCP_MAP = "global"  # the model's name for EOS's one global DSCP -> TC map
TRUST = {"dscp": "dscp", "cos": "pcp"}  # EOS `qos trust` -> model; "disabled" -> None
PFCWD_ACTIONS = {"drop": "drop", "no-drop": "forward", "notify-only": "alert", "errdisable": "errdisable"}
LLDP_PORT_ID_TYPES = frozenset({"interfaceName", "ifname", "local"})  # port id is an interface name
IDENTITY_TC_TO_PG = {tc: tc for tc in range(8)}


def switch_from_eos(name: str, eos_dir: SourcePath, problems: Problems) -> Switch | None:
    """Read ``eos_dir`` (``switches/<name>/eos``); ``None`` (and an input finding) without a readable config."""
    config_path = eos_dir / RUNNING_CONFIG
    if not config_path.is_file():
        problems.missing(config_path, "an EOS switch needs its running-config", device=name)
        return None
    cfg = problems.parse_file(
        config_path,
        eos_config.parse,
        device=name,
        not_checked="the QoS, PFC, ECN and MTU checks do not see the interfaces not read",
    )
    if cfg is None:
        return None
    interfaces: eos_json.EosInterfaces | None = None
    version: eos_json.EosVersion | None = None
    if (eos_dir / SHOW_INTERFACES).is_file():
        interfaces = problems.parse_file(
            eos_dir / SHOW_INTERFACES,
            eos_json.parse_show_interfaces,
            device=name,
            not_checked="the MTU, speed and pause checks use the running-config alone for the interface not read",
        )
    if (eos_dir / SHOW_VERSION).is_file():
        version = problems.parse_file(eos_dir / SHOW_VERSION, eos_json.parse_show_version, device=name)
    elif (eos_dir / SHOW_VERSION_TEXT).is_file():
        version = problems.parse_file(eos_dir / SHOW_VERSION_TEXT, eos_version_text.parse, device=name)
    return switch_from_eos_config(name, problems.rel(config_path), cfg, interfaces, version)


def switch_from_eos_config(
    name: str,
    config_file: str,
    cfg: eos_config.EosConfig,
    interfaces: eos_json.EosInterfaces | None = None,
    version: eos_json.EosVersion | None = None,
) -> Switch:
    """The model of one EOS switch from its parsed running-config and (optionally) show outputs."""
    oper = interfaces.interfaces if interfaces is not None else {}
    ports: dict[str, Port] = {}
    for if_name, iq in cfg.interface_qos.items():
        if "." in if_name:
            continue  # subinterfaces are not ports
        iface = cfg.interfaces[if_name]
        status = oper.get(if_name)
        mtu = iface.mtu if iface.mtu is not None else (status.mtu if status and status.mtu else iq.mtu)
        speed = iface.speed_mbps if iface.speed_mbps is not None else (status.speed_mbps if status else None)
        description = iface.description if iface.description is not None else (status.description if status else None)
        ports[if_name] = Port(
            switch=name,
            name=if_name,
            mtu=mtu,
            speed_mbps=speed,
            admin_status="down" if iface.shutdown else "up",
            qos=_port_qos(iq, iface, cfg),
            fec=None,
            description=description,
        )
    return Switch(
        name=name,
        os="eos",
        config_file=config_file,
        ports=ports,
        hwsku=None,
        platform=version.model_name if version else None,
        version=version.version if version else None,
    )


def _ecn_profile(index: int, iface: eos_config.EosInterface, cfg: eos_config.EosConfig) -> str | None:
    """The ``qos profile`` a queue's ECN settings come from; ``None`` when the interface sets them."""
    own = iface.qos
    for queues in (own.tx_queues, own.uc_tx_queues):
        q = queues.get(index)
        if q is not None and q.ecn is not None:
            return None
    return iface.service_profile if iface.service_profile in cfg.qos_profiles else None


def _bytes(threshold: eos_config.EosThreshold | None) -> int | None:
    """Bytes only for the ``bytes`` unit: every other EOS unit's byte size is unsettled."""
    return threshold.value if threshold is not None and threshold.unit == "bytes" else None


def _queue(index: int, q: eos_config.EosQueue | None, profile: str | None) -> QueueQos:
    if q is None:
        strict = eos_config.DEFAULT_QUEUE_STRICT
        return QueueQos(index=index, ecn_enabled=False, wred_profile=None, scheduler_type=_sched(strict))
    marks = q.ecn_enabled
    return QueueQos(
        index=index,
        ecn_enabled=marks,
        wred_profile=profile if marks else None,
        scheduler_type=_sched(q.strict),
        ecn_min_bytes=_bytes(q.min_threshold) if marks else None,
        ecn_max_bytes=_bytes(q.max_threshold) if marks else None,
        ecn_max_probability=q.max_mark_probability if marks else None,
        weight=None if q.strict else q.bandwidth_percent,
        scheduler=None,
        ecn_configured=_configured(q) if marks else None,
    )


def _configured(q: eos_config.EosQueue) -> str | None:
    """``min .. max`` as configured, when a unit (segments, kbytes, time) keeps them out of bytes."""
    low, high = q.min_threshold, q.max_threshold
    if low is None or high is None or low.unit == high.unit == "bytes":
        return None
    return f"{low.value} {low.unit} .. {high.value} {high.unit}"


def _sched(strict: bool) -> str:
    return "STRICT" if strict else "DWRR"


def _port_qos(iq: eos_config.EosInterfaceQos, iface: eos_config.EosInterface, cfg: eos_config.EosConfig) -> PortQos:
    trust = TRUST.get(iq.trust)
    pfcwd: PfcWatchdog | None = None
    watched: frozenset[int] = frozenset()
    if iq.pfcwd.enabled:
        pfcwd = PfcWatchdog(
            action=PFCWD_ACTIONS.get(iq.pfcwd.action, iq.pfcwd.action),
            detection_ms=iq.pfcwd.timeout_ms,
            restoration_ms=iq.pfcwd.recovery_time_ms,
        )
        watched = iq.pfc_enabled
    return PortQos(
        dscp_map_name=GLOBAL_DSCP_MAP if trust == "dscp" else None,
        dscp_to_tc=dict(iq.dscp_to_tc) if trust == "dscp" else {},
        tc_to_pg=dict(IDENTITY_TC_TO_PG),
        tc_to_queue=dict(iq.tc_to_queue),
        pfc_enabled=iq.pfc_enabled,
        queues={i: _queue(i, iq.queues.get(i), _ecn_profile(i, iface, cfg)) for i in sorted({*EOS_QUEUES, *iq.queues})},
        cable_len_m=None,
        trust=trust,
        headroom={},
        pfcwd=pfcwd,
        pfcwd_priorities=watched,
    )


def eos_lldp_links(name: str, eos_dir: SourcePath, problems: Problems) -> list[Link]:
    """Links from ``show-lldp-neighbors-detail.json``; ``[]`` when the file is absent or unreadable.

    Local end: (``name``, local interface). Remote end: (system name without its domain, the port id
    when its type names an interface — ``interfaceName``/``ifname``/``local`` — else the port
    description, which is where lldpd hosts that send their MAC as port id put the interface name).
    Neighbors without a system name or a usable port are left out.
    """
    path = eos_dir / LLDP_FILE
    if not path.is_file():
        return []
    neighbors = problems.parse_file(
        path,
        eos_json.parse_lldp_neighbors_detail,
        device=name,
        not_checked="the cabling and topology checks do not see that neighbour",
    )
    if neighbors is None:
        return []
    links: list[Link] = []
    for local, entries in neighbors.interfaces.items():
        for nb in entries:
            remote_port = nb.port_id if nb.port_id_type in LLDP_PORT_ID_TYPES else nb.port_description
            if remote_port and remote_port.isdigit() and nb.port_description:
                remote_port = nb.port_description  # Junos sends its SNMP ifIndex as a "local" id, the name as descr
            system = nb.system_name.split(".")[0] if nb.system_name else None
            if system and remote_port:
                links.append(Link(Endpoint(name, local), Endpoint(system, remote_port), frozenset({"lldp"})))
    return links
