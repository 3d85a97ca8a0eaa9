"""A twin switch as Arista EOS: ``eos/running-config.txt`` and the eAPI JSON of ``show interfaces``,
``show version`` and ``show lldp neighbors detail`` (the files :mod:`unifab.collect.eos_eapi` collects).

The running-config is built as :mod:`unifab.parse.switch.eos_config` records and printed by its
``dump``, so it is exactly what the parser reads. The JSON follows the eAPI field layout of the
vEOS 4.23 captures in ``samples/switch/eos`` (``show interfaces``, ``show lldp neighbors detail``) and
the ``show version`` reply in the SuzieQ EOS gather.

What the configuration encodes, per :class:`~unifab.twin.cluster.TwinSwitch` / ``TwinPort`` field:

* the switch's DSCP → TC map (``dscp_to_tc``, incl. the dscp-lossy change) as global ``qos map dscp``
  lines, TC → tx-queue as the identity (``qos map traffic-class N to tx-queue N``);
* one ``qos profile ROCE`` every port takes (``service-profile ROCE``): ``qos trust dscp``, PFC on with
  priority 3 ``no-drop``, the PFC watchdog on, tx-queues 0-5 round robin (``no priority``, RoCE queue 3
  with 50 % of the bandwidth) and tx-queue 6 (CNP) ``priority strict``, and ECN on tx-queue 3 with the
  switch's thresholds (``ecn_min_bytes``/``ecn_max_bytes``, swapped by ecn-thresh) in ``bytes`` — the
  one EOS unit whose byte size is settled — and ``max-mark-probability 100``;
* per port, what differs from the profile: ``mtu``, ``speed`` (``400g-8``), ``description``
  (``<peer>:<peer port>``), ``qos trust cos`` when the port does not trust DSCP, the port's PFC
  priorities (``no priority-flow-control`` when none; ``priority N no-drop|drop`` otherwise),
  ``no priority-flow-control pause watchdog`` (pfcwd off), ``tx-queue 3 / no random-detect ecn``
  (ECN off), ``tx-queue 3 / bandwidth percent N`` (``roce_queue_weight``: the RoCE queue's round-robin
  share) and ``tx-queue 6 / no priority`` (CNP queue not strict);
* the watchdog timers and action globally: ``default timeout 0.2``, ``default recovery-time 0.2``,
  ``action drop`` (SONiC's PFC_WD 200 ms / 200 ms / drop).

Not expressible on EOS, so not written: the cable length (EOS has none: ``configured_cable_m`` is
lost), PFC headroom / buffer profiles (platform-managed: ``headroom_short`` is lost) and FEC (``fec``:
EOS has ``error-correction encoding``, but the running-config parser does not read it, so writing it
would change nothing the model sees).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from unifab.parse._text import natural_key
from unifab.parse.switch import eos_config as ec
from unifab.render.eos_config import apply_to_running_config
from unifab.render.eos_config import records as eos_records
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinPort, TwinSwitch
from unifab.twin.files import write_text
from unifab.twin.hardware import EOS_INTERNAL_VERSION, EOS_MODEL, EOS_VERSION, HOST_DESCR, SYSTEM_DESCR
from unifab.twin.intent_file import port_spec, switch_profile

__all__ = [
    "EOS_MODEL",
    "EOS_VERSION",
    "ROCE_PROFILE",
    "LldpPeer",
    "lldp_peer",
    "running_config",
    "show_interfaces",
    "show_lldp_neighbors_detail",
    "show_version",
    "speed_text",
    "write_eos",
]

ROCE_PROFILE = "ROCE"
_CLEAN_DSCP = TwinSwitch("", "leaf", 0).dscp_to_tc
LANES = {800_000: 8, 400_000: 8, 200_000: 4, 100_000: 4}
BOOT_TIME = 1767225600.0  # 2026-01-01T00:00:00Z: fixed, so bundles are reproducible
UPTIME_S = 3_600_000.0


def speed_text(mbps: int) -> str:
    """EOS ``speed`` argument: 400000 -> ``400g-8`` (lanes of the 8-lane front-panel port)."""
    if mbps % 1000:
        return f"{mbps}m" if mbps < 1000 else f"{mbps // 1000}g"
    lanes = LANES.get(mbps)
    return f"{mbps // 1000}g" + (f"-{lanes}" if lanes else "")


def _overrides(port: TwinPort) -> ec.EosQosSettings:
    """The port's own QoS lines: only what differs from the ROCE profile."""
    prios: dict[int, bool] = {}
    if port.pfc:
        prios = {p: True for p in sorted(port.pfc) if p != c.ROCE_PRIO}
        if c.ROCE_PRIO not in port.pfc:
            prios[c.ROCE_PRIO] = False
    queues: dict[int, ec.EosQueueConfig] = {}
    if not port.roce_queue_ecn or port.roce_queue_weight is not None:
        ecn = None if port.roce_queue_ecn else False
        queues[c.ROCE_PRIO] = ec.EosQueueConfig(index=c.ROCE_PRIO, ecn=ecn, bandwidth_percent=port.roce_queue_weight)
    if not port.cnp_queue_strict:
        queues[c.CNP_PRIO] = ec.EosQueueConfig(index=c.CNP_PRIO, strict=False)
    return ec.EosQosSettings(
        trust=None if port.trusts_dscp else "cos",
        pfc_on=None if port.pfc else False,
        pfc_priorities=dict(sorted(prios.items())),
        pfcwd_enabled=None if port.pfcwd else False,
        tx_queues=queues,
    )


