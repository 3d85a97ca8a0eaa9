"""Commands that set a ConnectX (mlx5) NIC's RoCE QoS, one netdev at a time: MLNX_OFED and upstream kernel."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from unifab.errors import UsageError
from unifab.parse.host import mlnx_qos
from unifab.profile import QosProfile
from unifab.render import host_script as hs
from unifab.render.host_script import NicTarget

__all__ = [
    "CC_PARAMS",
    "DCBX_NOT_PERSISTENT",
    "LIBRARY",
    "NP_PARAMS",
    "NicSettings",
    "applied",
    "buffer_size",
    "cable_len",
    "cc_param",
    "cc_param_values",
    "dcb_app_dscp",
    "dcb_app_flush_dscp",
    "dcb_argv",
    "dcb_buffer_size",
    "dcb_pfc",
    "dcb_pfc_delay",
    "dcb_pfc_pairs",
    "dcbx_handover",
    "dcbx_os",
    "dscp2prio",
    "ecn_enable",
    "ecn_param",
    "ecn_values",
    "global_pause_off",
    "mlnx_qos_argv",
    "mtu",
    "mtu_argv",
    "nic_settings",
    "pair_list",
    "pause_argv",
    "pci_bdf",
    "pfc",
    "pfc_bits",
    "rdma_lines",
    "roce_tos",
    "section",
    "traffic_class",
    "trust",
]

_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def mlnx_qos_argv(netdev: str, *options: str) -> list[str]:
    """``mlnx_qos -i IF OPTION VALUE ...`` as an argv: the one spelling of every mlnx_qos call unifab renders
    (the fix dialect's command lines, the NIC plan's steps)."""
    return ["mlnx_qos", "-i", netdev, *options]


def pfc_bits(priorities: Iterable[int]) -> str:
    """mlnx_qos's PFC list: eight 0/1 values, index = priority."""
    enabled = set(priorities)
    return ",".join("1" if p in enabled else "0" for p in range(8))


def pfc(netdev: str, priorities: Iterable[int]) -> str:
    return " ".join(mlnx_qos_argv(netdev, "--pfc", pfc_bits(priorities)))


def dscp2prio(netdev: str, dscp: int, prio: int) -> str:
    return " ".join(mlnx_qos_argv(netdev, "--dscp2prio", f"set,{dscp},{prio}"))


def ecn_enable(netdev: str, point: str, prio: int) -> str:
    """Enable DCQCN notification (``roce_np``) or reaction (``roce_rp``) point on one priority."""
    return f"echo 1 > /sys/class/net/{netdev}/ecn/{point}/enable/{prio}"


def mtu_argv(netdev: str, value: int | str) -> list[str]:
    return ["ip", "link", "set", "dev", netdev, "mtu", str(value)]


def mtu(netdev: str, value: int) -> str:
    return " ".join(mtu_argv(netdev, value))


def trust(netdev: str, mode: str) -> str:
    return " ".join(mlnx_qos_argv(netdev, "--trust", mode))


def traffic_class(rdma_dev: str, tclass: int, port: int = 1) -> str:
    """Global RoCE TOS override (MLNX_OFED); beats any per-QP TOS the application sets."""
    return f"echo {tclass} > /sys/class/infiniband/{rdma_dev}/tc/{port}/traffic_class"


def cable_len(netdev: str, metres: int) -> str:
    return " ".join(mlnx_qos_argv(netdev, "--cable_len", str(metres)))


def dcbx_os(netdev: str) -> str:
    """Hand the port's DCBX to the OS (``mlnx_qos -d os``): the host's DCB settings stop being overridden."""
    return f"mlnx_qos -i {netdev} -d os"


# What the QOS-DCBX fix says of a hand-over that does not last (checks/host_qos.py, kept in the same words).
DCBX_NOT_PERSISTENT = (
    "# the firmware takes DCBX back at the next boot while its LLDP DCBX agent is on: for good, "
    "mlxconfig -d <dev> set LLDP_NB_DCBX_P1=0 (then a firmware reset), or run mlnx_qos -d os at boot"
)


def dcbx_handover(netdev: str) -> list[str]:
    """The host script's step that takes DCBX from the firmware where ``qos.dcbx`` is ``os``: the same
    ``mlnx_qos -i IF -d os`` as the QOS-DCBX fix, run only when ``mlnx_qos`` reports firmware control."""
    return [DCBX_NOT_PERSISTENT, f"mlx5_dcbx_os {hs.q(hs.netdev(netdev))}"]


