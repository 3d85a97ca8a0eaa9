"""Slurm jobs read in part: one bad job record of a real capture costs that job, named by its id and line (or
key), and every other job reads as in the unharmed file; without a collector the parser still raises there,
and output whose every record is bad is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.sched import slurm_jobs

DATA = Path(__file__).resolve().parents[2] / "data" / "samples" / "scheduler"
BLOCKS = ("slurm_scontrol_show_job_detail.txt", "slurm_scontrol_show_job_pending.txt")
LINE_SAMPLES = (
    "slurm_scontrol_show_job_all_oneliner.txt",
    "slurm_squeue.txt",
    "slurm_squeue_custom_format.txt",
    "blocks",
)


def _text(name: str) -> str:
    if name == "blocks":  # two real `scontrol show job` blocks, as one run prints them (a blank line between)
        return "\n".join((DATA / n).read_text().rstrip("\n") + "\n" for n in BLOCKS)
    return (DATA / name).read_text()


def _lenient(text: str) -> tuple[tuple[slurm_jobs.Job, ...], ParseProblems]:
    log = ParseProblems("sample")
    return slurm_jobs.parse(text, "sample", log), log


def _corrupt(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


@pytest.mark.parametrize("name", LINE_SAMPLES)
def test_every_single_bad_line_is_named_or_fatal(name: str) -> None:
    text = _text(name)
    whole = slurm_jobs.parse(text)
    assert len(whole) > 1
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        for bad in ("\x01 not a row of this format \x01", raw.replace("=", " ", 1).replace(" R ", " ?? ")):
            broken = _corrupt(text, line, bad)
            try:
                got, log = _lenient(broken)
            except ParseError:
                continue
            if not log.problems:
                continue  # the edit left a valid line (a value the format takes as text)
            (problem,) = log.problems
            lost = {j.id for j in whole} - {j.id for j in got}
            assert len(lost) <= 1 and len(got) >= len(whole) - 1, (name, line)
            kept = {j.id: j for j in got}
            assert all(kept[j.id] == j for j in whole if j.id in kept), (name, line)
            by_line = (f"line {line}", f"the record at line {line}")
            if problem.line == line:  # the bad line itself: the job it held, by id, or that line
                assert problem.skipped in (*by_line, *(f"job {j.removeprefix('slurm:')}" for j in lost)), problem
            else:  # a key the record lacks now (JobState=): named at the record's first line, with its job
                (job,) = lost
                assert problem.skipped == f"job {job.removeprefix('slurm:')}" and problem.line < line, problem


def test_a_bad_squeue_row_costs_that_job() -> None:
    text = _text("slurm_squeue.txt")
    line = next(n for n, raw in enumerate(text.split("\n"), start=1) if "sft-eval" in raw)
    broken = _corrupt(text, line, text.split("\n")[line - 1].replace(" R ", " ?? "))
    with pytest.raises(ParseError) as strict:
        slurm_jobs.parse(broken, "sample")
    assert strict.value.line == line
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert (problem.line, problem.skipped) == (line, "job 2") and "state code" in problem.expected
    assert got == tuple(j for j in slurm_jobs.parse(text) if j.id != "slurm:2")


def test_a_bad_scontrol_block_costs_that_job() -> None:
    text = _text("blocks")
    line = next(n for n, raw in enumerate(text.split("\n"), start=1) if raw.strip().startswith("NumNodes="))
    broken = _corrupt(text, line, "   NumNodes=many NumCPUs=8")
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert problem.line == line and problem.skipped == "job 1"
    assert got == tuple(j for j in slurm_jobs.parse(text) if j.id != "slurm:1")


def test_a_bad_json_job_costs_that_job() -> None:
    doc = json.loads(_text("slurm_squeue.json"))
    doc["jobs"][1]["job_state"] = 7
    got, log = _lenient(json.dumps(doc))
    (problem,) = log.problems
    assert problem.skipped == "job 2" and problem.key is not None and problem.key.startswith("jobs[1]")
    whole = slurm_jobs.parse(_text("slurm_squeue.json"))
    assert got == tuple(j for j in whole if j.id != "slurm:2")
    with pytest.raises(ParseError):
        slurm_jobs.parse(json.dumps(doc))


@pytest.mark.parametrize("name", [*LINE_SAMPLES, "slurm_squeue.json"])
def test_output_whose_every_job_is_bad_is_refused(name: str) -> None:
    text = _text(name)
    if name.endswith(".json"):
        doc = json.loads(text)
        for job in doc["jobs"]:
            job["job_state"] = 7
        text = json.dumps(doc)
    else:
        lines = text.split("\n")
        firsts = [i for i, raw in enumerate(lines) if raw.startswith("JobId=")] or [
            i for i, raw in enumerate(lines) if raw.strip() and i > 0 and "JOBID" not in raw
        ]
        for i in firsts:
            lines[i] = "JobId=x" + lines[i][7:] if lines[i].startswith("JobId=") else "   ?  " + lines[i]
        text = "\n".join(lines)
    with pytest.raises(ParseError):
        slurm_jobs.parse(text, "sample", ParseProblems("sample"))
