"""The twin's InfiniBand network written as the real tools print it (infiniband-diags 44, OpenSM 3.3, ibsim 0.10).

``ib/ibnetdiscover.txt``, ``ib/iblinkinfo.txt``, ``ib/perfquery.txt`` (``perfquery <lid> <port>`` of every cabled
port, concatenated), ``ib/sminfo.txt`` (the master, as any port sees it) and ``ib/sminfo/<where>.txt``
(``sminfo <lid>`` of each SM), ``ib/saquery.txt`` (``saquery NR <lid>`` of every node: the SM's NodeRecords),
``plan/ibnetdiscover.txt`` (the planned cabling at its planned rates), ``ib/ibsim.net``
(an ibsim NETFILE of the real cabling, so a test can load the twin
into the real simulator) and per host ``cmd/ibstat.txt`` (+ ``cmd/ibv_devinfo.txt`` on an IB-backend host, or the
storage HCA added to the host's own ``ibv_devinfo``) and each HCA's
``sys/class/infiniband/<dev>/ports/1/{lid,sm_lid,lid_mask_count,sm_sl,link_layer}`` (the LIDs ibstat prints).
Layouts follow the samples in ``tests/data/samples/ib/``.
The parsers in :mod:`unifab.parse.ib` read every one of them back.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

from unifab import layout
from unifab.collect.ib import (
    IB_FILE,
    IBLINKINFO_FILE,
    IBSTAT_FILE,
    PERFQUERY_FILE,
    PLAN_IB_FILE,
    SAQUERY_FILE,
    SMINFO_DIR,
    SMINFO_FILE,
)
from unifab.parse.host import hw_counters, ibv_devinfo
from unifab.parse.ib.sminfo import SM_STATES
from unifab.twin.files import write_text
from unifab.twin.ib_cluster import IB_SPEED, IB_WIDTH, IbHca, IbNet, IbSw, IbSwPort

__all__ = [
    "IBSIM_FILE",
    "PERF_FIELDS",
    "ib_planned_cables",
    "iblinkinfo_text",
    "ibnetdiscover_text",
    "ibsim_netfile",
    "ibstat_text",
    "ibv_device",
    "perfquery_text",
    "planned_ibnetdiscover_text",
    "saquery_text",
    "sminfo_text",
    "sysfs_port_files",
    "write_ib",
]

IBSIM_FILE = "ib/ibsim.net"
SIGNAL = {"SDR": "2.5 Gbps", "DDR": "5.0 Gbps", "QDR": "10.0 Gbps", "FDR": "14.0625 Gbps", "EDR": "25.78125 Gbps"}
SIGNAL |= {"HDR": "53.125 Gbps", "NDR": "106.25 Gbps", "XDR": "212.5 Gbps"}
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
PERF_FIELDS = (
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "CounterSelect2",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "QP1Dropped",
    "VL15Dropped",
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortXmitWait",
)
_VENDID, _SWITCH_DEVID, _CA_DEVID = "0x2c9", "0xcf08", "0x101b"
_WIDTH_BITS = {"1X": 1, "4X": 2, "8X": 4, "12X": 8, "2X": 16}
_SPEED_BITS = {"SDR": 1, "DDR": 2, "QDR": 4}
_EXT_BITS = {"FDR": 1, "EDR": 2, "HDR": 4}


def _hex(guid: int) -> str:
    return f"{guid:016x}"


def _hca_at(net: IbNet) -> dict[tuple[str, str], tuple[str, int]]:
    """(host, dev) -> the (leaf, port) the plan cables it to."""
    return {p.peer: (sw.name, p.num) for sw in net.switches.values() for p in sw.ports.values() if p.peer in net.hcas}


def _cabled(net: IbNet, sw: IbSw, port: IbSwPort) -> tuple[str, str] | None:
    return net.actual_peer(sw.name, str(port.num), port.peer)


def _hca_peer(net: IbNet, hca: IbHca, planned: dict[tuple[str, str], tuple[str, int]]) -> tuple[str, str] | None:
    leaf, num = planned.get((hca.host, hca.dev), ("", 0))
    return net.actual_peer(hca.host, hca.dev, (leaf, str(num))) if leaf else None


def _link_of(net: IbNet, sw: IbSw, port: IbSwPort) -> tuple[str, str]:
    """(width, speed) the cable at a switch port trained: the lower of its two ends."""
    peer = _cabled(net, sw, port)
    far = net.end_of(*peer) if peer is not None else None
    widths = [port.width] + ([far.width] if far is not None else [])
    speeds = [port.speed] + ([far.speed] if far is not None else [])
    width = min(widths, key=lambda w: int(w.rstrip("X")))
    speed = min(speeds, key=lambda s: LANE_GBPS.get(s, 0))
    return width, speed


def _node_text(net: IbNet, node: str, port: str) -> tuple[str, str, int, str | None]:
    """(ibnetdiscover id, description, lid, own port GUID of a CA) of the far end ``node``/``port``."""
    hca = net.hcas.get((node, port))
    if hca is not None:
        return f"H-{_hex(hca.node_guid)}", hca.shown, hca.lid, _hex(hca.port_guid)
    sw = net.switches[node]
    return f"S-{_hex(sw.guid)}", sw.description, sw.lid, None


def ibnetdiscover_text(net: IbNet) -> str:
    """``ibnetdiscover`` of the real cabling: switches, then CAs; a port with no cable is left out."""
    first = next(iter(sorted(net.hcas.values(), key=lambda h: (h.host, h.dev))), None)
    out = ["#", "# Topology file: generated on Mon Nov 30 02:09:41 2026", "#"]
    if first is not None:
        out.append(f"# Initiated from node {_hex(first.node_guid)} port {_hex(first.port_guid)}")
    out.append("")
    for sw in sorted(net.switches.values(), key=lambda s: s.name):
        g = _hex(sw.guid)
        out += [f"vendid={_VENDID}", f"devid={_SWITCH_DEVID}", f"sysimgguid=0x{g}", f"switchguid=0x{g}({g})"]
        out.append(f'Switch\t{sw.nports} "S-{g}"\t\t# "{sw.description}" base port 0 lid {sw.lid} lmc 0')
        for num in sorted(sw.ports):
            port = sw.ports[num]
            peer = _cabled(net, sw, port)
            if peer is None:
                continue
            far_id, desc, lid, port_guid = _node_text(net, *peer)
            width, speed = _link_of(net, sw, port)
            far_port = 1 if port_guid is not None else int(peer[1])
            guid_part = f"({port_guid}) " if port_guid is not None else ""
            out.append(f'[{num}]\t"{far_id}"[{far_port}]{guid_part}\t\t# "{desc}" lid {lid} {width.lower()}{speed}')
        out.append("")
    planned = _hca_at(net)
    for hca in sorted(net.hcas.values(), key=lambda h: (h.host, h.dev)):
        peer = _hca_peer(net, hca, planned)
        if peer is None:
            continue  # an HCA with no cable is not discovered at all
        sw = net.switches[peer[0]]
        g = _hex(hca.node_guid)
        out += [f"vendid={_VENDID}", f"devid={_CA_DEVID}", f"sysimgguid=0x{g}", f"caguid=0x{g}"]
        out.append(f'Ca\t1 "H-{g}"\t\t# "{hca.shown}"')
        width, speed = _link_of(net, sw, sw.ports[int(peer[1])])
        out.append(
            f'[1]({_hex(hca.port_guid)}) \t"S-{_hex(sw.guid)}"[{peer[1]}]\t\t# lid {hca.lid} lmc 0 '
            f'"{sw.description}" lid {sw.lid} {width.lower()}{speed}'
        )
        out.append("")
    return "\n".join(out) + "\n"


def _link_str(width: str, speed: str, state: str, phys: str) -> str:
    return f"({width:>3} {SIGNAL[speed]:>18} {state:>6}/{phys:>8})"


def _remote(lid: int, port: int, desc: str) -> str:
    return f'{lid:8d}{port:5d}[  ] "{desc}" ( )'


def iblinkinfo_text(net: IbNet) -> str:
    """``iblinkinfo``: every CA that answers (one with no cable does not), then every port of every switch."""
    planned = _hca_at(net)
    out: list[str] = []
    for hca in sorted(net.hcas.values(), key=lambda h: (h.host, h.dev)):
        peer = _hca_peer(net, hca, planned)
        if peer is None:
            continue
        sw = net.switches[peer[0]]
        width, speed = _link_of(net, sw, sw.ports[int(peer[1])])
        out.append(f"CA: {hca.shown}:")
        out.append(
            f"      0x{_hex(hca.port_guid)}{hca.lid:7d}{1:5d}[  ] =={_link_str(width, speed, 'Active', 'LinkUp')}"
            f"==>{_remote(sw.lid, int(peer[1]), sw.description)}"
        )
    for sw in sorted(net.switches.values(), key=lambda s: s.name):
        out.append(f"Switch: 0x{_hex(sw.guid)} {sw.description}:")
        for num in range(1, sw.nports + 1):
            port = sw.ports.get(num)
            peer = _cabled(net, sw, port) if port is not None else None
            if port is None or peer is None:
                out.append(f'{sw.lid:12d}{num:5d}[  ] ==({"":14}{"Down":>6}/{"Polling":>8})==>{"":13}[  ] "" ( )')
                continue
            _, desc, lid, port_guid = _node_text(net, *peer)
            width, speed = _link_of(net, sw, port)
            far_port = 1 if port_guid is not None else int(peer[1])
            out.append(
                f"{sw.lid:12d}{num:5d}[  ] =={_link_str(width, speed, 'Active', 'LinkUp')}==>"
                f"{_remote(lid, far_port, desc)}"
            )
    return "\n".join(out) + "\n"


def _perf_block(lid: int, port: int, counters: dict[str, int], cap_mask: str) -> list[str]:
    out = [f"# Port counters: Lid {lid} port {port} (CapMask: {cap_mask})"]
    out.append(f"{'PortSelect:':.<33}{port}")
    out.append(f"{'CounterSelect:':.<33}0x0000")
    for name in PERF_FIELDS:
        value = "0x00" if name == "CounterSelect2" else str(counters.get(name, 0))
        out.append(f"{name + ':':.<33}{value}")
    return out


def perfquery_text(net: IbNet) -> str:
    """``perfquery <lid> <port>`` of every cabled switch port and HCA, one block after the other."""
    planned = _hca_at(net)
    out: list[str] = []
    for sw in sorted(net.switches.values(), key=lambda s: s.name):
        for num in sorted(sw.ports):
            if _cabled(net, sw, sw.ports[num]) is not None:
                out += _perf_block(sw.lid, num, _traffic(sw.ports[num].counters), "0x1300")
    for hca in sorted(net.hcas.values(), key=lambda h: (h.host, h.dev)):
        if _hca_peer(net, hca, planned) is not None:
            out += _perf_block(hca.lid, 1, _traffic(hca.counters), "0x1200")
    return "\n".join(out) + "\n"


def _traffic(counters: dict[str, int]) -> dict[str, int]:
    """A port's counters: some traffic, no errors, unless a scenario set them."""
    return {"PortXmitData": 3600, "PortRcvData": 3600, "PortXmitPkts": 50, "PortRcvPkts": 50, **counters}


