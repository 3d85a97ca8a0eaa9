"""A twin switch as NVIDIA Cumulus Linux (NVUE): ``nvue/config.yaml`` (``nv config show -o yaml``) and
``nvue/lldpcli.json`` (``lldpcli -f json0 show neighbors details``; Cumulus runs lldpd).

The configuration is what ``unifab render`` makes of the switch's platform lines (hostname, each
port's ``link speed``): :func:`unifab.render.nvue_config.merged_yaml` with the profile the twin's
intent resolves to (RoCE ``mode lossless``, profiles named after the intent's profile, ``ROCE``),
whose records are first changed where scenarios broke the switch:

* ``TwinSwitch.dscp_to_tc`` entries that differ from a clean switch's (dscp-lossy) → every port's
  DSCP → switch-priority map; ``ecn_min_bytes``/``ecn_max_bytes`` (ecn-thresh) → the ECN thresholds;
* per port: ``mtu`` → ``link mtu``; not trusting DSCP → the ``<NAME>-pcp-trust`` mapping (``trust
  l2``, same maps); other PFC priorities → ``<NAME>-sp<prios>-<m>m``, none → ``<NAME>-no-pfc-<m>m``
  (no switch priorities, rx and tx off: RoCE mode's default would give the port PFC); ECN off on the
  RoCE queue → ``<NAME>-no-ecn``; CNP queue not strict → ``<NAME>-cnp-dwrr`` (DWRR 1 %, taken from
  queue 0); ``roce_queue_weight`` → ``<NAME>-roce-dwrr<weight>`` (the RoCE traffic class DWRR at that
  ``bw-percent``, the other classes as the intent's); no watchdog → no ``pfc-watchdog``;
  ``configured_cable_m`` → the port is rendered for that cable length.

Not expressible, so not written: PFC headroom / buffer profiles (NVUE computes them from the cable
length: ``headroom_short`` is lost) and FEC (NVUE has ``link fec``, but the configuration parser does
not read it, so writing it would change nothing the model sees).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from unifab.parse._text import natural_key
from unifab.parse.host import lldpcli
from unifab.parse.switch import nvue
from unifab.profile import QosProfile
from unifab.render.nvue_config import merged_yaml
from unifab.twin.cluster import Cluster, TwinPort, TwinSwitch
from unifab.twin.files import write_text
from unifab.twin.intent_file import port_spec, switch_profile
from unifab.twin.switch_files_eos import lldp_peer

__all__ = [
    "NVUE_VERSION",
    "config_yaml",
    "lldpcli_json",
    "write_nvue",
]

NVUE_VERSION = "Cumulus Linux 5.16.0"
_CLEAN_PORT = TwinPort("", "", "")
_CLEAN_SWITCH = TwinSwitch("", "leaf", 0)


def _ports(switch: TwinSwitch) -> list[TwinPort]:
    return sorted(switch.ports.values(), key=lambda p: natural_key(p.name))


def config_yaml(switch: TwinSwitch) -> str:
    """``nv config show -o yaml`` of the switch."""
    profile = switch_profile(switch)
    ports = _ports(switch)
    header: dict[str, Any] = {**nvue.DUMP_HEADER, "version": NVUE_VERSION}
    body: dict[str, Any] = {
        "interface": {p.name: {"link": {"speed": f"{p.speed_mbps // 1000}G"}, "type": "swp"} for p in ports},
        "system": {"hostname": switch.name},
    }
    specs = [port_spec(p) for p in ports]
    return merged_yaml(specs, profile, header, body, adjust=partial(_deviations, switch, profile))


def _deviations(switch: TwinSwitch, profile: QosProfile, cfg: nvue.NvueConfig) -> nvue.NvueConfig:
    """The rendered records with the switch's scenario changes (see the module docstring)."""
    dscp = {d: tc for d, tc in switch.dscp_to_tc.items() if _CLEAN_SWITCH.dscp_to_tc.get(d) != tc}
    thresholds = (switch.ecn_min_bytes, switch.ecn_max_bytes)
    new_thresholds = thresholds != (_CLEAN_SWITCH.ecn_min_bytes, _CLEAN_SWITCH.ecn_max_bytes)
    interfaces = dict(cfg.interfaces)
    for port in _ports(switch):
        iface = interfaces.get(port.name)
        if iface is None:
            continue
        changes: dict[str, Any] = {}
        if dscp:
            changes["dscp_to_tc"] = {**iface.dscp_to_tc, **dscp}
        ecn = dict(iface.ecn)
        roce = ecn.get(profile.roce_queue)
        if roce is not None and new_thresholds:
            ecn[profile.roce_queue] = roce = replace(roce, min_bytes=thresholds[0], max_bytes=thresholds[1])
        if roce is not None and not port.roce_queue_ecn:
            ecn[profile.roce_queue] = replace(roce, enabled=False)
            changes["congestion_control_profile"] = f"{profile.name}-no-ecn"
        changes["ecn"] = ecn
        if port.mtu != _CLEAN_PORT.mtu:
            changes["mtu"] = port.mtu
        if not port.trusts_dscp:
            changes |= {"trust": "l2", "mapping_profile": f"{profile.name}-pcp-trust"}
        if port.pfc != _CLEAN_PORT.pfc:
            cable = iface.pfc_cable_length_m
            prios = "-".join(str(p) for p in sorted(port.pfc))
            changes |= {
                "pfc_enabled": frozenset(port.pfc),
                "pfc_rx": bool(port.pfc),
                "pfc_tx": bool(port.pfc),
                "pfc_profile": f"{profile.name}-sp{prios}-{cable}m" if port.pfc else f"{profile.name}-no-pfc-{cable}m",
            }
        if not port.cnp_queue_strict:
            schedulers = dict(iface.schedulers)
            donor = min(q for q, sch in schedulers.items() if sch.mode == "dwrr")
            old = schedulers[donor]
            schedulers[donor] = replace(old, bw_percent=(old.bw_percent or 2) - 1)
            schedulers[profile.cnp_queue] = nvue.NvueScheduler("dwrr", 1)
            changes |= {"schedulers": schedulers, "egress_scheduler_profile": f"{profile.name}-cnp-dwrr"}
        if port.roce_queue_weight is not None:
            schedulers = dict(changes.get("schedulers", iface.schedulers))
            schedulers[profile.roce_queue] = nvue.NvueScheduler("dwrr", port.roce_queue_weight)
            profile_name = f"{profile.name}-roce-dwrr{port.roce_queue_weight}"
            changes |= {"schedulers": schedulers, "egress_scheduler_profile": profile_name}
        if not port.pfcwd:
            changes["pfcwd"] = False
        interfaces[port.name] = replace(iface, **changes)
    return replace(cfg, interfaces=interfaces)


