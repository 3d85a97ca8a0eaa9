"""NVIDIA Cumulus Linux NVUE (``switches/<switch>/nvue/``) → vendor-neutral switch model.

Mirrors :mod:`unifab.collect.sonic`. Files read:

* ``config.yaml`` (required): ``nv config show -o yaml`` (the applied revision; ``/etc/nvue.d/startup.yaml``
  and the REST API's revision object have the same content), resolved per swp interface by
  :func:`unifab.parse.switch.nvue.parse`;
* ``lldpcli.json`` (optional): ``sudo lldpcli -f json show neighbors details`` (any shape
  :func:`unifab.parse.host.lldpcli.parse` reads). Cumulus Linux runs lldpd, and NVUE has no LLDP
  neighbor export of its own in the reference (``nv show interface <if> lldp`` is [U]), so the
  switch's neighbors are taken from lldpd as on a host (:func:`nvue_lldp_links`).

Mapping decisions (NVUE's vocabulary into the model's SONiC-shaped fields):

* The model's *traffic class* is NVUE's **switch priority** (SP): ``dscp_to_tc`` is NVUE's DSCP → SP
  map, ``pfc_enabled`` holds switch priorities (NVUE's PFC unit), and ``tc_to_queue`` is NVUE's
  ``egress-queue-mapping`` SP → traffic class, whose traffic class is the egress queue that
  ``queues`` is keyed by.
* ``tc_to_pg``: the identity. NVUE does not expose priority groups; the PG of a lossless switch
  priority is chosen by the switch (reference switch-qos §4: "implicit").
* ``trust``: ``l3`` → ``"dscp"``, ``both`` (PCP and DSCP, NVUE's RoCE default) → ``"dscp"`` (RoCEv2 is
  IP, so its DSCP classifies it), ``l2`` → ``"pcp"``, ``port`` (every packet gets the port's default
  SP) → ``None``. A port that does not trust DSCP gets ``dscp_to_tc`` ``{}``. ``dscp_map_name`` is the
  port's ``qos mapping`` profile.
* ``pfc_enabled``: the PFC profile's switch priorities when it both sends (``tx``) and honours
  (``rx``) pause frames; a one-direction profile is not lossless end to end and the model has no
  per-direction PFC, so it reads as PFC off. ``cable_len_m`` is the PFC profile's ``cable-length``
  (NVUE sizes headroom from it, as SONiC does from CABLE_LENGTH); ``None`` without a PFC profile.
* ``queues``: traffic classes 0..7. ECN from the ``congestion-control`` profile (``min-threshold``/
  ``max-threshold`` are bytes in NVUE, ``probability`` percent); ``wred_profile`` is that profile's
  name on a marking queue. Scheduler from the ``egress-scheduler`` profile: ``strict`` → ``"STRICT"``,
  ``dwrr`` → ``"DWRR"`` with ``bw-percent`` as ``weight``; a traffic class the profile leaves out has
  ``scheduler_type`` ``None``. ``scheduler`` is the profile's name.
* ``headroom`` is ``{}``: NVUE computes PG buffers from the cable length (``nv show qos pfc`` reports
  them, the configuration does not), so the headroom check skips these ports.
* ``pfcwd``: ``interface <if> qos pfc-watchdog`` on → a :class:`PfcWatchdog` whose ``detection_ms`` is
  ``polling-interval * robustness`` (the watchdog declares a queue stuck after ``robustness`` polls,
  reference switch-qos §3 [I]); NVUE configures no action and no restoration time (``None``).
  ``pfcwd_priorities`` is then the port's ``pfc_enabled``.
* ``mtu``/``speed_mbps`` from ``link mtu``/``link speed`` (NVUE default MTU 9216, speed ``auto`` →
  ``None``). The parser does not read ``link fec``, ``link state`` or ``description``: ``fec``,
  ``admin_status`` and ``description`` are ``None``. ``Switch.version`` is the operational build of
  ``nv-show-system.txt`` (``nv show system``) when collected, else the header's version;
  the header's ``model`` is not kept by the parser, so ``platform`` is ``None``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from unifab.model import Endpoint, Link, PfcWatchdog, Port, PortQos, QueueQos, Switch
from unifab.parse.host import lldpcli
from unifab.parse.switch import nvue, nvue_system
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems

__all__ = [
    "CONFIG_FILE",
    "LLDP_FILE",
    "NVUE_TRAFFIC_CLASSES",
    "SHOW_SYSTEM",
    "TRUST",
    "nvue_lldp_links",
    "switch_from_nvue",
    "switch_from_nvue_config",
]

CONFIG_FILE = "config.yaml"  # nv config show -o yaml
LLDP_FILE = "lldpcli.json"  # lldpcli -f json show neighbors details
SHOW_SYSTEM = "nv-show-system.txt"  # nv show system: the running release, over the config header's
NVUE_TRAFFIC_CLASSES = range(8)
TRUST: dict[str, str | None] = {"l3": "dscp", "both": "dscp", "l2": "pcp", "port": None}
SCHEDULER_TYPES = {"strict": "STRICT", "dwrr": "DWRR"}
LLDP_PORT_ID_TYPES = frozenset({"ifname", "local"})
IDENTITY_TC_TO_PG = {tc: tc for tc in range(8)}


def switch_from_nvue(name: str, nvue_dir: SourcePath, problems: Problems) -> Switch | None:
    """Read ``nvue_dir`` (``switches/<name>/nvue``); ``None`` (and an input finding) without a readable config."""
    path = nvue_dir / CONFIG_FILE
    if not path.is_file():
        problems.missing(path, "an NVUE switch needs its configuration (nv config show -o yaml)", device=name)
        return None
    cfg = problems.parse_file(path, nvue.parse, device=name)
    if cfg is None:
        return None
    switch = switch_from_nvue_config(name, problems.rel(path), cfg)
    if (nvue_dir / SHOW_SYSTEM).is_file():
        system = problems.parse_file(nvue_dir / SHOW_SYSTEM, nvue_system.parse, device=name)
        if system is not None:
            switch = replace(switch, version=system.build)
    return switch


def switch_from_nvue_config(name: str, config_file: str, cfg: nvue.NvueConfig) -> Switch:
    """The model of one NVUE switch from its parsed configuration."""
    ports = {
        if_name: Port(
            switch=name,
            name=if_name,
            mtu=iq.mtu,
            speed_mbps=iq.speed_mbps,
            admin_status=None,
            qos=_port_qos(iq, cfg),
            fec=None,
            description=None,
        )
        for if_name, iq in cfg.interfaces.items()
    }
    return Switch(name=name, os="nvue", config_file=config_file, ports=ports, version=cfg.version)


def _queue(tc: int, iq: nvue.NvueInterfaceQos) -> QueueQos:
    ecn = iq.ecn.get(tc)
    sched = iq.schedulers.get(tc)
    marks = ecn is not None and ecn.enabled
    return QueueQos(
        index=tc,
        ecn_enabled=marks,
        wred_profile=iq.congestion_control_profile if marks else None,
        scheduler_type=SCHEDULER_TYPES.get(sched.mode) if sched else None,
        ecn_min_bytes=ecn.min_bytes if ecn is not None and marks else None,
        ecn_max_bytes=ecn.max_bytes if ecn is not None and marks else None,
        ecn_max_probability=ecn.probability if ecn is not None and marks else None,
        weight=sched.bw_percent if sched and sched.mode == "dwrr" else None,
        scheduler=iq.egress_scheduler_profile if sched else None,
    )


def _port_qos(iq: nvue.NvueInterfaceQos, cfg: nvue.NvueConfig) -> PortQos:
    trust = TRUST.get(iq.trust)
    pfc = iq.pfc_enabled if iq.pfc_rx and iq.pfc_tx else frozenset()
    pfcwd: PfcWatchdog | None = None
    if iq.pfcwd:
        detection = cfg.pfcwd_polling_interval_ms * cfg.pfcwd_robustness
        pfcwd = PfcWatchdog(action=None, detection_ms=detection, restoration_ms=None)
    return PortQos(
        dscp_map_name=iq.mapping_profile if trust == "dscp" else None,
        dscp_to_tc=dict(iq.dscp_to_tc) if trust == "dscp" else {},
        tc_to_pg=dict(IDENTITY_TC_TO_PG),
        tc_to_queue=dict(iq.tc_to_queue),
        pfc_enabled=pfc,
        queues={tc: _queue(tc, iq) for tc in NVUE_TRAFFIC_CLASSES},
        cable_len_m=iq.pfc_cable_length_m,
        trust=trust,
        headroom={},
        pfcwd=pfcwd,
        pfcwd_priorities=pfc if pfcwd is not None else frozenset(),
    )


def nvue_lldp_links(name: str, nvue_dir: SourcePath, problems: Problems) -> list[Link]:
    """Links from ``lldpcli.json``; ``[]`` when the file is absent or unreadable.

    Local end: (``name``, local port). Remote end: (system name without its domain, the port id when
    its type is ``ifname``/``local``, else the port description).
    """
    path = nvue_dir / LLDP_FILE
    if not path.is_file():
        return []
    neighbors = problems.parse_file(
        path, lldpcli.parse, device=name, not_checked="the cabling and topology checks do not see that neighbour"
    )
    if neighbors is None:
        return []
    links: list[Link] = []
    for nb in neighbors:
        remote_port = nb.port_id if nb.port_id_type in LLDP_PORT_ID_TYPES else nb.port_descr
        system = nb.system_name.split(".")[0] if nb.system_name else None
        if system and remote_port:
            links.append(Link(Endpoint(name, nb.local_port), Endpoint(system, remote_port), frozenset({"lldp"})))
    return links
