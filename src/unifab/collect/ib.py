"""An InfiniBand fabric in the model's records: ``ib/ibnetdiscover.txt`` and the other IB diag outputs of a bundle.

Channel adapters become host NICs named by their RDMA device (``dgx-001`` / ``mlx5_3``: NodeDescription
``"dgx-001 mlx5_3"``; an IB port has no netdev, so the RDMA device is the key), switches become
``Switch`` records of OS ``ib`` whose ports are the port numbers as text, and each cable becomes a
discovered link (source ``lldp``: the checks' word for "seen on the wire", whatever protocol saw it).
Speeds are the link's trained rate (``4xHDR`` = 200,000 Mb/s; ``1xHDR`` = 50,000), set on both ends.
Routers are treated as switches.

A CA is named by the host that reports its node GUID (``hosts/<h>/cmd/ibstat.txt``) when one does, else by its
NodeDescription; where ibnetdiscover gives it an empty or default one (the HCA's own ``MT4123 ConfigurationCapable``
before rdma-ndd set ``<host> <device>``) or one that names no device, by the NodeDescription the SM holds for the
same node GUID (``ib/saquery.txt``); a CA with none of these keeps its GUID id (``H-<guid>``) as host name.
Every IB port carries an :class:`~unifab.model.IbPort` (GUIDs, LID, width, speed, states), completed by the other
files:

``ib/iblinkinfo.txt``     every port's width, speed and logical/physical state (dark ports included)
``ib/perfquery.txt``      ``perfquery <lid> <port>`` runs, concatenated: PMA error counters (``-x`` blocks too);
                          without it, the newest snapshot ``ib/perfquery/<unix time>.txt`` (the series
                          :mod:`unifab.health.ib_series` reads) stands in
``ib/ibqueryerrors.txt``  ``ibqueryerrors`` output: the counters beyond threshold, by GUID and port
``ib/sminfo.txt``         ``sminfo``: the master SM as the collecting port sees it
``ib/sminfo/<name>.txt``  ``sminfo <lid>``: one file per known SM (standbys included)
``ib/saquery.txt``        ``saquery`` (NodeRecords; ``saquery NR <lid>`` runs concatenated too): the SM's
                          NodeDescription of each node, naming the CAs ibnetdiscover leaves unnamed
``hosts/<h>/cmd/ibstat.txt``  ``ibstat`` of the host: its CAs' node and port GUIDs, LIDs, SM LID, states
``plan/ibnetdiscover.txt``  the intended IB fabric in ibnetdiscover's format (``ibnetdiscover`` of the fabric as
                          accepted, or generated): each cable's ``<width>x<speed>`` (``4xNDR``) is the rate the plan
                          gives it (``IbFabric.planned_rates``, judged by TOPO-DEGRADED); the cabling itself is
                          ``plan/cabling.csv``'s
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from unifab import layout
from unifab.collect.problems import Problems
from unifab.errors import ParseProblems
from unifab.model import Endpoint, Fabric, Host, IbFabric, IbPort, IbSm, Link, Nic, Port, Switch, guid_text
from unifab.parse.ib import ibnetdiscover, saquery
from unifab.parse.ib.ibnetdiscover import IbTopology
from unifab.parse.ib.saquery import SaNodeRecord
from unifab.sources import SourcePath

__all__ = [
    "DISCOVERED",
    "IBLINKINFO_FILE",
    "IBQUERYERRORS_FILE",
    "IBSTAT_FILE",
    "IB_FILE",
    "PERFQUERY_FILE",
    "PLAN_IB_FILE",
    "SAQUERY_FILE",
    "SMINFO_DIR",
    "SMINFO_FILE",
    "SNAPSHOT_DIR",
    "IbView",
    "LidIndex",
    "apply_counters",
    "ca_name",
    "ib_fabric",
    "ib_view",
    "lid_index",
    "load_ib",
    "merge_hosts",
    "planned_rates",
    "sa_ca_names",
    "sm_record",
    "snapshot_time",
]

IB_FILE = "ib/ibnetdiscover.txt"
IBLINKINFO_FILE = "ib/iblinkinfo.txt"
PERFQUERY_FILE = "ib/perfquery.txt"
IBQUERYERRORS_FILE = "ib/ibqueryerrors.txt"
SMINFO_FILE = "ib/sminfo.txt"
SMINFO_DIR = "ib/sminfo"
SAQUERY_FILE = layout.SAQUERY
IBSTAT_FILE = "cmd/ibstat.txt"  # under hosts/<host>/
PLAN_IB_FILE = "plan/ibnetdiscover.txt"
SNAPSHOT_DIR = "ib/perfquery"  # successive perfquery rounds, one file each: <unix time>.txt
_SNAPSHOT_NAME = re.compile(r"^(\d{1,12}(?:\.\d{1,9})?)\.txt$")
DISCOVERED = frozenset({"lldp"})
_SM_ROLES = {0: "notactive", 1: "discovering", 2: "standby", 3: "master"}
_CONVENTIONAL_DEVICE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# A CA's NodeDescription before rdma-ndd (or the admin) set "<host> <device>": the HCA's part number first
# ("MT4123 ConfigurationCapable", "MT4099 ConnectX3 Mellanox Technologies"), or empty.
_DEFAULT_CA_DESCRIPTION = re.compile(r"^\s*(?:MT\d+\b|.*\bConfigurationCapable\b|.*\bMellanox Technologies\s*$)")


@dataclass(slots=True)
class IbView:
    hosts: dict[str, Host] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)


def _guid(value: str | None) -> str | None:
    """``0xb83f...`` or bare hex as :func:`guid_text` prints it."""
    if not value:
        return None
    text = value[2:] if value[:2].lower() == "0x" else value
    try:
        return guid_text(int(text, 16))
    except ValueError:
        return None


def ca_name(description: str | None) -> tuple[str, str] | None:
    """(host, RDMA device) of a CA's NodeDescription ``<host> <device>``; ``None`` for an empty or default one
    (``MT4123 ConfigurationCapable``) or one whose second word is not a device name."""
    if not description or _DEFAULT_CA_DESCRIPTION.match(description):
        return None
    name, device = ibnetdiscover.node_name("ca", description), ibnetdiscover.ca_device(description)
    if name and device and _CONVENTIONAL_DEVICE.match(device):
        return name, device
    return None


def _names(
    topology: IbTopology, guid_names: dict[str, tuple[str, str]], sa_names: dict[str, tuple[str, str]]
) -> tuple[dict[str, tuple[str, str | None]], Callable[[str, int], tuple[str, str]]]:
    """(node id -> (kind, description)), and the function naming a (node id, port) end."""
    described: dict[str, tuple[str, str | None]] = {}
    for node in topology.nodes:
        for p in node.ports:
            kind = {"S-": "switch", "H-": "ca", "R-": "router"}.get(p.remote_id[:2], "ca")
            described.setdefault(p.remote_id, (kind, p.remote_description))
    guid_of: dict[str, str | None] = {}
    for node in topology.nodes:
        described[node.id] = (node.kind, node.description)
        guid_of[node.id] = _guid(node.guid)

    def end(node_id: str, port: int) -> tuple[str, str]:
        kind, description = described.get(node_id, ("ca", None))
        if kind == "ca":
            guid = guid_of.get(node_id) or _guid(node_id[2:])
            if guid is not None and guid in guid_names:
                return guid_names[guid]
            named = ca_name(description)
            if named is None and guid is not None:
                named = sa_names.get(guid)
            return named if named is not None else (node_id, str(port))
        return ibnetdiscover.node_name(kind, description) or node_id, str(port)

    return described, end


def ib_view(
    topology: IbTopology,
    source: str = IB_FILE,
    guid_names: dict[str, tuple[str, str]] | None = None,
    sa_names: dict[str, tuple[str, str]] | None = None,
) -> IbView:
    """Hosts, switches and cables of one ``ibnetdiscover`` run (linear in ports).

    ``guid_names`` maps a CA's node GUID (:func:`guid_text`) to the (host, RDMA device) that reports it;
    ``sa_names`` the same from the SM's NodeRecords (:func:`sa_ca_names`), for the CAs whose NodeDescription
    here names none.
    """
    _, end = _names(topology, guid_names or {}, sa_names or {})
    nodes = {node.id: node for node in topology.nodes}
    lid_at: dict[tuple[str, int], int] = {}  # (node id, port) -> LID, as the far end's port line prints it
    port_guid_at: dict[tuple[str, int], str] = {}
    for node in topology.nodes:
        for p in node.ports:
            if p.remote_lid is not None:
                lid_at[(p.remote_id, p.remote_port)] = p.remote_lid
            if p.port_guid:
                port_guid_at[(node.id, p.port)] = p.port_guid
            if p.remote_port_guid:
                port_guid_at.setdefault((p.remote_id, p.remote_port), p.remote_port_guid)

    def ib_port(node_id: str, port: int, width: int | None, speed: str | None) -> IbPort:
        node = nodes.get(node_id)
        switch_like = node_id[:2] != "H-"
        node_guid = _guid(node.guid) if node is not None else _guid(node_id[2:])
        lid = node.lid if node is not None and switch_like and node.lid is not None else lid_at.get((node_id, port))
        if switch_like and lid is None:
            lid = next((v for (n, _), v in lid_at.items() if n == node_id), None)
        return IbPort(
            node_guid=node_guid,
            port_guid=_guid(port_guid_at.get((node_id, port))) or (node_guid if switch_like else None),
            lid=lid,
            port_num=port,
            width=f"{width}X" if width is not None else None,
            speed=speed,
            state="Active",
            phys_state="LinkUp",
            description=node.description if node is not None else None,
            sources=frozenset({source}),
        )

    switch_ids = {node.id for node in topology.nodes if node.kind != "ca"}
    switch_ids |= {p.remote_id for node in topology.nodes for p in node.ports if p.remote_id[:2] in ("S-", "R-")}
    nics: dict[str, dict[str, Nic]] = {}
    ports: dict[str, dict[str, Port]] = {}
    switch_meta: dict[str, tuple[str | None, int | None]] = {}
    view = IbView()
    for lk in ibnetdiscover.links(topology):
        ends = ((lk.a_id, lk.a_port), (lk.b_id, lk.b_port))
        named = []
        for node_id, port in ends:
            name, port_name = end(node_id, port)
            named.append(Endpoint(name, port_name))
            info = ib_port(node_id, port, lk.width, lk.speed)
            if node_id in switch_ids:
                ports.setdefault(name, {})[port_name] = Port(name, port_name, None, lk.rate_mbps, "up", None, ib=info)
                switch_meta.setdefault(name, (info.node_guid, info.lid))
            else:
                nics.setdefault(name, {})[port_name] = Nic(
                    name,
                    port_name,
                    port_name,
                    None,
                    None,
                    speed_mbps=lk.rate_mbps,
                    link_layer="InfiniBand",
                    port_state="ACTIVE",
                    ib=info,
                )
        view.links.append(Link(named[0], named[1], DISCOVERED))
    for node in topology.nodes:  # a switch with no cable still is one
        if node.kind != "ca":
            name = ibnetdiscover.node_name(node.kind, node.description) or node.id
            ports.setdefault(name, {})
            switch_meta.setdefault(name, (_guid(node.guid), node.lid))
    view.hosts = {name: Host(name, by_dev) for name, by_dev in sorted(nics.items())}
    view.switches = {
        name: Switch(name, "ib", source, p, guid=switch_meta.get(name, (None, None))[0], lid=switch_meta[name][1])
        for name, p in sorted(ports.items())
    }
    return view


def merge_hosts(hosts: dict[str, Host], ib_hosts: dict[str, Host]) -> None:
    """Add IB-only hosts, and IB NICs to hosts collected from ``hosts/``: a NIC the host already has (same RDMA
    device) keeps its own facts and gains the fabric's IB port record; a missing one is added."""
    for name, ib_host in ib_hosts.items():
        known = hosts.get(name)
        if known is None:
            hosts[name] = ib_host
            continue
        by_dev = {nic.rdma_dev: key for key, nic in known.nics.items()}
        merged = dict(known.nics)
        for key, nic in ib_host.nics.items():
            have = by_dev.get(nic.rdma_dev)
            if have is not None:
                own = merged[have]
                merged[have] = replace(
                    own,
                    ib=_merge_port(nic.ib, own.ib),
                    speed_mbps=own.speed_mbps if own.speed_mbps is not None else nic.speed_mbps,
                )
            elif key not in merged:
                merged[key] = nic
        if merged != known.nics:
            hosts[name] = replace(known, nics=merged)


