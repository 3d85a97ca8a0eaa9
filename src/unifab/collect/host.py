"""One host's directory of a bundle (``hosts/<host>/``) → :class:`Host` and the links its LLDP saw.

The same relative paths are read from ``/`` on a live host; :mod:`unifab.collect.host_live` writes them.
Every file is optional: what is absent leaves its fields ``None`` (or empty); a file that exists but does
not parse becomes ``INPUT-UNREADABLE`` naming the file and line. Files read, relative to the host directory:

================================================  =================================================================
``collect.json``                                   what live collection could not gather -> one ``INPUT-MISSING`` each
``cmd/ibdev2netdev.txt``                           RDMA device <-> netdev (else the ``sys/class/infiniband/<dev>/
                                                   device/net/<netdev>/`` directory, ``gid_attrs/ndevs/0``, show_gids)
``cmd/mlnx_qos/<netdev>.txt``                      mlx5 QoS (+ ``sys/class/net/<netdev>/ecn/``, or upstream debugfs
                                                   ``sys/kernel/debug/mlx5/<bdf>/cc_params/`` for the CNP DSCP/PCP)
``cmd/bnxt-qos/<netdev>.txt``                      Broadcom QoS (+ ``sys/kernel/config/bnxt_re/<dev>/ports/1/cc/``)
``cmd/show_gids.txt``                              GIDs
``cmd/ibv_devinfo.txt``                            fw_ver, vendor_part_id, board_id, link layer, state, active MTU
``cmd/ethtool-S/<netdev>.txt``                     counters ``ethtool:<name>``
``cmd/ethtool-a/<netdev>.txt``                     802.3x global pause (``ethtool -a``)
``cmd/ethtool-m/<netdev>.txt``                     the transceiver
``cmd/ip-d-link.txt``                               every netdev's ``maxmtu``, operstate, carrier (``ip -d link``)
``cmd/rdma-statistic.txt``                         counters ``rdma:<name>`` the sysfs tree lacks
``cmd/lspci-vvv.txt``                              PCIe link of NICs and GPUs, NUMA node, driver, ACS on bridges
``cmd/lsmod.txt``                                  loaded kernel modules (``lsmod`` or ``/proc/modules``)
``cmd/nvidia-smi-q.xml``                           GPU identity, PCIe link, driver and CUDA versions
``cmd/nvidia-smi-topo-m.txt``                      GPU NUMA node and closest NIC
``cmd/nccl-topo.xml``                              GPU and NIC PCI addresses, NUMA nodes, closest NIC (fallback)
``cmd/dmesg.txt``                                  Xid events per GPU
``cmd/uname-r.txt``                                kernel release
``cmd/lldpcli.json``                               links seen by LLDP
``sys/class/net/<netdev>/mtu``                     netdev MTU
``sys/class/infiniband/<dev>/``                    fw_ver, board_id, ``ports/1/{state,rate,link_layer}``,
                                                   ``ports/1/{lid,sm_lid}`` (an IB port's ``Nic.ib``, over ibstat's;
                                                   ``0x0`` is none; ``lid_mask_count``, ``sm_sl`` only validated),
                                                   ``ports/1/hw_counters/*`` (``rdma:``), ``ports/1/counters/*``
                                                   (``ib:``), ``ports/1/gid_attrs/ndevs/0``, ``tc/1/traffic_class``,
                                                   ``device/uevent`` (PCI address, driver), ``device/numa_node``
``sys/kernel/config/rdma_cm/<dev>/ports/1/``       ``default_roce_tos``, ``default_roce_mode``
``sys/module/<driver>/version``                    NIC and GPU driver versions (vendor drivers set it)
================================================  =================================================================

When sources overlap the order is: sysfs, then command output, then NCCL's topology (see each field). The small
pure readers at the end read the one-value sysfs files (``mtu``, ``numa_node``, ``uevent``, ``ndevs/0``, ``version``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import astuple, dataclass, field
from typing import TYPE_CHECKING, TypeVar

import orjson

from unifab.collect.shared_parts import share_host_parts
from unifab.errors import ParseError
from unifab.model import (
    Endpoint,
    EtsClass,
    Gid,
    Gpu,
    Host,
    IbPort,
    Link,
    Nic,
    NicQos,
    PcieLink,
    Transceiver,
    TransceiverLane,
)
from unifab.parse.host import (
    bnxt_qos,
    cc_params,
    ethtool_module,
    ethtool_pause,
    ethtool_stats,
    hw_counters,
    ibdev2netdev,
    ibv_devinfo,
    ip_link,
    lldpcli,
    lsmod,
    lspci,
    mlnx_qos,
    nccl_topo,
    nvidia_smi_q,
    nvidia_smi_topo,
    rdma_statistic,
    roce_tos,
    show_gids,
    sysfs_ecn,
    traffic_class,
    xid,
)
from unifab.sources import SourcePath

if TYPE_CHECKING:
    from unifab.collect.problems import Problems
from unifab.layout import (
    BNXT_QOS_DIR,
    BNXT_RE,
    COLLECT_JSON,
    DMESG,
    ETHTOOL_A_DIR,
    ETHTOOL_M_DIR,
    ETHTOOL_S_DIR,
    GPU_DRIVER,
    IBDEV2NETDEV,
    IBV_DEVINFO,
    IP_LINK,
    LLDPCLI,
    LSMOD,
    LSPCI,
    MLNX_QOS_DIR,
    MLX5_DEBUGFS,
    NCCL_TOPO,
    NVIDIA_SMI_Q,
    NVIDIA_SMI_TOPO,
    PORT,
    RDMA_CM,
    RDMA_STATISTIC,
    SHOW_GIDS,
    SYS_IB,
    SYS_MODULE,
    SYS_NET,
    UNAME,
)

__all__ = [
    "PCIE_GEN_GTS",
    "RELATION_RANK",
    "CollectRecord",
    "T",
    "load_host",
    "parse_collect_json",
    "parse_mtu",
    "parse_numa_node",
    "parse_uevent",
    "parse_word",
]

T = TypeVar("T")

# nvidia-smi topo -m relations, closest first (SOC is the old spelling of SYS)
RELATION_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4, "SOC": 4}
PCIE_GEN_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0, 7: 128.0}


def load_host(host_dir: SourcePath, problems: Problems) -> tuple[Host, list[Link]]:
    reader = _HostReader(host_dir, problems)
    return share_host_parts(reader.host()), reader.links()


@dataclass(slots=True)
class _RdmaDev:
    """What the sysfs tree and ibv_devinfo say about one RDMA device (port 1)."""

    name: str
    sysfs: hw_counters.IbDevice | None = None
    ibv: ibv_devinfo.IbvDevice | None = None
    netdev: str | None = None  # from device/net/<netdev>/, else gid_attrs/ndevs/0
    uevent: dict[str, str] = field(default_factory=dict)
    numa_node: int | None = None

    def sysfs_port(self) -> hw_counters.IbPort | None:
        return next((p for p in self.sysfs.ports if p.port == PORT), None) if self.sysfs else None

    def ibv_port(self) -> ibv_devinfo.IbvPort | None:
        return next((p for p in self.ibv.ports if p.port == PORT), None) if self.ibv else None

    def link_layer(self) -> str | None:
        sp, ip = self.sysfs_port(), self.ibv_port()
        return (sp.link_layer if sp else None) or (ip.link_layer if ip else None)

    def driver(self) -> str | None:
        return self.uevent.get("DRIVER")


class _HostReader:
    def __init__(self, host_dir: SourcePath, problems: Problems) -> None:
        self.dir = host_dir
        self.name = host_dir.name
        self.problems = problems
        self.reported: set[str] = set()  # bundle-relative paths already named INPUT-MISSING
        record = self.parse(COLLECT_JSON, parse_collect_json)
        for rel, reason in record.missing if record else ():
            self.missing(rel, reason)
        if record and record.failed:  # the agent's last collect failed: what is here is an earlier collect's
            self.problems.stale(self.dir / COLLECT_JSON, self.name, *record.failed, kind="host")
        self.lspci = self.parse(LSPCI, lspci.parse)
        self.pci = self.lspci.by_bdf() if self.lspci else {}
        self.nccl = self.parse(NCCL_TOPO, nccl_topo.parse)
        self.smi_q = self.parse(NVIDIA_SMI_Q, nvidia_smi_q.parse)
        self.ip_links = self.parse(IP_LINK, ip_link.link_facts) or {}

    # --- generic reading ----------------------------------------------------------------------------

    def path(self, rel: str) -> SourcePath:
        return self.dir / rel

    def parse(self, rel: str | SourcePath, parser: Callable[[str, str], T]) -> T | None:
        path = rel if isinstance(rel, SourcePath) else self.dir / rel  # a partial parser's skips: INPUT-PARTIAL
        return self.problems.parse_file(path, parser, device=self.name) if path.is_file() else None

    def parse_tree(
        self, base: SourcePath, files: Iterable[SourcePath], parser: Callable[[Mapping[str, str], str], T]
    ) -> T | None:
        """Read ``files`` (under ``base``) and hand ``{path relative to base: text}`` to a tree parser."""
        return self.problems.parse_tree(base, files, parser, device=self.name)

    def missing(self, rel: str, why: str) -> None:
        path = self.dir / rel
        key = self.problems.rel(path)
        if key not in self.reported:
            self.reported.add(key)
            self.problems.missing(path, why, device=self.name)

    # --- the host -----------------------------------------------------------------------------------

    def links(self) -> list[Link]:
        links: list[Link] = []
        for nb in self.parse(LLDPCLI, lldpcli.parse) or ():
            remote_port = nb.port_id if nb.port_id_type in ("ifname", "local") else nb.port_descr
            if nb.system_name and remote_port:
                links.append(
                    Link(Endpoint(self.name, nb.local_port), Endpoint(nb.system_name, remote_port), frozenset({"lldp"}))
                )
        return links

    def host(self) -> Host:
        nics = self._nics()
        gpus = self._gpus()
        gpu_driver = self.smi_q.driver_version if self.smi_q else None
        if gpu_driver is None:
            gpu_driver = self.parse(f"{SYS_MODULE}/{GPU_DRIVER}/version", parse_word)
        return Host(
            self.name,
            nics,
            gpus=gpus,
            kernel=self.parse(UNAME, parse_word),
            gpu_driver=gpu_driver,
            cuda_version=self.smi_q.cuda_version if self.smi_q else None,
            acs_enabled_bridges=_acs_bridges(self.lspci) if self.lspci else None,
            acs_redirect=self.lspci.acs_redirect() if self.lspci else None,
            pci_parents={d.bdf: d.parent for d in self.lspci.devices if d.parent} if self.lspci else {},
            kernel_modules=modules.names() if (modules := self.parse(LSMOD, lsmod.parse)) is not None else None,
            nvlink_domain=d[0] if self.smi_q and len(d := self.smi_q.nvlink_domains) == 1 else None,
        )

    # --- NICs ---------------------------------------------------------------------------------------

    def _rdma_devices(self) -> dict[str, _RdmaDev]:
        devs: dict[str, _RdmaDev] = {}
        ib_root = self.path(SYS_IB)
        if ib_root.is_dir():
            for dev_dir in sorted(p for p in ib_root.iterdir() if p.is_dir()):
                dev = devs.setdefault(dev_dir.name, _RdmaDev(dev_dir.name))
                dev.sysfs = self._sysfs_device(dev_dir)
                ndev = dev_dir / "ports" / str(PORT) / "gid_attrs" / "ndevs" / "0"
                net = dev_dir / "device" / "net"
                linked = sorted(p.name for p in net.iterdir() if p.is_dir()) if net.is_dir() else []
                gid_netdev = self.parse(ndev, parse_word)
                dev.netdev = gid_netdev if gid_netdev in linked or not linked else linked[0]
                dev.uevent = self.parse(dev_dir / "device" / "uevent", parse_uevent) or {}
                dev.numa_node = self.parse(dev_dir / "device" / "numa_node", parse_numa_node)
        for ibv in self.parse(IBV_DEVINFO, ibv_devinfo.parse) or ():
            devs.setdefault(ibv.hca_id, _RdmaDev(ibv.hca_id)).ibv = ibv
        return devs

    def _sysfs_device(self, dev_dir: SourcePath) -> hw_counters.IbDevice | None:
        files = [dev_dir / name for name in hw_counters.DEVICE_STRINGS if (dev_dir / name).is_file()]
        ports = dev_dir / "ports"
        if ports.is_dir():
            for port in ports.iterdir():
                names = (*hw_counters.PORT_STRINGS, *hw_counters.PORT_NUMBERS)
                files += [port / name for name in names if (port / name).is_file()]
                for group in ("hw_counters", "counters"):
                    if (port / group).is_dir():
                        files += [p for p in (port / group).iterdir() if p.is_file()]
        record = self.parse_tree(dev_dir, files, hw_counters.parse_tree)
        return record.devices[0] if record and record.devices else None

    def _nics(self) -> dict[str, Nic]:
        devs = self._rdma_devices()
        rdma_of: dict[str, str] = {}
        for row in self.parse(IBDEV2NETDEV, ibdev2netdev.parse) or ():
            if row.port == PORT:
                rdma_of.setdefault(row.netdev, row.rdma_dev)
                devs.setdefault(row.rdma_dev, _RdmaDev(row.rdma_dev))
        gids = self.parse(SHOW_GIDS, show_gids.parse) or ()
        mapped = set(rdma_of.values())
        for dev in devs.values():
            if dev.name not in mapped and dev.netdev:
                rdma_of.setdefault(dev.netdev, dev.name)
                mapped.add(dev.name)
        for g in gids:
            if g.port == PORT and g.netdev and g.dev not in mapped:
                rdma_of.setdefault(g.netdev, g.dev)
                mapped.add(g.dev)
        qos_files = _stems(self.path(MLNX_QOS_DIR))
        bnxt_files = _stems(self.path(BNXT_QOS_DIR))
        keys = set(rdma_of) | qos_files | bnxt_files
        # an InfiniBand HCA without a netdev is still a NIC: keyed by its RDMA device name
        keys |= {d.name for d in devs.values() if d.name not in mapped and d.link_layer() == "InfiniBand"}
        netdev_of = {rdma: netdev for netdev, rdma in rdma_of.items()}
        statistic = self.parse(RDMA_STATISTIC, rdma_statistic.parse)
        nccl_nics = {n.name: n for n in self.nccl.nics if n.name} if self.nccl else {}
        nics: dict[str, Nic] = {}
        for key in sorted(keys):
            rdma = rdma_of.get(key) or (key if key in devs and key not in netdev_of else None)
            found = devs.get(rdma) if rdma else None
            topo_nic = nccl_nics.get(rdma) if rdma else None
            nics[key] = self._nic(key, found, [g for g in gids if g.dev == rdma], statistic, topo_nic)
        return nics

    def _nic(
        self,
        netdev: str,
        dev: _RdmaDev | None,
        gids: list[show_gids.Gid],
        statistic: rdma_statistic.RdmaStatistic | None,
        topo_nic: nccl_topo.TopoNic | None,
    ) -> Nic:
        rdma = dev.name if dev else None
        sp = dev.sysfs_port() if dev else None
        ip = dev.ibv_port() if dev else None
        ibv = dev.ibv if dev else None
        sysfs = dev.sysfs if dev else None
        bdf = lspci.normalize_bdf(dev.uevent.get("PCI_SLOT_NAME", "")) if dev else None
        bdf = bdf or (topo_nic.busid if topo_nic else None)
        pci = self.pci.get(bdf) if bdf else None
        numa = dev.numa_node if dev else None
        if numa is None:
            numa = pci.numa_node if pci and pci.numa_node is not None else (topo_nic.numa if topo_nic else None)
        driver = (dev.driver() if dev else None) or (pci.kernel_driver if pci else None)
        driver = driver if driver and _NAME.match(driver) else None
        speed = round(sp.rate_gbps * 1000) if sp and sp.rate_gbps is not None else None
        if speed is None and topo_nic is not None:
            speed = topo_nic.speed_mbps
        state = (sp.state if sp else None) or (ip.state.removeprefix("PORT_") if ip else None)
        link_layer = dev.link_layer() if dev else None
        qos = self._qos(netdev, rdma, bdf, driver, link_layer)
        return Nic(
            host=self.name,
            netdev=netdev,
            rdma_dev=rdma,
            mtu=self.parse(f"{SYS_NET}/{netdev}/mtu", parse_mtu),
            qos=qos,
            pci_address=bdf,
            numa_node=numa,
            fw_ver=(ibv.fw_ver if ibv else None) or (sysfs.fw_ver if sysfs else None),
            vendor_part_id=ibv.vendor_part_id if ibv else None,
            board_id=(ibv.board_id if ibv else None) or (sysfs.board_id if sysfs else None),
            link_layer=link_layer,
            port_state=state,
            active_mtu=ip.active_mtu if ip else None,
            speed_mbps=speed,
            gids=tuple(Gid(g.index, g.gid, g.version, g.ipv4, g.netdev, g.port) for g in gids),
            counters=self._counters(netdev, rdma, sp, statistic),
            transceiver=self._transceiver(netdev),
            driver=driver,
            driver_version=self.parse(f"{SYS_MODULE}/{driver}/version", parse_word) if driver else None,
            pcie=_pcie(pci) if pci else None,
            global_pause=self._pause(netdev),
            max_mtu=link.max_mtu if (link := self.ip_links.get(netdev)) else None,
            operstate=link.operstate if link else None,
            carrier=link.carrier if link else None,
            ib=self._ib_port(rdma, sp) if link_layer == "InfiniBand" else None,
        )

    def _ib_port(self, rdma: str | None, port: hw_counters.IbPort | None) -> IbPort | None:
        """An IB HCA port's LID and SM LID from ``ports/1/{lid,sm_lid}`` (0: none assigned); ``ibstat`` and the
        ``ib/`` files complete the record (collect/ib.py), the values here win over ``ibstat``'s."""
        values = {"lid": port.lid or None, "sm_lid": port.sm_lid or None} if port is not None else {}
        if rdma is None or not any(values.values()):
            return None
        base = self.path(f"{SYS_IB}/{rdma}/ports/{PORT}")
        read = frozenset(self.problems.rel(base / name) for name, v in values.items() if v is not None)
        return IbPort(lid=values["lid"], port_num=PORT, sm_lid=values["sm_lid"], sources=read)

    def _pause(self, netdev: str) -> tuple[bool, bool] | None:
        pause = self.parse(f"{ETHTOOL_A_DIR}/{netdev}.txt", ethtool_pause.parse)
        return None if pause is None else (pause.rx, pause.tx)

    def _counters(
        self,
        netdev: str,
        rdma: str | None,
        port: hw_counters.IbPort | None,
        statistic: rdma_statistic.RdmaStatistic | None,
    ) -> dict[str, int]:
        counters: dict[str, int] = {}
        stats = self.parse(f"{ETHTOOL_S_DIR}/{netdev}.txt", ethtool_stats.parse)
        if stats:
            counters.update((f"ethtool:{k}", v) for k, v in ethtool_stats.canonical(stats).items())
        if port:
            counters.update((f"rdma:{k}", v) for k, v in port.hw_counters.items())
        link = statistic.link(rdma, PORT) if statistic and rdma else None
        if link:
            for k, v in link.counters.items():
                counters.setdefault(f"rdma:{k}", v)
        if port:
            counters.update((f"ib:{k}", v) for k, v in port.counters.items())
        return counters

    def _transceiver(self, netdev: str) -> Transceiver | None:
        m = self.parse(f"{ETHTOOL_M_DIR}/{netdev}.txt", ethtool_module.parse)
        if m is None:
            return None
        lanes = tuple(
            TransceiverLane(
                lane.lane,
                rx_power_dbm=lane.rx_power_dbm,
                tx_power_dbm=lane.tx_power_dbm,
                bias_ma=lane.bias_ma,
                rx_power_mw=lane.rx_power_mw,
                tx_power_mw=lane.tx_power_mw,
            )
            for lane in m.lanes
        )
        return Transceiver(
            identifier=m.identifier,
            vendor=m.vendor,
            part_number=m.part_number,
            serial_number=m.serial_number,
            revision=m.vendor_rev,
            temperature_c=m.temperature_c,
            voltage_v=m.voltage_v,
            lanes=lanes,
            module_state=m.module_state,
        )

    # --- NIC QoS ------------------------------------------------------------------------------------

    def _qos(
        self, netdev: str, rdma: str | None, bdf: str | None, driver: str | None, link_layer: str | None
    ) -> NicQos | None:
        mlx = self.path(f"{MLNX_QOS_DIR}/{netdev}.txt")
        bnxt = self.path(f"{BNXT_QOS_DIR}/{netdev}.txt")
        if mlx.is_file():
            return self._mlx5_qos(netdev, rdma, bdf, mlx)
        if bnxt.is_file():
            return self._bnxt_qos(rdma, bnxt)
        if link_layer == "InfiniBand":
            return None  # no RoCE QoS to read on an InfiniBand port
        if driver == "bnxt_en" or (rdma or "").startswith("bnxt"):
            self.missing(f"{BNXT_QOS_DIR}/{netdev}.txt", f"RDMA NIC {netdev} has no niccli getqos output")
        else:
            self.missing(f"{MLNX_QOS_DIR}/{netdev}.txt", f"RDMA NIC {netdev} has no mlnx_qos output")
        return None

    def _tree_files(self, base: SourcePath) -> list[SourcePath]:
        """Every file under ``base`` (an empty list when it is absent)."""
        return list(base.walk_files())

    def _roce_defaults(self, rdma: str | None) -> roce_tos.RoceDefaults | None:
        if rdma is None:
            return None
        base = self.path(f"{RDMA_CM}/{rdma}")
        port_dir = base / "ports" / str(PORT)
        files = [port_dir / name for name in (roce_tos.TOS_FILE, roce_tos.MODE_FILE) if (port_dir / name).is_file()]
        record = self.parse_tree(base, files, roce_tos.parse_tree)
        return next((p for p in record.ports if p.port == PORT), None) if record else None

    def _traffic_class(self, rdma: str | None) -> traffic_class.TrafficClass | None:
        if rdma is None:
            return None
        return self.parse(f"{SYS_IB}/{rdma}/tc/{PORT}/traffic_class", traffic_class.parse)

    def _mlx5_qos(self, netdev: str, rdma: str | None, bdf: str | None, qos_path: SourcePath) -> NicQos | None:
        qos = self.parse(qos_path, mlnx_qos.parse)
        if qos is None:
            return None
        ecn_dir = self.path(f"{SYS_NET}/{netdev}/ecn")
        ecn = self.parse_tree(ecn_dir, self._tree_files(ecn_dir), sysfs_ecn.parse_tree)
        np = ecn.roce_np if ecn else None
        rp = ecn.roce_rp if ecn else None
        cnp_dscp = np.params.get("cnp_dscp") if np else None
        cnp_prio = np.params.get("cnp_802p_prio") if np else None
        cc_found = False
        if ecn is None and bdf is not None:  # upstream kernel: debugfs cc_params instead of the ecn tree
            cc_dir = self.path(f"{MLX5_DEBUGFS}/{bdf}/cc_params")
            files = [p for p in cc_dir.iterdir() if p.is_file()] if cc_dir.is_dir() else []
            cc = self.parse_tree(cc_dir, files, cc_params.parse_tree)
            cc_found = cc is not None
            if cc is not None:
                cnp_dscp = cc.np_cnp_dscp
                cnp_prio = cc.np_cnp_prio if cc.np_cnp_prio_mode != 1 else None
        source = "mlnx_ofed" if ecn is not None else ("mlx5_upstream" if cc_found else None)
        tclass = self._traffic_class(rdma)
        roce = self._roce_defaults(rdma)
        return NicQos(
            trust=qos.trust,
            dscp2prio=qos.dscp2prio,
            pfc_enabled=frozenset(qos.pfc_enabled),
            prio_tc=qos.prio_tc,
            cable_len_m=qos.cable_len,
            # a priority whose enable file could not be read leaves the set unknown (not that priority off)
            ecn_np_enabled=np.enabled if np and not np.unknown else None,
            ecn_rp_enabled=rp.enabled if rp and not rp.unknown else None,
            cnp_dscp=cnp_dscp,
            cnp_prio=cnp_prio,
            traffic_class=tclass.global_tclass if tclass else None,
            ets=tuple(EtsClass(t.tc, t.tsa, t.bw) for t in qos.tcs),
            rx_buffer_sizes=qos.buffers.sizes if qos.buffers else None,
            prio2buffer=qos.buffers.prio2buffer if qos.buffers else None,
            roce_tos=roce.tos if roce else None,
            roce_mode=roce.mode if roce else None,
            source=source,
            dcbx=qos.dcbx,
            # buffer_owner stays unknown: mlnx_qos, dcb and sysfs do not print it (firmware PFCC.buf_ownership
            # since linux 451d2849ea66, the driver's manual_buffer flag before), so no collected file says it
            buffer_owner=None,
        )

    def _bnxt_qos(self, rdma: str | None, qos_path: SourcePath) -> NicQos | None:
        qos = self.parse(qos_path, bnxt_qos.parse)
        if qos is None:
            return None
        cc: bnxt_qos.BnxtCc | None = None
        if rdma is not None:
            base = self.path(f"{BNXT_RE}/{rdma}")
            cc_dir = base / "ports" / str(PORT) / "cc"
            files = [p for p in cc_dir.iterdir() if p.is_file()] if cc_dir.is_dir() else []
            tree = self.parse_tree(base, files, bnxt_qos.parse_tree)
            cc = next((c for c in tree.cc if c.port in (PORT, None)), None) if tree else None
        ecn = _bnxt_dcqcn(cc)
        tclass = self._traffic_class(rdma)
        roce = self._roce_defaults(rdma)
        return NicQos(
            trust=qos.trust,
            dscp2prio=qos.dscp2prio,
            pfc_enabled=frozenset(qos.pfc_enabled),
            prio_tc=qos.prio_tc,
            cable_len_m=None,
            ecn_np_enabled=ecn,
            ecn_rp_enabled=ecn,
            cnp_dscp=cc.cnp_dscp if cc else None,
            cnp_prio=cc.cnp_prio if cc else None,
            traffic_class=tclass.global_tclass if tclass else None,
            ets=tuple(EtsClass(t.tc, t.tsa, t.bw) for t in qos.tcs),
            roce_tos=roce.tos if roce else None,
            roce_mode=roce.mode if roce else None,
            source="bnxt",
        )

    # --- GPUs ---------------------------------------------------------------------------------------

    def _gpus(self) -> dict[int, Gpu]:
        topo = self.parse(NVIDIA_SMI_TOPO, nvidia_smi_topo.parse)
        log = self.parse(DMESG, xid.parse)
        facts: dict[int, _GpuFacts] = {}
        smi_index: dict[str, int] = {}
        if self.smi_q:
            for i, g in enumerate(self.smi_q.gpus):  # nvidia-smi lists GPUs in index order
                smi_index[g.pci_bus_id] = i
                facts[i] = _GpuFacts(
                    pci_bus_id=g.pci_bus_id,
                    name=g.product_name,
                    uuid=g.uuid,
                    serial=g.serial,
                    vbios_version=g.vbios_version,
                    pcie=_smi_pcie(g),
                )
        if topo:
            for label in topo.gpus:
                f = facts.setdefault(int(label.removeprefix("GPU")), _GpuFacts())
                numa = topo.numa_affinity.get(label)
                if numa is not None and numa.isdigit():
                    f.numa_node = int(numa)
                best = _closest(
                    (topo.nic_legend.get(nic, nic), topo.matrix.get(label, {}).get(nic, "")) for nic in topo.nics
                )
                if best:
                    f.nic, f.nic_relation = best
        if self.nccl:
            self._nccl_gpus(self.nccl, facts, smi_index)
        if log:
            by_bus: dict[str, list[int]] = {}
            for event in log.events:
                by_bus.setdefault(event.pci_bus_id, []).append(event.xid)
            for f in facts.values():
                if f.pci_bus_id in by_bus:
                    f.xids = tuple(by_bus[f.pci_bus_id])
                if f.uuid is None and f.pci_bus_id in log.gpus:
                    f.uuid = log.gpus[f.pci_bus_id]
        gpus: dict[int, Gpu] = {}
        for index in sorted(facts):
            f = facts[index]
            pci = self.pci.get(f.pci_bus_id) if f.pci_bus_id else None
            if f.numa_node is None and pci is not None:
                f.numa_node = pci.numa_node
            gpus[index] = Gpu(
                host=self.name,
                index=index,
                pci_bus_id=f.pci_bus_id,
                name=f.name,
                uuid=f.uuid,
                numa_node=f.numa_node,
                nic=f.nic,
                nic_relation=f.nic_relation,
                vbios_version=f.vbios_version,
                serial=f.serial,
                pcie=_pcie(pci) if pci else f.pcie,
                xids=f.xids,
            )
        return gpus

    def _nccl_gpus(self, nccl: nccl_topo.NcclTopo, facts: dict[int, _GpuFacts], smi_index: dict[str, int]) -> None:
        ordered = sorted((g for g in nccl.gpus if g.busid), key=lambda g: g.busid or "")
        for position, g in enumerate(ordered):
            if g.busid in smi_index:
                index = smi_index[g.busid]
            elif not smi_index and g.dev is not None:
                index = g.dev
            elif not smi_index:
                index = position
            else:
                continue  # a GPU nvidia-smi does not list (another container's view): not this host's
            f = facts.setdefault(index, _GpuFacts())
            f.pci_bus_id = f.pci_bus_id or g.busid
            if f.numa_node is None:
                f.numa_node = g.numa
            if f.nic is None:
                best = _closest((n.name, _pci_relation(g, n)) for n in nccl.nics if n.name)
                if best:
                    f.nic, f.nic_relation = best


