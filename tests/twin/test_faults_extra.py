"""The twin's switch-side NCCL faults: errors across a leaf's uplinks (ECMP), silent or with one uplink's optic
erroring, their truth (root cause, the uplink the twin broke, the jobs whose paths may cross it) and noise across
leaves that must not look like them. Scored through ``unifab health`` at two sizes (two seeds at 256 GPUs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.health.test_twin_faults import health

from unifab.collect.bundle import load_bundle
from unifab.health.events import read_events
from unifab.health.series import intervals, read_bundle
from unifab.model import Fabric
from unifab.sources import as_source_path
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate

KINDS = ("nccl-leaf-uplinks", "nccl-uplink-optic", "nccl-bad-link", "optic-dirty", "link-flap")


@pytest.fixture(
    scope="module",
    params=[(256, 8, 3), (256, 8, 8), (512, 16, 2)],
    ids=["256gpu-seed3", "256gpu-seed8", "512gpu-seed2"],
)
def twin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    gpus, su, seed = request.param
    out = tmp_path_factory.mktemp("uplinks") / "b"
    generate(out, gpus, seed, su_hosts=su)
    # twice each: two leaves with errors across their uplinks in one bundle, apart from each other
    return out, write_faults(out, 2 * len(KINDS), seed, kinds=KINDS)


def leaf_of(fabric: Fabric) -> dict[str, str]:
    """RoCE IPv4 of every host NIC -> its leaf."""
    out = {}
    for link in fabric.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            nic = fabric.nic_at(near)
            if nic is not None and far.node in fabric.switches:
                out.update({g.ipv4: far.node for g in nic.gids if g.ipv4})
    return out


def test_each_fault_is_one_incident_with_its_root_start_and_jobs_and_nothing_else(
    twin: tuple[Path, list[dict[str, Any]]],
) -> None:
    bundle, faults = twin
    result = health(bundle)
    assert {(i.kind, i.root) for i in result.incidents} == {
        (f["root_cause"]["kind"], f["root_cause"]["id"]) for f in faults
    }
    by_root = {i.root: i for i in result.incidents}
    for fault in faults:
        incident = by_root[fault["root_cause"]["id"]]
        assert list(incident.jobs) == fault["jobs"], fault
        if fault["kind"] == "nccl-uplink-optic":  # the optic's counters and NCCL's errors: one incident
            assert {s.detector for s in incident.symptoms} == {"HEALTH-FEC", "HEALTH-NCCL-ERROR"}
        if fault["kind"] == "nccl-leaf-uplinks":
            assert incident.hosts == () and any("which uplink" in n for n in incident.not_explained)


def test_the_truth_names_the_leaf_its_broken_uplink_and_every_job_whose_pairs_may_cross_it(
    twin: tuple[Path, list[dict[str, Any]]],
) -> None:
    bundle, faults = twin
    fabric = load_bundle(bundle)
    for fault in (f for f in faults if f["kind"] == "nccl-leaf-uplinks"):
        leaf = fault["root_cause"]["id"].removeprefix("switch:")
        assert leaf in fault["uplink"] and "spine" in fault["uplink"]
        # every host of the leaf's SU has a NIC on it; the twin's jobs hold whole hosts: a job with two hosts, one in
        # the SU, can run a rank pair from this leaf to another rail's leaf, across the spines
        under = {lk.a.node for lk in fabric.links if lk.b.node == leaf} | {
            lk.b.node for lk in fabric.links if lk.a.node == leaf
        }
        expected = sorted(j.id for j in fabric.jobs.values() if len(set(j.hosts)) >= 2 and under & set(j.hosts))
        assert fault["jobs"] == expected and expected


def test_the_errors_cross_the_leaf_from_four_nics_each_with_one_peer_from_both_sides(
    twin: tuple[Path, list[dict[str, Any]]],
) -> None:
    bundle, faults = twin
    fabric = load_bundle(bundle)
    leaves = leaf_of(fabric)
    events = read_events(as_source_path(bundle), fabric, 2026)
    pairs: dict[tuple[str, str], int] = {}
    uplink_pairs: set[tuple[str, str]] = set()  # the uplink faults' lines (their processes: pids 5000-5007)
    for r in events.nccl:
        key = (str(r.error.local_gid).removeprefix("::ffff:"), str(r.error.remote_gid).removeprefix("::ffff:"))
        pairs[key] = pairs.get(key, 0) + 1
        if 5000 <= r.error.pid < 5008:
            uplink_pairs.add(key)
    for fault in (f for f in faults if f["kind"] == "nccl-leaf-uplinks"):
        leaf = fault["root_cause"]["id"].removeprefix("switch:")
        mine = {(a, b) for a, b in uplink_pairs if leaves[a] == leaf}
        near = {a for a, _ in mine}
        assert len(near) == 4 and len({leaves[b] for _, b in mine} - {leaf}) >= 2
        assert all((b, a) in pairs for a, b in mine)  # both sides report
        assert all(sum(1 for x, _ in mine if x == a) == 1 for a in near)  # one peer each: no NIC's link to blame
    # noise: one NIC reports two peers on two other leaves, who report nothing back
    one_sided = [(a, b) for a, b in pairs if (b, a) not in pairs]
    spread = {a for a, _ in one_sided if len({leaves[b] for x, b in one_sided if x == a} - {leaves[a]}) >= 2}
    assert spread


STORM_KINDS = ("pfc-storm", "ecn-absent", "link-flap")


@pytest.mark.parametrize(("gpus", "su", "seed"), [(128, 4, 2), (128, 4, 7)], ids=["128gpu-seed2", "128gpu-seed7"])
def test_a_pfc_storm_from_a_stuck_receiver_is_that_nic_with_the_spread_in_its_incident(
    tmp_path: Path, gpus: int, su: int, seed: int
) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus, seed, su_hosts=su)
    faults = write_faults(bundle, 2 * len(STORM_KINDS), seed, kinds=STORM_KINDS)
    storms = [f for f in faults if f["kind"] == "pfc-storm"]
    assert len(storms) == 2 and all(f["root_cause"]["kind"] == "nic" for f in storms)
    fabric = load_bundle(bundle)
    store = read_bundle(as_source_path(bundle), fabric)
    for fault in storms:
        [nic] = [n for h in fabric.hosts.values() for n in h.nics.values() if n.id == fault["root_cause"]["id"]]
        assert fault["hosts"] == [nic.host]
        assert fault["jobs"] == sorted(j.id for j in fabric.jobs.values() if nic.host in j.hosts)
        sent = store.series[(nic.id, "pause_tx_us", "3")]  # the RoCE priority
        shares = [r / 1e6 for i in intervals(sent) if (r := i.rate) is not None]
        assert max(shares) >= 0.8 and sum(1 for s in shares if s >= 0.8) >= 10
        link = next(lk for lk in fabric.links if nic.endpoint in (lk.a, lk.b))
        leaf = link.b if link.a == nic.endpoint else link.a
        paused = store.series[(f"port:{leaf.node}:{leaf.port}", "pause_rx_us", "3")]
        rx = [r / 1e6 for i in intervals(paused) if (r := i.rate) is not None]
        assert max(rx) >= 0.75
        om = (bundle / "telemetry" / f"{leaf.node}.om").read_text()
        assert f'unifab_port_queue_occupancy_bytes{{instance="{leaf.node}",interface="{leaf.port}",queue="3"}}' in om
    result = health(bundle)
    assert {(i.kind, i.root) for i in result.incidents} == {
        (f["root_cause"]["kind"], f["root_cause"]["id"]) for f in faults
    }
    by_root = {i.root: i for i in result.incidents}
    for fault in storms:
        incident = by_root[fault["root_cause"]["id"]]
        assert list(incident.jobs) == fault["jobs"] and incident.actions[0].kind == "drain"
        upstream = [s for s in incident.symptoms if s.entity.startswith("port:")]
        assert upstream and {s.detector for s in incident.symptoms} == {"HEALTH-PFC-STORM"}  # the leaf's uplinks
        assert "spread upstream" in incident.summary
        [watchdog] = [s for s in incident.symptoms if s.counter == "pfcwd_storms{3}"]  # the leaf's, on the NIC
        [nic] = [n for h in fabric.hosts.values() for n in h.nics.values() if n.id == fault["root_cause"]["id"]]
        leaf = next(lk.b if lk.a == nic.endpoint else lk.a for lk in fabric.links if nic.endpoint in (lk.a, lk.b))
        assert watchdog.entity == nic.id and watchdog.notes[0].startswith(f"{leaf.node} {leaf.port} queue 3: ")
    # a per-port alert rule fires on every one of those uplinks: they are symptoms, not causes
    pausing = {s.entity for s in result.symptoms if s.detector == "HEALTH-PFC-STORM"}
    assert len(pausing) > len(storms)


def test_faults_written_again_start_from_the_bundle_as_it_was(tmp_path: Path) -> None:
    """An optic-dom fault rewrites that NIC's ethtool -m (the original kept under twin-originals/); faults written
    again on the same bundle put it back first, so the last run's alarmed module is no incident of the next."""
    bundle = tmp_path / "b"
    generate(bundle, 64, 3, su_hosts=2)
    [dom] = write_faults(bundle, 1, 3, kinds=["optic-dom"])
    _, host, netdev = dom["root_cause"]["id"].split(":")
    rel = f"hosts/{host}/cmd/ethtool-m/{netdev}.txt"
    original = (bundle / "twin-originals" / rel).read_text()
    assert (bundle / rel).read_text() != original
    [flap] = write_faults(bundle, 1, 4, kinds=["link-flap"])
    assert (bundle / rel).read_text() == original and not (bundle / "twin-originals").exists()
    assert {i.root for i in health(bundle).incidents} == {flap["root_cause"]["id"]}
