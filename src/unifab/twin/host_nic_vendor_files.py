"""What a twin host's NIC kind and driver stack add to its files (see :mod:`unifab.twin.nic_variants`).

- mlx5 on MLNX_OFED (``ofed``): ``sys/module/mlx5_core/version`` (OFED's versioned module; the ``ecn/`` tree,
  ``traffic_class`` and ``mlnx_qos`` come from :mod:`unifab.twin.host_files`).
- mlx5 on the in-tree driver (``upstream``): DCQCN in debugfs ``sys/kernel/debug/mlx5/<bdf>/cc_params/``
  (reference host-nic-roce §2.2) instead of the OFED-only ``ecn/`` tree, whose per-priority enables have no
  upstream counterpart; no ``traffic_class`` override, no module version.
- Broadcom Thor2 (``bnxt``): ``cmd/bnxt-qos/<netdev>.txt`` (``niccli -dev <n> getqos`` in the layout of the
  Thor2 capture in :mod:`unifab.parse.host.bnxt_qos`, configured with the twin intent's TCs as the mlx5 hosts
  are: priority p on TC p, the CNP TC strict; CNP DSCP, RoCE DSCP and RoCE v2 UDP-port APP entries), the
  bnxt_re CC configfs ``sys/kernel/config/bnxt_re/<dev>/ports/1/cc/`` (one device-wide ``ecn_enable`` and
  ``ecn_marking``, which the NIC's notification and reaction points on the RoCE priority stand for),
  ``sys/module/bnxt_en/version`` and an ``ibv_devinfo`` with Broadcom's ids and ``cmd/ethtool-S/<netdev>.txt``
  in bnxt_en's counter names (per-ring ``[<n>]: rx_discards``..., port ``rx_pfc_ena_frames_pri<p>``...). Thor
  has no cable-length setting and no ``traffic_class`` override.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from unifab import layout
from unifab.parse.host import bnxt_qos, cc_params, ethtool_stats, ibv_devinfo
from unifab.twin import cluster as c
from unifab.twin.cluster import TwinNic
from unifab.twin.files import write_text
from unifab.twin.hardware import RP_DEFAULTS, ets_bw, nic_ibv_device
from unifab.twin.host_pci_files import nic_bdf

__all__ = [
    "BNXT_BOARD_ID",
    "BNXT_EN_VERSION",
    "BNXT_FUNC_COUNTERS",
    "BNXT_FW_VER",
    "BNXT_PART_ID",
    "BNXT_PORT_COUNTERS",
    "BNXT_PORT_EXT_COUNTERS",
    "BNXT_RINGS",
    "BNXT_RING_COUNTERS",
    "BNXT_VENDOR_ID",
    "CC_RP_NAMES",
    "OFED_MLX5_VERSION",
    "ROCE_V2_PORT",
    "bnxt_ethtool_stats",
    "nic_bnxt_cc",
    "nic_bnxt_ibv",
    "nic_bnxt_qos",
    "upstream_cc_params",
    "write_nic_vendor_files",
]

OFED_MLX5_VERSION = "24.10-1.1.4"  # MLNX_OFED / DOCA-OFED mlx5_core
BNXT_EN_VERSION = "1.10.3-231.0.162.0"  # Broadcom out-of-tree bnxt_en (the one with bnxt_re configfs CC)
BNXT_FW_VER = "231.0.162.0"
BNXT_VENDOR_ID = "0x14e4"
BNXT_PART_ID = 0x1760  # BCM57608
BNXT_BOARD_ID = "BCM957608-P1400GDF00"
ROCE_V2_PORT = 4791
# upstream cc_params name <- the OFED ecn/roce_rp name holding the same firmware parameter
CC_RP_NAMES = {
    "rp_clamp_tgt_rate": "clamp_tgt_rate",
    "rp_clamp_tgt_rate_ati": "clamp_tgt_rate_after_time_inc",
    "rp_time_reset": "rpg_time_reset",
    "rp_byte_reset": "rpg_byte_reset",
    "rp_threshold": "rpg_threshold",
    "rp_ai_rate": "rpg_ai_rate",
    "rp_max_rate": "rpg_max_rate",
    "rp_hai_rate": "rpg_hai_rate",
    "rp_min_dec_fac": "rpg_min_dec_fac",
    "rp_min_rate": "rpg_min_rate",
    "rp_rate_to_set_on_first_cnp": "rate_to_set_on_first_cnp",
    "rp_dce_tcp_g": "dce_tcp_g",
    "rp_dce_tcp_rtt": "dce_tcp_rtt",
    "rp_rate_reduce_monitor_period": "rate_reduce_monitor_period",
    "rp_initial_alpha_value": "initial_alpha_value",
    "rp_gd": "rpg_gd",
}


@cache
def upstream_cc_params() -> cc_params.CcParams:
    """The debugfs ``cc_params`` of an mlx5 port at the firmware defaults, CNPs on DSCP 48 / priority 6."""
    from unifab.intent_presets import MLX5_DCQCN

    params = {name: RP_DEFAULTS[ofed] for name, ofed in CC_RP_NAMES.items()}
    params |= {
        "np_min_time_between_cnps": MLX5_DCQCN["min_time_between_cnps"],
        "np_cnp_dscp": c.CNP_DSCP,
        "np_cnp_prio_mode": 0,
    }
    params["np_cnp_prio"] = c.CNP_PRIO
    return cc_params.CcParams(dict(sorted(params.items())))


def nic_bnxt_qos(nic: TwinNic) -> bnxt_qos.BnxtQos:
    """``niccli getqos`` of a Thor2 port configured to the twin's intent (the niccli verbs of ``bnxt_setupcc.sh``
    with ``-up2tc`` / ``-tcbw`` of the intent's eight TCs); no TC has a rate limit (100%)."""

    prio_tc = {p: p for p in range(8)}
    shares = ets_bw(nic.roce_tc_bw, c.ROCE_PRIO)
    tcs = tuple(
        bnxt_qos.BnxtTc(tc, "strict" if tc == c.CNP_PRIO else "ets", 0 if tc == c.CNP_PRIO else shares[tc], 100)
        for tc in range(8)
    )
    apps: list[bnxt_qos.AppEntry] = []
    if nic.trust == "dscp":  # a DSCP APP entry is what makes the port trust DSCP
        apps += [bnxt_qos.AppEntry(nic.dscp2prio[d], 5, "DSCP", d) for d in (c.CNP_DSCP, c.ROCE_DSCP)]
    # CNP DSCP, RoCE DSCP, RoCE v2 UDP port: the order of the Thor2 capture in unifab.parse.host.bnxt_qos
    apps.append(bnxt_qos.AppEntry(c.ROCE_PRIO, 3, "UDP or DCCP", ROCE_V2_PORT))
    dscp2prio = {a.value: a.priority for a in apps if a.selector == 5}
    return bnxt_qos.BnxtQos(
        trust="dscp" if dscp2prio else None,
        dscp2prio=dict(sorted(dscp2prio.items())),
        pfc_enabled=tuple(sorted(nic.pfc)),
        prio_tc=prio_tc,
        tcs=tcs,
        apps=tuple(apps),
        cc=(),
    )