def _sa_record(fields: list[tuple[str, str]]) -> list[str]:
    return ["NodeRecord dump:", *(f"\t\t{name:.<24}{value}" for name, value in fields)]


def saquery_text(net: IbNet) -> str:
    """``saquery`` NodeRecords (``saquery NR <lid>`` of every LID, concatenated, by LID): one per discovered CA port
    and one per switch (its management port 0), with the NodeDescription the SM holds (the real ``<host> <dev>``
    even where the HCA now answers a default one)."""
    planned = _hca_at(net)
    nodes: list[tuple[int, list[tuple[str, str]]]] = []
    for sw in net.switches.values():
        g = f"0x{_hex(sw.guid)}"
        head = [("lid", str(sw.lid)), ("reserved", "0x0"), ("base_version", "0x1"), ("class_version", "0x1")]
        ids = [("node_type", "Switch"), ("num_ports", str(sw.nports)), ("sys_guid", g), ("node_guid", g)]
        tail = [("port_guid", g), ("partition_cap", "0x8"), ("device_id", _sa_hex(_SWITCH_DEVID))]
        nodes.append((sw.lid, [*head, *ids, *tail, *_sa_tail("0", sw.description)]))
    for hca in net.hcas.values():
        if _hca_peer(net, hca, planned) is None:
            continue  # the SM never saw an HCA with no cable
        g = f"0x{_hex(hca.node_guid)}"
        head = [("lid", str(hca.lid)), ("reserved", "0x0"), ("base_version", "0x1"), ("class_version", "0x1")]
        ids = [("node_type", "Channel Adapter"), ("num_ports", "1"), ("sys_guid", g), ("node_guid", g)]
        tail = [("port_guid", f"0x{_hex(hca.port_guid)}"), ("partition_cap", "0x40")]
        tail.append(("device_id", _sa_hex(_CA_DEVID)))
        nodes.append((hca.lid, [*head, *ids, *tail, *_sa_tail("1", hca.description)]))
    out: list[str] = []
    for _, fields in sorted(nodes, key=lambda n: n[0]):
        out += _sa_record(fields)
    return "\n".join(out) + "\n"


