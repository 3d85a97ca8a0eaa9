"""Broadcom bnxt_en/bnxt_re (Thor/Thor2) QoS: ``niccli -dev <n> getqos`` and the bnxt_re CC configfs tree.

``parse`` reads ``niccli -dev <n> getqos`` (also spelled ``get_qos``; ``bnxtqos -dev=<if> get_qos`` is
assumed to print the same, as ``bnxt_setupcc.sh`` greps both the same way). Accepted grammar, from
public captures of niccli on BCM57608 (an AMD Instinct cluster-networking guide and a host-inventory
collector's test fixture; repositories not recorded) -- no sample of ours exists::

    IEEE 8021QAZ ETS Configuration TLV:
             PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:2       priority:tc pairs
             TC Bandwidth: 50% 50% 0%                       one percentage per TC, TC 0 first
             TSA_MAP: 0:ets 1:ets 2:strict                  tc:tsa pairs (ets | strict | vendor)
    IEEE 8021QAZ PFC TLV:
             PFC enabled: 3                                 priorities, space/comma separated, or none
    IEEE 8021QAZ APP TLV:
             APP#0:
              Priority: 3
              Sel: 5                                        IEEE 802.1Qaz selector
              DSCP: 26                                      or "UDP or DCCP: 4791", "Ethertype: 0x8915", ...

    TC Rate Limit: 100% 100% 100% 0% 0% 0% 0% 0%            one percentage per TC

Each section and line may appear once (APP entries once per ``APP#N``), in any order; blank lines and
collapsed padding (``PRIO_MAP: 0:0 1:0``) are accepted, and so are prompt lines pasted before or after the
output (``$ sudo niccli -dev 1 getqos``, ``root@h1:~#``; :func:`unifab.parse._text.blank_prompts`; not
between the lines, where ``APP#0:`` at column 0 would look like one); anything else is an error.

The record is normalized like ``mlnx_qos``: ``prio_tc`` from PRIO_MAP, ``tcs`` from
TSA_MAP with their bandwidth and rate limit, ``pfc_enabled``, ``dscp2prio`` from the DSCP (selector 5)
APP entries and ``trust`` = ``"dscp"`` when there is at least one (None otherwise: getqos does not say).

``parse`` stays all-or-nothing on purpose, re-judged against partial reading (docs/parsers.md): every
getqos line is a whole-NIC table whose record has no "unknown" per entry. A dropped ``APP#N`` reads as
that DSCP left unmapped (priority 0 under DSCP trust), a dropped ``PFC enabled`` as PFC off on every
priority, a dropped token of ``PRIO_MAP``/``TSA_MAP`` as a priority without a TC or a TC without a
scheduler; each would be judged as configured that way, a false finding with a fix that changes the NIC.
A bad getqos file therefore costs the NIC's QoS (``INPUT-UNREADABLE``; its checks skip it as unknown).
The configfs tree (``parse_tree``) does read in part: each of its values has its own ``None``.

``parse_tree`` reads ``/sys/kernel/config/bnxt_re/<dev>/`` (paths ``ports/<p>/cc/<file>``, or bare
``<file>`` names for the ``cc/`` directory itself). bnxt_re ``configfs.c``: every single-value file
(``cc_mode``, ``cnp_dscp``, ``cnp_prio``, ``roce_dscp``, ``roce_prio``, ``ecn_enable``, ``ecn_marking``,
``disable_prio_vlan_tx``, ``g``, ``inact_th``, ``init_cr``, ...) reads back as ``%#x`` (``0x1a``, or
``0`` for zero) and is written with ``sscanf("%x")``, so ``echo 26 > roce_dscp`` sets DSCP 0x26 = 38.
Reading ``apply`` prints a ``label (name)\\t: value`` summary, kept as ``apply_summary`` keyed by the
name in parentheses; ``dcn`` and ``ext_settings`` (tables) are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts

__all__ = [
    "APP_HEADER",
    "CC_SKIPPED",
    "ETS_HEADER",
    "PFC_HEADER",
    "RATE_LINE",
    "SELECTORS",
    "TSAS",
    "AppEntry",
    "BnxtCc",
    "BnxtQos",
    "BnxtTc",
    "dump",
    "dump_tree",
    "parse",
    "parse_tree",
]

ETS_HEADER = "IEEE 8021QAZ ETS Configuration TLV:"
PFC_HEADER = "IEEE 8021QAZ PFC TLV:"
APP_HEADER = "IEEE 8021QAZ APP TLV:"
RATE_LINE = "TC Rate Limit:"
TSAS = ("ets", "strict", "vendor")
SELECTORS = {1: "Ethertype", 2: "TCP/SCTP port", 3: "UDP/DCCP port", 4: "TCP/SCTP/UDP/DCCP port", 5: "DSCP"}
CC_SKIPPED = ("dcn", "ext_settings")

_PAIR = re.compile(r"^(\d+):(\S+)$")
_PCT = re.compile(r"^(\d+)%$")
_APP = re.compile(r"^APP#(\d+):$")
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9 /_-]*$")
_NUM = re.compile(r"^\d+$")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")
_CC_PATH = re.compile(r"^(?:ports/(\d+)/cc/|cc/)?([A-Za-z0-9_]+)$")
_PAREN = re.compile(r"\(([^()]*)\)\s*$")


@dataclass(frozen=True, slots=True)
class BnxtTc:
    tc: int
    tsa: str  # "ets" | "strict" | "vendor"
    bw: int | None  # percent, from "TC Bandwidth"
    ratelimit_pct: int | None  # percent of line rate, from "TC Rate Limit"


@dataclass(frozen=True, slots=True)
class AppEntry:
    priority: int
    selector: int  # 1 Ethertype, 2 TCP/SCTP port, 3 UDP/DCCP port, 4 any L4 port, 5 DSCP
    protocol: str  # the label as printed: "DSCP", "UDP or DCCP", "Ethertype", ...
    value: int


@dataclass(frozen=True, slots=True)
class BnxtCc:
    port: int | None  # None when the files were given relative to cc/ itself
    params: dict[str, int]  # single-value files, sorted by name
    apply_summary: dict[str, str]  # the `apply` read-back, name in parentheses -> value text

    @property
    def roce_dscp(self) -> int | None:
        return self.params.get("roce_dscp")

    @property
    def roce_prio(self) -> int | None:
        return self.params.get("roce_prio")

    @property
    def cnp_dscp(self) -> int | None:
        return self.params.get("cnp_dscp")

    @property
    def cnp_prio(self) -> int | None:
        return self.params.get("cnp_prio")

    @property
    def ecn_enable(self) -> int | None:
        return self.params.get("ecn_enable")

    @property
    def ecn_marking(self) -> int | None:
        """ECN-capable transport: 0 sends RoCE non-ECT (switches cannot mark it; WRED drops it)."""
        return self.params.get("ecn_marking")

    @property
    def dcqcn_on(self) -> bool | None:
        """DCQCN runs: CC on (``ecn_enable``) and RoCE sent ECN-capable (``ecn_marking``); ``cc_mode`` 0 and 1
        are both DCQCN variants (bnxt_setupcc.sh writes 1). None when either file was not read."""
        if self.ecn_enable is None or self.ecn_marking is None:
            return None
        return self.ecn_enable != 0 and self.ecn_marking != 0

    @property
    def cc_mode(self) -> int | None:
        """0 = DCQCN-D, 1 = DCQCN-P (Thor and later) or TCP-like (older chips)."""
        return self.params.get("cc_mode")


@dataclass(frozen=True, slots=True)
class BnxtQos:
    trust: str | None  # "dscp" when a DSCP APP entry exists
    dscp2prio: dict[int, int]
    pfc_enabled: tuple[int, ...]
    prio_tc: dict[int, int]
    tcs: tuple[BnxtTc, ...]
    apps: tuple[AppEntry, ...]
    cc: tuple[BnxtCc, ...]


@dataclass(slots=True)
class _App:
    index: int
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    protocol: tuple[str, str] | None = None


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.number = 0
        self.section: str | None = None
        self.seen: set[str] = set()
        self.prio_tc: dict[int, int] = {}
        self.bw: list[int] = []
        self.tsa: dict[int, str] = {}
        self.pfc: tuple[int, ...] = ()
        self.rates: list[int] = []
        self.apps: list[_App] = []

    def fail(self, expected: str, line: int | None = None) -> ParseError:
        return ParseError(self.source, expected, line=self.number if line is None else line)

    def once(self, what: str) -> None:
        if what in self.seen:
            raise self.fail(f"expected {what!r} once")
        self.seen.add(what)

    def number_in(self, token: str, high: int, what: str) -> int:
        if not _NUM.match(token) or int(token) > high:
            raise self.fail(f"expected {what} (0..{high}), got {token!r}")
        return int(token)

    def percents(self, tokens: list[str], what: str) -> list[int]:
        out = []
        for t in tokens:
            m = _PCT.match(t)
            if m is None or int(m[1]) > 100:
                raise self.fail(f"expected percentages 0%..100% after {what!r}, got {t!r}")
            out.append(int(m[1]))
        if not out or len(out) > 8:
            raise self.fail(f"expected 1..8 percentages after {what!r}")
        return out

    def pairs(self, tokens: list[str], what: str) -> list[tuple[int, str]]:
        out = []
        for t in tokens:
            m = _PAIR.match(t)
            if m is None:
                raise self.fail(f"expected 'n:value' pairs after {what!r}, got {t!r}")
            out.append((self.number_in(m[1], 7, f"a number before ':' in {what}"), m[2]))
        if len({n for n, _ in out}) != len(out) or not out:
            raise self.fail(f"expected each number once after {what!r}")
        return out

    def line(self, raw: str) -> None:
        text = " ".join(raw.split())
        if text in (ETS_HEADER, PFC_HEADER, APP_HEADER):
            self.once(text)
            self.section = text
            return
        key, colon, value = text.partition(":")
        tokens = value.split()
        if text.startswith(RATE_LINE):
            self.once(RATE_LINE)
            self.section = None
            self.rates = self.percents(tokens, "TC Rate Limit")
        elif self.section == ETS_HEADER and key in ("PRIO_MAP", "TC Bandwidth", "TSA_MAP") and colon:
            self.once(key)
            if key == "PRIO_MAP":
                self.prio_tc = {p: self.number_in(tc, 7, "a TC") for p, tc in self.pairs(tokens, key)}
            elif key == "TSA_MAP":
                for tc, tsa in self.pairs(tokens, key):
                    if tsa not in TSAS:
                        raise self.fail(f"expected ets, strict or vendor in TSA_MAP, got {tsa!r}")
                    self.tsa[tc] = tsa
            else:
                self.bw = self.percents(tokens, key)
        elif self.section == PFC_HEADER and key == "PFC enabled" and colon:
            self.once(key)
            listing = value.replace(",", " ").split()
            if listing == ["none"]:
                return
            prios = [self.number_in(t, 7, "a PFC priority") for t in listing]
            if len(set(prios)) != len(prios):
                raise self.fail("expected each PFC priority once")
            self.pfc = tuple(sorted(prios))
        elif self.section == APP_HEADER and (m := _APP.match(text)):
            if any(a.index == int(m[1]) for a in self.apps):
                raise self.fail(f"expected APP#{m[1]} once")
            self.apps.append(_App(int(m[1]), self.number))
        elif self.section == APP_HEADER and self.apps and colon and _LABEL.match(key):
            self.app_field(self.apps[-1], key, value.strip())
        else:
            raise self.fail(f"expected a line of niccli getqos output, got {text[:60]!r}")

    def app_field(self, app: _App, key: str, value: str) -> None:
        if key in ("Priority", "Sel"):
            if key in app.fields:
                raise self.fail(f"expected one {key!r} in APP#{app.index}")
            app.fields[key] = value
        elif app.protocol is None:
            app.protocol = (key, value)
        else:
            raise self.fail(f"expected one protocol line in APP#{app.index}, then 'APP#N:' or 'TC Rate Limit:'")

    def app(self, app: _App) -> AppEntry:
        if "Priority" not in app.fields or "Sel" not in app.fields or app.protocol is None:
            raise self.fail(f"expected Priority, Sel and a protocol line in APP#{app.index}", line=app.line)
        self.number = app.line
        prio = self.number_in(app.fields["Priority"], 7, "an APP priority")
        sel = self.number_in(app.fields["Sel"], 7, "an APP selector")
        label, text = app.protocol
        if sel not in SELECTORS or (label == "DSCP") != (sel == 5) or (label == "Ethertype") != (sel == 1):
            raise self.fail(f"expected a protocol line matching selector {sel}, got {label!r}")
        if _NUM.match(text):
            value = int(text)
        elif _HEX.match(text):
            value = int(text, 16)
        else:
            raise self.fail(f"expected a number after {label!r} in APP#{app.index}, got {text!r}")
        if (sel == 5 and value > 63) or value > 0xFFFF:
            raise self.fail(f"expected a {'DSCP 0..63' if sel == 5 else '16-bit value'} in APP#{app.index}")
        return AppEntry(prio, sel, label, value)

    def result(self) -> BnxtQos:
        apps = tuple(self.app(a) for a in self.apps)
        dscp2prio: dict[int, int] = {}
        for a, raw in zip(apps, self.apps, strict=True):
            if a.selector == 5 and dscp2prio.setdefault(a.value, a.priority) != a.priority:
                raise self.fail(f"expected DSCP {a.value} on one priority", line=raw.line)
        tcs = tuple(
            BnxtTc(
                tc,
                self.tsa[tc],
                self.bw[tc] if tc < len(self.bw) else None,
                self.rates[tc] if tc < len(self.rates) else None,
            )
            for tc in sorted(self.tsa)
        )
        return BnxtQos(
            trust="dscp" if dscp2prio else None,
            dscp2prio=dict(sorted(dscp2prio.items())),
            pfc_enabled=self.pfc,
            prio_tc=dict(sorted(self.prio_tc.items())),
            tcs=tcs,
            apps=apps,
            cc=(),
        )


def parse(text: str, source: str = "<input>") -> BnxtQos:
    """Read ``niccli -dev <n> getqos`` / ``bnxtqos -dev=<if> get_qos`` output."""
    parser = _Parser(source)
    for number, raw in enumerate(blank_prompts(text).split("\n"), start=1):
        if raw.strip():
            parser.number = number
            parser.line(raw)
    if not parser.seen:
        raise ParseError(source, f"expected niccli getqos output ({ETS_HEADER!r} ...), got empty text", line=1)
    return parser.result()


def _apply_summary(content: str, where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for number, raw in enumerate(content.split("\n"), start=1):
        if not raw.strip():
            continue
        label, colon, value = raw.partition(":")
        label = " ".join(label.split())
        if not colon or not label:
            raise ParseError(where, "expected 'label (name)<TABs>: value' lines in apply", line=number)
        m = _PAREN.search(label)
        key = m[1].strip() if m else label
        if label.startswith("slave "):
            key = f"slave_{key}"
        if key in out:
            raise ParseError(where, f"expected {key!r} once in apply", line=number)
        out[key] = value.strip()
    return out


def _cc_value(name: str, content: str, where: str) -> int:
    value = content.strip()
    if _HEX.match(value):
        return int(value, 16)
    if _NUM.match(value):
        return int(value)
    raise ParseError(where, f"expected a number ('0x1a' or '0') in {name}, got {value[:30]!r}", line=1)


def parse_tree(files: Mapping[str, str], source: str = "<input>", problems: ParseProblems | None = None) -> BnxtQos:
    """Read ``/sys/kernel/config/bnxt_re/<dev>/ports/<p>/cc/`` files into ``BnxtQos.cc``.

    With a collector a file that cannot be read costs that value only (its property reads ``None``,
    unknown; ``dcqcn_on`` too when ``ecn_enable`` or ``ecn_marking`` is the bad file); a tree whose every
    file is bad raises.
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    ports: dict[int | None, tuple[dict[str, int], dict[str, str]]] = {}
    for rel, content in files.items():
        m = _CC_PATH.match(rel.strip("/"))
        if m is None or m[2] in CC_SKIPPED:
            continue
        where = f"{source}/{rel}"
        params, summary = ports.setdefault(None if m[1] is None else int(m[1]), ({}, {}))
        with log.skipping(rel.strip("/")):
            if m[2] == "apply":
                summary.update(_apply_summary(content, where))
            else:
                params[m[2]] = _cc_value(m[2], content, where)
    if not ports:
        raise ParseError(source, "expected ports/<p>/cc/<file> files of the bnxt_re configfs", line=1)
    if log.problems and not any(params or summary for params, summary in ports.values()):
        raise log.problems[0].error()
    cc = tuple(
        BnxtCc(port, dict(sorted(params.items())), summary)
        for port, (params, summary) in sorted(ports.items(), key=lambda kv: -1 if kv[0] is None else kv[0])
    )
    return BnxtQos(None, {}, (), {}, (), (), cc)


