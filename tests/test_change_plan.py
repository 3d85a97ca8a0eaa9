"""Change waves keep running jobs and redundancy up: property-tested against an independent oracle.

The oracle reads a plan/cabling.csv itself (the twin's, two tiers; and a three-tier fabric with super-spines,
single-homed leaves and spines, and dual-homed hosts that :func:`_three_tier` draws here) and checks every wave
of plans made for random selections and random job placements; it shares no code with the planner. Its tiers
are hop counts from the hosts, its paths any chain of switches above the leaves (union-find, not the planner's
up-walk), and its redundancy groups the switches one tier above each switch, at every tier.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from unifab.api import load_snapshot
from unifab.change_plan import plan_change, select
from unifab.cli.plan_change import plan_change_command
from unifab.errors import UsageError
from unifab.model import Endpoint, Fabric, Host, Job, Link, Nic, Port, Switch
from unifab.twin.generate import generate


@dataclasses.dataclass(frozen=True)
class Cabling:
    """The oracle's own reading of a cabling.csv: who is cabled to whom, nothing more."""

    hosts: frozenset[str]
    adj: dict[str, frozenset[str]]

    @classmethod
    def read(cls, path: Path) -> Cabling:
        adj: dict[str, set[str]] = defaultdict(set)
        hosts: set[str] = set()
        with path.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                a, z = row["a_node"], row["z_node"]
                adj[a].add(z)
                adj[z].add(a)
                hosts |= {n for n in (a, z) if n.startswith("gpu")}
        return cls(frozenset(hosts), {k: frozenset(v) for k, v in adj.items()})

    @property
    def leaves(self) -> frozenset[str]:
        return frozenset(n for h in self.hosts for n in self.adj[h])

    def hop(self) -> dict[str, int]:
        """Hops from the nearest host: 1 leaf, 2 spine, 3 super-spine."""
        dist = dict.fromkeys(self.hosts, 0)
        queue = sorted(self.hosts)
        while queue:
            node = queue.pop(0)
            for n in sorted(self.adj[node]):
                if n not in dist:
                    dist[n] = dist[node] + 1
                    queue.append(n)
        return dist

    def groups(self) -> list[tuple[str, frozenset[str]]]:
        """Never all down together: the switches one tier above each switch; the same-rail ToRs of a host."""
        hop = self.hop()
        out = []
        for node, t in hop.items():
            above = frozenset(n for n in self.adj[node] if hop.get(n) == t + 1)
            if t >= 1 and len(above) > 1:
                out.append((f"above {node}", above))
        for h in self.hosts:
            by_rail: dict[str, set[str]] = defaultdict(set)
            for leaf in self.adj[h]:
                by_rail[re.sub(r".*-r(\d+)$", r"\1", leaf)].add(leaf)
            out += [(f"rail {r} of {h}", frozenset(v)) for r, v in by_rail.items() if len(v) > 1]
        return out

    def core_parts(self, down: set[str]) -> dict[str, str]:
        """Union-find over the switches above the leaves, without ``down``: switch -> its part's root."""
        core = [n for n in self.adj if n not in self.hosts and n not in self.leaves and n not in down]
        root = {n: n for n in core}

        def find(n: str) -> str:
            while root[n] != n:
                root[n] = root[root[n]]
                n = root[n]
            return n

        for n in core:
            for m in self.adj[n]:
                if m in root:
                    root[find(n)] = find(m)
        return {n: find(n) for n in core}

    def linked(self, a: str, b: str, parts: dict[str, str], down: set[str]) -> bool:
        """A path from leaf ``a`` to leaf ``b`` through switches above the leaves, none of them down."""
        if a in down or b in down:
            return False
        ra = {parts[n] for n in self.adj[a] if n in parts}
        return any(parts[n] in ra for n in self.adj[b] if n in parts)