@dataclass(slots=True)
class _GpuFacts:
    pci_bus_id: str | None = None
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    vbios_version: str | None = None
    numa_node: int | None = None
    nic: str | None = None
    nic_relation: str | None = None
    pcie: PcieLink | None = None
    xids: tuple[int, ...] = ()


def _closest(candidates: Iterable[tuple[str | None, str]]) -> tuple[str, str] | None:
    """The NIC with the closest relation; ties go to the first listed."""
    best: tuple[int, str, str] | None = None
    for nic, relation in candidates:
        rank = RELATION_RANK.get(relation, len(RELATION_RANK))
        if nic and relation and (best is None or rank < best[0]):
            best = (rank, nic, relation)
    return (best[1], best[2]) if best else None


def _pci_relation(gpu: nccl_topo.TopoGpu, nic: nccl_topo.TopoNic) -> str:
    """nvidia-smi's name for the PCIe path between a GPU and a NIC, from NCCL's switch nesting."""
    if gpu.pci_switch is not None and gpu.pci_switch == nic.pci_switch:
        return "PIX"
    if gpu.pci_path and nic.pci_path and gpu.pci_path[0] == nic.pci_path[0]:
        return "PXB"
    if gpu.numa is not None and gpu.numa == nic.numa:
        return "NODE"
    return "SYS"