# --- dump: records -> niccli getqos text and the configfs files ---------------------------------------

_INDENT = " " * 9  # niccli's indentation of the TLV lines (APP fields one more)


def _pct(values: list[int | None]) -> str:
    return " ".join(f"{v or 0}%" for v in values)


def _app_value(app: AppEntry) -> str:
    return f"{app.value:#06x}" if app.selector == 1 else str(app.value)


def dump(record: BnxtQos) -> str:
    """``niccli -dev <n> getqos`` text: ETS (PRIO_MAP, TC Bandwidth, TSA_MAP), PFC, APP TLVs, TC Rate Limit.

    Bandwidth and rate limit are printed for TC 0 up to the last TC the record has (a missing value as
    ``0%``); the rate-limit line is left out when no TC has one, as niccli does on firmware without it.
    """
    by_tc = {t.tc: t for t in record.tcs}
    last = max(by_tc, default=-1)
    lines = [ETS_HEADER, f"{_INDENT}PRIO_MAP: " + " ".join(f"{p}:{tc}" for p, tc in record.prio_tc.items())]
    if any(t.bw is not None for t in record.tcs):
        lines.append(f"{_INDENT}TC Bandwidth: {_pct([by_tc[i].bw if i in by_tc else None for i in range(last + 1)])}")
    lines.append(f"{_INDENT}TSA_MAP: " + " ".join(f"{t.tc}:{t.tsa}" for t in record.tcs))
    pfc = " ".join(str(p) for p in record.pfc_enabled) or "none"
    lines += [PFC_HEADER, f"{_INDENT}PFC enabled: {pfc}", APP_HEADER]
    for i, app in enumerate(record.apps):
        lines += [
            f"{_INDENT}APP#{i}:",
            f"{_INDENT} Priority: {app.priority}",
            f"{_INDENT} Sel: {app.selector}",
            f"{_INDENT} {app.protocol}: {_app_value(app)}",
            "",
        ]
    if any(t.ratelimit_pct is not None for t in record.tcs):
        rates = [by_tc[i].ratelimit_pct if i in by_tc else None for i in range(8)]
        lines.append(f"{RATE_LINE} {_pct(rates)}")
    return "\n".join(lines) + "\n"


def dump_tree(record: BnxtQos) -> dict[str, str]:
    """The configfs files of ``record.cc`` as bnxt_re prints them (``%#x``: ``0x1a``, ``0`` for zero), keyed
    ``ports/<p>/cc/<name>`` (bare ``<name>`` for a port-less record); ``apply`` holds the summary, if any."""
    files: dict[str, str] = {}
    for cc in record.cc:
        prefix = "" if cc.port is None else f"ports/{cc.port}/cc/"
        files.update((f"{prefix}{name}", f"{value:#x}\n" if value else "0\n") for name, value in cc.params.items())
        if cc.apply_summary:
            files[f"{prefix}apply"] = "".join(f"{k} ({k})\t\t: {v}\n" for k, v in cc.apply_summary.items())
    return files
