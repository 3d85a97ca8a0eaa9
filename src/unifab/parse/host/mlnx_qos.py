r"""``mlnx_qos -i <netdev>`` (Mellanox mlnx-tools): DCBX mode, trust, dscp2prio, buffers, PFC, ETS per TC.

The text is what ``pretty_print`` writes, optionally preceded by the lldpad warning and by
"... is not supported on your system" lines::

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
    \tprio:0 dscp:07,06,05,04,03,02,01,00,        (8 DSCPs per line; more wrap onto another prio:0 line)
    default priority:                             (newer mlnx-tools; its "\tprio:N" lines are skipped)
    Receive buffer size (bytes): 0,156096,0,0,0,0,0,0,max_buffer_size=262016
    Cable len: 7
    PFC configuration:
    \tpriority    0   1   2   3   4   5   6   7
    \tenabled     0   0   0   1   0   0   0   0
    \tbuffer      0   0   0   1   0   0   0   0
    tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
    \t priority:  0

Sections may be missing (truncated captures, unsupported features); they then read as None or empty.
Nothing in the output says who owns the receive buffers (firmware or driver, mlx5 PFCC ``buf_ownership``): a
``Receive buffer size`` line is printed either way.
When the rate limit cannot be read, mlnx_qos prints TC lines without the ``tc: N ratelimit: ..., tsa:``
prefix; the TC number is then taken from the order of the blocks (exact with ``-a``, a guess without).
Very old mlnx_qos also lists ``skprio: N [(tos: M)]`` lines under each TC; they are skipped.

With a :class:`~unifab.errors.ParseProblems` collector a line that cannot be read costs that line, named at
it: the DCBX mode, cable length, buffer sizes, the PFC ``priority`` or ``buffer`` row; a TC line costs that TC
block, its ``priority`` lines skipped with it (so they are not read into the TC above; a garbled ``priority``
line costs the rest of its block too). A lost section header is inferred from the lines under it. What the
record cannot say is unknown still costs the file (raised at its line): the trust state, a DSCP of the map
(an absent DSCP or trust reads as a mismatch, not as unknown) and the PFC ``enabled`` row (a lost row would
read as no priority enabled). A text with problems and nothing read raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["LLDPAD_WARNING", "RATE_UNSUPPORTED", "Buffers", "MlnxQos", "TcConfig", "dump", "parse"]

LLDPAD_WARNING = "****** WARNING: lldpad service is running and may overwrite your settings ******"
RATE_UNSUPPORTED = "Rate limit is not supported on your system!"

_DCBX = {"OS controlled": "os", "Firmware controlled": "fw"}
_TRUSTS = ("pcp", "dscp", "none")
_NOTICE = re.compile(r"^(?:\*+ ?WARNING: .*|.+ (?:is|are) not supported on your system!?)$")
_DSCP_LINE = re.compile(r"^prio: ?([0-9]+) dscp: ?(.*)$")
_DEFAULT_PRIO = re.compile(r"^prio: ?[0-7]$")
_BUFFER_TOTAL = re.compile(r"^(?:max_buffer_size|total_size)=([0-9]+)$")
_TC_LINE = re.compile(r"^tc: ?([0-9]+) ratelimit: ?(unlimited|([0-9]+(?:\.[0-9]+)?) ?Gbps), ?tsa: ?(.*)$")
_TSA = re.compile(r"^(?:ets, ?bw: ?([0-9]+) ?%|strict|vendor|unknown)$")
_TC_PRIORITY = re.compile(r"^priority: ?([0-9]+)$")
_SKPRIO = re.compile(r"^skprio: ?[0-9]+(?: \(tos: ?[0-9]+\))?$")
_NUM = re.compile(r"^[0-9]+$")
# the numbers as mlnx_qos prints them ("7", "07", "63"), looked up rather than checked and converted (fast path)
_SMALL = {**{f"{n:02d}": n for n in range(10)}, **{str(n): n for n in range(64)}}

# Section headers in the order pretty_print writes them; each may appear at most once, in this order.
_HEADERS = (
    "DCBX mode:",
    "Priority trust state:",
    "dscp2prio mapping:",
    "default priority:",
    "Receive buffer size (bytes):",
    "Cable len:",
    "PFC configuration:",
    "tc:",
)


@dataclass(frozen=True, slots=True)
class TcConfig:
    tc: int
    tsa: str  # "ets" | "strict" | "vendor" | "unknown"
    bw: int | None  # percent, only for ets
    ratelimit_gbps: float | None  # None = unlimited or not reported
    priorities: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Buffers:
    sizes: tuple[int, ...]  # 8 receive buffer sizes in bytes
    max_buffer_size: int | None
    prio2buffer: tuple[int, ...] | None  # the `buffer` row, index = priority


@dataclass(frozen=True, slots=True)
class MlnxQos:
    dcbx: str | None  # "os" | "fw"
    trust: str | None  # "pcp" | "dscp" | "none"
    dscp2prio: dict[int, int]  # DSCP -> priority
    pfc_enabled: tuple[int, ...]  # sorted priorities whose enabled bit is 1
    prio_tc: dict[int, int]  # priority -> TC, derived from the TC blocks
    tcs: tuple[TcConfig, ...]
    buffers: Buffers | None
    cable_len: int | None
    notices: tuple[str, ...]  # feature-not-supported lines and the lldpad warning, verbatim


@dataclass(slots=True)
class _Tc:
    tc: int
    tsa: str
    bw: int | None
    rate: float | None
    prios: list[int]


class _Parser:
    def __init__(self, source: str, log: ParseProblems) -> None:
        self.source = source
        self.log = log
        self.number = 0
        self.rank = -1  # index into _HEADERS of the last section header seen
        self.dcbx: str | None = None
        self.trust: str | None = None
        self.dscp2prio: dict[int, int] = {}
        self.sizes: tuple[int, ...] | None = None
        self.total: int | None = None
        self.cable_len: int | None = None
        self.pfc_rows: dict[str, tuple[int, ...]] = {}
        self.tcs: list[_Tc] = []
        self.notices: list[str] = []
        self.tc_count = 0  # TC blocks met, lost ones included (numbers the blocks printed without "tc: N")
        self.lost = False  # a line was lost since the last header: it may have been a header (inferred then)
        self.orphan = False  # a line was lost since the last TC line: "priority" lines are skipped until one
        self.maybe_block = False  # that lost line may have been a TC line (counted if priority lines follow)
        self.lost_at: list[tuple[int, int]] = []  # (section rank when lost, index into log.problems)

    def fail(self, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.number)

    def number_in(self, token: str, high: int, what: str) -> int:
        if (n := _SMALL.get(token)) is not None and n <= high:
            return n
        if not (token.isascii() and token.isdigit()) or int(token) > high:  # _NUM, without the regex
            raise self.fail(f"expected {what} (0..{high}), got {token!r}")
        return int(token)

    def enter(self, header: str) -> None:
        rank = _HEADERS.index(header)
        if rank < self.rank or (rank == self.rank and header != "tc:"):
            raise self.fail(f"expected {header!r} only once and before {_HEADERS[self.rank]!r}")
        self.rank = rank
        self.lost = False

    def inferred(self, header: str) -> bool:
        """After a lost line, a line of a later section than the current one: that section's header was lost."""
        if not self.lost or (rank := _HEADERS.index(header)) <= self.rank:
            return False
        self.rank = rank
        return True

    def lose(self, raw: str) -> str:
        """The line being read could not be: what it costs (for the problem), and the state after it."""
        self.lost = self.orphan = self.maybe_block = True
        self.lost_at.append((self.rank, len(self.log.problems)))
        if (self.rank >= 0 and _HEADERS[self.rank] == "tc:") or raw.lstrip().startswith("tc:"):
            return f"line {self.number} (a TC line costs its block: the priority lines under it are skipped)"
        return f"line {self.number}"

    def line(self, raw: str) -> None:
        text = " ".join(raw.split())
        section = _HEADERS[self.rank] if self.rank >= 0 else None
        # the common lines first (DSCP rows, TC blocks and their priorities): each prefix below is one no
        # earlier branch of the full chain takes (short of a notice, which needs the words the check names)
        if "WARNING: " not in text and "not supported on your system" not in text:
            if section == "dscp2prio mapping:" and text.startswith("prio:") and (m := _DSCP_LINE.match(text)):
                self.dscp_line(self.number_in(m[1], 7, "a priority"), m[2])
                return
            if section == "tc:" and text.startswith("priority:") and (m := _TC_PRIORITY.match(text)):
                self.tc_priority(m[1])
                return
            if text.startswith("tc:") and (m := _TC_LINE.match(text)):
                self.enter("tc:")
                rate = None if m[3] is None else float(m[3])
                self.tc_block(self.number_in(m[1], 7, "a TC number"), rate, m[4])
                return
        self.full_line(text, raw, section)

    def full_line(self, text: str, raw: str, section: str | None) -> None:
        if _NOTICE.match(text):
            if section is not None:
                raise self.fail(f"expected {text!r} before 'DCBX mode:'")
            self.notices.append(raw.strip())
        elif text.startswith("DCBX mode:"):
            self.enter("DCBX mode:")
            mode = text.removeprefix("DCBX mode:").strip()
            if mode not in _DCBX:
                raise self.fail(f"expected 'OS controlled' or 'Firmware controlled' after 'DCBX mode:', got {mode!r}")
            self.dcbx = _DCBX[mode]
        elif text.startswith("Priority trust state:"):
            self.enter("Priority trust state:")
            trust = text.removeprefix("Priority trust state:").strip()
            if trust not in _TRUSTS:
                raise self.fail(f"expected pcp, dscp or none after 'Priority trust state:', got {trust!r}")
            self.trust = trust
        elif text in ("dscp2prio mapping:", "default priority:", "PFC configuration:"):
            self.enter(text)
        elif text.startswith("Receive buffer size (bytes):"):
            self.enter("Receive buffer size (bytes):")
            self.buffer_sizes(text.removeprefix("Receive buffer size (bytes):"))
        elif text.startswith("Cable len:"):
            self.enter("Cable len:")
            self.cable_len = self.number_in(text.removeprefix("Cable len:").strip(), 0xFFFF, "a cable length")
        elif (m := _DSCP_LINE.match(text)) and (section == "dscp2prio mapping:" or self.inferred("dscp2prio mapping:")):
            self.dscp_line(self.number_in(m[1], 7, "a priority"), m[2])
        elif _DEFAULT_PRIO.match(text) and (section == "default priority:" or self.inferred("default priority:")):
            pass  # default priority (ETHERTYPE app entry): not part of the record
        elif text.split(" ", 1)[0] in ("priority", "enabled", "buffer") and (
            section == "PFC configuration:" or self.inferred("PFC configuration:")
        ):
            self.pfc_row(text)
        elif (m := _TC_LINE.match(text)) or _TSA.match(text):
            self.enter("tc:")
            if m is None:  # no "tc: N ratelimit: R, tsa:" prefix (rate limit unsupported): TC from order
                self.tc_block(self.tc_count, None, text)
            else:
                rate = None if m[3] is None else float(m[3])
                self.tc_block(self.number_in(m[1], 7, "a TC number"), rate, m[4])
        elif (m := _TC_PRIORITY.match(text)) and (section == "tc:" or self.orphan):
            self.tc_priority(m[1])
        elif _SKPRIO.match(text) and (section == "tc:" or self.orphan):
            pass  # socket priority -> TC (old tc_wrap-based mlnx_qos): not part of the record
        else:
            raise self.fail(f"expected a line of mlnx_qos output, got {text[:60]!r}")

    def dscp_line(self, prio: int, listing: str) -> None:
        tokens = listing.replace(" ", "").split(",")
        if tokens[-1] == "":
            tokens.pop()  # every DSCP is followed by a comma
        mapping = self.dscp2prio
        dscps = [*map(_SMALL.get, tokens)]
        if None not in dscps and mapping.keys().isdisjoint(dscps):  # the printed form, each DSCP new
            mapping.update(dict.fromkeys(dscps, prio))  # type: ignore[arg-type]
            return
        for token in tokens:  # one bad DSCP costs that DSCP (strict: raises)
            if not (token.isascii() and token.isdigit() and int(token) <= 63):
                what = f"expected a DSCP number in the prio:{prio} list (0..63), got {token!r}"
                self.lost_at.append((-2, len(self.log.problems)))  # -2: a DSCP lost, always costs the file
                self.log.add(what, f"that DSCP of the prio:{prio} line", line=self.number)
                continue
            dscp = int(token)
            if mapping.setdefault(dscp, prio) != prio:
                what = f"expected DSCP {dscp} on one priority, got {mapping[dscp]} and {prio}"
                self.lost_at.append((-2, len(self.log.problems)))
                self.log.add(what, f"DSCP {dscp} of the prio:{prio} line", line=self.number)

    def buffer_sizes(self, listing: str) -> None:
        tokens = listing.replace(" ", "").split(",")
        total = None
        if tokens[-1] == "":
            tokens.pop()  # sysfs-era output: no total after the last size
        elif m := _BUFFER_TOTAL.match(tokens[-1]):
            total = int(m[1])
            tokens.pop()
        if len(tokens) != 8 or not all(_NUM.match(t) for t in tokens):
            raise self.fail("expected 8 comma-separated sizes after 'Receive buffer size (bytes):'")
        self.sizes = tuple(int(t) for t in tokens)
        self.total = total

    def pfc_row(self, text: str) -> None:
        name, *cells = text.split(" ")
        if name in self.pfc_rows:
            raise self.fail(f"expected one {name!r} row under 'PFC configuration:'")
        if name == "priority":
            if cells != [str(p) for p in range(8)]:
                raise self.fail("expected 'priority 0 1 2 3 4 5 6 7'")
            self.pfc_rows[name] = ()
            return
        high = 1 if name == "enabled" else 7
        if len(cells) != 8 or not all(c.isascii() and c.isdigit() and int(c) <= high for c in cells):
            raise self.fail(f"expected 8 values 0..{high} after {name!r}")
        self.pfc_rows[name] = tuple(int(c) for c in cells)

    def tc_block(self, tc: int, rate: float | None, tsa_text: str) -> None:
        m = _TSA.match(tsa_text)
        if m is None:
            raise self.fail(f"expected 'ets, bw: N%', 'strict', 'vendor' or 'unknown', got {tsa_text!r}")
        if any(t.tc == tc for t in self.tcs):
            raise self.fail(f"expected one block per TC, got tc {tc} twice")
        tsa = tsa_text.split(",", 1)[0]
        self.tcs.append(_Tc(tc, tsa, None if m[1] is None else int(m[1]), rate, []))
        self.tc_count += 1
        self.orphan = self.maybe_block = False

    def tc_priority(self, token: str) -> None:
        if self.orphan:  # under a TC line that was lost (or after a lost priority line): skipped with it
            if self.maybe_block:  # the lost line was a TC line: count it, so later blocks keep their numbers
                self.tc_count += 1
                self.maybe_block = False
            return
        prio = self.number_in(token, 7, "a priority")
        for t in self.tcs:
            if prio in t.prios:
                raise self.fail(f"expected priority {prio} in one TC, got tc {t.tc} and tc {self.tcs[-1].tc}")
        self.tcs[-1].prios.append(prio)

    def unknowable(self) -> int | None:
        """The first problem that lost a value the record would show as a wrong one (see the module docstring):
        the trust line (lost before the trust value was read), a DSCP (lost in the map's section while the map
        misses DSCPs), the PFC ``enabled`` row (lost in the PFC section while no such row was read)."""
        for rank, index in self.lost_at:
            if (
                rank == -2
                or (rank <= 1 and self.trust is None)
                or (rank == 2 and len(self.dscp2prio) < 64)
                or (rank == 6 and "enabled" not in self.pfc_rows)
            ):
                return index
        return None

    def read_any(self) -> bool:
        return bool(
            self.dcbx or self.trust or self.dscp2prio or self.sizes or self.cable_len is not None
            or self.pfc_rows or self.tcs
        )  # fmt: skip

    def result(self) -> MlnxQos:
        enabled = self.pfc_rows.get("enabled", ())
        prio2buffer = self.pfc_rows.get("buffer")
        buffers = None
        if self.sizes is not None or prio2buffer is not None:
            buffers = Buffers(self.sizes or (), self.total, prio2buffer)
        tcs = tuple(TcConfig(t.tc, t.tsa, t.bw, t.rate, tuple(t.prios)) for t in self.tcs)
        prio_tc = {p: t.tc for t in tcs for p in t.priorities}
        return MlnxQos(
            dcbx=self.dcbx,
            trust=self.trust,
            dscp2prio=dict(sorted(self.dscp2prio.items())),
            pfc_enabled=tuple(p for p, bit in enumerate(enabled) if bit),
            prio_tc=dict(sorted(prio_tc.items())),
            tcs=tcs,
            buffers=buffers,
            cable_len=self.cable_len,
            notices=tuple(self.notices),
        )


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> MlnxQos:
    """Read ``mlnx_qos -i <netdev>`` output; raise :class:`ParseError` on anything off-grammar.

    With ``problems`` a line that cannot be read costs what it holds (see the module docstring), the rest
    is read; a text with problems and nothing read raises the first.
    """
    if not text.strip():
        raise ParseError(source, "expected mlnx_qos output, got empty text", line=1)
    log = problems if problems is not None else ParseProblems.strict(source)
    parser = _Parser(source, log)
    for number, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            parser.number = number
            try:
                parser.line(raw)
            except ParseError as exc:
                if log.is_strict:
                    raise
                skipped = parser.lose(raw)
                log.record(exc, skipped)
    if log.problems and ((lost := parser.unknowable()) is not None or not parser.read_any()):
        raise log.problems[lost or 0].error()
    return parser.result()