def _pcie(dev: lspci.PciDevice) -> PcieLink:
    sta, cap = dev.link_status, dev.link_cap
    return PcieLink(
        speed_gts=sta.speed_gts if sta else None,
        width=sta.width if sta else None,
        max_speed_gts=cap.speed_gts if cap else None,
        max_width=cap.width if cap else None,
        downgraded=dev.downgraded,
    )


def _smi_pcie(g: nvidia_smi_q.Gpu) -> PcieLink | None:
    if g.pcie_gen_current is None and g.pcie_width_current is None:
        return None
    return PcieLink(
        speed_gts=PCIE_GEN_GTS.get(g.pcie_gen_current) if g.pcie_gen_current else None,
        width=g.pcie_width_current,
        max_speed_gts=PCIE_GEN_GTS.get(g.pcie_gen_max) if g.pcie_gen_max else None,
        max_width=g.pcie_width_max,
    )


def _acs_bridges(record: lspci.Lspci) -> tuple[str, ...]:
    """PCI bridges whose ACSCtl enables any ACS feature (which routes GPU/NIC peer traffic via the root)."""
    return tuple(
        d.bdf
        for d in record.devices
        if ((d.class_id or "").startswith("0604") or d.class_name == "PCI bridge")
        and d.acs is not None
        and any(astuple(d.acs))
    )


