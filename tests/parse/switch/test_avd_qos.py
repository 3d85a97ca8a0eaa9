"""AVD structured input (eos_cli_config_gen molecule host_vars/qos.yml) and its agreement with the intended config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import avd_qos, eos_config
from unifab.parse.switch.eos_config import EosThreshold, EosWatchdogTimer

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
MODEL = "switch/eos/eos_avd_qos_input_hostvars.yml"
INTENDED = "switch/eos/eos_avd_intended_qos.cfg"
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "eos_avd_qos_input_hostvars.json", avd_qos.parse(read(samples, MODEL), MODEL))


def test_model_by_hand(samples: Path) -> None:
    m = avd_qos.parse(read(samples, MODEL))
    assert m.qos_maps.cos_to_tc == {1: 2, 2: 2, 3: 3, 4: 2}  # "3 to traffic-class 3" comes later and wins
    assert m.qos_maps.dscp_to_tc[46] == 5 and m.qos_maps.dscp_to_tc[18] == 4
    assert m.qos_maps.dscp_drop_precedence == dict.fromkeys([18, 20, 22, 26, 28, 30, 34, 36, 38], 2)
    assert (m.qos_maps.tc_to_queue, m.qos_maps.tc_to_dscp, m.qos_maps.tc_to_cos) == (
        {6: 2},
        {1: 56},
        {2: 7, 4: 7, 5: 7},
    )
    assert (m.qos_rewrite_dscp, m.ecn_allow_non_ect, m.ecn_allow_non_ect_chip_based, m.pfc_all_off) == (
        True,
        True,
        True,
        True,
    )
    wd = m.pfc_watchdog
    assert (wd.action, wd.timeout_ms, wd.polling_interval_ms, wd.recovery_time_ms) == ("no-drop", 50, 10001, 1220)
    test = m.qos_profiles["test"].qos
    assert (test.trust, test.default_dscp, test.shape_rate) == ("dscp", 46, "80 percent")
    q2 = test.tx_queues[2]
    assert (q2.strict, q2.ecn, q2.max_mark_probability) == (True, True, 90)
    assert q2.min_threshold == q2.max_threshold == EosThreshold(320, "kbytes", 320 * 1024)
    assert test.tx_queues[4].min_threshold == EosThreshold(320, "segments", None)
    pfc = m.qos_profiles["test_with_pfc"].qos
    assert (pfc.pfc_on, pfc.pfc_priorities, pfc.pfcwd_enabled, pfc.pfcwd_action) == (
        True,
        {0: True, 1: False},
        True,
        "drop",
    )
    assert pfc.pfcwd_timer == EosWatchdogTimer(timeout_ms=50, polling_auto=True, recovery_time_ms=1110, forced=True)
    # WRED drop thresholds are not modelled: no ECN on those queues
    assert m.qos_profiles["wred_queues_test"].qos.tx_queues[1].ecn is None
    assert m.interfaces["Ethernet1"].service_profile == "test"
    assert m.interfaces["Ethernet6"].qos.tx_queues[2].ecn_count is True
    assert m.interfaces["Port-Channel3"].qos.service_policy == "pmap_test1"


def test_model_agrees_with_intended_config(samples: Path) -> None:
    """AVD renders the model into the config: maps, PFC priorities and ECN thresholds must agree."""
    model = avd_qos.parse(read(samples, MODEL))
    cfg = eos_config.parse(read(samples, INTENDED))
    assert model.qos_maps.dscp_to_tc == cfg.qos_maps.dscp_to_tc
    assert model.qos_maps == cfg.qos_maps
    assert set(model.qos_profiles) == set(cfg.qos_profiles)
    for name, profile in model.qos_profiles.items():
        rendered = cfg.qos_profiles[name].qos
        assert profile.qos.pfc_priorities == rendered.pfc_priorities, name
        for kind in ("tx_queues", "uc_tx_queues", "mc_tx_queues"):
            ours, theirs = getattr(profile.qos, kind), getattr(rendered, kind)
            assert set(ours) == set(theirs), (name, kind)
            for i, q in ours.items():
                r = theirs[i]
                assert (q.ecn, q.min_threshold, q.max_threshold, q.max_mark_probability, q.weight) == (
                    r.ecn,
                    r.min_threshold,
                    r.max_threshold,
                    r.max_mark_probability,
                    r.weight,
                ), (name, kind, i)
        assert profile == cfg.qos_profiles[name]  # in fact every modelled field agrees
    assert model.pfc_watchdog == cfg.pfc_watchdog
    assert (model.pfc_all_off, model.ecn_allow_non_ect, model.qos_rewrite_dscp) == (
        cfg.pfc_all_off,
        cfg.ecn_allow_non_ect,
        cfg.qos_rewrite_dscp,
    )
    for name, intf in model.interfaces.items():
        written = cfg.interfaces[name]
        assert intf.service_profile == written.service_profile, name


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("qos:\n  map:\n    dscp: ['64 to traffic-class 1']\n", "qos.map.dscp[0]"),
        ("qos:\n  map:\n    cos: ['1 to cos 2']\n", "qos.map.cos[0]"),
        ("qos:\n  map:\n    dscp: 5\n", "qos.map.dscp"),
        ("qos_profiles:\n  - trust: dscp\n", "qos_profiles[0]"),
        ("qos_profiles:\n  - name: p\n    trust: bogus\n", "qos_profiles[0].trust"),
        ("qos_profiles:\n  - name: p\n    tx_queues:\n      - id: 9\n", "qos_profiles[0].tx_queues[0].id"),
        (
            "qos_profiles:\n  - name: p\n    tx_queues:\n      - id: 1\n        random_detect:\n          ecn:\n"
            "            threshold: {units: furlongs, min: 1, max: 2}\n",
            "qos_profiles[0].tx_queues[0].random_detect.ecn.threshold.units",
        ),
        ("priority_flow_control:\n  watchdog:\n    timeout: 0.0001\n", "priority_flow_control.watchdog.timeout"),
        ("priority_flow_control:\n  all_off: maybe\n", "priority_flow_control.all_off"),
        ("- 1\n- 2\n", "<root>"),
    ],
)
def test_errors_name_key(text: str, key: str) -> None:
    with pytest.raises(ParseError) as err:
        avd_qos.parse(text, "t")
    assert err.value.key == key and err.value.source == "t"


def test_yaml_syntax_error_names_line() -> None:
    with pytest.raises(ParseError) as err:
        avd_qos.parse("qos:\n  map: [\n", "t")
    assert err.value.line is not None
    with pytest.raises(ParseError):
        avd_qos.parse("   \n", "t")


def test_recursive_alias_and_billion_laughs_are_parse_errors() -> None:
    with pytest.raises(ParseError) as err:
        avd_qos.parse("qos: &a\n  map: *a\n", "t")
    assert "recursive" in err.value.expected
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for i in range(8):
        name = f"l{i}"
        laughs += f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]\n"
        prev = name
    with pytest.raises(ParseError) as err:
        avd_qos.parse(laughs, "t")
    assert "aliases" in err.value.expected
    with pytest.raises(ParseError):
        avd_qos.parse("!!python/object/apply:os.system ['true']\n", "t")


_YAML = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(
        ["qos", "map", "dscp", "cos", "traffic_class", "qos_profiles", "name", "tx_queues", "id", "random_detect",
         "ecn", "threshold", "units", "min", "max", "priority_flow_control", "watchdog", "timer", "timeout",
         "priorities", "priority", "no_drop", "ethernet_interfaces", "service_policy", "qos_input", "type"]), c,
        max_size=4),
    max_leaves=25,
)  # fmt: skip


@_SETTINGS
@given(_YAML)
def test_random_documents_raise_only_parse_error(doc: object) -> None:
    import yaml

    try:
        avd_qos.parse(yaml.safe_dump(doc), "t")
    except ParseError as err:
        assert err.source == "t" and err.expected
