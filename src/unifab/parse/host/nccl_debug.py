"""``NCCL_DEBUG=INFO`` logs (NCCL 2.x): which network transport each host selected.

NCCL prefixes every line with ``<host>:<pid>:<tid> [<cudaDev>] NCCL INFO`` (launchers may add their own
prefix before it, e.g. mpirun's ``[1,0]<stdout>:``). The lines read (``src/transport/net_ib/init.cc``,
``src/transport/net_socket.cc``)::

    nid000012:86554:86554 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; OOB nmn0:10.252.1.69<0>
    nid000012:86066:86066 [0] NCCL INFO NET/Socket : Using [0]nmn0:10.252.1.69<0> [1]hsn0:10.253.6.188<0>
    nid000012:86066:86066 [0] NCCL INFO NET/IB : No device found.

An IB device prints as ``[<idx>]<ibdev>:<port>[:<rail>][:<plane>]/<IB|RoCE|UNSPECIFIED>`` with ``[RO]`` when
PCI relaxed ordering is on; a socket interface as ``[<idx>]<ifname>:<address><<port>>``.

``NCCL WARN`` lines carry the source location before ``NCCL WARN``; the one read is the IB transport's completion
error (``src/transport/net_ib``), printed three ways across NCCL versions::

    node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092>
        with error 12, opcode 0, len 0, vendor err 129 (Recv)                                    (2.1x)
    [2026-03-03 12:11:38] h7:185303:186751 [1] transport/net_ib.cc:2453 NCCL WARN NET/IB: Got completion from peer
        10.99.91.63<51161> with status=4 opcode=32614 len=32614 vendor err 81 (Send) localGid ::ffff:10.99.92.59
        remoteGids::ffff:10.99.91.63 hca mlx5_1                                                  (2.2x)
    ... NCCL WARN NET/IB: Got completion from peer 10.153.235.13<40554> with status=IBV_WC_RETRY_EXC_ERR(12)
        opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 localGid ::ffff:1.1.2.2 remoteGids::ffff:1.1.1.4
        hca mlx5_1                                                                               (2.27+)

(one line each). Every process that initialises a communicator as its rank 0 (NCCL 2.2x and later: every
process) prints the library's release (``src/init.cc`` ``showVersion``)::

    lrdn2296:4063850:4063850 [1] NCCL INFO NCCL version 2.22.3+cuda12.2

read into :class:`NcclVersion` (the release ``2.22.3`` and the build ``cuda12.2`` apart) in ``versions``, and
per host in :attr:`NcclHost.versions`. ``NCCL_DEBUG=VERSION`` prints the same text without the host prefix, so
no host can be told from it: such lines are ignored. :func:`scan_versions` reads only these lines, for readers
that need the versions of a large log and nothing else.

A line may start with a time stamp: NCCL's own ``[%F %T]`` (``NCCL_DEBUG_TIMESTAMP_FORMAT``) or
an RFC 3339 one (``kubectl logs --timestamps``, journald ``short-iso``); it is kept as text in ``timestamp``.
The ``(Send|Recv)`` word, the GIDs and ``hca`` are optional, as older versions do not print them.

The record groups by host: :class:`NcclHost` holds the IB devices of the ``NET/IB : Using`` lines (merged
over processes, first occurrence kept), ``ib_no_device`` when any process printed ``No device found``,
``socket_fallback`` when any process printed ``NET/Socket : Using`` (NCCL then runs over TCP), the socket
``interfaces`` and the IB out-of-band interface. Completion errors are in ``errors``, in log order. Lines
that are not ``NCCL INFO``/``WARN`` lines, and NCCL lines about anything else, are ignored; a log without any NCCL
line is a :class:`~unifab.errors.ParseError`, as is a ``NET/IB : Using`` or ``NET/Socket : Using`` line that does
not list devices in the shape above, or a ``Got completion from peer`` line without a status and a vendor error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems

__all__ = [
    "NcclCompletionError",
    "NcclDebug",
    "NcclHost",
    "NcclIbDevice",
    "NcclInterface",
    "NcclVersion",
    "parse",
    "scan_versions",
]

_PREFIX = re.compile(
    r"(?:^|[\s:>\]])(?P<host>[A-Za-z0-9][A-Za-z0-9._-]*):(?P<pid>[0-9]+):(?P<tid>[0-9]+)"
    r" \[(?P<dev>[^\]]*)\](?: \S+)? NCCL (?P<level>INFO|WARN) (?P<msg>.*)$"
)
_STAMP = re.compile(
    r"^\s*(?:\[(?P<bracket>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\]"
    r"|(?P<rfc>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?))\s"
)
_COMPLETION = re.compile(
    r"^NET/IB(?:/GIN)? ?: ?Got completion from peer (?:(?P<peer>[^\s<]+)(?:<(?P<pport>[0-9]+)>)? )?with "
    r"(?:error (?P<err>[0-9]+)|status=(?:(?P<sname>[A-Z_]+)\()?(?P<status>[0-9]+)\)?),? ?"
    r"(?:opcode[= ](?:(?P<oname>[A-Z_]+)\()?(?P<opcode>[0-9]+)\)?,? ?)?(?:len[= ](?P<len>[0-9]+),? ?)?"
    r"vendor(?: err |_err=)(?P<verr>[0-9]+)(?: \((?P<dir>[A-Za-z]+)\))?"
    r"(?: localGid ?(?P<lgid>[0-9A-Fa-f:.]+))?(?: remoteGids? ?(?P<rgid>[0-9A-Fa-f:.]+))?(?: hca (?P<hca>\S+))?"
)
_IB_USING = re.compile(r"^NET/IB ?: ?Using(?P<devs>.*?)(?:; ?OOB (?P<oob>\S+))?$")
_IB_DEVICE = re.compile(
    r"\[(?P<idx>[0-9]+)\](?P<name>[^\s:\[\]/]+):(?P<port>[0-9]+)(?::[0-9]+){0,2}/(?P<link>IB|RoCE|UNSPECIFIED)(?P<ro>\s?\[RO\])?"
)
_SOCKET_USING = re.compile(r"^NET/Socket ?: ?Using(?P<ifs>.*)$")
_INTERFACE = re.compile(r"\[(?P<idx>[0-9]+)\](?P<name>[^\s:\[\]]+):(?P<addr>[^\s<>]+)<(?P<port>[0-9]+)>")
_OOB = re.compile(r"^(?P<name>[^\s:\[\]]+):(?P<addr>[^\s<>]+)<(?P<port>[0-9]+)>$")
_NO_IB = re.compile(r"^NET/IB ?: ?No device found\.?$")
_VERSION_MSG = "NCCL version "
_VERSION = re.compile(
    r"^NCCL version (?P<release>\d{1,4}(?:\.\d{1,6}){1,3}[-a-z0-9]{0,16})"
    r"(?:\+(?P<build>[A-Za-z0-9._-]{1,32}))?(?:\s.*)?$"
)


@dataclass(frozen=True, slots=True)
class NcclIbDevice:
    index: int  # NCCL's net device index
    name: str  # "mlx5_0"
    port: int
    link_layer: str  # "IB" | "RoCE" | "UNSPECIFIED"
    relaxed_ordering: bool  # "[RO]"


@dataclass(frozen=True, slots=True)
class NcclInterface:
    index: int | None  # None for the IB OOB interface
    name: str  # "nmn0"
    address: str  # "10.252.1.69", "fe80::1%ib0"
    port: int  # the number in <...>


@dataclass(frozen=True, slots=True)
class NcclCompletionError:
    """One ``Got completion from peer`` warning: a work request of ``host`` failed against a remote QP."""

    line: int  # 1-based line of the log
    timestamp: str | None  # as printed before the NCCL prefix, None when the line has none
    host: str  # the reporting host (NCCL's prefix)
    pid: int
    cuda_dev: str  # the [N] of the prefix
    peer: str | None  # the peer's socket address or name as printed ("10.2.0.5"), None when not printed
    peer_port: int | None
    status: int  # ibv_wc_status: 12 = IBV_WC_RETRY_EXC_ERR (transport retries exhausted)
    status_name: str | None  # "IBV_WC_RETRY_EXC_ERR" when printed
    opcode: int | None
    length: int | None
    vendor_err: int
    direction: str | None  # "Send" | "Recv" | ... as printed
    local_gid: str | None  # "::ffff:10.99.92.59" as printed
    remote_gid: str | None
    hca: str | None  # the local RDMA device ("mlx5_1")


@dataclass(frozen=True, slots=True)
class NcclVersion:
    """One ``NCCL version`` line: the library release a process of ``host`` loaded."""

    line: int  # 1-based line of the log
    host: str
    pid: int
    release: str  # "2.21.5"
    build: str | None  # "cuda12.4": the CUDA it was built for, as printed after "+"


@dataclass(frozen=True, slots=True)
class NcclHost:
    ib_devices: tuple[NcclIbDevice, ...]
    ib_no_device: bool
    socket_fallback: bool
    interfaces: tuple[NcclInterface, ...]  # NET/Socket interfaces
    oob_interface: NcclInterface | None  # NET/IB out-of-band (bootstrap) interface
    pids: tuple[int, ...]  # processes seen on this host, in first-seen order
    versions: tuple[str, ...] = ()  # NCCL releases its processes printed, first-seen order ("2.21.5")


@dataclass(frozen=True, slots=True)
class NcclDebug:
    hosts: dict[str, NcclHost]  # in first-seen order
    errors: tuple[NcclCompletionError, ...] = ()  # completion errors, in log order
    versions: tuple[NcclVersion, ...] = ()  # NCCL version lines, in log order


class _Host:
    def __init__(self) -> None:
        self.ib: dict[tuple[int, str, int], NcclIbDevice] = {}
        self.no_ib = False
        self.socket = False
        self.interfaces: dict[tuple[int | None, str, str], NcclInterface] = {}
        self.oob: NcclInterface | None = None
        self.pids: dict[int, None] = {}
        self.versions: dict[str, None] = {}

    def freeze(self) -> NcclHost:
        return NcclHost(
            ib_devices=tuple(self.ib.values()),
            ib_no_device=self.no_ib,
            socket_fallback=self.socket,
            interfaces=tuple(self.interfaces.values()),
            oob_interface=self.oob,
            pids=tuple(self.pids),
            versions=tuple(self.versions),
        )


def _items(listing: str, pattern: re.Pattern[str], what: str, number: int, source: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    rest = listing.strip()
    while rest:
        m = pattern.match(rest)
        if m is None:
            raise ParseError(source, f"expected {what}, got {rest[:40]!r}", line=number)
        found.append(m)
        rest = rest[m.end() :].strip()
    if not found:
        raise ParseError(source, f"expected at least one {what}", line=number)
    return found


def _ib_using(host: _Host, m: re.Match[str], number: int, source: str) -> None:
    """The line's devices and OOB interface, read whole before any is kept (a bad one costs the line only)."""
    found = _items(m["devs"], _IB_DEVICE, "an IB device such as '[0]mlx5_0:1/RoCE'", number, source)
    devices = [NcclIbDevice(int(d["idx"]), d["name"], int(d["port"]), d["link"], d["ro"] is not None) for d in found]
    oob = None
    if m["oob"] is not None:
        o = _OOB.match(m["oob"])
        if o is None:
            raise ParseError(
                source, f"expected an OOB interface such as 'eth0:10.0.0.1<0>', got {m['oob']!r}", line=number
            )
        oob = NcclInterface(None, o["name"], o["addr"], int(o["port"]))
    for device in devices:
        host.ib.setdefault((device.index, device.name, device.port), device)
    if host.oob is None:
        host.oob = oob


