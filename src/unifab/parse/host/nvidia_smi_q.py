r"""``nvidia-smi -q -x`` (XML, DTD ``nvsmi_device_v10`` .. ``v13``, drivers r4xx .. r57x): per-GPU health, PCIe.

Root ``<nvidia_smi_log>`` with ``driver_version``, ``cuda_version``, ``attached_gpus`` and one ``<gpu id="...">``
per GPU. The fields read, and the driver-dependent spellings they come in:

- ``pci/pci_bus_id`` (``00000000:01:00.0``, upper-case hex on some drivers) -> normalized ``0000:01:00.0``;
- ``pci/pci_gpu_link_info/pcie_gen/{max,current}_link_gen`` and ``link_widths/{max,current}_link_width`` (``16x``);
- ``temperature/gpu_temp`` (``27 C``); power from ``gpu_power_readings`` (r530+) or ``power_readings`` (older):
  ``power_draw``, else ``average_power_draw`` / ``instant_power_draw`` (r550+), ``current_power_limit`` or
  ``power_limit``;
- ``ecc_errors/{volatile,aggregate}``: ``single_bit/total`` + ``double_bit/total`` (older drivers) or
  ``sram_correctable`` + ``dram_correctable`` and ``sram_uncorrectable[_parity|_secded]`` + ``dram_uncorrectable``
  (r510+), summed into ``sbe`` (correctable) and ``dbe`` (uncorrectable) totals;
- ``retired_pages`` (pre-Ampere page retirement) and ``remapped_rows`` (Ampere+; ``N/A`` with MIG on);
- ``clocks_event_reasons/clocks_event_reason_*`` (r530+) or ``clocks_throttle_reasons/clocks_throttle_reason_*``
  (older): the ``Active`` ones, named without the prefix (``sw_power_cap``, ``hw_thermal_slowdown``, ...);
- ``mig_mode/current_mig``, ``gpu_reset_status``, ``fabric/{state,status}``;
- ``fabric/cliqueId`` and ``fabric/clusterUuid`` (``nvidia-smi -q``'s ``CliqueId`` / ``ClusterUUID`` of the
  Fabric section, ``--query-gpu=fabric.cliqueId,fabric.clusterUuid``; the snake_case spellings are read too): on
  a multi-node NVLink system (GB200 NVL72) the GPUs of one NVLink domain share both. A UUID of all zeros reads
  as None (the GPU is in no NVLink partition); a clique that is not a number or a UUID that is not one is an
  error. :attr:`NvidiaSmiQ.nvlink_domains` gives the host's domains as ``<ClusterUUID>.<CliqueId>``.

``N/A``, ``[N/A]``, ``Not Supported`` and ``Requested functionality has been deprecated`` read as None.
``driver_version``/``cuda_version`` are per host and live on the top record.

XML safety: the text is parsed with expat directly (no network, no external DTD: nvidia-smi's ``<!DOCTYPE
nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">`` is never fetched), and a document with an internal DTD subset
or any ``<!ENTITY>`` declaration is rejected, so no entity can be expanded. Errors carry expat's line number
(the same value ElementTree's ``ParseError.position`` reports).

With a :class:`~unifab.errors.ParseProblems` collector a value that cannot be read (a number, ``Yes``/``No`` or
UUID off its grammar) costs that field, read as None and named at its element's line (an ECC total with one bad
part is None, not a smaller sum); a ``<gpu>`` without a readable PCI address costs that GPU. XML that is not
well-formed, or another root element, still costs the file (expat stops at the first error).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import astuple, dataclass
from xml.parsers import expat
from xml.sax.saxutils import escape

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts
from unifab.parse.host.lspci import normalize_bdf

__all__ = [
    "CLOCKS_EVENT_REASONS",
    "DOCTYPE",
    "NOT_AVAILABLE",
    "EccCounts",
    "Gpu",
    "NvidiaSmiQ",
    "RemappedRows",
    "XmlDocument",
    "dump",
    "parse",
    "read_xml",
    "smi_bus_id",
]

NOT_AVAILABLE = frozenset(
    {"N/A", "[N/A]", "Not Supported", "[Not Supported]", "Requested functionality has been deprecated", "Unknown Error"}
)
_CORRECTABLE = ("sram_correctable", "dram_correctable")
_UNCORRECTABLE = ("sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable")
_REASON_PREFIXES = ("clocks_event_reason_", "clocks_throttle_reason_")
_UUID = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
_NO_UUID = "00000000-0000-0000-0000-000000000000"
_QUANTITY = re.compile(r"^(?P<n>-?\d{1,18}(?:\.\d+)?)\s*(?P<unit>[A-Za-z%/]*)$")


class _Rejected(Exception):
    """An XML construct refused for safety (internal DTD subset, entity declaration)."""


@dataclass(frozen=True, slots=True)
class XmlDocument:
    """A parsed XML document with the line each element starts on."""

    root: ET.Element
    lines: dict[int, int]  # id(element) -> 1-based line

    def line(self, element: ET.Element) -> int | None:
        return self.lines.get(id(element))


def read_xml(text: str, source: str) -> XmlDocument:
    """Parse ``text`` with expat into an ElementTree, refusing DTD internal subsets and entity declarations.

    Prompt and fence lines pasted before and after the document are left out (an XML declaration must open the
    text), and line numbers still count from the text's own first line."""
    if not text.strip():
        raise ParseError(source, "expected an XML document, got empty text", line=1)
    text = blank_prompts(text)
    body = text.lstrip("\r\n")
    above = text[: len(text) - len(body)].count("\n")  # lines left out above the document
    text = body
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber + above

    def doctype(name: str, system_id: str | None, public_id: str | None, internal_subset: int) -> None:
        if internal_subset:
            raise _Rejected(f"expected a DOCTYPE without an internal subset, got one on <!DOCTYPE {name}>")

    def entity(name: str, *_: object) -> None:
        raise _Rejected(f"expected no <!ENTITY> declarations, got {name!r}")

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    try:
        # XML ends lines at CR too; make LF the only line end so expat's line numbers count "\n" like every parser.
        parser.Parse(text.replace("\r\n", "\n").replace("\r", " "), True)
    except expat.ExpatError as exc:
        reason = f"expected well-formed XML ({expat.ErrorString(exc.code)})"
        raise ParseError(source, reason, line=exc.lineno + above) from None
    except _Rejected as exc:
        raise ParseError(source, str(exc), line=parser.CurrentLineNumber + above) from None
    except (UnicodeError, ValueError) as exc:
        raise ParseError(source, f"expected XML text ({exc})", line=1) from None
    return XmlDocument(builder.close(), lines)