def _hurts(cabling: Cabling, job: Job, down: set[str]) -> bool:
    if any(h in down or cabling.adj[h] & down for h in job.hosts):
        return True
    leaves = sorted({n for h in job.hosts for n in cabling.adj[h]})
    full, now = cabling.core_parts(set()), cabling.core_parts(down)
    pairs = [(a, b) for i, a in enumerate(leaves) for b in leaves[i + 1 :] if cabling.linked(a, b, full, set())]
    return any(not cabling.linked(a, b, now, down) for a, b in pairs)


def _oracle(cabling: Cabling, jobs: list[Job], allow: set[str], selected: list[str], plan: object, n: int) -> None:
    waves = plan.waves  # type: ignore[attr-defined]
    blocked = {b.device for b in plan.blocked}  # type: ignore[attr-defined]
    placed = [d for w in waves for d in w.devices]
    assert sorted(placed + sorted(blocked)) == sorted(selected)  # each device exactly once
    assert len(set(placed)) == len(placed)
    groups = cabling.groups()
    for wave in waves:
        down = set(wave.devices)
        assert 1 <= len(down) <= n
        for job in jobs:
            if _hurts(cabling, job, down):
                assert job.id in allow, (wave, job)
                assert set(job.hosts) <= set(wave.drain_hosts) and job.id in wave.drained_jobs
        for why, members in groups:
            assert not members <= down, f"all of {why} ({sorted(members)}) down in wave {wave.index}"
        assert down & cabling.hosts <= set(wave.drain_hosts)
    for device in blocked:
        assert any(job.id not in allow and _hurts(cabling, job, {device}) for job in jobs), device


Case = tuple[Path, Fabric, Cabling]


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Case:
    out = tmp_path_factory.mktemp("waves") / "bundle"
    generate(out, gpus=256, seed=9, su_hosts=8)  # 32 hosts in 4 SUs, 32 leaves, 8 spines
    return out, load_snapshot(out).fabric, Cabling.read(out / "plan" / "cabling.csv")


def _three_tier(out: Path) -> Fabric:
    """Two pods under two super-spines, written as out/plan/cabling.csv and returned as the fabric LLDP saw.

    Each pod: 4 hosts on leaves leaf-pP-suU-rR (2 SUs, 2 rails) and 2 dual-homed hosts whose rail-0 NICs go to
    two ToRs (leaf-pP-dh-a-r0 and -b-r0); 3 spines. Every leaf uplinks to every spine of its pod but
    leaf-pP-su2-r1, which has spine-pP-1 only; every spine to both super-spines but spine-p2-3 (ss2 only).
    """
    rows: list[tuple[str, str, str, str]] = []
    used: dict[str, int] = defaultdict(int)

    def cable(a: str, b: str, a_port: str | None = None) -> None:
        pa = a_port or f"Ethernet{8 * used[a]}"
        used[a] += 1
        rows.append((a, pa, b, f"Ethernet{8 * used[b]}"))
        used[b] += 1

    nics: dict[str, list[str]] = defaultdict(list)
    n = 0
    for pod in (1, 2):
        spines = [f"spine-p{pod}-{k}" for k in (1, 2, 3)]
        leaves = [f"leaf-p{pod}-su{su}-r{r}" for su in (1, 2) for r in (0, 1)] + [
            f"leaf-p{pod}-dh-{x}-r0" for x in "ab"
        ]
        for su in (1, 2):
            for _slot in range(2):
                n += 1
                for r in (0, 1):
                    nics[f"gpu{n:03d}"].append(f"eth{r}")
                    cable(f"gpu{n:03d}", f"leaf-p{pod}-su{su}-r{r}", f"eth{r}")
        for _slot in range(2):
            n += 1
            for i, x in enumerate("ab"):
                nics[f"gpu{n:03d}"].append(f"eth{i}")
                cable(f"gpu{n:03d}", f"leaf-p{pod}-dh-{x}-r0", f"eth{i}")
        for leaf in leaves:
            for spine in spines[:1] if leaf == f"leaf-p{pod}-su2-r1" else spines:
                cable(leaf, spine)
        for spine in spines:
            for ss in ("ss2",) if spine == "spine-p2-3" else ("ss1", "ss2"):
                cable(spine, ss)
    (out / "plan").mkdir(parents=True)
    with (out / "plan" / "cabling.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a_node", "a_port", "z_node", "z_port", "cable_m"])
        writer.writerows([*row, 3] for row in rows)
    hosts = {
        h: Host(h, {nic: Nic(h, nic, f"mlx5_{i}", 9000, None) for i, nic in enumerate(names)})
        for h, names in nics.items()
    }
    ports: dict[str, dict[str, Port]] = defaultdict(dict)
    for a, pa, b, pb in rows:
        for node, port in ((a, pa), (b, pb)):
            if node not in hosts:
                ports[node][port] = Port(node, port, 9100, 400_000, "up", None)
    switches = {s: Switch(s, "sonic", f"switches/{s}/config_db.json", p) for s, p in ports.items()}
    seen = frozenset({"lldp", "plan"})
    links = [Link(Endpoint(a, pa), Endpoint(b, pb), seen) for a, pa, b, pb in rows]
    return Fabric(hosts=hosts, switches=switches, links=links)


