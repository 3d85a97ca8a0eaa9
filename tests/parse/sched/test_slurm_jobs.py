"""Tests for Slurm job parsing: every real sample (golden), schema variants, errors, truncation and random text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from unifab.errors import ParseError
from unifab.parse.sched.slurm_jobs import Job, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
S = "scheduler/"
SAMPLES = {
    "slurm_squeue.json": "slurm_squeue_json.json",
    "slurm_squeue.txt": "slurm_squeue_txt.json",
    "slurm_squeue_custom_format.txt": "slurm_squeue_custom_format.json",
    "slurm_scontrol_show_job_oneliner.txt": "slurm_scontrol_show_job_oneliner.json",
    "slurm_scontrol_show_job_all_oneliner.txt": "slurm_scontrol_show_job_all_oneliner.json",
    "slurm_scontrol_show_job_detail.txt": "slurm_scontrol_show_job_detail.json",
    "slurm_scontrol_show_job_pending.txt": "slurm_scontrol_show_job_pending.json",
    "slurmrestd_25.05_v0.0.41_job_gpus_multi_nodes.json": "slurmrestd_25.05_v0.0.41_job_gpus_multi_nodes.json",
    "slurmrestd_25.11_v0.0.44_job_gpus_multi_nodes.json": "slurmrestd_25.11_v0.0.44_job_gpus_multi_nodes.json",
}
NODES_1_4 = ("dgx-h100-001", "dgx-h100-002", "dgx-h100-003", "dgx-h100-004")
ALL8 = (0, 1, 2, 3, 4, 5, 6, 7)


def read(samples: Path, name: str) -> tuple[Job, ...]:
    return parse((samples / S / name).read_text(), S + name)


def error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, "t")
    return info.value


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("sample", "golden_name"), sorted(SAMPLES.items()))
def test_golden(samples: Path, golden: GoldenCheck, sample: str, golden_name: str) -> None:
    golden(GOLDEN / golden_name, read(samples, sample))


def test_squeue_json_v0038(samples: Path) -> None:
    llama, sft, pending = read(samples, "slurm_squeue.json")
    assert llama.id == "slurm:1" and llama.entity_id == "job:slurm:1"
    assert (llama.name, llama.user, llama.state, llama.partition) == ("llama-pretrain-70b", "root", "RUNNING", "gpu")
    assert llama.nodes == NODES_1_4 and llama.node_count == 4
    assert (llama.gres, llama.gpus_per_node) == ("gpu:h100:8", 8)
    assert llama.gpu_indices == dict.fromkeys(NODES_1_4, ALL8)
    assert llama.start_time == "2026-11-30T02:14:11Z"  # 1796004851
    assert llama.env == {} and llama.nccl is None
    assert sft.gpu_indices == {"dgx-h100-005": (0, 1, 2, 3)} and sft.gpus_per_node == 4
    assert (pending.state, pending.reason, pending.nodes, pending.start_time) == ("PENDING", "Resources", (), None)
    assert pending.node_count == 2 and pending.gpu_indices == {}


def test_slurmrestd_v0041_two_gpu_types_per_node(samples: Path) -> None:
    (job,) = read(samples, "slurmrestd_25.05_v0.0.41_job_gpus_multi_nodes.json")
    assert (job.id, job.user, job.state, job.state_flags, job.partition) == ("slurm:18", "crich", "RUNNING", (), "ia")
    assert job.nodes == ("ia1", "ia2") and job.node_count == 2
    # tres_per_node is empty (--gpus per job); gres_detail gpu:h100:2(IDX:0-1),gpu:h200:4(IDX:2-5) on each node
    assert job.gres is None and job.gpus_per_node == 6
    assert job.gpu_indices == {"ia1": (0, 1, 2, 3, 4, 5), "ia2": (0, 1, 2, 3, 4, 5)}
    assert job.start_time == "2025-05-20T15:35:11Z"  # 1747755311


def test_slurmrestd_v0044(samples: Path) -> None:
    (job,) = read(samples, "slurmrestd_25.11_v0.0.44_job_gpus_multi_nodes.json")
    assert (job.id, job.user, job.nodes, job.gpus_per_node) == ("slurm:5679", "dperez", ("gpu1", "gpu2"), 4)
    assert job.gpu_indices == {"gpu1": (0, 1, 2, 3), "gpu2": (0, 1, 2, 3)}
    assert job.start_time == "2025-11-10T15:20:40Z"  # 1762788040


def test_scontrol_forms_agree(samples: Path) -> None:
    (one,) = read(samples, "slurm_scontrol_show_job_oneliner.txt")
    (detail,) = read(samples, "slurm_scontrol_show_job_detail.txt")
    (pending,) = read(samples, "slurm_scontrol_show_job_pending.txt")
    all_jobs = read(samples, "slurm_scontrol_show_job_all_oneliner.txt")
    assert all_jobs[0] == one and all_jobs[2] == pending
    assert one.start_time == "2026-11-30T02:14:11"  # local time as printed
    assert one.gpu_indices == {} and detail.gpu_indices == dict.fromkeys(NODES_1_4, ALL8)
    assert detail == Job(**{**{f: getattr(one, f) for f in one.__slots__}, "gpu_indices": detail.gpu_indices})
    assert (pending.nodes, pending.node_count, pending.reason) == ((), 2, "Resources")  # NumNodes=2-2


def test_json_and_text_name_the_same_jobs(samples: Path) -> None:
    json_jobs = {j.id: j for j in read(samples, "slurm_squeue.json")}
    for name in ("slurm_squeue.txt", "slurm_squeue_custom_format.txt", "slurm_scontrol_show_job_all_oneliner.txt"):
        for job in read(samples, name):
            ref = json_jobs[job.id]
            assert (job.state, job.nodes, job.node_count, job.reason) == (
                ref.state,
                ref.nodes,
                ref.node_count,
                ref.reason,
            )


def test_default_squeue_truncates_names(samples: Path) -> None:
    names = [j.name for j in read(samples, "slurm_squeue.txt")]
    assert names == ["nccl-all", "llama-pr", "sft-eval"]  # %.8j


def test_custom_format_empty_nodelist(samples: Path) -> None:
    pending, llama, _ = read(samples, "slurm_squeue_custom_format.txt")
    assert (pending.nodes, pending.reason, pending.gres) == ((), "Resources", "gpu:h100:8")
    assert llama.nodes == NODES_1_4 and llama.reason is None and llama.gpus_per_node == 8


# --- JSON variants --------------------------------------------------------------------------------


def number(n: int, *, is_set: bool = True, infinite: bool = False) -> dict[str, object]:
    return {"set": is_set, "infinite": infinite, "number": n}


def json_job(**overrides: object) -> str:
    job: dict[str, object] = {
        "job_id": 42,
        "name": "allreduce",
        "user_name": "alice",
        "job_state": ["PENDING", "REQUEUED"],
        "state_reason": "Priority",
        "partition": "gpu",
        "nodes": "",
        "node_count": number(0, is_set=False),
        "tres_per_node": "gres/gpu:8",
        "gres_detail": [],
        "start_time": number(0),
    }
    job.update(overrides)
    return json.dumps({"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}}, "jobs": [job], "errors": []})


def test_state_flags_and_unset_numbers() -> None:
    (job,) = parse(json_job())
    assert (job.state, job.state_flags, job.reason) == ("PENDING", ("REQUEUED",), "Priority")
    assert (job.node_count, job.start_time, job.gres, job.gpus_per_node) == (None, None, "gpu:8", 8)


def test_infinite_and_float_numbers() -> None:
    (job,) = parse(json_job(node_count=number(0, infinite=True), job_id=7.0))
    assert job.node_count is None and job.id == "slurm:7"


def test_environment_list_and_script() -> None:
    script = "#!/bin/bash\nexport NCCL_IB_HCA==mlx5_0:1,mlx5_3:1\nexport NCCL_IB_TC=106\nsrun x\n"
    (job,) = parse(json_job(environment=["NCCL_IB_TC=96", "NCCL_IB_GID_INDEX=3", "A=b=c"], script=script))
    assert job.env == {"NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3", "A": "b=c", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_3:1"}
    assert job.nccl is not None and (job.nccl.ib_tc, job.nccl.ib_gid_index) == (106, 3)
    assert job.nccl.ib_hca is not None and job.nccl.ib_hca.exact


def test_environment_object() -> None:
    (job,) = parse(json_job(environment={"NCCL_IB_TC": "0x6a"}))
    assert job.nccl is not None and job.nccl.ib_tc == 106


def test_gres_detail_without_idx_and_other_gres() -> None:
    (job,) = parse(json_job(nodes="n[1-2]", tres_per_node="", gres_detail=["gpu:4,nic:1", "gpu:a100:4(S:0)"]))
    assert job.gpus_per_node == 4 and job.gpu_indices == {}


def test_gres_detail_differs_per_node() -> None:
    detail = ["gpu:h100:8(IDX:0-7)", "gpu:h100:4(IDX:0,2,4-5)"]
    (job,) = parse(json_job(nodes="n[1-2]", tres_per_node="", gres_detail=detail))
    assert job.gpus_per_node is None and job.gpu_indices == {"n1": ALL8, "n2": (0, 2, 4, 5)}


@pytest.mark.parametrize(
    ("overrides", "key", "needle"),
    [
        ({"nodes": "n[1-2]", "gres_detail": ["gpu:1(IDX:0)"]}, "jobs[0].gres_detail", "one gres_detail entry per node"),
        ({"nodes": "n[1-"}, "jobs[0].nodes", "']' closing"),
        ({"job_id": None}, "jobs[0].job_id", "job_id"),
        ({"job_id": "42"}, "jobs[0].job_id", "integer"),
        ({"job_state": []}, "jobs[0].job_state", "job_state"),
        ({"job_state": [1]}, "jobs[0].job_state[0]", "string"),
        ({"node_count": {"set": "yes", "number": 1}}, "jobs[0].node_count", "booleans"),
        ({"start_time": 10**20}, "jobs[0].start_time", "epoch"),
        ({"gres_detail": ["gpu:h100:8(IDX:7-0)"], "nodes": "n1"}, "jobs[0].gres_detail[0]", "GPU indices"),
        ({"environment": [3]}, "jobs[0].environment[0]", "NAME=value"),
        ({"environment": "A=1"}, "jobs[0].environment", "list"),
        ({"script": "#!/bin/sh\nexport A='x\n"}, "jobs[0].script", "line 2 of the script"),
    ],
)
def test_json_errors_name_the_key(overrides: dict[str, object], key: str, needle: str) -> None:
    err = error(json_job(**overrides))
    assert (err.key, err.line) == (key, None) and needle in err.expected


def test_json_top_level_errors() -> None:
    assert error('{"jobs": 3}').key == "jobs"
    assert error('{"meta": {}}').key == "jobs"
    err = error('{"errors": [{"description": "Unable to query JobId=9"}]}')
    assert err.key == "errors" and "Unable to query" in err.expected
    bad = error('{\n  "jobs": [\n    {"job_id": 1,,}\n  ]\n}')
    assert bad.line == 3 and bad.expected.startswith("expected JSON")
    assert parse('{"jobs": []}') == ()


# --- scontrol variants ----------------------------------------------------------------------------

DETAIL_TWO_GROUPS = """JobId=7 JobName=mixed gpus
   UserId=bob(1001) GroupId=bob(1001) MCS_label=N/A
   JobState=RUNNING Reason=None Dependency=(null)
   StartTime=2026-11-30T03:00:00 EndTime=Unknown Deadline=N/A
   Partition=gpu,debug AllocNode:Sid=login:99
   NodeList=n[1-3]
   NumNodes=3 NumCPUs=24 NumTasks=3 CPUs/Task=8 ReqB:S:C:T=0:0:*:*
   TRES=cpu=24,node=3,billing=24,gres/gpu=20
   JOB_GRES=gpu:20
     Nodes=n[1-2] CPU_IDs=0-7 Mem=0 GRES=gpu:h100:8(IDX:0-7)
     Nodes=n3 CPU_IDs=0-7 Mem=0 GRES=gpu:h100:4(IDX:4-7)
   Command=/home/bob/run.sh --tc=106 --name x
   WorkDir=/home/bob/my jobs
   TresPerJob=gres:gpu:20

