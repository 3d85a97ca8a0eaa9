"""Named QoS baselines for ``fabric.yaml``: the vendors' own RoCE defaults, value for value.

A preset is the ``qos`` section of an intent file, complete, so that ``preset: nvidia-spectrum-x`` plus
a handful of overrides describes a fabric. Every value cites its primary source (the vendor document or
driver source, by the section of the project's reference notes that quotes it) or the parser's defaults
table it comes from; nothing here is invented.
"""

from __future__ import annotations

from typing import Any

from unifab.parse.switch import nvue

__all__ = ["MLX5_DCQCN", "PRESETS", "percent_shares"]

# DCQCN reaction/notification point defaults of ConnectX firmware (mlxconfig q), reference
# host-nic-roce §2.3, by their MLNX_OFED ecn/ sysfs names (§2.1).
MLX5_DCQCN: dict[str, int] = {
    "clamp_tgt_rate": 0,
    "clamp_tgt_rate_after_time_inc": 1,
    "dce_tcp_g": 1019,
    "dce_tcp_rtt": 1,
    "initial_alpha_value": 1023,
    "rate_reduce_monitor_period": 4,
    "rate_to_set_on_first_cnp": 0,
    "rpg_ai_rate": 5,
    "rpg_byte_reset": 32767,
    "rpg_gd": 11,
    "rpg_hai_rate": 50,
    "rpg_max_rate": 0,
    "rpg_min_dec_fac": 50,
    "rpg_min_rate": 1,
    "rpg_threshold": 1,
    "rpg_time_reset": 300,
    "min_time_between_cnps": 4,
}

# SONiC `pfcwd start_default` on a switch of up to 32 ports: detection = restoration = 200 ms, action
# drop (reference switch-qos-sonic-eos-nvue §1.6).
_SONIC_PFCWD = {"detection_ms": 200, "restoration_ms": 200, "action": "drop"}


def percent_shares(weights: list[int]) -> list[int]:
    """DWRR weights as integer percentages summing to 100 (largest remainder, ties to the lower index):
    ETS bandwidth on a NIC (``mlnx_qos --tcbw``) must add up to exactly 100."""
    total = sum(weights)
    exact = [w * 100 / total for w in weights]
    shares = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in by_remainder[: 100 - sum(shares)]:
        shares[i] += 1
    return shares


def _spectrum_x() -> dict[str, Any]:
    """NVIDIA's RoCE tuple (host-nic-roce §5.1) and NVUE ``nv set qos roce`` lossless defaults
    (host-nic-roce §4.1, switch-qos §3, :data:`unifab.parse.switch.nvue.ROCE_DEFAULTS`)."""
    roce = nvue.ROCE_DEFAULTS["lossless"]
    ecn = [
        {"queue": tc, "min_bytes": e.min_bytes, "max_bytes": e.max_bytes, "probability": e.probability}
        for tc, e in sorted(roce.ecn.items())
        if e.min_bytes is not None and e.max_bytes is not None and e.probability is not None
    ]
    ets = [
        {"tc": tc, "tsa": "strict" if s.mode == "strict" else "ets", "bw_percent": s.bw_percent or 0}
        for tc, s in sorted(roce.schedulers.items())
    ]
    return {
        "roce": {"dscp": 26, "priority": 3},  # §5.1: DSCP 26 (AF31) -> prio 3 -> TC3
        "cnp": {"dscp": 48, "priority": 6},  # §5.1 / §2.3: CNP_DSCP 48, CNP_802P_PRIO 6 -> TC6 strict
        "lossless_priorities": sorted(roce.pfc.priorities),  # PFC on 3 only
        "dscp_to_priority": {},  # NVUE and ConnectX firmware default: dscp >> 3 (§4.1, §1.1)
        "priority_to_tc": dict(roce.tc_to_queue),  # SP3 -> TC3, SP6 -> TC6, others -> TC0 (§4.1)
        "ets": ets,  # TC0 / TC3 DWRR 50 %, TC6 strict (§4.1)
        "ecn": ecn,  # TC0 and TC3: 150000 / 1500000 B, probability 100 (§4.1)
        "dcqcn": dict(MLX5_DCQCN),
        "mtu": {"host": 9000, "switch": 9216},  # §5.1: netdev 9000 (RoCE 4096), switch >= 9216
        "pfc_watchdog": dict(_SONIC_PFCWD),
        # NVUE `pfc default-global cable-length 100` (§4.1) is the switch default; hosts keep the mlx5
        # driver's 7 m default (MLX5E_DEFAULT_CABLE_LEN, §2.9) for the host class.
        "headroom": {"cable_m": {"host": 7, "fabric": 100}},
        # NCCL_IB_TC: left to its default, the RoCE DSCP + ECT(0) -- 106 for DSCP 26 (§5.1 / §3.1)
    }


