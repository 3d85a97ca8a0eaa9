"""``unifab parse sonic-config-db|eos-config|nvue``: one vendor-neutral port view, the CLI contract's keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app

CONTRACT = {
    "trust", "dscp_to_tc", "tc_to_pg", "tc_to_queue", "pfc_enabled", "ecn", "schedulers", "headroom",
    "cable_length_m", "pfcwd", "mtu", "speed_mbps",
}  # fmt: skip
ECN_KEYS = {"enabled", "min_bytes", "max_bytes", "max_probability", "configured"}


def _parse(fmt: str, path: Path) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["parse", fmt, str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_sonic_port_view(samples: Path) -> None:
    view = _parse("sonic-config-db", samples / "switch/sonic/sonic_config_db_dellz9264_qos_full.json")
    port = view["ports"]["Ethernet0"]
    assert set(port) >= CONTRACT
    assert port["trust"] == "dscp" and port["pfc_enabled"] == [3, 4]
    assert set(port["ecn"]["3"]) == ECN_KEYS and port["ecn"]["3"]["enabled"] is True
    assert port["headroom"]["3"]["xoff"] == 177632  # pg_lossless_100000_40m_profile


def test_eos_keeps_unsettled_units_beside_the_bytes(samples: Path) -> None:
    view = _parse("eos-config", samples / "switch/eos/eos_rocm_doc_arista7388_roce_dcqcn.cfg")
    port = view["ports"]["Ethernet2/5/1"]
    assert set(port) >= CONTRACT and port["mtu"] == 9214 and port["pfc_enabled"] == [3]
    assert port["ecn"]["3"] == {
        "enabled": True, "min_bytes": None, "max_bytes": None, "max_probability": 20,
        "configured": "2000 segments .. 10000 segments",
    }  # fmt: skip


@pytest.mark.parametrize("fmt", ["eos-config-raw", "nvue-raw", "sonic-tables", "sonic-qos"])
def test_vendor_records_stay_reachable(fmt: str, samples: Path) -> None:
    files = {
        "eos-config-raw": "switch/eos/eos_avd_intended_qos.cfg",
        "sonic-tables": "switch/sonic/sonic_config_db_mock_sn3800_qos_subset.json",
        "sonic-qos": "switch/sonic/sonic_config_db_mock_sn3800_qos_subset.json",
    }
    if fmt == "nvue-raw":
        path = Path(__file__).parents[1] / "parse/switch/golden/nvue_roce_leaf_reconstructed.yaml"
    else:
        path = samples / files[fmt]
    assert _parse(fmt, path)