def nic_bnxt_cc(nic: TwinNic) -> bnxt_qos.BnxtQos:
    """The bnxt_re CC configfs of the port as ``bnxt_setupcc.sh`` leaves it: DCQCN-P (``cc_mode`` 1), RoCE/CNP
    DSCP and priority, CC on (``ecn_enable``) and RoCE sent ECN-capable (``ecn_marking``).

    bnxt_re's CC is one device-wide state, so the twin NIC's per-priority enables stand for its two switches:
    the notification point off on the RoCE priority is ``ecn_enable`` 0, the reaction point off is
    ``ecn_marking`` 0 (a sender whose packets are non-ECT is never marked, so never slowed down)."""
    params = {
        "cc_mode": 1,
        "cnp_dscp": c.CNP_DSCP,
        "cnp_prio": c.CNP_PRIO,
        "disable_prio_vlan_tx": 0,
        "ecn_enable": int(c.ROCE_PRIO in nic.np_enabled),
        "ecn_marking": int(c.ROCE_PRIO in nic.rp_enabled),
        "roce_dscp": c.ROCE_DSCP,
        "roce_prio": c.ROCE_PRIO,
    }
    return bnxt_qos.BnxtQos(None, {}, (), {}, (), (), (bnxt_qos.BnxtCc(1, params, {}),))


def nic_bnxt_ibv(base: ibv_devinfo.IbvDevice) -> ibv_devinfo.IbvDevice:
    """``ibv_devinfo`` of a bnxt_re device: the RoCE port as for mlx5, Broadcom's ids and firmware."""
    return replace(
        base, fw_ver=BNXT_FW_VER, vendor_id=BNXT_VENDOR_ID, vendor_part_id=BNXT_PART_ID, board_id=BNXT_BOARD_ID
    )


