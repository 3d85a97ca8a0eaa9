"""Write a cluster's state as a bundle of the artifacts real devices produce.

Per host (:mod:`unifab.twin.host_files`): ``cmd/mlnx_qos/<netdev>.txt``, ``cmd/ibdev2netdev.txt``,
``cmd/lldpcli.json`` (json0), ``sys/class/net/<netdev>/{mtu,ecn/...}`` and
``sys/class/infiniband/<dev>/tc/1/traffic_class``. Per switch, by its OS: SONiC ``sonic/config_db.json``
and ``sonic/appl_db.json`` (LLDP), EOS ``eos/`` running-config and eAPI JSON, NVUE ``nvue/config.yaml``.
Plus ``plan/cabling.csv``, the jobs in ``scheduler/`` and the intent the twin was built from, ``fabric.yaml``.

The ports' peers are the plan (``plan/cabling.csv``, port descriptions); LLDP on every side follows the
real cabling, which topology scenarios record in :attr:`Cluster.actual`. Devices in :attr:`Cluster.uncollected`
get no files (they stay in the plan and in their peers' LLDP, as a device nobody collected does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from unifab import layout
from unifab.parse.plan import cabling
from unifab.twin.cluster import Cluster, TwinSwitch
from unifab.twin.files import write_text
from unifab.twin.host_files import write_host
from unifab.twin.intent_file import intent_yaml
from unifab.twin.scheduler_files import write_scheduler
from unifab.twin.switch_files import appl_db_lldp, config_db
from unifab.twin.switch_files_eos import show_lldp_neighbors_detail, write_eos
from unifab.twin.switch_files_nvue import lldpcli_json, write_nvue

__all__ = ["SWITCH_WRITERS", "planned_cables", "write_bundle"]


def write_bundle(cluster: Cluster, root: Path, progress: Callable[[int], None] | None = None) -> None:
    """``progress(1)`` after each host and switch written."""
    for host, nics in cluster.hosts.items():
        if host not in cluster.uncollected and cluster.fabric != "ib":  # an IB backend's hosts: twin.ib_files
            write_host(cluster, root / "hosts" / host, nics)
        if progress:
            progress(1)
    for switch in cluster.switches.values():
        if switch.name in cluster.uncollected:
            if progress:
                progress(1)
            continue
        writer = SWITCH_WRITERS.get(switch.os)
        if writer is None:
            raise ValueError(f"{switch.name}: the twin has no writer for switch OS {switch.os!r}")
        writer(cluster, switch, root / "switches" / switch.name)
        if progress:
            progress(1)
    cables = planned_cables(cluster)
    if cluster.ib is not None:
        from unifab.twin.ib_writer import ib_cables, write_ib_network

        cables = tuple(sorted((*cables, *ib_cables(cluster.ib)), key=lambda cb: (cb.a_node, cb.a_port)))
    write_text(root / layout.CABLING_CSV, cabling.dump(cables))
    write_text(root / layout.INTENT, intent_yaml())
    write_scheduler(cluster, root)
    if cluster.ib is not None:
        write_ib_network(cluster, root)


def _write_sonic(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    write_text(switch_dir / "sonic" / "config_db.json", config_db(switch))
    write_text(switch_dir / "sonic" / "appl_db.json", appl_db_lldp(switch, cluster))


def _write_eos(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    write_eos(cluster, switch, switch_dir)
    if (cabled := _cabled_view(cluster, switch)) is not switch:
        write_text(switch_dir / "eos" / "show-lldp-neighbors-detail.json", show_lldp_neighbors_detail(cluster, cabled))


def _write_nvue(cluster: Cluster, switch: TwinSwitch, switch_dir: Path) -> None:
    write_nvue(cluster, switch, switch_dir)
    if (cabled := _cabled_view(cluster, switch)) is not switch:
        write_text(switch_dir / "nvue" / "lldpcli.json", lldpcli_json(cluster, cabled))


# The twin's writer of each platform it can build (see unifab.platforms; InfiniBand is not one yet).
SWITCH_WRITERS: dict[str, Callable[[Cluster, TwinSwitch, Path], None]] = {
    "sonic": _write_sonic,
    "eos": _write_eos,
    "nvue": _write_nvue,
}


def _cabled_view(cluster: Cluster, switch: TwinSwitch) -> TwinSwitch:
    """The switch with each port's peer set to the real cabling (an uncabled port gets no peer), for LLDP
    writers that read the ports' peers; the switch itself when nothing on it was recabled."""
    if not any((switch.name, name) in cluster.actual for name in switch.ports):
        return switch
    ports = {}
    for name, port in switch.ports.items():
        cabled = cluster.cabled_port(switch.name, port)
        ports[name] = cabled if cabled is not None else replace(port, peer_node="", peer_port="")
    return replace(switch, ports=ports)


def planned_cables(cluster: Cluster) -> tuple[cabling.PlannedCable, ...]:
    """The plan: every leaf port's intended peer, whatever :attr:`Cluster.actual` says is really cabled."""
    cables = []
    for leaf in cluster.leaves():
        for port in leaf.ports.values():
            cables.append(
                cabling.PlannedCable(port.peer_node, port.peer_port, leaf.name, port.name, port.cable_m)
                if port.peer_node in cluster.hosts
                else cabling.PlannedCable(leaf.name, port.name, port.peer_node, port.peer_port, port.cable_m)
            )
    return tuple(sorted(cables, key=lambda cb: (cb.a_node, cb.a_port)))