def _sa_tail(port_num: str, description: str) -> list[tuple[str, str]]:
    fields = [("revision", "0xA1"), ("port_num", port_num), ("vendor_id", _sa_hex(_VENDID))]
    return [*fields, ("NodeDescription", description)]


def _sa_hex(value: str) -> str:
    """saquery prints IDs in upper case: ``0x2c9`` is ``0x2C9``."""
    return "0x" + value.removeprefix("0x").upper()


def sminfo_text(guid: int, lid: int, priority: int, state: int, activity: int) -> str:
    return (
        f"sminfo: sm lid {lid} sm guid 0x{_hex(guid)}, activity count {activity} priority {priority} "
        f"state {state} {SM_STATES[state]}\n"
    )


def ibstat_text(
    net: IbNet,
    hcas: Sequence[IbHca],
    planned: dict[tuple[str, str], tuple[str, int]],
    others: tuple[tuple[str, str], ...] = (),
) -> str:
    """``ibstat`` of a host: its HCAs on this network (``hcas``, by device; ``planned``: :func:`_hca_at`, built once
    per network) and ``others``: (RDMA device, node GUID hex) of RoCE ports, printed with link layer Ethernet as
    ibstat does."""
    out: list[str] = []
    for dev, guid in others:
        out += _ca_lines(dev, guid, "Active", "LinkUp", 400, 0, 0, guid, "Ethernet")
    for hca in hcas:
        up = _hca_peer(net, hca, planned) is not None
        peer = _hca_peer(net, hca, planned)
        rate = 0
        if peer is not None:
            sw = net.switches[peer[0]]
            width, speed = _link_of(net, sw, sw.ports[int(peer[1])])
            rate = int(int(width.rstrip("X")) * LANE_GBPS[speed])
        out += _ca_lines(
            hca.dev,
            _hex(hca.node_guid),
            "Active" if up else "Down",
            "LinkUp" if up else "Polling",
            rate if up else 10,
            *_hca_lids(net, hca, planned),
            _hex(hca.port_guid),
            "InfiniBand",
        )
    return "\n".join(out) + "\n"