@dataclass(frozen=True, slots=True)
class EccCounts:
    sbe: int | None  # correctable (single-bit) errors, summed over the printed sources
    dbe: int | None  # uncorrectable (double-bit) errors


@dataclass(frozen=True, slots=True)
class RemappedRows:
    correctable: int | None
    uncorrectable: int | None
    pending: bool | None
    failure: bool | None


@dataclass(frozen=True, slots=True)
class Gpu:
    pci_bus_id: str  # "0000:01:00.0"
    product_name: str | None
    uuid: str | None
    serial: str | None
    vbios_version: str | None
    minor_number: int | None
    gpu_module_id: int | None  # HGX/SXM slot
    board_part_number: str | None
    pcie_gen_current: int | None
    pcie_gen_max: int | None
    pcie_width_current: int | None
    pcie_width_max: int | None
    pcie_replay_count: int | None
    performance_state: str | None  # "P0"
    temperature_c: int | None
    memory_temperature_c: int | None
    power_draw_w: float | None
    power_limit_w: float | None
    ecc_mode: str | None  # current_ecc: "Enabled" | "Disabled"
    ecc_volatile: EccCounts
    ecc_aggregate: EccCounts
    retired_pages_sbe: int | None
    retired_pages_dbe: int | None
    retired_pages_pending: bool | None
    remapped_rows: RemappedRows | None  # None when N/A (pre-Ampere, or MIG enabled)
    mig_mode: str | None  # current_mig: "Enabled" | "Disabled"; None when N/A
    clocks_event_reasons: tuple[str, ...]  # active reasons, e.g. ("gpu_idle",) or ("sw_power_cap",)
    reset_required: bool | None
    drain_and_reset_recommended: bool | None
    fabric_state: str | None
    fabric_status: str | None
    fabric_clique_id: int | None = None  # NVLink clique (fabric/cliqueId); None off NVLink-switch systems
    fabric_cluster_uuid: str | None = None  # NVLink domain (fabric/clusterUuid), lower case


