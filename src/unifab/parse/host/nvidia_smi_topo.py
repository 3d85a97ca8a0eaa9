r"""``nvidia-smi topo -m`` (drivers r3xx .. r57x): the GPU/NIC connection matrix and CPU/NUMA affinity.

The matrix is TAB-separated (captures often have the TABs expanded to spaces; on a terminal the header and row
labels may carry ANSI bold/underline codes, which are stripped)::

    \tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
    GPU0\t X \tNV18\tPIX\t0-55,112-167\t0\t\tN/A
    GPU1\tNV18\t X \tSYS\t56-111,168-223\t1\t\tN/A
    NIC0\tPIX\tSYS\t X

    Legend:

      X    = Self
      SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
      ...

    NIC Legend:

      NIC0: mlx5_0

Cells are ``X`` (self), ``NV#`` (bonded NVLinks), ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS`` (older drivers:
``SOC``); any upper-case code is accepted. Drivers before the NIC legend (r4xx) label NIC columns with the RDMA
device name (``mlx5_0``) directly; those labels are NICs and ``nic_legend`` is empty. Only GPU rows carry the
trailing ``CPU Affinity``/``NUMA Affinity``/``GPU NUMA ID`` columns (``N/A`` reads as None).

With a :class:`~unifab.errors.ParseProblems` collector a bad matrix row costs that device's row (its GPU's
affinity with it), a bad legend line that line, a bad NIC legend line that NIC's name. A bad header is named
and its columns read from the row labels (rows print in header order; the affinity columns are as many as the
GPU rows carry past the relations); a bad legend title just before its entries is named and the entries read.
A matrix with no row read raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["AFFINITY_COLUMNS", "LEGEND", "LEGEND_SOC", "NvidiaSmiTopo", "dump", "parse"]

AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
LEGEND = (
    ("X", "Self"),
    ("SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"),
    ("NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"),
    ("PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"),
    ("PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"),
    ("PIX", "Connection traversing at most a single PCIe bridge"),
    ("NV#", "Connection traversing a bonded set of # NVLinks"),
)
LEGEND_SOC = (  # drivers that print SOC instead of SYS
    ("X", "Self"),
    ("SOC", "Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)"),
    ("PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"),
    ("PXB", "Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)"),
    ("PIX", "Connection traversing a single PCIe switch"),
    ("NV#", "Connection traversing a bonded set of # NVLinks"),
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GPU = re.compile(r"^GPU\d+$")
_RELATION = re.compile(r"^(?:X|[A-Z][A-Z0-9]{1,7})$")
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")
_CPULIST = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")
_NUMBER = re.compile(r"^\d+$")
_LEGEND_ENTRY = re.compile(r"^\s*(?P<code>\S+)\s*=\s*(?P<text>.*)$")
_NIC_ENTRY = re.compile(r"^\s*(?P<nic>\S+):\s*(?P<dev>\S+)\s*$")


@dataclass(frozen=True, slots=True)
class NvidiaSmiTopo:
    gpus: tuple[str, ...]  # column labels "GPU0".."GPUn", in header order
    nics: tuple[str, ...]  # "NIC0".."NICm" (or "mlx5_0".. on old drivers), in header order
    matrix: dict[str, dict[str, str]]  # row label -> column label -> relation ("X", "PIX", "NV18", ...)
    nic_legend: dict[str, str]  # "NIC0" -> "mlx5_0"
    cpu_affinity: dict[str, str | None]  # GPU label -> "0-55,112-167" (only when the column is printed)
    numa_affinity: dict[str, str | None]  # GPU label -> "0"
    gpu_numa_id: dict[str, str | None]  # GPU label -> id; "N/A" on most systems (None)


def _header(tokens: list[str], source: str, number: int) -> tuple[list[str], list[str]]:
    labels: list[str] = []
    columns: list[str] = []
    i = 0
    while i < len(tokens):
        for column in AFFINITY_COLUMNS:
            words = column.split(" ")
            if tokens[i : i + len(words)] == words:
                columns.append(column)
                i += len(words)
                break
        else:
            if columns or not _LABEL.match(tokens[i]):
                raise ParseError(
                    source, f"expected a device label or {', '.join(AFFINITY_COLUMNS)}, got {tokens[i]!r}", line=number
                )
            labels.append(tokens[i])
            i += 1
    if len(set(labels)) != len(labels) or len(set(columns)) != len(columns):
        raise ParseError(source, "expected each header label once", line=number)
    if not any(_GPU.match(label) for label in labels):
        raise ParseError(source, "expected a header row naming GPU0 .. GPUn", line=number)
    return labels, columns


def _check_affinity(column: str, value: str, source: str, number: int) -> str | None:
    if value == "N/A":
        return None
    pattern = _NUMBER if column == "GPU NUMA ID" else _CPULIST
    if not pattern.match(value):
        raise ParseError(source, f"expected {column} as a CPU/NUMA list or N/A, got {value[:30]!r}", line=number)
    return value


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> NvidiaSmiTopo:
    """Read the ``nvidia-smi topo -m`` matrix, its affinity columns and the NIC legend."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lines = [_ANSI.sub("", raw).rstrip("\r") for raw in text.split("\n")]
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise ParseError(source, "expected nvidia-smi topo -m output, got empty text", line=1)
    number, header = numbered[0]
    body = numbered[1:]
    try:
        labels, columns = _header(header.split(), source, number)
    except ParseError as exc:
        inferred = _infer(body)
        if inferred is None:
            raise
        labels, columns = inferred
        expected = f"{exc.expected} (the columns are read from the row labels: {' '.join(labels)})"
        log.record(ParseError(source, expected, line=exc.line), "the matrix header")
    matrix: dict[str, dict[str, str]] = {}
    affinity: dict[str, dict[str, str | None]] = {column: {} for column in columns}
    nic_legend: dict[str, str] = {}
    section = "matrix"
    for i, (number, line) in enumerate(body):
        stripped = line.strip()
        # the section the next line is an entry of: a bad line just before it is that section's garbled title
        ahead = _entry_of(body[i + 1][1]) if i + 1 < len(body) else None
        if stripped in ("Legend:", "NIC Legend:"):
            if (section, stripped) not in (("matrix", "Legend:"), ("legend", "NIC Legend:"), ("matrix", "NIC Legend:")):
                raise ParseError(source, f"expected {stripped!r} once, after the matrix", line=number)
            section = "legend" if stripped == "Legend:" else "nics"
        elif section == "legend":
            if _LEGEND_ENTRY.match(stripped):
                continue
            if ahead == "nics":
                log.add(f"expected 'NIC Legend:', got {stripped[:40]!r}", "the 'NIC Legend:' title", line=number)
                section = "nics"
                continue
            log.add(f"expected a legend line 'CODE = text', got {stripped[:40]!r}", "a legend line", line=number)
        elif section == "nics":
            m = _NIC_ENTRY.match(stripped)
            if m is None or m["nic"] in nic_legend:
                expected = f"expected one 'NICk: <rdma device>' line per NIC, got {stripped[:40]!r}"
                log.add(expected, f"the NIC legend line {number}", line=number)
                continue
            nic_legend[m["nic"]] = m["dev"]
        else:
            try:
                _row(stripped.split(), labels, columns, matrix, affinity, source, number)
            except ParseError as exc:
                if ahead is None:
                    log.record(exc, f"the matrix row {stripped.split()[0][:30]!r}")
                    continue
                title = "Legend:" if ahead == "legend" else "NIC Legend:"
                log.add(
                    f"expected {title!r} after the matrix, got {stripped[:40]!r}", f"the {title!r} title", line=number
                )
                section = ahead
    if not matrix and log.problems:
        raise log.problems[0].error()
    if not matrix:
        raise ParseError(source, "expected matrix rows after the header", line=numbered[0][0])
    return NvidiaSmiTopo(
        gpus=tuple(label for label in labels if _GPU.match(label)),
        nics=tuple(label for label in labels if not _GPU.match(label)),
        matrix=matrix,
        nic_legend=nic_legend,
        cpu_affinity=affinity.get("CPU Affinity", {}),
        numa_affinity=affinity.get("NUMA Affinity", {}),
        gpu_numa_id=affinity.get("GPU NUMA ID", {}),
    )