@pytest.fixture(scope="module")
def tiers3(tmp_path_factory: pytest.TempPathFactory) -> Case:
    out = tmp_path_factory.mktemp("tiers3")
    fabric = _three_tier(out)
    return out, fabric, Cabling.read(out / "plan" / "cabling.csv")


def _property(case: Case, data: st.DataObject, whole: str) -> None:
    _bundle, fabric, cabling = case
    hosts = sorted(fabric.hosts)
    n_jobs = data.draw(st.integers(0, 5), "jobs")
    jobs = [
        Job(f"job:slurm:{2000 + i}", None, tuple(sorted(data.draw(st.sets(st.sampled_from(hosts), min_size=1)))))
        for i in range(n_jobs)
    ]
    allow = {j.id for j in jobs if data.draw(st.booleans(), f"drain {j.id}")}
    devices = sorted([*fabric.switches, *fabric.hosts])
    chosen = data.draw(st.sets(st.sampled_from(devices), min_size=1, max_size=24), "devices")
    if data.draw(st.booleans(), "a whole tier too"):  # redundancy groups whole in the selection
        chosen |= {s for s in fabric.switches if re.match(whole, s)}
    selected = sorted(chosen)
    n = data.draw(st.integers(1, 40), "max_parallel")
    scenario = dataclasses.replace(fabric, jobs={j.id: j for j in jobs})
    plan = plan_change(scenario, selected, max_parallel=n, allow_drain=[j.rsplit(":", 1)[1] for j in allow])
    _oracle(cabling, jobs, allow, selected, plan, n)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_waves_keep_jobs_and_redundancy(twin: Case, data: st.DataObject) -> None:
    _property(twin, data, r"spine")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_three_tiers_keep_jobs_and_redundancy_at_every_tier(tiers3: Case, data: st.DataObject) -> None:
    _property(tiers3, data, data.draw(st.sampled_from([r"ss", r"spine-p1", r"spine", r"leaf-p2"]), "tier"))


def test_the_oracle_sees_three_tiers(tiers3: Case) -> None:
    """The fixture is what the property test needs: super-spine groups, a cross-pod path, a single-path pair."""
    _out, _fabric, cabling = tiers3
    groups = dict(cabling.groups())
    assert groups["above spine-p1-1"] == {"ss1", "ss2"} and "above spine-p2-3" not in groups
    assert groups["rail 0 of gpu005"] == {"leaf-p1-dh-a-r0", "leaf-p1-dh-b-r0"}
    cross = Job("job:slurm:1", None, ("gpu001", "gpu007"))
    assert not _hurts(cabling, cross, {"ss1"}) and _hurts(cabling, cross, {"ss1", "ss2"})
    assert _hurts(cabling, Job("job:slurm:2", None, ("gpu001", "gpu003")), {"spine-p1-1"})  # su2-r1: one uplink


