"""SONiC CONFIG_DB → model: the buffer model and headroom inputs, the WRED profile's ECN colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from unifab.collect.sonic import switch_from_sonic
from unifab.model import Severity, SwitchBuffers
from unifab.parse.switch import sonic_qos

SONIC = Path("switch") / "sonic"
DELL = "sonic_config_db_dellz9264_qos_full.json"
MOCK = "sonic_config_db_mock_sn3800_qos_subset.json"
BUF_DYNAMIC = "sonic_buffers_rendered_mellanox4600c_t0_dynamic.json"
QOS_4600C = "sonic_qos_rendered_mellanox4600c_d48c40_t0.json"


def _buffers(samples: Path, name: str) -> SwitchBuffers | None:
    sw = sonic_qos.parse((samples / SONIC / name).read_text(), name)
    return switch_from_sonic("leaf", name, sw).buffers


def test_traditional_model_and_pool_from_a_full_config_db(samples: Path) -> None:
    assert _buffers(samples, DELL) == SwitchBuffers(
        "traditional", lossless_pool_size=35_621_248, lossless_pool_xoff=7_847_424
    )


def test_default_model_and_over_subscribe_ratio(samples: Path) -> None:
    """DEVICE_METADATA without buffer_model is SONiC's default; the ratio is DEFAULT_LOSSLESS_BUFFER_PARAMETER's."""
    b = _buffers(samples, MOCK)
    assert b is not None and (b.model, b.over_subscribe_ratio) == ("traditional", 2)
    assert "no buffer_model" in b.model_source


def test_dynamic_pattern_from_the_rendered_buffers(samples: Path) -> None:
    b = _buffers(samples, BUF_DYNAMIC)
    assert b is not None
    assert (b.model, b.lossless_mtu, b.small_packet_percentage) == ("dynamic", 1024, 50)
    assert "LOSSLESS_TRAFFIC_PATTERN" in b.model_source


def test_fragment_without_model_or_pattern_leaves_buffers_unknown(samples: Path) -> None:
    assert _buffers(samples, QOS_4600C) is None


def test_headroom_check_uses_the_collected_pattern(tmp_path: Path, samples: Path) -> None:
    """A twin leaf switched to the dynamic model with the real rendered LOSSLESS_TRAFFIC_PATTERN (spp 50): the
    check computes with the switch's own 50 % and says so; without the pattern it assumes 100 %."""
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.twin.cluster import build
    from unifab.twin.writer import write_bundle

    rendered = orjson.loads((samples / SONIC / BUF_DYNAMIC).read_bytes())
    write_bundle(build(8), tmp_path)
    path = sorted(tmp_path.glob("switches/*/sonic/config_db.json"))[0]
    db: dict[str, Any] = orjson.loads(path.read_bytes())
    db["DEVICE_METADATA"]["localhost"]["buffer_model"] = "dynamic"
    db["LOSSLESS_TRAFFIC_PATTERN"] = rendered["LOSSLESS_TRAFFIC_PATTERN"]
    db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = rendered["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]
    for name, profile in db["BUFFER_PROFILE"].items():
        if name.startswith("pg_lossless_"):  # a static override below the Lua at 50 %
            profile |= {"xoff": "40960", "size": "60416", "xon": "19456"}
    path.write_bytes(orjson.dumps(db))
    switch = path.parents[1].name

    fabric = load_bundle(tmp_path)
    buffers = fabric.switches[switch].buffers
    assert buffers is not None
    assert (buffers.model, buffers.lossless_mtu, buffers.small_packet_percentage) == ("dynamic", 1024, 50)
    mine = [f for f in run_checks(fabric) if f.check == "QOS-HEADROOM" and f.fix and f.fix[0].device == switch]
    assert mine
    for f in mine:
        b = f.evidence["b"]
        assert b["buffer_model"] == {"value": "dynamic", "source": "DEVICE_METADATA|localhost buffer_model"}
        assert b["inputs"]["small_packet_percentage"] == {"value": 50, "source": "LOSSLESS_TRAFFIC_PATTERN"}
        assert b["inputs"]["lossless_mtu"] == {"value": 1024, "source": "LOSSLESS_TRAFFIC_PATTERN"}
        assert f.severity is Severity.ERROR

    del db["LOSSLESS_TRAFFIC_PATTERN"]
    path.write_bytes(orjson.dumps(db))
    assumed = [f for f in run_checks(load_bundle(tmp_path)) if f.check == "QOS-HEADROOM" and f.fix[0].device == switch]
    spp = assumed[0].evidence["b"]["inputs"]["small_packet_percentage"]
    assert spp["value"] == 100 and "not collected" in spp["source"]
    assert assumed[0].evidence["b"]["required"]["xoff"] > mine[0].evidence["b"]["required"]["xoff"]
