"""Cumulus PTM ``/etc/ptm.d/topology.dot``: the planned cabling as an undirected Graphviz graph.

::

    graph G {
              "cumulus-1":"swp44" -- "cumulus-2":"swp20" [LLDP="match_hostname=fqdn"]
              "cumulus-1":"swp46" -- "cumulus-2":"swp22" [LLDP="match_type=portdescr"]
    }

Each edge is one cable, ``"<host>":"<port>" -- "<host>":"<port>"``, optionally followed by an
attribute list (PTM reads ``LLDP=``/``BFD=`` match parameters there) and ``;``. The reader takes the
DOT subset PTM files use: quoted or bare ids, ``//``/``/* */``/``#`` comments, graph-level
``name=value`` templates (``LLDP1="..."``) and ``graph|node|edge [..]`` defaults, which it keeps but does
not interpret. An edge without a port on both ends, or a chain ``a -- b -- c``, is not a cable and is
rejected with the line it is on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import pasted
from unifab.parse.plan.cabling import PlannedCable

__all__ = ["DotCable", "Token", "TopologyDot", "parse"]

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<edge>--|->)
  | (?P<id>[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*)
  | (?P<punct>[{}\[\]=;,:])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class DotCable:
    """One edge of the plan; ``line`` is where it starts in the file."""

    a_node: str
    a_port: str
    z_node: str
    z_port: str
    attributes: dict[str, str]
    line: int


@dataclass(frozen=True, slots=True)
class TopologyDot:
    name: str | None
    attributes: dict[str, str]  # graph-level name=value statements (PTM's LLDP templates)
    cables: tuple[DotCable, ...]

    def planned(self) -> tuple[PlannedCable, ...]:
        """The cables in the form ``plan/cabling.csv`` gives them (DOT carries no cable length)."""
        return tuple(PlannedCable(c.a_node, c.a_port, c.z_node, c.z_port, None) for c in self.cables)


Token = tuple[str, str, int]  # (kind, text, line)


def _tokens(text: str, source: str) -> list[Token]:
    out: list[Token] = []
    line, pos = 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(source, f"unexpected character {text[pos]!r} in a DOT graph", line=line)
        kind = m.lastgroup or ""
        value = m.group()
        if kind == "string":
            out.append(("id", re.sub(r"\\(.)", r"\1", value[1:-1]), line))
        elif kind in ("id", "edge", "punct"):
            out.append((kind if kind != "punct" else value, value, line))
        line += value.count("\n")
        pos = m.end()
    return out


class _Reader:
    def __init__(self, tokens: list[Token], source: str) -> None:
        self.tokens = tokens
        self.source = source
        self.i = 0

    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def line(self) -> int:
        tok = self.peek()
        if tok is not None:
            return tok[2]
        return self.tokens[-1][2] if self.tokens else 1

    def take(self, kind: str, expected: str) -> Token:
        tok = self.peek()
        if tok is None or tok[0] != kind:
            got = "end of file" if tok is None else repr(tok[1])
            raise ParseError(self.source, f"expected {expected}, got {got}", line=self.line())
        self.i += 1
        return tok

    def accept(self, kind: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == kind:
            self.i += 1
            return True
        return False

    def attributes(self) -> dict[str, str]:
        """``[k=v, k2=v2; ...]`` (already past nothing); empty when there is no list."""
        attrs: dict[str, str] = {}
        while self.accept("["):
            while not self.accept("]"):
                key = self.take("id", "an attribute name or ']'")[1]
                self.take("=", f"'=' after attribute {key!r}")
                attrs[key] = self.take("id", f"a value for attribute {key!r}")[1]
                if not self.accept(","):
                    self.accept(";")
        return attrs

    def endpoint(self) -> tuple[str, str | None, int]:
        node = self.take("id", "a node id")
        port = None
        if self.accept(":"):
            port = self.take("id", f"a port name after {node[1]!r}:")[1]
            if self.accept(":"):  # compass point ("n", "sw", ...): not part of a cable
                self.take("id", "a compass point")
        return node[1], port, node[2]


@pasted
def parse(text: str, source: str = "<input>") -> TopologyDot:
    reader = _Reader(_tokens(text, source), source)
    head = reader.peek()
    if head is not None and head[1].lower() == "strict":
        reader.i += 1
    kind = reader.take("id", "'graph' or 'digraph' to open the DOT file")[1].lower()
    if kind not in ("graph", "digraph"):
        raise ParseError(source, f"expected 'graph' or 'digraph', got {kind!r}", line=reader.line())
    name = None
    if (tok := reader.peek()) is not None and tok[0] == "id":
        name = reader.take("id", "a graph name")[1]
    reader.take("{", "'{' after the graph header")
    attributes: dict[str, str] = {}
    cables: list[DotCable] = []
    while not reader.accept("}"):
        if reader.peek() is None:
            raise ParseError(source, "expected '}' to close the graph", line=reader.line())
        if reader.accept(";"):
            continue
        first = reader.peek()
        assert first is not None
        nxt = reader.peek(1)
        if first[0] == "id" and first[1].lower() in ("graph", "node", "edge") and nxt is not None and nxt[0] == "[":
            reader.i += 1
            reader.attributes()
            continue
        if first[0] == "id" and nxt is not None and nxt[0] == "=":
            reader.i += 2
            attributes[first[1]] = reader.take("id", f"a value for {first[1]!r}")[1]
            continue
        a_node, a_port, line = reader.endpoint()
        if not (tok := reader.peek()) or tok[0] != "edge":
            reader.attributes()  # a node statement: nothing planned
            continue
        reader.i += 1
        z_node, z_port, _ = reader.endpoint()
        if (tok := reader.peek()) is not None and tok[0] == "edge":
            raise ParseError(source, "expected one cable per edge (a -- b), got a chain a -- b -- c", line=tok[2])
        attrs = reader.attributes()
        if a_port is None or z_port is None:
            bare = a_node if a_port is None else z_node
            raise ParseError(source, f'expected "node":"port" on both ends of a cable; {bare!r} has no port', line=line)
        cables.append(DotCable(a_node, a_port, z_node, z_port, attrs, line))
    if (extra := reader.peek()) is not None:
        raise ParseError(source, f"expected nothing after the graph's closing '}}', got {extra[1]!r}", line=extra[2])
    return TopologyDot(name, attributes, tuple(cables))
