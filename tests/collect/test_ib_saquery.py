"""ib/saquery.txt in a bundle: the SM's NodeRecords name a CA that ibnetdiscover leaves with an empty or default
NodeDescription (the real samples: ibnetdiscover of the simulated rail fabric, saquery NR of three of its nodes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.collect.ib import SAQUERY_FILE, ca_name, sa_ca_names
from unifab.model import Fabric, guid_text
from unifab.parse.ib import saquery

CA = "dgx-001 mlx5_0"  # the CA of the saquery sample (LID 1), as rdma-ndd named it


def _records(samples: Path) -> tuple[saquery.SaNodeRecord, ...]:
    return saquery.parse((samples / "ib" / "saquery_nr_sim.txt").read_text()).node_records()


def _bundle(samples: Path, root: Path, description: str | None, sa: str | None) -> Fabric:
    """The faulty sample's topology with the CA's NodeDescription replaced (``None``: as collected)."""
    (root / "ib").mkdir(parents=True)
    text = (samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt").read_text()
    if description is not None:
        assert text.count(f'"{CA}"') == 2  # its own header and the leaf's port line
        text = text.replace(f'"{CA}"', f'"{description}"')
    (root / "ib" / "ibnetdiscover.txt").write_text(text)
    if sa is not None:
        (root / SAQUERY_FILE).write_text(sa)
    return load_bundle(root)


def _ca_guid(samples: Path) -> str:
    (record,) = [r for r in _records(samples) if r.kind == "ca"]
    assert record.description == CA
    return guid_text(record.node_guid)


def test_the_sample_names_its_ca_by_node_guid(samples: Path) -> None:
    names = sa_ca_names(_records(samples))
    assert names == {_ca_guid(samples): ("dgx-001", "mlx5_0")}  # the two switch records name no CA


@pytest.mark.parametrize("default", ["MT4123 ConfigurationCapable", "MT4099 ConnectX3 Mellanox Technologies", ""])
def test_a_default_description_takes_the_host_from_the_sa(samples: Path, tmp_path: Path, default: str) -> None:
    sa = (samples / "ib" / "saquery_nr_sim.txt").read_text()
    assert ca_name(default) is None
    expected = _bundle(samples, tmp_path / "as-collected", None, None)
    named = _bundle(samples, tmp_path / "with-sa", default, sa)
    unnamed = _bundle(samples, tmp_path / "without-sa", default, None)
    guid = _ca_guid(samples)

    assert named.input_findings == []
    assert sorted(named.hosts) == sorted(expected.hosts)  # no host called "MT4123" or "H-<guid>"
    nic = named.hosts["dgx-001"].nics["mlx5_0"]
    assert nic.ib is not None and nic.ib.node_guid == guid
    assert sorted(lk.id for lk in named.links) == sorted(lk.id for lk in expected.links)  # the cable meets its plan
    assert named.ib is not None and SAQUERY_FILE in named.ib.files

    # Without the SM's records the CA keeps its GUID id (not a host named after the HCA's part number).
    assert f"H-{guid.removeprefix('0x')}" in unnamed.hosts and "MT4123" not in unnamed.hosts
    assert "mlx5_0" not in unnamed.hosts["dgx-001"].nics


def test_a_description_that_names_the_host_wins(samples: Path, tmp_path: Path) -> None:
    """ibnetdiscover's own "<host> <device>" stays: the SA fills in only what it lacks."""
    sa = (samples / "ib" / "saquery_nr_sim.txt").read_text()
    fabric = _bundle(samples, tmp_path / "b", "renamed-001 mlx5_0", sa)
    assert "mlx5_0" in fabric.hosts["renamed-001"].nics and "mlx5_0" not in fabric.hosts["dgx-001"].nics


def test_a_malformed_record_costs_itself(samples: Path, tmp_path: Path) -> None:
    text = (samples / "ib" / "saquery_nr_sim.txt").read_text()
    lines = text.splitlines(keepends=True)
    # Break the last record (a switch, spine-3): its node_guid is not a GUID.
    last = max(i for i, line in enumerate(lines) if "node_guid" in line)
    lines[last] = lines[last].split("node_guid")[0] + "node_guid...............0xnot-a-guid\n"
    fabric = _bundle(samples, tmp_path / "b", "", "".join(lines))
    assert [f.check for f in fabric.input_findings] == ["INPUT-PARTIAL"]
    assert SAQUERY_FILE in fabric.input_findings[0].message
    assert "mlx5_0" in fabric.hosts["dgx-001"].nics  # the CA's record still names it


def test_an_unreadable_file_is_a_finding_and_names_nothing(samples: Path, tmp_path: Path) -> None:
    fabric = _bundle(samples, tmp_path / "b", "", "this is not saquery output\n")
    assert [f.check for f in fabric.input_findings] == ["INPUT-UNREADABLE"]
    assert "mlx5_0" not in fabric.hosts["dgx-001"].nics
