"""A fake Arista EOS that takes pasted fix lines into its ``running-config.txt`` the way EOS configure mode does.

It knows the modes the fixes use (global configuration, ``interface X``, ``qos profile X`` and their ``tx-queue
N`` sub-mode), leaves a mode when a line belongs to its parent as EOS does, and keeps one line per setting:
a new ``qos trust``, ``mtu``, ``priority-flow-control priority N``, ``priority`` / ``no priority`` or
``random-detect ecn`` replaces the old one in that context, and ``qos map dscp D.. to traffic-class T`` moves
those code points off the lines that held them. A line it does not know fails the test (a new fix command
must be taught here, not silently ignored). Nothing is written until ``write memory``, and nothing changes
outside configuration mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FakeEos"]

INDENT = "   "
_QUEUE_LEAVES = ("priority", "no priority", "bandwidth", "random-detect", "no random-detect")


@dataclass
class _Block:
    """A configuration block: its opening line and its lines in order (sub-blocks are ``_Block``)."""

    head: str
    items: list[str | _Block] = field(default_factory=list)

    def block(self, head: str) -> _Block:
        for item in self.items:
            if isinstance(item, _Block) and item.head == head:
                return item
        new = _Block(head)
        self.items.append(new)
        return new


def _setting(line: str, strict: bool = True) -> tuple[str, ...]:
    """What a configuration line sets: lines with the same setting replace each other in one context. A line
    already in the configuration that no fix sets is its own setting; a pasted line must be known (``strict``)."""
    words = line.split()
    positive = words[1:] if words[0] == "no" else words
    pfc = ["priority-flow-control"]
    if positive[:3] == [*pfc, "pause", "watchdog"] or positive == [*pfc, "pause", "watchdog"]:
        return ("pfcwd", *positive[4:6]) if len(positive) > 3 else ("pfcwd",)
    if positive[:2] == [*pfc, "priority"]:
        return ("pfc-priority", positive[2])
    if positive[:1] == pfc:
        return ("pfc",)
    if positive[:2] in (["qos", "trust"], ["random-detect", "ecn"]):
        return tuple(positive[:2])
    if positive[:4] == ["qos", "map", "traffic-class"] or positive[:3] == ["qos", "map", "traffic-class"]:
        return ("tc-map", positive[3])
    if positive[0] in ("mtu", "priority", "bandwidth", "description", "speed", "service-profile", "shutdown"):
        return (positive[0],)
    if positive[:2] == ["error-correction", "encoding"]:
        return ("fec",)
    if not strict:
        return ("line", line)
    raise AssertionError(f"not a configuration line the fake EOS knows: {line!r}")


class FakeEos:
    """One EOS switch's ``eos/running-config.txt``, edited by pasted fix lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.top = _parse(path.read_text(encoding="utf-8"))
        self.mode: list[_Block] | None = None  # None: enable (exec) mode; [] global configuration
        self.saved = self.changed = 0

    def run(self, line: str) -> None:
        line = line.strip()
        if not line or line.startswith("!") or line.startswith("show "):
            return
        if line == "configure":
            self.mode = []
            return
        if line == "write memory":
            assert self.mode is None, "write memory is an exec command: `end` first"
            self.path.write_text(_dump(self.top), encoding="utf-8")
            self.saved += 1
            return
        assert self.mode is not None, f"{line!r} typed outside configuration mode (no `configure` first)"
        if line == "end":
            self.mode = None
            return
        self.changed += 1
        if line.startswith(("interface ", "qos profile ")):
            self.mode = [self.top.block(line)]
        elif line.startswith("tx-queue "):
            while len(self.mode) > 1:
                self.mode.pop()
            assert self.mode, f"{line!r} outside an interface or qos profile"
            self.mode.append(self.mode[0].block(line))
        elif line.startswith("qos map dscp "):
            self.mode = []
            self._map_dscp(line)
        elif line.startswith("qos map traffic-class "):
            self.mode = []
            _put(self.top, line)
        else:
            if len(self.mode) == 2 and not line.startswith(_QUEUE_LEAVES):
                self.mode.pop()  # a port line after a tx-queue's: EOS returns to the interface
            assert self.mode, f"{line!r} needs an interface or qos profile"
            _put(self.mode[-1], line)

    def _map_dscp(self, line: str) -> None:
        words = line.split()
        to = words.index("to")
        moved = set(words[3:to])
        for i, item in enumerate(self.top.items):
            if isinstance(item, str) and item.startswith("qos map dscp "):
                old = item.split()
                at = old.index("to")
                kept = [d for d in old[3:at] if d not in moved]
                self.top.items[i] = " ".join([*old[:3], *kept, *old[at:]]) if kept else ""
        self.top.items = [item for item in self.top.items if item != ""]
        last = max((i for i, it in enumerate(self.top.items) if isinstance(it, str) and it.startswith("qos map dscp")))
        self.top.items.insert(last + 1, line)


def _put(block: _Block, line: str) -> None:
    key = _setting(line)
    for i, item in enumerate(block.items):
        if isinstance(item, str) and _setting(item, strict=False) == key:
            block.items[i] = line
            return
    block.items.append(line)


def _parse(text: str) -> _Block:
    top = _Block("")
    stack: list[tuple[int, _Block]] = [(-1, top)]
    for raw in text.splitlines():
        if not raw.strip() or raw.strip() == "!":
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // len(INDENT)
        while stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1]
        line = raw.strip()
        if line.startswith(("interface ", "qos profile ", "tx-queue ")):
            block = _Block(line)
            parent.items.append(block)
            stack.append((depth, block))
        elif not (depth == 0 and line == "end"):  # the running-config's closing `end` is written back by _dump
            parent.items.append(line)
    return top


def _dump(top: _Block) -> str:
    out: list[str] = []

    def emit(block: _Block, depth: int) -> None:
        for item in block.items:
            if isinstance(item, _Block):
                out.append(INDENT * depth + item.head)
                emit(item, depth + 1)
                out.append(INDENT * depth + "!")
            else:
                out.append(INDENT * depth + item)

    emit(top, 0)
    return "\n".join([*out, "end"]) + "\n"
