"""The intent's ``health:`` section: every key maps onto one Thresholds field, bad keys and values are named, and
the thresholds change what the detectors report."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
from tests.health.conftest import series

from unifab.errors import IntentError
from unifab.health.detect import Thresholds, fec
from unifab.health.series import Series
from unifab.health.thresholds import KEYS, from_intent, from_text
from unifab.intent import parse_intent
from unifab.intent_health import HealthSpec

HEAD = "version: 1\npreset: nvidia-spectrum-x\n"


def test_every_threshold_has_exactly_one_key_and_every_key_a_section() -> None:
    assert sorted(KEYS.values()) == sorted(f.name for f in fields(Thresholds))
    for section, key in KEYS:
        sub = HealthSpec.model_fields[section].annotation
        model: Any = next(a for a in getattr(sub, "__args__", (sub,)) if a is not type(None))
        assert key in model.model_fields, (section, key)
    assert {s for s, _ in KEYS} == set(HealthSpec.model_fields)


def test_no_section_keeps_the_defaults_and_each_key_sets_its_field() -> None:
    assert from_intent(None) == Thresholds()
    assert from_intent(parse_intent(HEAD).spec.health) == Thresholds()
    text = HEAD + (
        "health:\n"
        "  link_flap: {events: 5, window_s: 600}\n"
        "  fec: {intervals: 2, total: 4}\n"
        "  pfc_storm: {share: 0.25}\n"
        "  down: {after_s: 120}\n"
        "  nccl_error: {peers: 3}\n"
        "  optics: {warnings: false}\n"
    )
    got = from_intent(parse_intent(text).spec.health)
    want = Thresholds(
        flap_events=5,
        flap_window_s=600.0,
        error_intervals=2,
        error_total=4.0,
        pause_share=0.25,
        down_after_s=120.0,
        nccl_peers=3,
        optics_warnings=False,
    )
    assert got == want
    assert isinstance(got.flap_window_s, float) and isinstance(got.error_total, float)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("health:\n  fec: {intervalz: 4}\n", "fabric.yaml:4: health.fec.intervalz: unknown key 'intervalz'; allowed"),
        ("health:\n  fecc: {}\n", "fabric.yaml:4: health.fecc: unknown key 'fecc'; allowed: link_flap, fec,"),
        ("health:\n  pfc_storm: {share: 1.5}\n", "fabric.yaml:4: health.pfc_storm.share: Input should be less"),
        ("health:\n  down: {after_s: soon}\n", "fabric.yaml:4: health.down.after_s: Input should be a valid number"),
        ("health:\n\n  link_flap: {events: 0}\n", "fabric.yaml:5: health.link_flap.events: Input should be greater"),
        ("health:\n  optics: {warnings: 1}\n", "fabric.yaml:4: health.optics.warnings: Input should be a valid bool"),
        ("health: [fec]\n", "fabric.yaml:3: health: Input should be a valid dictionary"),
    ],
)
def test_a_bad_key_or_value_is_one_error_naming_the_line_and_key(section: str, message: str) -> None:
    with pytest.raises(IntentError) as caught:
        parse_intent(HEAD + section)
    assert [p[: len(message)] for p in caught.value.problems] == [message]
    with pytest.raises(IntentError) as again:
        from_text(HEAD + section, "fabric.yaml")
    assert again.value.problems == caught.value.problems


def test_from_text_uses_the_section_when_the_rest_of_the_file_is_not_for_health() -> None:
    # a health-only file (parse_intent wants the QoS too) and one with a QoS problem: the thresholds still apply
    assert from_text("version: 1\nhealth:\n  fec: {intervals: 7}\n", "f.yaml").error_intervals == 7
    bad_qos = HEAD + "qos: {mtu: {host: 1}}\nhealth:\n  nccl_error: {peers: 4}\n"
    with pytest.raises(IntentError):
        parse_intent(bad_qos)
    assert from_text(bad_qos, "f.yaml").nccl_peers == 4
    with pytest.raises(IntentError, match="not valid YAML"):
        from_text("health: [\n", "f.yaml")
    assert from_text("", "f.yaml") == Thresholds()


def _errors(per_interval: list[int]) -> Series:
    values, total = [], 0
    for inc in [0, *per_interval]:
        total += inc
        values.append(float(total))
    made: Series = series("unifab_port_fec_uncorrectable_total", values)
    return made


def test_the_thresholds_change_what_fires() -> None:
    two = _errors([0, 10, 10, 0, 0, 0])  # two intervals of errors: below the default three
    assert fec(two, Thresholds()) is None
    looser = from_text(HEAD + "health:\n  fec: {intervals: 2, total: 20}\n", "fabric.yaml")
    fired = fec(two, looser)
    assert fired is not None and fired.intervals == 2 and fired.total == 20
    stricter = from_text(HEAD + "health:\n  fec: {total: 22}\n", "fabric.yaml")
    assert fec(_errors([0, 7, 7, 7, 0]), stricter) is None
    assert fec(_errors([0, 7, 7, 7, 0]), Thresholds()) is not None