def _ports(switch: TwinSwitch) -> list[TwinPort]:
    return sorted(switch.ports.values(), key=lambda p: natural_key(p.name))


def _section(switch: TwinSwitch) -> str:
    """What ``unifab render`` enters for the switch, with the switch's scenario changes: its DSCP map
    entries, the profile's ECN thresholds and, per port, ``mtu`` and the QoS lines of :func:`_overrides`."""
    profile = switch_profile(switch)
    ports = _ports(switch)
    cfg = eos_records([port_spec(p) for p in ports], profile)
    dscp = dict(cfg.qos_maps.dscp_to_tc)
    dscp.update((d, tc) for d, tc in switch.dscp_to_tc.items() if _CLEAN_DSCP.get(d) != tc)
    qos_profile = cfg.qos_profiles[profile.name]
    queues = dict(qos_profile.qos.tx_queues)
    if (switch.ecn_min_bytes, switch.ecn_max_bytes) != (c.ECN_MIN_BYTES, c.ECN_MAX_BYTES):
        queues[profile.roce_queue] = replace(
            queues[profile.roce_queue],
            min_threshold=ec.EosThreshold(switch.ecn_min_bytes, "bytes", switch.ecn_min_bytes),
            max_threshold=ec.EosThreshold(switch.ecn_max_bytes, "bytes", switch.ecn_max_bytes),
        )
    interfaces = {
        p.name: replace(cfg.interfaces[p.name], mtu=p.mtu, qos=_overrides(p)) for p in ports if p.name in cfg.interfaces
    }
    cfg = replace(
        cfg,
        interfaces=interfaces,
        qos_profiles={profile.name: replace(qos_profile, qos=replace(qos_profile.qos, tx_queues=queues))},
        qos_maps=replace(cfg.qos_maps, dscp_to_tc=dict(sorted(dscp.items()))),
    )
    return ec.dump(cfg)


def running_config(switch: TwinSwitch) -> str:
    """``show running-config`` of the switch: its platform lines (hostname, description, speed, routed
    ports) with :func:`_section` entered, as :func:`unifab.render.eos_config.apply_to_running_config` does."""
    base = ec.EosConfig(
        hostname=switch.name,
        interfaces={
            p.name: ec.EosInterface(
                name=p.name,
                description=f"{p.peer_node}:{p.peer_port}",
                speed=speed_text(p.speed_mbps),
                speed_mbps=p.speed_mbps,
                switchport=False,
            )
            for p in _ports(switch)
        },
    )
    return apply_to_running_config(ec.dump(base), _section(switch))


def _dotted_mac(mac: str) -> str:
    """``b8:ce:f6:01:00:01`` -> ``b8ce.f601.0001`` (how EOS prints LLDP chassis and port MACs)."""
    hexes = mac.replace(":", "").lower()
    return ".".join(hexes[i : i + 4] for i in range(0, 12, 4))


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + os.linesep