def _merge_port(fabric_view: IbPort | None, own: IbPort | None) -> IbPort | None:
    """The fabric's record of a port completed by the host's own (``ibstat``): the host's values win."""
    if fabric_view is None or own is None:
        return own or fabric_view
    values: dict[str, Any] = {}
    for name in IbPort.__slots__:
        mine, theirs = getattr(own, name), getattr(fabric_view, name)
        if name == "counters":
            values[name] = {**theirs, **mine}
        elif name in ("saturated", "sources"):
            values[name] = theirs | mine
        else:
            values[name] = mine if mine is not None else theirs
    return IbPort(**values)


@dataclass(frozen=True, slots=True)
class LidIndex:
    """Where a (LID, port) of the PMA tools is in the model, and where a port GUID is."""

    by_lid: dict[int, tuple[str, str]]  # LID -> ("switch", name) | ("nic", "host\x00netdev-key")
    by_guid: dict[str, tuple[str, str]]


def lid_index(hosts: dict[str, Host], switches: dict[str, Switch]) -> LidIndex:
    by_lid: dict[int, tuple[str, str]] = {}
    by_guid: dict[str, tuple[str, str]] = {}
    for sw in switches.values():
        if sw.lid is not None:
            by_lid.setdefault(sw.lid, ("switch", sw.name))
        if sw.guid is not None:
            by_guid.setdefault(sw.guid, ("switch", sw.name))
    for host in hosts.values():
        for key, nic in host.nics.items():
            if nic.ib is None:
                continue
            if nic.ib.lid is not None:
                by_lid.setdefault(nic.ib.lid, ("nic", f"{host.name}\x00{key}"))
            for guid in (nic.ib.port_guid, nic.ib.node_guid):
                if guid is not None:
                    by_guid.setdefault(guid, ("nic", f"{host.name}\x00{key}"))
    return LidIndex(by_lid, by_guid)