def pause_argv(netdev: str, autoneg: str = "off", rx: str = "off", tx: str = "off") -> list[str]:
    """``ethtool -A IF autoneg X rx Y tx Z`` (``off`` everywhere: no 802.3x global pause)."""
    return ["ethtool", "-A", netdev, "autoneg", autoneg, "rx", rx, "tx", tx]


def global_pause_off(netdev: str) -> str:
    return " ".join(pause_argv(netdev))


def buffer_size(netdev: str, sizes: Iterable[int]) -> str:
    """Receive buffer sizes in bytes, one per buffer (8), through MLNX_OFED's ``mlnx_qos --buffer_size``."""
    return " ".join(mlnx_qos_argv(netdev, "--buffer_size", ",".join(str(int(s)) for s in sizes)))


def ecn_param(netdev: str, point: str, name: str, value: int) -> str:
    """One MLNX_OFED ``ecn/`` parameter, e.g. ``roce_np/cnp_dscp`` (host-nic-roce §2.1)."""
    return f"echo {int(value)} > /sys/class/net/{netdev}/ecn/{point}/{name}"


# --- upstream (in-tree) mlx5: iproute2 dcb and debugfs cc_params (host-nic-roce §2.2, §2.9) ---------------


def dcb_argv(obj: str, verb: str, netdev: str, *attrs: str) -> list[str]:
    """``dcb OBJECT VERB dev IF ATTR VALUE ...`` (iproute2) as an argv; a pair list is one token per pair."""
    return ["dcb", obj, verb, "dev", netdev, *(t for a in attrs for t in a.split(" "))]


def _dcb(obj: str, verb: str, netdev: str, *attrs: str) -> str:
    return " ".join(hs.q(a) for a in dcb_argv(obj, verb, netdev, *attrs))


def dcb_app_dscp(netdev: str, dscp: int, prio: int) -> str:
    """Map one DSCP to a priority; the first DSCP APP entry also switches mlx5 trust to DSCP."""
    return _dcb("app", "replace", netdev, f"dscp-prio {int(dscp)}:{int(prio)}")


def dcb_app_flush_dscp(netdev: str) -> str:
    """Delete every DSCP APP entry: with the last one gone mlx5 trusts PCP again."""
    return _dcb("app", "flush", netdev, "dscp-prio")


def dcb_pfc_pairs(priorities: Iterable[int]) -> str:
    enabled = set(priorities)
    return _pairs("on" if p in enabled else "off" for p in range(8))


def dcb_pfc(netdev: str, priorities: Iterable[int]) -> str:
    return _dcb("pfc", "set", netdev, f"prio-pfc {dcb_pfc_pairs(priorities)}")


def dcb_pfc_delay(netdev: str, metres: int) -> str:
    """The cable length mlx5 sizes PFC headroom for: the IEEE PFC ``delay`` field (what mlnx_qos --cable_len sets)."""
    return _dcb("pfc", "set", netdev, f"delay {int(metres)}")


def dcb_buffer_size(netdev: str, sizes: Iterable[int]) -> str:
    return _dcb("buffer", "set", netdev, f"buffer-size {_pairs(int(s) for s in sizes)}")


def cc_param(bdf: str, name: str, value: int) -> str:
    """One upstream debugfs ``cc_params`` value (``np_cnp_dscp``, ``rp_ai_rate``, ...)."""
    if name not in CC_PARAMS.values() and name not in ("np_cnp_dscp", "np_cnp_prio"):
        raise UsageError(f"{name!r}: not an mlx5 debugfs cc_params file")
    return f"echo {int(value)} > {hs.q(f'/sys/kernel/debug/mlx5/{pci_bdf(bdf)}/cc_params/{name}')}"


def roce_tos(rdma_dev: str, tos: int) -> tuple[str, str]:
    """The rdma_cm default TOS of a device (configfs; the directory appears on ``mkdir``), any RoCE driver."""
    base = f"/sys/kernel/config/rdma_cm/{hs.rdma_dev(rdma_dev)}"
    return f"mkdir -p {hs.q(base)}", f"echo {int(tos)} > {hs.q(f'{base}/ports/1/default_roce_tos')}"


