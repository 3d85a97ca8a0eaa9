"""One host's directory of a bundle (``hosts/<host>/``) → :class:`Host` and the links its LLDP saw.

The same relative paths are read from ``/`` on a live host (see the host agent).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from unifab.errors import ParseError
from unifab.model import Endpoint, EtsClass, Host, Link, Nic, NicQos
from unifab.parse.host import ibdev2netdev, lldpcli, mlnx_qos, sysfs_ecn, traffic_class

if TYPE_CHECKING:
    from unifab.collect.bundle import Problems


def _read_tree(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in sorted(path.rglob("*")) if p.is_file()}


def load_host(host_dir: Path, problems: Problems) -> tuple[Host, list[Link]]:
    name = host_dir.name
    cmd = host_dir / "cmd"
    sys_net = host_dir / "sys" / "class" / "net"
    rdma_of: dict[str, str] = {}
    ibdev_file = cmd / "ibdev2netdev.txt"
    if ibdev_file.is_file():
        rows = problems.parse_file(ibdev_file, ibdev2netdev.parse, device=name) or ()
        rdma_of = {r.netdev: r.rdma_dev for r in rows}
    qos_dir = cmd / "mlnx_qos"
    qos_files = {p.stem: p for p in qos_dir.glob("*.txt")} if qos_dir.is_dir() else {}
    nics: dict[str, Nic] = {}
    for netdev in sorted(set(rdma_of) | set(qos_files)):
        rdma = rdma_of.get(netdev)
        qos_path = qos_files.get(netdev, qos_dir / f"{netdev}.txt")
        if netdev not in qos_files:
            problems.missing(qos_path, f"RDMA NIC {netdev} has no mlnx_qos output", device=name)
        nics[netdev] = Nic(
            host=name,
            netdev=netdev,
            rdma_dev=rdma,
            mtu=_read_mtu(sys_net / netdev / "mtu", problems, name),
            qos=_nic_qos(host_dir, netdev, rdma, qos_path, problems) if netdev in qos_files else None,
        )
    links: list[Link] = []
    lldp_file = cmd / "lldpcli.json"
    if lldp_file.is_file():
        for nb in problems.parse_file(lldp_file, lldpcli.parse, device=name) or ():
            remote_port = nb.port_id if nb.port_id_type in ("ifname", "local") else nb.port_descr
            if nb.system_name and remote_port:
                links.append(
                    Link(
                        Endpoint(name, nb.local_port),
                        Endpoint(nb.system_name, remote_port),
                        frozenset({"lldp"}),
                    )
                )
    return Host(name, nics), links


def _read_mtu(path: Path, problems: Problems, device: str) -> int | None:
    if not path.is_file():
        return None

    def parse_mtu(text: str, source: str) -> int:
        try:
            return int(text.strip())
        except ValueError:
            raise ParseError(source, f"expected an MTU in bytes, got {text.strip()!r}", line=1) from None

    return problems.parse_file(path, parse_mtu, device=device)


def _nic_qos(host_dir: Path, netdev: str, rdma: str | None, qos_path: Path, problems: Problems) -> NicQos | None:
    device = host_dir.name
    qos = problems.parse_file(qos_path, mlnx_qos.parse, device=device)
    if qos is None:
        return None
    ecn_dir = host_dir / "sys" / "class" / "net" / netdev / "ecn"
    ecn: sysfs_ecn.SysfsEcn | None = None
    if ecn_dir.is_dir():
        try:
            ecn = sysfs_ecn.parse_tree(_read_tree(ecn_dir), problems.rel(ecn_dir))
        except ParseError as exc:
            problems.unreadable(ecn_dir, exc.expected, line=exc.line, device=device)
        except (OSError, UnicodeDecodeError) as exc:
            problems.unreadable(ecn_dir, f"cannot read: {exc}", device=device)
    tclass: traffic_class.TrafficClass | None = None
    if rdma is not None:
        tc_file = host_dir / "sys" / "class" / "infiniband" / rdma / "tc" / "1" / "traffic_class"
        if tc_file.is_file():
            tclass = problems.parse_file(tc_file, traffic_class.parse, device=device)
    np = ecn.roce_np if ecn else None
    rp = ecn.roce_rp if ecn else None
    return NicQos(
        trust=qos.trust,
        dscp2prio=qos.dscp2prio,
        pfc_enabled=frozenset(qos.pfc_enabled),
        prio_tc=qos.prio_tc,
        cable_len_m=qos.cable_len,
        ecn_np_enabled=np.enabled if np else None,
        ecn_rp_enabled=rp.enabled if rp else None,
        cnp_dscp=np.params.get("cnp_dscp") if np else None,
        cnp_prio=np.params.get("cnp_802p_prio") if np else None,
        traffic_class=tclass.global_tclass if tclass else None,
        ets=tuple(EtsClass(t.tc, t.tsa, t.bw) for t in qos.tcs),
        rx_buffer_sizes=qos.buffers.sizes if qos.buffers else None,
        prio2buffer=qos.buffers.prio2buffer if qos.buffers else None,
    )
