r"""``ibv_devinfo`` and ``ibv_devinfo -v`` (rdma-core ``libibverbs/examples/devinfo.c``, any version).

Per device (``printf`` formats from devinfo.c; ``fw_ver`` only when non-empty, ``board_id`` only when
sysfs has it)::

    hca_id:\tmlx5_0
    \ttransport:\t\t\tInfiniBand (0)
    \tfw_ver:\t\t\t\t28.39.1002
    \tnode_guid:\t\t\tb83f:d203:00a1:b2c4
    \tsys_image_guid:\t\t\tb83f:d203:00a1:b2c4
    \tvendor_id:\t\t\t0x02c9
    \tvendor_part_id:\t\t\t4129
    \thw_ver:\t\t\t\t0x0
    \tboard_id:\t\t\tMT_0000000838
    \tphys_port_cnt:\t\t\t1
    \t\tport:\t1
    \t\t\tstate:\t\t\tPORT_ACTIVE (4)
    \t\t\tmax_mtu:\t\t4096 (5)
    \t\t\tactive_mtu:\t\t4096 (5)
    \t\t\tsm_lid:\t\t\t0
    \t\t\tport_lid:\t\t0
    \t\t\tport_lmc:\t\t0x00
    \t\t\tlink_layer:\t\tEthernet
    (blank line after each port)

``transport`` reads ``InfiniBand (0)`` for RoCE devices too; ``link_layer`` tells Ethernet from
InfiniBand. ``-v`` adds many device keys before the ports (``max_qp:``, capability flag lines with no
colon, ``tag matching not supported``...) and port keys after ``link_layer`` (``active_width:``,
``GID[  0]:``...). Those lines are accepted when indented and not recorded; the keys above are
required in every device and port, so a truncated capture is an error. Devices and ports may not
repeat. Whitespace is free: captures with TABs expanded to spaces parse the same.

With a :class:`~unifab.errors.ParseProblems` collector a device block that cannot be read (a bad or missing
value in it or in one of its ports, a repeated key) costs that device; the problem names the line of the
value (or of the block when a key is missing). A text with no device read raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["DEVICE_KEYS", "MTU_ENUM", "PORT_KEYS", "PORT_STATES", "TRANSPORTS", "IbvDevice", "IbvPort", "dump", "parse"]

# enum ibv_mtu: the number in parentheses after the MTU in bytes
MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
# enum ibv_port_state: what dump() prints in parentheses (parse() reads the name only)
PORT_STATES = {"PORT_NOP": 0, "PORT_DOWN": 1, "PORT_INIT": 2, "PORT_ARMED": 3, "PORT_ACTIVE": 4}
# enum ibv_transport_type
TRANSPORTS = {"InfiniBand": 0, "iWARP": 1, "usNIC": 2, "usNIC UDP": 3}

DEVICE_KEYS = (
    "transport",
    "fw_ver",
    "node_guid",
    "sys_image_guid",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "board_id",
    "phys_port_cnt",
)
PORT_KEYS = ("state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer")
_OPTIONAL_DEVICE_KEYS = ("fw_ver", "board_id")

_ENUM = re.compile(r"^(\S.*?) \((\d+)\)$")
_GUID = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){3}$")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")
_NUM = re.compile(r"^\d+$")


@dataclass(frozen=True, slots=True)
class IbvPort:
    port: int
    state: str  # "PORT_ACTIVE", "PORT_DOWN", ...
    max_mtu: int  # bytes
    active_mtu: int  # bytes
    sm_lid: int
    port_lid: int
    port_lmc: int
    link_layer: str  # "Ethernet" | "InfiniBand"


@dataclass(frozen=True, slots=True)
class IbvDevice:
    hca_id: str
    transport: str  # "InfiniBand" (also for RoCE), "iWARP", ...
    fw_ver: str | None
    node_guid: str
    sys_image_guid: str
    vendor_id: str  # as printed, e.g. "0x02c9"
    vendor_part_id: int  # 4129 = ConnectX-7 ...
    hw_ver: str  # as printed, e.g. "0x0"
    board_id: str | None
    phys_port_cnt: int
    ports: tuple[IbvPort, ...]


@dataclass(slots=True)
class _Block:
    name: str
    line: int
    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # key -> the line it was printed on


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.number = 0
        self.devices: list[IbvDevice] = []
        self.device: _Block | None = None
        self.ports: list[_Block] = []
        # the line just read when it was none of the keys above (number, text, unindented): a garbled header
        # shows as such a line followed by keys the open block cannot take
        self.stray: tuple[int, str, bool] | None = None

    def fail(self, expected: str, line: int | None = None) -> ParseError:
        return ParseError(self.source, expected, line=self.number if line is None else line)

    def line(self, raw: str) -> None:
        text = raw.strip()
        key, colon, value = text.partition(":")
        key, value = key.strip(), value.strip()
        stray, self.stray = self.stray, None
        if colon and key == "hca_id":
            self.close()
            if not value or any(d.hca_id == value for d in self.devices):
                raise self.fail(f"expected a new device name after 'hca_id:', got {value!r}")
            self.device = _Block(value, self.number)
            return
        if self.device is None:
            raise self.fail(f"expected 'hca_id:\\t<device>', got {text[:60]!r}")
        if raw[:1] not in (" ", "\t"):  # never valid; parse() names it once it knows what follows
            self.stray = (self.number, text, True)
            return
        if colon and key == "port":
            if not _NUM.match(value) or any(p.name == value for p in self.ports):
                raise self.fail(f"expected a new port number after 'port:', got {value!r}")
            self.ports.append(_Block(value, self.number))
            return
        keys, block = (PORT_KEYS, self.ports[-1]) if self.ports else (DEVICE_KEYS, self.device)
        if colon and stray is not None and key in PORT_KEYS and (key in block.values or not self.ports):
            # a port key the open block cannot take, right after a line that is no key: that was the port's header
            raise self.fail(f"expected '\\t\\tport:\\t<n>' before the port keys, got {stray[1][:60]!r}", stray[0])
        if colon and key in keys:
            if key in block.values:
                raise self.fail(f"expected {key!r} once in {self.where(block)}")
            block.values[key] = value
            block.lines[key] = self.number
            return
        # anything else is -v detail (capability flags, limits, GIDs): accepted, not recorded
        self.stray = (self.number, text, False)

    def headless(self, raw: str) -> bool:
        """Whether ``raw`` is a device key the open device cannot take (after its ports, or again right after a
        line that is no key): a device whose ``hca_id:`` line is missing or garbled starts here."""
        key, colon, _ = raw.strip().partition(":")
        key = key.strip()
        if self.device is None or not colon or key not in DEVICE_KEYS:
            return False
        return bool(self.ports) or (key in self.device.values and self.stray is not None)

    def where(self, block: _Block) -> str:
        name = self.device.name if self.device is not None else "?"
        return f"device {name}" if block is self.device else f"port {block.name} of {name}"

    def need(self, block: _Block, key: str) -> str:
        if key not in block.values:
            raise self.fail(f"expected '{key}:' in {self.where(block)}", line=block.line)
        return block.values[key]

    def number_of(self, block: _Block, key: str, text: str, hex_ok: bool = False) -> int:
        if _NUM.match(text):
            return int(text)
        if hex_ok and _HEX.match(text):
            return int(text, 16)
        where = block.lines.get(key, block.line)
        raise self.fail(f"expected a number after '{key}:' in {self.where(block)}, got {text!r}", line=where)

    def enum_name(self, block: _Block, key: str) -> tuple[str, int]:
        m = _ENUM.match(self.need(block, key))
        if m is None:
            raise self.fail(f"expected '{key}: <name> (<n>)' in {self.where(block)}", line=block.lines[key])
        return m[1], int(m[2])

    def mtu(self, block: _Block, key: str) -> int:
        name, code = self.enum_name(block, key)
        if not _NUM.match(name) or MTU_ENUM.get(int(name)) != code:
            where = block.lines[key]
            raise self.fail(f"expected '{key}: <256..4096> (<1..5>)' in {self.where(block)}", line=where)
        return int(name)

    def port(self, block: _Block) -> IbvPort:
        for key in PORT_KEYS:
            self.need(block, key)
        lmc = block.values["port_lmc"]
        return IbvPort(
            port=int(block.name),
            state=self.enum_name(block, "state")[0],
            max_mtu=self.mtu(block, "max_mtu"),
            active_mtu=self.mtu(block, "active_mtu"),
            sm_lid=self.number_of(block, "sm_lid", self.need(block, "sm_lid")),
            port_lid=self.number_of(block, "port_lid", self.need(block, "port_lid")),
            port_lmc=self.number_of(block, "port_lmc", lmc, hex_ok=True),
            link_layer=self.need(block, "link_layer"),
        )

    def close(self) -> None:
        d = self.device
        if d is None:
            return
        for key in DEVICE_KEYS:
            if key not in _OPTIONAL_DEVICE_KEYS:
                self.need(d, key)
        for key in ("node_guid", "sys_image_guid"):
            if not _GUID.match(self.need(d, key)):
                raise self.fail(f"expected '{key}: xxxx:xxxx:xxxx:xxxx' in device {d.name}", line=d.lines[key])
        for key in ("vendor_id", "hw_ver"):
            if not _HEX.match(self.need(d, key)):
                raise self.fail(f"expected a 0x... number after '{key}:' in device {d.name}", line=d.lines[key])
        count = self.number_of(d, "phys_port_cnt", self.need(d, "phys_port_cnt"))
        ports = tuple(self.port(p) for p in self.ports)
        if any(p.port > count for p in ports) or not ports:
            raise self.fail(f"expected ports 1..{count} under device {d.name}", line=d.line)
        self.devices.append(
            IbvDevice(
                hca_id=d.name,
                transport=self.enum_name(d, "transport")[0],
                fw_ver=d.values.get("fw_ver") or None,
                node_guid=d.values["node_guid"],
                sys_image_guid=d.values["sys_image_guid"],
                vendor_id=d.values["vendor_id"],
                vendor_part_id=self.number_of(d, "vendor_part_id", self.need(d, "vendor_part_id")),
                hw_ver=d.values["hw_ver"],
                board_id=d.values.get("board_id") or None,
                phys_port_cnt=count,
                ports=ports,
            )
        )
        self.device = None
        self.ports = []


def _close(parser: _Parser, log: ParseProblems) -> None:
    """End the open device (a problem in it costs that device)."""
    if parser.device is None:
        return
    with log.skipping(f"device {parser.device.name}") as closing:
        parser.close()
    if closing.failed:
        parser.device, parser.ports = None, []


def _fail(parser: _Parser, log: ParseProblems) -> None:
    """Drop the open device for its unindented stray line."""
    if parser.device is None or parser.stray is None:
        return
    at, got, _ = parser.stray
    expected = f"expected an indented line inside device {parser.device.name}, got {got[:60]!r}"
    log.record(parser.fail(expected, line=at), f"device {parser.device.name}")
    parser.device, parser.ports, parser.stray = None, [], None


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[IbvDevice, ...]:
    """Read ``ibv_devinfo [-v]`` output: one record per ``hca_id:`` block (a bad block costs that device)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    parser = _Parser(source)
    dropped = False  # inside a device block that could not be read: skip to the next 'hca_id:'
    for number, printed in enumerate(text.split("\n"), start=1):
        raw = printed.rstrip("\r")
        head = raw.strip().startswith("hca_id")
        if not raw.strip() or (dropped and not head):
            continue
        parser.number = number
        stray = parser.stray
        if parser.headless(raw):  # the device before ends; its header is the stray line (if any) before this one
            _close(parser, log)
            parser.stray = None
            at, got = stray[:2] if stray is not None else (number, raw.strip())
            expected = f"expected 'hca_id:\\t<device>' before the device keys from line {number}, got {got[:60]!r}"
            log.add(expected, f"the device at line {at}", line=at)
            dropped = True
            continue
        if stray is not None and stray[2]:  # an unindented line inside the device costs that device
            _fail(parser, log)
            dropped = not head
            if dropped:
                continue
        if head and parser.device is not None:  # the block before ends here
            _close(parser, log)
        name = parser.device.name if parser.device is not None else raw.strip()[:40]
        with log.skipping(f"device {name}") as row:
            parser.line(raw)
        dropped = row.failed
        if row.failed:
            parser.device, parser.ports, parser.stray = None, [], None
    if parser.stray is not None and parser.stray[2]:
        _fail(parser, log)
    parser.number = max(1, text.count("\n"))
    with log.skipping(f"device {parser.device.name if parser.device else '?'}"):
        parser.close()
    if not parser.devices and log.problems:
        raise log.problems[0].error()
    if not parser.devices:
        raise ParseError(source, "expected ibv_devinfo output ('hca_id:' blocks), got empty text", line=1)
    return tuple(parser.devices)