def _entry_of(line: str) -> str | None:
    """``legend`` or ``nics`` when ``line`` is an entry of that section (never a matrix row), else None."""
    if _NIC_ENTRY.match(line):
        return "nics"
    if _LEGEND_ENTRY.match(line):
        return "legend"
    return None


def _infer(body: list[tuple[int, str]]) -> tuple[list[str], list[str]] | None:
    """The header's labels and affinity columns as the matrix rows imply them (a label each, in row order; as
    many affinity columns as GPU rows carry cells past the relations), or None when the rows do not tell."""
    rows: list[list[str]] = []
    for _, line in body:
        if line.strip() in ("Legend:", "NIC Legend:"):
            break
        tokens = line.split()
        if len(tokens) > 1 and _LABEL.match(tokens[0]) and _RELATION.match(tokens[1]):
            rows.append(tokens)
    labels = [tokens[0] for tokens in rows]
    if len(set(labels)) != len(labels) or not any(_GPU.match(label) for label in labels):
        return None
    if any(len(tokens) <= i + 1 or tokens[i + 1] != "X" for i, tokens in enumerate(rows)):
        return None  # not a square matrix in row order (X on the diagonal)
    extra = max((len(tokens) - 1 - len(labels) for tokens in rows if _GPU.match(tokens[0])), default=0)
    if not 0 <= extra <= len(AFFINITY_COLUMNS):
        return None
    return labels, list(AFFINITY_COLUMNS[:extra])