def lldpcli_json(cluster: Cluster, switch: TwinSwitch) -> str:
    """``lldpcli -f json0 show neighbors details``: the neighbor cabled to every port."""
    neighbors = []
    for port in sorted(switch.ports.values(), key=lambda p: natural_key(p.name)):
        peer = lldp_peer(cluster, port)
        if peer is None:
            continue
        neighbors.append(
            lldpcli.LldpNeighbor(
                local_port=port.name,
                via="LLDP",
                age="0 day, 01:12:09",
                chassis_id=peer.chassis_mac,
                chassis_id_type="mac",
                system_name=peer.system_name,
                system_descr=peer.system_descr,
                mgmt_ips=(peer.mgmt_ip,) if peer.mgmt_ip else (),
                capabilities_enabled=peer.capabilities,
                port_id=peer.port_id,
                port_id_type="mac" if peer.port_id_is_mac else "ifname",
                port_descr=peer.port_descr,
                ttl=120,
                mfs=None,
            )
        )
    return lldpcli.dump_json0(neighbors)


def write_nvue(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    """Write ``switch_dir/nvue/{config.yaml, lldpcli.json}``."""
    nvue_dir = switch_dir / "nvue"
    write_text(nvue_dir / "config.yaml", config_yaml(switch))
    write_text(nvue_dir / "lldpcli.json", lldpcli_json(cluster, switch))
