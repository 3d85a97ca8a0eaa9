"""``lldpcli -f xml show neighbors [ports IF] details`` (lldpd 1.0.x, libxml2 writer).

The same tag tree as the other lldpcli writers (``src/client/display.c``, see :mod:`unifab.parse.host.lldpcli`),
printed by ``src/client/xml_writer.c``: attributes stay attributes, with their text values (``on``/``off``,
``yes``/``no``), and element text is the value; every element carries a ``label`` attribute::

    <lldp label="LLDP neighbors">
     <interface label="Interface" name="ens1np0" via="LLDP" rid="1" age="0 day, 00:00:06">
      <chassis label="Chassis">
       <id label="ChassisID" type="mac">02:00:00:00:aa:01</id>
       <name label="SysName">leaf-su1-r0</name>
       <descr label="SysDescr">...</descr>
       <mgmt-ip label="MgmtIP">192.0.2.1</mgmt-ip>
       <capability label="Capability" type="Bridge" enabled="on"/>
      </chassis>
      <port label="Port">
       <id label="PortID" type="ifname">swp1</id> <descr ...>swp1</descr> <ttl ...>120</ttl> <mfs ...>9216</mfs>
      </port>
     </interface>
    </lldp>

No neighbors: an empty ``<lldp label="LLDP neighbors"/>``. One ``interface`` element per neighbor, in file
order. The result is the same :class:`~unifab.parse.host.lldpcli.LldpNeighbor` tuple the json0, json and
keyvalue parsers give for the same capture. ``show interfaces`` output (``status`` without ``via``) is
rejected. The XML is read with :func:`unifab.parse.host.nvidia_smi_q.read_xml` (expat, no DTD internal subset,
no entity declarations); errors name the element's line. With a :class:`~unifab.errors.ParseProblems`
collector a bad ``<interface>`` entry costs that neighbour (the problem names its line); a document that is not
XML, has another root, or only bad entries still raises.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.lldpcli import LldpNeighbor
from unifab.parse.host.nvidia_smi_q import XmlDocument, read_xml

__all__ = ["parse"]

_UNSIGNED = re.compile(r"^[0-9]{1,19}$")
_ENABLED = {"on": True, "yes": True, "off": False, "no": False}


class _Reader:
    def __init__(self, doc: XmlDocument, source: str) -> None:
        self.doc = doc
        self.source = source

    def fail(self, element: ET.Element, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.doc.line(element))

    def one(self, parent: ET.Element | None, tag: str) -> ET.Element | None:
        if parent is None:
            return None
        found = parent.findall(tag)
        if len(found) > 1:
            raise self.fail(found[1], f"expected one <{tag}> in <{parent.tag}>, got {len(found)}")
        return found[0] if found else None

    def text(self, parent: ET.Element | None, tag: str) -> str | None:
        element = self.one(parent, tag)
        return None if element is None else (element.text or "")

    def number(self, parent: ET.Element | None, tag: str) -> int | None:
        element = self.one(parent, tag)
        if element is None:
            return None
        value = (element.text or "").strip()
        if not _UNSIGNED.match(value):
            raise self.fail(element, f"expected an unsigned integer in <{tag}>, got {value!r}")
        return int(value)

    def ident(self, parent: ET.Element | None) -> tuple[str | None, str | None]:
        element = self.one(parent, "id")
        if element is None:
            return None, None
        return element.text or "", element.get("type")

    def capabilities(self, chassis: ET.Element | None) -> tuple[str, ...]:
        enabled: list[str] = []
        for cap in [] if chassis is None else chassis.findall("capability"):
            name, flag = cap.get("type"), cap.get("enabled")
            if name is None:
                raise self.fail(cap, "expected a 'type' attribute on <capability>")
            if flag not in _ENABLED:
                raise self.fail(cap, f"expected enabled='on' or 'off' on <capability>, got {flag!r}")
            if _ENABLED[flag]:
                enabled.append(name)
        return tuple(enabled)

    def neighbor(self, entry: ET.Element) -> LldpNeighbor:
        if entry.get("status") is not None and entry.get("via") is None:
            raise self.fail(entry, "expected `lldpcli show neighbors` output (this is `show interfaces` output)")
        local_port = entry.get("name")
        if local_port is None:
            raise self.fail(entry, "expected a 'name' attribute on <interface>")
        chassis = self.one(entry, "chassis")
        port = self.one(entry, "port")
        chassis_id, chassis_id_type = self.ident(chassis)
        port_id, port_id_type = self.ident(port)
        return LldpNeighbor(
            local_port=local_port,
            via=entry.get("via"),
            age=entry.get("age"),
            chassis_id=chassis_id,
            chassis_id_type=chassis_id_type,
            system_name=self.text(chassis, "name"),
            system_descr=self.text(chassis, "descr"),
            mgmt_ips=tuple(e.text or "" for e in ([] if chassis is None else chassis.findall("mgmt-ip"))),
            capabilities_enabled=self.capabilities(chassis),
            port_id=port_id,
            port_id_type=port_id_type,
            port_descr=self.text(port, "descr"),
            ttl=self.number(port, "ttl"),
            mfs=self.number(port, "mfs"),
        )


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[LldpNeighbor, ...]:
    """Parse ``lldpcli -f xml show neighbors [details]`` into the records :func:`lldpcli.parse` gives."""
    doc = read_xml(text, source)
    reader = _Reader(doc, source)
    if doc.root.tag != "lldp":
        raise reader.fail(
            doc.root, f"expected the root element <lldp> (`lldpcli show neighbors`), got <{doc.root.tag}>"
        )
    log = problems if problems is not None else ParseProblems.strict(source)
    out: list[LldpNeighbor] = []
    for i, entry in enumerate(doc.root.findall("interface")):
        with log.skipping(f"the neighbour <interface> {i} ({entry.get('name') or '?'})"):
            out.append(reader.neighbor(entry))
    if not out and log.problems:
        raise log.problems[0].error()
    return tuple(out)