def apply_counters(
    hosts: dict[str, Host],
    switches: dict[str, Switch],
    where: tuple[str, str],
    port: int,
    counters: dict[str, int],
    saturated: frozenset[str],
    source: str,
) -> bool:
    """Put one port's PMA counters on the NIC or switch port ``where`` (from :class:`LidIndex`); ``False`` when the
    port is not in the model. A switch port the topology did not list (uncabled) is added with the counters."""
    kind, ref = where
    if kind == "switch":
        sw = switches.get(ref)
        if sw is None:
            return False
        name = str(port)
        known = sw.ports.get(name)
        base = known.ib if known is not None and known.ib is not None else IbPort(sw.guid, sw.guid, sw.lid, port)
        info = _with_counters(base, counters, saturated, source)
        new = replace(known, ib=info) if known is not None else Port(sw.name, name, None, None, None, None, ib=info)
        switches[ref] = replace(sw, ports={**sw.ports, name: new})
        return True
    host_name, _, key = ref.partition("\x00")
    host = hosts.get(host_name)
    nic = host.nics.get(key) if host is not None else None
    if host is None or nic is None or nic.ib is None:
        return False
    hosts[host_name] = replace(
        host, nics={**host.nics, key: replace(nic, ib=_with_counters(nic.ib, counters, saturated, source))}
    )
    return True


