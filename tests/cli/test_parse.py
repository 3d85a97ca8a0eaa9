"""``unifab parse``: the format list comes from the registry, names have one style with aliases, --format table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.parse.registry import ALIASES, FORMATS, closest, lookup

runner = CliRunner()
SAMPLE = Path("host") / "mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"


def test_help_lists_every_registered_format() -> None:
    result = runner.invoke(app, ["parse", "--help"], terminal_width=200)
    assert result.exit_code == 0
    missing = [name for name in FORMATS if f"{name}" not in result.stdout]
    assert missing == []


def test_names_are_one_style() -> None:
    assert [n for n in FORMATS if "_" in n or n != n.strip()] == []
    assert all(lookup(target) is not None for target in ALIASES.values())


@pytest.mark.parametrize(
    ("typed", "name"),
    [("mlnx_qos", "mlnx-qos"), ("MLNX-QOS", "mlnx-qos"), ("show_gids", "show-gids"), ("niccli", "bnxt-qos")],
)
def test_other_spellings_are_accepted(typed: str, name: str) -> None:
    spec = lookup(typed)
    assert spec is not None
    assert spec.name == name


def test_unknown_name_suggests_the_closest() -> None:
    assert closest("mlnxqos")[0] == "mlnx-qos"
    result = runner.invoke(app, ["parse", "ethtool-x", "f"])
    assert result.exit_code == 2
    assert "did you mean" in result.stderr
    assert "ethtool-" in result.stderr


def test_underscore_alias_parses_like_the_name(samples: Path) -> None:
    one = runner.invoke(app, ["parse", "mlnx_qos", str(samples / SAMPLE)])
    two = runner.invoke(app, ["parse", "mlnx-qos", str(samples / SAMPLE)])
    assert one.exit_code == two.exit_code == 0
    assert json.loads(one.stdout) == json.loads(two.stdout)


def test_format_table_shows_paths_and_values(samples: Path) -> None:
    result = runner.invoke(app, ["parse", "mlnx-qos", str(samples / SAMPLE), "--format", "table"], terminal_width=200)
    assert result.exit_code == 0, result.output
    record = json.loads(runner.invoke(app, ["parse", "mlnx-qos", str(samples / SAMPLE)]).stdout)
    assert "trust" in record
    assert "trust" in result.stdout
    assert str(record["trust"]) in result.stdout
