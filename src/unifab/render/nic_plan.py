"""One host's NIC plan (``nic-plan.json``): the host script's settings as machine-checkable steps.

``unifab-qos.sh`` is for a person to read and run; the plan is for ``unifab agent apply``, which records every
setting before it changes it, applies the steps one at a time, reads each back and rolls everything back
when a step or the read-back fails. Both come from the same inputs (the profile and each NIC's
:class:`~unifab.render.host_script.NicTarget`) and the same values (:func:`nic_mlx5.nic_settings`,
:func:`nic_mlx5.ecn_values`, :func:`nic_bnxt.qos_args`, :func:`nic_bnxt.cc_values`), and every command is
spelled by the renderers' argv builders (``nic_mlx5.mlnx_qos_argv``, ``dcb_argv``, ``mtu_argv``,
``pause_argv``, ``nic_bnxt.niccli_argv``, ...), which the fix dialects use too.

A command step names a :class:`Setting` (:data:`SETTINGS`): how to read the current value (``read``: argvs whose
stdouts :attr:`Setting.parse` turns into the value's canonical text) and how to write a value
(:attr:`Setting.write`). The plan carries the concrete argvs for the intended value (``expect``) so it can
be reviewed; the agent recomputes them from the setting and refuses a plan whose argvs differ, and builds
the rollback argvs from the recorded value with the same :attr:`Setting.write`. A file step (``setting:
"file"``) is a sysfs/configfs/debugfs write the agent does itself (under ``--root``), on a path of one of the
shapes :func:`file_path_ok` allows.

The dialect of a NIC (MLNX_OFED ``mlnx_qos``, upstream ``dcb``, Broadcom ``niccli``) is decided when the plan
is rendered, from what the bundle shows (the script decides at run time). ``flaps_link`` marks a step that
toggles the port's link: a PFC change (mlx5 ``setpfc`` calls ``mlx5_toggle_port_link``; bnxt_en
re-negotiates), a receive-buffer mapping or cable-length change (mlx5 recomputes and reprograms the port
buffers) and an MTU change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unifab.errors import ParseError, UnifabError, UsageError
from unifab.parse.host import bnxt_qos, ethtool_pause, mlnx_qos
from unifab.profile import QosProfile
from unifab.render import host_script as hs
from unifab.render import nic_bnxt, nic_mlx5

__all__ = [
    "BNXT",
    "FILE",
    "FORMAT",
    "OFED",
    "SETTINGS",
    "TOOLS",
    "UPSTREAM",
    "Ctx",
    "NotWritable",
    "PlanNic",
    "Setting",
    "dumps",
    "file_path_ok",
    "file_value_ok",
    "render_nic_plan",
]

FORMAT = "unifab-nic-plan/1"
OFED, UPSTREAM, BNXT = "mlnx_ofed", "mlx5_upstream", "bnxt"  # the dialects of render.nic_cli
FILE = "file"  # the setting of a file step
TOOLS = frozenset({"mlnx_qos", "dcb", "ip", "ethtool", "niccli"})  # every argv[0] a setting may run


class NotWritable(UnifabError):
    """A recorded value the setting has no command for (rollback reports the step as not restored)."""


@dataclass(frozen=True, slots=True)
class PlanNic:
    """A NIC port of the plan: the script's target plus what the bundle tells about its stack."""

    netdev: str
    rdma_dev: str | None
    driver: str  # "mlx5" | "bnxt"
    dialect: str  # OFED | UPSTREAM | BNXT
    cable_m: int
    pci_address: str | None = None  # the upstream debugfs cc_params directory
    traffic_class: bool = False  # the MLNX_OFED tc/1/traffic_class override exists


@dataclass(frozen=True, slots=True)
class Ctx:
    """What a setting's commands are built from: validated names and the step's argument."""

    netdev: str
    rdma_dev: str | None = None
    arg: str | None = None


Argvs = list[list[str]]


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    what: str
    read: Callable[[Ctx], Argvs]
    parse: Callable[[Ctx, Sequence[str]], str]  # the read argvs' stdouts -> the value's canonical text
    write: Callable[[Ctx, str, str | None], Argvs]  # value (and the current one, when known) -> argvs
    flaps_link: bool = False