@dataclass(frozen=True, slots=True)
class NvidiaSmiQ:
    timestamp: str | None
    driver_version: str | None
    cuda_version: str | None
    attached_gpus: int | None  # as reported; may exceed len(gpus) in trimmed captures
    gpus: tuple[Gpu, ...]

    @property
    def nvlink_domains(self) -> tuple[str, ...]:
        """``<ClusterUUID>.<CliqueId>`` of the GPUs that report both, sorted, each once (what Topograph and GPU
        feature discovery's ``nvidia.com/gpu.clique`` name an NVLink domain by)."""
        return tuple(
            sorted(
                {
                    f"{g.fabric_cluster_uuid}.{g.fabric_clique_id}"
                    for g in self.gpus
                    if g.fabric_cluster_uuid is not None and g.fabric_clique_id is not None
                }
            )
        )


_PARTS: dict[str, tuple[str, ...]] = {}


def _find(parent: ET.Element, path: str) -> ET.Element | None:
    """``parent.find(path)`` for a path of plain tags (``a/b``), the same element (the first in document order)
    without ElementPath: a plain tag's find/findall run in C, a path with ``/`` goes through Python."""
    parts = _PARTS.get(path)
    if parts is None:
        parts = _PARTS[path] = tuple(path.split("/"))  # the module's own literal paths: a few dozen
    if len(parts) == 1:
        return parent.find(path)
    return _find_parts(parent, parts, 0)


def _find_parts(parent: ET.Element, parts: tuple[str, ...], at: int) -> ET.Element | None:
    if at == len(parts) - 1:
        return parent.find(parts[at])
    for child in parent.findall(parts[at]):
        hit = _find_parts(child, parts, at + 1)
        if hit is not None:
            return hit
    return None


