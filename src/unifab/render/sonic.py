"""CONFIG_DB edits for a SONiC switch, as ``sonic-db-cli`` commands an operator can paste.

Keys, fields and values come from the switch's own configuration, so every one is quoted for the
shell (:func:`quote`, :func:`word`): a name holding a quote or a ``;`` stays one argument.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping

from unifab.model import PfcWatchdog

__all__ = [
    "cable_length",
    "dscp_to_tc",
    "hset",
    "hset_fields",
    "pfc_enable",
    "pfc_watchdog",
    "port_fec",
    "port_mtu",
    "port_speed",
    "queue_scheduler",
    "queue_wred",
    "quote",
    "word",
    "wred_thresholds",
]

_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:,@%+=-]+")


def quote(text: str) -> str:
    """``text`` in single quotes, embedded single quotes escaped (``'a'"'"'b'``)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def word(text: str) -> str:
    """``text`` bare when it is a plain word (port names, numbers), else shell-quoted."""
    return text if _PLAIN_WORD.fullmatch(text) else shlex.quote(text)


def hset(key: str, field: str, value: str, *more: tuple[str, str]) -> str:
    pairs = " ".join(f"{quote(f)} {quote(v)}" for f, v in ((field, value), *more))
    return f"sonic-db-cli CONFIG_DB hset {quote(key)} {pairs}"


def hset_fields(key: str, fields: Mapping[str, str | int]) -> str:
    """One ``hset`` writing every field of ``fields`` at once (in their order): Redis applies it atomically,
    so a reader (buffermgrd, bufferorch) never sees some fields changed and others not, e.g. a buffer
    profile with the new xoff but the old, smaller size."""
    if not fields:
        raise ValueError(f"hset_fields({key!r}) needs at least one field")
    (first, *rest) = ((f, str(v)) for f, v in fields.items())
    return hset(key, *first, *rest)


def pfc_enable(port: str, priorities: Iterable[int]) -> str:
    return hset(f"PORT_QOS_MAP|{port}", "pfc_enable", ",".join(str(p) for p in sorted(priorities)))


def dscp_to_tc(map_name: str, dscp: int, tc: int) -> str:
    return hset(f"DSCP_TO_TC_MAP|{map_name}", str(dscp), str(tc))


def queue_wred(port: str, queue: int, profile: str) -> str:
    return hset(f"QUEUE|{port}|{queue}", "wred_profile", profile)


def port_mtu(port: str, value: int) -> str:
    return f"sudo config interface mtu {word(port)} {value}"


def pfc_watchdog(port: str, wd: PfcWatchdog) -> str:
    fields = [("action", wd.action), ("detection_time", wd.detection_ms), ("restoration_time", wd.restoration_ms)]
    present = [(name, str(value)) for name, value in fields if value is not None] or [("action", "drop")]
    return hset(f"PFC_WD|{port}", *present[0], *present[1:])


def queue_scheduler(port: str, queue: int, scheduler: str) -> str:
    return hset(f"QUEUE|{port}|{queue}", "scheduler", scheduler)


def cable_length(port: str, metres: int, table_key: str = "AZURE") -> str:
    return hset(f"CABLE_LENGTH|{table_key}", port, f"{metres}m")


def wred_thresholds(profile: str, min_bytes: int, max_bytes: int) -> str:
    return hset(
        f"WRED_PROFILE|{profile}", "green_min_threshold", str(min_bytes), ("green_max_threshold", str(max_bytes))
    )


def port_speed(port: str, mbps: int) -> str:
    return f"sudo config interface speed {word(port)} {mbps}"


def port_fec(port: str, fec: str) -> str:
    return f"sudo config interface fec {word(port)} {word(fec)}"