def pci_bdf(address: str) -> str:
    if not _BDF.fullmatch(address):
        raise UsageError(f"PCI address {address!r}: expected dddd:bb:ss.f in hex")
    return address


# --- the host script's ConnectX section (see unifab.render.host_script) ----------------------------------

# MLNX_OFED ecn/ sysfs name -> upstream debugfs cc_params name (host-nic-roce §2.1, §2.2)
CC_PARAMS = {
    "clamp_tgt_rate": "rp_clamp_tgt_rate",
    "clamp_tgt_rate_after_time_inc": "rp_clamp_tgt_rate_ati",
    "rpg_time_reset": "rp_time_reset",
    "rpg_byte_reset": "rp_byte_reset",
    "rpg_threshold": "rp_threshold",
    "rpg_ai_rate": "rp_ai_rate",
    "rpg_max_rate": "rp_max_rate",
    "rpg_hai_rate": "rp_hai_rate",
    "rpg_min_dec_fac": "rp_min_dec_fac",
    "rpg_min_rate": "rp_min_rate",
    "rate_to_set_on_first_cnp": "rp_rate_to_set_on_first_cnp",
    "dce_tcp_g": "rp_dce_tcp_g",
    "dce_tcp_rtt": "rp_dce_tcp_rtt",
    "rate_reduce_monitor_period": "rp_rate_reduce_monitor_period",
    "initial_alpha_value": "rp_initial_alpha_value",
    "rpg_gd": "rp_gd",
    "min_time_between_cnps": "np_min_time_between_cnps",
}
NP_PARAMS = frozenset({"min_time_between_cnps"})


def ecn_values(profile: QosProfile) -> dict[str, int]:
    """The MLNX_OFED ``ecn/`` files the section sets, relative to ``/sys/class/net/<if>/ecn/``, in its order."""
    values = {f"{point}/enable/{p}": 1 for point in ("roce_np", "roce_rp") for p in range(8)}
    values["roce_np/cnp_dscp"] = profile.cnp_dscp
    values["roce_np/cnp_802p_prio"] = profile.cnp_priority
    for name, value in sorted(profile.dcqcn.items()):
        values[f"{'roce_np' if name in NP_PARAMS else 'roce_rp'}/{name}"] = int(value)
    return values


def cc_param_values(profile: QosProfile) -> dict[str, int]:
    """The upstream debugfs ``cc_params`` files the section sets (the ``ecn/`` values by their debugfs names)."""
    values = {"np_cnp_dscp": profile.cnp_dscp, "np_cnp_prio": profile.cnp_priority}
    values.update({CC_PARAMS[name]: int(value) for name, value in sorted(profile.dcqcn.items())})
    return values