def _bnxt_dcqcn(cc: bnxt_qos.BnxtCc | None) -> frozenset[int] | None:
    """NP/RP of a Thor NIC: bnxt_re CC is one switch for the device's RoCE traffic, not per priority, and DCQCN
    runs only when it is on (``ecn_enable``) and RoCE leaves ECN-capable (``ecn_marking``), as ``dcqcn_on``
    says. Off when either is 0; unknown (None) when one was not read and the other does not say off."""
    if cc is None:
        return None
    on = cc.dcqcn_on
    if on is None:
        return frozenset() if 0 in (cc.ecn_enable, cc.ecn_marking) else None
    return frozenset(range(8)) if on else frozenset()


def _stems(directory: SourcePath) -> set[str]:
    return {p.stem for p in directory.glob("*.txt")} if directory.is_dir() else set()


# --- the small readers (pure: text -> value, ParseError on anything else) ------------------------------

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]*$")
_UEVENT = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")


def parse_mtu(text: str, source: str) -> int:
    """``/sys/class/net/<if>/mtu``: the MTU in bytes."""
    try:
        return int(text.strip())
    except ValueError:
        raise ParseError(source, f"expected an MTU in bytes, got {text.strip()[:30]!r}", line=1) from None


def parse_numa_node(text: str, source: str) -> int | None:
    """``device/numa_node``: the node number, ``-1`` (no NUMA affinity) reads as None."""
    value = text.strip()
    if value == "-1":
        return None
    if not value.isdigit():
        raise ParseError(source, f"expected a NUMA node number or -1, got {value[:30]!r}", line=1)
    return int(value)


