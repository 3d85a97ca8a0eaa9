"""The scheduler parsers under the same mutations as ``tests/parse/test_fuzz.py`` (truncate, shuffle, drop, flip,
duplicate, random text): only ParseError escapes, naming the source, a line inside the input, and an expectation.

The seeds are the ones to list in test_fuzz.py's SEEDS once the formats are registered.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.sched import hostlist, k8s_pods, nccl_env, slurm_jobs, slurm_nodes

PARSERS: dict[str, Callable[[str, str], Any]] = {
    "slurm-jobs": slurm_jobs.parse,
    "slurm-nodes": slurm_nodes.parse,
    "k8s-pods": k8s_pods.parse,
    "hostlist": hostlist.parse,
    "slurm-env": nccl_env.parse_env,
    "batch-script-env": nccl_env.parse_script,
}
SEEDS: dict[str, tuple[str, ...]] = {
    "slurm-jobs": (
        "scheduler/slurm_squeue.json",
        "scheduler/slurm_squeue.txt",
        "scheduler/slurm_squeue_custom_format.txt",
        "scheduler/slurm_scontrol_show_job_all_oneliner.txt",
        "scheduler/slurm_scontrol_show_job_detail.txt",
        "scheduler/slurm_scontrol_show_job_pending.txt",
        "scheduler/slurmrestd_25.05_v0.0.41_job_gpus_multi_nodes.json",
        "scheduler/slurmrestd_25.11_v0.0.44_job_gpus_multi_nodes.json",
    ),
    "slurm-nodes": (
        "scheduler/slurm_sinfo.json",
        "scheduler/slurm_sinfo_Nl.txt",
        "scheduler/slurm_sinfo_R.txt",
        "scheduler/slurm_scontrol_show_node_oneliner.txt",
        "scheduler/slurm_scontrol_show_node_drained.txt",
        "scheduler/slurmrestd_25.11_v0.0.44_node_drain.json",
        "scheduler/slurmrestd_25.11_v0.0.44_node_gpus_allocated.json",
    ),
}
INLINE_SEEDS: dict[str, tuple[str, ...]] = {
    "k8s-pods": (
        '{"kind":"List","items":[{"metadata":{"name":"w-0","namespace":"ml","labels":'
        '{"training.kubeflow.org/job-name":"ft"}},"spec":{"nodeName":"gpu1","containers":[{"name":"pytorch",'
        '"env":[{"name":"NCCL_IB_TC","value":"106"},{"name":"NCCL_IB_HCA","value":"=mlx5_0:1"},'
        '{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}],'
        '"resources":{"limits":{"nvidia.com/gpu":"8"}}}]},"status":{"phase":"Running",'
        '"startTime":"2026-11-30T02:13:42Z"}}]}\n',
        "kind: List\nitems:\n- metadata:\n    name: w-0\n    labels:\n      job-name: ft\n  spec:\n"
        "    nodeName: gpu1\n    containers:\n    - name: c\n      env:\n      - name: NCCL_IB_TC\n"
        '        value: "106"\n  status:\n    phase: Running\n',
    ),
    "hostlist": ("dgx-h100-[001-004],dgx-h100-006\nrack[1-2]-n[1-2] gpu-[001-004,010]\n",),
    "slurm-env": (
        "SLURM_JOB_ID=1\0NCCL_IB_TC=106\0NCCL_IB_HCA=^=mlx5_0:1\0",
        "Environment used for 1\n-----\nNCCL_IB_TC=106\nBASH_FUNC_x%%=() {\n echo\n}\n",
    ),
    "batch-script-env": (
        "#!/bin/bash\n#SBATCH --export=ALL,NCCL_DEBUG=INFO\nTC=106\nexport NCCL_IB_TC=$TC\n"
        'export NCCL_IB_HCA="=mlx5_0:1,mlx5_3:1"\nNCCL_IB_SL=3 srun python train.py\n',
    ),
}


def seeds(samples: Path, fmt: str) -> list[str]:
    return [(samples / rel).read_text() for rel in SEEDS.get(fmt, ())] + list(INLINE_SEEDS.get(fmt, ()))


def check(fmt: str, text: str) -> None:
    source = "fuzz/input.txt"
    try:
        PARSERS[fmt](text, source)
    except ParseError as exc:
        assert exc.source.startswith(source) or source in str(exc), exc
        assert exc.expected.strip(), "a parse error must say what was expected"
        if exc.line is not None:
            assert 1 <= exc.line <= max(text.count("\n"), len(text.splitlines())) + 2, (exc.line, exc)


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> str:
    lines = seed.splitlines(keepends=True)
    how = draw(st.sampled_from(["truncate", "shuffle", "drop", "flip", "duplicate"]))
    if how == "truncate":
        return seed[: draw(st.integers(0, len(seed)))]
    if how == "shuffle":
        return "".join(draw(st.permutations(lines)))
    if how == "drop" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        return "".join(lines[:i] + lines[i + 1 :])
    if how == "flip" and seed:
        i = draw(st.integers(0, len(seed) - 1))
        return seed[:i] + draw(st.characters(codec="utf-8")) + seed[i + 1 :]
    if lines:
        i = draw(st.integers(0, len(lines) - 1))
        return "".join(lines[: i + 1] + lines[i:])
    return seed


@pytest.mark.parametrize("fmt", sorted(PARSERS))
def test_seeds_exist_and_parse_cleanly(samples: Path, fmt: str) -> None:
    texts = seeds(samples, fmt)
    assert texts
    for text in texts:
        PARSERS[fmt](text, "seed")


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_mutated_seeds_raise_only_parse_errors(samples: Path, fmt: str, data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(seeds(samples, fmt)))
    check(fmt, data.draw(mutated(seed)))


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@settings(max_examples=120, deadline=None)
@given(text=st.text(max_size=400))
def test_random_text_raises_only_parse_errors(fmt: str, text: str) -> None:
    check(fmt, text)