# Reads `mlnx_qos -i IF -a` (host-nic-roce §1.2) into key=value lines: dcbx (os|fw), trust, cable, pfc,
# prio2buffer, dscp (64 priorities, "-" where unmapped), prio_tc, tsa, tcbw (8 values each, comma separated).
LIBRARY = r"""
mlx5_state() {
  mlnx_qos -i "$1" -a | awk '
    /^DCBX mode:/ { dcbx = ($3 == "Firmware") ? "fw" : "os" }
    /^Priority trust state:/ { trust = $4 }
    /^Cable len:/ { cable = $3 }
    /^\tenabled / { pfc = $2; for (i = 3; i <= 9; i++) pfc = pfc "," $i }
    /^\tbuffer / { buf = $2; for (i = 3; i <= 9; i++) buf = buf "," $i }
    /^\tprio:[0-9]+ dscp:/ {
      p = substr($1, 6); n = split(substr($2, 6), d, ",")
      for (i = 1; i <= n; i++) if (d[i] != "") map[d[i] + 0] = p
    }
    /^tc: [0-9]+ / {
      tc = $2 + 0; tsa[tc] = "vendor"; bw[tc] = 0
      if ($0 ~ /tsa: strict/) tsa[tc] = "strict"
      if (match($0, /tsa: ets, bw: [0-9]+%/)) { tsa[tc] = "ets"; bw[tc] = substr($0, RSTART + 14, RLENGTH - 15) + 0 }
    }
    /^\t priority: / { ptc[$2 + 0] = tc }
    END {
      printf "dcbx=%s\ntrust=%s\ncable=%s\npfc=%s\nprio2buffer=%s\n", dcbx, trust, cable, pfc, buf
      s = ""; for (i = 0; i < 64; i++) s = s (i ? "," : "") ((i in map) ? map[i] : "-"); print "dscp=" s
      a = ""; t = ""; b = ""
      for (i = 0; i < 8; i++) {
        a = a (i ? "," : "") ((i in ptc) ? ptc[i] : "-")
        t = t (i ? "," : "") ((i in tsa) ? tsa[i] : "-")
        b = b (i ? "," : "") ((i in bw) ? bw[i] : "-")
      }
      print "prio_tc=" a; print "tsa=" t; print "tcbw=" b
    }'
}

kv() { printf '%s\n' "$1" | sed -n "s/^$2=//p"; }

# mlx5_dcbx_os IF: hand the port's DCBX from the NIC firmware to the OS (`mlnx_qos -d os`, QOS-DCBX's fix), so
# the switch's DCBX TLVs stop overriding the settings that follow; nothing when the OS has it already
mlx5_dcbx_os() {
  if changed "$1 dcbx" "$(kv "$(mlx5_state "$1")" dcbx)" os; then mlnx_qos -i "$1" -d os >/dev/null; fi
}

# mlx5_qos IF PFC PRIO_TC TSA TCBW PRIO2BUFFER CABLE DSCP: set what differs, through mlnx_qos
mlx5_qos() {
  local ifc="$1" state
  state="$(mlx5_state "$ifc")"
  if changed "$ifc trust" "$(kv "$state" trust)" dscp; then
    mlnx_qos -i "$ifc" --trust dscp >/dev/null
    state="$(mlx5_state "$ifc")"
  fi
  local -a have want args=()
  IFS=, read -r -a have <<< "$(kv "$state" dscp)"
  IFS=, read -r -a want <<< "$8"
  for i in "${!want[@]}"; do
    if [ "${have[$i]:-}" != "${want[$i]}" ]; then args+=(--dscp2prio "set,$i,${want[$i]}"); fi
  done
  if [ "${#args[@]}" -gt 0 ]; then
    echo "unifab-qos: $ifc dscp2prio: $((${#args[@]} / 2)) DSCP(s)"
    CHANGES=$((CHANGES + 1))
    mlnx_qos -i "$ifc" "${args[@]}" >/dev/null
  fi
  if changed "$ifc pfc" "$(kv "$state" pfc)" "$2"; then mlnx_qos -i "$ifc" --pfc "$2" >/dev/null; fi
  if changed "$ifc prio_tc" "$(kv "$state" prio_tc)" "$3"; then mlnx_qos -i "$ifc" --prio_tc "$3" >/dev/null; fi
  if changed "$ifc ets" "$(kv "$state" tsa) $(kv "$state" tcbw)" "$4 $5"; then
    mlnx_qos -i "$ifc" --tsa "$4" --tcbw "$5" >/dev/null
  fi
  if changed "$ifc prio2buffer" "$(kv "$state" prio2buffer)" "$6"; then
    mlnx_qos -i "$ifc" --prio2buffer "$6" >/dev/null
  fi
  if changed "$ifc cable_len" "$(kv "$state" cable)" "$7"; then mlnx_qos -i "$ifc" --cable_len "$7" >/dev/null; fi
}

# dcb_ensure OBJECT IF VERB ATTR WANT [ATTR WANT ...]: upstream iproute2 dcb; set all when any differs
dcb_ensure() {
  local obj="$1" ifc="$2" verb="$3" differ=0 have
  shift 3
  local -a args=()
  while [ "$#" -gt 0 ]; do
    have="$(dcb "$obj" show dev "$ifc" "$1" | tr -s ' \t' '\n\n' | { grep ':' || true; } | sort -t: -k1,1n \
      | paste -sd ' ')"
    if [ "$have" != "$2" ]; then differ=1; fi
    local -a tokens
    read -r -a tokens <<< "$2"
    args+=("$1" "${tokens[@]}")
    shift 2
  done
  if [ "$differ" -eq 1 ]; then
    echo "unifab-qos: $ifc dcb $obj"
    CHANGES=$((CHANGES + 1))
    dcb "$obj" "$verb" dev "$ifc" "${args[@]}"
  fi
}

# pci_of IF: the PCI address of a netdev (for the upstream debugfs cc_params directory)
pci_of() {
  local bdf
  bdf="$(basename "$(readlink -f "$ROOT/sys/class/net/$1/device")")"
  if ! [[ "$bdf" =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]]; then
    echo "unifab-qos: $1: no PCI device under /sys/class/net/$1/device" >&2
    return 1
  fi
  printf '%s\n' "$bdf"
}

# pause_off IF: no 802.3x global pause (it would stall every priority, not just the lossless one)
pause_off() {
  if command -v ethtool >/dev/null 2>&1 && ethtool -a "$1" | grep -Eq '^(RX|TX):[[:space:]]+on'; then
    echo "unifab-qos: $1 global pause -> off"
    CHANGES=$((CHANGES + 1))
    ethtool -A "$1" autoneg off rx off tx off
  fi
}
"""


