"""INPUT-PARTIAL names the checks that could not run: one table (collect/not_checked.py) maps each file of the
bundle layout to the checks whose inputs come from it, for every file kind, hosts and switches alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.checks.registry import registry
from unifab.collect.bundle import load_bundle
from unifab.collect.not_checked import NOT_CHECKED, checks_for
from unifab.collect.problems import Problems
from unifab.model import Fabric, Finding
from unifab.sources import as_source_path

HOST = "gpu001"
LEAF = "leaf-su1-r2"


def _registered() -> set[str]:
    specs = registry()
    return {s.id for s in (specs.values() if isinstance(specs, dict) else specs)}


def test_every_id_in_the_table_is_a_registered_check() -> None:
    known = _registered()
    for pattern, ids in NOT_CHECKED.items():
        assert ids, pattern
        assert set(ids) <= known, (pattern, set(ids) - known)
        assert not any(i.startswith("INPUT-") for i in ids), pattern


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("hosts/gpu001/cmd/lspci-vvv.txt", {"HOST-PCIE-DOWNGRADED", "HOST-ACS"}),
        ("hosts/gpu001/cmd/mlnx_qos/eth2.txt", {"QOS-TRUST", "QOS-PFC-MISMATCH", "QOS-DCBX", "QOS-ETS"}),
        ("hosts/gpu001/cmd/ethtool-S/eth2.txt", {"QOS-GLOBAL-PAUSE"}),
        ("hosts/gpu001/cmd/show_gids.txt", {"HOST-GID"}),
        ("hosts/gpu001/cmd/lldpcli.json", {"TOPO-MISSING", "TOPO-MISWIRED"}),
        ("hosts/gpu001/sys/class/net/eth2/ecn/roce_np/enable/3", {"QOS-DCQCN-OFF"}),
        ("hosts/gpu001/sys/class/infiniband/mlx5_2/tc/1/traffic_class", {"QOS-TC-OVERRIDE"}),
        ("hosts/gpu001/sys/class/infiniband/mlx5_2/ports/1/rate", {"LINK-SPEED", "TOPO-MISSING"}),
        ("switches/leaf1/sonic/config_db.json", {"QOS-ECN-OFF", "QOS-HEADROOM", "QOS-MTU", "QOS-PFCWD"}),
        ("switches/leaf1/sonic/appl_db.json", {"TOPO-UNEXPECTED"}),
        ("switches/leaf1/eos/show-version.txt", {"FLEET-OS"}),
        ("switches/sw/junos/show-interfaces.json", {"QOS-MTU"}),
        ("ib/sminfo/sm2.txt", {"IB-SM"}),
        ("scheduler/squeue.json", {"QOS-JOB-TC", "TOPO-NCCL-HCA"}),
    ],
)
def test_a_file_names_the_checks_that_read_it(path: str, expected: set[str]) -> None:
    assert expected <= set(checks_for(path))


def test_files_no_check_reads_name_none() -> None:
    assert checks_for("hosts/gpu001/cmd/dmesg.txt") == ()  # Xid events: unifab health only
    assert checks_for("telemetry/rounds/1/switches/leaf1/sonic/config_db.json") == ()  # a health round


def _partial(fabric: Fabric) -> Finding:
    (finding,) = fabric.input_findings
    assert finding.check == "INPUT-PARTIAL"
    return finding


def test_a_partial_host_file_names_the_checks_it_costs(bundle: Path) -> None:
    path = bundle / "hosts" / HOST / "cmd" / "show_gids.txt"
    lines = path.read_text().split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("mlx5_3\t"))
    lines[number] = lines[number].replace("fe80:", "fz80:")
    path.write_text("\n".join(lines))
    finding = _partial(load_bundle(bundle))
    assert finding.evidence["checks"] == ["HOST-GID"] and finding.evidence["not_checked"] == "HOST-GID"
    assert finding.message.endswith("(not judged for what was skipped: HOST-GID)")


def test_a_partial_host_counter_file_names_the_checks(bundle: Path) -> None:
    path = bundle / "hosts" / HOST / "cmd" / "ethtool-S" / "eth2.txt"
    path.write_text(
        "\n".join(
            "     rx_prio3_pause: many" if "rx_prio3_pause:" in line else line for line in path.read_text().split("\n")
        )
    )
    finding = _partial(load_bundle(bundle))
    assert "QOS-GLOBAL-PAUSE" in finding.message and finding.evidence["checks"] == ["QOS-GLOBAL-PAUSE"]


def test_a_partial_sonic_file_names_the_checks_it_costs(bundle: Path) -> None:
    path = bundle / "switches" / LEAF / "sonic" / "config_db.json"
    doc = json.loads(path.read_text())
    key = next(k for k, v in doc["QUEUE"].items() if v.get("scheduler") and k.endswith("|3"))
    doc["QUEUE"][key]["scheduler"] = "ROCE_DWRR_TYPO"
    path.write_text(json.dumps(doc))
    finding = _partial(load_bundle(bundle))
    ids = checks_for(f"switches/{LEAF}/sonic/config_db.json")
    assert finding.evidence["checks"] == list(ids)
    assert "checks skip what was not read" in finding.message  # the reader's words, then the ids
    for check in ("QOS-ECN-OFF", "QOS-ETS", "QOS-HEADROOM", "QOS-PFC-MISMATCH"):
        assert check in finding.message


def test_the_callers_words_are_kept_and_ids_not_repeated(tmp_path: Path) -> None:
    from unifab.errors import ParseProblem

    (tmp_path / "ib").mkdir()
    root = as_source_path(tmp_path)
    problems = Problems(root)
    problem = ParseProblem("ib/perfquery.txt", "a counter", "port 3", line=7)
    problems.partial(root / "ib" / "perfquery.txt", problem, not_checked="IB-COUNTERS", checks=("IB-COUNTERS",))
    (finding,) = problems.findings
    assert finding.message == "ib/perfquery.txt:7: expected a counter; skipped port 3 (IB-COUNTERS)"
    assert finding.evidence["checks"] == ["IB-COUNTERS"]


def test_a_bad_job_record_costs_that_job_and_names_the_job_checks(tmp_path: Path) -> None:
    from unifab.collect.scheduler import load_jobs

    sched = tmp_path / "scheduler"
    sched.mkdir()
    rows = [
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
        "                 1       gpu llama-pr     root  R       0:09      2 gpu[001-002]",
        "                 2       gpu sft-eval     root ?? 0:09      1 gpu003",
        "                 3       gpu nccl-all     root  R       0:09      1 gpu004",
    ]
    (sched / "squeue.txt").write_text("\n".join(rows) + "\n")
    root = as_source_path(tmp_path)
    problems = Problems(root)
    jobs = load_jobs(root / "scheduler", problems)
    assert sorted(jobs) == ["job:slurm:1", "job:slurm:3"]
    (finding,) = problems.findings
    assert finding.check == "INPUT-PARTIAL" and finding.subject["skipped"] == "job 2"
    assert finding.subject["line"] == "3" and finding.evidence["checks"] == list(checks_for("scheduler/squeue.txt"))
    assert "QOS-JOB-TC" in finding.message and "TOPO-NCCL-HCA" in finding.message
    assert finding.message.startswith("scheduler/squeue.txt:3: expected a squeue state code")  # not "expected" twice


def test_a_bad_pod_costs_its_job_not_the_pod_list(tmp_path: Path) -> None:
    from unifab.collect.scheduler import load_jobs

    sched = tmp_path / "scheduler"
    sched.mkdir()

    def pod(name: str, job: str, node: str, gpus: object) -> dict[str, object]:
        return {
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "labels": {"job-name": job}},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
            },
            "status": {"phase": "Running"},
        }

    pods = [pod("a-0", "a", "gpu01", 8), pod("b-0", "b", "gpu02", 8), pod("b-1", "b", "gpu03", "all")]
    (sched / "pods.json").write_text(json.dumps({"kind": "PodList", "items": pods}))
    root = as_source_path(tmp_path)
    problems = Problems(root)
    jobs = load_jobs(root / "scheduler", problems)
    assert sorted(jobs) == ["job:k8s:ml/a"] and jobs["job:k8s:ml/a"].hosts == ("gpu01",)
    (finding,) = problems.findings
    assert finding.check == "INPUT-PARTIAL" and finding.subject["skipped"] == "job ml/b (pod b-1)"
    assert finding.evidence["checks"] == list(checks_for("scheduler/pods.json"))
    assert finding.message.startswith(
        "scheduler/pods.json [items[2].spec.containers[0].resources.limits.nvidia.com/gpu]"
    )