def _shape(value: str, pattern: str, what: str) -> str:
    if not re.fullmatch(pattern, value):
        raise NotWritable(f"{what} {value!r}: not a value unifab writes")
    return value


# --- ip / ethtool ------------------------------------------------------------------------------------------


def _ip_read(c: Ctx) -> Argvs:
    return [["ip", "-j", "link", "show", "dev", c.netdev]]


def _ip_parse(c: Ctx, out: Sequence[str]) -> str:
    links = json.loads(out[0])
    if not isinstance(links, list) or not links or "mtu" not in links[0]:
        raise ParseError("ip -j link show", "a JSON list with the link's mtu")
    return str(int(links[0]["mtu"]))


def _ip_write(c: Ctx, value: str, current: str | None) -> Argvs:
    if not value.isdigit() or not 68 <= int(value) <= 65535:
        raise NotWritable(f"MTU {value!r}: expected an integer 68-65535")
    return [nic_mlx5.mtu_argv(c.netdev, int(value))]


def _onoff(flag: bool) -> str:
    return "on" if flag else "off"


def _pause_read(c: Ctx) -> Argvs:
    return [["ethtool", "-a", c.netdev]]


def _pause_parse(c: Ctx, out: Sequence[str]) -> str:
    p = ethtool_pause.parse(out[0], "ethtool -a")
    return f"{_onoff(p.autoneg)} {_onoff(p.rx)} {_onoff(p.tx)}"


def _pause_write(c: Ctx, value: str, current: str | None) -> Argvs:
    autoneg, rx, tx = _shape(value, r"(on|off) (on|off) (on|off)", "pause (autoneg rx tx)").split()
    return [nic_mlx5.pause_argv(c.netdev, autoneg, rx, tx)]


# --- MLNX_OFED mlnx_qos ------------------------------------------------------------------------------------


def _mq_read(c: Ctx) -> Argvs:
    return [nic_mlx5.mlnx_qos_argv(c.netdev)]


def _mq_read_all(c: Ctx) -> Argvs:
    return [nic_mlx5.mlnx_qos_argv(c.netdev, "-a")]


def _mq(out: Sequence[str]) -> mlnx_qos.MlnxQos:
    return mlnx_qos.parse(out[0], "mlnx_qos")


def _csv8(values: Mapping[int, int]) -> str:
    return ",".join(str(values[p]) if p in values else "-" for p in range(8))


def _mq_option(option: str, pattern: str) -> Callable[[Ctx, str, str | None], Argvs]:
    def write(c: Ctx, value: str, current: str | None) -> Argvs:
        return [nic_mlx5.mlnx_qos_argv(c.netdev, option, _shape(value, pattern, option))]

    return write


_LIST8 = r"[0-7](,[0-7]){7}"


def _mq_dscp(c: Ctx, out: Sequence[str]) -> str:
    m = _mq(out).dscp2prio
    return ",".join(str(m[d]) if d in m else "-" for d in range(64))


def _mq_dscp_write(c: Ctx, value: str, current: str | None) -> Argvs:
    prios = _shape(value, r"([0-7]|-)(,([0-7]|-)){63}", "dscp2prio").split(",")
    sets = [t for d, p in enumerate(prios) if p != "-" for t in ("--dscp2prio", f"set,{d},{p}")]
    return [nic_mlx5.mlnx_qos_argv(c.netdev, *sets)] if sets else []  # unmapped: `--trust pcp` clears them


def _mq_ets(c: Ctx, out: Sequence[str]) -> str:
    tcs = {t.tc: t for t in _mq(out).tcs}
    tsa = ",".join(tcs[tc].tsa if tc in tcs else "-" for tc in range(8))
    bw = ",".join(str(tcs[tc].bw or 0) if tc in tcs else "-" for tc in range(8))
    return f"{tsa} {bw}"


def _mq_ets_write(c: Ctx, value: str, current: str | None) -> Argvs:
    tsa, bw = _shape(value, r"(ets|strict|vendor)(,(ets|strict|vendor)){7} \d{1,3}(,\d{1,3}){7}", "ets").split()
    return [nic_mlx5.mlnx_qos_argv(c.netdev, "--tsa", tsa, "--tcbw", bw)]