def _with_counters(info: IbPort, counters: dict[str, int], saturated: frozenset[str], source: str) -> IbPort:
    return replace(
        info,
        counters={**info.counters, **counters},
        saturated=frozenset(info.saturated - counters.keys()) | saturated,
        sources=info.sources | {source},
    )


def sm_record(sm_lid: int, sm_guid: int, priority: int, state: int, activity: int, source: str) -> IbSm:
    """An :class:`IbSm` from the values ``sminfo`` prints."""
    return IbSm(guid_text(sm_guid), sm_lid, priority, _SM_ROLES.get(state, f"state {state}"), activity, source)


def ib_fabric(
    sms: list[IbSm],
    sm_collected: bool,
    intent_sl: int | None,
    files: list[str],
    planned: dict[str, tuple[str, str]] | None = None,
) -> IbFabric:
    """The subnet record: the SMs (one per GUID; a master reading wins over another state of the same SM)."""
    by_guid: dict[str, IbSm] = {}
    for sm in sms:
        known = by_guid.get(sm.guid)
        if known is None or (sm.state == "master" and known.state != "master"):
            by_guid[sm.guid] = sm
    return IbFabric(
        tuple(by_guid[g] for g in sorted(by_guid)), sm_collected, intent_sl, tuple(sorted(files)), dict(planned or {})
    )


