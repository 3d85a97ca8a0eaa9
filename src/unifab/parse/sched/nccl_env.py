r"""NCCL environment variables of a job, and the environment dumps and batch scripts they come from.

:func:`nccl_settings` reads the variables that decide where NCCL's RoCE traffic goes (NVIDIA/nccl
``src/misc/param.cc``, ``src/transport/net_ib*``, ``src/misc/utils.cc``, ``src/misc/socket.cc``):

- ``NCCL_IB_TC`` (GRH traffic class = full TOS byte, DSCP<<2 | ECN; 106 = DSCP 26 + ECT(0)), ``NCCL_IB_FIFO_TC``,
  ``NCCL_IB_SL``, ``NCCL_IB_GID_INDEX``, ``NCCL_IB_ROCE_VERSION_NUM``: integers read with
  ``strtoll(str, NULL, 0)``, so ``0x6a`` and ``0152`` (octal) are 106 too, and text after the number is
  ignored (``106abc`` is 106). Text with no number is 0 in older NCCL and the default in newer releases;
  either way it is reported in ``problems`` and read as None. ``-1`` is NCCL's "not set" and reads as None.
- ``NCCL_IB_HCA`` and ``NCCL_SOCKET_IFNAME``: ``[^][=]name[:port],...``. A leading ``^`` excludes the listed
  devices, a ``=`` after it asks for exact names; without ``=`` each name is a *prefix* (``mlx5_1`` also selects
  ``mlx5_10``). A port is read with ``atoi``; text after it up to the next comma is skipped; empty names are
  skipped. :meth:`NcclDeviceList.selects` applies the rule as NCCL does.

Values NCCL also takes from ``~/.nccl.conf`` and ``/etc/nccl.conf`` are not in a job's environment.

:func:`parse_env` reads an environment dump: ``/proc/<pid>/environ`` (NUL-separated) or ``K=V`` lines
(``env``, ``sacct --env-vars``; a header ended by a line of dashes is skipped, lines without ``K=`` continue
a multi-line value). :func:`parse_script` reads what a batch script exports (see its docstring).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import pasted

__all__ = ["NcclDevice", "NcclDeviceList", "NcclSettings", "device_list", "nccl_settings", "parse_env", "parse_script"]

_C_INTEGER = re.compile(r"^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_INT64_MAX = 2**63 - 1
_DEVICE_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.%\-]*$")


@dataclass(frozen=True, slots=True)
class NcclDevice:
    name: str  # device (or interface) name, a prefix unless the list is exact
    port: int | None  # None: any port


@dataclass(frozen=True, slots=True)
class NcclDeviceList:
    """``NCCL_IB_HCA`` / ``NCCL_SOCKET_IFNAME`` as NCCL's ``parseStringList`` reads it."""

    raw: str
    exclude: bool  # leading '^'
    exact: bool  # '=' (after any '^'): names match whole, not as prefixes
    devices: tuple[NcclDevice, ...]

    def selects(self, device: str, port: int | None = None) -> bool:
        """Whether NCCL uses ``device`` (port ``port``; None = any) under this list."""
        matched = not self.devices or any(
            (device == d.name if self.exact else device.startswith(d.name))
            and (d.port is None or port is None or d.port == port)
            for d in self.devices
        )
        return matched != self.exclude


@dataclass(frozen=True, slots=True)
class NcclSettings:
    ib_tc: int | None  # NCCL_IB_TC: TOS byte 0..255; None = NCCL default (0, or ncclConfig_t.trafficClass)
    ib_fifo_tc: int | None  # NCCL_IB_FIFO_TC; None = the sender's TC
    ib_sl: int | None  # NCCL_IB_SL: service level / VLAN PCP; None = default 0
    ib_gid_index: int | None  # NCCL_IB_GID_INDEX; None = automatic selection
    ib_roce_version_num: int | None  # NCCL_IB_ROCE_VERSION_NUM; None = default 2
    ib_hca: NcclDeviceList | None  # NCCL_IB_HCA; None = all devices
    socket_ifname: NcclDeviceList | None  # NCCL_SOCKET_IFNAME; None = automatic
    problems: tuple[str, ...]  # values NCCL reads differently from what the writer probably meant

    @property
    def ib_dscp(self) -> int | None:
        """DSCP of NCCL's RoCE traffic (``NCCL_IB_TC >> 2``), or None when NCCL_IB_TC is unset."""
        return None if self.ib_tc is None else self.ib_tc >> 2


