"""Arista EOS ``show version`` as CLI text (every EOS 4.x), read into the eAPI record
:class:`unifab.parse.switch.eos_json.EosVersion` so both forms of the command feed the model alike::

    Arista DCS-7060X6-64PE           (first line: "Arista <model>"; the eAPI reply's modelName)
    Hardware version: 11.00
    Serial number: JPE11400249
    Hardware MAC address: fcbd.67c7.ffe7
    System MAC address: fcbd.67c7.ffe7

    Software image version: 4.27.6M  (eAPI "version")
    Architecture: i686
    Internal build version: 4.27.6M-28481162.4276M
    Internal build ID: f62c8154-...
    Image format version: 2.0
    Image optimization: DEFAULT

    Uptime: 134 weeks, 5 days, 23 hours and 44 minutes
    Total memory: 3982820 kB
    Free memory: 1807180 kB

``Software image version`` is required. Values may be padded with spaces (older releases align them) and may
be empty (vEOS prints ``Hardware version:`` with nothing after it: ``None``). Uptime stays unread (text, not
seconds); the bootup timestamp is not printed. The bundle file is ``switches/<switch>/eos/show-version.txt``;
``show-version.json`` (the eAPI reply) is read first when both are there.
"""

from __future__ import annotations

import re

from unifab.errors import ParseError
from unifab.parse.switch.eos_json import EosVersion

__all__ = ["FIELDS", "parse"]

FIELDS = {
    "Hardware version": "hardware_revision",
    "Serial number": "serial_number",
    "System MAC address": "system_mac_address",
    "Software image version": "version",
    "Architecture": "architecture",
    "Internal build version": "internal_version",
    "Total memory": "mem_total_kb",
    "Free memory": "mem_free_kb",
}
_LINE = re.compile(r"^([A-Za-z][A-Za-z ]*?):[ \t]*(.*?)\s*$")
_MODEL = re.compile(r"^Arista\s+(\S.*?)\s*$")
_KB = re.compile(r"^(\d+)\s*kB$")


def parse(text: str, source: str = "<input>") -> EosVersion:
    values: dict[str, str | None] = {}
    model: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if model is None and not values:
            m = _MODEL.match(raw.strip())
            if m is not None:
                model = m.group(1)
                continue
        m = _LINE.match(raw)
        if m is None or m.group(1) not in FIELDS:
            continue
        name = FIELDS[m.group(1)]
        if name in values:
            raise ParseError(source, f"one {m.group(1)!r} line (it repeats)", line=number)
        value = m.group(2)
        if any(ord(c) < 32 for c in value):
            raise ParseError(source, f"printable text after {m.group(1) + ':'!r}", line=number)
        if name.startswith("mem_") and value:
            kb = _KB.match(value)
            if kb is None:
                raise ParseError(source, f"'<n> kB' after {m.group(1) + ':'!r}, got {value!r}", line=number)
            value = kb.group(1)
        values[name] = value or None
    if not values.get("version"):
        raise ParseError(source, "a 'Software image version: <EOS version>' line (EOS show version)", line=1)
    return EosVersion(
        model_name=model,
        version=values.get("version"),
        internal_version=values.get("internal_version"),
        serial_number=values.get("serial_number"),
        system_mac_address=values.get("system_mac_address"),
        hardware_revision=values.get("hardware_revision"),
        architecture=values.get("architecture"),
        mfg_name=None,  # the text does not print the manufacturer
        uptime_s=None,
        mem_total_kb=_int(values.get("mem_total_kb")),
        mem_free_kb=_int(values.get("mem_free_kb")),
        bootup_timestamp=None,
    )


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None