def _mq_p2b(c: Ctx, out: Sequence[str]) -> str:
    buffers = _mq(out).buffers
    return ",".join(str(b) for b in buffers.prio2buffer) if buffers and buffers.prio2buffer else ""


def _mq_cable(c: Ctx, out: Sequence[str]) -> str:
    n = _mq(out).cable_len
    return "" if n is None else str(n)


# --- upstream mlx5: iproute2 dcb ---------------------------------------------------------------------------


def _pairs_of(text: str) -> str:
    pairs = [t for t in text.split() if ":" in t]
    return " ".join(sorted(pairs, key=lambda t: int(t.split(":")[0]) if t.split(":")[0].isdigit() else -1))


def _dcb_read(obj: str, *attrs: str) -> Callable[[Ctx], Argvs]:
    return lambda c: [nic_mlx5.dcb_argv(obj, "show", c.netdev, a) for a in attrs]


def _dcb_parse(c: Ctx, out: Sequence[str]) -> str:
    return "|".join(_pairs_of(o) for o in out)


def _dcb_set(obj: str, attrs: tuple[str, ...], pair: str) -> Callable[[Ctx, str, str | None], Argvs]:
    def write(c: Ctx, value: str, current: str | None) -> Argvs:
        parts = value.split("|")
        if len(parts) != len(attrs):
            raise NotWritable(f"dcb {obj} {value!r}: expected {len(attrs)} pair list(s)")
        for p in parts:
            _shape(p, rf"\d{{1,2}}:{pair}( \d{{1,2}}:{pair})*", f"dcb {obj}")
        return [nic_mlx5.dcb_argv(obj, "set", c.netdev, *(f"{a} {p}" for a, p in zip(attrs, parts, strict=True)))]

    return write


def _dcb_app_write(c: Ctx, value: str, current: str | None) -> Argvs:
    if not value:
        return [nic_mlx5.dcb_argv("app", "flush", c.netdev, "dscp-prio")]
    _shape(value, r"\d{1,2}:[0-7]( \d{1,2}:[0-7])*", "dcb app dscp-prio")
    out = [nic_mlx5.dcb_argv("app", "replace", c.netdev, f"dscp-prio {value}")]
    keep = {p.split(":")[0] for p in value.split()}
    extra = [p for p in (current or "").split() if p.split(":")[0] not in keep]
    if extra:  # `replace` leaves the DSCPs it does not name: delete those the value does not have
        out.append(nic_mlx5.dcb_argv("app", "del", c.netdev, "dscp-prio " + " ".join(extra)))
    return out


# --- Broadcom niccli ---------------------------------------------------------------------------------------


def _nc_read(c: Ctx) -> Argvs:
    return [nic_bnxt.niccli_argv(c.netdev, "getqos")]


def _nc(out: Sequence[str]) -> bnxt_qos.BnxtQos:
    return bnxt_qos.parse(out[0], "niccli getqos")


def _nc_ets(c: Ctx, out: Sequence[str]) -> str:
    q = _nc(out)
    tsa = " ".join(f"{t.tc}:{t.tsa}" for t in q.tcs)
    up2tc = " ".join(f"{p}:{tc}" for p, tc in sorted(q.prio_tc.items()))
    return f"{tsa}|{up2tc}|{' '.join(f'{t.bw or 0}%' for t in q.tcs)}"


def _nc_ets_write(c: Ctx, value: str, current: str | None) -> Argvs:
    pattern = r"[0-7]:(ets|strict)( [0-7]:(ets|strict))*\|[0-7]:[0-7]( [0-7]:[0-7]){7}\|\d{1,3}%( \d{1,3}%)*"
    tsa, up2tc, tcbw = _shape(value, pattern, "niccli ets").split("|")
    return [nic_bnxt.ets_argv(c.netdev, tsa, up2tc, tcbw)]


def _nc_pfc_write(c: Ctx, value: str, current: str | None) -> Argvs:
    if not value:
        raise NotWritable("niccli: no PFC priority to enable (the reference names no command that disables all)")
    return [nic_bnxt.niccli_argv(c.netdev, "pfc", "-enable", _shape(value, r"[0-7](,[0-7])*", "niccli pfc"))]


