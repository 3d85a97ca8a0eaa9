r"""``lspci -vvv`` and ``lspci -vvv -nn`` (pciutils 3.x; ``-D`` or multi-domain hosts add the domain).

Each device is a block: a header line at column 0, then TAB-indented detail lines, blocks separated by a blank
line::

    17:03.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])
    0000:1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]
    \tNUMA node: 0
    \tBus: primary=17, secondary=1b, subordinate=1b, sec-latency=0
    \t\tLnkCap:\tPort #3, Speed 32GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <4us, L1 <32us
    \t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)
    \t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
    \tKernel driver in use: pcieport

``LnkSta`` comes in three shapes: pciutils < 3.2 prints ``Speed 5GT/s, Width x8, TrErr- ...`` on one line, 3.2 to
3.7 annotate ``(ok)``/``(downgraded)``/``(strange)``, 3.8+ annotate only ``(downgraded)``/``(overdriven)`` and say
nothing for downstream and root ports. ``downgraded`` is True when a ``(downgraded)`` marker is printed or the
status speed/width is below the capability (so an empty downstream port at ``x0`` also reads as downgraded;
``dl_active`` tells those apart). BDFs are normalized to ``0000:17:00.0``. ``parent`` is the bridge whose
``Bus: secondary=`` is the device's bus (None when that bridge is not in the capture). Without ``-nn`` the
vendor/device split of the name uses the vendor names below (pci.ids spelling) or the ``<vendor> Device <id>``
shape pciutils prints for unnamed devices. Lines not modelled here are skipped. Read with a ``problems``
collector (docs/parsers.md), a device block with a bad line costs that device (``PCI device <bdf>``), not the file.
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = [
    "ACS_BITS",
    "ACS_REDIRECT_BITS",
    "DEVSTA_ERRORS",
    "VENDOR_NAMES",
    "AcsBits",
    "BusNumbers",
    "Link",
    "Lspci",
    "PciDevice",
    "dump",
    "normalize_bdf",
    "parse",
    "split_name",
]

# pci.ids vendor names (vendor id -> name) used to split "<vendor> <device>" when no "[vvvv:dddd]" is printed.
VENDOR_NAMES = {
    "10de": "NVIDIA Corporation",
    "15b3": "Mellanox Technologies",
    "1000": "Broadcom / LSI",
    "14e4": "Broadcom Inc. and subsidiaries",
    "8086": "Intel Corporation",
    "1022": "Advanced Micro Devices, Inc. [AMD]",
    "1002": "Advanced Micro Devices, Inc. [AMD/ATI]",
    "1a03": "ASPEED Technology, Inc.",
    "102b": "Matrox Electronics Systems Ltd.",
    "144d": "Samsung Electronics Co Ltd",
    "1344": "Micron Technology Inc",
    "11f8": "PMC-Sierra Inc.",
    "1556": "PLDA",
    "1d0f": "Amazon.com, Inc.",
    "1af4": "Red Hat, Inc.",
    "19e5": "Huawei Technologies Co., Ltd.",
    "1dd8": "AMD Pensando Systems",
    "1924": "Solarflare Communications",
    "10ee": "Xilinx Corporation",
    "1bb1": "Seagate Technology PLC",
    "1e0f": "KIOXIA Corporation",
    "1c5c": "SK hynix",
    "15b7": "Sandisk Corp",
    "1b4b": "Marvell Technology Group Ltd.",
    "1077": "QLogic Corp.",
    "10df": "Emulex Corporation",
    "1137": "Cisco Systems Inc",
    "103c": "Hewlett-Packard Company",
    "1590": "Hewlett Packard Enterprise",
    "1028": "Dell",
    "15d9": "Super Micro Computer Inc",
    "1d94": "Chengdu Haiguang IC Design Co., Ltd.",
}
ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
# ACSCtl bits that send peer-to-peer requests or completions up to the root complex, or block them
ACS_REDIRECT_BITS = {
    "ReqRedir": "req_redir",
    "CmpltRedir": "cmplt_redir",
    "UpstreamFwd": "upstream_fwd",
    "EgressCtrl": "egress_ctrl",
}
DEVSTA_ERRORS = ("CorrErr", "NonFatalErr", "FatalErr", "UnsupReq")

_HEX = "[0-9a-fA-F]"
_HEADER = re.compile(
    rf"^(?P<slot>(?:(?P<dom>{_HEX}{{4,8}}):)?(?P<bus>{_HEX}{{2}}):(?P<dev>{_HEX}{{2}})\.(?P<fn>[0-7]))"
    rf" (?P<cls>[^:]*?)(?: \[(?P<clsid>{_HEX}{{4}})\])?: (?P<rest>.*)$"
)
_NAME = re.compile(
    rf"^(?P<desc>.*?)(?: \[(?P<vid>{_HEX}{{4}}):(?P<did>{_HEX}{{4}})\])?(?: \(rev (?P<rev>{_HEX}{{2}})\))?"
    rf"(?: \(prog-if (?P<pi>{_HEX}{{2}})(?: \[[^\]]*\])?\))?\s*$"
)
_SUBSYSTEM = re.compile(rf"^(?P<desc>.*?)(?: \[(?P<id>{_HEX}{{4}}:{_HEX}{{4}})\])?\s*$")
_UNNAMED = re.compile(rf"^(?P<vendor>.+?) (?P<device>Device(?: {_HEX}{{4}})?)$")
_CAP_SUBSYSTEM = re.compile(r"^Capabilities: \[[0-9a-f]+\] Subsystem: (?P<value>.*)$")
_EXPRESS = re.compile(
    r"^Capabilities: \[[0-9a-f]+\] Express (?:\(v\d+\) )?(?P<type>[A-Za-z][A-Za-z /-]*?)(?: \(Slot[+-]\))?,"
)
_LNKCAP = re.compile(r"^LnkCap:\s*Port #\d+, Speed (?P<speed>[^,]+), Width x(?P<width>\d{1,9})")
_LNKSTA = re.compile(
    r"^LnkSta:\s*Speed (?P<speed>[^,(]+?)(?: \((?P<sn>[a-z]+)\))?, Width x(?P<width>\d{1,9})(?: \((?P<wn>[a-z]+)\))?"
    r"(?:,\s*(?P<flags>.*))?$"
)
_SPEED = re.compile(r"^(?P<gts>\d+(?:\.\d+)?) ?G(?:T|b)/s$")
_BUS = re.compile(rf"^Bus: primary=(?P<p>{_HEX}{{2}}), secondary=(?P<s>{_HEX}{{2}}), subordinate=(?P<sub>{_HEX}{{2}})")
_FLAG = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9]*)(?P<state>[+-])(?=\s|$)")
_DL_ACTIVE = re.compile(r"\bDLActive(?P<state>[+-])")


# the detail keys detail() reads; every other line of a device block is skipped without looking further
_DETAIL_KEYS = frozenset(
    {
        "Capabilities",
        "Subsystem",
        "Physical Slot",
        "NUMA node",
        "Kernel driver in use",
        "Kernel modules",
        "Bus",
        "LnkCap",
        "LnkSta",
        "ACSCap",
        "ACSCtl",
        "DevSta",
        "UESta",
        "CESta",
        "[PN] Part number",
        "[SN] Serial number",
    }
)


@dataclass(frozen=True, slots=True)
class Link:
    speed_gts: float | None  # None when lspci prints "unknown"
    width: int


@dataclass(frozen=True, slots=True)
class BusNumbers:
    primary: int
    secondary: int
    subordinate: int


@dataclass(frozen=True, slots=True)
class AcsBits:
    src_valid: bool
    trans_blk: bool
    req_redir: bool
    cmplt_redir: bool
    upstream_fwd: bool
    egress_ctrl: bool
    direct_trans: bool


@dataclass(frozen=True, slots=True)
class PciDevice:
    bdf: str  # "0000:17:00.0"
    class_name: str  # "PCI bridge", "3D controller", "Ethernet controller"
    class_id: str | None  # "0604" (printed with -nn, or when pciutils knows no subclass name)
    description: str  # the name as printed, without ids, revision and prog-if
    vendor: str | None
    device: str
    vendor_id: str | None  # "10de" (with -nn)
    device_id: str | None  # "2330" (with -nn)
    revision: str | None  # "a1"
    prog_if: str | None  # "00"
    subsystem: str | None = None
    subsystem_id: str | None = None  # "10de:16c1" (with -nn)
    physical_slot: str | None = None
    numa_node: int | None = None
    kernel_driver: str | None = None
    kernel_modules: tuple[str, ...] = ()
    pcie_port_type: str | None = None  # "Endpoint", "Root Port", "Upstream Port", "Downstream Port", ...
    link_cap: Link | None = None
    link_status: Link | None = None
    downgraded: bool | None = None  # None without LnkSta
    dl_active: bool | None = None  # LnkSta DLActive flag
    bus: BusNumbers | None = None  # bridges only
    parent: str | None = None  # BDF of the bridge whose secondary bus is this device's bus
    acs_cap: AcsBits | None = None
    acs: AcsBits | None = None  # ACSCtl: what the bridge enforces
    dev_status_errors: frozenset[str] = frozenset()  # DevSta error bits set (CorrErr, NonFatalErr, ...)
    aer_uncorrectable: frozenset[str] = frozenset()  # UESta bits set
    aer_correctable: frozenset[str] = frozenset()  # CESta bits set
    part_number: str | None = None  # VPD [PN]
    serial_number: str | None = None  # VPD [SN]


@dataclass(frozen=True, slots=True)
class Lspci:
    devices: tuple[PciDevice, ...]

    def by_bdf(self) -> dict[str, PciDevice]:
        return {d.bdf: d for d in self.devices}

    def acs_redirect(self) -> dict[str, tuple[str, ...]]:
        """Functions whose ACSCtl redirects or blocks peer-to-peer traffic, with the bits (:data:`ACS_REDIRECT_BITS`)
        that do; SrcValid, TransBlk and DirectTrans alone leave peer traffic where it is."""
        out: dict[str, tuple[str, ...]] = {}
        for d in self.devices:
            bits = () if d.acs is None else tuple(n for n, a in ACS_REDIRECT_BITS.items() if getattr(d.acs, a))
            if bits:
                out[d.bdf] = bits
        return out


@dataclass(slots=True)
class _Device:
    header: dict[str, object]
    fields: dict[str, object] = field(default_factory=dict)
    status_notes: tuple[str | None, str | None] = (None, None)


def normalize_bdf(text: str) -> str | None:
    """``17:00.0`` / ``0000:17:00.0`` / ``00000000:17:00.0`` -> ``0000:17:00.0``; None when not a BDF."""
    m = re.match(rf"^(?:({_HEX}{{1,8}}):)?({_HEX}{{2}}):({_HEX}{{2}})\.([0-7])$", text.strip())
    if m is None:
        return None
    return f"{int(m[1] or '0', 16):04x}:{m[2].lower()}:{m[3].lower()}.{m[4]}"


def split_name(description: str, vendor_id: str | None) -> tuple[str | None, str]:
    """Split ``<vendor name> <device name>`` as pciutils joins them."""
    names = [VENDOR_NAMES[vendor_id]] if vendor_id in VENDOR_NAMES else []
    names += sorted(VENDOR_NAMES.values(), key=len, reverse=True)
    for name in names:
        if description.startswith(name + " "):
            return name, description[len(name) + 1 :]
    if m := _UNNAMED.match(description):
        return m["vendor"], m["device"]
    return None, description


_DETAIL_START = re.compile(r"[\w\[]")  # `Capabilities: ...`, `[PN] Part number: ...`, `TrErr- ...`


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.number = 0
        self.devices: list[_Device] = []
        self.seen: set[str] = set()

    def fail(self, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.number)

    def header(self, line: str) -> None:
        m = _HEADER.match(line)
        if m is None:
            raise self.fail(f"expected a device line '<bus>:<dev>.<fn> <class>: <name>', got {line[:60]!r}")
        bdf = normalize_bdf(m["slot"])
        if bdf is None or bdf in self.seen:
            raise self.fail(f"expected each device once, got {m['slot']} again")
        self.seen.add(bdf)
        n = _NAME.match(m["rest"])
        if n is None:  # pragma: no cover - the pattern accepts every string
            raise self.fail("expected a device name")
        vid = None if n["vid"] is None else n["vid"].lower()
        did = None if n["did"] is None else n["did"].lower()
        vendor, device = split_name(n["desc"], vid)
        if device == "Device" and did is not None:  # -nn prints "<vendor> Device [vvvv:dddd]" for unnamed devices
            device = f"Device {did}"
        self.devices.append(
            _Device(
                {
                    "bdf": bdf,
                    "class_name": m["cls"],
                    "class_id": None if m["clsid"] is None else m["clsid"].lower(),
                    "description": n["desc"],
                    "vendor": vendor,
                    "device": device,
                    "vendor_id": vid,
                    "device_id": did,
                    "revision": n["rev"],
                    "prog_if": n["pi"],
                }
            )
        )

    def put(self, name: str, value: object) -> None:
        fields = self.devices[-1].fields
        if name in fields:
            raise self.fail(f"expected one {name} line per device")
        fields[name] = value

    def speed(self, token: str) -> float | None:
        token = token.strip()
        if token == "unknown":
            return None
        m = _SPEED.match(token)
        if m is None:
            raise self.fail(f"expected a link speed like '16GT/s', got {token[:20]!r}")
        return float(m["gts"])

    def flags(self, text: str) -> dict[str, bool]:
        return {m["name"]: m["state"] == "+" for m in _FLAG.finditer(text)}

    def acs(self, text: str, key: str) -> AcsBits:
        bits = self.flags(text)
        missing = [b for b in ACS_BITS if b not in bits]
        if missing:
            raise self.fail(f"expected {key} bits {' '.join(ACS_BITS)} (+/-), missing {' '.join(missing)}")
        return AcsBits(*(bits[b] for b in ACS_BITS))

    def detail(self, text: str, following: str) -> None:
        if not self.devices:
            raise self.fail(f"expected a device line before {text[:40]!r}")
        key, _, value = text.partition(":")
        if key not in _DETAIL_KEYS:
            return  # most of lspci -vvv: lines not modelled
        value = value.strip()
        if key == "Capabilities" and "] Subsystem: " in text and (c := _CAP_SUBSYSTEM.match(text)):
            key, value = "Subsystem", c["value"].strip()  # bridges: the SSVID capability
        if key == "Subsystem":
            s = _SUBSYSTEM.match(value)
            self.put("subsystem", value if s is None else s["desc"])
            self.put("subsystem_id", None if s is None or s["id"] is None else s["id"].lower())
        elif key == "Physical Slot":
            self.put("physical_slot", value)
        elif key == "NUMA node":
            if not re.fullmatch(r"-?\d{1,9}", value):
                raise self.fail(f"expected a NUMA node number, got {value[:20]!r}")
            self.put("numa_node", int(value))
        elif key == "Kernel driver in use":
            self.put("kernel_driver", value)
        elif key == "Kernel modules":
            self.put("kernel_modules", tuple(v.strip() for v in value.split(",") if v.strip()))
        elif key == "Bus":
            m = _BUS.match(text)
            if m is None:
                raise self.fail("expected 'Bus: primary=bb, secondary=bb, subordinate=bb'")
            self.put("bus", BusNumbers(int(m["p"], 16), int(m["s"], 16), int(m["sub"], 16)))
        elif key == "Capabilities" and "] Express " in text and (m := _EXPRESS.match(text)):
            self.put("pcie_port_type", m["type"])
        elif key == "LnkCap":
            if (m := _LNKCAP.match(text)) is None:
                raise self.fail("expected 'LnkCap: Port #N, Speed <s>, Width x<w>, ...'")
            self.put("link_cap", Link(self.speed(m["speed"]), int(m["width"])))
        elif key == "LnkSta":
            self.link_status(text, following)
        elif key in ("ACSCap", "ACSCtl"):
            self.put("acs_cap" if key == "ACSCap" else "acs", self.acs(value, key))
        elif key in ("DevSta", "UESta", "CESta"):
            bits = self.flags(value)
            wanted = DEVSTA_ERRORS if key == "DevSta" else tuple(bits)
            name = {"DevSta": "dev_status_errors", "UESta": "aer_uncorrectable", "CESta": "aer_correctable"}[key]
            self.put(name, frozenset(b for b in wanted if bits.get(b)))
        elif key == "[PN] Part number":
            self.put("part_number", value)
        elif key == "[SN] Serial number":
            self.put("serial_number", value)

    def link_status(self, text: str, following: str) -> None:
        m = _LNKSTA.match(text)
        if m is None:
            raise self.fail("expected 'LnkSta: Speed <s>, Width x<w>'")
        self.put("link_status", Link(self.speed(m["speed"]), int(m["width"])))
        self.devices[-1].status_notes = (m["sn"], m["wn"])
        flags = m["flags"] if m["flags"] is not None else following
        if d := _DL_ACTIVE.search(flags or ""):
            self.put("dl_active", d["state"] == "+")

    def result(self) -> Lspci:
        bridges: dict[tuple[str, int], str] = {}
        for d in self.devices:
            bus = d.fields.get("bus")
            if isinstance(bus, BusNumbers):
                domain = str(d.header["bdf"])[:-8]
                bridges.setdefault((domain, bus.secondary), str(d.header["bdf"]))
        out = []
        for d in self.devices:
            bdf = str(d.header["bdf"])
            parent = bridges.get((bdf[:-8], int(bdf[-7:-5], 16)))
            fields = dict(d.fields)
            fields["parent"] = None if parent == bdf else parent
            fields["downgraded"] = _downgraded(fields.get("link_cap"), fields.get("link_status"), d.status_notes)
            out.append(PciDevice(**d.header, **fields))  # type: ignore[arg-type]
        return Lspci(tuple(out))


def _downgraded(cap: object, status: object, notes: tuple[str | None, str | None]) -> bool | None:
    if not isinstance(status, Link):
        return None
    if "downgraded" in notes:
        return True
    if not isinstance(cap, Link):
        return False
    slower = None not in (status.speed_gts, cap.speed_gts) and (status.speed_gts or 0) < (cap.speed_gts or 0)
    return slower or status.width < cap.width


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> Lspci:
    """Read ``lspci -vvv`` (optionally ``-nn``/``-D``) output into one record per device.

    With ``problems`` a device block that cannot be read costs that device: one problem at its bad line, the
    rest of the block skipped, the other devices read. A block starts at a device line, or at the first line
    after a blank one (one indented there that starts with no word, number or ``[``, no detail of the device
    above, is a garbled device line); a file whose every block is bad is still refused.
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    parser = _Parser(source)
    lines = text.split("\n")
    block: _Block | None = None
    found = 0
    previous_blank = True
    for index, raw in enumerate(lines):
        stripped = raw.strip()
        if not stripped:
            previous_blank = True
            continue
        parser.number = index + 1
        starts = block is None or previous_blank or (raw[0] not in " \t" and _HEADER.match(raw) is not None)
        previous_blank = False
        if starts:
            _close(parser, block)
            block = _Block(parser.number, len(parser.devices))
            found += 1
        assert block is not None
        if block.bad:
            continue
        try:
            if raw[0] in " \t" and len(parser.devices) == block.devices and not _DETAIL_START.match(stripped):
                # garbage after a blank line, not a detail of the device above: a garbled device line
                raise parser.fail(f"expected a device line '<bus>:<dev>.<fn> <class>: <name>', got {stripped[:40]!r}")
            if raw[0] in " \t":
                following = ""
                if stripped.startswith("LnkSta"):  # only LnkSta reads the next line (old pciutils wrap its flags)
                    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
                    following = following if following.startswith("TrErr") else ""
                parser.detail(stripped, following)
            else:
                parser.header(raw.rstrip())
        except ParseError as exc:
            block.bad = True
            added = parser.devices[block.devices :]
            log.record(
                exc, f"PCI device {added[0].header['bdf']}" if added else f"the device block at line {block.line}"
            )
    _close(parser, block)
    if not parser.devices:
        if log.problems and found:
            raise log.problems[0].error()
        raise ParseError(source, "expected lspci -vvv output, got no device line", line=1)
    return parser.result()


@dataclass(slots=True)
class _Block:
    """One device block being read: its first line, how many devices preceded it, whether a line failed."""

    line: int
    devices: int
    bad: bool = False


def _close(parser: _Parser, block: _Block | None) -> None:
    """A bad block leaves nothing: its devices are dropped (their BDFs may come again)."""
    if block is not None and block.bad:
        for dropped in parser.devices[block.devices :]:
            parser.seen.discard(str(dropped.header["bdf"]))
        del parser.devices[block.devices :]


# --- dump: records -> lspci -vvv text ---------------------------------------------------------------

_PROG_IF_NAMES = {("PCI bridge", "00"): "Normal decode"}
_UE_BITS = ("DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP", "ECRC", "UnsupReq")
_UE_TAIL = ("ACSViol",)
_CE_BITS = ("RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "AdvNonFatalErr")


def _speed_text(gts: float | None) -> str:
    if gts is None:
        return "unknown"
    return f"{gts:g}GT/s"


def _bits(names: tuple[str, ...], on: frozenset[str]) -> str:
    """``Name+``/``Name-`` for ``names``, then any set bit the list lacks (newer pciutils print more)."""
    extra = tuple(sorted(on - set(names)))
    return " ".join(f"{n}{'+' if n in on else '-'}" for n in (*names, *extra))


def _acs_text(acs: AcsBits) -> str:
    return " ".join(f"{name}{'+' if bit else '-'}" for name, bit in zip(ACS_BITS, astuple(acs), strict=True))


def _header(d: PciDevice, domains: bool) -> str:
    slot = d.bdf if domains else d.bdf[5:]
    cls = d.class_name + (f" [{d.class_id}]" if d.class_id else "")
    name = d.description
    if d.vendor_id and d.device_id:
        name += f" [{d.vendor_id}:{d.device_id}]"
    if d.revision:
        name += f" (rev {d.revision})"
    if d.prog_if:
        label = _PROG_IF_NAMES.get((d.class_name, d.prog_if))
        name += f" (prog-if {d.prog_if}{f' [{label}]' if label else ''})"
    return f"{slot} {cls}: {name}"


def _subsystem(d: PciDevice) -> str:
    return f"{d.subsystem}{f' [{d.subsystem_id}]' if d.subsystem_id else ''}"


def _link_status(d: PciDevice) -> list[str]:
    sta, cap = d.link_status, d.link_cap
    if sta is None:
        return []
    slower = (
        cap is not None and None not in (sta.speed_gts, cap.speed_gts) and (sta.speed_gts or 0) < (cap.speed_gts or 0)
    )
    narrower = cap is not None and sta.width < cap.width
    speed_note = "downgraded" if slower or (d.downgraded and not narrower) else "ok"
    width_note = "downgraded" if narrower else "ok"
    lines = [f"\t\tLnkSta:\tSpeed {_speed_text(sta.speed_gts)} ({speed_note}), Width x{sta.width} ({width_note})"]
    if d.dl_active is not None:
        lines.append(f"\t\t\tTrErr- Train- SlotClk+ DLActive{'+' if d.dl_active else '-'} BWMgmt- ABWMgmt-")
    return lines


def _express(d: PciDevice) -> list[str]:
    if d.pcie_port_type is None:
        return []
    slot = " (Slot+)" if d.pcie_port_type in ("Downstream Port", "Root Port") else ""
    lines = [f"\tCapabilities: [{'68' if d.bus else '60'}] Express (v2) {d.pcie_port_type}{slot}, MSI 00"]
    if d.dev_status_errors:
        lines.append(f"\t\tDevSta:\t{_bits(DEVSTA_ERRORS, d.dev_status_errors)} AuxPwr- TransPend-")
    if d.link_cap is not None:
        cap = d.link_cap
        lines.append(
            f"\t\tLnkCap:\tPort #0, Speed {_speed_text(cap.speed_gts)}, Width x{cap.width}, ASPM not supported"
        )
    return lines + _link_status(d)


def _dump_device(d: PciDevice, domains: bool) -> list[str]:
    lines = [_header(d, domains)]
    bridge = d.bus is not None
    if d.subsystem is not None and not bridge:
        lines.append(f"\tSubsystem: {_subsystem(d)}")
    if d.physical_slot is not None:
        lines.append(f"\tPhysical Slot: {d.physical_slot}")
    if d.numa_node is not None:
        lines.append(f"\tNUMA node: {d.numa_node}")
    if d.bus is not None:
        b = d.bus
        lines.append(
            f"\tBus: primary={b.primary:02x}, secondary={b.secondary:02x}, "
            f"subordinate={b.subordinate:02x}, sec-latency=0"
        )
    lines += _express(d)
    if d.part_number is not None or d.serial_number is not None:
        lines += ["\tCapabilities: [48] Vital Product Data", "\t\tRead-only fields:"]
        if d.part_number is not None:
            lines.append(f"\t\t\t[PN] Part number: {d.part_number}")
        if d.serial_number is not None:
            lines.append(f"\t\t\t[SN] Serial number: {d.serial_number}")
        lines.append("\t\tEnd")
    if d.subsystem is not None and bridge:
        lines.append(f"\tCapabilities: [b0] Subsystem: {_subsystem(d)}")
    if d.acs_cap is not None or d.acs is not None:
        lines.append("\tCapabilities: [170 v1] Access Control Services")
        if d.acs_cap is not None:
            lines.append(f"\t\tACSCap:\t{_acs_text(d.acs_cap)}")
        if d.acs is not None:
            lines.append(f"\t\tACSCtl:\t{_acs_text(d.acs)}")
    if d.aer_uncorrectable or d.aer_correctable:
        lines += [
            "\tCapabilities: [100 v1] Advanced Error Reporting",
            f"\t\tUESta:\t{_bits(_UE_BITS + _UE_TAIL, d.aer_uncorrectable)}",
            f"\t\tCESta:\t{_bits(_CE_BITS, d.aer_correctable)}",
        ]
    if d.kernel_driver is not None:
        lines.append(f"\tKernel driver in use: {d.kernel_driver}")
    if d.kernel_modules:
        lines.append(f"\tKernel modules: {', '.join(d.kernel_modules)}")
    return lines


def dump(record: Lspci) -> str:
    """``lspci -vvv`` text (``-nn`` shape where the record has ids, ``-D`` shape when a domain is not 0000).

    Only the lines this module reads are written, in the order and spelling pciutils 3.2+ prints them;
    a real capture has more (Control, Status, Region, other capabilities), which :func:`parse` skips. The
    ``DevSta`` line and the Advanced Error Reporting capability are written when an error bit is set, the
    ``DLActive`` flags line when the record has the flag, as a device reads the same without them -- that
    keeps the twin's per-host capture small.
    """
    domains = any(not d.bdf.startswith("0000:") for d in record.devices)
    blocks = ["\n".join(_dump_device(d, domains)) for d in record.devices]
    return "\n\n".join(blocks) + "\n"