def test_all_spines_never_down_together(twin: Case) -> None:
    _bundle, fabric, cabling = twin
    spines = select(fabric, ["spine*"])
    plan = plan_change(dataclasses.replace(fabric, jobs={}), spines, max_parallel=len(spines))
    assert len(plan.waves) == 2 and not plan.blocked  # one spine must stay up: two waves at least
    _oracle(cabling, [], set(), spines, plan, len(spines))


def test_a_spine_with_peers_needs_no_drain(twin: Case) -> None:
    """Every twin leaf reaches all 8 spines: one spine down leaves a job across leaves its paths."""
    _bundle, fabric, _cabling = twin
    job = next(iter(fabric.jobs.values()))
    plan = plan_change(fabric, ["spine01"])  # the twin's job 1001 runs
    assert [(w.devices, w.drained_jobs) for w in plan.waves] == [(("spine01",), ())] and not plan.blocked
    assert len({s for h in job.hosts for s in _cabling.adj[h]}) > 1


def _sw(name: str, ports: int) -> Switch:
    return Switch(
        name,
        "sonic",
        "x",
        {f"Ethernet{8 * i}": Port(name, f"Ethernet{8 * i}", 9100, 400_000, "up", None) for i in range(ports)},
    )


def _cables(pairs: list[tuple[str, str]], seen: frozenset[str] = frozenset({"lldp"})) -> list[Link]:
    used: dict[str, int] = defaultdict(int)
    out = []
    for a, b in pairs:
        pa = "eth0" if a.startswith("gpu") else f"Ethernet{8 * used[a]}"
        out.append(Link(Endpoint(a, pa), Endpoint(b, f"Ethernet{8 * used[b]}"), seen))
        used[a] += 1
        used[b] += 1
    return out


def _small(pairs: list[tuple[str, str]], jobs: dict[str, Job], unseen: tuple[tuple[str, str], ...] = ()) -> Fabric:
    hosts = {h: Host(h, {"eth0": Nic(h, "eth0", "mlx5_0", 9000, None)}) for h in ("gpu1", "gpu2")}
    names = sorted({n for pair in pairs for n in pair} - set(hosts))
    links = _cables(pairs) + _cables(list(unseen), frozenset({"plan"}))
    return Fabric(hosts=hosts, switches={n: _sw(n, 8) for n in names}, links=links, jobs=jobs)


JOB = {"job:slurm:1": Job("job:slurm:1", None, ("gpu1", "gpu2"))}
HOSTS = [("gpu1", "leaf-su1-r0"), ("gpu2", "leaf-su2-r0")]


def test_a_spine_on_a_jobs_only_path_blocks_or_drains_it() -> None:
    """Two leaves with one uplink each, to spine1: the job across them has no other path."""
    fabric = _small([*HOSTS, ("leaf-su1-r0", "spine1"), ("leaf-su2-r0", "spine1")], JOB)
    plan = plan_change(fabric, ["spine1"])
    assert not plan.waves and [b.device for b in plan.blocked] == ["spine1"]
    reason = plan.blocked[0].reason
    assert "job job:slurm:1 loses every path between leaf-su1-r0 and leaf-su2-r0" in reason
    assert "--allow-drain 1" in reason
    drained = plan_change(fabric, ["spine1"], allow_drain=["1"])
    assert [(w.devices, w.drain_hosts, w.drained_jobs) for w in drained.waves] == [
        (("spine1",), ("gpu1", "gpu2"), ("job:slurm:1",))
    ]
    assert plan_change(dataclasses.replace(fabric, jobs={}), ["spine1"]).waves[0].drained_jobs == ()


