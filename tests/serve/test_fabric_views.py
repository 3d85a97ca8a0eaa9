"""The fabric index behind links, jobs and topology, on fabrics built from model records: both ends side by
side, what differs, findings folded by entity, paging, and the job verdict."""

from __future__ import annotations

from fabric_factory import FabricFactory, make_fabric

from unifab.api import run_checks
from unifab.model import Finding, Job, Severity
from unifab.serve.fabric_views import FabricIndex, compare_ends, job_verdict

__all__ = ["make_fabric"]


def _rows(fabric_rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(r["field"]): r for r in fabric_rows}


def test_matching_ends_differ_nowhere(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(2)
    lk = fabric.links[0]
    rows = _rows(compare_ends(fabric.nic_at(lk.a), fabric.port_at(lk.b)))
    assert not any(r["differs"] for r in rows.values())
    assert (rows["mtu"]["a"], rows["mtu"]["b"]) == (9000, 9100)  # a NIC's IP MTU below the port's frame size
    assert rows["pfc_enabled"]["a"] == rows["pfc_enabled"]["b"] == [3]


def test_what_differs_between_a_nic_and_its_port(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(
        2,
        nic={0: {"mtu": 9216, "speed_mbps": 400000}},
        nic_qos={0: {"trust": "pcp", "pfc_enabled": frozenset({3, 4}), "ecn_np_enabled": frozenset()}},
        port={0: {"speed_mbps": 200000}},
    )
    lk = fabric.links[0]
    rows = _rows(compare_ends(fabric.nic_at(lk.a), fabric.port_at(lk.b)))
    assert {f for f, r in rows.items() if r["differs"]} == {"mtu", "trust", "pfc_enabled", "ecn", "speed_mbps"}
    # the port side first: the same judgement
    swapped = _rows(compare_ends(fabric.port_at(lk.b), fabric.nic_at(lk.a)))
    assert {f for f, r in swapped.items() if r["differs"]} == {f for f, r in rows.items() if r["differs"]}
    assert rows["state"]["differs"] is False and compare_ends(None, None)[0]["differs"] is False


def test_the_index_folds_findings_onto_links_and_pages(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(8, nic_qos={2: {"pfc_enabled": frozenset({4})}})
    findings = run_checks(fabric)
    index = FabricIndex.build((1,), fabric, findings)
    bad = next(lk for lk in fabric.links if lk.a.node == "gpu003")
    on_bad = index.link_findings(bad)
    assert on_bad and all(bad.id in f.entities or "nic:gpu003:mlx5_0" in f.entities for f in on_bad)
    detail = index.link_detail(bad)
    assert detail["severity"] == max((f.severity for f in on_bad), key=lambda s: s.rank).value
    assert _rows(detail["compare"])["pfc_enabled"]["differs"] is True
    seen, cursor = [], None
    while True:
        items, cursor = index.page_links(device=None, flagged=False, severity=None, kind=None, cursor=cursor, limit=3)
        seen += [i["id"] for i in items]
        if cursor is None:
            break
    assert seen == sorted(lk.id for lk in fabric.links)
    flagged, _ = index.page_links(device=None, flagged=True, severity=None, kind=None, cursor=None, limit=100)
    assert [i["id"] for i in flagged] == [bad.id]
    mine, _ = index.page_links(device="host:gpu003", flagged=False, severity=None, kind=None, cursor=None, limit=9)
    assert [i["id"] for i in mine] == [bad.id]
    nodes, edges, _ = index.graph("gpu003", None, 10)
    assert {n["id"] for n in nodes} == {"host:gpu003", "switch:leaf1"} and [e["id"] for e in edges] == [bad.id]
    assert next(n for n in nodes if n["id"] == "host:gpu003")["severity"] == detail["severity"]


def test_a_job_sees_only_its_network(make_fabric: FabricFactory) -> None:
    fabric = make_fabric(8, nic_qos={2: {"pfc_enabled": frozenset({4})}})
    fabric.jobs["job:slurm:1"] = Job("job:slurm:1", "a", ("gpu001", "gpu002"))
    fabric.jobs["job:slurm:2"] = Job("job:slurm:2", "b", ("gpu003",))
    index = FabricIndex.build((1,), fabric, run_checks(fabric))
    clean, broken = index.fabric.jobs["job:slurm:1"], index.fabric.jobs["job:slurm:2"]
    assert index.job_findings(clean) == run_checks(fabric, job="1")
    assert index.job_findings(broken) == run_checks(fabric, job="2") != []
    assert index.find_job("slurm:2") is broken and index.find_job("nope") is None
    items, cursor = index.page_jobs(None, 1)
    assert [j["id"] for j in items] == ["job:slurm:1"] and cursor is not None
    assert [j["id"] for j in index.page_jobs(cursor, 1)[0]] == ["job:slurm:2"]
    assert index.job_detail(broken, 10)["leaves"] == ["leaf1"]


def _finding(severity: Severity, check: str = "QOS-X") -> Finding:
    return Finding(check, severity, {"kind": "link"}, "m")


def test_the_verdict() -> None:
    assert job_verdict([])["network"] == "unlikely"
    assert job_verdict([_finding(Severity.INFO)])["network"] == "unlikely"
    assert job_verdict([_finding(Severity.WARNING)])["network"] == "possible"
    likely = job_verdict([_finding(Severity.WARNING), _finding(Severity.ERROR, "QOS-MTU")])
    assert likely["network"] == "likely" and "QOS-MTU" in likely["summary"]
