"""The IB twin's ``ib/saquery.txt``: the SM's NodeRecords in saquery's own layout (as the real tool prints them against
ibsim, tests/data/samples/ib/saquery_nr_sim.txt), read back by the real parser, and the ``ib-default-description``
scenario: CAs answering ibnetdiscover with a default NodeDescription are named from saquery, and the bundle reads as
the clean twin does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric
from unifab.parse.ib import ibnetdiscover, saquery
from unifab.twin.generate import generate

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "ib" / "saquery_nr_sim.txt"
_FIELD = re.compile(r"^\t\t([A-Za-z_]+)\.+")


def _field_order(text: str) -> list[tuple[str, ...]]:
    """Each record's field names, in order."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if line == "NodeRecord dump:":
            out.append([])
        elif (m := _FIELD.match(line)) is not None:
            out[-1].append(m.group(1))
    return [tuple(r) for r in out]


def _shape(fabric: Fabric) -> tuple[object, ...]:
    """Hosts, their NICs (with fabric kind and IB identity) and the links, as a comparable value."""
    nics = {
        (h.name, key, nic.fabric, nic.ib.node_guid if nic.ib else None, nic.ib.port_guid if nic.ib else None)
        for h in fabric.hosts.values()
        for key, nic in h.nics.items()
    }
    return sorted(fabric.hosts), sorted(nics, key=str), sorted((lk.id, fabric.link_fabric(lk)) for lk in fabric.links)


@pytest.mark.parametrize("fabric", ["ib", "mixed"])
def test_saquery_holds_one_record_per_ca_port_and_switch_in_the_real_layout(tmp_path: Path, fabric: str) -> None:
    generate(tmp_path / "b", gpus=64, seed=0, fabric=fabric)
    text = (tmp_path / "b" / "ib" / "saquery.txt").read_text()
    sample = SAMPLE.read_text()
    (order,) = set(_field_order(sample))
    assert set(_field_order(text)) == {order}
    # the value column starts where the real tool's does
    assert {len(line) - len(line.lstrip(".")) for line in text.splitlines()} == {0}
    assert {m.end() for line in text.splitlines() if (m := _FIELD.match(line))} == {
        m.end() for line in sample.splitlines() if (m := _FIELD.match(line))
    }
    records = saquery.parse(text, "saquery.txt").node_records()
    topo = ibnetdiscover.parse((tmp_path / "b" / "ib" / "ibnetdiscover.txt").read_text())
    want = {(n.kind, int(n.guid, 16) if n.guid else None, n.description) for n in topo.nodes}
    assert {(r.kind, r.node_guid, r.description) for r in records} == want
    assert all(r.port_num == (0 if r.kind == "switch" else 1) for r in records)
    assert [r.lid for r in records] == sorted(r.lid for r in records)
    cas = [r for r in records if r.kind == "ca"]
    assert cas and all(r.port_guid == r.node_guid + 1 and r.device_id == 0x101B and r.vendor_id == 0x2C9 for r in cas)


@pytest.mark.parametrize("fabric", ["ib", "mixed"])
def test_reading_the_twin_with_its_saquery_gives_the_same_hosts(tmp_path: Path, fabric: str) -> None:
    generate(tmp_path / "b", gpus=64, seed=1, fabric=fabric)
    with_sa = load_bundle(tmp_path / "b")
    assert with_sa.ib is not None and "ib/saquery.txt" in with_sa.ib.files
    (tmp_path / "b" / "ib" / "saquery.txt").unlink()
    assert _shape(load_bundle(tmp_path / "b")) == _shape(with_sa)


@pytest.mark.parametrize("fabric", ["ib", "mixed"])
def test_default_descriptions_are_named_from_saquery_and_nothing_is_found(tmp_path: Path, fabric: str) -> None:
    result = generate(tmp_path / "b", gpus=64, seed=2, scenarios=("ib-default-description",), fabric=fabric)
    generate(tmp_path / "clean", gpus=64, seed=2, fabric=fabric)
    assert result.truth["misconfigurations"] == [] and result.truth["skipped"] == []
    topo_text = (tmp_path / "b" / "ib" / "ibnetdiscover.txt").read_text()
    assert '# "MT4123 ConfigurationCapable"' in topo_text and '# ""' in topo_text
    assert len(list((tmp_path / "b" / "hosts").glob("*/cmd/ibstat.txt"))) == 64 // 8 - 2  # two hosts uncollected
    bundle = load_bundle(tmp_path / "b")
    assert run_checks(bundle) == []
    assert _shape(bundle) == _shape(load_bundle(tmp_path / "clean"))
    # without the SM's records, those CAs keep their GUID ids: saquery is what named them
    (tmp_path / "b" / "ib" / "saquery.txt").unlink()
    unnamed = {h for h in load_bundle(tmp_path / "b").hosts if h.startswith("H-")}
    assert len(unnamed) == (2 * 8 if fabric == "ib" else 2)