def test_two_spines_that_each_keep_the_path_go_in_two_waves() -> None:
    """Each spine alone is fine for the job; both together cut it, so they never share a wave."""
    up = [(leaf, s) for leaf in ("leaf-su1-r0", "leaf-su2-r0") for s in ("spine1", "spine2")]
    plan = plan_change(_small([*HOSTS, *up], JOB), ["spine1", "spine2"], max_parallel=2)
    assert [w.devices for w in plan.waves] == [("spine1",), ("spine2",)]
    assert all(w.drained_jobs == () for w in plan.waves) and not plan.blocked


def test_super_spines_are_spread_and_pods_keep_a_path() -> None:
    """3 tiers: pods of two spines each under ss1 and ss2, a job across the pods."""
    up = [("leaf-su1-r0", "s1a"), ("leaf-su1-r0", "s1b"), ("leaf-su2-r0", "s2a"), ("leaf-su2-r0", "s2b")]
    up += [(s, ss) for s in ("s1a", "s1b", "s2a", "s2b") for ss in ("ss1", "ss2")]
    fabric = _small([*HOSTS, *up], JOB)
    plan = plan_change(fabric, ["ss1", "ss2", "s1a", "s2a"], max_parallel=4)
    assert [w.devices for w in plan.waves] == [("s1a", "s2a", "ss1"), ("ss2",)]  # super-spines first
    assert not plan.blocked and all(w.drained_jobs == () for w in plan.waves)
    single = _small([*HOSTS, *up[:3], *up[4:]], JOB)  # leaf-su2-r0 reaches s2a only
    blocked = plan_change(single, ["s2a"])
    assert "loses every path between leaf-su1-r0 and leaf-su2-r0" in blocked.blocked[0].reason


def test_a_leaf_with_one_working_uplink_keeps_it() -> None:
    """leaf-su1-r0's uplink to spine2 is planned but not seen: spine1 is its only working uplink."""
    up = [("leaf-su1-r0", "spine1"), ("leaf-su2-r0", "spine1"), ("leaf-su2-r0", "spine2")]
    fabric = _small([*HOSTS, *up], {}, unseen=(("leaf-su1-r0", "spine2"),))
    plan = plan_change(fabric, ["spine1", "spine2"], max_parallel=2)
    assert [w.devices for w in plan.waves] == [("spine2",)]
    assert [b.device for b in plan.blocked] == ["spine1"]
    assert "only working member of the uplinks of leaf-su1-r0 (spine2 not seen" in plan.blocked[0].reason


def _dual_homed() -> Fabric:
    """gpu1's rail-0 NIC pair goes to two ToRs (leaf-a-r0, leaf-b-r0): they may not both be down."""
    nics = {n: Nic("gpu1", n, f"mlx5_{i}", 9000, None) for i, n in enumerate(("eth0", "eth1"))}
    leaves = {
        s: Switch(s, "sonic", "x", {"Ethernet0": Port(s, "Ethernet0", 9100, 400_000, "up", None)})
        for s in ("leaf-a-r0", "leaf-b-r0")
    }
    links = [
        Link(Endpoint("gpu1", "eth0"), Endpoint("leaf-a-r0", "Ethernet0"), frozenset({"lldp"})),
        Link(Endpoint("gpu1", "eth1"), Endpoint("leaf-b-r0", "Ethernet0"), frozenset({"lldp"})),
    ]
    return Fabric(hosts={"gpu1": Host("gpu1", nics)}, switches=leaves, links=links)


def test_dual_homed_tors_are_spread() -> None:
    plan = plan_change(_dual_homed(), ["leaf-a-r0", "leaf-b-r0"], max_parallel=2)
    assert [w.devices for w in plan.waves] == [("leaf-a-r0",), ("leaf-b-r0",)]