def planned_rates(
    topology: IbTopology,
    guid_names: dict[str, tuple[str, str]] | None = None,
    sa_names: dict[str, tuple[str, str]] | None = None,
) -> dict[str, tuple[str, str]]:
    """Link id -> (width, speed) of every cable of an intended topology whose port lines carry a rate; the ends are
    named as :func:`ib_view` names the discovered ones, so the ids meet."""
    view = ib_view(topology, PLAN_IB_FILE, guid_names, sa_names)
    out: dict[str, tuple[str, str]] = {}
    for link, cable in zip(view.links, ibnetdiscover.links(topology), strict=True):
        if cable.width is not None and cable.speed is not None:
            out[link.id] = (f"{cable.width}X", cable.speed.upper())
    return out


def load_ib(root: SourcePath, fabric: Fabric, problems: Problems) -> list[Link]:
    """Every ``ib/`` file of a bundle (and the hosts' ``ibstat``) into ``fabric``; the discovered IB cables.

    Called after the hosts and switches directories were read; without ``ib/`` files it changes nothing.
    """
    ib_dir = root / layout.IB_DIR
    if not ib_dir.is_dir():
        return []
    files: list[str] = []
    guid_names = _host_guids(root, fabric, problems)
    sa_by_guid, sa_files = _load_saquery(root, problems)
    files.extend(sa_files)
    links: list[Link] = []
    topo_file = root / IB_FILE
    if topo_file.is_file():
        files.append(IB_FILE)
        topology = problems.parse_file(topo_file, ibnetdiscover.parse)
        if topology is not None:
            view = ib_view(topology, problems.rel(topo_file), guid_names, sa_by_guid)
            merge_hosts(fabric.hosts, view.hosts)
            for name, switch in view.switches.items():
                fabric.switches.setdefault(name, switch)
            links = view.links
    files.extend(_load_linkinfo(root, fabric, problems))
    files.extend(_load_counters(root, fabric, problems))
    files.extend(_load_queryerrors(root, fabric, problems))
    sms, sm_files = _load_sms(root, problems)
    files.extend(sm_files)
    planned: dict[str, tuple[str, str]] = {}
    plan_file = root / PLAN_IB_FILE
    if plan_file.is_file():
        files.append(PLAN_IB_FILE)
        intended = problems.parse_file(plan_file, ibnetdiscover.parse)
        if intended is not None:
            planned = planned_rates(intended, guid_names, sa_by_guid)
    if files or sms:
        fabric.ib = ib_fabric(sms, bool(sm_files), _intent_sl(root), files, planned)
    return links


