r"""RDMA port counters and state: the sysfs tree ``/sys/class/infiniband/<dev>/`` and ``show_counters <dev>``.

Tree (kernel ``drivers/infiniband/core/sysfs.c``; paths relative to the device directory)::

    fw_ver, board_id, hca_type              device strings
    ports/<p>/state                         "4: ACTIVE"            (number: name)
    ports/<p>/phys_state                    "5: LinkUp"
    ports/<p>/rate                          "400 Gb/sec (4X NDR)"  ("2.5 Gb/sec (1X)" for SDR)
    ports/<p>/link_layer                    "InfiniBand" | "Ethernet"
    ports/<p>/lid, ports/<p>/sm_lid         "0x3"                  (hex, 16 bits; "0x0": none assigned, and RoCE)
    ports/<p>/lid_mask_count, .../sm_sl     "0"                    (decimal: the LMC 0..7, the SM's SL 0..15)
    ports/<p>/hw_counters/<name>            driver counters (mlx5: out_of_sequence, np_cnp_sent, ...);
                                            ``lifespan`` is the refresh period in ms, not a counter
    ports/<p>/counters/<name>               IB PMA counters (symbol_error, port_xmit_wait, ...);
                                            "N/A (no PMA)" on devices without a PMA is skipped

Other files (``node_guid``, ``ports/<p>/gids/*``, ...) are ignored. ``parse_tree`` takes either one
device directory or the whole ``/sys/class/infiniband`` directory (paths ``<dev>/ports/...``; told
apart by the first path component); ``parse_class_tree`` always reads the latter. ``parse`` reads the
same tree flattened to ``relative/path: value`` lines, or the output of mlnx-tools ``show_counters``::

    Port 1 hw counters:
    duplicate_request: 0
    ...
    Port 1 cm counters:
    apr: 0                                  (one run per /sys/class/infiniband_cm/<dev>/<p>/<group>/,
    ...                                      groups in ls order; names repeat in every group)

Devices are sorted by name (digits compared as numbers), ports by number, counters by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems

__all__ = [
    "CM_GROUPS",
    "DEVICE_STRINGS",
    "LIFESPAN",
    "NO_PMA",
    "PHYS_STATES",
    "PORT_NUMBERS",
    "PORT_STATES",
    "PORT_STRINGS",
    "HwCounters",
    "IbDevice",
    "IbPort",
    "Locate",
    "dump",
    "dump_tree",
    "parse",
    "parse_class_tree",
    "parse_tree",
]

PORT_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {
    0: "<unknown>",
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "Phy Test",
}
DEVICE_STRINGS = ("fw_ver", "board_id", "hca_type")
PORT_STRINGS = ("state", "phys_state", "rate", "link_layer")
# one-number port files: name -> (base, largest value); the kernel prints the LIDs "0x%x", the others "%u"
PORT_NUMBERS: dict[str, tuple[int, int]] = {
    "lid": (16, 0xFFFF),
    "sm_lid": (16, 0xFFFF),
    "lid_mask_count": (10, 7),
    "sm_sl": (10, 15),
}
NO_PMA = "N/A (no PMA)"
LIFESPAN = "lifespan"
# /sys/class/infiniband_cm/<dev>/<port>/ subdirectories, in the order `ls` lists them (kernel cm.c)
CM_GROUPS = ("cm_rx_duplicates", "cm_rx_msgs", "cm_tx_msgs", "cm_tx_retries")
# first path components that mark a single device directory (anything else is a device name)
_DEVICE_ENTRIES = frozenset({*DEVICE_STRINGS, "ports", "node_guid", "node_type", "node_desc", "sys_image_guid"})

_STATE = re.compile(r"^(\d+): (\S.*)$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?) Gb/sec(?: \((\d+X)(?: (\S+))?\))?$")
_NUM = re.compile(r"^\d+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_SHOW_HEADER = re.compile(r"^Port (\d+) (hw|cm) counters:$")

Locate = Callable[[str], tuple[str, int]]  # relative path -> (source, line) for error messages


@dataclass(frozen=True, slots=True)
class IbPort:
    port: int
    state: str | None  # "ACTIVE" (sysfs "4: ACTIVE")
    phys_state: str | None  # "LinkUp" (sysfs "5: LinkUp")
    rate_gbps: float | None  # 400.0
    width: str | None  # "4X"
    speed: str | None  # "NDR"; None for SDR (the kernel prints no name)
    link_layer: str | None  # "InfiniBand" | "Ethernet"
    lifespan_ms: int | None  # hw_counters/lifespan: how long read values are cached
    hw_counters: dict[str, int]
    counters: dict[str, int]
    cm_counters: dict[str, int]  # "<group>/<name>", only from show_counters
    lid: int | None = None  # ports/<p>/lid as read: 0 is "none assigned" (and every RoCE port's)
    sm_lid: int | None = None  # ports/<p>/sm_lid: the LID of the SM the port was told; 0 as for lid
    lid_mask_count: int | None = None  # the LMC: the port answers 2**LMC LIDs from ``lid``
    sm_sl: int | None = None  # the SL to reach the SM on


@dataclass(frozen=True, slots=True)
class IbDevice:
    name: str | None  # None when read from one device directory or show_counters
    fw_ver: str | None
    board_id: str | None
    hca_type: str | None
    ports: tuple[IbPort, ...]


@dataclass(frozen=True, slots=True)
class HwCounters:
    devices: tuple[IbDevice, ...]


@dataclass(slots=True)
class _Port:
    strings: dict[str, str] = field(default_factory=dict)
    lifespan: int | None = None
    hw: dict[str, int] = field(default_factory=dict)
    pma: dict[str, int] = field(default_factory=dict)
    cm: dict[str, int] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)


def _natural(name: str | None) -> list[tuple[int, str]]:
    return [(int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"(\d+)", name or "")]


def _number(text: str, where: tuple[str, int], what: str) -> int:
    if not _NUM.match(text):
        raise ParseError(where[0], f"expected {what}, got {text[:40]!r}", line=where[1])
    return int(text)


def _build_port(number: int, acc: _Port, locate: Locate, base: str) -> IbPort:
    strings = acc.strings
    state = phys = None
    for key in ("state", "phys_state"):
        if key in strings:
            m = _STATE.match(strings[key])
            if m is None:
                where = locate(f"{base}{key}")
                raise ParseError(where[0], f"expected '<number>: <name>' in {key}", line=where[1])
            if key == "state":
                state = m[2]
            else:
                phys = m[2]
    rate = width = speed = None
    if "rate" in strings:
        m = _RATE.match(strings["rate"])
        if m is None:
            where = locate(f"{base}rate")
            raise ParseError(where[0], "expected '<n> Gb/sec (<w>X <speed>)' in rate", line=where[1])
        rate, width, speed = float(m[1]), m[2], m[3]
    return IbPort(
        port=number,
        state=state,
        phys_state=phys,
        rate_gbps=rate,
        width=width,
        speed=speed,
        link_layer=strings.get("link_layer"),
        lifespan_ms=acc.lifespan,
        hw_counters=dict(sorted(acc.hw.items())),
        counters=dict(sorted(acc.pma.items())),
        cm_counters=dict(sorted(acc.cm.items())),
        lid=acc.numbers.get("lid"),
        sm_lid=acc.numbers.get("sm_lid"),
        lid_mask_count=acc.numbers.get("lid_mask_count"),
        sm_sl=acc.numbers.get("sm_sl"),
    )


def _device(
    name: str | None, items: list[tuple[str, str]], locate: Locate, prefix: str, log: ParseProblems | None = None
) -> IbDevice:
    """One device from ``(path relative to the device directory, contents)`` pairs; with a lenient ``log`` a file
    that cannot be read costs that value only."""
    log = log if log is not None else ParseProblems.strict(prefix or "<input>")
    strings: dict[str, str | None] = {}
    ports: dict[int, _Port] = {}
    for rel, content in items:
        parts = rel.strip("/").split("/")
        value = content.strip()
        if len(parts) == 1 and parts[0] in DEVICE_STRINGS:
            strings[parts[0]] = value or None
            continue
        if len(parts) < 3 or parts[0] != "ports" or not _NUM.match(parts[1]):
            continue
        acc = ports.setdefault(int(parts[1]), _Port())
        with log.skipping(f"{prefix}{rel.strip('/')}"):
            _port_file(acc, parts, value, locate(prefix + rel))
    built = tuple(_build_port(n, ports[n], locate, f"{prefix}ports/{n}/") for n in sorted(ports))
    built = tuple(p for p in built if p != _empty_port(p.port))
    return IbDevice(name, strings.get("fw_ver"), strings.get("board_id"), strings.get("hca_type"), built)


def _port_file(acc: _Port, parts: list[str], value: str, where: tuple[str, int]) -> None:
    """One file under ``ports/<p>/`` into the port's accumulator (nothing stored when it cannot be read)."""
    if len(parts) == 3 and parts[2] in PORT_STRINGS:
        if not value:
            raise ParseError(where[0], f"expected a value in {parts[2]}, got an empty file", line=where[1])
        acc.strings[parts[2]] = value
    elif len(parts) == 3 and parts[2] in PORT_NUMBERS:
        acc.numbers[parts[2]] = _port_number(parts[2], value, where)
    elif len(parts) == 4 and parts[2] in ("hw_counters", "counters") and _NAME.match(parts[3]):
        if value == NO_PMA:
            return
        count = _number(value, where, f"an unsigned integer in {parts[2]}/{parts[3]}")
        if parts[2] == "counters":
            acc.pma[parts[3]] = count
        elif parts[3] == LIFESPAN:
            acc.lifespan = count
        else:
            acc.hw[parts[3]] = count