def _nc_app(c: Ctx, out: Sequence[str]) -> str:
    want = tuple(int(x) for x in (c.arg or "").split(","))
    return "present" if any((a.priority, a.selector, a.value) == want for a in _nc(out).apps) else "absent"


def _nc_app_write(c: Ctx, value: str, current: str | None) -> Argvs:
    arg = _shape(c.arg or "", r"[0-7],[1-5],\d{1,5}", "APP TLV")
    if value != "present":
        raise NotWritable(f"APP TLV {arg}: niccli adds APP TLVs; the reference names no command that deletes one")
    return [nic_bnxt.niccli_argv(c.netdev, "apptlv", "-add", "-app", arg)]


def _s(
    name: str,
    what: str,
    read: Callable[[Ctx], Argvs],
    parse: Callable[[Ctx, Sequence[str]], str],
    write: Callable[[Ctx, str, str | None], Argvs],
    flaps: bool = False,
) -> Setting:
    return Setting(name, what, read, parse, write, flaps)


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        _s("ip.mtu", "MTU", _ip_read, _ip_parse, _ip_write, flaps=True),
        _s("ethtool.pause", "global pause (autoneg rx tx)", _pause_read, _pause_parse, _pause_write),
        _s("mlnx_qos.trust", "trust", _mq_read, lambda c, o: _mq(o).trust or "", _mq_option("--trust", "pcp|dscp")),
        _s("mlnx_qos.dscp2prio", "DSCP -> priority", _mq_read, _mq_dscp, _mq_dscp_write),
        _s(
            "mlnx_qos.pfc",
            "PFC",
            _mq_read,
            lambda c, o: nic_mlx5.pfc_bits(_mq(o).pfc_enabled),
            _mq_option("--pfc", r"[01](,[01]){7}"),
            flaps=True,
        ),
        _s(
            "mlnx_qos.prio_tc",
            "priority -> TC",
            _mq_read,
            lambda c, o: _csv8(_mq(o).prio_tc),
            _mq_option("--prio_tc", _LIST8),
        ),
        _s("mlnx_qos.ets", "ETS (tsa tcbw)", _mq_read_all, _mq_ets, _mq_ets_write),
        _s(
            "mlnx_qos.prio2buffer",
            "priority -> buffer",
            _mq_read,
            _mq_p2b,
            _mq_option("--prio2buffer", _LIST8),
            flaps=True,
        ),
        _s(
            "mlnx_qos.cable_len", "cable length", _mq_read, _mq_cable, _mq_option("--cable_len", r"\d{1,5}"), flaps=True
        ),
        _s("dcb.app", "DSCP -> priority (APP)", _dcb_read("app", "dscp-prio"), _dcb_parse, _dcb_app_write),
        _s(
            "dcb.pfc",
            "PFC",
            _dcb_read("pfc", "prio-pfc"),
            _dcb_parse,
            _dcb_set("pfc", ("prio-pfc",), "(on|off)"),
            flaps=True,
        ),
        _s(
            "dcb.ets",
            "ETS (prio-tc|tc-tsa|tc-bw)",
            _dcb_read("ets", "prio-tc", "tc-tsa", "tc-bw"),
            _dcb_parse,
            _dcb_set("ets", ("prio-tc", "tc-tsa", "tc-bw"), r"([0-9]{1,3}|ets|strict|vendor)"),
        ),
        _s(
            "dcb.buffer",
            "priority -> buffer",
            _dcb_read("buffer", "prio-buffer"),
            _dcb_parse,
            _dcb_set("buffer", ("prio-buffer",), "[0-7]"),
            flaps=True,
        ),
        _s("niccli.ets", "ETS (tsa|up2tc|tcbw)", _nc_read, _nc_ets, _nc_ets_write),
        _s(
            "niccli.pfc",
            "PFC",
            _nc_read,
            lambda c, o: ",".join(str(p) for p in _nc(o).pfc_enabled),
            _nc_pfc_write,
            flaps=True,
        ),
        _s("niccli.app", "APP TLV", _nc_read, _nc_app, _nc_app_write),
    )
}


# --- file steps --------------------------------------------------------------------------------------------

_NAME = r"[A-Za-z0-9_]{1,64}"