_INT_VARS: dict[str, tuple[int, int]] = {  # name -> accepted range (outside: reported)
    "NCCL_IB_TC": (0, 255),
    "NCCL_IB_FIFO_TC": (0, 255),
    "NCCL_IB_SL": (0, 15),
    "NCCL_IB_GID_INDEX": (0, 255),
    "NCCL_IB_ROCE_VERSION_NUM": (1, 2),
}


def _c_integer(name: str, raw: str, problems: list[str]) -> int | None:
    if raw == "":
        return None  # NCCL treats an empty value as unset
    m = _C_INTEGER.match(raw)
    if m is None:
        problems.append(f"{name}={raw!r} is not a number: older NCCL reads it as 0, newer releases use the default")
        return None
    digits = m[2]
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    value = -value if m[1] == "-" else value
    if value > _INT64_MAX or value < -_INT64_MAX - 1:
        problems.append(f"{name}={raw!r} overflows a 64-bit integer: NCCL uses the default")
        return None
    if m.end() < len(raw):
        problems.append(f"{name}={raw!r}: NCCL reads the leading number {value} and ignores {raw[m.end() :]!r}")
    if value == -1:
        return None
    low, high = _INT_VARS[name]
    if not low <= value <= high:
        problems.append(f"{name}={raw!r} is outside {low}..{high}")
        return None
    return value


def _atoi(text: str) -> int:
    m = re.match(r"^[ \t\n\v\f\r]*([+-]?[0-9]+)", text)
    return int(m[1]) if m else 0


def device_list(name: str, raw: str, problems: list[str]) -> NcclDeviceList:
    """Read ``raw`` as NCCL reads ``NCCL_IB_HCA`` / ``NCCL_SOCKET_IFNAME``; odd entries go to ``problems``."""
    rest = raw
    exclude = rest.startswith("^")
    rest = rest[1:] if exclude else rest
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    devices: list[NcclDevice] = []
    for entry in rest.split(","):
        dev, colon, port_text = entry.partition(":")
        if not dev:
            continue
        port: int | None = None
        if colon:
            port_field = port_text.split(":")[0]
            port = _atoi(port_field)
            if not re.fullmatch(r"[0-9]+", port_field):
                problems.append(f"{name}: port {port_field!r} of {dev!r} reads as {port}")
        if not _DEVICE_NAME.match(dev):
            problems.append(f"{name}: entry {dev!r} is matched literally (spaces, '^' or '=' only count at the start)")
        devices.append(NcclDevice(dev, port))
    if not devices and exclude:
        problems.append(f"{name}={raw!r} excludes every device")
    return NcclDeviceList(raw, exclude, exact, tuple(devices))


def nccl_settings(env: Mapping[str, str]) -> NcclSettings:
    """The NCCL settings an environment gives (unset variables read as None = NCCL's default)."""
    problems: list[str] = []
    ints = {name: _c_integer(name, env[name], problems) if name in env else None for name in _INT_VARS}
    hca = env.get("NCCL_IB_HCA")
    ifname = env.get("NCCL_SOCKET_IFNAME")
    return NcclSettings(
        ib_tc=ints["NCCL_IB_TC"],
        ib_fifo_tc=ints["NCCL_IB_FIFO_TC"],
        ib_sl=ints["NCCL_IB_SL"],
        ib_gid_index=ints["NCCL_IB_GID_INDEX"],
        ib_roce_version_num=ints["NCCL_IB_ROCE_VERSION_NUM"],
        ib_hca=device_list("NCCL_IB_HCA", hca, problems) if hca else None,
        socket_ifname=device_list("NCCL_SOCKET_IFNAME", ifname, problems) if ifname else None,
        problems=tuple(problems),
    )


