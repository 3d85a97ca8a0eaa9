"""Broadcom Thor (bnxt_en / bnxt_re) RoCE QoS: niccli commands and the bnxt_re CC configfs writes.

The commands are those ``bnxt_setupcc.sh`` issues (reference host-nic-roce §2.10): ``niccli -dev <if>
ets -tsa ... -up2tc ... -tcbw ...``, ``pfc -enable <prio>``, ``apptlv -add -app <prio>,5,<dscp>`` (and the
RoCE v2 UDP port 4791 with selector 3), read back with ``niccli -dev <if> getqos``. Congestion control
is ``/sys/kernel/config/bnxt_re/<dev>/ports/1/cc/``: values are written and read in hex (``%#x``;
``echo 26`` would set 0x26 = 38), then ``apply`` takes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import UsageError
from unifab.parse.host import bnxt_qos
from unifab.profile import QosProfile
from unifab.render import host_script as hs
from unifab.render.host_script import NicTarget
from unifab.render.nic_mlx5 import rdma_lines

__all__ = [
    "CC_FILES",
    "LIBRARY",
    "ROCE_UDP_PORT",
    "QosArgs",
    "app_dscp",
    "applied",
    "cc_files",
    "cc_values",
    "cc_writes",
    "ets_argv",
    "getqos",
    "hexval",
    "niccli_argv",
    "pfc_enable",
    "qos_args",
    "section",
    "tcs_used",
]

ROCE_UDP_PORT = 4791

# Reads `niccli -dev IF getqos` (grammar in unifab.parse.host.bnxt_qos) into key=value lines.
LIBRARY = r"""
bnxt_state() {
  niccli -dev "$1" getqos | awk '
    function rest(from,   s, i) { s = ""; for (i = from; i <= NF; i++) s = s (i > from ? " " : "") $i; return s }
    /PRIO_MAP:/ { print "prio_map=" rest(2) }
    /TC Bandwidth:/ { print "tcbw=" rest(3) }
    /TSA_MAP:/ { print "tsa=" rest(2) }
    /PFC enabled:/ { print "pfc=" rest(3) }
    /^[[:space:]]*Priority:/ { prio = $2 }
    /^[[:space:]]*Sel:/ { sel = $2 }
    /^[[:space:]]*DSCP:/ { print "app=" prio ",5," $2 }
    /^[[:space:]]*UDP or DCCP:/ { print "app=" prio ",3," $NF }'
}

bkv() { printf '%s\n' "$1" | sed -n "s/^$2=//p"; }