def parse_word(text: str, source: str) -> str:
    """A one-word file: ``gid_attrs/ndevs/0`` (a netdev), ``/sys/module/<m>/version``, ``uname -r``."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) != 1 or not _NAME.match(lines[0]):
        got = lines[0][:40] if lines else ""
        raise ParseError(source, f"expected one word (a name or version), got {got!r}", line=1)
    return lines[0]


def parse_uevent(text: str, source: str) -> dict[str, str]:
    """``device/uevent``: ``KEY=value`` lines (``DRIVER=mlx5_core``, ``PCI_SLOT_NAME=0000:1a:00.0``, ...)."""
    out: dict[str, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        m = _UEVENT.match(line)
        if m is None:
            raise ParseError(source, f"expected 'KEY=value', got {line[:40]!r}", line=number)
        out[m[1]] = m[2]
    if not out:
        raise ParseError(source, "expected 'KEY=value' lines, got empty text", line=1)
    return out


@dataclass(frozen=True, slots=True)
class CollectRecord:
    """``collect.json`` of live collection: what it could not gather, and its failed last attempt if any."""

    missing: tuple[tuple[str, str], ...]  # (relative path, reason)
    failed: tuple[str | None, str | None, str | None] | None  # (data from, failed at, reason)


def parse_collect_json(text: str, source: str) -> CollectRecord:
    """``collect.json`` of live collection: its ``missing`` list and its failed ``last_attempt``."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"expected JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise ParseError(source, "expected a JSON object", key="$")
    entries = data.get("missing", [])
    if not isinstance(entries, list):
        raise ParseError(source, "expected a list of {path, reason}", key="missing")
    out: list[tuple[str, str]] = []
    for i, entry in enumerate(entries):
        path = entry.get("path") if isinstance(entry, dict) else None
        reason = entry.get("reason") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not isinstance(reason, str):
            raise ParseError(source, "expected {'path': str, 'reason': str}", key=f"missing[{i}]")
        parts = path.split("/")
        if not path or path.startswith("/") or ".." in parts or "" in parts:
            raise ParseError(
                source, f"expected a path inside the host directory, got {path[:60]!r}", key=f"missing[{i}]"
            )
        out.append((path, reason))
    return CollectRecord(tuple(out), _failed_attempt(data))


def _failed_attempt(data: dict[str, object]) -> tuple[str | None, str | None, str | None] | None:
    attempt = data.get("last_attempt")
    if not isinstance(attempt, dict) or attempt.get("result") != "failed":
        return None
    said = {k: v for k, v in {**attempt, "data_from": data.get("finished")}.items() if isinstance(v, str) and v}
    return said.get("data_from"), said.get("finished") or said.get("started"), said.get("reason")