def _hca_lids(net: IbNet, hca: IbHca, planned: dict[tuple[str, str], tuple[str, int]]) -> tuple[int, int]:
    """(LID, SM LID) an HCA port reports (ibstat, sysfs): 0 and 0 while it has no link."""
    up = _hca_peer(net, hca, planned) is not None
    master = next((sm for sm in net.sms if sm.state == 3), None)
    return (hca.lid if up else 0, master.lid if master is not None and up else 0)


def sysfs_port_files(net: IbNet, hca: IbHca, planned: dict[tuple[str, str], tuple[str, int]]) -> dict[str, str]:
    """``sys/class/infiniband/<dev>/ports/1/{lid,sm_lid,lid_mask_count,sm_sl,link_layer}`` of an HCA (paths relative
    to the host directory), with the LIDs its ibstat prints."""
    lid, sm_lid = _hca_lids(net, hca, planned)
    port = hw_counters.IbPort(
        port=layout.PORT,
        state=None,
        phys_state=None,
        rate_gbps=None,
        width=None,
        speed=None,
        link_layer="InfiniBand",
        lifespan_ms=None,
        hw_counters={},
        counters={},
        cm_counters={},
        lid=lid,
        sm_lid=sm_lid,
        lid_mask_count=0,
        sm_sl=0,
    )
    files = hw_counters.dump_tree(hw_counters.HwCounters((hw_counters.IbDevice(None, None, None, None, (port,)),)))
    return {f"{layout.SYS_IB}/{hca.dev}/{rel}": text for rel, text in files.items()}