# bnxt_qos IF TSA UP2TC TCBW PFC APP...: set what differs, through niccli
bnxt_qos() {
  local ifc="$1" state app
  state="$(bnxt_state "$ifc")"
  if changed "$ifc ets" "$(bkv "$state" tsa)|$(bkv "$state" prio_map)|$(bkv "$state" tcbw)" "$2|$3|$4"; then
    niccli -dev "$ifc" ets -tsa "${2// /,}" -up2tc "${3// /,}" -tcbw "$(printf '%s' "${4//%/}" | tr ' ' ',')" >/dev/null
  fi
  if changed "$ifc pfc" "$(bkv "$state" pfc)" "$5"; then niccli -dev "$ifc" pfc -enable "$5" >/dev/null; fi
  shift 5
  for app in "$@"; do
    if ! printf '%s\n' "$state" | grep -qx "app=$app"; then
      echo "unifab-qos: $ifc app TLV $app"
      CHANGES=$((CHANGES + 1))
      niccli -dev "$ifc" apptlv -add -app "$app" >/dev/null
    fi
  done
}

# bnxt_cc DEV NAME=VALUE...: bnxt_re congestion control (hex values), then apply when anything changed
bnxt_cc() {
  local dir="/sys/kernel/config/bnxt_re/$1/ports/1/cc" before="$CHANGES" pair
  shift
  mkdir -p "$ROOT$dir"
  for pair in "$@"; do set_file "$dir/${pair%%=*}" "${pair#*=}"; done
  if [ "$CHANGES" -ne "$before" ]; then printf '0x1\n' > "$ROOT$dir/apply"; fi
}
"""


def hexval(value: int) -> str:
    """How bnxt_re configfs prints (and accepts) a value: ``%#x``."""
    return f"{int(value):#x}"


def tcs_used(profile: QosProfile) -> int:
    return max([*profile.priority_to_tc.values(), *(e.tc for e in profile.ets)]) + 1


def applied(profile: QosProfile, current: bnxt_qos.BnxtQos | None = None) -> bnxt_qos.BnxtQos:
    """The port's QoS once the section ran: the intent's priority -> TC map and ETS over the TCs it uses,
    PFC, and the APP TLVs the section adds (CNP DSCP, RoCE DSCP, RoCE v2 UDP port: the order of the Thor2
    capture in :mod:`unifab.parse.host.bnxt_qos`). Rate limits are not the section's, so they stay as
    ``current`` has them (100%, none configured, without a current record)."""
    ets = {e.tc: e for e in profile.ets}
    rates = {t.tc: t.ratelimit_pct for t in current.tcs} if current is not None else {}
    tcs = []
    for tc in range(tcs_used(profile)):
        tsa = ets[tc].tsa if tc in ets else "ets"
        bw = ets[tc].bw_percent if tc in ets and tsa == "ets" else 0
        tcs.append(bnxt_qos.BnxtTc(tc, tsa, bw, rates.get(tc, 100)))
    roce, cnp = profile.roce_priority, profile.cnp_priority
    apps = (
        bnxt_qos.AppEntry(cnp, 5, "DSCP", profile.cnp_dscp),
        bnxt_qos.AppEntry(roce, 5, "DSCP", profile.roce_dscp),
        bnxt_qos.AppEntry(roce, 3, "UDP or DCCP", ROCE_UDP_PORT),
    )
    return bnxt_qos.BnxtQos(
        trust="dscp",
        dscp2prio=dict(sorted((a.value, a.priority) for a in apps if a.selector == 5)),
        pfc_enabled=tuple(sorted(profile.lossless_priorities)),
        prio_tc={p: profile.priority_to_tc[p] for p in range(8)},
        tcs=tuple(tcs),
        apps=apps,
        cc=(),
    )


@dataclass(frozen=True, slots=True)
class QosArgs:
    """A port's niccli values for a profile, as ``getqos`` prints them (``0:ets 1:ets``, ``0:0 1:0 ...``,
    ``50% 50%``), the PFC list (``3``) and the APP TLVs (``prio,selector,value``)."""

    tsa: str
    up2tc: str
    tcbw: str
    pfc: str
    apps: tuple[str, ...]


def qos_args(profile: QosProfile) -> QosArgs:
    qos = applied(profile)
    return QosArgs(
        tsa=" ".join(f"{t.tc}:{t.tsa}" for t in qos.tcs),
        up2tc=" ".join(f"{p}:{tc}" for p, tc in qos.prio_tc.items()),
        tcbw=" ".join(f"{t.bw or 0}%" for t in qos.tcs),
        pfc=",".join(str(p) for p in qos.pfc_enabled),
        apps=tuple(f"{a.priority},{a.selector},{a.value}" for a in qos.apps),
    )


def cc_values(profile: QosProfile) -> dict[str, int]:
    """The bnxt_re ``ports/1/cc/`` values the section writes (in hex), before ``apply``."""
    return {
        "ecn_enable": 1,
        "roce_prio": profile.roce_priority,
        "roce_dscp": profile.roce_dscp,
        "cnp_prio": profile.cnp_priority,
        "cnp_dscp": profile.cnp_dscp,
    }


def niccli_argv(netdev: str, *args: str) -> list[str]:
    """``niccli -dev IF VERB ...`` as an argv: the one spelling of the niccli calls unifab renders."""
    return ["niccli", "-dev", netdev, *args]


def ets_argv(netdev: str, tsa: str, up2tc: str, tcbw: str) -> list[str]:
    """``niccli ets`` from the getqos forms (``0:ets 1:strict``, ``0:0 1:1``, ``50% 50%``), as bnxt_qos() writes it."""
    bw = ",".join(b.rstrip("%") for b in tcbw.split())
    return niccli_argv(netdev, "ets", "-tsa", tsa.replace(" ", ","), "-up2tc", up2tc.replace(" ", ","), "-tcbw", bw)


def section(nic: NicTarget, profile: QosProfile) -> str:
    ifc = hs.netdev(nic.netdev)
    dev = hs.rdma_dev(nic.rdma_dev) if nic.rdma_dev else None
    a = qos_args(profile)
    lines = [f"\n# --- {ifc}" + (f" ({dev})" if dev else "") + " ---"]
    lines.append(f"set_file {hs.q(f'/sys/class/net/{ifc}/mtu')} {hs.q(profile.host_mtu)}")
    lines.append(f"bnxt_qos {hs.q(ifc)} " + " ".join(hs.q(v) for v in (a.tsa, a.up2tc, a.tcbw, a.pfc, *a.apps)))
    lines.append(f"pause_off {hs.q(ifc)}")
    if dev is not None:
        cc = cc_values(profile)
        lines.append(f"bnxt_cc {hs.q(dev)} " + " ".join(hs.q(f"{k}={hexval(v)}") for k, v in cc.items()))
        lines += rdma_lines(dev, profile.nccl_ib_tc, None)
    return "\n".join(lines) + "\n"


def getqos(profile: QosProfile, current: bnxt_qos.BnxtQos | None = None) -> str:
    """What ``niccli -dev <if> getqos`` prints once the section ran on a port that printed ``current``."""
    text = bnxt_qos.dump(applied(profile, current))
    bnxt_qos.parse(text, "<rendered getqos>")  # the renderer writes only what the parser reads
    return text


def cc_files(profile: QosProfile) -> dict[str, str]:
    """The bnxt_re ``ports/1/cc/`` files after the section ran, relative to ``bnxt_re/<dev>/``."""
    values = {  # bnxt_setupcc.sh: ECT marking, CC on, DCQCN (cc_mode 1)
        "cc_mode": 1,
        "ecn_enable": 1,
        "ecn_marking": 1,
        "roce_prio": profile.roce_priority,
        "roce_dscp": profile.roce_dscp,
        "cnp_prio": profile.cnp_priority,
        "cnp_dscp": profile.cnp_dscp,
    }
    return {f"ports/1/cc/{k}": ("0" if v == 0 else hexval(v)) + "\n" for k, v in values.items()}


# --- single commands for a finding's fix (the same niccli verbs and configfs files the section uses) ------

CC_FILES = frozenset({"ecn_enable", "ecn_marking", "cc_mode", "roce_prio", "roce_dscp", "cnp_prio", "cnp_dscp"})


def pfc_enable(netdev: str, priorities: list[int]) -> str:
    """``niccli pfc -enable`` takes the lossless priorities as a comma list."""
    if not priorities:
        raise UsageError("niccli pfc -enable needs at least one priority")
    argv = niccli_argv(hs.netdev(netdev), "pfc", "-enable", ",".join(str(int(p)) for p in sorted(priorities)))
    return " ".join(hs.q(a) for a in argv)


def app_dscp(netdev: str, prio: int, dscp: int) -> str:
    """An APP TLV mapping ``dscp`` to ``prio`` (selector 5): how bnxt_en classifies RoCE by DSCP."""
    return " ".join(
        hs.q(a) for a in niccli_argv(hs.netdev(netdev), "apptlv", "-add", "-app", f"{int(prio)},5,{int(dscp)}")
    )


def cc_writes(rdma_dev: str, values: dict[str, int]) -> tuple[str, ...]:
    """bnxt_re congestion-control configfs writes (hex, as the driver reads them), then ``apply``."""
    unknown = sorted(set(values) - CC_FILES)
    if unknown:
        raise UsageError(f"{', '.join(unknown)}: not bnxt_re cc configfs files")
    base = f"/sys/kernel/config/bnxt_re/{hs.rdma_dev(rdma_dev)}"
    cc = f"{base}/ports/1/cc"
    lines = [f"mkdir -p {hs.q(base)}"]
    lines += [f"echo {hexval(v)} > {hs.q(f'{cc}/{k}')}" for k, v in values.items()]
    lines.append(f"echo 0x1 > {hs.q(f'{cc}/apply')}")
    return tuple(lines)
