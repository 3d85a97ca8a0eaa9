"""PFC watchdog semantics on real configurations: SONiC's start_default scaling, the storm-breaking action, the
poll interval, and EOS's default stuck-queue action.

The SONiC switch is sonic-utilities' SN3800 mock CONFIG_DB (``default_pfcwd_status enable``, three PORT rows,
PFC_WD rows and POLL_INTERVAL at 600 ms); the EOS switch is the AMD/ROCm Arista 7388 RoCE example (PFC on
priority 3, no watchdog), with the AVD sample's ``priority-flow-control pause watchdog action no-drop`` added
where a test needs a watchdog that does not break storms.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.pfcwd import SwitchWatchdog, expected_timers, judge_port, start_default_multiplier
from unifab.collect.eos import switch_from_eos_config
from unifab.collect.sonic import switch_from_sonic
from unifab.intent import parse_intent
from unifab.model import Fabric, PfcWatchdog, Port, Severity, Switch
from unifab.parse.switch import eos_config, sonic_qos

SN3800 = "switch/sonic/sonic_config_db_mock_sn3800_qos_subset.json"
ROCM_EOS = "switch/eos/eos_rocm_doc_arista7388_roce_dcqcn.cfg"
AVD_NO_DROP = "priority-flow-control pause watchdog action no-drop"  # eos_avd_intended_qos.cfg, verbatim


def _sonic(samples: Path, edit: Any = None) -> Switch:
    """The sample as sonic-utilities' db_migrator (version_3_0_4) leaves it: ``pfcwd_sw_enable`` = ``pfc_enable``."""
    db = json.loads((samples / SN3800).read_text())
    for key, fields in db.items():
        if key.startswith("PORT_QOS_MAP|") and "pfc_enable" in fields:
            fields["pfcwd_sw_enable"] = fields["pfc_enable"]
    if edit is not None:
        edit(db)
    return switch_from_sonic("sn3800", "switches/sn3800/sonic/config_db.json", sonic_qos.parse(json.dumps(db)))


def _eos(samples: Path) -> Switch:
    text = (samples / ROCM_EOS).read_text()
    return switch_from_eos_config("arista", "switches/arista/eos/running-config.txt", eos_config.parse(text))


def _ctx(switch: Switch, intent: str | None = None) -> CheckContext:
    fabric = Fabric(switches={switch.name: switch})
    if intent is not None:
        fabric.qos_intent = parse_intent(intent).base_profile()
    return CheckContext.build(fabric)


def _verdict(ctx: CheckContext, switch: Switch, port: str) -> Any:
    return judge_port(ctx, switch.ports[port], SwitchWatchdog.of(ctx, switch))


def _writes(commands: tuple[str, ...]) -> list[tuple[str, dict[str, str]]]:
    return [_hset(c) for c in commands if c != "sudo config save -y"]


def _hset(command: str) -> tuple[str, dict[str, str]]:
    words = shlex.split(command)
    assert words[:3] == ["sonic-db-cli", "CONFIG_DB", "hset"], command
    return words[3], dict(zip(words[4::2], words[5::2], strict=True))


def test_the_sonic_sample_reads_its_watchdog_settings(samples: Path) -> None:
    switch = _sonic(samples)
    assert (switch.pfcwd_default, switch.pfcwd_poll_ms) == (True, 600)
    assert start_default_multiplier(switch) == (1, 3)
    port = switch.ports["Ethernet0"]
    assert port.qos is not None and port.qos.pfcwd == PfcWatchdog("drop", 600, 600)


def test_start_default_switch_is_held_to_the_scaled_values(samples: Path) -> None:
    """default_pfcwd_status enable with 3 PORT rows: start_default writes 200 ms; the 600 ms rows are slower, and
    the fix writes the scaled rows with a poll no longer than them."""
    switch = _sonic(samples)
    ctx = _ctx(switch)
    expected = expected_timers(ctx, switch)
    assert expected is not None
    assert (expected.detection_ms, expected.restoration_ms, expected.poll_ms) == (200, 200, 200)
    assert "default_pfcwd_status enable" in expected.source
    verdict = _verdict(ctx, switch, "Ethernet0")
    assert verdict.severity is Severity.WARNING
    assert verdict.problems == ["detection 600 ms is slower than the 200 ms start_default scales to"]
    writes = dict(_writes(verdict.commands))
    assert writes["PFC_WD|Ethernet0"] == {"action": "drop", "detection_time": "200", "restoration_time": "200"}
    assert writes["PFC_WD|GLOBAL"] == {"POLL_INTERVAL": "200"}
    assert verdict.evidence["expected"]["source"] == expected.source


def test_many_ports_scale_start_default_instead_of_the_intents_200_ms(samples: Path) -> None:
    """40 PORT rows: start_default's m = 2, so 400 ms rows are what the switch should run even though the intent
    says 200 ms; 600 ms is still slower than 400 ms."""

    def forty_ports(db: dict[str, Any]) -> None:
        template = db["PORT|Ethernet0"]
        for i in range(3, 40):
            db[f"PORT|Ethernet{4 * i}"] = dict(template)
        db["PFC_WD|Ethernet0"] |= {"detection_time": "400", "restoration_time": "400"}  # Ethernet4 stays at 600
        db["PFC_WD|GLOBAL"] = {"POLL_INTERVAL": "400"}

    switch = _sonic(samples, forty_ports)
    ctx = _ctx(switch, "preset: sonic-azure")
    expected = expected_timers(ctx, switch)
    assert expected is not None and (expected.detection_ms, expected.poll_ms) == (400, 400)
    assert _verdict(ctx, switch, "Ethernet0") is None, "400 ms is start_default's value for 40 ports"
    slow = _verdict(ctx, switch, "Ethernet4")
    assert slow is not None and slow.problems == ["detection 600 ms is slower than the 400 ms start_default scales to"]