def _port_number(name: str, value: str, where: tuple[str, int]) -> int:
    """``lid``/``sm_lid`` (``0x`` + hex, 16 bits), ``lid_mask_count`` (0..7) or ``sm_sl`` (0..15)."""
    base, top = PORT_NUMBERS[name]
    shape = _HEX if base == 16 else _NUM
    number = int(value, base) if shape.match(value) else None
    if number is None or number > top:
        form = f"0x<hex> up to {top:#x}" if base == 16 else f"a number 0..{top}"
        raise ParseError(where[0], f"expected {form} in {name}, got {value[:40]!r}", line=where[1])
    return number


def _empty_port(number: int) -> IbPort:
    return IbPort(number, None, None, None, None, None, None, None, {}, {}, {})


def _is_device_layout(paths: list[str]) -> bool:
    return any(p.strip("/").split("/")[0] in _DEVICE_ENTRIES for p in paths)


def _read(
    files: Mapping[str, str], locate: Locate, source: str, layout: str, log: ParseProblems | None = None
) -> HwCounters:
    paths = list(files)
    if layout == "auto":
        layout = "device" if _is_device_layout(paths) else "class"
    if layout == "device":
        device = _device(None, [(p, files[p]) for p in paths], locate, "", log)
        if device == IbDevice(None, None, None, None, ()):
            raise ParseError(source, "expected fw_ver, board_id, hca_type or ports/<p>/... files", line=1)
        return HwCounters((device,))
    groups: dict[str, list[tuple[str, str]]] = {}
    for path in paths:
        name, slash, rel = path.strip("/").partition("/")
        if slash and name:
            groups.setdefault(name, []).append((rel, files[path]))
    if not groups:
        raise ParseError(source, "expected <device>/ports/<p>/... files of /sys/class/infiniband", line=1)
    devices = [_device(name, items, locate, f"{name}/", log) for name, items in groups.items()]
    return HwCounters(tuple(sorted(devices, key=lambda d: _natural(d.name))))


