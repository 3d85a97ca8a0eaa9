"""A twin switch as NVIDIA Cumulus Linux (NVUE): ``nvue/config.yaml`` (``nv config show -o yaml``) and
``nvue/lldpcli.json`` (``lldpcli -f json0 show neighbors details``; Cumulus runs lldpd).

The configuration is built as :mod:`unifab.parse.switch.nvue` records (one :class:`NvueInterfaceQos`
per port) and printed by its ``render``, which writes every profile the ports name; ports with equal
settings share a range key. RoCE mode (``qos roce``) is **not** used: its lossless mode gives every
port PFC, so a port without PFC (pfc-lossy) could not be written; the RoCE settings are spelled out
as profiles instead, on NVUE's plain defaults.

What the configuration encodes, per :class:`~unifab.twin.cluster.TwinSwitch` / ``TwinPort`` field:

* ``qos mapping default-global``: ``trust l3`` and the switch's DSCP → switch-priority map
  (``dscp_to_tc``, incl. the dscp-lossy change); a port that does not trust DSCP names the
  ``pcp-trust`` profile (``trust l2``, same maps);
* ``egress-queue-mapping``: the identity (NVUE's default, so not written);
* ``qos pfc roce-sp<prios>-<m>m``: the port's PFC switch priorities (rx and tx) and its cable length
  (``configured_cable_m`` when set, else the real cable rounded down, as the SONiC twin's
  CABLE_LENGTH); a port without PFC keeps ``default-global`` (no PFC without RoCE mode);
* ``qos congestion-control roce-ecn``: ECN on traffic class 3 with the switch's thresholds in bytes
  (swapped by ecn-thresh) and probability 100; ``roce-no-ecn`` (ECN disabled on TC 3) for ECN-off ports;
* ``qos egress-scheduler roce-ets``: TC 0 and TC 3 DWRR 50 %, TC 6 (CNP) strict — NVUE's RoCE ETS;
  ``roce-ets-cnp-dwrr`` (TC 6 DWRR) for ports whose CNP queue is not strict;
* ``interface <port> qos pfc-watchdog`` when the watchdog is on; globally ``polling-interval 100`` and
  ``robustness 2`` (a 200 ms detection, SONiC's PFC_WD detection_time);
* ``link mtu`` and ``link speed`` (``400G``).

Not expressible, so not written: PFC headroom / buffer profiles (NVUE computes them from the cable
length: ``headroom_short`` is lost) and FEC (NVUE has ``link fec``, but the configuration parser does
not read it, so writing it would change nothing the model sees).
"""

from __future__ import annotations

from pathlib import Path

from unifab.parse.host import lldpcli
from unifab.parse.switch import nvue
from unifab.parse.switch.sonic_state_db import natural_key
from unifab.twin import cluster as c
from unifab.twin.cluster import Cluster, TwinPort, TwinSwitch
from unifab.twin.files import write_text
from unifab.twin.switch_files_eos import lldp_peer

__all__ = [
    "NVUE_VERSION",
    "config_yaml",
    "lldpcli_json",
    "nvue_config",
    "write_nvue",
]

NVUE_VERSION = "Cumulus Linux 5.16.0"
DEFAULT = "default-global"
PCP_TRUST = "pcp-trust"
ECN_ON, ECN_OFF = "roce-ecn", "roce-no-ecn"
ETS, ETS_CNP_DWRR = "roce-ets", "roce-ets-cnp-dwrr"
PFCWD_POLLING_MS = 100
PFCWD_ROBUSTNESS = 2
ECN_PROBABILITY = 100
SCHEDULERS = {
    ETS: {
        0: nvue.NvueScheduler("dwrr", 50),
        c.ROCE_PRIO: nvue.NvueScheduler("dwrr", 50),
        c.CNP_PRIO: nvue.NvueScheduler("strict", None),
    },
    ETS_CNP_DWRR: {
        0: nvue.NvueScheduler("dwrr", 45),
        c.ROCE_PRIO: nvue.NvueScheduler("dwrr", 45),
        c.CNP_PRIO: nvue.NvueScheduler("dwrr", 10),
    },
}


def _cable_m(port: TwinPort) -> int:
    return port.configured_cable_m if port.configured_cable_m is not None else int(port.cable_m)


def _interface(switch: TwinSwitch, port: TwinPort) -> nvue.NvueInterfaceQos:
    ecn = nvue.NvueEcn(
        enabled=port.roce_queue_ecn,
        min_bytes=switch.ecn_min_bytes,
        max_bytes=switch.ecn_max_bytes,
        probability=ECN_PROBABILITY,
        red_enabled=False,
    )
    cable = _cable_m(port) if port.pfc else None
    pfc_profile = f"roce-sp{'-'.join(str(p) for p in sorted(port.pfc))}-{cable}m" if port.pfc else DEFAULT
    scheduler = ETS if port.cnp_queue_strict else ETS_CNP_DWRR
    return nvue.NvueInterfaceQos(
        interface=port.name,
        mtu=port.mtu,
        speed_mbps=port.speed_mbps,
        trust="l3" if port.trusts_dscp else "l2",
        dscp_to_tc=dict(sorted(switch.dscp_to_tc.items())),
        pcp_to_tc={p: p for p in range(8)},
        port_default_sp=0,
        tc_to_queue={sp: sp for sp in range(8)},
        pfc_enabled=frozenset(port.pfc),
        pfc_rx=bool(port.pfc),
        pfc_tx=bool(port.pfc),
        pfc_cable_length_m=cable,
        ecn={c.ROCE_PRIO: ecn},
        schedulers=dict(SCHEDULERS[scheduler]),
        pfcwd=port.pfcwd,
        mapping_profile=DEFAULT if port.trusts_dscp else PCP_TRUST,
        pfc_profile=pfc_profile,
        congestion_control_profile=ECN_ON if port.roce_queue_ecn else ECN_OFF,
        egress_scheduler_profile=scheduler,
    )


def nvue_config(switch: TwinSwitch) -> nvue.NvueConfig:
    """The switch as resolved NVUE configuration records."""
    ports = sorted(switch.ports.values(), key=lambda p: natural_key(p.name))
    return nvue.NvueConfig(
        version=NVUE_VERSION,
        hostname=switch.name,
        roce_enabled=False,
        roce_mode=None,
        pfcwd_polling_interval_ms=PFCWD_POLLING_MS,
        pfcwd_robustness=PFCWD_ROBUSTNESS,
        interfaces={p.name: _interface(switch, p) for p in ports},
    )


def config_yaml(switch: TwinSwitch) -> str:
    """``nv config show -o yaml`` of the switch."""
    return nvue.render(nvue_config(switch))


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
    return lldpcli.render_json0(neighbors)


def write_nvue(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    """Write ``switch_dir/nvue/{config.yaml, lldpcli.json}``."""
    nvue_dir = switch_dir / "nvue"
    write_text(nvue_dir / "config.yaml", config_yaml(switch))
    write_text(nvue_dir / "lldpcli.json", lldpcli_json(cluster, switch))