def _ca_lines(
    dev: str, guid: str, state: str, phys: str, rate: int, lid: int, sm_lid: int, port_guid: str, link: str
) -> list[str]:
    return [
        f"CA '{dev}'",
        "\tCA type: MT4123",
        "\tNumber of ports: 1",
        "\tFirmware version: 20.39.1002",
        "\tHardware version: 0",
        f"\tNode GUID: 0x{guid}",
        f"\tSystem image GUID: 0x{guid}",
        "\tPort 1:",
        f"\t\tState: {state}",
        f"\t\tPhysical state: {phys}",
        f"\t\tRate: {rate}",
        f"\t\tBase lid: {lid}",
        "\t\tLMC: 0",
        f"\t\tSM lid: {sm_lid}",
        "\t\tCapability mask: 0xa651e848",
        f"\t\tPort GUID: 0x{port_guid}",
        f"\t\tLink layer: {link}",
    ]


def ibv_device(net: IbNet, hca: IbHca, planned: dict[tuple[str, str], tuple[str, int]]) -> ibv_devinfo.IbvDevice:
    """``ibv_devinfo`` of an HCA (node GUID as ``xxxx:xxxx:xxxx:xxxx``)."""
    up = _hca_peer(net, hca, planned) is not None
    master = next((sm for sm in net.sms if sm.state == 3), None)
    g = _hex(hca.node_guid)
    colons = ":".join(g[i : i + 4] for i in range(0, 16, 4))
    port = ibv_devinfo.IbvPort(
        port=1,
        state="PORT_ACTIVE" if up else "PORT_DOWN",
        max_mtu=4096,
        active_mtu=hca.mtu,
        sm_lid=master.lid if master is not None and up else 0,
        port_lid=hca.lid if up else 0,
        port_lmc=0,
        link_layer="InfiniBand",
    )
    return ibv_devinfo.IbvDevice(
        hca.dev, "InfiniBand", "20.39.1002", colons, colons, "0x02c9", 4123, "0x0", "MT_0000000222", 1, (port,)
    )


def ibsim_netfile(net: IbNet) -> str:
    """An ibsim NETFILE of the real cabling (ibnetdiscover's 'simple' syntax): ``switchguid=``/``caguid=`` keep the
    twin's GUIDs, ``w=``/``s=``/``e=`` on both ends of a link that trained below 4X HDR."""
    planned = _hca_at(net)
    out = ["width=2", "speed=7", "extspeed=7", ""]

    def opts(width: str, speed: str) -> str:
        extra = []
        if width != "4X":
            extra.append(f"w={_WIDTH_BITS[width]}")
        if speed != "HDR":
            extra += [f"s={_SPEED_BITS.get(speed, 4)}", f"e={_EXT_BITS.get(speed, 0)}"]
        return (" " + " ".join(extra)) if extra else ""

    for sw in sorted(net.switches.values(), key=lambda s: s.name):
        out += [f"switchguid=0x{_hex(sw.guid)}", f"vendid={_VENDID}", f"devid={_SWITCH_DEVID}"]
        out.append(f'Switch {sw.nports} "{sw.net_id}" # "{sw.description}"')
        for num in sorted(sw.ports):
            peer = _cabled(net, sw, sw.ports[num])
            if peer is None:
                continue
            hca = net.hcas.get(peer)
            far = hca.net_id if hca is not None else net.switches[peer[0]].net_id
            far_port = 1 if hca is not None else int(peer[1])
            out.append(f'[{num}] "{far}"[{far_port}]{opts(*_link_of(net, sw, sw.ports[num]))}')
        out.append("")
    for hca in sorted(net.hcas.values(), key=lambda h: (h.host, h.dev)):
        out += [f"caguid=0x{_hex(hca.node_guid)}", f"vendid={_VENDID}", f"devid={_CA_DEVID}"]
        out.append(f'Hca 1 "{hca.net_id}" # "{hca.shown}"')
        peer = _hca_peer(net, hca, planned)
        if peer is not None:
            sw = net.switches[peer[0]]
            out.append(f'[1] "{sw.net_id}"[{peer[1]}]{opts(*_link_of(net, sw, sw.ports[int(peer[1])]))}')
        out.append("")
    return "\n".join(out)