class _Reader:
    def __init__(self, doc: XmlDocument, source: str, log: ParseProblems) -> None:
        self.doc = doc
        self.source = source
        self.log = log
        self.where = "the host"  # whose values are being read, for what a bad one costs

    def fail(self, element: ET.Element, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.doc.line(element))

    def bad(self, element: ET.Element, expected: str) -> None:
        """A value off its grammar: raised when strict, else named and read as None (it costs that field)."""
        self.log.add(expected, f"<{element.tag}> of {self.where} (read as unknown)", line=self.doc.line(element))

    def text(self, parent: ET.Element, path: str) -> str | None:
        hit = self.first_text(parent, path)
        return None if hit is None else hit[1]

    def first_text(self, parent: ET.Element, *paths: str) -> tuple[ET.Element, str] | None:
        """The first of ``paths`` that holds a value (not empty, not N/A): its element and stripped text."""
        for path in paths:
            el = _find(parent, path)
            value = None if el is None or el.text is None else el.text.strip()
            if el is not None and value and value not in NOT_AVAILABLE:
                return el, value
        return None

    def number(
        self, parent: ET.Element, *paths: str, unit: str = "", cast: Callable[[str], float] = float
    ) -> float | None:
        hit = self.first_text(parent, *paths)
        if hit is None:
            return None
        element, value = hit
        m = _QUANTITY.match(value)
        if m is None or (m["unit"] and m["unit"] != unit):
            self.bad(
                element, f"expected <{element.tag}> as a number{' in ' + unit if unit else ''}, got {value[:30]!r}"
            )
            return None
        try:
            return cast(m["n"])
        except ValueError:
            pass  # reported below, outside the handler (no chained ValueError)
        self.bad(element, f"expected <{element.tag}> as an integer, got {value[:30]!r}")
        return None

    def integer(self, parent: ET.Element, *paths: str, unit: str = "") -> int | None:
        value = self.number(parent, *paths, unit=unit, cast=int)
        return None if value is None else int(value)

    def yes_no(self, parent: ET.Element, path: str) -> bool | None:
        hit = self.first_text(parent, path)
        if hit is None:
            return None
        element, value = hit
        if value not in ("Yes", "No"):
            self.bad(element, f"expected <{element.tag}> Yes or No, got {value[:30]!r}")
            return None
        return value == "Yes"

    def ecc(self, gpu: ET.Element, which: str) -> EccCounts:
        block = _find(gpu, f"ecc_errors/{which}")
        if block is None:
            return EccCounts(None, None)
        if block.find("single_bit") is not None or block.find("double_bit") is not None:
            return EccCounts(self.integer(block, "single_bit/total"), self.integer(block, "double_bit/total"))
        return EccCounts(self.sum(block, _CORRECTABLE), self.sum(block, _UNCORRECTABLE))

    def sum(self, block: ET.Element, names: tuple[str, ...]) -> int | None:
        known = len(self.log.problems)
        values = [self.integer(block, name) for name in names]
        if len(self.log.problems) != known:  # a part could not be read: the total is unknown, not smaller
            return None
        present = [v for v in values if v is not None]
        return sum(present) if present else None

    def remapped(self, gpu: ET.Element) -> RemappedRows | None:
        block = gpu.find("remapped_rows")
        if block is None or len(block) == 0:
            return None
        return RemappedRows(
            self.integer(block, "remapped_row_corr"),
            self.integer(block, "remapped_row_unc"),
            self.yes_no(block, "remapped_row_pending"),
            self.yes_no(block, "remapped_row_failure"),
        )

    def reasons(self, gpu: ET.Element) -> tuple[str, ...]:
        block = gpu.find("clocks_event_reasons")
        if block is None:
            block = gpu.find("clocks_throttle_reasons")
        if block is None:
            return ()
        out = []
        for child in block:
            name = child.tag
            for prefix in _REASON_PREFIXES:
                name = name.removeprefix(prefix)
            if (child.text or "").strip() == "Active":
                out.append(name)
        return tuple(out)

    def cluster_uuid(self, gpu: ET.Element) -> str | None:
        hit = self.first_text(gpu, "fabric/clusterUuid", "fabric/cluster_uuid")
        if hit is None:
            return None
        element, value = hit
        if not _UUID.match(value):
            self.bad(element, f"expected <{element.tag}> as a UUID, got {value[:40]!r}")
            return None
        return None if value == _NO_UUID else value.lower()

    def gpu(self, el: ET.Element) -> Gpu:
        raw_id = self.text(el, "pci/pci_bus_id") or el.get("id") or ""
        bus_id = normalize_bdf(raw_id)
        if bus_id is None:
            raise self.fail(el, f"expected <gpu id=...> or <pci_bus_id> as a PCI address, got {raw_id[:30]!r}")
        self.where = f"GPU {bus_id}"
        power = ("gpu_power_readings", "power_readings")
        link = "pci/pci_gpu_link_info"
        return Gpu(
            pci_bus_id=bus_id,
            product_name=self.text(el, "product_name"),
            uuid=self.text(el, "uuid"),
            serial=self.text(el, "serial"),
            vbios_version=self.text(el, "vbios_version"),
            minor_number=self.integer(el, "minor_number"),
            gpu_module_id=self.integer(el, "gpu_module_id", "platformInfo/module_id"),
            board_part_number=self.text(el, "board_part_number"),
            pcie_gen_current=self.integer(el, f"{link}/pcie_gen/current_link_gen"),
            pcie_gen_max=self.integer(el, f"{link}/pcie_gen/max_link_gen"),
            pcie_width_current=self.integer(el, f"{link}/link_widths/current_link_width", unit="x"),
            pcie_width_max=self.integer(el, f"{link}/link_widths/max_link_width", unit="x"),
            pcie_replay_count=self.integer(el, "pci/replay_counter"),
            performance_state=self.text(el, "performance_state"),
            temperature_c=self.integer(el, "temperature/gpu_temp", unit="C"),
            memory_temperature_c=self.integer(el, "temperature/memory_temp", unit="C"),
            power_draw_w=self.number(
                el,
                *(f"{p}/{k}" for p in power for k in ("power_draw", "average_power_draw", "instant_power_draw")),
                unit="W",
            ),
            power_limit_w=self.number(
                el, *(f"{p}/{k}" for p in power for k in ("current_power_limit", "power_limit")), unit="W"
            ),
            ecc_mode=self.text(el, "ecc_mode/current_ecc"),
            ecc_volatile=self.ecc(el, "volatile"),
            ecc_aggregate=self.ecc(el, "aggregate"),
            retired_pages_sbe=self.integer(el, "retired_pages/multiple_single_bit_retirement/retired_count"),
            retired_pages_dbe=self.integer(el, "retired_pages/double_bit_retirement/retired_count"),
            retired_pages_pending=self.yes_no(el, "retired_pages/pending_retirement"),
            remapped_rows=self.remapped(el),
            mig_mode=self.text(el, "mig_mode/current_mig"),
            clocks_event_reasons=self.reasons(el),
            reset_required=self.yes_no(el, "gpu_reset_status/reset_required"),
            drain_and_reset_recommended=self.yes_no(el, "gpu_reset_status/drain_and_reset_recommended"),
            fabric_state=self.text(el, "fabric/state"),
            fabric_status=self.text(el, "fabric/status"),
            fabric_clique_id=self.integer(el, "fabric/cliqueId", "fabric/clique_id"),
            fabric_cluster_uuid=self.cluster_uuid(el),
        )


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> NvidiaSmiQ:
    """Read ``nvidia-smi -q -x`` XML into per-GPU records.

    With ``problems`` a bad value costs that field and a GPU without a PCI address that GPU (see the module
    docstring); a document with problems and no GPU or version read raises the first.
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    doc = read_xml(text, source)
    root = doc.root
    reader = _Reader(doc, source, log)
    if root.tag != "nvidia_smi_log":
        raise reader.fail(root, f"expected the root element <nvidia_smi_log>, got <{root.tag}>")
    attached = reader.integer(root, "attached_gpus")
    gpus = []
    for el in root.findall("gpu"):
        reader.where = f"the GPU at line {doc.line(el)}"
        with log.skipping(f"the GPU at line {doc.line(el)}"):
            gpus.append(reader.gpu(el))
    record = NvidiaSmiQ(
        timestamp=reader.text(root, "timestamp"),
        driver_version=reader.text(root, "driver_version"),
        cuda_version=reader.text(root, "cuda_version"),
        attached_gpus=attached,
        gpus=tuple(gpus),
    )
    if log.problems and not gpus and record.driver_version is None and record.cuda_version is None:
        raise log.problems[0].error()
    return record


# --- dump: records -> nvidia-smi -q -x XML ----------------------------------------------------------

DOCTYPE = '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">'
# r530+ names, in the order nvidia-smi prints them
CLOCKS_EVENT_REASONS = (
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
)
_NA = "N/A"


def _value(value: object, unit: str = "") -> str:
    if value is None:
        return _NA
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float):
        return f"{value:.2f}{unit}"
    return f"{value}{unit}"


class _Writer:
    """Indented XML the way nvidia-smi prints it (4 spaces per level, one element per line)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def leaf(self, tag: str, value: object, unit: str = "") -> None:
        """One ``<tag>value</tag>`` line; nothing for None (nvidia-smi's ``N/A`` reads as None too)."""
        if value is not None:
            self.lines.append(f"{'    ' * self.depth}<{tag}>{escape(_value(value, unit))}</{tag}>")

    def block(self, tag: str, leaves: tuple[tuple[str, object, str], ...]) -> None:
        """``<tag>`` holding ``(tag, value, unit)`` leaves; left out when every value is None."""
        if any(value is not None for _, value, _ in leaves):
            self.open(tag)
            for name, value, unit in leaves:
                self.leaf(name, value, unit)
            self.close(tag)

    def open(self, tag: str, attrs: str = "") -> None:
        self.lines.append(f"{'    ' * self.depth}<{tag}{attrs}>")
        self.depth += 1

    def close(self, tag: str) -> None:
        self.depth -= 1
        self.lines.append(f"{'    ' * self.depth}</{tag}>")


