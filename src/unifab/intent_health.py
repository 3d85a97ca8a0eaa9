"""The ``health:`` section of ``fabric.yaml``: when each health detector fires (docs/intent.md, docs/health.md).

One sub-section per detector, every key optional; a key left out keeps the default of
:class:`unifab.health.detect.Thresholds` (the one place the defaults live: this layer sits below ``health`` and
holds only the schema, :func:`unifab.health.thresholds.from_intent` maps it onto the dataclass)::

    health:
      link_flap: {events: 3, window_s: 900}
      fec: {intervals: 3, window_s: 600, total: 20, ber_warn: 1.0e-5}
      lossless_drops: {intervals: 3, window_s: 600, total: 20}
      pfc_storm: {share: 0.5, intervals: 3, window_s: 300, watchdog_storms: 2}
      ecn_absent: {pause_share: 0.1, intervals: 3, window_s: 600}
      down: {after_s: 300}
      nccl_error: {peers: 2}
      optics: {warnings: true}
      ib_congestion: {share: 0.5, intervals: 3}

Bounds keep a value meaningful (a share is in (0, 1], a window holds at least one 1 s sample, a count is at least
1); unknown keys and bad values are reported by :func:`unifab.intent.parse_intent` with the file, line and key.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

__all__ = [
    "Count",
    "DownSpec",
    "EcnAbsentSpec",
    "ErrorWindowSpec",
    "FecSpec",
    "HealthSpec",
    "IbCongestionSpec",
    "LinkFlapSpec",
    "NcclErrorSpec",
    "OpticsSpec",
    "PfcStormSpec",
    "Share",
    "WindowS",
]

Count = Annotated[int, Field(ge=1, le=1_000_000)]
WindowS = Annotated[float, Field(ge=1.0, le=7 * 86400.0)]  # seconds; a week is longer than any bundle


def _number_text(value: object) -> object:
    """PyYAML (YAML 1.1) reads ``1e-5`` (no dot) as a string: take a string that spells a number as that number."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


Share = Annotated[float, BeforeValidator(_number_text), Field(gt=0.0, le=1.0)]  # of an interval's time
Total = Annotated[float, BeforeValidator(_number_text), Field(ge=0.0, le=1e15)]
Ber = Annotated[float, BeforeValidator(_number_text), Field(gt=0.0, le=1.0)]  # errored bits per received bit


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class LinkFlapSpec(_Spec):
    """HEALTH-LINK-FLAP: ``events`` link-down events (a carrier-changes pair is one) within ``window_s``."""

    events: Count | None = None
    window_s: WindowS | None = None


class ErrorWindowSpec(_Spec):
    """HEALTH-FEC and HEALTH-LOSSLESS-DROPS: ``intervals`` intervals with an increment within ``window_s``,
    adding up to ``total``."""

    intervals: Count | None = None
    window_s: WindowS | None = None
    total: Total | None = None


class FecSpec(ErrorWindowSpec):
    """HEALTH-FEC: the error window of :class:`ErrorWindowSpec`, and ``ber_warn``: the pre-FEC bit error ratio
    (bits FEC corrected per bit received) that warns, in ``intervals`` within ``window_s``, before FEC fails."""

    ber_warn: Ber | None = None


class PfcStormSpec(_Spec):
    """HEALTH-PFC-STORM: pause sent for at least ``share`` of an interval, in ``intervals`` within ``window_s``."""

    share: Share | None = None
    intervals: Count | None = None
    window_s: WindowS | None = None
    watchdog_storms: Count | None = None  # PFC watchdog storms on one switch queue within window_s


class EcnAbsentSpec(_Spec):
    """HEALTH-ECN-ABSENT: paused for ``pause_share`` of ``intervals`` intervals within ``window_s``, no ECN/CNP."""

    pause_share: Share | None = None
    intervals: Count | None = None
    window_s: WindowS | None = None


class DownSpec(_Spec):
    """HEALTH-NODE-DOWN and HEALTH-SWITCH-DOWN: silent (or a link down) this long while the others report."""

    after_s: WindowS | None = None


class NcclErrorSpec(_Spec):
    """HEALTH-NCCL-ERROR: completion errors naming this many distinct peers through one link, from both sides."""

    peers: Count | None = None


class OpticsSpec(_Spec):
    """HEALTH-OPTICS: whether DOM beyond a warning level (not only an alarm level) is a symptom."""

    warnings: bool | None = None


class IbCongestionSpec(_Spec):
    """HEALTH-PFC-STORM on InfiniBand: a port's XmitWait share at least ``share`` in ``intervals`` consecutive
    perfquery intervals (credit starvation); the slow receiver below the furthest-downstream such port is blamed."""

    share: Share | None = None
    intervals: Count | None = None


class HealthSpec(_Spec):
    """The ``health`` section: one sub-section per detector (HEALTH-GPU-XID has no threshold: its catalog decides)."""

    link_flap: LinkFlapSpec | None = None
    fec: FecSpec | None = None
    lossless_drops: ErrorWindowSpec | None = None
    pfc_storm: PfcStormSpec | None = None
    ecn_absent: EcnAbsentSpec | None = None
    down: DownSpec | None = None
    nccl_error: NcclErrorSpec | None = None
    optics: OpticsSpec | None = None
    ib_congestion: IbCongestionSpec | None = None
