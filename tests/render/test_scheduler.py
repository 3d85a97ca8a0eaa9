"""One builder of drain and resume commands for Slurm and Kubernetes (plan-change, health actions, agent gate)."""

from __future__ import annotations

import pytest

from unifab.errors import UsageError
from unifab.render.scheduler import drain_argvs, reason_text, resume_argvs


def test_slurm_drains_a_compressed_hostlist_with_a_clean_reason() -> None:
    assert drain_argvs("slurm", ["gpu002", "gpu001", "gpu003", "gpu001"], "PFC off\non eth0 \x1b[31m") == [
        ["scontrol", "update", "NodeName=gpu[001-003]", "State=DRAIN", "Reason=PFC off on eth0 ?[31m"]
    ]
    assert resume_argvs("slurm", ["gpu001"]) == [["scontrol", "update", "NodeName=gpu001", "State=RESUME"]]


def test_kubernetes_cordons_then_drains_each_node_and_uncordons_after() -> None:
    assert drain_argvs("kubernetes", ["n1", "n2"], "ignored") == [
        ["kubectl", "cordon", "n1"],
        ["kubectl", "cordon", "n2"],
        ["kubectl", "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data"],
        ["kubectl", "drain", "n2", "--ignore-daemonsets", "--delete-emptydir-data"],
    ]
    assert resume_argvs("kubernetes", ["n1"]) == [["kubectl", "uncordon", "n1"]]


def test_no_host_is_no_command_and_a_bad_name_or_scheduler_is_refused() -> None:
    assert drain_argvs("slurm", [], "x") == [] and resume_argvs("kubernetes", []) == []
    for bad in ("gpu3;reboot", "-rf", "a b", "$(id)"):
        with pytest.raises(UsageError):
            drain_argvs("slurm", [bad], "x")
        with pytest.raises(UsageError):
            drain_argvs("kubernetes", [bad], "x")
    with pytest.raises(ValueError, match="scheduler must be one of"):
        drain_argvs("pbs", ["gpu001"], "x")


def test_a_long_reason_is_cut_with_an_ellipsis() -> None:
    assert reason_text("x" * 300, 100) == "x" * 97 + "..."
    assert len(drain_argvs("slurm", ["gpu001"], "y" * 500)[0][-1]) == len("Reason=") + 200
