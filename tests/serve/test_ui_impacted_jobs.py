"""The overview's "Impacted jobs": the running jobs that open findings reach, worst first, each linking to its
job page with the number of its hosts affected and its worst finding; a clear line when no job is impacted.

The twin is the clean 64-GPU one (8 hosts, no finding) with its one job split in two and known faults put on
one job's hosts: :func:`impact_twin` says which, so the expected rows are written here, not recomputed.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from unifab.serve.app import create_app
from unifab.serve.service import Settings, pack_directory

CRITICAL_JOB = "job:slurm:1002"  # gpu005-008; PFC off on one NIC of gpu006 and of gpu007: 2 hosts, critical
WARNING_JOB = "job:slurm:1001"  # gpu001-004; MTU 1500 on one NIC of gpu002: 1 host, warning
PENDING_JOB = "job:slurm:1003"  # on gpu002 but pending: not a running job, never listed


def clean_twin(out: Path) -> Path:
    """The 64-GPU twin without scenarios: one running job (gpu001-008), no finding."""
    from unifab.twin.generate import generate

    generate(out, gpus=64, seed=3)
    return out


def impact_twin(clean: Path, out: Path) -> Path:
    """``clean`` copied to ``out`` with two running jobs, one pending job and faults on three hosts (see above)."""
    shutil.copytree(clean, out)
    squeue = out / "scheduler" / "squeue.json"
    doc = json.loads(squeue.read_text())
    (first,) = doc["jobs"]
    doc["jobs"] = [
        {**first, "nodes": "gpu[001-004]", "node_count": 4},
        {**first, "job_id": 1002, "name": "finetune-2", "nodes": "gpu[005-008]", "node_count": 4},
        {**first, "job_id": 1003, "name": "queued-3", "nodes": "gpu002", "node_count": 1, "job_state": "PENDING"},
    ]
    squeue.write_text(json.dumps(doc, indent=2))
    env = out / "scheduler" / "env"
    shutil.copy(env / "1001.env", env / "1002.env")
    (out / "hosts/gpu002/sys/class/net/eth3/mtu").write_text("1500\n")
    for host, netdev in (("gpu006", "eth1"), ("gpu007", "eth2")):
        qos = out / f"hosts/{host}/cmd/mlnx_qos/{netdev}.txt"
        text = qos.read_text()
        on = "enabled     0   0   0   1   0   0   0   0"
        assert on in text, qos
        qos.write_text(text.replace(on, on.replace("1", "0")))
    return out


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("impact-twins")
    clean = clean_twin(root / "clean")
    return {"clean": clean, "impact": impact_twin(clean, root / "impact")}


class Overview:
    def __init__(self, client: TestClient) -> None:
        server = client.app.state.server  # type: ignore[attr-defined]
        self.client = client
        self.viewer = {"Authorization": f"Bearer {server.create_token('viewer', 'v', 'test').token}"}
        self.agent = {"Authorization": f"Bearer {server.create_token('agent', 'a', 'test').token}"}

    def get(self, path: str) -> str:
        r = self.client.get(path, headers=self.viewer)
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
        return r.text

    def ingest(self, bundle: Path) -> None:
        r = self.client.post("/api/v1/snapshots", content=pack_directory(bundle), headers=self.agent)
        assert r.status_code == 201, r.text


def overview_of(tmp_path: Path) -> Iterator[Overview]:
    with TestClient(create_app(Settings(db=str(tmp_path / "serve.db")))) as client:
        yield Overview(client)


@pytest.fixture
def overview(tmp_path: Path) -> Iterator[Overview]:
    yield from overview_of(tmp_path)


def impacted_rows(page: str) -> list[dict[str, str]]:
    """The rows of #impacted: job, its link, hosts affected, the worst finding's severity and check."""
    table = page.split('<table id="impacted">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(
        r'<tr class="impacted-job" data-job="([^"]+)" data-severity="(\w+)" data-hosts-hit="(\d+)">(.*?)</tr>',
        table,
        re.S,
    )
    out = []
    for job, severity, hit, body in rows:
        link = re.search(r'<a class="mono" href="([^"]+)">', body)
        check = re.search(r'</span> <span class="mono">([^<]+)</span>', body)
        cells = re.findall(r"<td>([^<]*)</td>", body)
        out.append(
            {
                "job": job,
                "href": unescape(link.group(1)) if link else "",
                "severity": severity,
                "hosts_hit": hit,
                "hosts_cell": next((c for c in cells if " of " in c), ""),
                "check": check.group(1) if check else "",
            }
        )
    return out


