"""End to end: a twin fabric whose switch QoS was broken, re-rendered from the intent with
``apply_to_*``, reads back through the bundle collector and ``unifab check`` finds nothing at all."""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest
from render_profiles import ROCE
from typer.testing import CliRunner

from unifab.cli import app
from unifab.parse.plan import cabling
from unifab.parse.switch import eos_config, nvue, sonic_qos
from unifab.profile import PortSpec
from unifab.render.eos_config import apply_to_running_config, render_eos
from unifab.render.nvue_config import render_nvue_yaml
from unifab.render.sonic_config import apply_to_config_db, json_patch, render_config_db, validate_config_db

# switch-side misconfigurations of the twin (the host-side ones are the NIC renderers' to fix)
SWITCH_SCENARIOS = (
    "dscp-lossy",
    "ecn-thresh",
    "ecn-off",
    "cnp-not-strict",
    "pfcwd-off",
    "headroom-short",
    "uplink-ecn",
)


def _check(bundle: Path) -> tuple[int, list[str]]:
    """``unifab check BUNDLE --format json``: exit code and the findings as ``CHECK subject``."""
    result = CliRunner().invoke(app, ["check", str(bundle), "--format", "json"])
    doc = json.loads(result.stdout)
    return result.exit_code, sorted(f"{f['check']} {f['subject']}" for f in doc["findings"])


def _cables(bundle: Path) -> dict[tuple[str, str], float | None]:
    out: dict[tuple[str, str], float | None] = {}
    for c in cabling.parse((bundle / "plan" / "cabling.csv").read_text()):
        out[(c.a_node, c.a_port)] = out[(c.z_node, c.z_port)] = c.cable_m
    return out


def _spec(switch: str, port: str, speed: int | None, cables: dict[tuple[str, str], float | None]) -> PortSpec:
    assert speed is not None, (switch, port)
    cable = cables.get((switch, port))
    return PortSpec(port, speed, "host", None if cable is None else math.ceil(cable))


def _render_sonic(path: Path, cables: dict[tuple[str, str], float | None]) -> None:
    current = orjson.loads(path.read_bytes())
    sw = sonic_qos.parse(path.read_bytes(), str(path))
    name = path.parents[1].name
    specs = [_spec(name, p.name, p.speed_mbps, cables) for p in sw.ports.values()]
    rendered = render_config_db(specs, ROCE, hwsku=sw.hwsku, platform=sw.platform)
    after = apply_to_config_db(current, rendered)
    # no new rule violation (a profile the scenario broke and nothing names any more stays as it was)
    assert set(validate_config_db(after)) <= set(validate_config_db(current))
    assert not any("PORT_QOS_MAP" in e or "QUEUE|" in e for e in validate_config_db(after))
    assert json_patch(current, rendered)  # the broken switch needs changes ...
    assert json_patch(after, rendered) == []  # ... and the applied one none
    path.write_bytes(orjson.dumps(after, option=orjson.OPT_INDENT_2))


def _render_eos(path: Path, cables: dict[tuple[str, str], float | None]) -> None:
    current = path.read_text()
    cfg = eos_config.parse(current, str(path))
    name = path.parents[1].name
    specs = [_spec(name, i.name, i.speed_mbps, cables) for i in cfg.interfaces.values()]
    path.write_text(apply_to_running_config(current, render_eos(specs, ROCE)))


def _render_nvue(path: Path, cables: dict[tuple[str, str], float | None]) -> None:
    current = path.read_text()
    cfg = nvue.parse(current, str(path))
    name = path.parents[1].name
    specs = [_spec(name, i.interface, i.speed_mbps, cables) for i in cfg.interfaces.values()]
    path.write_text(render_nvue_yaml(specs, ROCE, current))


RENDER = {
    "sonic": ("sonic/config_db.json", _render_sonic),
    "eos": ("eos/running-config.txt", _render_eos),
    "nvue": ("nvue/config.yaml", _render_nvue),
}


@pytest.mark.parametrize("device_os", ["sonic", "eos", "nvue"])
def test_rendered_switches_leave_no_qos_finding(tmp_path: Path, device_os: str) -> None:
    from unifab.twin.generate import generate

    bundle = tmp_path / "bundle"
    generate(bundle, gpus=64, seed=5, scenarios=SWITCH_SCENARIOS, switch_os=device_os)
    code, before = _check(bundle)
    assert code == 1 and any(f.startswith("QOS-") for f in before), "the scenarios should have broken the switches"
    cables = _cables(bundle)
    relative, render = RENDER[device_os]
    switches = sorted((bundle / "switches").iterdir())
    assert switches
    for switch_dir in switches:
        render(switch_dir / relative, cables)
    assert _check(bundle) == (0, [])
