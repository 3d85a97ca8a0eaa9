"""SuzieQ ``sq-poller --run-once gather`` files: :func:`parse_suzieq_gather`, :func:`merge_gathers`.

A gather file is concatenated JSON lists of ``{hostname, devtype, cmd, status, data, ...}`` records; each
EOS host's ``show interfaces``, ``show lldp neighbors detail`` and ``show version`` replies are fed to the
readers of this package.
"""

from __future__ import annotations

import json

import orjson

from unifab.errors import ParseError
from unifab.parse._json import child
from unifab.parse.switch.eos_json.access import as_object, opt_int, opt_str
from unifab.parse.switch.eos_json.interfaces import interfaces_from
from unifab.parse.switch.eos_json.lldp import lldp_neighbors_from
from unifab.parse.switch.eos_json.records import (
    EosInterfaces,
    EosLldpNeighbors,
    EosVersion,
    SuzieqEosHost,
    SuzieqGather,
)
from unifab.parse.switch.eos_json.version import version_from

__all__ = ["merge_gathers", "parse_suzieq_gather"]


def _chunks(text: str, source: str) -> list[tuple[int, object]]:
    """The concatenated JSON values of ``text`` with the line each starts on."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, object]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return out
        line = text.count("\n", 0, i) + 1
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ParseError(source, f"a JSON list of SuzieQ records ({exc.msg})", line=exc.lineno) from None
        except ValueError as exc:  # e.g. an integer literal longer than Python converts
            raise ParseError(source, f"a JSON list of SuzieQ records ({exc})", line=line) from None
        except RecursionError:
            raise ParseError(source, "JSON nested less deeply", line=line) from None
        out.append((line, value))


_GATHER_COMMANDS = {"show interfaces": "interfaces", "show lldp neighbors detail": "lldp", "show version": "version"}


def parse_suzieq_gather(text: str | bytes, source: str = "<input>") -> SuzieqGather:
    """Read a SuzieQ gather file and the EOS replies it holds (see the module docstring)."""
    if isinstance(text, bytes):
        try:
            text = text.decode()
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text (bad byte at offset {exc.start})") from None
    chunks = _chunks(text, source)
    if not chunks:
        raise ParseError(source, "a JSON list of SuzieQ records, got no data")
    found: dict[str, dict[str, object]] = {}
    meta: dict[str, tuple[str | None, str | None]] = {}
    other_cmds: dict[str, set[str]] = {}
    failed: dict[str, set[str]] = {}
    others: dict[str, str] = {}
    for ci, (line, chunk) in enumerate(chunks):
        records = chunk if isinstance(chunk, list) else [chunk]
        for ri, record in enumerate(records):
            rp = f"[{ci}][{ri}]"
            r = as_object(record, rp, source, f"a SuzieQ record object (list starting on line {line})")
            host = opt_str(r, "hostname", rp, source)
            devtype = opt_str(r, "devtype", rp, source)
            cmd = opt_str(r, "cmd", rp, source)
            if host is None or devtype is None or cmd is None:
                raise ParseError(source, "a record with 'hostname', 'devtype' and 'cmd'", key=rp)
            if devtype != "eos":
                others.setdefault(host, devtype)
                continue
            meta[host] = (opt_str(r, "namespace", rp, source), opt_str(r, "address", rp, source))
            found.setdefault(host, {})
            cmd = cmd.removesuffix("| json").strip()
            status = opt_int(r, "status", rp, source)
            if status != 200:
                failed.setdefault(host, set()).add(cmd)
                continue
            slot = _GATHER_COMMANDS.get(cmd)
            if slot is None:
                other_cmds.setdefault(host, set()).add(cmd)
                continue
            data = r.get("data")
            dp = child(rp, "data")
            if isinstance(data, str):
                try:
                    data = orjson.loads(data)
                except orjson.JSONDecodeError as exc:
                    raise ParseError(source, f"the {cmd!r} reply as JSON ({exc.msg})", key=dp) from None
            if slot == "interfaces":
                found[host][slot] = interfaces_from(data, source, dp)
            elif slot == "lldp":
                found[host][slot] = lldp_neighbors_from(data, source, dp)
            else:
                found[host][slot] = version_from(data, source, dp)
    hosts: dict[str, SuzieqEosHost] = {}
    for host in sorted(found):
        got = found[host]
        namespace, address = meta[host]
        version = got.get("version")
        interfaces = got.get("interfaces")
        lldp = got.get("lldp")
        hosts[host] = SuzieqEosHost(
            hostname=host,
            namespace=namespace,
            address=address,
            version=version if isinstance(version, EosVersion) else None,
            interfaces=interfaces if isinstance(interfaces, EosInterfaces) else None,
            lldp=lldp if isinstance(lldp, EosLldpNeighbors) else None,
            other_commands=tuple(sorted(other_cmds.get(host, ()))),
            failed_commands=tuple(sorted(failed.get(host, ()))),
        )
    return SuzieqGather(hosts=hosts, other_hosts=dict(sorted(others.items())))


def merge_gathers(*gathers: SuzieqGather) -> SuzieqGather:
    """One view of several gather files (SuzieQ writes one per service: device, interfaces, lldp, ...).

    For each host, a command captured in a later gather replaces the same command from an earlier one.
    """
    hosts: dict[str, SuzieqEosHost] = {}
    others: dict[str, str] = {}
    for gather in gathers:
        others.update(gather.other_hosts)
        for name, h in gather.hosts.items():
            old = hosts.get(name)
            if old is None:
                hosts[name] = h
                continue
            hosts[name] = SuzieqEosHost(
                hostname=name,
                namespace=h.namespace or old.namespace,
                address=h.address or old.address,
                version=h.version or old.version,
                interfaces=h.interfaces or old.interfaces,
                lldp=h.lldp or old.lldp,
                other_commands=tuple(sorted(set(old.other_commands) | set(h.other_commands))),
                failed_commands=tuple(sorted(set(old.failed_commands) | set(h.failed_commands))),
            )
    return SuzieqGather(hosts=dict(sorted(hosts.items())), other_hosts=dict(sorted(others.items())))