def _host_guids(root: SourcePath, fabric: Fabric, problems: Problems) -> dict[str, tuple[str, str]]:
    """Each host's ``cmd/ibstat.txt``: its IB CAs get an :class:`IbPort` (GUIDs, LID, SM LID, states; a CA the host
    did not list otherwise is added; a LID or SM LID its sysfs gave stays), and their node GUIDs name the CAs of
    ibnetdiscover (node GUID -> host, dev)."""
    from unifab.parse.ib import ibstat

    names: dict[str, tuple[str, str]] = {}
    hosts_dir = root / layout.HOSTS
    if not hosts_dir.is_dir():
        return names
    for host_dir in sorted(p for p in hosts_dir.iterdir() if p.is_dir()):
        path = host_dir / IBSTAT_FILE
        if not path.is_file():
            continue
        capture = problems.parse_file_partial(path, ibstat.parse, device=host_dir.name, not_checked="IB-DUPLICATE")
        host = fabric.hosts.get(host_dir.name)
        if capture is None or host is None:
            continue
        rel = problems.rel(path)
        nics = dict(host.nics)
        by_dev = {nic.rdma_dev: key for key, nic in nics.items()}
        for ca in capture.cas:
            port = next((p for p in ca.ports if p.port == 1), ca.ports[0] if ca.ports else None)
            if port is None or not port.is_infiniband:
                continue
            node_guid = guid_text(ca.node_guid) if ca.node_guid is not None else None
            info = IbPort(
                node_guid=node_guid,
                port_guid=guid_text(port.port_guid) if port.port_guid is not None else None,
                lid=port.base_lid or None,
                port_num=port.port,
                width=port.width,
                speed=port.speed,
                state=port.state,
                phys_state=port.physical_state,
                sm_lid=port.sm_lid,
                sources=frozenset({rel}),
            )
            key = by_dev.get(ca.name, ca.name)
            known = nics.get(key)
            state = (port.state or "").upper()
            if known is None:
                nics[key] = Nic(
                    host.name, key, ca.name, None, None, link_layer="InfiniBand", port_state=state or None, ib=info
                )
            else:
                # the host's own files (sysfs ports/1/{lid,sm_lid}) win over ibstat, as its link layer does
                nics[key] = replace(known, ib=_merge_port(info, known.ib), link_layer=known.link_layer or "InfiniBand")
            if node_guid is not None:
                names.setdefault(node_guid, (host.name, key))
        fabric.hosts[host.name] = replace(host, nics=nics)
    return names


def sa_ca_names(records: Iterable[SaNodeRecord]) -> dict[str, tuple[str, str]]:
    """Node GUID (:func:`guid_text`) -> (host, RDMA device) of every CA NodeRecord whose NodeDescription names
    them (``dgx-001 mlx5_0``); the first record of a GUID wins (a duplicated GUID is IB-DUPLICATE's)."""
    out: dict[str, tuple[str, str]] = {}
    for record in records:
        if record.kind == "ca" and (named := ca_name(record.description)) is not None:
            out.setdefault(guid_text(record.node_guid), named)
    return out


def _sa_node_records(text: str, source: str, problems: ParseProblems) -> tuple[SaNodeRecord, ...]:
    return saquery.parse(text, source, problems).node_records(problems)


def _load_saquery(root: SourcePath, problems: Problems) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """``ib/saquery.txt``: the CAs' names by node GUID (:func:`sa_ca_names`); a malformed record costs itself."""
    path = root / SAQUERY_FILE
    if not path.is_file():
        return {}, []
    records = problems.parse_file_partial(path, _sa_node_records)
    return sa_ca_names(records or ()), [SAQUERY_FILE]