BNXT_RINGS = 8  # combined rx/tx rings (ethtool -L), TPA (hardware GRO/LRO) off: no tpa ring counters
# Counter names in bnxt_en's print order (drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c: bnxt_get_strings).
BNXT_RING_COUNTERS = (
    *(f"rx_{k}" for k in ("ucast_packets", "mcast_packets", "bcast_packets", "discards", "errors")),
    *(f"rx_{k}" for k in ("ucast_bytes", "mcast_bytes", "bcast_bytes")),
    *(f"tx_{k}" for k in ("ucast_packets", "mcast_packets", "bcast_packets", "errors", "discards")),
    *(f"tx_{k}" for k in ("ucast_bytes", "mcast_bytes", "bcast_bytes")),
    "rx_l4_csum_errors",
    "rx_resets",
    "rx_buf_errors",
    "missed_irqs",
)
BNXT_FUNC_COUNTERS = ("rx_total_discard_pkts", "tx_total_discard_pkts", "rx_total_netpoll_discards")
_SIZES = ("64b", "65b_127b", "128b_255b", "256b_511b", "512b_1023b", "1024b_1518b")
_BIG = ("1519b_2047b", "2048b_4095b", "4096b_9216b", "9217b_16383b")
BNXT_PORT_COUNTERS = (
    *(f"rx_{n}_frames" for n in _SIZES),
    "rx_good_vlan_frames",
    *(f"rx_{n}_frames" for n in _BIG),
    *(f"rx_{k}_frames" for k in ("total", "ucast", "mcast", "bcast", "fcs_err", "ctrl", "pause", "pfc")),
    *(f"rx_{k}_frames" for k in ("align_err", "ovrsz", "jbr", "mtu_err", "tagged", "double_tagged", "good")),
    *(f"rx_pfc_ena_frames_pri{p}" for p in range(8)),
    "rx_undrsz_frames",
    "rx_eee_lpi_events",
    "rx_eee_lpi_duration",
    "rx_bytes",
    "rx_runt_bytes",
    "rx_runt_frames",
    "rx_stat_discard",
    "rx_stat_err",
    *(f"tx_{n}_frames" for n in _SIZES),
    "tx_good_vlan_frames",
    *(f"tx_{n}_frames" for n in _BIG),
    *(f"tx_{k}_frames" for k in ("good", "total", "ucast", "mcast", "bcast", "pause", "pfc", "jabber", "fcs_err")),
    "tx_err",
    "tx_fifo_underruns",
    *(f"tx_pfc_ena_frames_pri{p}" for p in range(8)),
    "tx_eee_lpi_events",
    "tx_eee_lpi_duration",
    "tx_total_collisions",
    "tx_bytes",
    "tx_xthol_frames",
    "tx_stat_discard",
    "tx_stat_error",
)
BNXT_PORT_EXT_COUNTERS = (
    "link_down_events",
    "continuous_pause_events",
    "resume_pause_events",
    "continuous_roce_pause_events",
    "resume_roce_pause_events",
    *(f"rx_{k}_cos{n}" for n in range(8) for k in ("bytes", "packets")),
    *(f"pfc_pri{p}_rx_{k}" for p in range(8) for k in ("duration_us", "transitions")),
    "rx_bits",
    "rx_buffer_passed_threshold",
    "rx_pcs_symbol_err",
    "rx_corrected_bits",
    *(f"rx_discard_{k}_cos{n}" for n in range(8) for k in ("bytes", "packets")),
    "rx_fec_corrected_blocks",
    "rx_fec_uncorrectable_blocks",
    *(f"tx_{k}_cos{n}" for n in range(8) for k in ("bytes", "packets")),
    *(f"pfc_pri{p}_tx_{k}" for p in range(8) for k in ("duration_us", "transitions")),
    *(
        f"{d}_{k}_pri{p}"
        for d, k in (("rx", "bytes"), ("rx", "packets"), ("tx", "bytes"), ("tx", "packets"))
        for p in range(8)
    ),
)


@cache
def bnxt_ethtool_stats() -> str:
    """``ethtool -S`` of an idle Thor2 port (bnxt_en): ring, function, port and extended port counters, all 0.

    bnxt_en prints the per-priority PFC counters for every priority, enabled or not.
    """
    names = [f"[{ring}]: {name}" for ring in range(BNXT_RINGS) for name in BNXT_RING_COUNTERS]
    names += [*BNXT_FUNC_COUNTERS, *BNXT_PORT_COUNTERS, *BNXT_PORT_EXT_COUNTERS]
    return ethtool_stats.dump(dict.fromkeys(names, 0))


@cache
def _cc_params_files() -> dict[str, str]:
    return cc_params.dump_tree(upstream_cc_params())


def write_nic_vendor_files(host_root: Path, nics: list[TwinNic]) -> None:
    """Write the files of one host that depend on its NICs' vendor and driver stack."""
    if not nics:
        return
    sys_dir = host_root / "sys"
    driver = nics[0].driver
    if driver == "ofed":
        write_text(sys_dir / "module" / "mlx5_core" / "version", f"{OFED_MLX5_VERSION}\n")
    elif driver == "bnxt":
        write_text(sys_dir / "module" / "bnxt_en" / "version", f"{BNXT_EN_VERSION}\n")
        # Imported here: host_files imports this module's caller.

        devices = tuple(nic_bnxt_ibv(nic_ibv_device(n)) for n in nics)
        write_text(host_root / layout.IBV_DEVINFO, ibv_devinfo.dump(devices))
    for nic in nics:
        if nic.driver == "upstream":
            cc_dir = sys_dir / "kernel" / "debug" / "mlx5" / nic_bdf(nic.rail) / "cc_params"
            for name, text in _cc_params_files().items():
                write_text(cc_dir / name, text)
        elif nic.driver == "bnxt":
            write_text(host_root / layout.BNXT_QOS_DIR / f"{nic.netdev}.txt", bnxt_qos.dump(nic_bnxt_qos(nic)))
            write_text(host_root / layout.ETHTOOL_S_DIR / f"{nic.netdev}.txt", bnxt_ethtool_stats())
            cc_root = sys_dir / "kernel" / "config" / "bnxt_re" / nic.rdma_dev
            for rel, text in bnxt_qos.dump_tree(nic_bnxt_cc(nic)).items():
                write_text(cc_root / rel, text)
