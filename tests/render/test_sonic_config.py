"""SONiC CONFIG_DB rendering: parse back to the profile, the field rules, apply and the RFC 6902 patch."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from render_expect import assert_headroom, assert_port
from render_profiles import ROCE, mixed_ports, with_
from strategies import port_sets, profiles

from unifab.collect.switch_view import parse_sonic
from unifab.errors import ParseError, RenderError
from unifab.parse.switch import sonic_config_db
from unifab.profile import EcnQueue, EtsWeight, PortSpec, QosProfile, WatchdogProfile
from unifab.render.sonic_config import apply_to_config_db, json_patch, render_config_db, validate_config_db

PORT = PortSpec("Ethernet0", 400_000, "host")
SN5600 = {"hwsku": "ACS-SN5600", "platform": "x86_64-nvidia_sn5600-r0"}


def _view(db: dict[str, Any]) -> Any:
    return parse_sonic(orjson.dumps(db).decode(), "rendered")


def _sample_db(samples: Path, name: str) -> dict[str, dict[str, dict[str, str]]]:
    return sonic_config_db.parse((samples / "switch" / "sonic" / name).read_bytes(), name).tables


@pytest.mark.parametrize("asic", [SN5600, {"hwsku": "Force10-Z9264", "platform": None}], ids=["sn5600", "unknown"])
def test_ports_of_several_speeds_and_cables_read_back_as_the_profile(asic: dict[str, str | None]) -> None:
    ports = mixed_ports("Ethernet")
    db = render_config_db(ports, ROCE, **asic)
    assert validate_config_db(db) == []
    view = _view(db)
    for spec in ports:
        assert_port(view.ports[spec.name], ROCE, spec, "sonic")
        assert_headroom(view.ports[spec.name], ROCE, spec, asic["hwsku"], asic["platform"])
    # 1, 3, 30 and 100 m cables: traditional buffermgrd knows only its table's buckets, so each port gets the
    # bucket its cable rounds up to (the shipped SN5600 table's, or the buckets every Mellanox table has)
    lengths = {"Ethernet0": "5m", "Ethernet8": "5m", "Ethernet16": "40m", "Ethernet24": "300m"}
    assert db["CABLE_LENGTH"]["AZURE"] == lengths
    # one static profile per speed and cable bucket, named as buildimage names them
    assert db["BUFFER_PG"]["Ethernet24|3"] == {"profile": "pg_lossless_800000_300m_profile"}
    assert db["BUFFER_PROFILE"]["pg_lossless_800000_300m_profile"]["pool"] == "ingress_lossless_pool"


def test_sn5600_headroom_is_the_skus_pg_profile_lookup_row(samples: Path) -> None:
    """400G over 3 m on an ACS-SN5600 (traditional buffer model): buffermgrd's row for 400G and the 5 m bucket,
    read here from the real ``pg_profile_lookup.ini`` (what QOS-HEADROOM requires too)."""
    table = (samples / "switch/sonic/sonic_mellanox_sn5600_pg_profile_lookup.ini").read_text(encoding="utf-8")
    row = next(line.split() for line in table.splitlines() if line.split()[:2] == ["400000", "5m"])
    size, xon, xoff, dynamic_th = row[2:6]
    db = render_config_db([PortSpec("Ethernet0", 400_000, "host", 3)], ROCE, **SN5600)
    profile = db["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]  # the 5 m bucket, as buffermgrd names it
    assert (profile["size"], profile["xon"], profile["xoff"], profile["dynamic_th"]) == (size, xon, xoff, dynamic_th)
    assert profile["pool"] == "ingress_lossless_pool"


def test_layout_follows_the_reference() -> None:
    db = render_config_db([PortSpec("Ethernet4", 400_000, "host")], ROCE)
    assert db["PORT_QOS_MAP"]["Ethernet4"] == {
        "dscp_to_tc_map": "ROCE",
        "tc_to_pg_map": "ROCE",
        "tc_to_queue_map": "ROCE",
        "pfc_to_queue_map": "ROCE",
        "pfc_enable": "3",
        "pfcwd_sw_enable": "3",
    }
    assert db["QUEUE"]["Ethernet4|3"] == {"scheduler": "ROCE_DWRR_50", "wred_profile": "ROCE_Q3"}
    assert db["QUEUE"]["Ethernet4|6"] == {"scheduler": "ROCE_STRICT"}
    assert db["SCHEDULER"] == {"ROCE_STRICT": {"type": "STRICT"}, "ROCE_DWRR_50": {"type": "DWRR", "weight": "50"}}
    wred = db["WRED_PROFILE"]["ROCE_Q3"]
    assert (wred["ecn"], wred["green_min_threshold"], wred["green_max_threshold"]) == ("ecn_all", "150000", "1500000")
    assert wred["green_drop_probability"] == "100" and wred["wred_green_enable"] == "true"
    assert db["PFC_WD"] == {
        "Ethernet4": {"action": "drop", "detection_time": "200", "restoration_time": "200"},
        "GLOBAL": {"POLL_INTERVAL": "200"},
    }
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"] == {str(t): ("3" if t == 3 else "0") for t in range(8)}
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"]["ROCE"] == db["TC_TO_QUEUE_MAP"]["ROCE"]
    assert db["PORT"] == {"Ethernet4": {"mtu": "9100"}}
    assert all(isinstance(v, str) for t in db.values() for row in t.values() for v in row.values())


def test_consecutive_lossless_pgs_share_a_range_key() -> None:
    profile = with_(ROCE, lossless_priorities=frozenset({2, 3, 4, 7}))
    db = render_config_db([PortSpec("Ethernet0", 400_000, "host")], profile)
    assert set(db["BUFFER_PG"]) == {"Ethernet0|2-4", "Ethernet0|7"}
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "2,3,4,7"
    assert validate_config_db(db) == []
    assert set(_view(db).ports["Ethernet0"].headroom) == {2, 3, 4, 7}


def test_no_watchdog_and_zero_share_and_mtu_in_profile_name() -> None:
    ets = (EtsWeight(0, "ets", 0), EtsWeight(3, "ets", 100), EtsWeight(6, "strict", 0))
    profile = with_(ROCE, pfcwd=None, ets=ets, switch_mtu=9216)
    db = render_config_db([PortSpec("Ethernet0", 100_000, "host", 5)], profile)
    assert "PFC_WD" not in db and "pfcwd_sw_enable" not in db["PORT_QOS_MAP"]["Ethernet0"]
    assert db["SCHEDULER"]["ROCE_DWRR_1"] == {"type": "DWRR", "weight": "1"}  # SONiC's weight floor
    assert db["BUFFER_PG"]["Ethernet0|3"] == {"profile": "pg_lossless_100000_5m_mtu9216_profile"}
    assert validate_config_db(db) == []


@pytest.mark.parametrize(
    ("ports", "profile", "message"),
    [
        ([PortSpec("Ethernet0; reboot", 400_000, "host")], ROCE, "port 'Ethernet0; reboot' is not a valid name"),
        ([PortSpec("eth0", 400_000, "host")], ROCE, "expected Ethernet<n>"),
        ([PortSpec("Ethernet0", 400_000, "host")] * 2, ROCE, "listed twice"),
        ([PortSpec("Ethernet0", 0, "host")], ROCE, "speed must be positive"),
        ([PortSpec("Ethernet0", 400_000, "spine")], ROCE, "role must be one of host, fabric"),
        ([PortSpec("Ethernet0", 400_000, "host")], with_(ROCE, name="RO CE"), "not a SONiC map name"),
        ([PortSpec("Ethernet0", 400_000, "host")], with_(ROCE, roce_queue=4), "RoCE queue 4 contradicts"),
        ([PORT], with_(ROCE, lossless_priorities=frozenset({4})), "not among the lossless"),
        ([PORT], with_(ROCE, switch_mtu=9300), "switch MTU must be an integer in 68..9216"),
        ([PortSpec("Ethernet0", 400_000, "host")], with_(ROCE, ecn=(EcnQueue(3, 9, 9, 100),)), "need 0 < min < max"),
        (
            [PortSpec("Ethernet0", 400_000, "host")],
            with_(ROCE, pfcwd=WatchdogProfile(50, 200, "drop")),
            "detection time must be 100..5000 ms",
        ),
    ],
)
def test_bad_names_and_profiles_are_refused(ports: list[PortSpec], profile: QosProfile, message: str) -> None:
    with pytest.raises(RenderError, match=r"^sonic: ") as err:
        render_config_db(ports, profile)
    assert message in str(err.value)


# --- validate_config_db: each rule catches a broken db --------------------------------------------------


def _broken(change: str) -> dict[str, Any]:
    db: dict[str, Any] = copy.deepcopy(render_config_db([PortSpec("Ethernet0", 400_000, "host")], ROCE))
    exec(change, {"db": db})
    return db


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("db['QUEUE']['Ethernet0|3']['wred'] = 'x'", "QUEUE|Ethernet0|3: unknown field(s) wred"),
        ("db['PORT']['Ethernet0']['mtu'] = 9100", "PORT|Ethernet0: field 'mtu' must be a string"),
        ("db['DSCP_TO_TC_MAP']['ROCE']['64'] = '0'", "DSCP_TO_TC_MAP|ROCE: map key '64' 64 is outside 0..63"),
        ("db['DSCP_TO_TC_MAP']['ROCE']['26'] = '16'", "value of '26' 16 is outside 0..15"),
        ("db['TC_TO_PRIORITY_GROUP_MAP']['ROCE']['3'] = '8'", "value of '3' 8 is outside 0..7"),
        ("db['TC_TO_QUEUE_MAP']['ROCE']['3'] = 'three'", "value of '3' must be an integer"),
        ("db['MAP_PFC_PRIORITY_TO_QUEUE']['ROCE']['8'] = '0'", "map key '8' 8 is outside 0..7"),
        ("db['DSCP_TO_TC_MAP']['RO CE'] = db['DSCP_TO_TC_MAP'].pop('ROCE')", "DSCP_TO_TC_MAP|RO CE: map name"),
        ("db['PORT_QOS_MAP']['Ethernet0']['pfc_enable'] = '3;4'", "pfc_enable '3;4' must be priorities 0-7"),
        ("db['PORT_QOS_MAP']['Ethernet0']['pfcwd_sw_enable'] = '8'", "pfcwd_sw_enable '8' must be priorities 0-7"),
        ("db['PORT_QOS_MAP']['Ethernet0']['dscp_to_tc_map'] = 'AZURE'", "dscp_to_tc_map 'AZURE' names no"),
        ("db['QUEUE']['Ethernet0|3']['scheduler'] = 'nope'", "scheduler 'nope' names no SCHEDULER entry"),
        ("db['QUEUE']['Ethernet0|3']['wred_profile'] = 'nope'", "wred_profile 'nope' names no WRED_PROFILE entry"),
        ("db['BUFFER_PG']['Ethernet0|3']['profile'] = 'nope'", "profile 'nope' names no BUFFER_PROFILE entry"),
        ("db['QUEUE']['Ethernet0:3'] = db['QUEUE'].pop('Ethernet0|3')", "QUEUE|Ethernet0:3: key must be"),
        ("db['QUEUE']['Ethernet0|4-3'] = db['QUEUE'].pop('Ethernet0|3')", "index '4-3' must be an ascending range"),
        ("db['BUFFER_PG']['Ethernet0|9'] = {'profile': 'NULL'}", "index '9' must be an ascending range within 0..7"),
        ("db['SCHEDULER']['ROCE_STRICT']['type'] = 'FIFO'", "type must be DWRR, WRR or STRICT"),
        ("db['SCHEDULER']['ROCE_DWRR_50']['weight'] = '0'", "weight 0 is outside 1..100"),
        ("db['WRED_PROFILE']['ROCE_Q3']['red_max_threshold'] = '10'", "red_max_threshold 10 is below"),
        ("db['WRED_PROFILE']['ROCE_Q3']['green_drop_probability'] = '101'", "probability 101 is outside 0..100"),
        ("db['WRED_PROFILE']['ROCE_Q3']['ecn'] = 'ecn_maybe'", "ecn 'ecn_maybe' is not one of"),
        ("db['WRED_PROFILE']['ROCE_Q3']['wred_green_enable'] = 'yes'", "wred_green_enable must be true or false"),
        ("db['PFC_WD']['Ethernet0']['detection_time'] = '50'", "detection_time 50 is outside 100..5000"),
        ("db['PFC_WD']['GLOBAL']['POLL_INTERVAL'] = '300'", "200 ms is below PFC_WD|GLOBAL POLL_INTERVAL"),
        ("db['PFC_WD']['GLOBAL']['POLL_INTERVAL'] = '5000'", "POLL_INTERVAL 5000 is outside 100..1000"),
        ("db['PFC_WD']['GLOBAL']['action'] = 'drop'", "PFC_WD|GLOBAL: port field(s) action are not allowed on GLOBAL"),
        ("db['PFC_WD']['Ethernet0']['POLL_INTERVAL'] = '100'", "POLL_INTERVAL is only allowed on PFC_WD|GLOBAL"),
        ("db['PFC_WD']['Ethernet0']['action'] = 'reboot'", "action must be drop, forward or alert"),
        ("db['CABLE_LENGTH']['AZURE']['Ethernet0'] = '5 metres'", "cable length of Ethernet0 must look like '40m'"),
        ("db['PORT']['Ethernet0']['mtu'] = '9300'", "mtu 9300 is outside 68..9216"),
        ("db['BUFFER_PROFILE']['pg_lossless_400000_5m_profile']['pool'] = 'mine'", "pool 'mine' is not a standard"),
        ("db['BUFFER_POOL'] = {'x': {'type': 'egress'}}", "'ingress_lossless_pool' names no BUFFER_POOL"),
        ("db['BUFFER_PROFILE']['pg_lossless_400000_5m_profile']['dynamic_th'] = '9'", "dynamic_th 9 is outside -8..7"),
        ("db['BUFFER_PROFILE']['pg_lossless_400000_5m_profile']['xoff'] = '-1'", "xoff must be an integer"),
    ],
)
def test_each_rule_catches_a_broken_db(change: str, message: str) -> None:
    errors = validate_config_db(_broken(change))
    assert any(message in e for e in errors), errors


def test_bracket_references_of_schema_3_0_1_resolve() -> None:
    db = _broken("db['PORT_QOS_MAP']['Ethernet0']['dscp_to_tc_map'] = '[DSCP_TO_TC_MAP|ROCE]'")
    assert validate_config_db(db) == []


@pytest.mark.parametrize(
    "name",
    [
        "sonic_config_db_dellz9264_qos_full.json",
        "sonic_config_db_legacy_bracket_refs_3_0_1_subset.json",
        "sonic_qos_rendered_mellanox4600c_d48c40_t0.json",
        "sonic_buffers_rendered_mellanox4600c_t0_static.json",
    ],
)
def test_real_configs_validate_clean(samples: Path, name: str) -> None:
    assert validate_config_db(_sample_db(samples, name)) == []


# --- apply and patch ---------------------------------------------------------------------------------


def _patched(current: dict[str, Any], rendered: dict[str, Any]) -> dict[str, Any]:
    patch = json_patch(current, rendered)
    result: dict[str, Any] = jsonpatch.JsonPatch(patch).apply(copy.deepcopy(current))
    assert result == apply_to_config_db(current, rendered)
    return result


def test_patch_on_a_real_switch_equals_apply_and_reads_back(samples: Path) -> None:
    current = _sample_db(samples, "sonic_config_db_dellz9264_qos_full.json")
    ports = [PortSpec("Ethernet0", 100_000, "host", 5), PortSpec("Ethernet4", 100_000, "host", 40)]
    rendered = render_config_db(ports, ROCE, hwsku="Force10-Z9264")
    after = _patched(current, rendered)
    assert validate_config_db(after) == []
    view = _view(after)
    for spec in ports:
        assert_port(view.ports[spec.name], ROCE, spec, "sonic")
    # untouched: another port's settings and the port's own non-QoS fields
    assert after["PORT_QOS_MAP"]["Ethernet8"] == current["PORT_QOS_MAP"]["Ethernet8"]
    assert after["PORT"]["Ethernet0"]["speed"] == current["PORT"]["Ethernet0"]["speed"]
    assert json_patch(after, rendered) == []  # applied twice: nothing left to change


def test_patch_form_add_replace_remove_and_whole_tables() -> None:
    current: dict[str, Any] = {
        "PORT": {"Ethernet0": {"mtu": "1500", "speed": "400000", "lanes": "0,1,2,3"}},
        "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4", "dot1p_to_tc_map": "AZURE"}},
        "DOT1P_TO_TC_MAP": {"AZURE": {"0": "0"}},
    }
    rendered = render_config_db([PortSpec("Ethernet0", 400_000, "host")], with_(ROCE, pfcwd=None))
    patch = json_patch(current, rendered)
    assert {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9100"} in patch
    assert {"op": "replace", "path": "/PORT_QOS_MAP/Ethernet0/pfc_enable", "value": "3"} in patch
    assert {"op": "remove", "path": "/PORT_QOS_MAP/Ethernet0/pfcwd_sw_enable"} in patch
    assert {"op": "add", "path": "/PORT_QOS_MAP/Ethernet0/dscp_to_tc_map", "value": "ROCE"} in patch
    assert {"op": "add", "path": "/DSCP_TO_TC_MAP", "value": rendered["DSCP_TO_TC_MAP"]} in patch
    assert not any(op["path"].startswith(("/PORT/Ethernet0/speed", "/DOT1P_TO_TC_MAP")) for op in patch)
    after = _patched(current, rendered)
    assert after["PORT_QOS_MAP"]["Ethernet0"]["dot1p_to_tc_map"] == "AZURE"


def test_keys_with_slashes_are_escaped_per_rfc_6901() -> None:
    current = {"VLAN_INTERFACE": {"Vlan1000": {}}}
    rendered = {"VLAN_INTERFACE": {"Vlan1000|192.168.0.1/21": {}, "a~b": {"x": "1"}}}
    patch = json_patch(current, rendered)
    assert {"op": "add", "path": "/VLAN_INTERFACE/Vlan1000|192.168.0.1~121", "value": {}} in patch
    assert {"op": "add", "path": "/VLAN_INTERFACE/a~0b", "value": {"x": "1"}} in patch
    _patched(current, rendered)


def test_shared_keys_are_split_so_other_ports_keep_their_settings() -> None:
    current: dict[str, Any] = {
        "PORT_QOS_MAP": {"Ethernet0,Ethernet4": {"pfc_enable": "3,4", "tc_to_pg_map": "AZURE"}},
        "QUEUE": {"Ethernet0,Ethernet4|0-6": {"scheduler": "scheduler.0"}},
        "SCHEDULER": {"scheduler.0": {"type": "DWRR", "weight": "14"}},
        "TC_TO_PRIORITY_GROUP_MAP": {"AZURE": {"3": "3"}},
    }
    rendered = render_config_db([PortSpec("Ethernet0", 400_000, "host")], ROCE)
    after = _patched(current, rendered)
    assert after["PORT_QOS_MAP"]["Ethernet4"] == {"pfc_enable": "3,4", "tc_to_pg_map": "AZURE"}
    assert "Ethernet0,Ethernet4" not in after["PORT_QOS_MAP"]
    assert {f"Ethernet4|{q}" for q in range(7)} <= set(after["QUEUE"])
    assert "Ethernet0|1" not in after["QUEUE"]  # the rendered port's queues are the profile's alone
    assert after["QUEUE"]["Ethernet0|6"] == {"scheduler": "ROCE_STRICT"}
    view = _view(after)
    assert view.ports["Ethernet4"].pfc_enabled == (3, 4)
    assert_port(view.ports["Ethernet0"], ROCE, PortSpec("Ethernet0", 400_000, "host"), "sonic")


def test_a_rendered_port_loses_settings_the_profile_does_not_have() -> None:
    current: dict[str, Any] = {
        "PFC_WD": {"Ethernet0": {"action": "drop"}, "Ethernet4": {"action": "drop"}},
        "QUEUE": {"Ethernet0|4": {"wred_profile": "AZURE_LOSSLESS"}, "Ethernet0|9": {"scheduler": "s"}},
    }
    rendered = render_config_db([PortSpec("Ethernet0", 400_000, "host")], with_(ROCE, pfcwd=None))
    after = _patched(current, rendered)
    assert after["PFC_WD"] == {"Ethernet4": {"action": "drop"}}
    assert "Ethernet0|4" not in after["QUEUE"] and after["QUEUE"]["Ethernet0|9"] == {"scheduler": "s"}
    assert {"op": "remove", "path": "/PFC_WD/Ethernet0"} in json_patch(current, rendered)


@pytest.mark.parametrize(
    ("current", "where"),
    [
        ([1], "<current CONFIG_DB>: a JSON object"),
        ({"QUEUE": []}, "[QUEUE]"),
        ({"QUEUE": {"Ethernet0|3": "x"}}, "[QUEUE|Ethernet0|3]"),
    ],
)
def test_a_current_db_of_the_wrong_shape_is_a_parse_error(current: Any, where: str) -> None:
    rendered = render_config_db([PORT], ROCE)
    for call in (apply_to_config_db, json_patch):
        with pytest.raises(ParseError) as err:
            call(current, rendered)
        assert where in str(err.value)


def test_cable_lengths_go_into_the_devices_own_entry() -> None:
    current = {"CABLE_LENGTH": {"T0": {"Ethernet0": "300m", "Ethernet4": "5m"}}}
    after = _patched(current, render_config_db([PortSpec("Ethernet0", 400_000, "host", 2)], ROCE))
    assert after["CABLE_LENGTH"] == {"T0": {"Ethernet0": "5m", "Ethernet4": "5m"}}  # 2 m: the 5 m bucket


# --- property ------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=profiles(), ports=port_sets("sonic"))
def test_any_valid_profile_renders_validates_and_reads_back(profile: QosProfile, ports: list[PortSpec]) -> None:
    db = render_config_db(ports, profile, hwsku="ACS-SN4600C")
    assert validate_config_db(db) == []
    view = _view(db)
    for spec in ports:
        assert_port(view.ports[spec.name], profile, spec, "sonic")
        assert_headroom(view.ports[spec.name], profile, spec, "ACS-SN4600C", None)
    assert _patched({}, db) == db


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=profiles(), new=profiles(), old_ports=port_sets("sonic"), new_ports=port_sets("sonic"))
def test_re_rendering_a_switch_changes_only_the_rendered_ports(
    old: QosProfile, new: QosProfile, old_ports: list[PortSpec], new_ports: list[PortSpec]
) -> None:
    old, new = with_(old, name="OLD"), with_(new, name="NEW")
    current = render_config_db(old_ports, old)
    rendered = render_config_db(new_ports, new)
    after = _patched(current, rendered)
    assert validate_config_db(after) == []
    view = _view(after)
    renamed = {p.name for p in new_ports}
    for spec in new_ports:
        assert_port(view.ports[spec.name], new, spec, "sonic")
    for spec in old_ports:
        if spec.name not in renamed:
            assert_port(view.ports[spec.name], old, spec, "sonic")
    assert json_patch(after, rendered) == []