# --- environment dumps ----------------------------------------------------------------------------

_ASSIGNMENT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.%\-]*)=(.*)$", re.DOTALL)
_DASHES = re.compile(r"^-{3,}\s*$")


@pasted
def parse_env(text: str, source: str = "<input>") -> dict[str, str]:
    """``K=V`` entries of ``/proc/<pid>/environ`` (NUL-separated) or of newline-separated dumps.

    The first assignment of a name wins (``getenv`` returns the first). Empty text is an empty environment.
    """
    env: dict[str, str] = {}
    if "\0" in text:
        offset = 0
        for entry in text.split("\0"):
            line = text.count("\n", 0, offset + len(entry) - len(entry.lstrip())) + 1
            offset += len(entry) + 1
            if not entry.strip():  # the empty entry after the last NUL, or the newlines a blanked prompt left
                continue
            m = _ASSIGNMENT_LINE.match(entry.lstrip("\r\n"))
            if m is None:
                raise ParseError(source, f"expected NAME=value between NULs, got {entry[:40]!r}", line=line)
            env.setdefault(m[1], m[2])
        return env
    lines = [raw.removesuffix("\r") for raw in text.split("\n")]
    start = 0
    for i, raw in enumerate(lines[:4]):  # sacct --env-vars: "Environment used for <id> ..." then dashes
        if _DASHES.match(raw):
            start = i + 1
            break
    current: str | None = None  # the variable a line without NAME= continues (None: an ignored duplicate)
    seen = False
    for number, raw in enumerate(lines[start:], start=start + 1):
        m = _ASSIGNMENT_LINE.match(raw)
        if m is not None:
            seen = True
            current = None if m[1] in env else m[1]
            env.setdefault(m[1], m[2])
        elif not seen:
            if raw.strip():
                raise ParseError(source, f"expected NAME=value, got {raw[:40]!r}", line=number)
        elif current is not None and raw.strip():
            env[current] += "\n" + raw  # a multi-line value (an exported shell function)
    return env


# --- batch scripts --------------------------------------------------------------------------------

_VAR_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_OPERATORS = ("&&", "||", ";", "|", "&")
_DECLARE = ("export", "declare", "typeset")
_KEYWORDS = frozenset({"then", "do", "else", "{", "(", "!", "time"})


@dataclass(slots=True)
class _Word:
    text: str
    assign_ok: bool  # NAME= part was unquoted, so the word may be an assignment


