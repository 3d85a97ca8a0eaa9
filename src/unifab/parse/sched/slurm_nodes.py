"""Slurm nodes: state, drain reason, GRES and partitions, normalized from every way Slurm prints them.

- ``sinfo --json`` (22.05, openapi/v0.0.38: ``"state": "idle"`` + ``"state_flags": ["DRAIN"]``) and slurmrestd
  ``GET /slurm/v0.0.4x/node[s]`` (data_parser v0.0.40+: ``"state": ["IDLE", "DRAIN"]``, epoch times as
  ``{"set", "infinite", "number"}``). The grouped ``{"sinfo": [...]}`` shape of ``sinfo --json`` 23.11+ is not
  read (no sample); it is a ParseError naming the key.
- ``scontrol show node [-o]``: ``State=IDLE+DRAIN``, ``Reason=<text> [<user>@<time>]``, ``Gres=``, ``GresUsed=``
  (``-d``), ``Partitions=gpu,debug``.
- ``sinfo -R`` (``REASON USER TIMESTAMP NODELIST``; the reason is cut to 20 characters), ``sinfo -N -l`` (a date
  line, then one row per node and partition; ``gpu*`` marks the default partition), and plain ``sinfo``
  (``PARTITION AVAIL TIMELIMIT NODES STATE NODELIST``). REASON may be the first or the last column; the
  other columns hold no spaces. A node listed under several partitions becomes one record.

``state`` is a set of lower-case tokens: a base (``idle``, ``alloc``, ``mix``, ``down``, ``error``, ``future``,
``unknown``) and flags (``drain``, ``completing``, ``fail``, ``maint``, ``reserved``, ``not_responding``,
``powered_down``, ``powering_up``, ``powering_down``, ``reboot_requested``, ``reboot_issued``, ``planned``,
``cloud``, ``dynamic``, ``invalid_reg`` ...). sinfo's summary words keep what they say: ``drained`` is {drain},
``draining`` is {drain, draining} (jobs still running; sinfo does not say alloc or mix), and the state
suffixes ``*`` ``~`` ``#`` ``!`` ``%`` ``$`` ``@`` ``^`` ``-`` add not_responding, powered_down, powering_up,
powering_down, powering_down, maint, reboot_requested, reboot_issued, planned. A word Slurm adds later is kept
lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_list, json_object
from unifab.parse._text import pasted
from unifab.parse.sched import hostlist
from unifab.parse.sched._common import (
    epoch_time,
    load_json,
    null,
    opt_number,
    opt_str,
    opt_str_list,
    read_in_part,
    text_time,
)
from unifab.parse.sched.slurm_jobs import record_name, scontrol_pairs, scontrol_records

__all__ = ["STATE_SUFFIXES", "STATE_WORDS", "Node", "normalize_state", "parse"]


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    state: frozenset[str]  # normalized tokens, see the module docstring; empty when the source has no state
    state_raw: str  # as printed ("IDLE+DRAIN", "drained", "idle+DRAIN" from sinfo --json state + state_flags)
    reason: str | None
    reason_user: str | None
    reason_time: str | None  # ISO 8601: "Z" from JSON epoch seconds, else the cluster's local time as printed
    gres: str | None  # configured GRES: "gpu:h100:8"
    gres_used: str | None  # "gpu:h100:8(IDX:0-7)" (sinfo --json, slurmrestd, scontrol -d)
    partitions: tuple[str, ...]


STATE_WORDS: dict[str, tuple[str, ...]] = {
    "ALLOCATED": ("alloc",),
    "ALLOC": ("alloc",),
    "MIXED": ("mix",),
    "MIX": ("mix",),
    "IDLE": ("idle",),
    "DOWN": ("down",),
    "ERROR": ("error",),
    "FUTURE": ("future",),
    "FUTR": ("future",),
    "UNKNOWN": ("unknown",),
    "UNK": ("unknown",),
    "DRAIN": ("drain",),
    "DRAINED": ("drain",),
    "DRAINING": ("drain", "draining"),
    "DRNG": ("drain", "draining"),
    "COMPLETING": ("completing",),
    "COMP": ("completing",),
    "FAIL": ("fail",),
    "FAILING": ("fail",),
    "MAINT": ("maint",),
    "MAINTENANCE": ("maint",),
    "RESERVED": ("reserved",),
    "RESV": ("reserved",),
    "NOT_RESPONDING": ("not_responding",),
    "NO_RESPOND": ("not_responding",),
    "POWERED_DOWN": ("powered_down",),
    "POWER_DOWN": ("powered_down",),
    "POWERING_DOWN": ("powering_down",),
    "POWERING_UP": ("powering_up",),
    "POWER_UP": ("powering_up",),
    "REBOOT_REQUESTED": ("reboot_requested",),
    "REBOOT": ("reboot_requested",),
    "REBOOT_ISSUED": ("reboot_issued",),
    "PLANNED": ("planned",),
    "PLND": ("planned",),
    "CLOUD": ("cloud",),
    "DYNAMIC_FUTURE": ("dynamic",),
    "DYNAMIC_NORM": ("dynamic",),
    "INVALID_REG": ("invalid_reg",),
    "INVALID": ("invalid",),
    "INVAL": ("invalid",),
    "BLOCKED": ("blocked",),
    "PERFCTRS": ("perfctrs",),
    "NPC": ("perfctrs",),
    "UNDRAIN": ("undrain",),
}
STATE_SUFFIXES = {
    "*": "not_responding",
    "~": "powered_down",
    "#": "powering_up",
    "!": "powering_down",
    "%": "powering_down",
    "$": "maint",
    "@": "reboot_requested",
    "^": "reboot_issued",
    "-": "planned",
}
_WORD = re.compile(r"^[A-Za-z][A-Za-z_]*$")
_REASON_STAMP = re.compile(r"^(.*?)\s*\[([^@\[\]]*)@([^\[\]]*)\]$")
_DATE_LINE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:]{8} [0-9]{4}$")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def normalize_state(raw: str, source: str, line: int | None = None, key: str | None = None) -> frozenset[str]:
    """``IDLE+DRAIN``, ``idle*``, ``drained``, ``mixed-`` ... -> normalized tokens."""
    tokens: set[str] = set()
    for part in raw.replace("+", " ").split():
        word = part
        while word and word[-1] in STATE_SUFFIXES:
            tokens.add(STATE_SUFFIXES[word[-1]])
            word = word[:-1]
        if not _WORD.match(word):
            raise ParseError(source, f"expected a node state word, got {part!r}", line=line, key=key)
        tokens.update(STATE_WORDS.get(word.upper(), (word.lower(),)))
    return frozenset(tokens)


def _split_reason(text: str | None) -> tuple[str | None, str | None, str | None]:
    """``<reason> [<user>@<time>]`` (scontrol) -> reason, user, time."""
    reason = null(text)
    if reason is None:
        return None, None, None
    m = _REASON_STAMP.match(reason)
    if m is None:
        return reason, None, None
    return m[1] or None, null(m[2]), null(m[3])


# --- JSON -----------------------------------------------------------------------------------------


def _json_node(n: dict[str, object], path: str, source: str) -> Node:
    name = opt_str(n, "name", path, source)
    if not name:
        raise ParseError(source, "expected the node's 'name'", key=child(path, "name"))
    words = list(opt_str_list(n, "state", path, source)) + list(opt_str_list(n, "state_flags", path, source))
    raw = "+".join(words)
    state = normalize_state(raw, source, key=child(path, "state"))
    when = opt_number(n, "reason_changed_at", path, source)
    reason = null(opt_str(n, "reason", path, source))
    return Node(
        name=name,
        state=state,
        state_raw=raw,
        reason=reason,
        reason_user=null(opt_str(n, "reason_set_by_user", path, source)),
        reason_time=epoch_time(when, child(path, "reason_changed_at"), source) if reason else None,
        gres=null(opt_str(n, "gres", path, source)),
        gres_used=null(opt_str(n, "gres_used", path, source)),
        partitions=opt_str_list(n, "partitions", path, source),
    )


def _parse_json(text: str, source: str, log: ParseProblems) -> tuple[Node, ...]:
    top = json_object(load_json(text, source), "", source)
    if "nodes" not in top:
        if "sinfo" in top:
            raise ParseError(
                source, "expected 'nodes'; the grouped 'sinfo' shape (23.11+) is not supported", key="sinfo"
            )
        raise ParseError(source, "expected the top-level key 'nodes' (sinfo --json, slurmrestd nodes)", key="nodes")
    out: list[Node] = []
    for i, n in enumerate(json_list(top["nodes"], "nodes", source)):
        where = child("nodes", i)
        name = n.get("name") if isinstance(n, dict) else None
        with log.skipping(f"node {name}" if isinstance(name, str) and name else f"the node at {where}"):
            out.append(_json_node(json_object(n, where, source), where, source))
    return tuple(out)


# --- scontrol show node ---------------------------------------------------------------------------

_REST_OF_LINE = frozenset({"OS", "Reason", "Comment", "Extra", "AvailableFeatures", "ActiveFeatures"})


def _scontrol_node(record: list[tuple[int, str]], source: str) -> Node:
    fields: dict[str, tuple[str, int]] = {}
    for pair in scontrol_pairs(record, _REST_OF_LINE, source):
        fields.setdefault(pair.key, (pair.value, pair.line))
    first = record[0][0]
    name = fields.get("NodeName", ("", first))[0]
    if not _NAME.match(name):
        raise ParseError(source, f"expected a node name after 'NodeName=', got {name!r}", line=first)
    if "State" not in fields:
        raise ParseError(source, f"expected 'State=' in the record of node {name}", line=first)
    raw, line = fields["State"]
    reason, user, when = _split_reason(fields.get("Reason", ("", first))[0])
    partitions = null(fields.get("Partitions", ("", first))[0])
    return Node(
        name=name,
        state=normalize_state(raw, source, line=line),
        state_raw=raw,
        reason=reason,
        reason_user=user,
        reason_time=when,
        gres=null(fields.get("Gres", ("", first))[0]),
        gres_used=null(fields.get("GresUsed", ("", first))[0]),
        partitions=() if partitions is None else tuple(p for p in partitions.split(",") if p),
    )


def _parse_scontrol(lines: list[tuple[int, str]], source: str, log: ParseProblems) -> tuple[Node, ...]:
    nodes: list[Node] = []
    for record in scontrol_records(lines, "NodeName=", source, None if log.is_strict else log, noun="node"):
        with log.skipping(record_name(record[0][1], "NodeName=", record[0][0], "node")):
            nodes.append(_scontrol_node(record, source))
    return tuple(nodes)


# --- sinfo tables ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Acc:
    state: frozenset[str]
    state_raw: str
    reason: str | None
    user: str | None
    time: str | None
    gres: str | None
    gres_used: str | None
    partitions: list[str]


def _parse_sinfo(lines: list[tuple[int, str]], source: str, log: ParseProblems) -> tuple[Node, ...]:
    if _DATE_LINE.match(lines[0][1].strip()):
        lines = lines[1:]  # sinfo -l prints the time first
        if not lines:
            raise ParseError(source, "expected a sinfo header after the date line", line=1)
    header_line, header = lines[0]
    names = header.split()
    node_column = next((c for c in ("NODELIST", "HOSTNAMES") if c in names), None)
    if node_column is None:
        raise ParseError(source, "expected a sinfo header with a NODELIST or HOSTNAMES column", line=header_line)
    if "REASON" in names[1:-1]:
        raise ParseError(source, "expected REASON as the first or the last sinfo column", line=header_line)
    nodes: dict[str, _Acc] = {}
    spoiled: set[str] = set()  # nodes a bad row names: left out whole, not read from their other rows
    for number, raw in lines[1:]:
        try:
            hosts, acc = _sinfo_row(number, raw, names, node_column, source)
        except ParseError as exc:  # named here, so a row that reads costs no second look at its node cell
            cell, named = _row_nodes(raw, names, names.index(node_column), source)
            log.record(exc, f"line {number}" if not named else f"node{'s' if len(named) > 1 else ''} {cell}")
            spoiled.update(named)
            continue
        partition = acc.partitions[0] if acc.partitions else ""
        for host in hosts:
            known = nodes.setdefault(host, replace(acc, partitions=[]))
            if partition and partition not in known.partitions:
                known.partitions.append(partition)
    return tuple(
        Node(name, a.state, a.state_raw, a.reason, a.user, a.time, a.gres, a.gres_used, tuple(a.partitions))
        for name, a in nodes.items()
        if name not in spoiled
    )


def _row_nodes(raw: str, names: list[str], at: int, source: str) -> tuple[str, tuple[str, ...]]:
    """The node cell of a row and the nodes it names, told even when another cell is bad: the cells on the side
    away from REASON (the one column that holds spaces) hold one word each. ``("", ())`` when it cannot tell."""
    words = raw.split()
    index = at - len(names) if names[0] == "REASON" else at
    if not -len(words) <= index < len(words):
        return "", ()
    try:
        hosts = hostlist.expand(words[index], source)
    except ParseError:
        return "", ()
    return (words[index], hosts) if all(_NAME.match(h) for h in hosts) else ("", ())


def _sinfo_row(number: int, raw: str, names: list[str], node_column: str, source: str) -> tuple[tuple[str, ...], _Acc]:
    """The nodes of one sinfo row and what the row says of them (``partitions``: the row's own, if any)."""
    width = len(names)
    text = raw.strip()
    parts = text.rsplit(None, width - 1) if names[0] == "REASON" else text.split(None, width - 1)
    if len(parts) != width:
        raise ParseError(source, f"expected {width} columns ({' '.join(names)}), got {len(parts)}", line=number)
    cells = dict(zip(names, parts, strict=True))
    hosts = hostlist.expand(cells[node_column], source, line=number)
    state_raw = cells.get("STATE", "")
    partition = cells.get("PARTITION", "").rstrip("*")
    acc = _Acc(
        normalize_state(state_raw, source, line=number) if state_raw else frozenset(),
        state_raw,
        null(cells.get("REASON")),
        null(cells.get("USER")),
        text_time(cells.get("TIMESTAMP"), source, number) if "TIMESTAMP" in cells else None,
        null(cells.get("GRES")),
        null(cells.get("GRES_USED")),
        [partition] if partition else [],
    )
    return hosts, acc


# --- entry point ----------------------------------------------------------------------------------


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Node, ...]:
    """Nodes from sinfo/slurmrestd JSON, ``scontrol show node`` or sinfo text (detected from the text).

    With ``problems`` a node entry that cannot be read costs that node (named by its name and line or key; a
    sinfo row costs the nodes it names, also where other rows list them); the other nodes are read. Output
    whose every entry is bad is still refused.
    """
    return read_in_part(_parse, text, source, problems)


def _parse(text: str, source: str, log: ParseProblems) -> tuple[Node, ...]:
    stripped = text.lstrip()
    if not stripped:
        raise ParseError(source, "expected Slurm node output, got empty text", line=1)
    if stripped[0] in "{[":
        return _parse_json(text, source, log)
    lines = [(n, raw.rstrip("\r")) for n, raw in enumerate(text.split("\n"), start=1)]
    content = [(n, raw) for n, raw in lines if raw.strip()]
    first_line, first = content[0]
    if first.strip() == "No nodes in the system" and len(content) == 1:
        return ()
    if first.startswith("NodeName="):
        return _parse_scontrol(lines, source, log)
    words = set(first.split()) | (set(content[1][1].split()) if len(content) > 1 else set())
    if words & {"NODELIST", "HOSTNAMES"}:
        return _parse_sinfo(content, source, log)
    raise ParseError(
        source,
        "expected sinfo --json/slurmrestd JSON, 'scontrol show node' (NodeName=...) or a sinfo header (NODELIST ...)",
        line=first_line,
    )
