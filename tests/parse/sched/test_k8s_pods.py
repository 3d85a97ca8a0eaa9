"""Tests for Kubernetes pods grouped into jobs.

No real ``kubectl get pods -o json`` capture is in the sample corpus: the PodList below is RECONSTRUCTED from the
Pod API schema and the labels/env the Kubeflow Training Operator puts on PyTorchJob pods (reference
topology-health-scheduler.md section 5.3). Its golden file carries "reconstructed" in its name.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from unifab.errors import ParseError, ParseProblems
from unifab.parse.sched.k8s_pods import parse
from unifab.parse.sched.slurm_jobs import Job

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
HCA = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"


def pytorch_pod(replica: str, index: int, rank: int, node: str) -> dict[str, Any]:
    name = f"llama-70b-ft-{replica}-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "team-llm",
            "uid": f"5d1c0b9e-0000-4000-8000-00000000000{rank}",
            "creationTimestamp": "2026-11-30T02:13:40Z",
            "labels": {
                "training.kubeflow.org/job-name": "llama-70b-ft",
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-index": str(index),
                "training.kubeflow.org/replica-type": replica,
                **({"training.kubeflow.org/job-role": "master"} if replica == "master" else {}),
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": "llama-70b-ft",
                    "uid": "0b6f5d0e-1111-4222-8333-444455556666",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "OnFailure",
            "schedulerName": "default-scheduler",
            "containers": [
                {
                    "name": "pytorch",
                    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                    "command": ["torchrun", "--nproc-per-node=8", "train.py"],
                    "env": [
                        {"name": "NCCL_IB_TC", "value": "106"},
                        {"name": "NCCL_IB_GID_INDEX", "value": "3"},
                        {"name": "NCCL_IB_HCA", "value": HCA},
                        {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
                        {"name": "NCCL_DEBUG", "value": "INFO"},
                        {
                            "name": "POD_IP",
                            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
                        },
                        {"name": "NCCL_DEBUG_FILE", "value": "/logs/$(HOSTNAME_UNSET)/nccl.%h.%p"},
                        {"name": "LOG_DIR", "value": "/logs/$(NCCL_DEBUG)"},
                        {"name": "MASTER_PORT", "value": "23456"},
                        {"name": "MASTER_ADDR", "value": "llama-70b-ft-master-0"},
                        {"name": "WORLD_SIZE", "value": "3"},
                        {"name": "RANK", "value": str(rank)},
                        {"name": "PYTHONUNBUFFERED", "value": "1"},
                    ],
                    "envFrom": [{"configMapRef": {"name": "nccl-tuning"}}],
                    "resources": {
                        "limits": {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1", "memory": "1600Gi"},
                        "requests": {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1", "cpu": "96"},
                    },
                },
                {
                    "name": "metrics-sidecar",
                    "image": "prom/node-exporter:v1.8.1",
                    "env": [{"name": "NCCL_IB_TC", "value": "0"}],  # not a rank: ignored
                    "resources": {"limits": {"cpu": "100m"}},
                },
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.20.0.1",
            "podIP": f"192.168.{rank}.10",
            "startTime": f"2026-11-30T02:13:4{2 + rank}Z",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T02:13:40Z"}],
        },
    }


def pod_list() -> dict[str, Any]:
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "nccl-tests-allreduce-7xq2p",
            "namespace": "team-llm",
            "labels": {
                "batch.kubernetes.io/controller-uid": "9e0f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
                "batch.kubernetes.io/job-name": "nccl-tests-allreduce",
                "controller-uid": "9e0f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
                "job-name": "nccl-tests-allreduce",
            },
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "nccl-tests-allreduce", "controller": True}
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "nccl-tests",
                    "image": "ghcr.io/example/nccl-tests:2.21",
                    "env": [{"name": "NCCL_IB_TC", "value": "0x6a"}, {"name": "NCCL_IB_HCA", "value": "mlx5"}],
                    "resources": {"limits": {"nvidia.com/gpu": 8}},
                }
            ]
        },
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
                }
            ],
        },
    }
    debug = {
        "metadata": {"name": "debug-shell", "namespace": "default"},
        "spec": {"nodeName": "cpu-node-01", "containers": [{"name": "sh", "image": "busybox"}]},
        "status": {"phase": "Running", "startTime": "2026-11-30T01:00:00Z"},
    }
    pods = [
        pytorch_pod("master", 0, 0, "gpu-node-01"),
        pending,
        pytorch_pod("worker", 0, 1, "gpu-node-02"),
        pytorch_pod("worker", 1, 2, "gpu-node-03"),
        debug,
    ]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": pods}


PODS_JSON = json.dumps(pod_list(), indent=4)


def error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, "t")
    return info.value


def test_golden_reconstructed(golden: GoldenCheck) -> None:
    golden(GOLDEN / "k8s_pods_pytorchjob_reconstructed.json", parse(PODS_JSON, "pods.json"))


def test_pytorchjob_grouped_by_training_label() -> None:
    llama, _, _ = parse(PODS_JSON)
    assert (llama.id, llama.entity_id, llama.name) == (
        "k8s:team-llm/llama-70b-ft",
        "job:k8s:team-llm/llama-70b-ft",
        "llama-70b-ft",
    )
    assert (llama.state, llama.reason, llama.user, llama.partition) == ("RUNNING", None, None, None)
    assert llama.nodes == ("gpu-node-01", "gpu-node-02", "gpu-node-03") and llama.node_count == 3
    assert (llama.gpus_per_node, llama.gres, llama.gpu_indices) == (8, None, {})
    assert llama.start_time == "2026-11-30T02:13:42Z"
    assert llama.env["NCCL_IB_TC"] == "106" and llama.env["RANK"] == "0"
    assert llama.env["LOG_DIR"] == "/logs/INFO"  # $(VAR) of an earlier entry expanded
    assert llama.env["NCCL_DEBUG_FILE"] == "/logs/$(HOSTNAME_UNSET)/nccl.%h.%p"  # unknown: kept
    assert "POD_IP" not in llama.env
    assert llama.env_unresolved == ("POD_IP", "envFrom:configMap/nccl-tuning")
    assert llama.env_conflicts == ("RANK",)
    assert llama.nccl is not None
    assert (llama.nccl.ib_tc, llama.nccl.ib_dscp, llama.nccl.ib_gid_index) == (106, 26, 3)
    assert llama.nccl.ib_hca is not None and llama.nccl.ib_hca.exact and len(llama.nccl.ib_hca.devices) == 8
    assert llama.nccl.ib_hca.selects("mlx5_10", 1) and not llama.nccl.ib_hca.selects("mlx5_1", 1)


def test_pending_batch_job_and_standalone_pod() -> None:
    _, nccl_tests, debug = parse(PODS_JSON)
    assert (nccl_tests.id, nccl_tests.state, nccl_tests.reason) == (
        "k8s:team-llm/nccl-tests-allreduce",
        "PENDING",
        "Unschedulable",
    )
    assert (nccl_tests.nodes, nccl_tests.node_count, nccl_tests.gpus_per_node, nccl_tests.start_time) == (
        (),
        0,
        None,
        None,
    )
    assert nccl_tests.nccl is not None and nccl_tests.nccl.ib_tc == 106  # "0x6a"
    assert nccl_tests.nccl.ib_hca is not None and nccl_tests.nccl.ib_hca.selects("mlx5_bond_0")  # prefix "mlx5"
    assert (debug.id, debug.nodes, debug.gpus_per_node, debug.env) == (
        "k8s:default/debug-shell",
        ("cpu-node-01",),
        None,
        {},
    )
    assert debug.nccl is not None and debug.nccl.ib_tc is None


def test_yaml_reads_the_same() -> None:
    assert parse(yaml.safe_dump(pod_list()), "pods.yaml") == parse(PODS_JSON)


def test_single_pod() -> None:
    (job,) = parse(json.dumps(pytorch_pod("worker", 1, 2, "gpu-node-03")))
    assert job.id == "k8s:team-llm/llama-70b-ft" and job.env["RANK"] == "2" and job.env_conflicts == ()


def test_rank_with_a_different_tc_is_a_conflict() -> None:
    doc = pod_list()
    doc["items"][3]["spec"]["containers"][0]["env"][0]["value"] = "96"
    del doc["items"][2]["spec"]["containers"][0]["env"][2]  # worker-0 lacks NCCL_IB_HCA
    llama = parse(json.dumps(doc))[0]
    assert llama.env["NCCL_IB_TC"] == "106" and llama.env_conflicts == ("NCCL_IB_TC", "NCCL_IB_HCA", "RANK")


@pytest.mark.parametrize(
    ("labels", "owner", "group"),
    [
        ({"jobset.sigs.k8s.io/jobset-name": "js", "batch.kubernetes.io/job-name": "js-w-0"}, None, "js"),
        ({"volcano.sh/job-name": "vc"}, None, "vc"),
        ({"job-name": "old"}, None, "old"),
        ({}, "rs-abc", "rs-abc"),
        ({}, None, "p"),
    ],
)
def test_group_label_precedence(labels: dict[str, str], owner: str | None, group: str) -> None:
    meta: dict[str, Any] = {"name": "p", "namespace": "ns", "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [
            {"kind": "X", "name": "not-me"},
            {"kind": "ReplicaSet", "name": owner, "controller": True},
        ]
    (job,) = parse(json.dumps({"kind": "Pod", "metadata": meta}))
    assert job.id == f"k8s:ns/{group}" and job.state == "UNKNOWN"


@pytest.mark.parametrize(
    ("phases", "state"),
    [
        (["Running", "Pending"], "PENDING"),
        (["Running", "Failed"], "FAILED"),
        (["Succeeded", "Succeeded"], "COMPLETED"),
        (["Succeeded", "Running"], "RUNNING"),
        (["Unknown"], "UNKNOWN"),
    ],
)
def test_state_from_phases(phases: list[str], state: str) -> None:
    items = [
        {"metadata": {"name": f"p{i}", "labels": {"job-name": "j"}}, "status": {"phase": phase}}
        for i, phase in enumerate(phases)
    ]
    (job,) = parse(json.dumps({"kind": "PodList", "items": items}))
    assert job.state == state and job.id == "k8s:default/j"


@pytest.mark.parametrize(
    ("mutate", "key", "needle"),
    [
        (
            lambda d: d["items"][0]["spec"]["containers"][0]["resources"]["limits"].update({"nvidia.com/gpu": "1.5"}),
            "items[0].spec.containers[0].resources.limits.nvidia.com/gpu",
            "whole GPU count",
        ),
        (
            lambda d: d["items"][0]["spec"]["containers"][0]["env"][0].pop("name"),
            "items[0].spec.containers[0].env[0].name",
            "name",
        ),
        (
            lambda d: d["items"][0]["spec"]["containers"][0]["env"][0].update({"value": 106}),
            "items[0].spec.containers[0].env[0].value",
            "string",
        ),
        (lambda d: d["items"][1].update({"kind": "Service"}), "items[1].kind", "Pod"),
        (lambda d: d["items"][1]["metadata"].pop("name"), "items[1].metadata.name", "metadata.name"),
        (lambda d: d["items"][4]["metadata"].update({"labels": {"a": 1}}), "items[4].metadata.labels.a", "string"),
        (lambda d: d["items"][4]["status"].update({"startTime": 5}), "items[4].status.startTime", "time"),
        (lambda d: d.update({"items": {}}), "items", "list"),
        (lambda d: d.pop("items"), "items", "PodList"),
    ],
)
def test_errors_name_the_key(mutate: Callable[[dict[str, Any]], object], key: str, needle: str) -> None:
    doc = copy.deepcopy(pod_list())
    mutate(doc)
    err = error(json.dumps(doc))
    assert err.key == key and needle in err.expected, err


def test_syntax_errors_name_the_line() -> None:
    assert error('{\n  "items": [\n    }\n').line == 3
    assert error("kind: PodList\nitems:\n  - metadata: {name: [}\n").line == 3
    assert error("just a string").key == "<root>"
    assert "empty" in error(" \n").expected


# --- robustness -----------------------------------------------------------------------------------


def test_truncated_list_raises_only_parse_errors() -> None:
    for text in (PODS_JSON, yaml.safe_dump(pod_list())):
        for cut in range(0, len(text), max(1, len(text) // 200)):
            try:
                parse(text[:cut], "cut")
            except ParseError as exc:
                assert exc.source == "cut" and exc.expected


# --- read in part ---------------------------------------------------------------------------------


def _lenient(doc: dict[str, Any]) -> tuple[tuple[Job, ...], ParseProblems]:
    log = ParseProblems("pods.json")
    return parse(json.dumps(doc), "pods.json", log), log


def test_a_bad_pod_costs_its_job_and_the_other_jobs_read_as_unharmed() -> None:
    doc = pod_list()
    doc["items"][1]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "eight"
    with pytest.raises(ParseError) as strict:
        parse(json.dumps(doc), "pods.json")
    assert strict.value.key == "items[1].spec.containers[0].resources.limits.nvidia.com/gpu"
    got, log = _lenient(doc)
    (problem,) = log.problems
    assert problem.key == strict.value.key and "whole GPU count" in problem.expected
    assert problem.skipped == "job team-llm/nccl-tests-allreduce (pod nccl-tests-allreduce-7xq2p)"
    assert got == tuple(j for j in parse(PODS_JSON) if j.id != "k8s:team-llm/nccl-tests-allreduce")


def test_a_bad_pod_costs_every_pod_of_its_job() -> None:
    """A job read from some of its pods would look smaller than it is: fewer nodes, no env conflict."""
    doc = pod_list()
    doc["items"][3]["spec"]["containers"][0]["env"][0] = {"value": "106"}  # worker-1 of llama: no 'name'
    got, log = _lenient(doc)
    (problem,) = log.problems
    assert problem.key == "items[3].spec.containers[0].env[0].name"
    assert problem.skipped == "job team-llm/llama-70b-ft (pod llama-70b-ft-worker-1)"
    whole = parse(PODS_JSON)
    assert got == whole[1:] and [j.id for j in got] == ["k8s:team-llm/nccl-tests-allreduce", "k8s:default/debug-shell"]


def test_a_pod_that_does_not_say_its_job_costs_only_itself() -> None:
    doc = pod_list()
    doc["items"][4]["metadata"] = ["not", "an", "object"]
    got, log = _lenient(doc)
    (problem,) = log.problems
    assert (problem.key, problem.skipped) == ("items[4].metadata", "the pod at items[4]")
    assert got == parse(PODS_JSON)[:2]
    doc["items"][2]["kind"] = "Service"  # a List may hold other kinds: that item only (its job named by its labels)
    got, log = _lenient(doc)
    assert [p.key for p in log.problems] == ["items[2].kind", "items[4].metadata"]
    assert [j.id for j in got] == ["k8s:team-llm/nccl-tests-allreduce"]


def test_pods_that_are_all_bad_are_refused() -> None:
    doc = pod_list()
    for item in doc["items"]:
        item["status"] = "Running"
    with pytest.raises(ParseError) as info:
        _lenient(doc)
    assert info.value.key == "items[0].status"