def _pairs(values: Iterable[int | str]) -> str:
    return " ".join(f"{i}:{v}" for i, v in enumerate(values))


def pair_list(values: Iterable[int | str]) -> str:
    """iproute2 dcb's ``index:value`` pairs, space separated: ``0:off 1:off 2:off 3:on ...``."""
    return _pairs(values)


def section(nic: NicTarget, profile: QosProfile) -> str:
    """The bash that brings one ConnectX port to ``profile`` (mlnx_qos, or dcb + debugfs upstream)."""
    ifc = hs.netdev(nic.netdev)
    dev = hs.rdma_dev(nic.rdma_dev) if nic.rdma_dev else None
    s = nic_settings(profile, nic.cable_m)
    lines = [f"\n# --- {ifc}" + (f" ({dev})" if dev else "") + " ---"]
    lines.append(f"set_file {hs.q(f'/sys/class/net/{ifc}/mtu')} {hs.q(profile.host_mtu)}")
    lines.append("if command -v mlnx_qos >/dev/null 2>&1; then")
    if profile.dcbx == "os":  # first: while the firmware runs DCBX, the switch's TLVs override what follows
        lines += [f"  {line}" for line in dcbx_handover(ifc)]
    args = (s.pfc, s.prio_tc, s.tsa, s.tcbw, s.prio2buffer, str(s.cable_m), s.dscp)
    lines.append(f"  mlx5_qos {hs.q(ifc)} " + " ".join(hs.q(a) for a in args))
    lines.append("else")
    dscp_pairs = " ".join(f"{d}:{p}" for d, p in enumerate(s.dscp.split(",")))
    pfc_pairs = _pairs("on" if v == "1" else "off" for v in s.pfc.split(","))
    lines.append(f"  dcb_ensure app {hs.q(ifc)} replace dscp-prio {hs.q(dscp_pairs)}")
    lines.append(f"  dcb_ensure pfc {hs.q(ifc)} set prio-pfc {hs.q(pfc_pairs)}")
    lines.append(
        f"  dcb_ensure ets {hs.q(ifc)} set prio-tc {hs.q(_pairs(s.prio_tc.split(',')))}"
        f" tc-tsa {hs.q(_pairs(s.tsa.split(',')))} tc-bw {hs.q(_pairs(s.tcbw.split(',')))}"
    )
    lines.append(f"  dcb_ensure buffer {hs.q(ifc)} set prio-buffer {hs.q(_pairs(s.prio2buffer.split(',')))}")
    lines.append("fi")
    lines.append(f"pause_off {hs.q(ifc)}")
    ecn = f"/sys/class/net/{ifc}/ecn"
    lines.append(f'if [ -d "$ROOT"{hs.q(ecn)} ]; then')
    for point in ("roce_np", "roce_rp"):
        lines.append(f'  for p in 0 1 2 3 4 5 6 7; do set_file {hs.q(f"{ecn}/{point}/enable/")}"$p" 1; done')
    lines.append(f"  set_file {hs.q(f'{ecn}/roce_np/cnp_dscp')} {hs.q(profile.cnp_dscp)}")
    lines.append(f"  set_file {hs.q(f'{ecn}/roce_np/cnp_802p_prio')} {hs.q(profile.cnp_priority)}")
    for name, value in sorted(profile.dcqcn.items()):
        point = "roce_np" if name in NP_PARAMS else "roce_rp"
        lines.append(f"  set_file {hs.q(f'{ecn}/{point}/{name}')} {hs.q(int(value))}")
    lines.append("else")
    lines.append(f'  bdf="$(pci_of {hs.q(ifc)})"')
    cc = '"/sys/kernel/debug/mlx5/$bdf/cc_params/'
    lines.append(f'  set_file {cc}np_cnp_dscp" {hs.q(profile.cnp_dscp)}')
    lines.append(f'  set_file {cc}np_cnp_prio" {hs.q(profile.cnp_priority)}')
    for name, value in sorted(profile.dcqcn.items()):
        lines.append(f'  set_file {cc}{CC_PARAMS[name]}" {hs.q(int(value))}')
    lines.append("fi")
    if dev is not None:
        lines += rdma_lines(dev, profile.nccl_ib_tc, f"Global tclass={profile.nccl_ib_tc}")
    return "\n".join(lines) + "\n"


