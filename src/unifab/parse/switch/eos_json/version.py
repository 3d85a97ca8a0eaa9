"""``show version``: :func:`version_from`."""

from __future__ import annotations

from unifab.errors import ParseError
from unifab.parse.switch.eos_json.access import as_object, opt_float, opt_int, opt_str
from unifab.parse.switch.eos_json.commands import SHOW_VERSION
from unifab.parse.switch.eos_json.records import EosVersion

__all__ = ["version_from"]


def version_from(obj: object, source: str = "<input>", path: str = "") -> EosVersion:
    """Read a decoded ``show version`` reply."""
    v = as_object(obj, path, source)
    if "modelName" not in v and "version" not in v:
        raise ParseError(source, f"'modelName' and 'version' (the {SHOW_VERSION!r} reply)", key=path or "<root>")
    return EosVersion(
        model_name=opt_str(v, "modelName", path, source),
        version=opt_str(v, "version", path, source),
        internal_version=opt_str(v, "internalVersion", path, source),
        serial_number=opt_str(v, "serialNumber", path, source),
        system_mac_address=opt_str(v, "systemMacAddress", path, source),
        hardware_revision=opt_str(v, "hardwareRevision", path, source),
        architecture=opt_str(v, "architecture", path, source),
        mfg_name=opt_str(v, "mfgName", path, source),
        uptime_s=opt_float(v, "uptime", path, source),
        mem_total_kb=opt_int(v, "memTotal", path, source),
        mem_free_kb=opt_int(v, "memFree", path, source),
        bootup_timestamp=opt_float(v, "bootupTimestamp", path, source),
    )
