"""The intent's ``health:`` section (:class:`unifab.intent_health.HealthSpec`) as detector :class:`Thresholds`.

:data:`KEYS` maps every ``health.<section>.<key>`` to its :class:`Thresholds` field; a key the file leaves out
keeps the dataclass's default, so the defaults live in one place (``detect.Thresholds``), and a test checks that
every field of the dataclass has a key and every key a field.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import Any

from pydantic import ValidationError

from unifab.errors import IntentError, YamlError, compose_yaml, construct_yaml
from unifab.health.detect import Thresholds
from unifab.intent import IntentSpec, parse_intent
from unifab.intent_health import HealthSpec

__all__ = ["KEYS", "from_intent", "from_text"]

_HEALTH_KEY = re.compile(r": health(?:[.\[:]|$)")

# (section, key) -> Thresholds field
KEYS: dict[tuple[str, str], str] = {
    ("link_flap", "events"): "flap_events",
    ("link_flap", "window_s"): "flap_window_s",
    ("fec", "intervals"): "error_intervals",
    ("fec", "window_s"): "error_window_s",
    ("fec", "total"): "error_total",
    ("fec", "ber_warn"): "ber_warn",
    ("lossless_drops", "intervals"): "drop_intervals",
    ("lossless_drops", "window_s"): "drop_window_s",
    ("lossless_drops", "total"): "drop_total",
    ("pfc_storm", "share"): "pause_share",
    ("pfc_storm", "intervals"): "pause_intervals",
    ("pfc_storm", "window_s"): "pause_window_s",
    ("pfc_storm", "watchdog_storms"): "pfcwd_storms",
    ("ecn_absent", "pause_share"): "ecn_pause_share",
    ("ecn_absent", "intervals"): "ecn_intervals",
    ("ecn_absent", "window_s"): "ecn_window_s",
    ("down", "after_s"): "down_after_s",
    ("nccl_error", "peers"): "nccl_peers",
    ("optics", "warnings"): "optics_warnings",
    ("ib_congestion", "share"): "ib_wait_share",
    ("ib_congestion", "intervals"): "ib_wait_intervals",
}


def from_intent(spec: HealthSpec | None, base: Thresholds | None = None) -> Thresholds:
    """``base`` (default: the defaults) with every key the ``health:`` section sets."""
    out = base or Thresholds()
    if spec is None:
        return out
    types = {f.name: f.type for f in fields(Thresholds)}
    changes: dict[str, Any] = {}
    for (section, key), name in KEYS.items():
        sub = getattr(spec, section)
        value = None if sub is None else getattr(sub, key)
        if value is not None:
            changes[name] = float(value) if types[name] in (float, "float") else value
    return replace(out, **changes)


def from_text(text: str, source: str) -> Thresholds:
    """The thresholds of an intent file's ``health:`` section (the defaults when it has none).

    A problem in the ``health:`` section (an unknown key, a bad value) raises :class:`IntentError` with those
    problems, each naming the file, line and key. Problems elsewhere in the file (the QoS a check compares with,
    a file that holds only ``health:``) do not stop health: the checks report them, the thresholds still apply.
    """
    try:
        return from_intent(parse_intent(text, source).spec.health)
    except IntentError as exc:
        mine = [p for p in exc.problems if _HEALTH_KEY.search(p) or "not valid YAML" in p]
        if mine:
            raise IntentError(source, mine) from None
    try:  # the health section is well-formed (parse_intent said so): validate it alone
        node = compose_yaml(text, source)
        raw = None if node is None else construct_yaml(node, source)
        section = raw.get("health") if isinstance(raw, dict) else None
        spec = IntentSpec.model_validate({"health": section}).health
    except (YamlError, ValidationError) as exc:  # not reached after parse_intent's own validation
        raise IntentError(source, [f"{source}: health: {exc}"]) from None
    return from_intent(spec)