def _interface(switch: TwinSwitch, port: TwinPort) -> dict[str, Any]:
    return {
        "lastStatusChangeTimestamp": BOOT_TIME + 120.0,
        "lanes": LANES.get(port.speed_mbps, 0),
        "name": port.name,
        "interfaceStatus": "connected",
        "autoNegotiate": "off",
        "burnedInAddress": switch.mac,
        "loopbackMode": "loopbackNone",
        "interfaceStatistics": {
            "inBitsRate": 0.0,
            "inPktsRate": 0.0,
            "outBitsRate": 0.0,
            "updateInterval": 300.0,
            "outPktsRate": 0.0,
        },
        "mtu": port.mtu,
        "hardware": "ethernet",
        "duplex": "duplexFull",
        "bandwidth": port.speed_mbps * 1_000_000,
        "forwardingModel": "routed",
        "lineProtocolStatus": "up",
        "l3MtuConfigured": True,
        "interfaceCounters": {
            "outBroadcastPkts": 0,
            "outUcastPkts": 0,
            "totalOutErrors": 0,
            "inMulticastPkts": 0,
            "counterRefreshTime": BOOT_TIME + UPTIME_S,
            "inBroadcastPkts": 0,
            "outputErrorsDetail": {"deferredTransmissions": 0, "txPause": 0, "collisions": 0, "lateCollisions": 0},
            "inOctets": 0,
            "outDiscards": 0,
            "outOctets": 0,
            "inUcastPkts": 0,
            "inTotalPkts": 0,
            "inputErrorsDetail": {
                "runtFrames": 0,
                "rxPause": 0,
                "fcsErrors": 0,
                "alignmentErrors": 0,
                "giantFrames": 0,
                "symbolErrors": 0,
            },
            "linkStatusChanges": 1,
            "outMulticastPkts": 0,
            "totalInErrors": 0,
            "inDiscards": 0,
        },
        "interfaceAddress": [],
        "physicalAddress": switch.mac,
        "description": f"{port.peer_node}:{port.peer_port}",
    }


def show_interfaces(switch: TwinSwitch) -> str:
    """``show interfaces`` (eAPI JSON): Management1 and every front-panel port."""
    interfaces: dict[str, Any] = {
        "Management1": {
            "lastStatusChangeTimestamp": BOOT_TIME + 60.0,
            "lanes": 0,
            "name": "Management1",
            "interfaceStatus": "connected",
            "autoNegotiate": "success",
            "burnedInAddress": switch.mac,
            "mtu": 1500,
            "hardware": "ethernet",
            "duplex": "duplexFull",
            "bandwidth": 1_000_000_000,
            "forwardingModel": "routed",
            "lineProtocolStatus": "up",
            "l3MtuConfigured": False,
            "interfaceAddress": [
                {
                    "secondaryIpsOrderedList": [],
                    "broadcastAddress": "255.255.255.255",
                    "virtualSecondaryIps": {},
                    "dhcp": False,
                    "secondaryIps": {},
                    "primaryIp": {"maskLen": 16, "address": _mgmt_ip(switch)},
                    "virtualSecondaryIpsOrderedList": [],
                    "virtualIp": {"maskLen": 0, "address": "0.0.0.0"},
                }
            ],
            "physicalAddress": switch.mac,
            "description": "",
        }
    }
    for port in _ports(switch):
        interfaces[port.name] = _interface(switch, port)
    return _json({"interfaces": interfaces})


def show_version(switch: TwinSwitch) -> str:
    """``show version`` (eAPI JSON)."""
    return _json(
        {
            "memTotal": 32_594_716,
            "uptime": UPTIME_S,
            "modelName": EOS_MODEL,
            "internalVersion": EOS_INTERNAL_VERSION,
            "mfgName": "Arista",
            "serialNumber": f"JPE{switch.index:08d}",
            "systemMacAddress": switch.mac,
            "bootupTimestamp": BOOT_TIME,
            "memFree": 21_304_112,
            "version": EOS_VERSION,
            "configMacAddress": "00:00:00:00:00:00",
            "isIntlVersion": False,
            "internalBuildId": "b1f64c41-5a8e-4d84-9c3f-3c7d1c0b9e1a",
            "hardwareRevision": "11.00",
            "hwMacAddress": switch.mac,
            "architecture": "x86_64",
        }
    )


@dataclass(frozen=True, slots=True)
class LldpPeer:
    """What a port's LLDP neighbor advertises: lldpd on a host (port id = MAC), a switch (port id = ifname)."""

    system_name: str
    system_descr: str
    chassis_mac: str
    port_id: str
    port_id_is_mac: bool
    port_descr: str
    mgmt_ip: str | None
    capabilities: tuple[str, ...]  # enabled, lldpd names: "Bridge", "Router", "Station"


