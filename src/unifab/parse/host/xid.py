r"""NVIDIA Xid events in a kernel log: ``dmesg`` (any time format), ``journalctl -k`` or syslog lines.

The NVIDIA driver (every version with Xid reporting, r3xx .. r57x) logs one line per event::

    NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting ...
    NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
    NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000009 intr 00800000          (older drivers: no pid/name)

The PCI address is ``domain:bus:device`` without a function; it is normalized to ``0000:9b:00.0`` (function
0, lowercase, 4-digit domain) so it joins to ``nvidia-smi -q`` ``pci_bus_id`` and to ``lspci`` BDFs.
``NVRM: GPU at PCI:0000:9b:00: GPU-<uuid>`` lines fill the ``gpus`` map (PCI address -> UUID).

What precedes ``NVRM:`` is one of the prefixes the kernel log tools print (all optional):

- ``[ 1234.567890] `` seconds since boot (plain ``dmesg``; ``<4>`` syslog level and ``kern  :err   : ``
  facility/level prefixes of ``dmesg -r`` / ``dmesg -x`` are allowed before it),
- ``[Sun Feb 23 16:24:18 2025] `` (``dmesg -T``) or ``2025-02-23T16:24:18,123456+00:00 `` (``dmesg --time-format
  iso``),
- ``[Feb23 16:24] `` (``dmesg --time-format reltime``),
- ``Feb 23 16:24:18[.123456] host kernel: ``, ``2025-02-23T16:24:18+0000 host kernel: `` or ``[ 1234.567890] host
  kernel: `` (journalctl ``short``/``short-precise``/``short-iso``/``short-monotonic``, syslog), optionally followed
  by the ``[ seconds]`` stamp.

``timestamp`` is the wall-clock text when one is printed, else the seconds since boot as a float, else None.
Every other line (other kernel messages, NVRM diagnostics, ``SXid`` NVSwitch events) is ignored; an empty log
is a valid reading with no events. A line that contains ``NVRM: Xid`` but not in the grammar above is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems

__all__ = ["XidEvent", "XidLog", "dump", "normalize_pci", "parse"]

_XID = re.compile(r"^(?P<prefix>.*?)NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d{1,9})(?:, ?(?P<rest>.*?))?\s*$")
_GPU_AT = re.compile(r"NVRM: GPU at (?P<pci>PCI:[0-9A-Fa-f:.]+): (?P<uuid>GPU-[0-9A-Fa-f-]+)\s*$")
_PCI = re.compile(
    r"^PCI:(?:(?P<dom>[0-9A-Fa-f]{4,8}):)?(?P<bus>[0-9A-Fa-f]{2}):(?P<dev>[0-9A-Fa-f]{2})(?:\.(?P<fn>[0-7]))?$"
)
_PID = re.compile(r"^pid=(?P<pid>\d{1,18}|'?<unknown>'?)(?:, ?name=(?P<name>[^,]*))?(?:, ?(?P<msg>.*))?$")

_LEVEL = r"(?:<\d+>)?(?:[a-z]+ *:[a-z]+ *: )?"  # dmesg -r raw level, dmesg -x facility:level
_MONO = r"\[\s*(?P<mono>\d+\.\d+)\]"
_KERNEL_MONO = r"\[\s*(?P<mono2>\d+\.\d+)\]"  # the kernel's own stamp after "kernel: " in journal/syslog lines
_HUMAN = r"\[(?P<human>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]"
_ISO = r"(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]?\d*(?:[+-]\d\d:?\d\d|Z)?)"
_RELTIME = r"\[(?P<rel>[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d(?::\d\d)?)\]"  # dmesg --time-format reltime (minute)
_SYSLOG_TS = r"(?P<sts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\dT\S+)"
_PREFIXES = (
    re.compile(rf"^{_LEVEL}(?:{_MONO}|{_HUMAN}|{_ISO}|{_RELTIME})? ?$"),
    re.compile(rf"^(?:{_SYSLOG_TS}|{_MONO}) (?P<host>\S+) kernel: ?(?:{_KERNEL_MONO} ?)?$"),
)


@dataclass(frozen=True, slots=True)
class XidEvent:
    line: int  # 1-based line of the log the event was read from
    timestamp: float | str | None  # wall-clock text as printed, else seconds since boot, else None
    host: str | None  # from a journalctl/syslog prefix
    pci_bus_id: str  # normalized "0000:9b:00.0"
    xid: int
    pid: int | None  # None when not printed or '<unknown>'
    process: str | None  # the name= field; None when not printed or <unknown>
    message: str  # the text after pid/name (or after the Xid number), verbatim


@dataclass(frozen=True, slots=True)
class XidLog:
    events: tuple[XidEvent, ...]
    gpus: dict[str, str]  # normalized PCI address -> GPU UUID, from "NVRM: GPU at PCI:..." lines


def normalize_pci(text: str) -> str | None:
    """``PCI:0000:9b:00`` (or ``PCI:9b:00.1``) -> ``0000:9b:00.0`` (``.1``); None when not a PCI address."""
    m = _PCI.match(text)
    if m is None:
        return None
    domain = int(m["dom"] or "0", 16)
    return f"{domain:04x}:{m['bus'].lower()}:{m['dev'].lower()}.{m['fn'] or '0'}"


def _timestamp(prefix: str) -> tuple[float | str | None, str | None] | None:
    for pattern in _PREFIXES:
        m = pattern.match(prefix)
        if m is None:
            continue
        groups = m.groupdict()
        wall = groups.get("human") or groups.get("iso") or groups.get("rel") or groups.get("sts")
        if wall is not None:
            return wall, groups.get("host")
        mono = groups.get("mono") or groups.get("mono2")
        return (None if mono is None else float(mono)), groups.get("host")
    return None


def _event(number: int, m: re.Match[str], source: str) -> XidEvent:
    stamp = _timestamp(m["prefix"])
    if stamp is None:
        raise ParseError(
            source,
            f"expected a dmesg or journal timestamp (or nothing) before 'NVRM: Xid', got {m['prefix'][:60]!r}",
            line=number,
        )
    pci = normalize_pci(m["pci"])
    if pci is None:
        raise ParseError(source, f"expected 'PCI:dddd:bb:dd' in 'NVRM: Xid (...)', got {m['pci'][:40]!r}", line=number)
    rest = m["rest"] or ""
    pid: int | None = None
    process: str | None = None
    message = rest
    if p := _PID.match(rest):
        pid = int(p["pid"]) if p["pid"].isdigit() else None
        name = p["name"]
        process = None if name is None or name.strip("'") in ("<unknown>", "") else name
        message = p["msg"] or ""
    return XidEvent(number, stamp[0], stamp[1], pci, int(m["xid"]), pid, process, message)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> XidLog:
    """Collect the Xid events of a kernel log; lines without ``NVRM: Xid`` are skipped.

    Read in part: an ``NVRM: Xid`` line that does not parse (cut by a log rotation, interleaved with another
    message) costs that event only, named at its line; the other events of the log are kept (without
    ``problems``, the first one is raised)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    events: list[XidEvent] = []
    gpus: dict[str, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        if "NVRM:" not in raw:
            continue
        if m := _XID.match(raw):
            with log.skipping(f"the Xid event of line {number}"):
                events.append(_event(number, m, source))
        elif "NVRM: Xid" in raw:
            log.add(
                "expected 'NVRM: Xid (PCI:dddd:bb:dd): <number>, ...'", f"the Xid event of line {number}", line=number
            )
        elif g := _GPU_AT.search(raw):
            pci = normalize_pci(g["pci"])
            if pci is not None:
                gpus[pci] = g["uuid"]
    return XidLog(tuple(events), gpus)


def _dump_pci(bdf: str) -> str:
    """``0000:9b:00.0`` -> ``PCI:0000:9b:00`` (the driver's form; a non-zero function stays)."""
    if normalize_pci(f"PCI:{bdf}") != bdf:
        raise ValueError(f"not a normalized PCI address: {bdf!r}")
    return f"PCI:{bdf.removesuffix('.0')}"


def _dump_stamp(timestamp: float | str | None, host: str | None) -> str:
    if host is not None or isinstance(timestamp, str):
        raise ValueError("dump writes plain dmesg lines: seconds since boot or no timestamp, no host")
    return "" if timestamp is None else f"[{timestamp:12.6f}] "


def dump(log: XidLog, gpu_at_stamp: float = 5.0) -> str:
    """Write ``log`` as plain ``dmesg`` prints it: one ``NVRM: GPU at`` line per GPU, then one line per event.

    The GPU lines carry ``[%12.6f]`` stamps from ``gpu_at_stamp`` on; an event carries one when its timestamp is
    seconds since boot, none when None (wall-clock text and journal hosts are not written: ``ValueError``).
    ``pid=..., name=..., `` is written when either is known (``'<unknown>'``/``<unknown>`` for the other).
    ``line`` is not written: ``parse(dump(r)) == r`` when event *i* has ``line == len(r.gpus) + i + 1``.
    """
    out = [
        f"[{gpu_at_stamp + i / 1000:12.6f}] NVRM: GPU at {_dump_pci(pci)}: {uuid}"
        for i, (pci, uuid) in enumerate(log.gpus.items())
    ]
    for event in log.events:
        body = event.message
        if event.pid is not None or event.process is not None:
            pid = "'<unknown>'" if event.pid is None else str(event.pid)
            name = "<unknown>" if event.process is None else event.process
            body = f"pid={pid}, name={name}" + (f", {event.message}" if event.message else "")
        tail = f", {body}" if body else ""
        stamp = _dump_stamp(event.timestamp, event.host)
        out.append(f"{stamp}NVRM: Xid ({_dump_pci(event.pci_bus_id)}): {event.xid}{tail}")
    return "".join(line + "\n" for line in out)
