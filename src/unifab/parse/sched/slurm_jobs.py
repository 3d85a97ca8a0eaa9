"""Slurm jobs, normalized: which nodes (and GPUs) a job holds, and its NCCL settings when the source carries env.

One :class:`Job` record from each of (``parse`` tells them apart):

- ``squeue --json`` / ``scontrol show job --json`` / slurmrestd ``GET /slurm/v0.0.4x/job[s]``: Slurm 22.05
  (openapi/v0.0.38: plain scalars, ``"job_state": "RUNNING"``) through 25.11 (data_parser/v0.0.39 … v0.0.44:
  ``"job_state": ["RUNNING", ...flags]``, integers as ``{"set": true, "infinite": false, "number": N}``).
  ``gres_detail`` has one entry per node, in the order of the expanded ``nodes``: ``gpu:h100:8(IDX:0-7)``.
  A job object carrying ``environment`` (list of ``K=V`` or an object) or ``script`` (its batch script: the
  exported variables) fills ``env``; squeue and slurmrestd job listings carry neither.
- ``scontrol show job [-d] [-o]``: ``Key=Value`` records, one per line (``-o``) or one indented block each.
  ``-d`` adds ``Nodes=<hostlist> CPU_IDs=... GRES=gpu:h100:8(IDX:0-7)`` lines: the GPU indices per node.
  Times are printed in the cluster's local time and kept as printed (``2026-11-30T02:14:11``); JSON epoch
  times become UTC with a ``Z``.
- ``squeue`` text, default (``%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R``) or ``-o`` with known column headers
  (JOBID, NAME, USER, ST/STATE, PARTITION, NODES, NODELIST(REASON), NODELIST, REASON, TRES_PER_NODE,
  START_TIME; others are ignored). squeue truncates to the column width: the default NAME is 8 characters.

The environment parsers (:func:`parse_env`, :func:`parse_script`) and :class:`NcclSettings` live in
:mod:`unifab.parse.sched.nccl_env` and are re-exported here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_list, json_object, type_name
from unifab.parse._text import pasted
from unifab.parse.sched import hostlist
from unifab.parse.sched._common import (
    Column,
    Pair,
    epoch_time,
    gpu_count,
    gpu_indices,
    header_columns,
    key_values,
    load_json,
    normalize_gres,
    null,
    opt_number,
    opt_str,
    opt_str_list,
    parse_gres,
    read_in_part,
    split_aligned,
    text_time,
)
from unifab.parse.sched.nccl_env import (
    NcclDevice,
    NcclDeviceList,
    NcclSettings,
    nccl_settings,
    parse_env,
    parse_script,
)

__all__ = [
    "Job",
    "NcclDevice",
    "NcclDeviceList",
    "NcclSettings",
    "nccl_settings",
    "parse",
    "parse_env",
    "parse_script",
]


@dataclass(frozen=True, slots=True)
class Job:
    id: str  # "slurm:<jobid>" or "k8s:<namespace>/<name>"; the canonical entity id is "job:" + id
    name: str
    user: str | None
    state: str  # Slurm's base state as printed: RUNNING, PENDING, COMPLETING, COMPLETED, FAILED ...
    state_flags: tuple[str, ...]  # further flags of data_parser v0.0.40+ (["RUNNING", "COMPLETING"])
    reason: str | None  # why it waits (Resources, Priority ...); None for Slurm's "None"
    partition: str | None
    nodes: tuple[str, ...]  # expanded hostlist, in Slurm's order; () while pending
    node_count: int | None  # requested/allocated node count as reported
    gres: str | None  # per-node GRES request, "gres:"/"gres/" stripped: "gpu:h100:8"
    gpus_per_node: int | None  # from gres, else from the per-node allocation when every node has the same
    gpu_indices: dict[str, tuple[int, ...]]  # node -> allocated GPU indices (gres_detail, scontrol -d)
    start_time: str | None  # ISO 8601; "Z" when the source gave epoch seconds, else the cluster's local time
    env: dict[str, str]  # job environment when the source carries it
    env_unresolved: tuple[str, ...]  # variables whose value the source does not give (k8s valueFrom)
    env_conflicts: tuple[str, ...]  # variables whose value differs between ranks (env holds the first)
    nccl: NcclSettings | None  # None when the source carries no environment

    @property
    def entity_id(self) -> str:
        return f"job:{self.id}"


SQUEUE_STATE_CODES = {
    "PD": "PENDING",
    "R": "RUNNING",
    "CG": "COMPLETING",
    "CD": "COMPLETED",
    "CA": "CANCELLED",
    "F": "FAILED",
    "TO": "TIMEOUT",
    "NF": "NODE_FAIL",
    "PR": "PREEMPTED",
    "S": "SUSPENDED",
    "ST": "STOPPED",
    "CF": "CONFIGURING",
    "BF": "BOOT_FAIL",
    "DL": "DEADLINE",
    "OOM": "OUT_OF_MEMORY",
    "RQ": "REQUEUED",
    "RH": "REQUEUE_HOLD",
    "RF": "REQUEUE_FED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "SI": "SIGNALING",
    "SE": "SPECIAL_EXIT",
    "SO": "STAGE_OUT",
    "RD": "RESV_DEL_HOLD",
}
_STATE_WORD = re.compile(r"^[A-Z][A-Z_]*$")
_JOB_ID = re.compile(r"^[0-9]+(?:_(?:[0-9]+|\[[0-9,\-%]+\]))?(?:\+[0-9]+)?$")
_USER_ID = re.compile(r"^(.*)\(([0-9]+)\)$")
_COUNT = re.compile(r"^([0-9]+)(?:-[0-9]+)?$")

# detail-format keys whose value is the rest of their line (paths and free text may hold spaces)
_REST_OF_LINE = frozenset(
    {"Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment", "AdminComment", "SystemComment", "SubmitLine"}
)


def _gpus(
    nodes: tuple[str, ...], per_node: dict[str, tuple[int, ...]], counts: list[int | None], request: int | None
) -> tuple[int | None, dict[str, tuple[int, ...]]]:
    if request is None:
        distinct = {c for c in counts if c is not None}
        request = distinct.pop() if len(distinct) == 1 and len(counts) == len(nodes) else None
    return request, {n: per_node[n] for n in nodes if n in per_node}


def _job(
    job_id: str,
    *,
    name: str,
    user: str | None,
    states: tuple[str, ...],
    reason: str | None,
    partition: str | None,
    nodes: tuple[str, ...],
    node_count: int | None,
    gres: str | None,
    request: int | None,
    per_node: dict[str, tuple[int, ...]],
    counts: list[int | None],
    start_time: str | None,
    env: dict[str, str] | None,
) -> Job:
    gpus_per_node, indices = _gpus(nodes, per_node, counts, request)
    return Job(
        id=f"slurm:{job_id}",
        name=name,
        user=user,
        state=states[0],
        state_flags=states[1:],
        reason=null(reason),
        partition=null(partition),
        nodes=nodes,
        node_count=node_count,
        gres=gres,
        gpus_per_node=gpus_per_node,
        gpu_indices=indices,
        start_time=start_time,
        env=env or {},
        env_unresolved=(),
        env_conflicts=(),
        nccl=None if env is None else nccl_settings(env),
    )


# --- JSON -----------------------------------------------------------------------------------------


def _expand_json(expr: str, where: str, source: str) -> tuple[str, ...]:
    try:
        return hostlist.expand(expr, source)
    except ParseError as exc:
        raise ParseError(source, exc.expected, key=where) from None


def _json_env(j: dict[str, object], path: str, source: str) -> dict[str, str] | None:
    env: dict[str, str] | None = None
    raw = j.get("environment")
    where = child(path, "environment")
    if isinstance(raw, list):
        env = {}
        for i, item in enumerate(raw):
            if not isinstance(item, str) or "=" not in item:
                got = repr(item[:40]) if isinstance(item, str) else type_name(item)
                raise ParseError(source, f"expected 'NAME=value', got {got}", key=child(where, i))
            name, _, value = item.partition("=")
            env.setdefault(name, value)
    elif isinstance(raw, dict):
        env = {}
        for name, value in raw.items():
            if not isinstance(value, str):
                raise ParseError(source, f"expected a string, got {type_name(value)}", key=child(where, name))
            env[name] = value
    elif raw is not None:
        raise ParseError(source, f"expected a list of 'NAME=value' or an object, got {type_name(raw)}", key=where)
    script = opt_str(j, "script", path, source)
    if script:
        try:
            exported = parse_script(script, source)
        except ParseError as exc:
            raise ParseError(
                source, f"{exc.expected} (line {exc.line} of the script)", key=child(path, "script")
            ) from None
        env = {**(env or {}), **exported}
    return env


def _json_job(j: dict[str, object], path: str, source: str) -> Job:
    job_id = opt_number(j, "job_id", path, source)
    if job_id is None:
        raise ParseError(source, "expected the job's 'job_id'", key=child(path, "job_id"))
    states = opt_str_list(j, "job_state", path, source)
    if not states:
        raise ParseError(source, "expected the job's 'job_state'", key=child(path, "job_state"))
    nodes = _expand_json(opt_str(j, "nodes", path, source) or "", child(path, "nodes"), source)
    gres = normalize_gres(opt_str(j, "tres_per_node", path, source))
    request = None if gres is None else gpu_count(parse_gres(gres, source, key=child(path, "tres_per_node")))
    detail = opt_str_list(j, "gres_detail", path, source)
    per_node: dict[str, tuple[int, ...]] = {}
    counts: list[int | None] = []
    if detail:
        if len(detail) != len(nodes):
            raise ParseError(
                source,
                f"expected one gres_detail entry per node of {len(nodes)}, got {len(detail)}",
                key=child(path, "gres_detail"),
            )
        for i, (node, entry) in enumerate(zip(nodes, detail, strict=True)):
            items = parse_gres(entry, source, key=child(child(path, "gres_detail"), i))
            counts.append(gpu_count(items))
            indices = gpu_indices(items)
            if indices is not None:
                per_node[node] = indices
    user = opt_str(j, "user_name", path, source)
    if user is None and (uid := opt_number(j, "user_id", path, source)) is not None:
        user = str(uid)
    return _job(
        str(job_id),
        name=opt_str(j, "name", path, source) or "",
        user=user or None,
        states=states,
        reason=opt_str(j, "state_reason", path, source),
        partition=opt_str(j, "partition", path, source),
        nodes=nodes,
        node_count=opt_number(j, "node_count", path, source),
        gres=gres,
        request=request,
        per_node=per_node,
        counts=counts,
        start_time=epoch_time(opt_number(j, "start_time", path, source), child(path, "start_time"), source),
        env=_json_env(j, path, source),
    )


def _parse_json(text: str, source: str, log: ParseProblems) -> tuple[Job, ...]:
    top = json_object(load_json(text, source), "", source)
    if "jobs" not in top:
        errors = top.get("errors")
        if isinstance(errors, list) and errors:
            first = errors[0]
            detail = first.get("description") or first.get("error") if isinstance(first, dict) else first
            raise ParseError(source, f"expected 'jobs', got a Slurm error: {detail!r}", key="errors")
        raise ParseError(source, "expected the top-level key 'jobs' (squeue --json, slurmrestd jobs)", key="jobs")
    jobs = json_list(top["jobs"], "jobs", source)
    out: list[Job] = []
    for i, j in enumerate(jobs):
        where = child("jobs", i)
        raw_id = j.get("job_id") if isinstance(j, dict) else None
        raw_id = raw_id.get("number") if isinstance(raw_id, dict) else raw_id
        named = f"job {raw_id}" if isinstance(raw_id, int) and not isinstance(raw_id, bool) else f"the job at {where}"
        with log.skipping(named):
            out.append(_json_job(json_object(j, where, source), where, source))
    return tuple(out)


# --- scontrol show job ----------------------------------------------------------------------------


_WORD_START = re.compile(r"\w")


def scontrol_records(
    lines: list[tuple[int, str]], lead: str, source: str, log: ParseProblems | None = None, noun: str = "job"
) -> list[list[tuple[int, str]]]:
    """Group lines into records: each starts with ``lead`` at column 0 (one line each with ``-o``), its
    continuation lines are indented and start with a word (``Key=Value``, ``NtasksPerTRES:0``). ``noun``
    names a record in a problem (``job 1234``, ``node gpu01``: see :func:`record_name`).

    With a lenient ``log`` a line that is neither costs the record it falls in: the one it interrupts (the
    line before it is that record's and the record runs on past it), else a record of its own with the indented
    lines under it; either is left out. Without ``log`` it is an error.
    """
    records: list[list[tuple[int, str]]] = []
    bad: set[int] = set()  # indices of the records a stray line spoiled
    previous = ""
    for index, (number, raw) in enumerate(lines):
        if raw.startswith(lead):
            records.append([(number, raw)])
        elif not raw.strip():
            pass
        elif records and raw[:1] in " \t" and _WORD_START.match(raw.lstrip()):
            records[-1].append((number, raw))
        else:  # a stray line, or indented garbage (maybe a garbled record start): not the record above's
            error = ParseError(
                source, f"expected a line starting with {lead!r} or an indented continuation", line=number
            )
            if log is None:
                raise error
            after = next((r for _, r in lines[index + 1 :] if r.strip()), "")
            inside = records and previous.strip() and (len(records[-1]) > 1 or after[:1] in (" ", "\t"))
            if inside:
                first = records[-1][0][1]
                log.record(error, record_name(first, lead, records[-1][0][0], noun))
                bad.add(len(records) - 1)
            else:
                log.record(error, f"the record at line {number}")
                records.append([(number, raw)])
                bad.add(len(records) - 1)
        previous = raw
    return [r for i, r in enumerate(records) if i not in bad]


def record_name(first: str, lead: str, number: int, noun: str = "job") -> str:
    """``job 1234`` for a record whose first line reads ``JobId=1234 ...``, else the record by its line."""
    word = first.removeprefix(lead).split(" ", 1)[0] if first.startswith(lead) else ""
    return f"{noun} {word}" if word else f"the record at line {number}"


def scontrol_pairs(record: list[tuple[int, str]], rest_of_line: frozenset[str], source: str) -> list[Pair]:
    try:
        return key_values(record, rest_of_line)
    except ValueError as exc:
        raise ParseError(source, f"expected Key=Value, got {str(exc)[:40]!r}", line=record[0][0]) from None


def _scontrol_job(record: list[tuple[int, str]], source: str) -> Job:
    pairs = scontrol_pairs(record, _REST_OF_LINE, source)
    first = record[0][0]
    fields: dict[str, Pair] = {}
    per_node: dict[str, tuple[int, ...]] = {}
    counts: dict[str, int | None] = {}
    group: tuple[str, ...] = ()
    for pair in pairs:
        if pair.key == "Nodes":  # scontrol -d: one line per group of nodes with the same allocation
            group = hostlist.expand(pair.value, source, line=pair.line)
        elif pair.key in ("GRES", "GRES_IDX") and group:
            items = parse_gres(pair.value, source, line=pair.line)
            indices = gpu_indices(items)
            for node in group:
                counts[node] = gpu_count(items)
                if indices is not None:
                    per_node[node] = indices
        else:
            fields.setdefault(pair.key, pair)

    def value(key: str) -> str | None:
        pair = fields.get(key)
        return None if pair is None else pair.value

    def line(key: str) -> int:
        pair = fields.get(key)
        return first if pair is None else pair.line

    job_id = value("JobId") or ""
    if not _JOB_ID.match(job_id):
        raise ParseError(source, f"expected a job id after 'JobId=', got {job_id!r}", line=first)
    state = value("JobState")
    if state is None or not _STATE_WORD.match(state.split("+")[0]):
        raise ParseError(source, f"expected 'JobState=<STATE>' in the record of job {job_id}", line=line("JobState"))
    user = value("UserId")
    if user is not None and (m := _USER_ID.match(user)):
        user = m[1]
    nodes = hostlist.expand(null(value("NodeList")) or "", source, line=line("NodeList"))
    count_text = value("NumNodes")
    node_count = None
    if count_text is not None:
        m = _COUNT.match(count_text)
        if m is None:
            raise ParseError(
                source, f"expected a node count after 'NumNodes=', got {count_text!r}", line=line("NumNodes")
            )
        node_count = int(m[1])
    gres = normalize_gres(value("TresPerNode") or value("Gres"))
    request = None if gres is None else gpu_count(parse_gres(gres, source, line=line("TresPerNode")))
    return _job(
        job_id,
        name=value("JobName") or "",
        user=null(user),
        states=tuple(state.split("+")),
        reason=value("Reason"),
        partition=value("Partition"),
        nodes=nodes,
        node_count=node_count,
        gres=gres,
        request=request,
        per_node=per_node,
        counts=[counts.get(n) for n in nodes] if counts else [],
        start_time=text_time(value("StartTime"), source, line("StartTime")),
        env=None,
    )


def _parse_scontrol(lines: list[tuple[int, str]], source: str, log: ParseProblems) -> tuple[Job, ...]:
    jobs: list[Job] = []
    for record in scontrol_records(lines, "JobId=", source, None if log.is_strict else log):
        with log.skipping(record_name(record[0][1], "JobId=", record[0][0])):
            jobs.append(_scontrol_job(record, source))
    return tuple(jobs)


# --- squeue text ----------------------------------------------------------------------------------

_SQUEUE_TEXT_COLUMNS = frozenset({"NAME", "REASON", "NODELIST(REASON)"})


def _parse_squeue_text(lines: list[tuple[int, str]], source: str, log: ParseProblems) -> tuple[Job, ...]:
    header_line, header = lines[0]
    columns = header_columns(header)
    names = [c.name for c in columns]
    if "JOBID" not in names:
        raise ParseError(source, "expected a squeue header with a JOBID column", line=header_line)
    jobs: list[Job] = []
    for number, raw in lines[1:]:
        if not raw.strip():
            continue
        word = raw.split(None, 1)[0] if names[0] == "JOBID" else ""
        with log.skipping(f"job {word}" if _JOB_ID.match(word) else f"line {number}"):
            jobs.append(_squeue_row(number, raw, columns, names, source))
    return tuple(jobs)


def _squeue_row(number: int, raw: str, columns: list[Column], names: list[str], source: str) -> Job:
    cells = dict(zip(names, split_aligned(raw.rstrip(), columns, _SQUEUE_TEXT_COLUMNS), strict=True))
    job_id = cells["JOBID"]
    if not _JOB_ID.match(job_id):
        raise ParseError(source, f"expected a job id in the JOBID column, got {job_id!r}", line=number)
    if "ST" in cells:
        state = SQUEUE_STATE_CODES.get(cells["ST"])
        if state is None:
            raise ParseError(source, f"expected a squeue state code (PD, R, CG ...), got {cells['ST']!r}", line=number)
    elif "STATE" in cells:
        state = cells["STATE"]
        if not _STATE_WORD.match(state):
            raise ParseError(source, f"expected a job state (RUNNING, PENDING ...), got {state!r}", line=number)
    else:
        state = "UNKNOWN"
    reason = cells.get("REASON")
    nodelist = cells.get("NODELIST", "")
    if "NODELIST(REASON)" in cells:
        value = cells["NODELIST(REASON)"]
        if value.startswith("(") and value.endswith(")"):
            reason = value[1:-1]
        else:
            nodelist = value
    count = cells.get("NODES")
    node_count = None
    if count:
        m = _COUNT.match(count)
        if m is None:
            raise ParseError(source, f"expected a node count in the NODES column, got {count!r}", line=number)
        node_count = int(m[1])
    gres = normalize_gres(cells.get("TRES_PER_NODE"))
    request = None if gres is None else gpu_count(parse_gres(gres, source, line=number))
    return _job(
        job_id,
        name=cells.get("NAME", ""),
        user=null(cells.get("USER")),
        states=(state,),
        reason=reason,
        partition=cells.get("PARTITION"),
        nodes=hostlist.expand(null(nodelist) or "", source, line=number),
        node_count=node_count,
        gres=gres,
        request=request,
        per_node={},
        counts=[],
        start_time=text_time(cells.get("START_TIME"), source, number),
        env=None,
    )


# --- entry point ----------------------------------------------------------------------------------


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Job, ...]:
    """Jobs from squeue/slurmrestd JSON, ``scontrol show job`` or ``squeue`` text (detected from the text).

    With ``problems`` a job record that cannot be read costs that job (named by its id and line or key); the
    other jobs are read. Output whose every record is bad is still refused.
    """
    return read_in_part(_parse, text, source, problems)


def _parse(text: str, source: str, log: ParseProblems) -> tuple[Job, ...]:
    stripped = text.lstrip()
    if not stripped:
        raise ParseError(source, "expected Slurm job output, got empty text", line=1)
    if stripped[0] in "{[":
        return _parse_json(text, source, log)
    lines = [(n, raw.rstrip("\r")) for n, raw in enumerate(text.split("\n"), start=1)]
    content = [(n, raw) for n, raw in lines if raw.strip()]
    first_line, first = content[0]
    if first.strip() == "No jobs in the system" and len(content) == 1:
        return ()
    if first.startswith("JobId="):
        return _parse_scontrol(lines, source, log)
    if "JOBID" in first.split():
        return _parse_squeue_text(content, source, log)
    raise ParseError(
        source,
        "expected squeue --json/slurmrestd JSON, 'scontrol show job' (JobId=...) or a squeue header (JOBID ...)",
        line=first_line,
    )
