r"""Loaded kernel modules: ``lsmod`` (kmod) or ``/proc/modules``, the file ``lsmod`` itself reads.

``lsmod`` prints a header, then one module per line (``%-19s %8lu  %d`` and the holders, comma-joined)::

    Module                  Size  Used by
    nvidia_peermem         16384  0
    nvidia              56692736  3 nvidia_uvm,nvidia_peermem,nvidia_modeset
    ib_core               434176  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm

``/proc/modules`` has no header; each line is ``name size refcount holders, state address [taints]``, with
``-`` for no holders::

    nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)
    nvidia 56692736 3 nvidia_uvm,nvidia_peermem,nvidia_modeset, Live 0x0000000000000000 (POE)

Either is read into the same record. Module names are kept as printed (the kernel spells them with ``_``: the
``nvidia-peermem`` package loads ``nvidia_peermem``); :meth:`Lsmod.loaded` matches ``-`` and ``_`` alike, as
``modprobe`` does. A refcount of ``-`` (a module that cannot be unloaded) reads as None.

With a :class:`~unifab.errors.ParseProblems` collector a line that cannot be read costs that module only; a
file of nothing but such lines is still an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["Lsmod", "Module", "dump", "parse"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER = re.compile(r"^Module\s+Size\s+Used by\s*$")


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    size: int
    refcount: int | None
    holders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Lsmod:
    modules: tuple[Module, ...]

    def names(self) -> frozenset[str]:
        return frozenset(m.name for m in self.modules)

    def loaded(self, name: str) -> bool:
        """Whether ``name`` is loaded, ``-`` and ``_`` matching alike."""
        wanted = name.replace("-", "_")
        return any(m.name.replace("-", "_") == wanted for m in self.modules)


def _holders(text: str) -> tuple[str, ...]:
    if text in ("", "-", "[permanent]"):
        return ()
    return tuple(h for h in text.strip(",").split(",") if h and h != "[permanent]")


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> Lsmod:
    """Read ``lsmod`` or ``/proc/modules``; an empty file (no module loaded) is an empty record."""
    log = problems if problems is not None else ParseProblems.strict(source)
    modules: list[Module] = []
    seen: set[str] = set()
    skipped = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or (not modules and not skipped and _HEADER.match(line)):
            continue
        with log.skipping(f"the module of line {number}") as row:
            modules.append(_module(line, number, source, seen))
        skipped += row.failed
    if skipped and not modules:
        raise log.problems[0].error()
    return Lsmod(tuple(modules))


def _module(line: str, number: int, source: str, seen: set[str]) -> Module:
    words = line.split()
    if len(words) < 3 or not _NAME.match(words[0]) or not (words[1].isascii() and words[1].isdigit()):
        raise ParseError(
            source, f"expected '<module> <size> <used by count> [holders]', got {line[:60]!r}", line=number
        )
    if words[2] != "-" and not (words[2].isascii() and words[2].isdigit()):
        raise ParseError(source, f"expected a use count or '-', got {words[2][:20]!r}", line=number)
    if words[0] in seen:
        raise ParseError(source, f"expected each module once, got {words[0]} again", line=number)
    seen.add(words[0])
    return Module(
        name=words[0],
        size=int(words[1]),
        refcount=None if words[2] == "-" else int(words[2]),
        holders=_holders(words[3]) if len(words) > 3 else (),
    )


def dump(record: Lsmod) -> str:
    """``lsmod`` text of ``record``, spaced as kmod prints it."""
    lines = ["Module                  Size  Used by"]
    for m in record.modules:
        count = "-" if m.refcount is None else str(m.refcount)
        line = f"{m.name:<19} {m.size:>8}  {count}"
        if m.holders:
            line += " " + ",".join(m.holders)
        lines.append(line)
    return "\n".join(lines) + "\n"