def _row(
    tokens: list[str],
    labels: list[str],
    columns: list[str],
    matrix: dict[str, dict[str, str]],
    affinity: dict[str, dict[str, str | None]],
    source: str,
    number: int,
) -> None:
    label, cells = tokens[0], tokens[1:]
    if label not in labels or label in matrix:
        raise ParseError(
            source, f"expected a row for one of {' '.join(labels)} (each once), got {label[:30]!r}", line=number
        )
    extra = cells[len(labels) :]
    trailing = columns if _GPU.match(label) else []
    if len(cells) < len(labels) or len(extra) > len(trailing):
        raise ParseError(
            source,
            f"expected {len(labels)} relation cells{' and the affinity columns' if trailing else ''} in row {label}",
            line=number,
        )
    row: dict[str, str] = {}
    for column, cell in zip(labels, cells, strict=False):
        if not _RELATION.match(cell) or (cell == "X") != (column == label):
            raise ParseError(
                source,
                f"expected a relation (X only on the diagonal) in {label}/{column}, got {cell[:20]!r}",
                line=number,
            )
        row[column] = cell
    values = [_check_affinity(c, extra[i], source, number) if i < len(extra) else None for i, c in enumerate(trailing)]
    matrix[label] = row  # stored last: a bad cell leaves nothing of the row
    for column, value in zip(trailing, values, strict=True):
        affinity[column][label] = value


def dump(topo: NvidiaSmiTopo) -> str:
    """Write ``topo`` the way nvidia-smi prints it (TAB-separated, `` X `` on the diagonal, legends)."""
    labels = [*topo.gpus, *topo.nics]
    columns = [
        column
        for column, values in zip(
            AFFINITY_COLUMNS, (topo.cpu_affinity, topo.numa_affinity, topo.gpu_numa_id), strict=True
        )
        if values
    ]
    out = ["\t" + "\t".join(labels + columns)]
    for label in labels:
        row = topo.matrix.get(label)
        if row is None:
            continue
        cells = [" X " if row[c] == "X" else row[c] for c in labels]
        if label in topo.gpus:
            for column in columns:
                values = {"CPU Affinity": topo.cpu_affinity, "NUMA Affinity": topo.numa_affinity}.get(
                    column, topo.gpu_numa_id
                )
                if column == "GPU NUMA ID":
                    cells.append("")  # nvidia-smi pads the NUMA Affinity cell with a second TAB
                cells.append(values.get(label) or "N/A")
        out.append(label + "\t" + "\t".join(cells))
    soc = any(cell == "SOC" for row in topo.matrix.values() for cell in row.values())
    out += ["", "Legend:", ""]
    out += [f"  {code:<4} = {text}" for code, text in (LEGEND_SOC if soc else LEGEND)]
    if topo.nic_legend:
        out += ["", "NIC Legend:", ""]
        out += [f"  {nic}: {dev}" for nic, dev in topo.nic_legend.items()]
    return "\n".join(out) + "\n"
