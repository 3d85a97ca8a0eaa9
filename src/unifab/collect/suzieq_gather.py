"""SuzieQ gather files (``sq-poller --run-once gather``) → a unifab bundle directory.

A gather file is a run of concatenated JSON lists of per-host records ``{hostname, devtype, cmd,
status, data, ...}``; SuzieQ writes one file per service (``device.output``, ``interfaces.output``,
``lldp.output``, ...). :func:`gather_to_bundle` reads any number of them (a command captured in a
later file replaces the same command from an earlier one, as :func:`~unifab.parse.switch.eos_json.merge_gathers`
does) and writes, for each Arista EOS host (``devtype == "eos"``)::

    switches/<host>/eos/show-interfaces.json             the ``show interfaces`` eAPI reply
    switches/<host>/eos/show-lldp-neighbors-detail.json  the ``show lldp neighbors detail`` reply
    switches/<host>/eos/show-version.json                the ``show version`` reply
    switches/<host>/eos/running-config.txt               RECONSTRUCTED, see below

The three ``show-*.json`` files hold the record's ``data`` object exactly as captured (a bare eAPI
``result`` object, written as JSON); a command the gather lacks (or that failed, ``status != 200``)
is not written and is named in the returned notes.

**The running-config is a minimal reconstruction, not a capture.** SuzieQ does not collect
``show running-config``, but the EOS reader (:mod:`unifab.collect.eos`) requires one and takes the
switch's ports from its ``interface`` stanzas. So ``running-config.txt`` holds only what the
``show interfaces`` reply proves about the configuration:

* ``hostname <host>``;
* one ``interface <name>`` stanza per interface of ``show interfaces``, in EOS order;
* ``no switchport`` on Ethernet/Port-Channel interfaces whose ``forwardingModel`` is ``routed``
  (the reader's EOS default is a switchport, which would also change the default QoS trust);
* ``mtu <n>`` only where the reply says an MTU is configured (``l3MtuConfigured: true``) — an
  interface running its default MTU gets no ``mtu`` line, as in a real running-config;
* ``shutdown`` where ``interfaceStatus`` is ``disabled``.

Nothing else (no QoS, no addresses, no ``channel-group``): QoS findings on such a bundle reflect EOS
defaults, not the devices' real QoS. ``show-interfaces.json`` remains the source of each port's
operational MTU, speed (``bandwidth``; vEOS reports 0, i.e. unknown) and description: the reader
uses it wherever the configuration is silent, and where an ``mtu`` line was reconstructed it carries
the same value as the reply.

Juniper hosts (``devtype`` ``junos-qfx``, ``junos-mx``, ...: any ``junos*``) are written as the Junos reader
(:mod:`unifab.collect.junos`) expects them, each file the record's ``data`` text exactly as captured::

    switches/<host>/junos/show-interfaces.json             show interface(s) | display json
    switches/<host>/junos/show-lldp-neighbors-detail.json  show lldp neighbors detail | display json

SuzieQ records a CLI command's exit status (0 is success) where eAPI's is HTTP (200). Hosts of any other
``devtype`` (``linux`` servers, ...) are not imported; each is listed in the returned notes as
``"<host> (<devtype>): not imported"``. Their LLDP peers on the switch side still appear as links whose
far end is not a device of the bundle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from unifab.collect import junos as junos_reader
from unifab.collect.eos import LLDP_FILE, RUNNING_CONFIG, SHOW_INTERFACES, SHOW_VERSION
from unifab.errors import ParseError
from unifab.parse.switch import eos_json, junos

__all__ = ["EOS_FILES", "gather_to_bundle", "reconstruct_running_config"]

# gather command (without "| json") -> the file the EOS reader expects it in
EOS_FILES = {
    "show interfaces": SHOW_INTERFACES,
    "show lldp neighbors detail": LLDP_FILE,
    "show version": SHOW_VERSION,
}
_ROUTABLE_PREFIXES = ("Ethernet", "Port-Channel")  # where `no switchport` means something


# Junos CLI commands as SuzieQ sends them (``| display json | no-more`` taken off) -> the Junos reader's files
JUNOS_FILES = {
    "show interface": junos_reader.INTERFACES_FILE,
    "show interfaces": junos_reader.INTERFACES_FILE,
    "show lldp neighbors detail": junos_reader.LLDP_FILE,
}
JUNOS_PARSERS = {
    junos_reader.INTERFACES_FILE: junos.parse_interfaces_json,
    junos_reader.LLDP_FILE: junos.parse_lldp_json,
}


@dataclass(slots=True)
class _Host:
    devtype: str
    replies: dict[str, object] = field(default_factory=dict)  # EOS: command -> eAPI result; Junos: file -> text
    failed: set[str] = field(default_factory=set)


def gather_to_bundle(paths: list[Path], out_dir: Path) -> list[str]:
    """Write a bundle under ``out_dir`` from the gather files ``paths``; return notes on what was left out.

    Raises :class:`~unifab.errors.ParseError` when a file is not a SuzieQ gather or an EOS reply is not
    the shape its reader expects (the same readers the bundle loader uses), and ``OSError`` when a
    file cannot be read or written.
    """
    hosts: dict[str, _Host] = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        source = str(path)
        eos_json.parse_suzieq_gather(text, source)  # validates records and every EOS reply read here
        _collect(text, source, hosts)
    notes: list[str] = []
    for name in sorted(hosts):
        host = hosts[name]
        if _is_junos(host.devtype):
            notes += _write_junos(name, host, out_dir)
            continue
        if host.devtype != "eos":
            notes.append(f"{name} ({host.devtype}): not imported")
            continue
        eos_dir = out_dir / "switches" / name / "eos"
        eos_dir.mkdir(parents=True, exist_ok=True)
        for cmd, file_name in EOS_FILES.items():
            if cmd in host.replies:
                (eos_dir / file_name).write_bytes(orjson.dumps(host.replies[cmd], option=orjson.OPT_INDENT_2) + b"\n")
            elif cmd in host.failed:
                notes.append(f"{name} (eos): {cmd!r} failed in the gather; {file_name} not written")
            else:
                notes.append(f"{name} (eos): {cmd!r} not in the gather; {file_name} not written")
        interfaces = host.replies.get("show interfaces")
        config = reconstruct_running_config(name, interfaces, f"{name}: show interfaces")
        (eos_dir / RUNNING_CONFIG).write_text(config, encoding="utf-8")
    return notes


def reconstruct_running_config(hostname: str, show_interfaces: object, source: str = "<input>") -> str:
    """The minimal ``running-config.txt`` described in the module docstring, from a ``show interfaces`` reply.

    ``show_interfaces`` may be ``None`` (no reply captured): the config then holds only the hostname.
    """
    lines = [
        "! reconstructed by unifab from a SuzieQ gather ('show interfaces'); not a captured config",
        f"hostname {hostname}",
        "!",
    ]
    if show_interfaces is None:
        return "\n".join(lines) + "\n"
    eos_json.interfaces_from(show_interfaces, source, "")  # raises ParseError on a bad shape
    if not isinstance(show_interfaces, dict) or not isinstance(show_interfaces.get("interfaces"), dict):
        raise ParseError(source, "a 'show interfaces' reply with an 'interfaces' object", key="interfaces")
    raw: dict[str, object] = show_interfaces["interfaces"]
    for name in sorted(raw, key=_interface_sort_key):
        entry = raw[name]
        if not isinstance(entry, dict):
            raise ParseError(source, "an object", key=f"interfaces.{name}")
        lines.append(f"interface {name}")
        if name.startswith(_ROUTABLE_PREFIXES) and "." not in name and entry.get("forwardingModel") == "routed":
            lines.append("   no switchport")
        mtu = entry.get("mtu")
        if entry.get("l3MtuConfigured") is True and isinstance(mtu, int) and not isinstance(mtu, bool) and mtu > 0:
            lines.append(f"   mtu {mtu}")
        if entry.get("interfaceStatus") == "disabled":
            lines.append("   shutdown")
        lines.append("!")
    lines.append("end")
    return "\n".join(lines) + "\n"


def _interface_sort_key(name: str) -> tuple[object, ...]:
    """``Ethernet2`` before ``Ethernet10``; ``Ethernet3`` before ``Ethernet3.2``."""
    head = name.rstrip("0123456789/.")
    parts: list[object] = [head]
    for piece in name[len(head) :].replace(".", "/").split("/"):
        parts.append(int(piece) if piece.isdigit() else -1)
    return tuple(parts)


def _is_junos(devtype: str) -> bool:
    return devtype.startswith("junos")


def _write_junos(name: str, host: _Host, out_dir: Path) -> list[str]:
    """A Junos host's replies as the Junos reader's files (each checked by its parser first)."""
    notes: list[str] = []
    junos_dir = out_dir / "switches" / name / "junos"
    for file_name in dict.fromkeys(JUNOS_FILES.values()):
        text = host.replies.get(file_name)
        if not isinstance(text, str):
            why = "failed in the gather" if file_name in host.failed else "not in the gather"
            notes.append(f"{name} ({host.devtype}): {file_name} {why}; not written")
            continue
        JUNOS_PARSERS[file_name](text, f"{name}: {file_name}")  # ParseError names the host and the reply
        junos_dir.mkdir(parents=True, exist_ok=True)
        (junos_dir / file_name).write_text(text, encoding="utf-8")
    return notes


def _junos_record(host: _Host, cmd: str, record: dict[str, object]) -> None:
    """Keep one Junos reply (its ``data`` text) under the reader's file name; other commands are ignored."""
    cmd = cmd.strip().removesuffix("| no-more").strip().removesuffix("| display json").strip()
    file_name = JUNOS_FILES.get(cmd)
    if file_name is None:
        return
    data = record.get("data")
    if record.get("status") not in (0, 200) or not isinstance(data, str) or not data.strip():
        host.failed.add(file_name)
        return
    host.replies[file_name] = data
    host.failed.discard(file_name)


