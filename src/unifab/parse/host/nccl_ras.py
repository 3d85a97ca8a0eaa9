"""NCCL RAS client reports (``ncclras``, or ``echo status | nc localhost 28028``; NCCL 2.24 and later, text format).

RAS is NCCL's own monitor: one thread per job process, talking to its peers over TCP on the bootstrap network. A
query prints the job summary, a table of communicators, then ``Errors`` and ``Warnings`` (``src/ras/
client_support.cc``). What names a process that stopped answering (the job's hang or crash, not yet the cause)::

    Errors
    ======

    INCOMPLETE
      Missing communicator data from 1 job process
      Process 3487984 on node 172.16.64.213 managing GPU 5

    DEAD
      1 job process is considered dead (unreachable via the RAS network)
      Process 3487984 on node 172.16.64.213 managing GPUs 0,1 (NVML 2,3)

    #0-0 (cf264af53edbe986) INCOMPLETE
      Missing communicator data from 1 rank
      Rank 21 -- GPU 5 managed by process 3487984 on node 172.16.64.213      (2.26+; 2.24: "The missing rank: 21")

``INCOMPLETE`` is a process RAS could not get data from in this query (it may answer the next one); ``DEAD`` one
it could not reach for 60 s (permanent). The node is the IP address of the process's RAS socket (``inet_ntop``,
no name lookup); the GPUs are CUDA device numbers, followed by the NVML (``nvidia-smi``) indices in parentheses when
they differ. When more processes or ranks are missing than RAS lists one by one, only the count is printed.

Read into :class:`RasReport`: the NCCL release line when present, how long the query took (``Communicators...
(2.05s)``), each listed process with its state (:class:`RasProcess`), each listed rank of an INCOMPLETE
communicator (:class:`RasRank`), the counts printed without a list, and the communicators with an ``ERROR`` or a
``MISMATCH`` (ranks at different collective counts: a straggler or a job-side divergence, warned about, not a
fault). A report may be an excerpt (from ``Communicators...`` or ``Errors`` on). Text without any RAS section
is a :class:`~unifab.errors.ParseError`; a ``Process``/``Rank`` line that does not have the shape above costs that
line (a located problem), as does a block of the Errors or Warnings section that starts with none of the heads
above (its lines are not read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["RasProcess", "RasRank", "RasReport", "parse"]

_SECTIONS = ("Job summary", "Communicators...", "Errors", "Warnings")
_VERSION = re.compile(r"NCCL version (\S+)")
_QUERY = re.compile(r"Communicators\.\.\.\s*\((\d+(?:\.\d+)?)s\)")
_GPUS = r"(?P<gpus>\d+(?:,\d+)*)(?: \(NVML (?P<nvml>\d+(?:,\d+)*)\))?"
_PROCESS = re.compile(rf"Process (?P<pid>\d+) on node (?P<node>\S+) managing GPUs? {_GPUS}")
_RANK = re.compile(
    rf"Rank (?P<rank>\d+)(?: has status \S+)? -- GPU {_GPUS} managed by process (?P<pid>\d+) on node (?P<node>\S+)"
)
_RANK_UNKNOWN = re.compile(r"Rank (?P<rank>\d+)(?: has status \S+)? -- \[process information not found\]")
_MISSING_RANKS = re.compile(r"The missing ranks?: (?P<ranks>\d+(?:,\s*\d+)*)")
_COMM = re.compile(r"#(?P<group>\d+)-(?P<index>\d+) \((?P<hash>[0-9a-f]+)\) (?P<kind>[A-Z]+)")
_JOB_COUNT = re.compile(r"(?:Missing communicator data from )?(?P<n>\d+) job process(?:es)?\b")
_RANK_COUNT = re.compile(r"Missing communicator data from (?P<n>\d+) ranks?")
_TIMEOUTS = re.compile(r"Encountered (?P<n>\d+) communication timeouts?")


@dataclass(frozen=True, slots=True)
class RasProcess:
    """A job process RAS names: ``missing`` (no data in this query) or ``dead`` (unreachable for 60 s)."""

    state: str  # "missing" | "dead"
    pid: int
    node: str  # the address of its RAS socket
    gpus: tuple[int, ...]  # NVML (nvidia-smi) indices: the CUDA numbers when RAS prints no NVML ones
    line: int


@dataclass(frozen=True, slots=True)
class RasRank:
    """A rank of an INCOMPLETE communicator; ``pid``/``node``/``gpu`` are None when RAS does not print them."""

    comm: str  # "#<group>-<index> (<hash>)"
    rank: int
    gpu: int | None  # NVML index (else CUDA)
    pid: int | None
    node: str | None
    line: int


@dataclass(frozen=True, slots=True)
class RasReport:
    nccl_version: str | None
    query_s: float | None  # how long the communicator query took (RAS waits on processes that do not answer)
    processes: tuple[RasProcess, ...]
    ranks: tuple[RasRank, ...]
    missing_count: int  # job processes INCOMPLETE names, listed or not
    dead_count: int  # job processes DEAD names, listed or not
    incomplete: tuple[str, ...]  # communicators missing ranks
    errors: tuple[str, ...]  # communicators with an ERROR (initialization or asynchronous NCCL errors)
    mismatches: tuple[str, ...]  # communicators whose ranks disagree (status or collective counts)
    timeouts: int  # communication timeouts while gathering the report


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(","))


def _gpus(match: re.Match[str]) -> tuple[int, ...]:
    return _numbers(match["nvml"] or match["gpus"])


def _blocks(lines: list[str], start: int, end: int) -> list[list[tuple[int, str]]]:
    """The blank-line separated blocks of lines ``start..end`` (0-based, end excluded), with 1-based numbers."""
    out: list[list[tuple[int, str]]] = []
    block: list[tuple[int, str]] = []
    for i in range(start, end):
        text = lines[i].strip()
        if not text:
            if block:
                out.append(block)
            block = []
        else:
            block.append((i + 1, text))
    if block:
        out.append(block)
    return out


class _Reader:
    def __init__(self, problems: ParseProblems) -> None:
        self.problems = problems
        self.processes: list[RasProcess] = []
        self.ranks: list[RasRank] = []
        self.missing = self.dead = self.timeouts = 0
        self.incomplete: list[str] = []
        self.errors: list[str] = []
        self.mismatches: list[str] = []

    def job_block(self, state: str, block: list[tuple[int, str]]) -> None:
        (_, head), *rest = block
        if (m := _JOB_COUNT.search(head)) is not None:
            if state == "dead":
                self.dead += int(m["n"])
            else:
                self.missing += int(m["n"])
        for number, text in rest:
            if text.startswith("[could not find information"):
                continue
            if (p := _PROCESS.fullmatch(text)) is None:
                self.problems.add(
                    "Process <pid> on node <address> managing GPU[s] <n>[,<n>...] [(NVML ...)]", text, line=number
                )
                continue
            self.processes.append(RasProcess(state, int(p["pid"]), p["node"], _gpus(p), number))

    def comm_block(self, comm: re.Match[str], block: list[tuple[int, str]]) -> None:
        name = f"#{comm['group']}-{comm['index']} ({comm['hash']})"
        kind = comm["kind"]
        if kind == "MISMATCH":
            self.mismatches.append(name)
            return
        if kind == "ERROR":
            self.errors.append(name)
            return
        if kind != "INCOMPLETE":
            return
        self.incomplete.append(name)
        for number, text in block:
            if _RANK_COUNT.fullmatch(text):
                continue
            if (r := _RANK.fullmatch(text)) is not None:
                gpu = _gpus(r)[0]
                self.ranks.append(RasRank(name, int(r["rank"]), gpu, int(r["pid"]), r["node"], number))
            elif (u := _RANK_UNKNOWN.fullmatch(text)) is not None:
                self.ranks.append(RasRank(name, int(u["rank"]), None, None, None, number))
            elif (m := _MISSING_RANKS.fullmatch(text)) is not None:
                ranks = (int(x) for x in m["ranks"].replace(" ", "").split(","))
                self.ranks.extend(RasRank(name, rank, None, None, None, number) for rank in ranks)
            else:
                self.problems.add(
                    "Rank <n> -- GPU <n> managed by process <pid> on node <address>, or The missing rank: <n>",
                    text,
                    line=number,
                )

    def section(self, blocks: list[list[tuple[int, str]]]) -> None:
        for block in blocks:
            head = block[0][1]
            if head in ("INCOMPLETE", "DEAD") and len(block) > 1:
                self.job_block("missing" if head == "INCOMPLETE" else "dead", block[1:])
            elif head == "TIMEOUT":
                self.timeouts += sum(int(m["n"]) for _, t in block[1:] if (m := _TIMEOUTS.search(t)) is not None)
            elif (comm := _COMM.fullmatch(head)) is not None:
                self.comm_block(comm, block[1:])
            else:
                self.problems.add(
                    "a RAS block: INCOMPLETE, DEAD, TIMEOUT or #<group>-<comm> (<hash>) <kind>", head, line=block[0][0]
                )


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> RasReport:
    """Read one RAS report; see the module for what is kept (a pasted prompt above or below it is not read)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lines = text.splitlines()
    heads: dict[str, int] = {}
    for i, line in enumerate(lines):
        stripped = line.strip()
        ruled = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"="}
        for name in _SECTIONS:
            if name not in heads and (stripped == name or (ruled and stripped.startswith(name))):
                heads[name] = i
                if not ruled:
                    log.add(f"a '====' rule under {name!r}", lines[i + 1] if i + 1 < len(lines) else "", line=i + 2)
    for i in range(1, len(lines)):
        if set(lines[i].strip()) == {"="} and i - 1 not in heads.values():
            log.add(
                "a section heading (Job summary, Communicators..., Errors, Warnings) over a '====' rule",
                lines[i - 1],
                line=i,
            )
    if not heads:
        raise ParseError(
            source,
            "an NCCL RAS report (a 'Job summary', 'Communicators...', 'Errors' or "
            "'Warnings' section over a '====' rule)",
            line=1,
        )
    version = next((m[1] for line in lines if (m := _VERSION.search(line)) is not None), None)
    query = next((float(m[1]) for line in lines if (m := _QUERY.search(line)) is not None), None)
    order = sorted(heads.items(), key=lambda item: item[1])
    reader = _Reader(log)
    for k, (name, at) in enumerate(order):
        end = order[k + 1][1] if k + 1 < len(order) else len(lines)
        if name in ("Errors", "Warnings"):
            reader.section(_blocks(lines, at + 2, end))
    return RasReport(
        version,
        query,
        tuple(reader.processes),
        tuple(reader.ranks),
        reader.missing,
        reader.dead,
        tuple(reader.incomplete),
        tuple(reader.errors),
        tuple(reader.mismatches),
        reader.timeouts,
    )