def _load_linkinfo(root: SourcePath, fabric: Fabric, problems: Problems) -> list[str]:
    """``ib/iblinkinfo.txt``: each port's width, speed and states on its IB port record; a switch port that is
    dark (``Down``/``Polling``, absent from ibnetdiscover) is added with its state."""
    from unifab.parse.ib import iblinkinfo

    path = root / IBLINKINFO_FILE
    if not path.is_file():
        return []
    capture = problems.parse_file_partial(path, iblinkinfo.parse, not_checked="TOPO-DEGRADED")
    if capture is None:
        return [IBLINKINFO_FILE]
    rel = problems.rel(path)
    index = lid_index(fabric.hosts, fabric.switches)
    for lp in capture.ports:
        where: tuple[str, str] | None = None
        if lp.node_kind != "ca":
            name = ibnetdiscover.node_name("switch", lp.node_description)
            if lp.node_guid is not None:
                where = index.by_guid.get(guid_text(lp.node_guid))
            if where is None and name is not None and name in fabric.switches:
                where = ("switch", name)
        else:  # a CA by its NodeDescription first: GUIDs and LIDs may be duplicated (IB-DUPLICATE)
            host = ibnetdiscover.node_name("ca", lp.node_description)
            dev = ibnetdiscover.ca_device(lp.node_description)
            if host in fabric.hosts and dev in fabric.hosts[host].nics:
                where = ("nic", f"{host}\x00{dev}")
        if where is None and lp.port_guid is not None:
            where = index.by_guid.get(guid_text(lp.port_guid))
        if where is None:
            where = index.by_lid.get(lp.lid)
        if where is None:
            continue
        _apply_linkinfo(fabric, where, lp.port, lp.width, lp.speed, lp.state, lp.phys_state, lp.lid, rel)
    return [IBLINKINFO_FILE]


def _apply_linkinfo(
    fabric: Fabric,
    where: tuple[str, str],
    port: int,
    width: str | None,
    speed: str | None,
    state: str,
    phys: str,
    lid: int,
    rel: str,
) -> None:
    kind, ref = where
    values: dict[str, Any] = {"state": state, "phys_state": phys, "lid": lid or None}
    if width is not None and speed is not None:
        values |= {"width": width, "speed": speed}
    if kind == "switch":
        sw = fabric.switches[ref]
        name = str(port)
        known = sw.ports.get(name)
        base = known.ib if known is not None and known.ib is not None else IbPort(sw.guid, sw.guid, sw.lid, port)
        info = replace(base, **{k: v for k, v in values.items() if v is not None}, sources=base.sources | {rel})
        if known is not None:
            new = replace(known, ib=info)
        else:
            new = Port(sw.name, name, None, None, "up" if state == "Active" else "down", None, ib=info)
        fabric.switches[ref] = replace(sw, ports={**sw.ports, name: new})
        return
    host_name, _, key = ref.partition("\x00")
    host = fabric.hosts[host_name]
    nic = host.nics[key]
    if nic.ib is None:
        return
    info = replace(nic.ib, **{k: v for k, v in values.items() if v is not None}, sources=nic.ib.sources | {rel})
    fabric.hosts[host_name] = replace(host, nics={**host.nics, key: replace(nic, ib=info)})


def _load_queryerrors(root: SourcePath, fabric: Fabric, problems: Problems) -> list[str]:
    """``ib/ibqueryerrors.txt``: the counters beyond threshold, by port GUID (a switch's by its node GUID) and port."""
    from unifab.parse.ib import ibqueryerrors
    from unifab.parse.ib.perfquery import COUNTER_BITS

    path = root / IBQUERYERRORS_FILE
    if not path.is_file():
        return []
    capture = problems.parse_file_partial(path, ibqueryerrors.parse, not_checked="IB-COUNTERS")
    if capture is None:
        return [IBQUERYERRORS_FILE]
    index = lid_index(fabric.hosts, fabric.switches)
    for node in capture.nodes:
        for ep in node.ports:
            guid = guid_text(node.guid if node.is_switch and node.guid is not None else ep.guid)
            where = index.by_guid.get(guid) or index.by_guid.get(guid_text(ep.guid))
            if where is None or (where[0] == "switch" and ep.port is None):
                continue  # a port of a node the topology lacks, or the switch's "port ALL" aggregate
            saturated = frozenset(
                n for n, v in ep.counters.items() if n in COUNTER_BITS and v >= (1 << COUNTER_BITS[n]) - 1
            )
            apply_counters(
                fabric.hosts, fabric.switches, where, ep.port or 1, ep.counters, saturated, IBQUERYERRORS_FILE
            )
    return [IBQUERYERRORS_FILE]