def _socket_using(host: _Host, m: re.Match[str], number: int, source: str) -> None:
    found = _items(m["ifs"], _INTERFACE, "an interface such as '[0]eth0:10.0.0.1<0>'", number, source)
    host.socket = True
    for i in found:
        interface = NcclInterface(int(i["idx"]), i["name"], i["addr"], int(i["port"]))
        host.interfaces.setdefault((interface.index, interface.name, interface.address), interface)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> NcclDebug:
    """Read the NET/IB and NET/Socket selection lines of an ``NCCL_DEBUG=INFO`` log, grouped by host.

    Read in part: a selection, version or completion-error line that does not parse costs that line only,
    named (without ``problems``, the first one is raised); a log with no NCCL line at all is refused."""
    log = problems if problems is not None else ParseProblems.strict(source)
    if not text.strip():
        raise ParseError(source, "expected an NCCL_DEBUG=INFO log, got empty text", line=1)
    hosts: dict[str, _Host] = {}
    errors: list[NcclCompletionError] = []
    versions: list[NcclVersion] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        p = _PREFIX.search(raw.rstrip())
        if p is None:
            continue
        host = hosts.setdefault(p["host"], _Host())
        host.pids.setdefault(int(p["pid"]), None)
        msg = " ".join(p["msg"].split())
        with log.skipping(f"line {number}"):
            if p["level"] == "WARN":
                if "Got completion from peer" in msg:
                    errors.append(_completion(raw, p, msg, number, source))
                continue
            if msg.startswith(_VERSION_MSG):
                versions.append(_version(p, msg, number, source))
                host.versions.setdefault(versions[-1].release, None)
            elif m := _IB_USING.match(msg):
                _ib_using(host, m, number, source)
            elif m := _SOCKET_USING.match(msg):
                _socket_using(host, m, number, source)
            elif _NO_IB.match(msg):
                host.no_ib = True
    if not hosts:
        raise ParseError(source, "expected '<host>:<pid>:<tid> [<dev>] NCCL INFO|WARN ...' lines, found none", line=1)
    return NcclDebug({name: h.freeze() for name, h in hosts.items()}, tuple(errors), tuple(versions))