def test_selector_and_drain_errors(twin: tuple[Path, Fabric, Cabling]) -> None:
    _bundle, fabric, _cabling = twin
    with pytest.raises(UsageError, match="matches no device"):
        select(fabric, ["nope*"])
    with pytest.raises(UsageError, match=r"expected \[host:\|switch:\]GLOB"):
        select(fabric, ["rack:gpu*"])
    assert select(fabric, ["host:gpu00[1-2]", "switch:spine01"]) == ["gpu001", "gpu002", "spine01"]
    with pytest.raises(UsageError, match="no running job"):
        plan_change(fabric, ["gpu001"], allow_drain=["424242"])
    with pytest.raises(UsageError, match="at least 1"):
        plan_change(fabric, ["gpu001"], max_parallel=0)


def test_cli_plan_file_and_exit_codes(twin: tuple[Path, Fabric, Cabling], tmp_path: Path) -> None:
    bundle, fabric, _cabling = twin
    app = typer.Typer()
    app.command()(plan_change_command)
    runner = CliRunner()
    job = next(iter(fabric.jobs.values()))
    leaf = sorted(select(fabric, ["leaf-*"]))[0]
    host = job.hosts[0]
    out = tmp_path / "plan.json"
    blocked = runner.invoke(app, [str(bundle), "--devices", host, "--out", str(out), "-q"])
    assert blocked.exit_code == 1, blocked.output
    doc = json.loads(out.read_text())
    assert doc["format"] == "unifab-change-plan/2" and doc["waves"] == []
    assert job.id in doc["blocked"][0]["reason"] and "--allow-drain" in doc["blocked"][0]["reason"]
    short = job.id.rsplit(":", 1)[1]
    ok = runner.invoke(app, [str(bundle), "--devices", f"{host},{leaf}", "--allow-drain", short, "--out", "-", "-q"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    drain = [c["command"] for w in doc["waves"] for c in w["before"] if c["argv"][:2] == ["scontrol", "update"]]
    assert drain and all("State=DRAIN" in c for c in drain)
    after = [c["command"] for w in doc["waves"] for c in w["after"]]
    assert any(c.startswith("scontrol update") and "State=RESUME" in c for c in after)
    k8s = runner.invoke(
        app, [str(bundle), "--devices", host, "--allow-drain", "all", "--scheduler", "kubernetes", "--out", "-", "-q"]
    )
    assert k8s.exit_code == 0 and f"kubectl drain {host} " in k8s.stdout and f"kubectl uncordon {host}" in k8s.stdout
    assert runner.invoke(app, [str(bundle), "--devices", "x", "--scheduler", "pbs"]).exit_code == 2
    assert "Example: unifab plan-change" in runner.invoke(app, ["--help"]).output


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(plan_change_command)
    return app


def test_wave_steps_are_commands_and_name_what_is_not_rendered(twin: Case, tmp_path: Path) -> None:
    """A rendered switch gets its apply command, an unrendered one the exact `unifab render` to run first."""
    bundle, fabric, _cabling = twin
    rendered = tmp_path / "my rendered"
    (rendered / "switches" / "spine01").mkdir(parents=True)
    (rendered / "switches" / "spine01" / "patch.json").write_text("[]\n")
    (rendered / "switches" / "spine01" / "changes.diff").write_text("")
    (rendered / "hosts" / "gpu009").mkdir(parents=True)
    (rendered / "hosts" / "gpu009" / "nic-plan.json").write_text("{}\n")
    job = fabric.jobs["job:slurm:1002"]  # on gpu009-gpu016
    args = [str(bundle), "--devices", "spine01,spine02,gpu009", "--max-parallel", "2", "--rendered", str(rendered)]
    args += ["--inventory", str(tmp_path / "inv.yaml"), "--allow-drain", job.id]
    result = CliRunner().invoke(_app(), [*args, "--out", "-", "-q"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [w["devices"] for w in doc["waves"]] == [["spine01", "spine02"], ["gpu009"]]
    spines, host = doc["waves"]
    check = ["unifab", "check", str(bundle)]
    assert [s["argv"] for s in spines["before"]] == [check]  # nothing to drain: the spines have peers
    by_device = {c["device"]: c for c in spines["change"]}
    apply = by_device["spine01"]
    assert apply["on"] == "spine01" and apply["argv"] == ["sudo", "config", "apply-patch", "patch.json"]
    assert apply["files"] == [str(rendered / "switches" / "spine01" / "patch.json")]
    assert apply["diff"] == str(rendered / "switches" / "spine01" / "changes.diff")
    render = by_device["spine02"]
    assert render["missing"] and render["on"] is None
    assert render["argv"] == [
        "unifab",
        "render",
        str(bundle / "fabric.yaml"),
        "--bundle",
        str(bundle),
        "--out",
        str(rendered),
    ]
    assert "my rendered" in render["note"] and "does not exist" in render["note"]
    assert render["command"].endswith(f"--out '{rendered}'")  # quoted: the path has a space
    collect = ["unifab", "collect", "--inventory", str(tmp_path / "inv.yaml"), "--out", str(bundle)]
    assert [s["argv"] for s in spines["after"]] == [collect, check]
    assert [(s["on"], s["argv"]) for s in host["change"]] == [
        ("gpu009", ["unifab", "agent", "apply", str(rendered / "hosts" / "gpu009" / "nic-plan.json"), "--drained"])
    ]
    assert host["drain_hosts"] == list(job.hosts) and host["drained_jobs"] == [job.id]
    assert host["before"][0]["argv"][:4] == ["scontrol", "update", "NodeName=gpu[009-016]", "State=DRAIN"]
    assert [(s["on"], s["argv"]) for s in host["after"]] == [
        ("gpu009", ["unifab", "agent", "collect", "--out", str(bundle), "--hostname", "gpu009"]),
        (None, check),
        *[(h, ["unifab", "agent", "gate", "--format", "slurm"]) for h in job.hosts],
        (None, ["scontrol", "update", "NodeName=gpu[009-016]", "State=RESUME"]),
    ]


def test_the_table_lists_waves_and_every_step_whole(twin: Case, tmp_path: Path) -> None:
    bundle, fabric, _cabling = twin
    job = next(iter(fabric.jobs.values()))
    host = job.hosts[0]
    args = [str(bundle), "--devices", f"spine01,spine02,{host}", "--max-parallel", "2", "--allow-drain", "all"]
    result = CliRunner().invoke(_app(), [*args, "--rendered", str(tmp_path / "r"), "-q"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "2 waves"
    row = next(line for line in lines if line.startswith("│ 2 "))
    assert host in row and job.id in row and "│ 8 " in row  # the job's 8 hosts are drained
    wave2 = lines.index(f"wave 2: {host}")
    assert lines[wave2 + 1 : wave2 + 2] == ["  before:"]
    assert "    scontrol update 'NodeName=gpu[001-008]' State=DRAIN 'Reason=unifab change wave 2'" in lines
    render = f"    unifab render {bundle}/fabric.yaml --bundle {bundle} --out {tmp_path}/r  # {tmp_path}/r/hosts/{host}"
    assert any(line.startswith(render) for line in lines)
    assert "    on gpu001: unifab agent gate --format slurm" in lines
    assert lines[-1] == "    scontrol update 'NodeName=gpu[001-008]' State=RESUME"


def test_a_job_host_entering_a_drain_command_is_validated() -> None:
    fabric = _small([*HOSTS, ("leaf-su1-r0", "spine1"), ("leaf-su2-r0", "spine1")], {})
    job = Job("job:slurm:1", None, ("gpu1", "gpu2", "gpu3;reboot"))
    with pytest.raises(UsageError, match="host name 'gpu3;reboot'"):
        plan_change(dataclasses.replace(fabric, jobs={job.id: job}), ["spine1"], allow_drain=["1"])