def _mgmt_ip(switch: TwinSwitch) -> str:
    kind = 1 if switch.role == "leaf" else 2
    return f"10.{254 + kind}.{switch.index >> 8}.{switch.index & 0xFF}"


def lldp_peer(cluster: Cluster, port: TwinPort) -> LldpPeer | None:
    """The neighbor on ``port`` as LLDP sees it; ``None`` when the peer is not in the cluster."""
    peer_switch = cluster.switches.get(port.peer_node)
    if peer_switch is not None:
        peer_port = peer_switch.ports.get(port.peer_port)
        return LldpPeer(
            system_name=peer_switch.name,
            system_descr=SYSTEM_DESCR.get(peer_switch.os, SYSTEM_DESCR["sonic"]),
            chassis_mac=peer_switch.mac,
            port_id=port.peer_port,
            port_id_is_mac=False,
            port_descr=f"{peer_port.peer_node}:{peer_port.peer_port}" if peer_port else port.peer_port,
            mgmt_ip=_mgmt_ip(peer_switch),
            capabilities=("Bridge", "Router"),
        )
    nic = next((n for n in cluster.hosts.get(port.peer_node, ()) if n.netdev == port.peer_port), None)
    if nic is None:
        return None
    return LldpPeer(
        system_name=nic.host,
        system_descr=HOST_DESCR,
        chassis_mac=nic.mac,
        port_id=nic.mac,
        port_id_is_mac=True,
        port_descr=nic.netdev,
        mgmt_ip=None,
        capabilities=("Station",),
    )


def _eos_neighbor(peer: LldpPeer) -> dict[str, Any]:
    caps = {"bridge": "Bridge", "router": "Router", "stationOnly": "Station"}
    return {
        "lastContactTime": BOOT_TIME + UPTIME_S - 10.0,
        "chassisId": _dotted_mac(peer.chassis_mac),
        "systemCapabilities": {key: name in peer.capabilities for key, name in caps.items()},
        "systemName": peer.system_name,
        "systemDescription": peer.system_descr,
        "lastChangeTime": BOOT_TIME + 180.0,
        "neighborInterfaceInfo": {
            "portAndProtocolVlanEnabled": {},
            "linkAggregationStatus": "capableAndDisabled",
            "unknownTlvs": [],
            "interfaceIdType": "macAddress" if peer.port_id_is_mac else "interfaceName",
            "interfaceId": _dotted_mac(peer.port_id) if peer.port_id_is_mac else f'"{peer.port_id}"',
            "interfaceDescription": peer.port_descr,
            "autoNegAdvertisedCapabilities": [],
            "protocolIdentityInfo": [],
            "portAndProtocolVlanSupported": {},
            "vlanNames": {},
            "portVlanId": 0,
            "linkAggregationInterfaceId": 0,
            "unknownOrgDefinedTlvs": [],
        },
        "ttl": 120,
        "managementAddresses": (
            [
                {
                    "oidString": "",
                    "interfaceNumType": "ifIndex",
                    "interfaceNum": 1,
                    "address": peer.mgmt_ip,
                    "addressType": "ipv4",
                }
            ]
            if peer.mgmt_ip
            else []
        ),
        "neighborDiscoveryTime": BOOT_TIME + 180.0,
        "chassisIdType": "macAddress",
    }


def show_lldp_neighbors_detail(cluster: Cluster, switch: TwinSwitch) -> str:
    """``show lldp neighbors detail`` (eAPI JSON): every port with the neighbor cabled to it."""
    neighbors: dict[str, Any] = {"Management1": {"lldpNeighborInfo": []}}
    for port in _ports(switch):
        peer = lldp_peer(cluster, port)
        neighbors[port.name] = {"lldpNeighborInfo": [_eos_neighbor(peer)] if peer else []}
    return _json({"lldpNeighbors": neighbors})


def write_eos(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    """Write ``switch_dir/eos/{running-config.txt, show-interfaces.json, show-version.json,
    show-lldp-neighbors-detail.json}``."""
    eos_dir = switch_dir / "eos"
    write_text(eos_dir / "running-config.txt", running_config(switch))
    write_text(eos_dir / "show-interfaces.json", show_interfaces(switch))
    write_text(eos_dir / "show-version.json", show_version(switch))
    write_text(eos_dir / "show-lldp-neighbors-detail.json", show_lldp_neighbors_detail(cluster, switch))