JobId=8 JobName=next
   JobState=COMPLETING+REQUEUED Reason=None
   NodeList=(null)
"""


def test_scontrol_detail_groups_and_free_text() -> None:
    seven, eight = parse(DETAIL_TWO_GROUPS)
    assert (seven.name, seven.user, seven.partition, seven.start_time) == (
        "mixed gpus",
        "bob",
        "gpu,debug",
        "2026-11-30T03:00:00",
    )
    assert seven.gpu_indices == {"n1": ALL8, "n2": ALL8, "n3": (4, 5, 6, 7)}
    assert seven.gres is None and seven.gpus_per_node is None  # 8, 8, 4: no single per-node count
    assert (eight.state, eight.state_flags, eight.nodes, eight.user) == ("COMPLETING", ("REQUEUED",), (), None)


def test_scontrol_oneliner_with_detail_groups() -> None:
    line = (
        "JobId=9 JobName=x UserId=a(1) JobState=RUNNING Reason=None NodeList=n[1-2] NumNodes=2 "
        "Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1) Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:2-3) "
        "TresPerNode=gres:gpu:2\n"
    )
    (job,) = parse(line)
    assert job.gpu_indices == {"n1": (0, 1), "n2": (2, 3)} and job.gpus_per_node == 2


def test_no_jobs() -> None:
    assert parse("No jobs in the system\n") == ()
    assert parse("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n") == ()


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("JobId=abc JobState=RUNNING\n", 1, "job id"),
        ("JobId=1 JobName=x\n   UserId=a(1)\n", 1, "JobState="),
        ("JobId=1 JobState=running\n", 1, "JobState="),
        ("JobId=1 JobState=RUNNING\nJobId=2 JobState=RUNNING NodeList=n[2-1]\n", 2, "lo <= hi"),
        ("JobId=1 JobState=RUNNING\ngarbage\n", 2, "'JobId='"),
        ("JobId=1\n   JobState=RUNNING\n   NumNodes=x\n", 3, "node count"),
        ("JobId=1\n   JobState=RUNNING\n   StartTime=yesterday\n", 3, "YYYY-MM-DD"),
        ("JobId=1\n   JobState=RUNNING\n   TresPerNode=gres:gpu::8\n", 3, "GRES"),
        ("hello world\n", 1, "expected squeue"),
    ],
)
def test_text_errors_name_the_line(text: str, line: int, needle: str) -> None:
    err = error(text)
    assert err.line == line and needle in err.expected, err


# --- squeue text variants -------------------------------------------------------------------------

DEFAULT_WITH_SPACES = """             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
        1234_[5-9]       gpu   my job      bob PD       0:00      2 (ReqNodeNotAvail, UnavailableNodes:dgx-h100-006)
              1235       gpu     test    alice  R   11:02:03     16 dgx-h100-[001-016]
            1236+0     debug       hj     carl CG       1:00      1 n7