def _tsa_text(t: TcConfig) -> str:
    if t.tsa != "ets":
        return t.tsa
    if t.bw is None:
        raise ValueError(f"tc {t.tc}: an ets TC needs bw")
    return f"ets, bw: {t.bw}%"


def dump(q: MlnxQos) -> str:
    """Write ``q`` the way mlnx_qos's pretty_print does (TABs, ``'%1d   '`` cells, 8 DSCPs per line)."""
    out: list[str] = []
    for notice in q.notices:
        out += [notice, ""] if notice == LLDPAD_WARNING else [notice]
    if q.dcbx is not None:
        out.append("DCBX mode: " + ("OS controlled" if q.dcbx == "os" else "Firmware controlled"))
    if q.trust is not None:
        out.append(f"Priority trust state: {q.trust}")
    if q.trust == "dscp" or q.dscp2prio:
        out.append("dscp2prio mapping:")
        for prio in range(8):
            cells = "".join(f"{d:02d}," for d in sorted((d for d, p in q.dscp2prio.items() if p == prio), reverse=True))
            out += [f"\tprio:{prio} dscp:{cells[i : i + 24]}" for i in range(0, len(cells), 24)]
    b = q.buffers
    if b is not None and b.sizes:
        total = "" if b.max_buffer_size is None else f"max_buffer_size={b.max_buffer_size}"
        out.append("Receive buffer size (bytes): " + "".join(f"{s:1d}," for s in b.sizes) + total)
    if q.cable_len is not None:
        out.append(f"Cable len: {q.cable_len}")
    prio2buffer = None if b is None else b.prio2buffer
    if q.cable_len is not None or q.pfc_enabled or prio2buffer is not None:
        out.append("PFC configuration:")
        out.append("\tpriority    0   1   2   3   4   5   6   7")
        out.append("\tenabled     " + "".join(f"{int(p in q.pfc_enabled):1d}   " for p in range(8)))
        if prio2buffer is not None:
            out.append("\tbuffer      " + "".join(f"{v:1d}   " for v in prio2buffer))
    no_prefix = RATE_UNSUPPORTED in q.notices
    for t in q.tcs:
        rate = "unlimited" if t.ratelimit_gbps is None else f"{t.ratelimit_gbps:.1f} Gbps"
        prefix = "" if no_prefix else f"tc: {t.tc} ratelimit: {rate}, tsa: "
        out.append(prefix + _tsa_text(t))
        out += [f"\t priority:  {p}" for p in t.priorities]
    return "".join(line + "\n" for line in out)
