"""The exception tree of unifab.

    UnifabError                       root; every error unifab raises on purpose
    ├── ParseError                    raw artifact does not match its format (names source, line, expectation)
    │   └── YamlError                 a YAML document that cannot be read safely (load_yaml below)
    ├── BundleError                   a bundle path is missing or is not a bundle
    ├── UsageError                    a command was called with arguments that cannot work
    │   ├── IntentError               fabric.yaml has problems (all of them, each with file:line: key.path)
    │   └── UnknownPlatformError      a device names a switch OS no platform declares (unifab.platforms)
    ├── RenderError                   a value cannot be written into a device's configuration language
    ├── SonicRedisError               a SONiC switch's Redis cannot be read (collect.sonic_redis)
    ├── SourceOfTruthError            NetBox / Nautobot cannot be read (collect.netbox)
    └── EapiError                     Arista eAPI (collect.eos_eapi)
        ├── EapiUnreachable           no answer: connection refused, timeout, TLS
        ├── EapiAuthError             401 / 403
        ├── EapiCommandError          a command was rejected by the switch
        └── EapiResponseError         the answer is not the JSON-RPC it should be

Bad input inside a bundle never escapes as an exception from a fabric-wide run: the collector turns
a ``ParseError`` into an ``INPUT-UNREADABLE`` finding and carries on.

A parser that can read the rest of a file past one bad row takes a :class:`ParseProblems` collector: each
row, reference or key it cannot read becomes a :class:`ParseProblem` (where, what was expected, what was
skipped) and reading goes on; the collector reports them as ``INPUT-PARTIAL`` findings. Without a collector
(or with ``ParseProblems.strict``) the first problem is raised as a ``ParseError``, as before.

:func:`load_yaml` (and :func:`compose_yaml` / :func:`construct_yaml`) is the one way unifab reads YAML
(``fabric.yaml``, inventories, NVUE configurations, AVD files, pod lists): it lives at this lowest layer so
that every layer that reads YAML can use it, and it turns what a hostile document can do to PyYAML (a
recursive alias, a "billion laughs" alias expansion, nesting deep enough to exhaust the stack) into a
:class:`ParseError` naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

__all__ = [
    "YAML_EXTRA_NODES",
    "YAML_MAX_DEPTH",
    "BundleError",
    "IntentError",
    "ParseError",
    "ParseProblem",
    "ParseProblems",
    "RenderError",
    "UnifabError",
    "UsageError",
    "YamlError",
    "compose_yaml",
    "construct_yaml",
    "load_yaml",
]


class UnifabError(Exception):
    """Root of every error unifab raises on purpose."""


class ParseError(UnifabError):
    """A raw artifact could not be read as its format.

    ``source`` is the file (or a label such as ``<stdin>``), ``line`` the 1-based line where reading
    failed (``None`` when the format has no lines worth naming, e.g. a JSON key path), and
    ``expected`` says what the parser wanted to see there.
    """

    def __init__(self, source: str, expected: str, line: int | None = None, key: str | None = None) -> None:
        self.source = source
        self.expected = expected
        self.line = line
        self.key = key
        where = source
        if line is not None:
            where += f":{line}"
        if key is not None:
            where += f" [{key}]"
        super().__init__(f"{where}: {expected}")


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """One thing a parser could not read while it read the rest: a row, a reference, a key.

    ``source``, ``line`` and ``key`` locate it as :class:`ParseError` does; ``expected`` is what the parser
    wanted there; ``skipped`` names what was left out because of it (``"QUEUE|Ethernet0|3"``, ``"the QoS of
    Ethernet0"``), so a reader can tell what is unknown.
    """

    source: str
    expected: str
    skipped: str
    line: int | None = None
    key: str | None = None

    @property
    def where(self) -> str:
        """``source[:line][ [key]]``, as a ParseError message starts."""
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        return where

    def __str__(self) -> str:
        return f"{self.where}: {self.expected}; skipped {self.skipped}"

    def error(self) -> ParseError:
        return ParseError(self.source, self.expected, line=self.line, key=self.key)


class ParseProblems:
    """Where a parser puts what it could not read, so it can go on with the rest of the file.

    A parser takes ``problems: ParseProblems | None = None`` and, when ``None``, uses
    ``ParseProblems.strict(source)``: then the first problem is raised as a :class:`ParseError`, exactly as
    a parser without this mechanism behaves. A lenient collector (``ParseProblems(source)``) keeps every
    problem in :attr:`problems` instead. Inside the parser, one row is read under :meth:`skipping`::

        for key, fields in rows:
            with problems.skipping(f"QUEUE|{key}"):
                ...  # any ParseError raised here costs this row only
                out[key] = row  # store last, so a failed row leaves nothing half-read

    A problem found without an exception (a dangling reference the parser chose to leave unknown) is
    :meth:`add`-ed. What cannot be read at all (not JSON, not an object, empty) is still raised.
    """

    __slots__ = ("is_strict", "problems", "source")

    def __init__(self, source: str, *, strict: bool = False) -> None:
        self.source = source
        self.is_strict = strict
        self.problems: list[ParseProblem] = []

    @classmethod
    def strict(cls, source: str) -> ParseProblems:
        return cls(source, strict=True)

    def add(self, expected: str, skipped: str, *, key: str | None = None, line: int | None = None) -> None:
        """Record one problem (raise it at once when strict)."""
        problem = ParseProblem(self.source, expected, skipped, line=line, key=key)
        if self.is_strict:
            raise problem.error()
        self.problems.append(problem)

    def record(self, exc: ParseError, skipped: str) -> None:
        """Record a :class:`ParseError` raised while reading what ``skipped`` names (re-raise it when strict)."""
        if self.is_strict:
            raise exc
        self.problems.append(ParseProblem(exc.source, exc.expected, skipped, line=exc.line, key=exc.key))

    def skipping(self, skipped: str) -> _Skipping:
        """A ``with`` block whose :class:`ParseError` costs only ``skipped``: recorded, and the block is left."""
        return _Skipping(self, skipped)


class _Skipping:
    __slots__ = ("failed", "owner", "skipped")

    def __init__(self, owner: ParseProblems, skipped: str) -> None:
        self.owner = owner
        self.skipped = skipped
        self.failed = False

    def __enter__(self) -> _Skipping:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if not isinstance(exc, ParseError) or self.owner.is_strict:
            return False
        self.owner.record(exc, self.skipped)
        self.failed = True
        return True


class YamlError(ParseError):
    """A YAML document :func:`load_yaml` refuses: ``problem`` says why without the file and line (callers that
    phrase their own message use it); the message is ``source:line: YAML (problem)``."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.problem = problem
        super().__init__(source, f"YAML ({problem})", line=line)


class BundleError(UnifabError):
    """The bundle directory does not exist or has none of the bundle's layout."""


class UsageError(UnifabError):
    """Arguments that cannot work together, or a value out of range."""


class RenderError(UnifabError):
    """A value cannot be written into a device's configuration: a port or profile name outside the
    OS's allowed pattern (it would otherwise be pasted into commands unchecked), or a profile the
    device cannot express. ``device_os`` names the target (``sonic``, ``eos``, ``nvue``)."""

    def __init__(self, device_os: str, message: str) -> None:
        self.device_os = device_os
        super().__init__(f"{device_os}: {message}")


class IntentError(UsageError):
    """An intent file (``fabric.yaml``) that cannot be used; ``problems`` holds one message per problem,
    each naming the file, line, key path, the value and what is allowed."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(problems))


# --- bounded YAML --------------------------------------------------------------------------------------------

YAML_MAX_DEPTH = 100  # no configuration unifab reads nests near this (NVUE ~10, a pod list ~15)
# What aliases may add: a document may expand to at most its own length in characters plus this many nodes
# (without aliases a node takes at least two characters, so only alias expansion can reach the budget).
YAML_EXTRA_NODES = 100_000


def load_yaml(text: str, source: str, *, max_depth: int = YAML_MAX_DEPTH, extra_nodes: int = YAML_EXTRA_NODES) -> Any:
    """One YAML document with the safe loader's types; ``None`` for an empty document.

    Syntax errors, a recursive alias (``x: &x [*x]``), an alias expansion past the budget (billion laughs),
    nesting deeper than ``max_depth`` and more than one document are a :class:`YamlError` naming ``source``
    and the line.
    """
    node = compose_yaml(text, source, max_depth=max_depth, extra_nodes=extra_nodes)
    return None if node is None else construct_yaml(node, source)


def compose_yaml(
    text: str, source: str, *, max_depth: int = YAML_MAX_DEPTH, extra_nodes: int = YAML_EXTRA_NODES
) -> yaml.Node | None:
    """The node graph of one YAML document (``None`` when empty), checked as :func:`load_yaml` describes.

    The composer is iterative (PyYAML's recurses once per nesting level), so depth is checked before the
    stack is at risk; the alias check walks the graph once, sharing what aliases share.
    """
    import yaml

    loader_class: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader: Any = loader_class(text)  # PyYAML's stubs leave the event API untyped
    try:
        node = _compose(loader, source, max_depth)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not YAML"
        raise YamlError(source, problem, line=None if mark is None else mark.line + 1) from None
    except yaml.YAMLError as exc:
        raise YamlError(source, str(exc)) from None
    finally:
        loader.dispose()
    if node is not None:
        _check_expansion(node, source, max_depth, len(text) + extra_nodes)
    return node


def construct_yaml(node: yaml.Node, source: str = "<yaml>") -> Any:
    """The Python value of a node from :func:`compose_yaml` (safe types only: no object construction)."""
    import yaml

    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "a value of a known type"
        raise YamlError(source, problem, line=None if mark is None else mark.line + 1) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise YamlError(source, f"{type(exc).__name__}: {exc}") from None
    finally:
        loader.dispose()


def _line(node: yaml.Node) -> int | None:
    mark = node.start_mark
    return None if mark is None else mark.line + 1


def _compose(loader: Any, source: str, max_depth: int) -> yaml.Node | None:
    """PyYAML's ``get_single_node`` without recursion: the stack of open collections is a list."""
    import yaml
    from yaml import events
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    loader.get_event()  # StreamStart
    if loader.check_event(events.StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()  # DocumentStart
    anchors: dict[str, Node] = {}
    open_nodes: list[Node] = []
    pending_keys: list[Node | None] = []  # per open mapping: the key waiting for its value
    root: Node | None = None
    while not loader.check_event(events.DocumentEndEvent):
        event: Any = loader.get_event()
        start: Any = event.start_mark  # libyaml's marks and PyYAML's are alike; the stubs tell them apart
        end: Any = event.end_mark
        if isinstance(event, events.SequenceEndEvent | events.MappingEndEvent):
            closed = open_nodes.pop()
            pending_keys.pop()
            closed.end_mark = end
            continue
        node: Node
        if isinstance(event, events.AliasEvent):
            if event.anchor not in anchors:
                raise YamlError(source, f"alias *{event.anchor} names no anchor", line=start.line + 1)
            node = anchors[event.anchor]
        elif isinstance(event, events.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(ScalarNode, event.value, event.implicit)
            node = ScalarNode(tag, event.value, start, end, style=event.style)
        elif isinstance(event, events.SequenceStartEvent | events.MappingStartEvent):
            kind = SequenceNode if isinstance(event, events.SequenceStartEvent) else MappingNode
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(kind, None, event.implicit)
            node = kind(tag, [], start, None, flow_style=event.flow_style)
        else:  # the parser yields nothing else inside a document
            raise YamlError(source, f"unexpected {type(event).__name__}", line=start.line + 1)
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, events.AliasEvent):
            anchors[anchor] = node
        if not open_nodes:
            root = node
        elif isinstance(open_nodes[-1], SequenceNode):
            open_nodes[-1].value.append(node)
        elif pending_keys[-1] is None:
            pending_keys[-1] = node
        else:
            open_nodes[-1].value.append((pending_keys[-1], node))
            pending_keys[-1] = None
        if isinstance(event, events.SequenceStartEvent | events.MappingStartEvent):
            if len(open_nodes) >= max_depth:
                raise YamlError(source, f"nested more than {max_depth} levels deep", line=_line(node))
            open_nodes.append(node)
            pending_keys.append(None)
    loader.get_event()  # DocumentEnd
    if not loader.check_event(events.StreamEndEvent):
        extra: Any = loader.get_event()
        raise YamlError(source, "more than one document", line=extra.start_mark.line + 1)
    loader.get_event()
    if root is None:
        raise yaml.YAMLError("an empty document")
    return root


def _check_expansion(root: yaml.Node, source: str, max_depth: int, budget: int) -> None:
    """What the document is once aliases are expanded: no cycle, at most ``max_depth`` deep, ``budget`` nodes.

    Memoized by node identity, so a billion-laughs document costs its own size to check, not its expansion.
    """
    from yaml.nodes import MappingNode, Node, SequenceNode

    def children(node: Node) -> list[Node]:
        if isinstance(node, SequenceNode):
            return list(node.value)
        if isinstance(node, MappingNode):
            return [part for pair in node.value for part in pair]
        return []

    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            kids = children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            on_path.discard(key)
            if size[key] > budget:
                raise YamlError(
                    source, f"more than {budget:,} values once aliases are expanded (an alias bomb?)", line=_line(node)
                )
            if depth[key] > max_depth:
                raise YamlError(
                    source, f"nested more than {max_depth} levels deep once aliases are expanded", line=_line(node)
                )
            continue
        if key in size:
            continue
        if key in on_path:
            raise YamlError(
                source,
                "a recursive alias: the anchor defined here is used inside itself (it would nest without end, "
                f"past {max_depth} levels deep)",
                line=_line(node),
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in children(node) if id(k) not in size)