def test_without_start_default_the_intent_is_the_yardstick(samples: Path) -> None:
    def disabled(db: dict[str, Any]) -> None:
        db["DEVICE_METADATA|localhost"]["default_pfcwd_status"] = "disable"

    switch = _sonic(samples, disabled)
    assert switch.pfcwd_default is False
    assert expected_timers(_ctx(switch), switch) is None, "no start_default, no intent: timers are not judged"
    assert _verdict(_ctx(switch), switch, "Ethernet0") is None
    ctx = _ctx(switch, "preset: sonic-azure")
    verdict = _verdict(ctx, switch, "Ethernet0")
    assert verdict is not None and verdict.problems == ["detection 600 ms is slower than the 200 ms the intent asks"]


@pytest.mark.parametrize("action", ["forward", "alert"])
def test_a_watchdog_that_does_not_drop_does_not_break_a_storm(samples: Path, action: str) -> None:
    def weak(db: dict[str, Any]) -> None:
        db["PFC_WD|Ethernet0"]["action"] = action

    switch = _sonic(samples, weak)
    verdict = _verdict(_ctx(switch), switch, "Ethernet0")
    assert verdict is not None and verdict.severity is Severity.WARNING
    assert f"action {action} does not break a storm" in verdict.problems
    assert "not broken" in verdict.evidence["pfcwd"]["action_effect"]
    writes = dict(_writes(verdict.commands))
    assert writes["PFC_WD|Ethernet0"]["action"] == "drop"


def test_detection_below_the_poll_interval(samples: Path) -> None:
    def slow_poll(db: dict[str, Any]) -> None:
        db["DEVICE_METADATA|localhost"]["default_pfcwd_status"] = "disable"
        db["PFC_WD|GLOBAL"]["POLL_INTERVAL"] = "1000"

    switch = _sonic(samples, slow_poll)
    verdict = _verdict(_ctx(switch), switch, "Ethernet0")
    assert verdict is not None
    assert verdict.problems == ["detection 600 ms is below PFC_WD|GLOBAL POLL_INTERVAL 1000 ms"]
    assert _writes(verdict.commands) == [("PFC_WD|GLOBAL", {"POLL_INTERVAL": "600"})]


def test_eos_without_a_watchdog_names_the_default_errdisable(samples: Path) -> None:
    switch = _eos(samples)
    verdict = _verdict(_ctx(switch, "preset: sonic-azure"), switch, "Ethernet2/5/1")
    assert verdict is not None and verdict.missing == "no watchdog entry"
    assert "error-disables the port" in verdict.evidence["eos_default_action"]
    assert "priority-flow-control pause watchdog port action drop" in verdict.commands


def test_eos_no_drop_watchdog_is_fixed_to_drop(samples: Path) -> None:
    text = (samples / ROCM_EOS).read_text() + AVD_NO_DROP + "\n"
    text = text.replace(
        "   priority-flow-control priority 3 no-drop\n",
        "   priority-flow-control priority 3 no-drop\n   priority-flow-control pause watchdog\n",
    )
    switch = switch_from_eos_config("arista", "running-config.txt", eos_config.parse(text))
    port = switch.ports["Ethernet2/5/1"]
    assert port.qos is not None and port.qos.pfcwd is not None and port.qos.pfcwd.action == "forward"
    verdict = _verdict(_ctx(switch), switch, "Ethernet2/5/1")
    assert verdict is not None and verdict.problems == ["action forward does not break a storm"]
    assert verdict.commands[:4] == (
        "configure",
        "interface Ethernet2/5/1",
        "priority-flow-control pause watchdog",
        "priority-flow-control pause watchdog port action drop",
    )
    fixed = replace(port, qos=replace(port.qos, pfcwd=PfcWatchdog("drop", None, None)))
    assert judge_port(_ctx(switch), fixed, SwitchWatchdog.of(_ctx(switch), switch)) is None


def test_what_the_intent_asks_for_is_not_reported(samples: Path) -> None:
    """An intent asking for forward at 1000 ms: the port doing so is the intent's call, even on a start_default
    switch whose own default is 200 ms (the longer of the two is allowed)."""

    def as_asked(db: dict[str, Any]) -> None:
        for port in ("Ethernet0", "Ethernet4"):
            db[f"PFC_WD|{port}"] |= {"action": "forward", "detection_time": "1000", "restoration_time": "2000"}
        db["PFC_WD|GLOBAL"]["POLL_INTERVAL"] = "200"

    switch = _sonic(samples, as_asked)
    intent = (
        "version: 1\npreset: sonic-azure\nqos:\n"
        "  pfc_watchdog: {detection_ms: 1000, restoration_ms: 2000, action: forward}\n"
    )
    ctx = _ctx(switch, intent)
    expected = expected_timers(ctx, switch)
    assert expected is not None and expected.detection_ms == 1000 and "fabric.yaml" in expected.source
    assert _verdict(ctx, switch, "Ethernet0") is None


def test_a_port_without_pfc_is_not_judged(samples: Path) -> None:
    switch = _sonic(samples)
    port: Port = switch.ports["Ethernet8"]
    assert port.qos is not None and not port.qos.pfc_enabled
    assert _verdict(_ctx(switch), switch, "Ethernet8") is None