def file_path_ok(path: str, nic: PlanNic, commit: bool = False) -> bool:
    """Whether a file step may write ``path`` for ``nic``: one of the sysfs/configfs/debugfs shapes the host
    script writes, with this NIC's own (validated) names in it."""
    shapes: list[str] = []
    if commit:
        if nic.rdma_dev:
            shapes.append(rf"/sys/kernel/config/bnxt_re/{re.escape(nic.rdma_dev)}/ports/1/cc/apply")
    else:
        shapes.append(rf"/sys/class/net/{re.escape(nic.netdev)}/ecn/roce_(np|rp)/(enable/[0-7]|{_NAME})")
        if nic.pci_address:
            shapes.append(rf"/sys/kernel/debug/mlx5/{re.escape(nic.pci_address)}/cc_params/{_NAME}")
        if nic.rdma_dev:
            dev = re.escape(nic.rdma_dev)
            shapes += [
                rf"/sys/class/infiniband/{dev}/tc/1/traffic_class",
                rf"/sys/kernel/config/rdma_cm/{dev}/ports/1/default_roce_(tos|mode)",
                rf"/sys/kernel/config/bnxt_re/{dev}/ports/1/cc/{_NAME}",
            ]
    return ".." not in path.split("/") and any(re.fullmatch(s, path) for s in shapes)


