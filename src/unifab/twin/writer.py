"""Write a cluster's state as a bundle of the artifacts real devices produce.

Per host (:mod:`unifab.twin.host_files`): ``cmd/mlnx_qos/<netdev>.txt``, ``cmd/ibdev2netdev.txt``,
``cmd/lldpcli.json`` (json0), ``sys/class/net/<netdev>/{mtu,ecn/...}`` and
``sys/class/infiniband/<dev>/tc/1/traffic_class``. Per switch (:mod:`unifab.twin.switch_files`):
``sonic/config_db.json``. Plus ``plan/cabling.csv``.
"""

from __future__ import annotations

from pathlib import Path

from unifab.parse.plan import cabling
from unifab.twin.cluster import Cluster
from unifab.twin.files import write_text
from unifab.twin.host_files import write_host
from unifab.twin.switch_files import config_db


def write_bundle(cluster: Cluster, root: Path) -> None:
    for host, nics in cluster.hosts.items():
        write_host(cluster, root / "hosts" / host, nics)
    for switch in cluster.switches.values():
        write_text(root / "switches" / switch.name / "sonic" / "config_db.json", config_db(switch))
    write_text(root / "plan" / "cabling.csv", cabling.render(planned_cables(cluster)))


def planned_cables(cluster: Cluster) -> tuple[cabling.PlannedCable, ...]:
    cables = []
    for leaf in cluster.leaves():
        for port in leaf.ports.values():
            cables.append(
                cabling.PlannedCable(port.peer_node, port.peer_port, leaf.name, port.name, port.cable_m)
                if port.peer_node in cluster.hosts
                else cabling.PlannedCable(leaf.name, port.name, port.peer_node, port.peer_port, port.cable_m)
            )
    return tuple(sorted(cables, key=lambda cb: (cb.a_node, cb.a_port)))
