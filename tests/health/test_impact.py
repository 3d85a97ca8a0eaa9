"""Job impact: a job's network (GPUs, NICs, links, leaves, ECMP uplinks) and what lands on it."""

from __future__ import annotations

from unifab.health.detect import FEC, LINK_FLAP, Symptom
from unifab.health.impact import job_scope, judge_jobs
from unifab.health.localize import localize
from unifab.model import Endpoint, Fabric, Finding, Job, Severity


def test_the_scope_of_a_job_is_its_hosts_links_leaves_and_their_uplinks(fabric: Fabric) -> None:
    scope = job_scope(fabric, fabric.jobs["job:slurm:7"])
    assert (
        scope.hosts == ("gpu001",) and len(scope.gpus) == 8 and scope.nics == ("nic:gpu001:mlx5_0", "nic:gpu001:mlx5_1")
    )
    assert scope.links == ("link:gpu001:eth0--leaf0:Ethernet0", "link:gpu001:eth1--leaf1:Ethernet0")
    assert scope.leaves == ("leaf0", "leaf1")
    assert scope.uplinks == ("link:leaf0:Ethernet64--spine1:Ethernet1/1", "link:leaf1:Ethernet64--spine1:Ethernet2/1")
    assert {"port:leaf0:Ethernet0", "optic:gpu001:eth0", "port:spine1:Ethernet1/1", "switch:leaf1"} <= scope.entities
    assert "link:gpu002:eth0--leaf0:Ethernet8" not in scope.entities and "host:gpu002" not in scope.entities
    assert scope.checked()["ecmp_uplinks"] == 2


def finding(check: str, severity: Severity, *entities: str) -> Finding:
    return Finding(check, severity, {"kind": "link"}, f"{check} here", entities=entities)


def test_incidents_on_its_hosts_or_path_and_findings_by_severity(fabric: Fabric) -> None:
    uplink = finding("QOS-ECN-OFF", Severity.ERROR, "link:leaf0:Ethernet64--spine1:Ethernet1/1")
    info = finding("QOS-ETS", Severity.INFO, "link:gpu001:eth1--leaf1:Ethernet0")
    elsewhere = finding("QOS-MTU", Severity.CRITICAL, "link:gpu002:eth0--leaf0:Ethernet8")
    symptoms = [
        Symptom(LINK_FLAP, "port:spine1:Ethernet2/1", Endpoint("spine1", "Ethernet2/1"), "x", 10, 20, 5, 5, 1.0),
        Symptom(FEC, "nic:gpu001:mlx5_0", Endpoint("gpu001", "eth0"), "x", 30, 40, 50, 5, 1.0),
        Symptom(FEC, "nic:gpu002:mlx5_1", Endpoint("gpu002", "eth1"), "x", 30, 40, 50, 5, 1.0),
    ]
    incidents = localize(fabric, symptoms)
    [verdict] = judge_jobs(fabric, list(fabric.jobs.values()), [uplink, info, elsewhere], incidents)
    assert verdict.verdict == "incidents"
    assert [(i.root, on) for i, on in verdict.incidents] == [
        ("port:spine1:Ethernet2/1", "path"),
        ("optic:gpu001:eth0", "hosts"),
    ]
    assert verdict.findings == (uplink,) and verdict.notes == (info,)
    doc = verdict.as_dict()
    assert doc["verdict"] == "incidents" and doc["incidents"][0]["on"] == "path"  # type: ignore[index]


def test_a_clean_job_says_what_was_checked_and_an_unknown_host_is_named(fabric: Fabric) -> None:
    job = Job("job:slurm:8", "eval", ("gpu002", "gpu404"))
    [verdict] = judge_jobs(fabric, [job], [finding("QOS-ETS", Severity.WARNING, "nic:gpu002:mlx5_0")], [])
    assert verdict.verdict == "clean" and verdict.notes and not verdict.findings
    checked = verdict.as_dict()["checked"]
    assert checked == {
        "hosts": 1,
        "hosts_without_data": ["gpu404"],
        "fabrics": ["roce"],
        "gpus": 8,
        "nics": 2,
        "links": 2,
        "leaves": ["leaf0", "leaf1"],
        "ecmp_uplinks": 2,
        "telemetry": False,
    }
    [strict] = judge_jobs(
        fabric, [job], [finding("QOS-ETS", Severity.WARNING, "nic:gpu002:mlx5_0")], [], Severity.WARNING
    )
    assert strict.verdict == "findings"