def file_value_ok(value: str) -> bool:
    """A value a file step writes: a number, a hex number, or a short word (``RoCE v2``); never a newline."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}|", value) is not None


# --- rendering ---------------------------------------------------------------------------------------------


def _cmd(nic: PlanNic, key: str, setting: str, expect: str, arg: str | None = None) -> dict[str, Any]:
    s = SETTINGS[setting]
    ctx = Ctx(nic.netdev, nic.rdma_dev, arg)
    step: dict[str, Any] = {"id": f"{nic.netdev}.{key}", "nic": nic.netdev, "what": s.what, "setting": setting}
    if arg is not None:
        step["arg"] = arg
    step |= {"read": s.read(ctx), "apply": s.write(ctx, expect, None), "expect": expect, "flaps_link": s.flaps_link}
    return step


def _file(nic: PlanNic, key: str, path: str, expect: str | int, **extra: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"id": f"{nic.netdev}.{key}", "nic": nic.netdev, "what": path.rsplit("/", 1)[-1]}
    step |= {"setting": FILE, "path": path, "expect": str(expect), "compare": "text", "flaps_link": False}
    return step | extra


def _rdma_steps(nic: PlanNic, profile: QosProfile) -> list[dict[str, Any]]:
    if not nic.rdma_dev:
        return []
    cm = f"/sys/kernel/config/rdma_cm/{nic.rdma_dev}/ports/1"
    steps = [
        _file(nic, "roce_tos", f"{cm}/default_roce_tos", profile.nccl_ib_tc, compare="int"),
        _file(nic, "roce_mode", f"{cm}/default_roce_mode", "RoCE v2"),
    ]
    if nic.traffic_class:  # MLNX_OFED reads it back as "Global tclass=N"
        tc = f"/sys/class/infiniband/{nic.rdma_dev}/tc/1/traffic_class"
        pattern = r"(?:Global tclass=)?(\d*)"
        steps.append(_file(nic, "traffic_class", tc, profile.nccl_ib_tc, pattern=pattern, if_exists=True))
    return steps


def _mlx5_steps(nic: PlanNic, profile: QosProfile, notes: list[str]) -> list[dict[str, Any]]:
    s = nic_mlx5.nic_settings(profile, nic.cable_m)
    steps = [_cmd(nic, "mtu", "ip.mtu", str(profile.host_mtu))]
    if nic.dialect == OFED:
        steps += [
            _cmd(nic, "trust", "mlnx_qos.trust", "dscp"),
            _cmd(nic, "dscp2prio", "mlnx_qos.dscp2prio", s.dscp),
            _cmd(nic, "pfc", "mlnx_qos.pfc", s.pfc),
            _cmd(nic, "prio_tc", "mlnx_qos.prio_tc", s.prio_tc),
            _cmd(nic, "ets", "mlnx_qos.ets", f"{s.tsa} {s.tcbw}"),
            _cmd(nic, "prio2buffer", "mlnx_qos.prio2buffer", s.prio2buffer),
            _cmd(nic, "cable_len", "mlnx_qos.cable_len", str(s.cable_m)),
            _cmd(nic, "pause", "ethtool.pause", "off off off"),
        ]
        ecn = f"/sys/class/net/{nic.netdev}/ecn"
        for rel, value in nic_mlx5.ecn_values(profile).items():
            steps.append(_file(nic, "ecn." + rel.replace("/", "."), f"{ecn}/{rel}", value))
    else:
        pairs = nic_mlx5.pair_list
        steps += [
            _cmd(nic, "dcb_app", "dcb.app", " ".join(f"{d}:{p}" for d, p in enumerate(s.dscp.split(",")))),
            _cmd(nic, "dcb_pfc", "dcb.pfc", pairs("on" if v == "1" else "off" for v in s.pfc.split(","))),
            _cmd(nic, "dcb_ets", "dcb.ets", "|".join(pairs(v.split(",")) for v in (s.prio_tc, s.tsa, s.tcbw))),
            _cmd(nic, "dcb_buffer", "dcb.buffer", pairs(s.prio2buffer.split(","))),
            _cmd(nic, "pause", "ethtool.pause", "off off off"),
        ]
        if nic.pci_address:
            cc = f"/sys/kernel/debug/mlx5/{nic_mlx5.pci_bdf(nic.pci_address)}/cc_params"
            for name, value in nic_mlx5.cc_param_values(profile).items():
                steps.append(_file(nic, f"cc_params.{name}", f"{cc}/{name}", value))
        else:
            notes.append(f"{nic.netdev}: PCI address unknown, so its debugfs cc_params (DCQCN, CNP) are not planned")
    return steps + _rdma_steps(nic, profile)


def _bnxt_steps(nic: PlanNic, profile: QosProfile) -> list[dict[str, Any]]:
    a = nic_bnxt.qos_args(profile)
    steps = [
        _cmd(nic, "mtu", "ip.mtu", str(profile.host_mtu)),
        _cmd(nic, "ets", "niccli.ets", f"{a.tsa}|{a.up2tc}|{a.tcbw}"),
        _cmd(nic, "pause", "ethtool.pause", "off off off"),
    ]
    if nic.rdma_dev:
        cc = f"/sys/kernel/config/bnxt_re/{nic.rdma_dev}/ports/1/cc"
        commit = {"path": f"{cc}/apply", "value": "0x1"}
        for name, value in nic_bnxt.cc_values(profile).items():
            steps.append(_file(nic, f"cc.{name}", f"{cc}/{name}", nic_bnxt.hexval(value), compare="int", commit=commit))
    steps += _rdma_steps(nic, profile)
    # last: what niccli cannot take back (no PFC-off or APP-delete command in the reference), so that a
    # failure before them leaves nothing behind
    steps.append(_cmd(nic, "pfc", "niccli.pfc", a.pfc))
    steps += [_cmd(nic, f"app.{app}", "niccli.app", "present", arg=app) for app in a.apps]
    return steps


def render_nic_plan(host: str, nics: Sequence[PlanNic], profile: QosProfile) -> dict[str, Any]:
    """The plan document of ``host`` (JSON-ready): its NICs, notes, and the steps in the order they apply."""
    notes: list[str] = []
    steps: list[dict[str, Any]] = []
    entries = []
    for nic in sorted(nics, key=lambda n: n.netdev):
        hs.netdev(nic.netdev)
        if nic.rdma_dev is not None:
            hs.rdma_dev(nic.rdma_dev)
        if nic.pci_address is not None:
            nic_mlx5.pci_bdf(nic.pci_address)
        if nic.dialect not in (OFED, UPSTREAM, BNXT):
            raise UsageError(f"{host} {nic.netdev}: dialect {nic.dialect!r}; known: {OFED}, {UPSTREAM}, {BNXT}")
        entries.append(
            {"netdev": nic.netdev, "rdma_dev": nic.rdma_dev, "driver": nic.driver, "dialect": nic.dialect}
            | {"pci_address": nic.pci_address}
        )
        steps += _bnxt_steps(nic, profile) if nic.dialect == BNXT else _mlx5_steps(nic, profile, notes)
    return {
        "format": FORMAT,
        "host": hs.host_name(host),
        "profile": profile.name,
        "nics": entries,
        "notes": notes,
        "steps": steps,
    }


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"
