"""SONiC ``show version`` (sonic-utilities ``show/main.py`` ``version``; every release since 201811).

The command prints ``Key: value`` lines, a blank line, the platform block and the Docker images table::

    SONiC Software Version: SONiC.202405.1033627-fecd4ec81
    Distribution: Debian 12.5
    Kernel: 6.1.0-11-2-amd64
    Build commit: fecd4ec81
    Build date: ...
    Built by: ...

    Platform: x86_64-nvidia_sn5600-r0
    HwSKU: ACS-SN5600
    ASIC: mellanox
    ASIC Count: 1
    Serial Number: ...
    Model Number: ...
    Hardware Rev: A1            (older releases; newer ones print "Hardware Revision:")
    Uptime: ...
    Date: ...

    Docker images:
    REPOSITORY   TAG   IMAGE ID   SIZE
    ...

``SONiC Software Version`` is required (it is what names the image: ``sonic-installer list`` shows it as
``SONiC-OS-<version without "SONiC.">``); every other key is optional, unknown keys are ignored, and the Docker
table is not read. The bundle file is ``switches/<switch>/sonic/show-version.txt``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError

__all__ = ["FIELDS", "SonicVersion", "dump", "parse"]

# printed key -> record field (both spellings of the hardware revision)
FIELDS = {
    "SONiC Software Version": "software_version",
    "Distribution": "distribution",
    "Kernel": "kernel",
    "Build commit": "build_commit",
    "Build date": "build_date",
    "Platform": "platform",
    "HwSKU": "hwsku",
    "ASIC": "asic",
    "ASIC Count": "asic_count",
    "Serial Number": "serial_number",
    "Model Number": "model_number",
    "Hardware Rev": "hardware_revision",
    "Hardware Revision": "hardware_revision",
}
_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s?(.*?)\s*$")
_MAX_FIELD = 256  # a value longer than this is not a version line


@dataclass(frozen=True, slots=True)
class SonicVersion:
    software_version: str  # "SONiC.202405.1033627-fecd4ec81"
    distribution: str | None = None
    kernel: str | None = None
    build_commit: str | None = None
    build_date: str | None = None
    platform: str | None = None  # "x86_64-mlnx_msn2700-r0"
    hwsku: str | None = None
    asic: str | None = None
    asic_count: int | None = None
    serial_number: str | None = None
    model_number: str | None = None
    hardware_revision: str | None = None

    @property
    def image_version(self) -> str:
        """The version as ``sonic-installer`` names the image: without the ``SONiC.`` prefix."""
        return self.software_version.removeprefix("SONiC.")


def parse(text: str, source: str = "<input>") -> SonicVersion:
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.strip().startswith("Docker images"):
            break
        m = _LINE.match(raw)
        if m is None:
            continue
        key, value = m.group(1), m.group(2)
        name = FIELDS.get(key)
        if name is None:
            continue
        if name in values:
            raise ParseError(source, f"one {key!r} line (it repeats; first on line {lines[name]})", line=number)
        if not value or len(value) > _MAX_FIELD or any(ord(c) < 32 for c in value):
            raise ParseError(
                source, f"a value after {key + ':'!r} (printable, at most {_MAX_FIELD} characters)", line=number
            )
        values[name] = value
        lines[name] = number
    if "software_version" not in values:
        raise ParseError(source, "a 'SONiC Software Version: SONiC.<version>' line (SONiC show version)", line=1)
    count = values.pop("asic_count", None)
    if count is not None and not count.isdigit():
        raise ParseError(source, f"an integer ASIC Count, got {count!r}", line=lines["asic_count"])
    return SonicVersion(asic_count=int(count) if count is not None else None, **values)


def dump(record: SonicVersion) -> str:
    """The record as ``show version`` prints it (without uptime, date and the Docker images)."""
    head = [("SONiC Software Version", record.software_version)]
    head += [
        (key, value)
        for key, value in (
            ("Distribution", record.distribution),
            ("Kernel", record.kernel),
            ("Build commit", record.build_commit),
            ("Build date", record.build_date),
        )
        if value is not None
    ]
    platform = [
        (key, value)
        for key, value in (
            ("Platform", record.platform),
            ("HwSKU", record.hwsku),
            ("ASIC", record.asic),
            ("ASIC Count", None if record.asic_count is None else str(record.asic_count)),
            ("Serial Number", record.serial_number),
            ("Model Number", record.model_number),
            ("Hardware Revision", record.hardware_revision),
        )
        if value is not None
    ]
    out = [f"{k}: {v}" for k, v in head]
    if platform:
        out += ["", *(f"{k}: {v}" for k, v in platform)]
    return "\n".join(out) + "\n"
