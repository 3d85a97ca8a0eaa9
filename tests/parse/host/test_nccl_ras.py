"""NCCL RAS client reports: the real reports operators pasted and NVIDIA's documented ones, the other line shapes
``client_support.cc`` prints, and what is not a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host.nccl_ras import RasProcess, RasRank, parse

HOST = "host"


def _read(samples: Path, name: str) -> str:
    return (samples / HOST / name).read_text()


def test_a_healthy_256_gpu_job_names_nobody(samples: Path) -> None:
    report = parse(_read(samples, "nccl_ras_healthy_2.26.2_256gpu.txt"))
    assert (report.nccl_version, report.query_s) == ("2.26.2", 0.01)
    assert report.processes == () and report.ranks == () and report.mismatches == ()
    assert (report.missing_count, report.dead_count, report.timeouts) == (0, 0, 0)


def test_a_mismatch_is_a_warning_and_names_no_missing_process(samples: Path) -> None:
    """The two ranks one AllGather ahead are listed under the MISMATCH: not processes that stopped answering."""
    report = parse(_read(samples, "nccl_ras_mismatch_2.26.2_32gpu.txt"))
    assert report.mismatches == ("#0-0 (fa93daea854b060b)",)
    assert report.processes == () and report.ranks == () and report.incomplete == ()


def test_incomplete_names_the_stopped_process_and_its_rank(samples: Path) -> None:
    report = parse(_read(samples, "nccl_ras_incomplete_doc.txt"))
    assert report.nccl_version is None and report.query_s == 2.05  # the query waited on the stopped process
    assert report.processes == (RasProcess("missing", 3487984, "172.16.64.213", (5,), 13),)
    assert report.ranks == (RasRank("#0-0 (cf264af53edbe986)", 21, None, None, None, 17),)  # 2.24: rank only
    assert (report.missing_count, report.dead_count, report.timeouts) == (1, 0, 2)


def test_dead_is_the_same_process_declared_dead(samples: Path) -> None:
    report = parse(_read(samples, "nccl_ras_dead_doc.txt"))
    assert report.processes == (RasProcess("dead", 3487984, "172.16.64.213", (5,), 6),)
    assert (report.missing_count, report.dead_count) == (0, 1)
    assert report.incomplete == ("#0-0 (cf264af53edbe986)",)


REPORT = """Errors
======

INCOMPLETE
  Missing communicator data from 2 job processes
  Process 60004 on node 10.4.109.13 managing GPUs 0,1 (NVML 2,3)
  Process 60035 on node fd00::13 managing GPU 4

DEAD
  12 job processes are considered dead (unreachable via the RAS network)

#0-0 (b3398875b8b2a063) INCOMPLETE
  Missing communicator data from 3 ranks
  Rank 1 -- GPU 0 (NVML 2) managed by process 60004 on node 10.4.109.13
  Rank 7 has status INIT -- GPU 4 managed by process 60035 on node fd00::13
  Rank 9 -- [process information not found]

#1-0 (93d7000200000001) ERROR
  Asynchronous errors on 2 ranks

Warnings
========
"""


def test_the_other_shapes_the_client_prints() -> None:
    """NCCL 2.26+ rank lines, CUDA and NVML numbers that differ (NVML kept: nvidia-smi's index), IPv6 addresses,
    a DEAD count printed without a list (more than RAS lists one by one), an ERROR communicator."""
    report = parse(REPORT)
    assert report.processes == (
        RasProcess("missing", 60004, "10.4.109.13", (2, 3), 6),
        RasProcess("missing", 60035, "fd00::13", (4,), 7),
    )
    assert [(r.rank, r.gpu, r.pid, r.node) for r in report.ranks] == [
        (1, 2, 60004, "10.4.109.13"),
        (7, 4, 60035, "fd00::13"),
        (9, None, None, None),
    ]
    assert (report.missing_count, report.dead_count) == (2, 12)
    assert report.errors == ("#1-0 (93d7000200000001)",)


def test_a_line_of_another_shape_costs_that_line() -> None:
    broken = REPORT.replace("Process 60035 on node fd00::13 managing GPU 4", "Process sixty on node x")
    problems = ParseProblems("r.txt")
    report = parse(broken, "r.txt", problems)
    assert [p.pid for p in report.processes] == [60004]
    [problem] = problems.problems
    assert problem.line == 7 and "Process <pid> on node <address>" in problem.expected
    with pytest.raises(ParseError, match=r"r\.txt:7"):
        parse(broken, "r.txt")


@pytest.mark.parametrize("text", ["", "NCCL version 2.26.2\n", "Job summary of something\n"])
def test_text_without_a_ras_section_is_not_a_report(text: str) -> None:
    with pytest.raises(ParseError, match="an NCCL RAS report"):
        parse(text, "x.txt")


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("Errors\n------\n", 2, "a '====' rule under 'Errors'"),
        ("Errros\n======\n\nDEAD\n", 1, "a section heading"),
    ],
)
def test_a_garbled_heading_or_rule_is_named(text: str, line: int, expected: str) -> None:
    with pytest.raises(ParseError, match=expected) as info:
        parse(text, "x.txt")
    assert info.value.line == line