def test_the_overview_lists_the_impacted_jobs_worst_first(overview: Overview, twins: dict[str, Path]) -> None:
    overview.ingest(twins["impact"])
    page = overview.get("/")
    assert 'id="impacted-jobs"' in page and 'id="no-impacted-job"' not in page
    rows = impacted_rows(page)
    assert [(r["job"], r["severity"], r["hosts_hit"], r["hosts_cell"], r["check"]) for r in rows] == [
        (CRITICAL_JOB, "critical", "2", "2 of 4", "QOS-PFC-MISMATCH"),
        (WARNING_JOB, "warning", "1", "1 of 4", "QOS-MTU"),
    ]
    assert PENDING_JOB not in page
    assert "2 of 2 running jobs" in page
    # each job id leads to the existing job page, which agrees on the verdict and names the same worst check
    for row, verdict in zip(rows, ("likely", "possible"), strict=True):
        assert row["href"] == f"/jobs/{quote(row['job'], safe='')}"
        job_page = overview.get(row["href"])
        assert f'data-verdict="{verdict}"' in job_page and row["check"] in job_page
    # the same jobs and verdicts as the jobs API (one computation behind both)
    api = overview.client.get("/api/v1/jobs", headers=overview.viewer).json()["items"]
    assert {j["id"]: j["verdict"]["network"] for j in api} == {CRITICAL_JOB: "likely", WARNING_JOB: "possible"}


def test_no_impacted_job_is_said_plainly(overview: Overview, twins: dict[str, Path]) -> None:
    overview.ingest(twins["clean"])
    page = overview.get("/")
    assert 'id="impacted-jobs"' in page and '<table id="impacted">' not in page
    line = re.search(r'<p id="no-impacted-job">([^<]+)</p>', page)
    assert line is not None
    assert line.group(1).startswith("No job is impacted: 1 running job, none with a finding at warning or above")


def test_a_snapshot_without_jobs_says_so(overview: Overview, twins: dict[str, Path], tmp_path: Path) -> None:
    bundle = shutil.copytree(twins["clean"], tmp_path / "nojobs")
    shutil.rmtree(bundle / "scheduler")
    overview.ingest(bundle)
    line = re.search(r'<p id="no-impacted-job">([^<]+)</p>', overview.get("/"))
    assert line is not None and line.group(1).startswith("No job is impacted: the last snapshot names no running job")


def test_before_any_snapshot_there_is_no_jobs_section(overview: Overview) -> None:
    page = overview.get("/")
    assert "No snapshot yet" in page and 'id="impacted-jobs"' not in page


def test_hosts_affected_by_an_uplink_and_by_the_job_itself(twins: dict[str, Path]) -> None:
    """A leaf's uplink reaches every host of the job cabled to that leaf; a finding about the job, all of them;
    a NIC link, its one host. Counted over the job page's findings (FabricIndex.job_findings)."""
    import dataclasses

    import unifab
    from unifab.model import Finding, Severity
    from unifab.serve.fabric_views import FabricIndex

    fabric = unifab.load_snapshot(twins["impact"]).fabric
    # every host of the twin's scalable unit is cabled to each of its leaves (one per rail): a host the bundle
    # has no data for is the job's one host behind no leaf
    job = dataclasses.replace(fabric.jobs[CRITICAL_JOB], hosts=(*fabric.jobs[CRITICAL_JOB].hosts, "gpu099"))
    hosts = set(job.hosts)
    host_link = next(lk for lk in fabric.links if lk.a.node == "gpu006" or lk.b.node == "gpu006")
    leaf = host_link.b.node if host_link.a.node == "gpu006" else host_link.a.node
    uplink = next(
        lk
        for lk in fabric.links
        if leaf in (lk.a.node, lk.b.node) and lk.a.node in fabric.switches and lk.b.node in fabric.switches
    )
    on_leaf = {
        h for lk in fabric.links for h, other in ((lk.a.node, lk.b.node), (lk.b.node, lk.a.node)) if other == leaf
    } & hosts

    def finding(check: str, subject: dict[str, str], entities: tuple[str, ...]) -> Finding:
        return Finding(check, Severity.ERROR, subject, f"{check} here", entities=entities)

    nic = finding("QOS-MTU", {"kind": "link", "id": host_link.id}, (host_link.id,))
    up = finding("QOS-UPLINK-PFC", {"kind": "link", "id": uplink.id}, (uplink.id,))
    mine = finding("QOS-JOB-TC", {"kind": "job", "id": job.id}, (job.id,))
    for found, expected in (([nic], {"gpu006"}), ([up], on_leaf), ([nic, up], on_leaf), ([mine], hosts)):
        index = FabricIndex.build((0,), fabric, found)
        scoped = index.job_findings(job)
        assert len(scoped) == len(found)
        assert set(index.job_hosts_hit(job, scoped)) == expected, found
    assert on_leaf == hosts - {"gpu099"}
    index = FabricIndex.build((0,), fabric, [nic, up, mine])
    assert index.job_hosts_hit(job, index.job_findings(job)) == sorted(hosts)
