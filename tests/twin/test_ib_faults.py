"""An InfiniBand twin's faults as perfquery rounds (ib/perfquery/<t>.txt), scored: ``unifab health`` finds every
injected fault as its root cause and nothing else, and a twin with only noise is clean."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.parse.ib import perfquery
from unifab.twin.faults import write_faults
from unifab.twin.generate import generate
from unifab.twin.ib_faults import IB_FAULT_KINDS, ROUNDS


def _health(bundle: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["health", str(bundle), "--format", "json", "--quiet"])
    assert result.exit_code in (0, 1), result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    assert doc["problems"] == []
    return doc


@pytest.mark.parametrize(("gpus", "seed"), [(32, 1), (32, 2), (64, 3), (64, 4)])
def test_every_ib_fault_is_found_as_its_root_cause_and_nothing_else(tmp_path: Path, gpus: int, seed: int) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus, seed, fabric="ib")
    faults = write_faults(bundle, len(IB_FAULT_KINDS) + 1, seed)
    assert [f["kind"] for f in faults] == [*IB_FAULT_KINDS, IB_FAULT_KINDS[0]]
    assert not (bundle / "telemetry").exists()  # an IB fabric's counters are perfquery rounds only
    doc = _health(bundle)
    want = {(f["root_cause"]["kind"], f["root_cause"]["id"]) for f in faults}
    assert {(i["root_cause"]["kind"], i["root_cause"]["id"]) for i in doc["incidents"]} == want
    by_root = {i["root_cause"]["id"]: i for i in doc["incidents"]}
    for fault in faults:
        incident = by_root[fault["root_cause"]["id"]]
        assert incident["start"] == fault["start"], fault
        assert incident["jobs"] == fault["jobs"], fault


@pytest.mark.parametrize(("gpus", "seed"), [(32, 5), (64, 6)])
def test_an_ib_twin_with_only_noise_is_clean(tmp_path: Path, gpus: int, seed: int) -> None:
    bundle = tmp_path / "b"
    generate(bundle, gpus, seed, fabric="ib")
    assert write_faults(bundle, 0, seed) == []
    doc = _health(bundle)
    assert doc["incidents"] == [] and doc["summary"]["symptoms"] == 0
    assert doc["summary"]["series"] > 0


def test_the_rounds_are_perfquery_output_with_saturation_and_a_reset(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    generate(bundle, 32, 7, fabric="ib")
    write_faults(bundle, 3, 7)
    files = sorted((bundle / "ib" / "perfquery").glob("*.txt"))
    assert len(files) == ROUNDS
    rounds = [perfquery.parse(f.read_text(), f.name) for f in files]
    kinds = {b.kind for b in rounds[0].blocks}
    assert kinds == {"basic", "extended"}
    basic = [{(b.lid, b.port): b.counters for b in r.blocks if b.kind == "basic"} for r in rounds]
    # the marginal link's 16-bit SymbolErrorCounter sits at its top by the last round
    assert any(c["SymbolErrorCounter"] == 2**16 - 1 for c in basic[-1].values())
    # perfquery -R on one port: its PortCounters drop (XmitWait counts on every port, so it shows the reset)
    drops = {key for a, b in itertools.pairwise(basic) for key in b if b[key]["PortXmitWait"] < a[key]["PortXmitWait"]}
    assert len(drops) == 1
    # the extended data counter never drops
    extended = [{(b.lid, b.port): b.counters["PortXmitData"] for b in r.blocks if b.kind == "extended"} for r in rounds]
    assert all(b[k] >= a[k] for a, b in itertools.pairwise(extended) for k in b)


def _roots(items: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(i["root_cause"]["kind"], i["root_cause"]["id"], i["start"]) for i in items}


@pytest.mark.parametrize(("n_faults", "seed", "kinds"), [(2, 1, None), (6, 4, None), (2, 3, ("host-dead",))])
def test_a_mixed_twin_gets_telemetry_for_ethernet_and_perfquery_rounds_for_its_ib_silo(
    tmp_path: Path, n_faults: int, seed: int, kinds: tuple[str, ...] | None
) -> None:
    bundle = tmp_path / "b"
    generate(bundle, 64, seed, fabric="mixed")
    faults = write_faults(bundle, n_faults, seed, **({"kinds": kinds} if kinds else {}))
    ib = [f for f in faults if f["kind"] in IB_FAULT_KINDS]
    assert len(ib) == n_faults // 2 and len(faults) == n_faults  # half of the faults (rounded down) are on the IB silo
    assert [f["kind"] for f in ib] == list(IB_FAULT_KINDS[: len(ib)])
    hosts = [{h for f in part for h in f["hosts"]} for part in (ib, [f for f in faults if f not in ib])]
    assert not hosts[0] & hosts[1]  # an IB fault never shares a host with an Ethernet one
    truth = json.loads((bundle / "truth.json").read_text())
    assert truth["faults"] == faults
    assert truth["ib_telemetry"]["format"] == "perfquery" and truth["telemetry"]["samples"] > 0
    rounds = sorted((bundle / "ib" / "perfquery").glob("*.txt"))
    assert len(rounds) == truth["ib_telemetry"]["samples"] == 61  # the hour the Ethernet telemetry covers
    om = {p.stem for p in (bundle / "telemetry").glob("*.om")}
    assert om and not any(name.startswith("ib-") for name in om)  # IB switches have no exporter
    assert all("mlx5_8" not in (bundle / "telemetry" / f"{h}.om").read_text() for h in sorted(om)[:4])
    doc = _health(bundle)
    assert _roots(doc["incidents"]) == _roots(faults)


def test_a_mixed_twin_with_only_noise_is_clean(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    generate(bundle, 64, 2, fabric="mixed")
    assert write_faults(bundle, 0, 2) == []
    assert len(list((bundle / "ib" / "perfquery").glob("*.txt"))) == 61
    doc = _health(bundle)
    assert doc["incidents"] == [] and doc["summary"]["symptoms"] == 0


@pytest.mark.parametrize(
    ("fabric", "said"),
    [("ib", "2 faults in ib/perfquery/"), ("mixed", "2 faults (1 in telemetry/, 1 in ib/perfquery/)")],
)
def test_twin_generate_says_where_the_faults_are(tmp_path: Path, fabric: str, said: str) -> None:
    out = tmp_path / "b"
    args = ["twin", "generate", "--gpus", "32", "--out", str(out), "--fabric", fabric, "--faults", "2", "--quiet"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert said in " ".join(result.output.split())
    assert (out / "telemetry").is_dir() == (fabric == "mixed") and (out / "ib" / "perfquery").is_dir()