def _tree_locator(source: str) -> Locate:
    return lambda rel: (f"{source}/{rel}", 1)


def parse_tree(files: Mapping[str, str], source: str = "<input>", problems: ParseProblems | None = None) -> HwCounters:
    """Read one ``/sys/class/infiniband/<dev>/`` directory, or the whole class directory; with a lenient
    ``problems`` a file that cannot be read costs its value only (the problem names the file)."""
    return _read(files, _tree_locator(source), source, "auto", problems)


def parse_class_tree(files: Mapping[str, str], source: str = "<input>") -> HwCounters:
    """Read ``/sys/class/infiniband/`` as ``{"<dev>/ports/1/...": contents}``."""
    return _read(files, _tree_locator(source), source, "class")


def _parse_flat(lines: list[tuple[int, str]], source: str) -> HwCounters:
    files: dict[str, str] = {}
    where: dict[str, int] = {}
    for number, line in lines:
        path, sep, value = line.partition(":")
        path = path.strip().strip("/")
        if not sep or not path or " " in path:
            raise ParseError(source, "expected 'relative/path: value'", line=number)
        if path in files:
            raise ParseError(source, f"expected each path once, got {path} again", line=number)
        files[path], where[path] = value, number
    return _read(files, lambda rel: (source, where.get(rel.strip("/"), 1)), source, "auto")