"""


def test_default_format_names_with_spaces_and_long_reason() -> None:
    array, big, het = parse(DEFAULT_WITH_SPACES)
    assert (array.id, array.name, array.state) == ("slurm:1234_[5-9]", "my job", "PENDING")
    assert array.reason == "ReqNodeNotAvail, UnavailableNodes:dgx-h100-006" and array.nodes == ()
    assert (big.user, big.node_count, len(big.nodes), big.nodes[-1]) == ("alice", 16, 16, "dgx-h100-016")
    assert (het.id, het.state) == ("slurm:1236+0", "COMPLETING")


def test_left_aligned_custom_format() -> None:
    text = (
        "JOBID  NAME                 ST PARTITION START_TIME          NODELIST\n"
        "1      llama-pretrain-70b   R  gpu       2026-11-30T02:14:11 dgx-h100-[001-004]\n"
        "22     a                    PD gpu       N/A                 \n"
    )
    one, two = parse(text)
    assert (one.name, one.state, one.start_time, one.nodes) == (
        "llama-pretrain-70b",
        "RUNNING",
        "2026-11-30T02:14:11",
        NODES_1_4,
    )
    assert (two.name, two.state, two.start_time, two.nodes) == ("a", "PENDING", None, ())


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ("                 x       gpu nccl-all     root PD       0:00      2 (Resources)", "job id"),
        ("                 3       gpu nccl-all     root ZZ       0:00      2 (Resources)", "state code"),
        ("                 3       gpu nccl-all     root PD       0:00      z (Resources)", "node count"),
        ("                 3       gpu nccl-all     root  R       0:00      2 n[1-", "']' closing"),
    ],
)
def test_squeue_row_errors(row: str, needle: str) -> None:
    header = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
    err = error(f"{header}\n{row}\n")
    assert err.line == 2 and needle in err.expected


# --- robustness -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_truncated_samples_raise_only_parse_errors(samples: Path, sample: str) -> None:
    text = (samples / S / sample).read_text()
    for cut in range(0, len(text), max(1, len(text) // 150)):
        try:
            parse(text[:cut], "cut")
        except ParseError as exc:
            assert exc.source == "cut" and exc.expected
            if exc.line is not None:
                assert 1 <= exc.line <= text[:cut].count("\n") + 1
