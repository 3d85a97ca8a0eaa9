"""A small fabric built directly from model records: ``links`` hosts each cabled to one leaf port."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from unifab.model import Endpoint, Fabric, Host, Link, Nic, NicQos, PfcWatchdog, Port, PortQos, QueueQos, Switch

FabricFactory = Callable[..., Fabric]


def _nic(host: str) -> Nic:
    qos = NicQos(
        trust="dscp",
        dscp2prio={d: d >> 3 for d in range(64)},
        pfc_enabled=frozenset({3}),
        prio_tc={p: p for p in range(8)},
        cable_len_m=3,
        ecn_np_enabled=frozenset(range(8)),
        ecn_rp_enabled=frozenset(range(8)),
        cnp_dscp=48,
        cnp_prio=6,
        traffic_class=106,
    )
    return Nic(host=host, netdev="eth0", rdma_dev="mlx5_0", mtu=9000, qos=qos)


def _port(index: int) -> Port:
    queues = {q: QueueQos(q, False, None, "DWRR", weight=50, scheduler="scheduler.0") for q in range(8)}
    queues[3] = QueueQos(3, True, "ROCE_LOSSLESS", "DWRR", 150_000, 1_500_000, 100, 50, "scheduler.0")
    queues[6] = QueueQos(6, False, None, "STRICT", scheduler="scheduler.1")
    qos = PortQos(
        dscp_map_name="ROCE",
        dscp_to_tc=dict.fromkeys(range(64), 0) | {26: 3, 48: 6},
        tc_to_pg={t: t for t in range(8)},
        tc_to_queue={t: t for t in range(8)},
        pfc_enabled=frozenset({3}),
        queues=queues,
        cable_len_m=3,
        trust="dscp",
        pfcwd=PfcWatchdog("drop", 200, 200),
        pfcwd_priorities=frozenset({3}),
    )
    return Port("leaf1", f"Ethernet{index * 8}", mtu=9100, speed_mbps=400000, admin_status="up", qos=qos)


@pytest.fixture
def make_fabric() -> FabricFactory:
    """``make_fabric(n, nic={i: {field: value}}, nic_qos={i: {...}}, port={i: {...}}, port_qos={i: {...}})``."""

    def build(
        n: int = 8,
        nic: dict[int, dict[str, Any]] | None = None,
        nic_qos: dict[int, dict[str, Any]] | None = None,
        port: dict[int, dict[str, Any]] | None = None,
        port_qos: dict[int, dict[str, Any]] | None = None,
    ) -> Fabric:
        fabric = Fabric()
        ports = {}
        for i in range(n):
            host = f"gpu{i + 1:03d}"
            the_nic = _nic(host)
            if nic_qos and i in nic_qos:
                assert the_nic.qos is not None
                the_nic = replace(the_nic, qos=replace(the_nic.qos, **nic_qos[i]))
            if nic and i in nic:
                the_nic = replace(the_nic, **nic[i])
            fabric.hosts[host] = Host(host, {"eth0": the_nic})
            the_port = _port(i)
            if port_qos and i in port_qos:
                assert the_port.qos is not None
                the_port = replace(the_port, qos=replace(the_port.qos, **port_qos[i]))
            if port and i in port:
                the_port = replace(the_port, **port[i])
            ports[the_port.name] = the_port
            fabric.links.append(Link(Endpoint(host, "eth0"), the_port.endpoint, frozenset({"lldp"})))
        fabric.switches["leaf1"] = Switch("leaf1", "sonic", "switches/leaf1/sonic/config_db.json", ports)
        return fabric

    return build