def rdma_lines(dev: str, tos: int, tclass_readback: str | None) -> list[str]:
    """RoCE TOS for rdma_cm (configfs) and, on MLNX_OFED, the device's global traffic_class."""
    cm = f"/sys/kernel/config/rdma_cm/{dev}/ports/1"
    lines = [
        f"set_file {hs.q(f'{cm}/default_roce_tos')} {hs.q(tos)}",
        f"set_file {hs.q(f'{cm}/default_roce_mode')} {hs.q('RoCE v2')}",
    ]
    if tclass_readback is not None:
        tc = f"/sys/class/infiniband/{dev}/tc/1/traffic_class"
        lines.append(f'if [ -e "$ROOT"{hs.q(tc)} ]; then')
        lines.append(f"  set_file {hs.q(tc)} {hs.q(tos)} {hs.q(tclass_readback)}")
        lines.append("fi")
    return lines


@dataclass(frozen=True, slots=True)
class NicSettings:
    """A ConnectX port's mlnx_qos values for a profile, in mlnx_qos's own list forms."""

    pfc: str
    prio_tc: str
    tsa: str
    tcbw: str
    prio2buffer: str
    cable_m: int
    dscp: str


def nic_settings(profile: QosProfile, cable_m: int) -> NicSettings:
    ets = {e.tc: e for e in profile.ets}
    lossless = profile.lossless_priorities
    return NicSettings(
        pfc=",".join("1" if p in lossless else "0" for p in range(8)),
        prio_tc=hs.csv(profile.priority_to_tc[p] for p in range(8)),
        tsa=",".join(ets[tc].tsa if tc in ets else "ets" for tc in range(8)),
        tcbw=hs.csv(ets[tc].bw_percent if tc in ets and ets[tc].tsa == "ets" else 0 for tc in range(8)),
        prio2buffer=",".join("1" if p in lossless else "0" for p in range(8)),
        cable_m=int(cable_m),
        dscp=hs.csv(profile.dscp_to_priority[d] for d in range(64)),
    )


def applied(current: mlnx_qos.MlnxQos | None, profile: QosProfile, cable_m: int) -> mlnx_qos.MlnxQos:
    """What ``mlnx_qos -i IF`` prints after the script ran on a port that printed ``current``."""
    s = nic_settings(profile, cable_m)
    ets = {e.tc: e for e in profile.ets}
    prio_tc = {p: profile.priority_to_tc[p] for p in range(8)}
    tcs = tuple(
        mlnx_qos.TcConfig(
            tc=tc,
            tsa=ets[tc].tsa if tc in ets else "ets",
            bw=None if tc in ets and ets[tc].tsa != "ets" else (ets[tc].bw_percent if tc in ets else 0),
            ratelimit_gbps=None,
            priorities=tuple(p for p in range(8) if prio_tc[p] == tc),
        )
        for tc in range(8)
        if any(prio_tc[p] == tc for p in range(8))
    )
    sizes = current.buffers.sizes if current and current.buffers else (130944, 261888, 0, 0, 0, 0, 0, 0)
    total = current.buffers.max_buffer_size if current and current.buffers else None
    return mlnx_qos.MlnxQos(
        dcbx="os" if profile.dcbx == "os" else (current.dcbx if current else "os"),
        trust="dscp",
        dscp2prio=dict(profile.dscp_to_priority),
        pfc_enabled=tuple(sorted(profile.lossless_priorities)),
        prio_tc=prio_tc,
        tcs=tcs,
        buffers=mlnx_qos.Buffers(
            sizes=sizes,
            max_buffer_size=total,
            prio2buffer=tuple(int(v) for v in s.prio2buffer.split(",")),
        ),
        cable_len=s.cable_m,
        notices=(),
    )
