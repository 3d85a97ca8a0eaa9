r"""NCCL topology XML: ``NCCL_TOPO_DUMP_FILE`` dumps (NCCL 2.7 .. 2.2x) and ``NCCL_TOPO_FILE`` inputs.

``src/graph/xml.cc`` writes (``NCCL_TOPO_XML_VERSION 1``)::

    <system version="1">
      <cpu [host_hash="0x.."] numaid="0" affinity="ffffffff,..." arch="x86_64" vendor="GenuineIntel" ...>
        <pci busid="0000:0c:00.0" class="0x060400" ... link_speed="16 GT/s" link_width="16">   PCIe switch
          <pci busid="0000:13:00.0" class="0x030200" ...>
            <gpu dev="0" sm="80" rank="0" gdr="1"> <nvlink target="0000:c3:00.0" count="2" tclass="0x068000"/> </gpu>
          </pci>
          <pci busid="0000:1a:00.0" class="0x020000" ...>
            <nic> <net name="mlx5_bond_1" dev="1" speed="200000" port="1" guid="0x..." gdr="1" [coll="1"]/> </nic>
          </pci>
        </pci>
      </cpu>
    </system>

Older NCCL writes ``link_speed="16 GT/s"`` and no ``host_hash``; newer ``"32.0 GT/s PCIe"``. A ``<pci>`` whose
class is ``0x0604xx`` (PCI bridge) is a PCIe switch: NCCL records one level per switch (it skips the switch's
downstream port), so ``pci_switch`` is the busid of the nearest enclosing bridge ``<pci>`` and ``pci_path`` the
chain of enclosing bridges from the ``<cpu>`` down (``pci_path[0]`` is the topmost switch under the CPU; devices
sharing it sit behind one switch tree). ``numa`` is the enclosing ``<cpu numaid>``.

``NCCL_TOPO_FILE`` inputs (e.g. cloud VM files with fake switches ``ffff:ff:01.0``) may hold only ``<cpu>`` and
``<pci>``: an endpoint ``<pci>`` without ``<gpu>``/``<nic>`` is a GPU when its class is ``0x0302xx``/``0x0300xx``
(3D/VGA controller) and a NIC when it is ``0x0207xx`` (InfiniBand) or ``0x0200xx`` (Ethernet); their NCCL
attributes (dev, rank, name, ...) are then None. A ``<nic>`` may also sit directly under a ``<cpu>`` or switch
(virtual or bonded devices): its ``busid`` is None.

The XML is read with :func:`unifab.parse.host.nvidia_smi_q.read_xml` (expat, no DTD subset, no entities).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from unifab.errors import ParseError
from unifab.parse.host.lspci import normalize_bdf
from unifab.parse.host.nvidia_smi_q import XmlDocument, read_xml

__all__ = [
    "BRIDGE_CLASS",
    "GPU_CLASSES",
    "NIC_CLASSES",
    "NcclTopo",
    "NvLink",
    "TopoCpu",
    "TopoGpu",
    "TopoNic",
    "dump",
    "parse",
]

GPU_CLASSES = (0x0302, 0x0300)  # 3D controller, VGA controller (class >> 8)
NIC_CLASSES = (0x0207, 0x0200)  # InfiniBand controller, Ethernet controller
BRIDGE_CLASS = 0x0604

_INT = re.compile(r"^-?\d{1,18}$")
_CLASS = re.compile(r"^0x[0-9a-fA-F]{6}$")


@dataclass(frozen=True, slots=True)
class NvLink:
    target: str  # busid of the peer GPU or NVSwitch (as written)
    count: int | None
    tclass: str | None  # "0x068000" = NVSwitch, "0x030200" = GPU


@dataclass(frozen=True, slots=True)
class TopoCpu:
    numa: int | None
    affinity: str | None
    arch: str | None
    vendor: str | None
    host_hash: str | None = None


@dataclass(frozen=True, slots=True)
class TopoGpu:
    busid: str | None
    dev: int | None
    rank: int | None
    sm: int | None
    gdr: bool | None
    pci_class: str | None
    numa: int | None
    pci_switch: str | None
    pci_path: tuple[str, ...] = ()
    nvlinks: tuple[NvLink, ...] = ()


@dataclass(frozen=True, slots=True)
class TopoNic:
    name: str | None  # "mlx5_0", "mlx5_bond_1"
    dev: int | None
    busid: str | None
    speed_mbps: int | None
    port: int | None
    guid: str | None
    gdr: bool | None
    coll: bool | None
    pci_class: str | None  # "0x020700" InfiniBand, "0x020000" Ethernet (RoCE)
    numa: int | None
    pci_switch: str | None
    pci_path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NcclTopo:
    version: int | None
    cpus: tuple[TopoCpu, ...]
    gpus: tuple[TopoGpu, ...]
    nics: tuple[TopoNic, ...]


def _class_code(pci_class: str | None) -> int | None:
    return None if pci_class is None else int(pci_class, 16) >> 8


class _Reader:
    def __init__(self, doc: XmlDocument, source: str) -> None:
        self.doc = doc
        self.source = source
        self.cpus: list[TopoCpu] = []
        self.gpus: list[TopoGpu] = []
        self.nics: list[TopoNic] = []

    def fail(self, element: ET.Element, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.doc.line(element))

    def integer(self, el: ET.Element, name: str) -> int | None:
        value = el.get(name)
        if value is None:
            return None
        if not _INT.match(value.strip()):
            raise self.fail(el, f"expected <{el.tag} {name}=...> as an integer, got {value[:30]!r}")
        return int(value)

    def flag(self, el: ET.Element, name: str) -> bool | None:
        value = self.integer(el, name)
        return None if value is None else value != 0

    def busid(self, el: ET.Element) -> str:
        raw = el.get("busid", "")
        bdf = normalize_bdf(raw)
        if bdf is None:
            raise self.fail(el, f"expected <pci busid='dddd:bb:dd.f'>, got {raw[:30]!r}")
        return bdf

    def pci_class(self, el: ET.Element) -> str | None:
        value = el.get("class")
        if value is None:
            return None
        if not _CLASS.match(value):
            raise self.fail(el, f"expected <pci class='0x......'> (6 hex digits), got {value[:30]!r}")
        return value.lower()

    def walk(self, el: ET.Element, numa: int | None, path: tuple[str, ...]) -> None:
        for child in el:
            if child.tag == "cpu":
                if el.tag != "system":
                    raise self.fail(child, "expected <cpu> only directly under <system>")
                self.cpu(child)
            elif child.tag == "pci":
                self.pci(child, numa, path)
            elif child.tag == "gpu":
                self.gpu(child, None, None, numa, path)
            elif child.tag == "nic":
                self.nic(child, None, None, numa, path)

    def cpu(self, el: ET.Element) -> None:
        numa = self.integer(el, "numaid")
        self.cpus.append(TopoCpu(numa, el.get("affinity"), el.get("arch"), el.get("vendor"), el.get("host_hash")))
        self.walk(el, numa, ())

    def pci(self, el: ET.Element, numa: int | None, path: tuple[str, ...]) -> None:
        busid = self.busid(el)
        pci_class = self.pci_class(el)
        code = _class_code(pci_class)
        if code == BRIDGE_CLASS or (code is None and el.find("pci") is not None):
            self.walk(el, numa, (*path, busid))
            return
        gpus, nics = el.findall("gpu"), el.findall("nic")
        for gpu in gpus:
            self.gpu(gpu, busid, pci_class, numa, path)
        for nic in nics:
            self.nic(nic, busid, pci_class, numa, path)
        if not gpus and code in GPU_CLASSES:
            self.gpus.append(TopoGpu(busid, None, None, None, None, pci_class, numa, path[-1] if path else None, path))
        if not nics and code in NIC_CLASSES:
            self.nics.append(
                TopoNic(
                    None, None, busid, None, None, None, None, None, pci_class, numa, path[-1] if path else None, path
                )
            )

    def gpu(
        self, el: ET.Element, busid: str | None, pci_class: str | None, numa: int | None, path: tuple[str, ...]
    ) -> None:
        links = []
        for link in el.findall("nvlink"):
            target = link.get("target")
            if target is None:
                raise self.fail(link, "expected <nvlink target=...>")
            links.append(NvLink(target, self.integer(link, "count"), link.get("tclass")))
        self.gpus.append(
            TopoGpu(
                busid=busid,
                dev=self.integer(el, "dev"),
                rank=self.integer(el, "rank"),
                sm=self.integer(el, "sm"),
                gdr=self.flag(el, "gdr"),
                pci_class=pci_class,
                numa=numa,
                pci_switch=path[-1] if path else None,
                pci_path=path,
                nvlinks=tuple(links),
            )
        )

    def nic(
        self, el: ET.Element, busid: str | None, pci_class: str | None, numa: int | None, path: tuple[str, ...]
    ) -> None:
        nets = el.findall("net") or [ET.Element("net")]
        for net in nets:
            self.nics.append(
                TopoNic(
                    name=net.get("name"),
                    dev=self.integer(net, "dev"),
                    busid=busid,
                    speed_mbps=self.integer(net, "speed"),
                    port=self.integer(net, "port"),
                    guid=net.get("guid"),
                    gdr=self.flag(net, "gdr"),
                    coll=self.flag(net, "coll"),
                    pci_class=pci_class,
                    numa=numa,
                    pci_switch=path[-1] if path else None,
                    pci_path=path,
                )
            )


def parse(text: str, source: str = "<input>") -> NcclTopo:
    """Read an NCCL topology XML (dump or ``NCCL_TOPO_FILE``) into GPUs and NICs with their PCIe placement."""
    doc = read_xml(text, source)
    reader = _Reader(doc, source)
    if doc.root.tag != "system":
        raise reader.fail(doc.root, f"expected the root element <system>, got <{doc.root.tag}>")
    reader.walk(doc.root, None, ())
    return NcclTopo(reader.integer(doc.root, "version"), tuple(reader.cpus), tuple(reader.gpus), tuple(reader.nics))


# --- dump ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    busid: str | None
    pci_class: str | None
    children: dict[str, _Node] = field(default_factory=dict)
    gpus: list[TopoGpu] = field(default_factory=list)
    nics: list[TopoNic] = field(default_factory=list)
    loose_gpus: list[TopoGpu] = field(default_factory=list)  # no busid: written directly in this node
    loose_nics: list[TopoNic] = field(default_factory=list)


def _attrs(pairs: Iterable[tuple[str, object]]) -> str:
    out = []
    for name, value in pairs:
        if value is None:
            continue
        text = str(int(value)) if isinstance(value, bool) else str(value)
        out.append(f" {name}={quoteattr(text)}")
    return "".join(out)


def _gpu_xml(g: TopoGpu, indent: str) -> list[str]:
    attrs = _attrs((("dev", g.dev), ("sm", g.sm), ("rank", g.rank), ("gdr", g.gdr)))
    if not g.nvlinks:
        return [f"{indent}<gpu{attrs}/>"]
    links = [
        f"{indent}  <nvlink{_attrs((('target', n.target), ('count', n.count), ('tclass', n.tclass)))}/>"
        for n in g.nvlinks
    ]
    return [f"{indent}<gpu{attrs}>", *links, f"{indent}</gpu>"]


def _bare(n: TopoNic) -> bool:
    return (n.name, n.dev, n.speed_mbps, n.port, n.guid, n.gdr, n.coll) == (None,) * 7


def _nic_xml(nics: list[TopoNic], indent: str) -> list[str]:
    if len(nics) == 1 and _bare(nics[0]):
        return [f"{indent}<nic/>"]
    lines = [f"{indent}<nic>"]
    for n in nics:
        pairs = (
            ("name", n.name),
            ("dev", n.dev),
            ("speed", n.speed_mbps),
            ("port", n.port),
            ("guid", n.guid),
            ("gdr", n.gdr),
            ("coll", n.coll),
        )
        lines.append(f"{indent}  <net{_attrs(pairs)}/>")
    return [*lines, f"{indent}</nic>"]


def _needs_gpu_element(g: TopoGpu) -> bool:
    return (g.dev, g.rank, g.sm, g.gdr) != (None,) * 4 or bool(g.nvlinks) or _class_code(g.pci_class) not in GPU_CLASSES


def _needs_nic_element(nics: list[TopoNic]) -> bool:
    return len(nics) > 1 or not _bare(nics[0]) or _class_code(nics[0].pci_class) not in NIC_CLASSES


def _node_xml(node: _Node, indent: str) -> list[str]:
    out: list[str] = []
    for busid in sorted(node.children):
        child = node.children[busid]
        head = f"{indent}<pci{_attrs((('busid', busid), ('class', child.pci_class)))}"
        inner: list[str] = []
        if child.children or child.loose_gpus or child.loose_nics:
            inner = _node_xml(child, indent + "  ")
        for g in child.gpus:
            if _needs_gpu_element(g):
                inner += _gpu_xml(g, indent + "  ")
        if child.nics and _needs_nic_element(child.nics):
            inner += _nic_xml(child.nics, indent + "  ")
        out += [head + "/>"] if not inner else [head + ">", *inner, f"{indent}</pci>"]
    for g in node.loose_gpus:
        out += _gpu_xml(g, indent)
    for n in node.loose_nics:
        out += _nic_xml([n], indent)
    return out


def _place(root: _Node, path: tuple[str, ...], busid: str | None, pci_class: str | None) -> _Node:
    node = root
    for switch in path:
        node = node.children.setdefault(switch, _Node(switch, f"0x{BRIDGE_CLASS:04x}00"))
    if busid is None:
        return node
    leaf = node.children.setdefault(busid, _Node(busid, pci_class))
    return leaf


def dump(topo: NcclTopo) -> str:
    """Write ``topo`` as an NCCL dump-shaped ``<system>`` XML (children of a node ordered by busid)."""
    cpus = list(topo.cpus)
    known = {c.numa for c in cpus}
    for numa in [g.numa for g in topo.gpus] + [n.numa for n in topo.nics]:
        if numa not in known:
            cpus.append(TopoCpu(numa, None, None, None))
            known.add(numa)
    roots = {c.numa: _Node(None, None) for c in cpus}
    for g in topo.gpus:
        if g.busid is None:
            _place(roots[g.numa], g.pci_path, None, None).loose_gpus.append(g)
        else:
            _place(roots[g.numa], g.pci_path, g.busid, g.pci_class).gpus.append(g)
    for n in topo.nics:
        if n.busid is None:
            _place(roots[n.numa], n.pci_path, None, None).loose_nics.append(n)
        else:
            _place(roots[n.numa], n.pci_path, n.busid, n.pci_class).nics.append(n)
    out = [f"<system{_attrs((('version', topo.version),))}>"]
    for c in cpus:
        attrs = _attrs(
            (
                ("host_hash", c.host_hash),
                ("numaid", c.numa),
                ("affinity", c.affinity),
                ("arch", c.arch),
                ("vendor", c.vendor),
            )
        )
        inner = _node_xml(roots[c.numa], "    ")
        out += [f"  <cpu{attrs}/>"] if not inner else [f"  <cpu{attrs}>", *inner, "  </cpu>"]
    out.append("</system>")
    return "\n".join(out) + "\n"