def snapshot_time(name: str) -> float | None:
    """``1764547200.txt`` -> 1764547200.0 (the unix time a perfquery snapshot was taken); ``None`` otherwise."""
    m = _SNAPSHOT_NAME.match(name)
    return float(m.group(1)) if m is not None else None


def _newest_snapshot(root: SourcePath) -> SourcePath | None:
    directory = root / SNAPSHOT_DIR
    if not directory.is_dir():
        return None
    timed = [(t, p) for p in directory.iterdir() if p.is_file() and (t := snapshot_time(p.name)) is not None]
    return max(timed, key=lambda tp: tp[0])[1] if timed else None


def _load_counters(root: SourcePath, fabric: Fabric, problems: Problems) -> list[str]:
    """``ib/perfquery.txt`` (else the newest ``ib/perfquery/<t>.txt``): each block's counters on the port its LID
    and port number name."""
    from unifab.parse.ib import perfquery

    path: SourcePath | None = root / PERFQUERY_FILE
    if not (root / PERFQUERY_FILE).is_file():
        path = _newest_snapshot(root)
    if path is None:
        return []
    rel = problems.rel(path)
    capture = problems.parse_file_partial(path, perfquery.parse, not_checked="IB-COUNTERS")
    if capture is None:
        return [rel]
    index = lid_index(fabric.hosts, fabric.switches)
    unknown: list[str] = []
    for block in capture.blocks:
        if block.all_ports:
            continue  # the AllPortSelect aggregate names no port
        where = index.by_lid.get(block.lid)
        saturated = frozenset(n for n in block.counters if block.saturated(n))
        if where is None or not apply_counters(
            fabric.hosts, fabric.switches, where, block.port, block.counters, saturated, rel
        ):
            unknown.append(f"lid {block.lid} port {block.port} (line {block.line})")
    if unknown:
        problems.unreadable(
            path,
            f"{len(unknown)} counter block(s) name a LID the fabric's ibnetdiscover does not have: "
            + ", ".join(unknown[:5])
            + (" ..." if len(unknown) > 5 else ""),
        )
    return [rel]


def _load_sms(root: SourcePath, problems: Problems) -> tuple[list[IbSm], list[str]]:
    """``ib/sminfo.txt`` and ``ib/sminfo/*.txt``: one SM reading each."""
    from unifab.parse.ib import sminfo

    paths = [root / SMINFO_FILE] if (root / SMINFO_FILE).is_file() else []
    sm_dir = root / SMINFO_DIR
    if sm_dir.is_dir():
        paths.extend(sorted(p for p in sm_dir.iterdir() if p.is_file() and p.name.endswith(".txt")))

    def reading(text: str, source: str) -> sminfo.SmInfo | None:
        """The SM's SMInfo, or ``None`` when the file is sminfo saying no SM answered: a reading, not a bad file
        (IB-SM then judges the subnet without that SM)."""
        return None if sminfo.no_answer(text) else sminfo.parse(text, source)

    sms: list[IbSm] = []
    for path in paths:
        info = problems.parse_file(path, reading)
        if info is not None:
            rel = problems.rel(path)
            sms.append(sm_record(info.sm_lid, info.sm_guid, info.priority, info.state, info.activity_count, rel))
    return sms, [problems.rel(p) for p in paths]


def _intent_sl(root: SourcePath) -> int | None:
    """``qos.nccl.sl`` of the bundle's ``fabric.yaml`` (its problems are reported where the bundle reads it)."""
    from unifab.errors import IntentError
    from unifab.intent import parse_intent

    path = root / layout.INTENT
    if not path.is_file():
        return None
    try:
        intent = parse_intent(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, IntentError):
        return None
    sl = (intent.base.get("nccl") or {}).get("sl")
    return sl if isinstance(sl, int) else None