def planned_ibnetdiscover_text(net: IbNet) -> str:
    """``plan/ibnetdiscover.txt``: the planned cabling at the planned rates (``net.planned_rates``, else 4X HDR),
    in ibnetdiscover's format, as an operator saves the accepted fabric's ``ibnetdiscover``."""
    plan = copy.deepcopy(net)
    plan.actual = {}
    for hca in plan.hcas.values():
        hca.width, hca.speed, hca.shown_description = IB_WIDTH, IB_SPEED, None
    for sw in plan.switches.values():
        for port in sw.ports.values():
            port.width, port.speed = IB_WIDTH, IB_SPEED
    for (switch, num), (width, speed) in net.planned_rates.items():
        port = plan.switches[switch].ports[int(num)]
        far = plan.end_of(*port.peer)
        for end in (port, far):
            if end is not None:
                end.width, end.speed = width, speed
    return ibnetdiscover_text(plan)


def ib_planned_cables(net: IbNet) -> list[tuple[str, str, str, str, float]]:
    """The plan's IB cables: (a node, a port, z node, z port, metres); HCA cables host end first."""
    out: list[tuple[str, str, str, str, float]] = []
    for leaf in net.leaves():
        for port in leaf.ports.values():
            if port.peer in net.hcas:
                out.append((port.peer[0], port.peer[1], leaf.name, str(port.num), 3.0))
            else:
                out.append((leaf.name, str(port.num), port.peer[0], port.peer[1], 30.0))
    return out


def write_ib(net: IbNet, root: Path, hosts: dict[str, tuple[tuple[str, str], ...]], host_files: bool) -> None:
    """Every IB file of ``net`` under ``root``. ``hosts``: per host its RoCE ports for ibstat (RDMA device, node
    GUID hex); ``host_files``: also write each host's ``ibv_devinfo`` (an IB-backend host has no other files),
    else add the storage HCAs to the ``ibv_devinfo`` the host writer wrote."""
    write_text(root / IB_FILE, ibnetdiscover_text(net))
    write_text(root / IBLINKINFO_FILE, iblinkinfo_text(net))
    write_text(root / PERFQUERY_FILE, perfquery_text(net))
    write_text(root / IBSIM_FILE, ibsim_netfile(net))
    write_text(root / PLAN_IB_FILE, planned_ibnetdiscover_text(net))
    write_text(root / SAQUERY_FILE, saquery_text(net))
    master = next((sm for sm in net.sms if sm.state == 3), None)
    if master is not None:
        write_text(root / SMINFO_FILE, sminfo_text(master.guid, master.lid, master.priority, 3, master.activity))
    for sm in net.sms:
        name = sm.where.replace(":", "-")
        write_text(root / SMINFO_DIR / f"{name}.txt", sminfo_text(sm.guid, sm.lid, sm.priority, sm.state, sm.activity))
    planned = _hca_at(net)  # once per network: each HCA's lookups below are then O(1)
    by_host: dict[str, list[IbHca]] = {}
    for hca in sorted(net.hcas.values(), key=lambda h: (h.host, h.dev)):
        by_host.setdefault(hca.host, []).append(hca)
    for host, hcas in by_host.items():
        host_dir = root / layout.HOSTS / host
        if not host_files and not host_dir.is_dir():
            continue  # a host the twin left uncollected
        if host not in net.no_ibstat:
            write_text(host_dir / IBSTAT_FILE, ibstat_text(net, hcas, planned, hosts.get(host, ())))
        devices = tuple(ibv_device(net, h, planned) for h in hcas)
        path = host_dir / layout.IBV_DEVINFO
        if not host_files and path.is_file():
            own = ibv_devinfo.parse(path.read_text(encoding="utf-8"), str(path))
            devices = own + tuple(d for d in devices if d.hca_id not in {o.hca_id for o in own})
        write_text(path, ibv_devinfo.dump(devices))
        for hca in hcas:
            for rel, text in sysfs_port_files(net, hca, planned).items():
                write_text(host_dir / rel, text)
