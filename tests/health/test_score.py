"""Scoring: exact and located matches, precision / recall / F1, time to incident, and impacted jobs."""

from __future__ import annotations

from typing import Any

import pytest
from tests.health.conftest import small_fabric

from unifab.health.baselines import Prediction
from unifab.health.score import Entities, jobs_named, score_jobs, score_roots
from unifab.model import Fabric

START = "2026-11-30T02:00:00Z"
T = 1796004000.0  # START as epoch seconds


def fault(root: str, jobs: list[str], start: str = START) -> dict[str, Any]:
    return {"kind": "x", "root_cause": {"kind": root.split(":", 1)[0], "id": root}, "start": start, "jobs": jobs}


@pytest.fixture
def entities() -> Entities:
    return Entities(small_fabric())


def test_members_of_each_kind(entities: Entities) -> None:
    fabric: Fabric = entities.fabric
    link = next(lk for lk in fabric.links if lk.a.node == "gpu001" and lk.a.port == "eth0")
    assert entities.members(link.id) == {
        link.id,
        "nic:gpu001:mlx5_0",
        "port:leaf0:Ethernet0",
        "optic:gpu001:eth0",
        "optic:leaf0:Ethernet0",
    }
    assert entities.members("optic:gpu001:eth0") == {"optic:gpu001:eth0", "nic:gpu001:mlx5_0", link.id}
    host = entities.members("host:gpu001")
    assert {"nic:gpu001:mlx5_1", "gpu:gpu001:7", "port:leaf1:Ethernet0", link.id} <= host
    assert "nic:gpu002:mlx5_0" not in host
    switch = entities.members("switch:leaf0")
    assert {"port:leaf0:Ethernet64", link.id, "optic:gpu001:eth0"} <= switch
    assert "nic:gpu001:mlx5_0" not in switch  # the far ends of a dead switch are symptoms, not it
    assert entities.members("gpu:gpu001:3") == {"gpu:gpu001:3"}


def test_hosts_and_jobs_an_entity_touches(entities: Entities) -> None:
    assert entities.hosts_of("port:leaf0:Ethernet8") == {"gpu002"}
    assert entities.hosts_of("optic:leaf0:Ethernet0") == {"gpu001"}
    assert entities.hosts_of("switch:leaf1") == {"gpu001", "gpu002"}
    assert entities.hosts_of("switch:spine1") == set()
    assert entities.jobs_of("gpu:gpu001:0") == {"job:slurm:7"}
    assert entities.jobs_of("nic:gpu002:mlx5_0") == set()
    assert jobs_named([Prediction("port:leaf0:Ethernet0", T, ""), Prediction("host:gpu002", T, "")], entities) == {
        "job:slurm:7"
    }


def test_exact_and_located_precision_recall_f1_and_latency(entities: Entities) -> None:
    faults = [fault("optic:gpu001:eth0", ["job:slurm:7"]), fault("switch:leaf1", ["job:slurm:7"])]
    predictions = [
        Prediction("nic:gpu001:mlx5_0", T + 30, "alert"),  # located on the optic, not exact
        Prediction("optic:gpu001:eth0", T + 90, "incident"),
        Prediction("optic:gpu001:eth0", T + 60, "the same root again: one prediction"),
        Prediction("port:leaf1:Ethernet8", T + 120, "a port of the dead leaf"),
        Prediction("nic:gpu002:mlx5_1", T + 120, "a far end of the dead leaf: wrong"),
    ]
    exact = score_roots(predictions, faults, entities, exact=True)
    assert (exact.predictions, exact.correct, exact.found, exact.faults) == (4, 1, 1, 2)
    assert exact.precision == 0.25 and exact.recall == 0.5
    assert exact.f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert exact.latencies == (60.0,) and exact.missed == ("switch:leaf1",)
    located = score_roots(predictions, faults, entities, exact=False)
    assert (located.correct, located.found) == (3, 2)
    assert located.latencies == (30.0, 120.0) and located.median_latency == 75.0
    assert located.wrong == ("nic:gpu002:mlx5_1",)
    pooled = exact.add(located)
    assert (pooled.predictions, pooled.found, pooled.faults) == (8, 3, 4)


def test_no_prediction_and_no_fault(entities: Entities) -> None:
    none = score_roots([], [fault("host:gpu001", [])], entities, exact=True)
    assert none.precision == 1.0 and none.recall == 0.0 and none.f1 == 0.0 and none.median_latency is None
    clean = score_roots([Prediction("host:gpu001", T, "")], [], entities, exact=True)
    assert clean.precision == 0.0 and clean.recall == 1.0


def test_jobs_missed_and_unaffected() -> None:
    faults = [fault("host:gpu001", ["job:a", "job:b"]), fault("host:gpu002", [])]
    score = score_jobs({"job:b", "job:c"}, faults)
    assert score.missed == {"job:a"} and score.unaffected == {"job:c"}
    assert score.precision == 0.5 and score.recall == 0.5 and score.f1 == 0.5
    perfect = score_jobs({"job:a", "job:b"}, faults)
    assert perfect.f1 == 1.0 and not perfect.missed and not perfect.unaffected
