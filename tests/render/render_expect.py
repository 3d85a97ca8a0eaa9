"""What a switch port must read back as after rendering a profile, per OS: the tests' one oracle."""

from __future__ import annotations

from unifab.collect.switch_view import PortView
from unifab.profile import PortSpec, QosProfile
from unifab.qos.headroom import (
    SPECTRUM_ASICS,
    guess_asic,
    qbb_xoff_bytes,
    sonic_cable_length_m,
    sonic_mellanox_xoff,
)
from unifab.qos.pg_profile_tables import table_for

EOS_ACTIONS = {"drop": "drop", "forward": "forward", "alert": "alert"}


def cable_of(profile: QosProfile, spec: PortSpec) -> int:
    return spec.cable_m if spec.cable_m is not None else profile.cable_m(spec.name)


def assert_port(view: PortView, profile: QosProfile, spec: PortSpec, device_os: str) -> None:
    """Every QoS value of ``view`` equals what ``profile`` says for ``spec`` on ``device_os``."""
    lossless = sorted(profile.lossless_priorities)
    assert view.trust == "dscp"
    assert view.dscp_to_tc == dict(profile.dscp_to_priority)
    assert view.tc_to_queue == dict(profile.priority_to_tc)
    if device_os == "sonic":
        assert view.tc_to_pg == {t: (t if t in profile.lossless_priorities else 0) for t in range(8)}
    else:  # PGs are implicit: PFC priority n is class n
        assert view.tc_to_pg == {t: t for t in range(8)}
    assert list(view.pfc_enabled) == lossless
    assert view.mtu == profile.switch_mtu
    for e in profile.ecn:
        got = view.ecn[e.queue]
        assert (got.enabled, got.min_bytes, got.max_bytes, got.max_probability) == (
            True,
            e.min_bytes,
            e.max_bytes,
            e.max_probability,
        )
    ecn_queues = {e.queue for e in profile.ecn}
    assert not any(x.enabled for q, x in view.ecn.items() if q not in ecn_queues)
    for w in profile.ets:
        sched = view.schedulers[w.tc]
        if w.tsa == "strict":
            assert sched.type == "STRICT"
        else:
            weight = max(1, w.bw_percent) if device_os == "sonic" else w.bw_percent  # SONiC's weight floor is 1
            assert (sched.type, sched.weight) == ("DWRR", weight)
    assert view.schedulers[profile.cnp_queue].type == "STRICT"
    wd = profile.pfcwd
    if wd is None:
        assert view.pfcwd is None
    else:
        assert view.pfcwd is not None
        assert list(view.pfcwd.priorities) == lossless
        assert view.pfcwd.detection_ms == wd.detection_ms
        if device_os == "nvue":  # NVUE has neither an action nor a restoration time
            assert (view.pfcwd.action, view.pfcwd.restoration_ms) == (None, None)
        else:
            assert (view.pfcwd.action, view.pfcwd.restoration_ms) == (wd.action, wd.restoration_ms)
    if device_os == "eos":  # cable length and headroom are platform-managed on EOS
        assert (view.cable_length_m, view.headroom) == (None, {})
    elif device_os == "sonic":  # traditional buffermgrd: the table's bucket the cable rounds up to
        assert view.cable_length_m == sonic_cable_length_m(cable_of(profile, spec))
    else:
        assert view.cable_length_m == cable_of(profile, spec)


def assert_headroom(
    view: PortView, profile: QosProfile, spec: PortSpec, hwsku: str | None, platform: str | None
) -> None:
    """Each lossless PG's static xoff covers the formula QOS-HEADROOM applies (and the 802.1Qbb bound)."""
    cable = cable_of(profile, spec)
    name = guess_asic(platform, hwsku)
    asics = [SPECTRUM_ASICS[name]] if name else list(SPECTRUM_ASICS.values())
    lanes = 8 if spec.speed_mbps >= 800_000 else 4
    table = table_for(hwsku) if name else None
    row = table.row(spec.speed_mbps, cable) if table is not None else None
    if row is not None:  # traditional buffermgrd copies the SKU's pg_profile_lookup.ini row, whatever the MTU
        need = row.xoff
        assert {(hr.xoff, hr.xon, hr.size) for hr in view.headroom.values()} == {(row.xoff, row.xon, row.size)}
    else:
        need = max(
            sonic_mellanox_xoff(
                spec.speed_mbps, cable, profile.switch_mtu, a, shared_headroom_pool=False, lanes=lanes
            ).xoff
            for a in asics
        )
    assert set(view.headroom) == set(profile.lossless_priorities)
    for hr in view.headroom.values():
        assert hr.xoff is not None and hr.size is not None and hr.xon is not None
        assert not hr.dynamic
        assert hr.xoff >= need
        if row is None:
            assert hr.xoff >= qbb_xoff_bytes(spec.speed_mbps, cable, profile.switch_mtu)
        assert hr.size >= hr.xoff + hr.xon