def _sonic_azure() -> dict[str, Any]:
    """SONiC's rendered ``AZURE`` QoS (switch-qos-sonic-eos-nvue §1.2, §1.3)."""
    azure_map = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}  # every other DSCP -> 1 (§1.3)
    return {
        "roce": {"dscp": 3, "priority": 3},  # DSCP 3 -> TC3, lossless (§1.3)
        "cnp": {"dscp": 48, "priority": 6},  # DSCP 48 -> TC6 (§1.3)
        "lossless_priorities": [3, 4],  # LOSSLESS_TC = ['3','4'] (§1.3)
        "dscp_to_priority": {d: azure_map.get(d, 1) for d in range(64)},
        "priority_to_tc": {p: p for p in range(8)},  # TC_TO_QUEUE_MAP identity (§1.3)
        # scheduler.0 DWRR 14 on lossy queues, scheduler.1 DWRR 15 on 3 and 4 (§1.2), as ETS shares of 100
        "ets": [
            {"tc": tc, "tsa": "ets", "bw_percent": bw}
            for tc, bw in enumerate(percent_shares([15 if tc in (3, 4) else 14 for tc in range(8)]))
        ],
        # AZURE_LOSSLESS: min 1048576, max 2097152, drop probability 5 (§1.2)
        "ecn": [{"queue": q, "min_bytes": 1_048_576, "max_bytes": 2_097_152, "probability": 5} for q in (3, 4)],
        "dcqcn": dict(MLX5_DCQCN),
        "mtu": {"host": 9000, "switch": 9100},  # PORT.mtu default 9100 (§1.2)
        "pfc_watchdog": dict(_SONIC_PFCWD),
        "headroom": {"cable_m": {"host": 5, "fabric": 40}},  # the SU mock's 5m / 40m CABLE_LENGTH (§1.4)
    }


def _broadcom_thor() -> dict[str, Any]:
    """Broadcom Thor (bnxt_re) with ``bnxt_setupcc.sh`` defaults (host-nic-roce §2.10) and the niccli
    getqos capture quoted in :mod:`unifab.parse.host.bnxt_qos`: RoCE prio 3 -> TC1, CNP prio 7 -> TC2
    strict, ETS 50/50, DSCP 26 / CNP 48."""
    return {
        "roce": {"dscp": 26, "priority": 3},
        "cnp": {"dscp": 48, "priority": 7},
        "lossless_priorities": [3],
        "dscp_to_priority": {},
        "priority_to_tc": {p: 1 if p == 3 else (2 if p == 7 else 0) for p in range(8)},
        "ets": [
            {"tc": 0, "tsa": "ets", "bw_percent": 50},
            {"tc": 1, "tsa": "ets", "bw_percent": 50},  # "ETS default RoCE 50%" (§2.10)
            {"tc": 2, "tsa": "strict", "bw_percent": 0},
        ],
        "ecn": [{"queue": 1, "min_bytes": 150_000, "max_bytes": 1_500_000, "probability": 100}],
        "dcqcn": {},  # bnxt_re keeps its firmware CC parameters; only enable/marking are written
        "mtu": {"host": 9000, "switch": 9216},
        "pfc_watchdog": dict(_SONIC_PFCWD),
        "headroom": {"cable_m": {"host": 7, "fabric": 100}},
        # default_roce_tos = DSCP << 2: the NIC sets ECT itself (§2.10)
        "nccl": {"traffic_class": 26 << 2},
    }


PRESETS: dict[str, dict[str, Any]] = {
    "nvidia-spectrum-x": _spectrum_x(),
    "sonic-azure": _sonic_azure(),
    "broadcom-thor": _broadcom_thor(),
}