def smi_bus_id(bdf: str) -> str:
    """``0000:1a:00.0`` -> ``00000000:1A:00.0``, nvidia-smi's spelling of a PCI address."""
    domain, bus, rest = bdf.split(":")
    return f"{int(domain, 16):08X}:{bus.upper()}:{rest.upper()}"


def _ecc_leaves(counts: EccCounts) -> tuple[tuple[str, object, str], ...]:
    return (
        ("sram_correctable", counts.sbe, ""),
        ("sram_uncorrectable", counts.dbe, ""),
        ("dram_correctable", None if counts.sbe is None else 0, ""),
        ("dram_uncorrectable", None if counts.dbe is None else 0, ""),
    )


def _dump_gpu(w: _Writer, g: Gpu) -> None:
    bus_id = smi_bus_id(g.pci_bus_id)
    w.open("gpu", f' id="{bus_id}"')
    w.leaf("product_name", g.product_name)
    w.block("mig_mode", (("current_mig", g.mig_mode, ""), ("pending_mig", g.mig_mode, "")))
    w.leaf("serial", g.serial)
    w.leaf("uuid", g.uuid)
    w.leaf("minor_number", g.minor_number)
    w.leaf("vbios_version", g.vbios_version)
    w.leaf("board_part_number", g.board_part_number)
    w.leaf("gpu_module_id", g.gpu_module_id)
    w.block(
        "gpu_reset_status",
        (("reset_required", g.reset_required, ""), ("drain_and_reset_recommended", g.drain_and_reset_recommended, "")),
    )
    w.open("pci")
    w.leaf("pci_bus_id", bus_id)
    if any(v is not None for v in (g.pcie_gen_max, g.pcie_gen_current, g.pcie_width_max, g.pcie_width_current)):
        w.open("pci_gpu_link_info")
        w.block("pcie_gen", (("max_link_gen", g.pcie_gen_max, ""), ("current_link_gen", g.pcie_gen_current, "")))
        widths = (("max_link_width", g.pcie_width_max, "x"), ("current_link_width", g.pcie_width_current, "x"))
        w.block("link_widths", widths)
        w.close("pci_gpu_link_info")
    w.leaf("replay_counter", g.pcie_replay_count)
    w.close("pci")
    w.leaf("performance_state", g.performance_state)
    if g.clocks_event_reasons:  # a GPU with none active prints every reason "Not Active"; both read as ()
        w.open("clocks_event_reasons")
        active = list(g.clocks_event_reasons)  # in the record's order, so parse(dump(r)) keeps it
        for name in active + [n for n in CLOCKS_EVENT_REASONS if n not in active]:
            w.leaf(f"clocks_event_reason_{name}", "Active" if name in active else "Not Active")
        w.close("clocks_event_reasons")
    w.block("ecc_mode", (("current_ecc", g.ecc_mode, ""), ("pending_ecc", g.ecc_mode, "")))
    if any(v is not None for v in (*astuple(g.ecc_volatile), *astuple(g.ecc_aggregate))):
        w.open("ecc_errors")
        w.block("volatile", _ecc_leaves(g.ecc_volatile))
        w.block("aggregate", _ecc_leaves(g.ecc_aggregate))
        w.close("ecc_errors")
    if any(v is not None for v in (g.retired_pages_sbe, g.retired_pages_dbe, g.retired_pages_pending)):
        w.open("retired_pages")
        w.block("multiple_single_bit_retirement", (("retired_count", g.retired_pages_sbe, ""),))
        w.block("double_bit_retirement", (("retired_count", g.retired_pages_dbe, ""),))
        w.leaf("pending_retirement", g.retired_pages_pending)
        w.close("retired_pages")
    if (r := g.remapped_rows) is not None:
        remapped = (
            ("remapped_row_corr", r.correctable, ""),
            ("remapped_row_unc", r.uncorrectable, ""),
            ("remapped_row_pending", r.pending, ""),
            ("remapped_row_failure", r.failure, ""),
        )
        if all(value is None for _, value, _ in remapped):  # a block of N/A still reads as a record of Nones
            w.lines.append(
                f"{'    ' * w.depth}<remapped_rows><remapped_row_corr>N/A</remapped_row_corr></remapped_rows>"
            )
        w.block("remapped_rows", remapped)
    temps = (("gpu_temp", g.temperature_c, " C"), ("memory_temp", g.memory_temperature_c, " C"))
    w.block("temperature", temps)
    power = (("power_draw", g.power_draw_w, " W"), ("current_power_limit", g.power_limit_w, " W"))
    w.block("gpu_power_readings", power)
    fabric = (("state", g.fabric_state, ""), ("status", g.fabric_status, ""), ("cliqueId", g.fabric_clique_id, ""))
    w.block("fabric", (*fabric, ("clusterUuid", g.fabric_cluster_uuid, "")))
    w.close("gpu")


def dump(record: NvidiaSmiQ) -> str:
    """``nvidia-smi -q -x`` XML (DTD v12 element names and order) holding the fields this module reads.

    A real capture has many more elements per GPU (clocks, utilization, processes, ...), which :func:`parse`
    skips. ECC totals are written as the SRAM counts with DRAM at 0, power with two decimals as nvidia-smi
    prints it. A value the record lacks is left out, and so is a block with nothing in it (nvidia-smi prints
    ``N/A`` there; both read as None), which keeps a twin host's file small.
    """
    w = _Writer()
    w.lines += ['<?xml version="1.0" encoding="UTF-8"?>', DOCTYPE]
    w.open("nvidia_smi_log")
    w.leaf("timestamp", record.timestamp)
    w.leaf("driver_version", record.driver_version)
    w.leaf("cuda_version", record.cuda_version)
    w.leaf("attached_gpus", record.attached_gpus)
    for gpu in record.gpus:
        _dump_gpu(w, gpu)
    w.close("nvidia_smi_log")
    return "\n".join(w.lines) + "\n"