def _collect(text: str, source: str, hosts: dict[str, _Host]) -> None:
    """Add the records of one gather file to ``hosts`` (a later reply replaces an earlier one)."""
    decoder = json.JSONDecoder()
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return
        try:
            chunk, i = decoder.raw_decode(text, i)
        except ValueError as exc:  # already accepted by parse_suzieq_gather; kept for safety
            raise ParseError(source, f"a JSON list of SuzieQ records ({exc})") from None
        for record in chunk if isinstance(chunk, list) else [chunk]:
            if not isinstance(record, dict):
                continue
            name, devtype, cmd = record.get("hostname"), record.get("devtype"), record.get("cmd")
            if not (isinstance(name, str) and isinstance(devtype, str) and isinstance(cmd, str)):
                continue
            host = hosts.setdefault(name, _Host(devtype))
            if _is_junos(devtype):
                _junos_record(host, cmd, record)
                continue
            if devtype != "eos":
                continue
            cmd = cmd.removesuffix("| json").strip()
            if cmd not in EOS_FILES:
                continue
            if record.get("status") != 200:
                host.failed.add(cmd)
                continue
            data = record.get("data")
            if isinstance(data, str):
                data = orjson.loads(data)
            host.replies[cmd] = data
            host.failed.discard(cmd)