class _ScriptReader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.shell: dict[str, str] = {}  # every variable assigned so far (for $NAME expansion)
        self.env: dict[str, str] = {}  # what reaches the job's processes

    def expand(self, text: str) -> str:
        def sub(m: re.Match[str]) -> str:
            name = m[1] or m[3]
            if name in self.shell:
                return self.shell[name]
            if m[1] and m[2] is not None:
                return m[2]
            return m[0]  # unknown: kept verbatim (NCCL would see the runtime value)

        return _VAR_REF.sub(sub, text)

    def words(self, line: str, number: int) -> list[list[_Word]]:
        """Split a logical line into commands of words (quotes removed, variables expanded)."""
        commands: list[list[_Word]] = [[]]
        i = 0
        buf: list[str] = []
        in_word = False
        assign_ok = True
        while i < len(line):
            ch = line[i]
            if ch in " \t":
                if in_word:
                    commands[-1].append(_Word("".join(buf), assign_ok))
                    buf, in_word, assign_ok = [], False, True
                i += 1
            elif ch == "#" and not in_word:
                break
            elif any(line.startswith(op, i) for op in _OPERATORS):
                if in_word:
                    commands[-1].append(_Word("".join(buf), assign_ok))
                    buf, in_word, assign_ok = [], False, True
                op = next(op for op in _OPERATORS if line.startswith(op, i))
                commands.append([])
                i += len(op)
            elif ch == "'":
                end = line.find("'", i + 1)
                if end < 0:
                    raise ParseError(self.source, "expected a closing single quote", line=number)
                if "=" not in "".join(buf):
                    assign_ok = False  # a quoted name: not an assignment
                buf.append(line[i + 1 : end])
                in_word = True
                i = end + 1
            elif ch == '"':
                j = i + 1
                part: list[str] = []
                while j < len(line) and line[j] != '"':
                    if line[j] == "\\" and j + 1 < len(line) and line[j + 1] in '"\\$`':
                        part.append(line[j + 1])
                        j += 2
                    else:
                        part.append(line[j])
                        j += 1
                if j >= len(line):
                    raise ParseError(self.source, "expected a closing double quote", line=number)
                if "=" not in "".join(buf):
                    assign_ok = False  # a quoted name: not an assignment
                buf.append(self.expand("".join(part)))
                in_word = True
                i = j + 1
            elif ch == "\\" and i + 1 < len(line):
                buf.append(line[i + 1])
                in_word = True
                i += 2
            else:
                j = i
                while j < len(line) and line[j] not in " \t'\"\\#;&|":
                    j += 1
                if j == i:  # a lone '#' inside a word, or a trailing backslash
                    j = i + 1
                buf.append(self.expand(line[i:j]))
                in_word = True
                i = j
        if in_word:
            commands[-1].append(_Word("".join(buf), assign_ok))
        return [c for c in commands if c]

    def sbatch_export(self, value: str) -> None:
        for item in value.split(","):
            name, eq, val = item.partition("=")
            if eq and _ENV_NAME.match(name):
                self.shell[name] = val
                self.env[name] = val

    def command(self, words: list[_Word]) -> None:
        while words and words[0].text in _KEYWORDS:  # "then export A=1", "do export ..."
            words = words[1:]
        assignments: list[tuple[str, str]] = []
        i = 0
        while i < len(words):
            name, eq, value = words[i].text.partition("=")
            if not (eq and words[i].assign_ok and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)):
                break
            assignments.append((name, value))
            i += 1
        rest = words[i:]
        if not rest:  # NAME=value on its own: a shell variable, exported only if already exported
            for name, value in assignments:
                self.shell[name] = value
                if name in self.env:
                    self.env[name] = value
            return
        head = rest[0].text
        if head in _DECLARE:
            exporting = head == "export" or any(w.text.startswith("-") and "x" in w.text for w in rest[1:])
            for word in rest[1:]:
                if word.text.startswith("-"):
                    continue
                name, eq, value = word.text.partition("=")
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    continue
                if eq:
                    self.shell[name] = value
                if exporting and name in self.shell:
                    self.env[name] = self.shell[name]
            return
        for name, value in assignments:  # NAME=value cmd: the command (srun, torchrun ...) sees it
            self.env[name] = value

    def read(self, text: str) -> dict[str, str]:
        logical: list[tuple[int, str]] = []
        pending = ""
        start = 1
        for number, line in enumerate(text.split("\n"), start=1):
            raw = line.removesuffix("\r")
            if not pending:
                start = number
            if raw.endswith("\\") and not raw.lstrip().startswith("#"):
                pending += raw[:-1]
                continue
            logical.append((start, pending + raw))
            pending = ""
        if pending:
            logical.append((start, pending))
        for number, line in logical:
            stripped = line.strip()
            m = re.match(r"^#SBATCH\s+--export[= ](\S+)", stripped)
            if m is not None:
                self.sbatch_export(m[1])
                continue
            for words in self.words(line, number):
                self.command(words)
        return self.env


def parse_script(text: str, source: str = "<input>") -> dict[str, str]:
    """Variables a batch script puts into its job's environment.

    Read: ``export K=V`` (and ``declare -x`` / ``typeset -x``), ``export K`` after ``K=V``, ``K=V command``
    prefixes (``NCCL_IB_TC=106 srun ...``: the command's environment), and ``#SBATCH --export=ALL,K=V``
    (split at commas, as sbatch does). A plain ``K=V`` line is a shell variable only: NCCL never sees it
    unless it is exported. Quotes are removed; ``$K`` and ``${K}`` of variables set earlier in the script are
    expanded, others (and ``$(...)``) are kept verbatim. Conditionals and functions are not followed: every
    line counts. Empty text is an empty environment.
    """
    return _ScriptReader(source).read(text)