def _version(p: re.Match[str], msg: str, number: int, source: str) -> NcclVersion:
    m = _VERSION.match(msg)
    if m is None:
        raise ParseError(
            source, f"expected 'NCCL version <major>.<minor>.<patch>[+<build>]', got {msg[:60]!r}", line=number
        )
    return NcclVersion(number, p["host"], int(p["pid"]), m["release"], m["build"])


def scan_versions(text: str, source: str = "<input>") -> tuple[NcclVersion, ...]:
    """Only the ``NCCL version`` lines of a log with a host prefix, in log order (``()`` when there are none).

    Cheaper than :func:`parse` on a large log (only lines holding ``NCCL version`` are matched) and blind to
    every other line, so a log whose other lines :func:`parse` refuses still gives its versions. A version line
    that does not hold a release number is a :class:`~unifab.errors.ParseError`.
    """
    out: list[NcclVersion] = []
    start = counted = 0  # counted: the offset up to which newlines are counted into number
    number = 1
    while (hit := text.find(_VERSION_MSG, start)) >= 0:
        line_start = text.rfind("\n", 0, hit) + 1
        end = text.find("\n", hit)
        end = len(text) if end < 0 else end
        start = end + 1
        p = _PREFIX.search(text[line_start:end].rstrip())
        if p is None or p["level"] != "INFO" or not p["msg"].startswith(_VERSION_MSG):
            continue
        number += text.count("\n", counted, line_start)
        counted = line_start
        out.append(_version(p, " ".join(p["msg"].split()), number, source))
    return tuple(out)


def _completion(raw: str, p: re.Match[str], msg: str, number: int, source: str) -> NcclCompletionError:
    m = _COMPLETION.match(msg)
    if m is None:
        raise ParseError(
            source,
            "expected 'Got completion from peer <addr> with status=<n> ... vendor err <n>' (or 'with error <n>, ...')",
            line=number,
        )
    stamp = _STAMP.match(raw[: p.start("host")])
    when = (stamp["bracket"] or stamp["rfc"]) if stamp is not None else None
    return NcclCompletionError(
        line=number,
        timestamp=when,
        host=p["host"],
        pid=int(p["pid"]),
        cuda_dev=p["dev"],
        peer=m["peer"],
        peer_port=int(m["pport"]) if m["pport"] else None,
        status=int(m["err"] or m["status"]),
        status_name=m["sname"],
        opcode=int(m["opcode"]) if m["opcode"] else None,
        length=int(m["len"]) if m["len"] else None,
        vendor_err=int(m["verr"]),
        direction=m["dir"],
        local_gid=m["lgid"],
        remote_gid=m["rgid"],
        hca=m["hca"],
    )