def _parse_show_counters(lines: list[tuple[int, str]], source: str) -> HwCounters:
    ports: dict[int, _Port] = {}
    runs: dict[int, list[set[str]]] = {}
    current: tuple[int, str] | None = None
    for number, line in lines:
        if m := _SHOW_HEADER.match(line):
            current = (int(m[1]), m[2])
            ports.setdefault(current[0], _Port())
            if m[2] == "cm":
                if current[0] in runs:
                    raise ParseError(source, f"expected one 'Port {m[1]} cm counters:' block", line=number)
                runs[current[0]] = []
            continue
        if current is None:
            raise ParseError(source, "expected 'Port <p> hw counters:'", line=number)
        name, sep, value = line.partition(":")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise ParseError(source, "expected '<counter>: <value>'", line=number)
        count = _number(value.strip(), (source, number), f"an unsigned integer for {name}")
        acc = ports[current[0]]
        if current[1] == "cm":
            groups = runs[current[0]]
            if not groups or name in groups[-1]:
                groups.append(set())
                if len(groups) > len(CM_GROUPS):
                    raise ParseError(source, f"expected at most {len(CM_GROUPS)} runs of cm counters", line=number)
            groups[-1].add(name)
            acc.cm[f"{CM_GROUPS[len(groups) - 1]}/{name}"] = count
        elif name == LIFESPAN:
            acc.lifespan = count
        elif name in acc.hw:
            raise ParseError(source, f"expected {name} once per port", line=number)
        else:
            acc.hw[name] = count
    built = tuple(_build_port(n, ports[n], lambda rel: (source, 1), "") for n in sorted(ports))
    return HwCounters((IbDevice(None, None, None, None, built),))


def parse(text: str, source: str = "<input>") -> HwCounters:
    """Read ``show_counters`` output, or the tree flattened to ``relative/path: value`` lines."""
    lines = [(n, raw.strip()) for n, raw in enumerate(text.split("\n"), start=1) if raw.strip()]
    lines = [(n, line) for n, line in lines if not line.startswith("#")]
    if not lines:
        raise ParseError(source, "expected show_counters output or 'path: value' lines, got empty text", line=1)
    if any(_SHOW_HEADER.match(line) for _, line in lines):
        return _parse_show_counters(lines, source)
    return _parse_flat(lines, source)


def _rate_text(p: IbPort) -> str:
    rate = p.rate_gbps
    if rate is None:
        raise ValueError("no rate")
    number = str(int(rate)) if rate.is_integer() else repr(rate)
    if p.width is None:
        return f"{number} Gb/sec"
    return f"{number} Gb/sec ({p.width}{'' if p.speed is None else ' ' + p.speed})"


def _code(table: dict[int, str], name: str) -> int:
    for code, known in table.items():
        if known == name:
            return code
    raise ValueError(f"no sysfs number for {name!r}")


def _device_files(d: IbDevice) -> dict[str, str]:
    files: dict[str, str] = {}
    for key, value in (("board_id", d.board_id), ("fw_ver", d.fw_ver), ("hca_type", d.hca_type)):
        if value is not None:
            files[key] = value
    for p in d.ports:
        base = f"ports/{p.port}/"
        for name, count in p.counters.items():
            files[f"{base}counters/{name}"] = str(count)
        hw = dict(p.hw_counters)
        if p.lifespan_ms is not None:
            hw[LIFESPAN] = p.lifespan_ms
        for name, count in sorted(hw.items()):
            files[f"{base}hw_counters/{name}"] = str(count)
        if p.lid is not None:
            files[f"{base}lid"] = f"{p.lid:#x}"
        if p.lid_mask_count is not None:
            files[f"{base}lid_mask_count"] = str(p.lid_mask_count)
        if p.link_layer is not None:
            files[f"{base}link_layer"] = p.link_layer
        if p.phys_state is not None:
            files[f"{base}phys_state"] = f"{_code(PHYS_STATES, p.phys_state)}: {p.phys_state}"
        if p.rate_gbps is not None:
            files[f"{base}rate"] = _rate_text(p)
        if p.sm_lid is not None:
            files[f"{base}sm_lid"] = f"{p.sm_lid:#x}"
        if p.sm_sl is not None:
            files[f"{base}sm_sl"] = str(p.sm_sl)
        if p.state is not None:
            files[f"{base}state"] = f"{_code(PORT_STATES, p.state)}: {p.state}"
    return files


def _flat_files(record: HwCounters) -> dict[str, str]:
    devices = record.devices
    if len(devices) == 1 and devices[0].name is None:
        return _device_files(devices[0])
    if any(d.name is None for d in devices):
        raise ValueError("every device of a class tree needs a name")
    return {f"{d.name}/{path}": value for d in devices for path, value in _device_files(d).items()}


def dump_tree(record: HwCounters) -> dict[str, str]:
    """The sysfs files (``cm_counters`` live in another class and are not written)."""
    return {path: value + "\n" for path, value in _flat_files(record).items()}


def dump(record: HwCounters) -> str:
    """The tree flattened to ``relative/path: value`` lines (the form ``parse`` reads)."""
    return "".join(f"{path}: {value}\n" for path, value in _flat_files(record).items())