def dump(devices: tuple[IbvDevice, ...]) -> str:
    """Write ``devices`` the way ``ibv_devinfo`` (without ``-v``) prints them."""
    out: list[str] = []
    for d in devices:
        out.append(f"hca_id:\t{d.hca_id}")
        out.append(f"\ttransport:\t\t\t{d.transport} ({TRANSPORTS[d.transport]})")
        if d.fw_ver:
            out.append(f"\tfw_ver:\t\t\t\t{d.fw_ver}")
        out.append(f"\tnode_guid:\t\t\t{d.node_guid}")
        out.append(f"\tsys_image_guid:\t\t\t{d.sys_image_guid}")
        out.append(f"\tvendor_id:\t\t\t{d.vendor_id}")
        out.append(f"\tvendor_part_id:\t\t\t{d.vendor_part_id}")
        out.append(f"\thw_ver:\t\t\t\t{d.hw_ver}")
        if d.board_id:
            out.append(f"\tboard_id:\t\t\t{d.board_id}")
        out.append(f"\tphys_port_cnt:\t\t\t{d.phys_port_cnt}")
        for p in d.ports:
            out.append(f"\t\tport:\t{p.port}")
            out.append(f"\t\t\tstate:\t\t\t{p.state} ({PORT_STATES[p.state]})")
            out.append(f"\t\t\tmax_mtu:\t\t{p.max_mtu} ({MTU_ENUM[p.max_mtu]})")
            out.append(f"\t\t\tactive_mtu:\t\t{p.active_mtu} ({MTU_ENUM[p.active_mtu]})")
            out.append(f"\t\t\tsm_lid:\t\t\t{p.sm_lid}")
            out.append(f"\t\t\tport_lid:\t\t{p.port_lid}")
            out.append(f"\t\t\tport_lmc:\t\t0x{p.port_lmc:02x}")
            out.append(f"\t\t\tlink_layer:\t\t{p.link_layer}")
            out.append("")
    return "".join(line + "\n" for line in out)
